"""`Stream.items`: a list output's items alone, each once, as soon as it is complete."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

import structio as sio
from tests.call.test_stream_contract import ChunkedLM


class Person(BaseModel):
    name: str
    age: int


class People(sio.Signature):
    """Extract the people named in the text."""

    text: str = sio.InputField()
    people: list[Person] = sio.OutputField()
    count: int = sio.OutputField()


class Two(sio.Signature):
    """Two lists."""

    text: str = sio.InputField()
    a: list[int] = sio.OutputField()
    b: list[int] = sio.OutputField()


PEOPLE = [Person(name="Ada", age=36), Person(name="Alan", age=41), Person(name="Grace", age=85)]
VALUES = {"people": PEOPLE, "count": 3}


@pytest.mark.parametrize("adapter", [sio.ChatAdapter(), sio.JSONAdapter(), sio.XMLAdapter()])
def test_items_gives_each_item_once_then_the_result_is_kept(adapter: sio.Adapter) -> None:
    reply = adapter.format_assistant_message_content(People, VALUES)
    predict = sio.Predict(People, lm=ChunkedLM([reply], list(range(0, 400, 3))), adapter=adapter)
    stream = predict.stream(text="...")
    assert list(stream.items()) == PEOPLE  # the only list output: no name needed
    assert stream.result.people == PEOPLE
    assert stream.result.count == 3


def test_items_needs_a_list_output() -> None:
    stream = sio.Predict(Two, lm=sio.FakeLM([{"a": [1], "b": [2]}])).stream(text="x")
    with pytest.raises(sio.UsageError, match="list outputs: a, b"):
        next(stream.items())
    assert list(stream.items("b")) == [2]
    people = sio.Predict(People, lm=sio.FakeLM([VALUES])).stream(text="x")
    with pytest.raises(sio.UsageError, match="'count' is not a list output"):
        next(people.items("count"))
    with pytest.raises(sio.UsageError, match="not an output"):
        next(people.items("nobody"))


def _reask(first_people: str, second: dict[str, Any]) -> sio.Stream[sio.Prediction]:
    bad = f"[[ ## people ## ]]\n{first_people}\n\n[[ ## count ## ]]\nmany\n\n[[ ## completed ## ]]"
    good = sio.ChatAdapter().format_assistant_message_content(People, second)
    lm = ChunkedLM([bad, good], list(range(0, 300, 4)))
    return sio.Predict(People, lm=lm).stream(text="x", max_retries=1)


def test_items_repeated_equal_after_a_reread_are_passed_over() -> None:
    written = '[{"name": "Ada", "age": 36}, {"name": "Alan", "age": 41}]'
    stream = _reask(written, VALUES)
    assert list(stream.items("people")) == PEOPLE
    assert stream.result.count == 3


@pytest.mark.parametrize(
    "second",
    [
        {"people": [PEOPLE[1], PEOPLE[0]], "count": 2},  # an item changed
        {"people": PEOPLE[:1], "count": 1},  # an item given is gone
    ],
)
def test_an_item_given_then_changed_by_a_reread_is_an_error(second: dict[str, Any]) -> None:
    written = '[{"name": "Ada", "age": 36}, {"name": "Alan", "age": 41}]'
    stream = _reask(written, second)
    given: list[Any] = []
    with pytest.raises(sio.RereadError, match="read again") as raised:
        given.extend(stream.items("people"))
    assert raised.value.field == "people"
    assert given[:2] == PEOPLE[:2]


def test_async_items() -> None:
    reply = sio.JSONAdapter().format_assistant_message_content(People, VALUES)
    lm = ChunkedLM([reply], list(range(0, 400, 5)))
    predict = sio.Predict(People, lm=lm, adapter=sio.JSONAdapter())

    async def read() -> tuple[list[Person], sio.Prediction]:
        stream = predict.astream(text="x")
        return [person async for person in stream.items()], stream.result

    people, prediction = asyncio.run(read())
    assert people == PEOPLE
    assert prediction.count == 3


def test_a_prompt_function_returning_a_list_streams_its_items() -> None:
    lm = sio.FakeLM(['{"answer": [1, 2, 3]}'], chunk_size=2)

    @sio.prompt("Count to three.", lm=lm, adapter=sio.JSONAdapter())
    def count() -> list[int]: ...

    stream = count.stream()
    assert list(stream.items()) == [1, 2, 3]
    assert stream.result == [1, 2, 3]
