"""Re-asking: an answer that cannot be used goes back to the model with what was wrong."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, field_validator

import structio as sio
from structio.lm.types import Completion

GOOD = "[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]"
BAD = "[[ ## answer ## ]]\nfour-ish\n\n[[ ## completed ## ]]"


def test_an_invalid_answer_is_sent_back_with_what_was_wrong() -> None:
    lm = sio.FakeLM([BAD, GOOD])
    pred = sio.Predict("question -> answer: int", lm=lm, max_retries=2)(question="2+2?")
    assert pred.answer == 4
    assert len(lm.calls) == 2
    first, second = lm.calls[0].messages, lm.calls[1].messages
    assert second[: len(first)] == first  # the same conversation, continued
    assert second[len(first)] == {"role": "assistant", "content": BAD}
    feedback = second[-1]
    assert feedback["role"] == "user"
    assert feedback["content"].startswith(
        "Your answer could not be used:\n- `answer`: expected int"
    )
    assert "(you wrote: 'four-ish')" in feedback["content"]
    assert feedback["content"].endswith(
        "Answer again, giving every output field. Respond with the corresponding output fields, "
        "starting with the field `[[ ## answer ## ]]` (must be formatted as a valid Python int), "
        "and then ending with the marker for `[[ ## completed ## ]]`."
    )
    assert len(pred.attempts) == 1
    assert pred.attempts[0].completions == [BAD]
    assert pred.attempts[0].error.invalid["answer"][0] == "four-ish"
    assert pred.attempts[0].feedback == feedback["content"]
    assert len(pred.responses) == 2  # usage and cost count both requests


def test_attempts_are_bounded_and_the_last_error_carries_the_others() -> None:
    lm = sio.FakeLM([BAD, BAD, BAD, GOOD])
    predict = sio.Predict("question -> answer: int", lm=lm, max_retries=2)
    with pytest.raises(sio.ParseError) as exc:
        predict(question="2+2?")
    assert len(lm.calls) == 3  # the answer and two re-asks; no blind JSON request
    assert len(exc.value.attempts) == 2
    assert all(isinstance(e, sio.ParseError) for e in exc.value.attempts)
    # The re-asks grow the same conversation.
    assert [m["role"] for m in lm.calls[2].messages][-4:] == [
        "assistant",
        "user",
        "assistant",
        "user",
    ]


def test_without_re_asking_the_json_fallback_request_is_made_as_before() -> None:
    lm = sio.FakeLM([BAD, '{"answer": 4}'])
    pred = sio.Predict("question -> answer: int", lm=lm)(question="2+2?")
    assert pred.answer == 4
    assert pred.route == "json_request"
    assert pred.attempts == []
    assert "JSON" in lm.calls[1].messages[0]["content"]


def test_a_json_answer_is_still_read_without_a_request_when_re_asking() -> None:
    lm = sio.FakeLM(['{"answer": 4}'])
    pred = sio.Predict("question -> answer: int", lm=lm, max_retries=3)(question="2+2?")
    assert pred.answer == 4
    assert pred.route == "json_reparse"
    assert len(lm.calls) == 1


class Price(BaseModel):
    cents: int

    @field_validator("cents")
    @classmethod
    def whole_cents(cls, value: int) -> int:
        if value < 100:
            raise sio.Retry("prices are in cents: 4 dollars is 400")
        return value


def test_a_validator_raising_retry_asks_again_with_its_message() -> None:
    lm = sio.FakeLM(
        [
            '[[ ## price ## ]]\n{"cents": 4}\n\n[[ ## completed ## ]]',
            '[[ ## price ## ]]\n{"cents": 400}\n\n[[ ## completed ## ]]',
        ]
    )
    sig = sio.Signature("item -> price: Price", custom_types={"Price": Price})
    pred = sio.Predict(sig, lm=lm)(item="a book", max_retries=1)
    assert pred.price == Price(cents=400)
    assert "prices are in cents: 4 dollars is 400" in lm.calls[1].messages[-1]["content"]


def test_a_provider_error_is_never_re_asked() -> None:
    def fail(messages: list[dict[str, Any]]) -> str:
        raise sio.ServerError("the provider is down", model="fake")

    lm = sio.FakeLM(fail)
    with pytest.raises(sio.ServerError):
        sio.Predict("question -> answer: int", lm=lm, max_retries=3)(question="?")
    assert len(lm.calls) == 1


def test_a_call_to_an_unknown_tool_is_re_asked() -> None:
    def add(a: int, b: int = 0) -> int:
        """Add two numbers."""
        return a + b

    def tool_call(name: str) -> Completion:
        call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}
        return Completion("", "tool_calls", (call,))

    lm = sio.FakeLM([tool_call("mul"), tool_call("add")], supports_function_calling=True)
    sig = sio.Signature("question, tools: list[Tool] -> calls: ToolCalls")
    with pytest.raises(sio.ParseError):  # `add` needs `a`: the second call is invalid too
        sio.Predict(sig, lm=lm, max_retries=1)(question="?", tools=[add])
    feedback = lm.calls[1].messages[-1]["content"]
    assert "mul" in feedback
    assert "`calls`" in feedback


def test_re_asking_while_streaming_announces_a_reread() -> None:
    lm = sio.FakeLM(
        [
            "[[ ## note ## ]]\nhello\n\n[[ ## answer ## ]]\nfour-ish\n\n[[ ## completed ## ]]",
            "[[ ## note ## ]]\nhi\n\n[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]",
        ],
        chunk_size=5,
    )
    predict = sio.Predict("question -> note, answer: int", lm=lm, max_retries=1)
    items = list(predict.stream(question="2+2?"))
    rereads = [i for i in items if isinstance(i, sio.Reread)]
    assert len(rereads) == 1
    assert "asking again with what was wrong" in rereads[0].reason
    after = items[items.index(rereads[0]) :]
    values = {i.field: i.value for i in after if isinstance(i, sio.FieldValue)}
    assert values == {"note": "hi", "answer": 4}
    pred = items[-1]
    assert isinstance(pred, sio.Prediction)
    assert pred.answer == 4
    assert len(pred.attempts) == 1


def test_async_calls_re_ask_too() -> None:
    lm = sio.FakeLM([BAD, GOOD])
    predict = sio.Predict("question -> answer: int", lm=lm)

    async def main() -> sio.Prediction:
        return await predict.acall(question="2+2?", max_retries=1)

    assert asyncio.run(main()).answer == 4
    assert len(lm.calls) == 2


def test_max_retries_is_saved_and_checked(tmp_path: Path) -> None:
    predict = sio.Predict("question -> answer: int", max_retries=2)
    path = tmp_path / "p.json"
    predict.save(path)
    assert json.loads(path.read_text())["max_retries"] == 2
    assert sio.Predict.load(path).max_retries == 2
    assert "max_retries" not in sio.Predict("question -> answer: int").to_dict()
    for bad in (-1, 1.5, True):
        with pytest.raises(sio.ConfigurationError, match="max_retries"):
            sio.Predict("question -> answer: int", max_retries=bad)
