"""`structio eval`: the table, JSON, the HTML report, pairs, and its usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from structio.cli import main
from tests.evaluate._rows import data_rows, prediction, write_jsonl

ROOT = Path(__file__).resolve().parents[1]
SIG = f"{ROOT / 'tests' / 'evaluate' / '_rows.py'}:Triage"


def _eval(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["eval", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    rows = data_rows(4)
    outputs = [{k: row[k] for k in ("category", "urgency", "tags")} for row in rows]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    chat = write_jsonl(
        tmp_path / "chat.jsonl",
        [prediction(n + 1, out, _confidence={"category": 0.9}) for n, out in enumerate(outputs)],
    )
    json_ = write_jsonl(
        tmp_path / "json.jsonl",
        [prediction(1, {**outputs[0], "category": "other"}), prediction(2, outputs[1])],
    )
    write_jsonl(tmp_path / "json.errors.jsonl", [{"line": 3, "error": "ParseError: cut"}])
    return data, chat, json_


def test_the_table_shows_systems_side_by_side(
    capsys: pytest.CaptureFixture[str], files: tuple[Path, Path, Path]
) -> None:
    data, chat, json_ = files
    code, out, _ = _eval(capsys, str(data), str(chat), str(json_), "--sig", SIG)
    assert code == 0
    header, _rule, *rows = out.splitlines()
    assert header.split() == ["chat.jsonl", "json.jsonl"]

    def line(label: str) -> str:
        (found,) = [row for row in rows if row.startswith(label + " ")]
        return found

    assert line("category (label)").split()[-4:] == ["100.0%", "accuracy", "50.0%", "accuracy"]
    assert line("    ParseError").split()[-2:] == ["0", "1"]
    assert line("  missing").split()[-2:] == ["0", "1"]


def test_json_and_the_html_report(
    capsys: pytest.CaptureFixture[str], files: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    data, chat, _ = files
    report = tmp_path / "report.html"
    code, out, err = _eval(capsys, str(data), str(chat), "--json", "--html", str(report))
    assert code == 0
    summary = json.loads(out)
    assert summary["rows"]["scored"] == 4
    assert summary["fields"]["urgency"]["kind"] == "number"
    assert summary["calibration"]["category"]["rows"] == 4
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert 'data-plot="calibration"' in page
    assert "report written to" in err


def test_a_user_metric_and_a_tolerance(
    capsys: pytest.CaptureFixture[str],
    files: tuple[Path, Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data, _, json_ = files
    (tmp_path / "mymetrics.py").write_text(
        "def half(gold, pred):\n    return 0.5\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, _ = _eval(
        capsys,
        str(data),
        str(json_),
        "--json",
        "--metric",
        "category=mymetrics:half",
        "--tolerance",
        "2",
    )
    assert code == 0
    fields = json.loads(out)["fields"]
    assert fields["category"]["score"] == 0.5
    assert fields["category"]["measure"] == "user metric"
    assert fields["urgency"]["tolerance"] == 2


def test_pairs_are_written_and_validate(
    capsys: pytest.CaptureFixture[str], files: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    data, _, json_ = files
    pairs = tmp_path / "pairs.jsonl"
    args = ("--sig", SIG, "--pairs", str(pairs), "--pairs-format", "trl")
    code, out, err = _eval(capsys, str(data), str(json_), *args)
    assert code == 0
    # A summary: on standard output after the table, or on standard error with --json,
    # where standard output holds the one JSON document.
    assert "1 preference pairs written" in out
    assert "pairs" not in err
    code, out, err = _eval(capsys, str(data), str(json_), *args, "--json")
    assert code == 0
    assert isinstance(json.loads(out), dict)
    assert "1 preference pairs written" in err
    assert set(json.loads(pairs.read_text(encoding="utf-8"))) == {"prompt", "chosen", "rejected"}
    assert main(["validate", str(pairs), "--sig", SIG]) == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--pairs", "p.jsonl"], "--pairs writes the prompts a signature gives"),
        (["--metric", "category"], "use FIELD=module:function"),
        (["--metric", "category=nosuchmodule_xyz:f"], "cannot import"),
    ],
)
def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str],
    files: tuple[Path, Path, Path],
    extra: list[str],
    message: str,
) -> None:
    data, chat, _ = files
    code, _, err = _eval(capsys, str(data), str(chat), *extra)
    assert code == 2
    assert err.startswith("structio: error: ")
    assert message in err


def test_a_file_that_is_not_a_run_output_is_named(
    capsys: pytest.CaptureFixture[str], files: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    data = files[0]
    wrong = write_jsonl(tmp_path / "train.jsonl", [{"messages": []}])
    code, _, err = _eval(capsys, str(data), str(wrong))
    assert code == 2
    assert "train.jsonl', line 1" in err
    assert "structio run" in err


def test_unreadable_data_rows_are_a_warning(
    capsys: pytest.CaptureFixture[str], files: tuple[Path, Path, Path]
) -> None:
    data, chat, _ = files
    with data.open("a", encoding="utf-8") as handle:
        handle.write("not json\n")
    code, out, err = _eval(capsys, str(data), str(chat))
    assert code == 0
    assert "structio: warning: " in err
    assert "1 row(s) could not be read and are not scored; the first, line 5" in err
    assert "unreadable labels" in out
