"""Formatting classes: lists and dicts in every way, bullets and numbers in a prompt."""

from __future__ import annotations

import datetime
import enum
from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structio as sio
from structio.rendering import formatting
from structio.rendering.formatting import BulletedDict, BulletedList, NumberedDict, NumberedList


def test_they_are_lists_and_dicts() -> None:
    items: NumberedList[str] = NumberedList(["a", "b"])
    assert isinstance(items, list)
    assert items == ["a", "b"]
    items.append("c")
    assert items[-1] == "c"
    assert len(items) == 3
    assert sorted(NumberedList([3, 1])) == [1, 3]
    table: BulletedDict[str, int] = BulletedDict(a=1)
    assert isinstance(table, dict)
    assert table == {"a": 1}
    assert BulletedList[int].__origin__ is BulletedList  # type: ignore[attr-defined]
    # str() and repr() are not changed into lines.
    assert str(BulletedList(["a"])) == "BulletedList(['a'])"
    assert repr(NumberedDict({"k": 1})) == "NumberedDict({'k': 1})"


def test_exported_from_structio_and_formatting() -> None:
    assert sio.BulletedList is BulletedList
    assert sio.NumberedDict is formatting.NumberedDict


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (BulletedList(["milk", "eggs"]), "- milk\n- eggs"),
        (NumberedList(["mix", "bake"]), "1. mix\n2. bake"),
        (BulletedDict({"flour": "200 g", "eggs": 2}), "- flour: 200 g\n- eggs: 2"),
        (NumberedDict({"first": "mix", "then": "bake"}), "1. first: mix\n2. then: bake"),
        (BulletedList([]), ""),
        (NumberedDict({}), ""),
        (BulletedList([1, 2.5, True, None]), "- 1\n- 2.5\n- True\n- None"),
        (BulletedList([[1, 2], {"k": "v"}]), '- [1, 2]\n- {"k": "v"}'),
        (BulletedList(["one\ntwo"]), "- one\n  two"),
        (
            NumberedList(["x"] * 9 + ["a\nb"]),
            "\n".join(f"{i}. x" for i in range(1, 10)) + "\n10. a\n    b",
        ),
        (BulletedList(["a", BulletedList(["b", "c"])]), "- a\n- - b\n  - c"),
        (NumberedList([NumberedList(["b", "c"])]), "1. 1. b\n   2. c"),
        (BulletedDict({"steps": NumberedList(["mix", "bake"])}), "- steps:\n  1. mix\n  2. bake"),
        (NumberedDict({"k": "a\nb"}), "1. k:\n   a\n   b"),
        (BulletedDict({"nested": BulletedDict({"a": 1})}), "- nested:\n  - a: 1"),
    ],
)
def test_rendering(value: Any, text: str) -> None:
    assert format(value) == text
    assert f"{value}" == text


def test_a_format_spec_applies_to_every_item() -> None:
    assert f"{NumberedList([1.234, 2.5]):.1f}" == "1. 1.2\n2. 2.5"
    assert f"{BulletedDict({'a': 0.5}):.0%}" == "- a: 50%"


class Colour(enum.Enum):
    RED = "red"


class Point(pydantic.BaseModel):
    x: int


class Money:
    def __init__(self, cents: int) -> None:
        self.cents = cents

    def __format__(self, spec: str) -> str:
        return f"${self.cents / 100:.2f}"


def test_items_of_other_types() -> None:
    assert f"{BulletedList([Colour.RED, Point(x=1), datetime.date(2026, 1, 2)])}" == (
        '- red\n- {"x": 1}\n- 2026-01-02'
    )
    assert f"{BulletedList([Money(150)])}" == "- $1.50"


class Recipe(sio.Signature):
    """Write the recipe."""

    ingredients: BulletedList[str] = sio.InputField()
    steps: NumberedList[str] = sio.InputField()
    amounts: NumberedDict[str, int] = sio.InputField()
    notes: list[str] = sio.InputField()
    price: Money = sio.InputField()
    recipe: str = sio.OutputField()


@pytest.mark.parametrize("adapter", [sio.ChatAdapter(), sio.JSONAdapter()])
def test_adapters_render_inputs_with_the_classes(adapter: sio.Adapter) -> None:
    messages = adapter.format(
        Recipe,
        inputs={
            "ingredients": ["flour", "eggs"],  # a plain list: the field's type renders it
            "steps": ("mix", "bake"),
            "amounts": {"flour": 200},
            "notes": BulletedList(["quick"]),  # the value's own __format__
            "price": Money(250),  # a user class with __format__
        },
    )
    assert messages[-1]["content"].startswith(
        "[[ ## ingredients ## ]]\n- flour\n- eggs\n\n"
        "[[ ## steps ## ]]\n1. mix\n2. bake\n\n"
        "[[ ## amounts ## ]]\n1. flour: 200\n\n"
        "[[ ## notes ## ]]\n- quick\n\n"
        "[[ ## price ## ]]\n$2.50\n\n"
    )


def test_plain_values_keep_their_rendering() -> None:
    messages = sio.ChatAdapter().format(
        "notes: list[str], when: datetime.date -> answer",
        inputs={"notes": ["a", "b"], "when": datetime.date(2026, 1, 2)},
    )
    assert '[[ ## notes ## ]]\n["a", "b"]' in messages[-1]["content"]
    assert "[[ ## when ## ]]\n2026-01-02" in messages[-1]["content"]


def test_outputs_parse_into_the_classes() -> None:
    sig = sio.make_signature(
        "q -> steps: NumberedList[str], table: BulletedDict[str, int]",
        custom_types={"NumberedList": NumberedList, "BulletedDict": BulletedDict},
    )
    values = sio.ChatAdapter().parse(
        sig, '[[ ## steps ## ]]\n["a", "b"]\n\n[[ ## table ## ]]\n{"x": 1}'
    )
    assert type(values["steps"]) is NumberedList
    assert values["steps"] == ["a", "b"]
    assert type(values["table"]) is BulletedDict
    assert values == sio.JSONAdapter().parse(sig, '{"steps": ["a", "b"], "table": {"x": 1}}')
    with pytest.raises(sio.ParseError, match="steps"):
        sio.JSONAdapter().parse(sig, '{"steps": [1, [2]], "table": {}}')


@given(st.lists(st.text(max_size=12) | st.integers(), max_size=6))
@settings(max_examples=200, deadline=None)
def test_the_plain_string_shortcut_renders_as_the_general_rules(items: list[object]) -> None:
    for klass, markers in (
        (BulletedList, lambda n: ["- "] * n),
        (NumberedList, lambda n: [f"{i}. " for i in range(1, n + 1)]),
    ):
        value = klass(items)
        assert format(value) == formatting._lines(markers(len(items)), value, "")
