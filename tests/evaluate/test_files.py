"""Prediction files joined with their labels: any order, failures, errors with places."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from structio.evaluate.files import Labels, evaluate_files, prediction_rows
from structio.exceptions import ConfigurationError
from tests.evaluate._rows import Triage, data_rows, prediction, write_jsonl


def _outputs(row: dict[str, object]) -> dict[str, object]:
    return {k: row[k] for k in ("category", "urgency", "tags")}


def test_rows_in_any_order_are_joined_by_line(tmp_path: Path) -> None:
    rows = data_rows(6)
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    wrong = {**_outputs(rows[1]), "category": "other"}
    preds = write_jsonl(
        tmp_path / "preds.jsonl",
        [
            prediction(3, _outputs(rows[2]), _confidence={"category": 1.0}),
            prediction(2, wrong, _usage={"prompt_tokens": 7, "completion_tokens": 1}),
            prediction(1, _outputs(rows[0]), _cost=0.25, _requests=2),
        ],
    )
    errors = write_jsonl(
        tmp_path / "preds.errors.jsonl",
        [{"line": 4, "error": "ParseError: no answer"}, {"line": 5, "error": "Boom"}],
    )
    (result,) = evaluate_files(data, [preds], errors=[errors], signature=Triage)
    summary = result.summary()
    assert summary["name"] == "preds.jsonl"
    assert summary["rows"] == {
        "total": 6,
        "scored": 3,
        "failed": 2,
        "missing": 1,
        "unreadable_labels": 0,
    }
    assert summary["failed_by_reason"] == {"ParseError": 1, "error": 1}
    category = summary["fields"]["category"]
    assert category["kind"] == "label"
    assert category["accuracy"] == 2 / 3
    assert summary["calibration"]["category"]["rows"] == 1
    assert summary["usage"]["prompt_tokens_per_row"] == 7
    assert summary["usage"]["cost_per_row"] == 0.25
    assert summary["usage"]["requests_per_row"] == 2


def test_two_systems_side_by_side_and_a_csv_without_signature(tmp_path: Path) -> None:
    data = tmp_path / "data.csv"
    data.write_text("ticket,category\nt1,bug\nt2,other\n", encoding="utf-8")
    one = write_jsonl(tmp_path / "one.jsonl", [prediction(2, {"category": "bug"})])
    two = write_jsonl(tmp_path / "two.jsonl", [prediction(2, {"category": "Bug."})])
    first, second = evaluate_files(data, [one, two], names=["a", "b"])
    # CSV line 2 is the first data row (the header is line 1).
    assert first.summary()["fields"]["category"]["score"] == 1.0
    assert second.summary()["fields"]["category"]["score"] == 1.0  # normalised text match
    assert (first.name, first.missing) == ("a", 1)


def test_a_last_line_cut_off_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_text(json.dumps(prediction(1, {"a": 1})) + '\n{"line": 2, "outp', encoding="utf-8")
    assert [row["line"] for row in prediction_rows(path)] == [1]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"line": 1}\n', "not such a row"),
        ("[1, 2]\n", "not such a row"),
        ("nope\n" + json.dumps(prediction(2, {})) + "\n", "not valid JSON"),
    ],
)
def test_a_line_of_another_format_is_named(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "finetune.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigurationError, match=rf"finetune.jsonl', line 1: {why}.*structio run"):
        list(prediction_rows(path))


def test_a_prediction_of_a_line_the_data_lacks_is_refused(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", data_rows(1))
    preds = write_jsonl(tmp_path / "preds.jsonl", [prediction(9, {"category": "bug"})])
    with pytest.raises(ConfigurationError, match=r"line 9.*another file"):
        evaluate_files(data, [preds])


def test_missing_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no such file"):
        evaluate_files(tmp_path / "none.jsonl", [tmp_path / "x.jsonl"])
    data = write_jsonl(tmp_path / "data.jsonl", data_rows(1))
    with pytest.raises(ConfigurationError, match=r"no such file.*x\.jsonl"):
        evaluate_files(data, [tmp_path / "x.jsonl"])


def test_unreadable_data_rows_are_counted_not_joined(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text('{"ticket": "a", "category": "bug"}\nnot json\n[1]\n', encoding="utf-8")
    preds = write_jsonl(tmp_path / "preds.jsonl", [prediction(1, {"category": "bug"})])
    (result,) = evaluate_files(path, [preds])
    assert result.summary()["rows"]["unreadable_labels"] == 2
    assert "2 row(s) could not be read and are not scored; the first, line 2: not valid" in (
        caplog.text
    )
    labels = Labels(path, None)
    try:
        assert (labels.rows, labels.problem_count) == (1, 2)
        assert labels.get(1) == {"ticket": "a", "category": "bug"}
        assert labels.get(2) is None
    finally:
        labels.close()
