"""Inputs are checked against their declared types on every call (DSPy only warns)."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

import structio as sio
from structio.call import CallOptions, prepare

ANSWER = "[[ ## answer ## ]]\n4"


class Point(pydantic.BaseModel):
    x: int
    y: int


class Opaque:
    """A class pydantic has no schema for: checked with isinstance."""


class Many(sio.Signature):
    """Answer."""

    text: str = sio.InputField()
    count: int = sio.InputField(ge=0)
    tags: list[str] = sio.InputField()
    point: Point = sio.InputField()
    thing: Opaque = sio.InputField()
    anything: Any = sio.InputField()
    answer: int = sio.OutputField()


def good() -> dict[str, Any]:
    return {
        "text": "t",
        "count": 2,
        "tags": ["a"],
        "point": Point(x=1, y=2),
        "thing": Opaque(),
        "anything": object(),
    }


def predict(**options: Any) -> sio.Predict:
    return sio.Predict(Many, lm=sio.FakeLM([ANSWER] * 5), **options)


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("text", 5, "must be str, not int 5"),
        ("count", "many", "must be int, not str 'many'"),
        ("count", -1, "greater than or equal to 0"),
        ("tags", "a", "must be list\\[str\\], not str 'a'"),
        ("point", {"x": 1}, "must be Point"),
        ("thing", "x", "not an instance of Opaque"),
    ],
)
def test_a_value_that_does_not_fit_is_a_format_error_naming_field_type_and_value(
    name: str, value: Any, why: str
) -> None:
    program = predict()
    with pytest.raises(sio.FormatError, match=why) as caught:
        program(**{**good(), name: value})
    assert f"input `{name}` of Many" in str(caught.value)
    assert "check_inputs=False" in str(caught.value)
    assert isinstance(program.lm, sio.FakeLM)
    assert list(program.lm.calls) == []  # nothing was sent


def test_values_pydantic_accepts_are_sent_as_given() -> None:
    program = predict()
    values = {**good(), "count": "3", "tags": ("a", "b"), "point": {"x": 1, "y": 2}}
    assert program(**values).answer == 4
    sent = program.lm.calls[0].messages[-1]["content"]  # type: ignore[union-attr]
    assert "[[ ## count ## ]]\n3" in sent  # the value given, not a converted one
    assert '{"x": 1, "y": 2}' in sent


def test_check_inputs_false_sends_values_as_they_are() -> None:
    program = predict(check_inputs=False)
    assert program(**{**good(), "text": 5}).answer == 4
    assert "[[ ## text ## ]]\n5" in program.lm.calls[0].messages[-1]["content"]  # type: ignore[union-attr]
    again = sio.Predict.from_dict(program.to_dict())
    assert again.check_inputs is False
    assert "check_inputs" not in predict().to_dict()


def test_inputs_the_adapters_convert_are_left_to_them() -> None:
    sig = sio.Signature("picture: Image, history: History, question -> answer: int")
    program = sio.Predict(sig, lm=sio.FakeLM([ANSWER]))
    history = {"messages": [{"question": "q", "answer": 1}]}
    result = program(picture="https://example.com/cat.png", history=history, question="q")
    assert result.answer == 4


def test_streams_async_calls_and_batch_requests_check_too() -> None:
    program = predict()
    with pytest.raises(sio.FormatError, match="input `text`"):
        program.stream(**{**good(), "text": 5})
    import asyncio

    with pytest.raises(sio.FormatError, match="input `text`"):
        asyncio.run(program.acall(**{**good(), "text": 5}))
    with pytest.raises(sio.FormatError, match="input `text`"):
        prepare(sio.ChatAdapter(), sio.FakeLM([]), Many, inputs={**good(), "text": 5})
    prepared = prepare(
        sio.ChatAdapter(),
        sio.FakeLM([]),
        Many,
        inputs={**good(), "text": 5},
        options=CallOptions(check_inputs=False),
    )
    assert "[[ ## text ## ]]\n5" in prepared.messages[-1]["content"]
