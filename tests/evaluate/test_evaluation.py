"""An evaluation's running figures, and `sio.evaluate` over a Predict in-process."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pydantic
import pytest

import structio as sio
from structio.evaluate.evaluation import Evaluation, reason_of
from structio.predict import Prediction, PredictionMeta
from tests.evaluate._rows import Triage, data_rows


def test_rows_fields_failures_and_usage_are_counted() -> None:
    result = Evaluation("s", types={"urgency": int}, tolerance={"urgency": 1})
    scores = result.add(
        {"category": "bug", "urgency": 3},
        {"category": "bug", "urgency": 4},
        usage={"prompt_tokens": 10, "completion_tokens": 2},
        cost=0.5,
        requests=2,
    )
    assert scores == {"category": 1.0, "urgency": 1.0}
    result.add({"category": "bug", "urgency": 3}, {"category": "other", "urgency": 9})
    result.fail("ParseError")
    result.missing = 1
    summary = result.summary()
    assert summary["rows"] == {
        "total": 4,
        "scored": 2,
        "failed": 1,
        "missing": 1,
        "unreadable_labels": 0,
    }
    assert summary["failed_by_reason"] == {"ParseError": 1}
    assert summary["rows_correct"] == 1 / 4
    assert summary["fields"]["category"]["kind"] == "text"  # no type given: a JSON string
    assert summary["fields"]["urgency"]["tolerance"] == 1
    assert summary["usage"]["prompt_tokens_per_row"] == 10
    assert summary["usage"]["cost_per_row"] == 0.5
    assert summary["usage"]["requests_per_row"] == 2


def test_confidence_feeds_calibration_per_field() -> None:
    result = Evaluation("s")
    result.add({"a": "x"}, {"a": "x"}, confidence={"a": 0.9})
    result.add({"a": "x"}, {"a": "y"}, confidence={"a": 0.9})
    result.add({"a": "x"}, {"a": "x"})  # no confidence: not in the bins
    calibration = result.summary()["calibration"]["a"]
    assert calibration["rows"] == 2
    assert calibration["ece"] == pytest.approx(0.4)


def test_reason_is_the_error_class() -> None:
    assert reason_of("ParseError: the answer was cut") == "ParseError"
    assert reason_of("something broke") == "error"


def test_sio_evaluate_scores_a_predict_and_counts_failures() -> None:
    rows = data_rows(4)
    replies: list[Any] = [
        {k: rows[0][k] for k in ("category", "urgency", "tags")},
        {"category": "other", "urgency": rows[1]["urgency"], "tags": ["x"]},
        "no sections at all",  # read back fails, then the fallback asks again
        "still nothing",
        {k: rows[3][k] for k in ("category", "urgency", "tags")},
    ]
    predict = sio.Predict(Triage, lm=sio.FakeLM(replies), max_retries=0)
    examples = [rows[0], rows[1], sio.Example(rows[2]), rows[3]]
    result = sio.evaluate(predict, examples, max_concurrency=1)  # the replies in order
    summary = result.summary()
    assert summary["name"] == "Triage"
    assert summary["rows"]["scored"] == 3
    assert summary["failed_by_reason"] == {"ParseError": 1}
    assert summary["fields"]["category"]["kind"] == "label"
    assert summary["fields"]["category"]["accuracy"] == 2 / 3
    assert summary["fields"]["tags"]["recall"] == pytest.approx(5 / 6)
    assert summary["usage"]["requests_per_row"] == 1


@dataclasses.dataclass(frozen=True)
class _MetaWithConfidence(PredictionMeta):
    confidence: dict[str, float] | None = None


class _Sure(sio.Predict):
    """A Predict whose results carry a confidence, as `pred.meta.confidence` will."""

    def __call__(self, *args: Any, **inputs: Any) -> Prediction:  # type: ignore[override]
        pred = super().__call__(*args, **inputs)
        object.__setattr__(pred, "_meta", _MetaWithConfidence(confidence={"category": 0.8}))
        return pred


def test_sio_evaluate_reads_the_confidence_of_a_prediction() -> None:
    rows = data_rows(2)
    replies = [{k: row[k] for k in ("category", "urgency", "tags")} for row in rows]
    result = sio.evaluate(
        _Sure(Triage, lm=sio.FakeLM(replies)), rows, name="sure", max_concurrency=1
    )
    calibration = result.summary()["calibration"]["category"]
    assert calibration["rows"] == 2
    assert calibration["ece"] == pytest.approx(0.2)


def _answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The right answer to a ticket of `data_rows`, but "other" for every fifth."""
    found = re.search(r"ticket (\d+)", str(messages[-1]["content"]))
    assert found is not None
    number = int(found.group(1))
    row = data_rows(number + 1)[number]
    category = "other" if number % 5 == 0 else row["category"]
    return {"category": category, "urgency": row["urgency"], "tags": row["tags"]}


def test_sio_evaluate_runs_calls_concurrently_over_chunks_of_a_generator() -> None:
    rows = data_rows(300)
    predict = sio.Predict(Triage, lm=sio.FakeLM(_answer))
    result = sio.evaluate(predict, (row for row in rows), max_concurrency=4)
    summary = result.summary()
    assert summary["rows"]["scored"] == 300
    wrong = sum(1 for n, row in enumerate(rows) if n % 5 == 0 and row["category"] != "other")
    assert summary["fields"]["category"]["accuracy"] == (300 - wrong) / 300


def test_a_bug_is_raised_not_counted_as_a_failed_row() -> None:
    def broken(messages: list[dict[str, Any]]) -> str:
        raise RuntimeError("a bug in the test double")

    with pytest.raises(RuntimeError, match="a bug"):
        sio.evaluate(sio.Predict(Triage, lm=sio.FakeLM(broken)), data_rows(2))


class _Address(pydantic.BaseModel):
    city: str
    zip: int


class _Order(pydantic.BaseModel):
    address: _Address
    items: list[str]


def test_a_model_field_is_scored_by_path() -> None:
    result = Evaluation("s", types={"order": _Order})
    gold = {"order": {"address": {"city": "Oslo", "zip": 1}, "items": ["a", "b"]}}
    pred = {"order": {"address": {"city": "OSLO", "zip": 2}, "items": ["a"]}}
    scores = result.add(gold, pred, confidence={"order": 0.7})
    assert scores == {"order.address.city": 1.0, "order.address.zip": 0.0, "order.items": 2 / 3}
    fields = result.summary()["fields"]
    assert [fields[p]["kind"] for p in scores] == ["text", "number", "set"]
    # The field's confidence is calibrated against the whole field being right.
    assert result.summary()["calibration"]["order"]["bins"][7]["accuracy"] == 0.0
