"""An abstract iterable (``Iterable[T]``, ``Iterator[T]``, ``Generator[T, ...]``) is a list.

Left to pydantic, ``Iterable[T]`` validates to a lazy one-shot iterator: a bad item raises
only when iterated (no `ParseError`, no re-ask) and a second pass is empty. structio decides
once, in the type model, that such a type is read as ``list[T]``.
"""

from __future__ import annotations

import collections.abc
import json
import typing
from collections.abc import Generator, Iterable, Iterator, Sequence
from typing import Annotated, Any, Optional

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structio as sio
from structio.typemodel.compact import compact_type
from structio.typemodel.info import declared_type, type_info


class Item(pydantic.BaseModel):
    name: str
    qty: int


class Extract(sio.Signature):
    """Extract the items."""

    text: str = sio.InputField()
    items: Iterable[Item] = sio.OutputField()


ADAPTERS = [
    sio.ChatAdapter(),
    sio.JSONAdapter(),
    sio.XMLAdapter(),
    sio.CompactAdapter(),
    sio.ToolOutputAdapter(),
]


@pytest.mark.parametrize(
    ("declared", "read_as"),
    [
        (Iterable[int], list[int]),
        (typing.Iterable[int], list[int]),
        (collections.abc.Iterable[int], list[int]),
        (Iterator[str], list[str]),
        (Generator[int, None, None], list[int]),
        (Sequence[Item], list[Item]),
        (collections.abc.Collection[int], list[int]),
        (Iterable, list),
        (Optional[Iterable[int]], Optional[list[int]]),  # noqa: UP045
        (Iterable[int] | None, Optional[list[int]]),  # noqa: UP045
        (Annotated[Iterable[int], "meta"], Annotated[list[int], "meta"]),
        (dict[str, Iterable[int]], dict[str, list[int]]),
        (tuple[Iterable[int], ...], tuple[list[int], ...]),
        (Iterable[Iterable[int]], list[list[int]]),
    ],
)
def test_an_abstract_iterable_is_declared_as_a_list(declared: Any, read_as: Any) -> None:
    assert declared_type(declared) == read_as
    assert type_info(declared).annotation == read_as


@pytest.mark.parametrize("kept", [int, str, list[int], dict[str, int], Optional[int], Any, None])  # noqa: UP045
def test_other_types_are_left_as_they_are(kept: Any) -> None:
    assert declared_type(kept) is kept


def test_the_type_shown_to_the_model_is_a_list() -> None:
    info = type_info(Iterable[Item])
    assert info.name == "list[Item]"
    assert json.loads(info.schema_text)["type"] == "array"
    assert compact_type(Iterable[int]) == compact_type(list[int]) == "int[]"
    assert Extract.output_fields["items"].annotation == list[Item]
    assert (
        sio.Signature.from_dict(Extract.to_dict()).output_fields["items"].annotation == list[Item]
    )


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: type(a).__name__)
def test_every_adapter_shows_the_output_as_a_list(adapter: sio.Adapter) -> None:
    messages = adapter.format(Extract, inputs={"text": "two apples"})
    system = str(messages[0]["content"])
    assert "Iterable" not in system
    assert "Iterator" not in system


def test_a_validated_value_is_a_list_that_can_be_iterated_twice() -> None:
    value = type_info(Iterable[Item]).validate([{"name": "a", "qty": 1}])
    assert value == [Item(name="a", qty=1)]
    assert list(value) == list(value)


def test_a_bad_item_is_refused_when_validated_naming_its_index() -> None:
    with pytest.raises(ValueError, match=r"\[1\]\.qty"):
        type_info(Iterable[Item]).validate([{"name": "a", "qty": 1}, {"name": "b", "qty": "x"}])


GOOD = [{"name": "apple", "qty": 2}, {"name": "pear", "qty": 1}]
BAD = [{"name": "apple", "qty": 2}, {"name": "pear", "qty": "several"}]


def chat_reply(items: list[dict[str, Any]]) -> str:
    return f"[[ ## items ## ]]\n{json.dumps(items)}\n\n[[ ## completed ## ]]"


def json_reply(items: list[dict[str, Any]]) -> str:
    return json.dumps({"items": items})


# No fallback: the reply of each test is the one the adapter reads.
REPLIES = [(sio.ChatAdapter(fallback=None), chat_reply), (sio.JSONAdapter(), json_reply)]


@pytest.mark.parametrize(("adapter", "reply"), REPLIES, ids=["chat", "json"])
def test_predict_gives_a_list_that_can_be_iterated_twice(adapter: sio.Adapter, reply: Any) -> None:
    lm = sio.FakeLM([reply(GOOD)])
    pred = sio.Predict(Extract, lm=lm, adapter=adapter)(text="two apples and a pear")
    assert isinstance(pred.items, list)
    assert list(pred.items) == [Item(**item) for item in GOOD]
    assert list(pred.items) == [Item(**item) for item in GOOD]  # not a one-shot iterator


@pytest.mark.parametrize(("adapter", "reply"), REPLIES, ids=["chat", "json"])
def test_a_bad_item_is_a_parse_error_naming_the_field_and_the_index(
    adapter: sio.Adapter, reply: Any
) -> None:
    lm = sio.FakeLM([reply(BAD)])
    with pytest.raises(sio.ParseError) as caught:
        sio.Predict(Extract, lm=lm, adapter=adapter)(text="two apples and a pear")
    message = str(caught.value)
    assert "`items`" in message
    assert "[1].qty" in message


@pytest.mark.parametrize(("adapter", "reply"), REPLIES, ids=["chat", "json"])
def test_a_bad_item_is_asked_again(adapter: sio.Adapter, reply: Any) -> None:
    lm = sio.FakeLM([reply(BAD), reply(GOOD)])
    pred = sio.Predict(Extract, lm=lm, adapter=adapter, max_retries=1)(text="apples, a pear")
    assert pred.items == [Item(**item) for item in GOOD]
    assert len(pred.meta.attempts) == 1


ITEMS = st.lists(
    st.builds(Item, name=st.text(max_size=20), qty=st.integers(-(10**6), 10**6)), max_size=6
)


@given(items=ITEMS)
@settings(max_examples=60, deadline=None)
def test_any_list_of_valid_items_reads_back_equal(items: list[Item]) -> None:
    data = [item.model_dump() for item in items]
    for adapter, reply in REPLIES:
        outputs = adapter.parse(Extract, reply(data))
        assert outputs["items"] == items
        assert type(outputs["items"]) is list
