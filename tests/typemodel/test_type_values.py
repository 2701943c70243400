"""The type model: type names, output hints; with value rendering and reading text."""

from __future__ import annotations

import datetime
import enum
import json
import re
from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, Field

from structio.parsing.read import read_text
from structio.rendering.text import format_value
from structio.typemodel.info import type_info
from structio.typemodel.text import type_name


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Point(BaseModel):
    """A point."""

    y: int
    x: int = Field(description="horizontal")


@pytest.mark.parametrize(
    ("annotation", "name"),
    [
        (str, "str"),
        (list[str], "list[str]"),
        (dict[str, int], "dict[str, int]"),
        (Literal["a", "b"], "Literal['a', 'b']"),
        (Optional[int], "Union[int, NoneType]"),  # noqa: UP045 - the spelling under test
        (int | None, "Union[int, NoneType]"),
        (str | int, "Union[str, int]"),
        (Point, "Point"),
        (list[Point], "list[Point]"),
        (Color, "Color"),
        (Annotated[int, Field(gt=0)], "int"),
        (tuple[int, ...], "tuple[int, ...]"),
        (Any, "Any"),
    ],
)
def test_type_names(annotation: Any, name: str) -> None:
    assert type_name(annotation) == name


@pytest.mark.parametrize(
    ("annotation", "hint"),
    [
        (str, ""),
        (bool, "must be True or False"),
        (int, "must be a single int value"),
        (float, "must be a single float value"),
        (Color, "must be one of: red; blue"),
        (Level, "must be one of: 1; 2"),
        (Literal["a", "b"], "must exactly match (no extra characters) one of: a; b"),
        (
            int | None,
            'must adhere to the JSON schema: {"anyOf": [{"type": "integer"}, {"type": "null"}]}',
        ),
    ],
)
def test_output_hints(annotation: Any, hint: str) -> None:
    assert type_info(annotation).hint == hint


def test_json_schema_hint_puts_type_first_and_sorts_the_rest_at_every_level() -> None:
    hint = type_info(list[Point]).hint
    assert hint.startswith("must adhere to the JSON schema: ")
    schema_text = hint.removeprefix("must adhere to the JSON schema: ")
    assert schema_text.startswith('{"type": "array", "$defs": {"Point": {"type": "object", ')
    schema = json.loads(schema_text)
    point = schema["$defs"]["Point"]
    assert list(point) == ["type", "description", "properties", "required", "title"]
    assert list(point["properties"]) == ["x", "y"]  # alphabetical, not declaration order
    assert list(point["properties"]["x"]) == ["type", "description", "title"]


def test_placeholder() -> None:
    assert type_info(str).placeholder("answer") == "{answer}"
    assert (
        type_info(int).placeholder("n")
        == "{n}        # note: the value you produce must be a single int value"
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("as is\n  kept", "as is\n  kept"),
        (3, "3"),
        (2.5, "2.5"),
        (True, "True"),
        (None, "None"),
        ({"a": 1, "b": [1, 2]}, '{"a": 1, "b": [1, 2]}'),
        (["é", "b"], '["é", "b"]'),
        (Point(y=1, x=2), '{"y": 1, "x": 2}'),
        (Color.RED, "red"),
        (datetime.date(2024, 1, 2), "2024-01-02"),
        (datetime.datetime(2024, 1, 2, 3, 4, 5), "2024-01-02T03:04:05"),
        ((1, 2), "[1, 2]"),
        ({"p": Point(y=1, x=2)}, '{"p": {"y": 1, "x": 2}}'),
    ],
)
def test_format_value(value: Any, text: str) -> None:
    assert format_value(value, str_field=False) == text


@pytest.mark.parametrize(
    ("items", "text"),
    [
        ([], "N/A"),
        (["one"], "«one»"),
        (["a", "b"], "[1] «a»\n[2] «b»"),
        (["x\ny"], "«««\n    x\n    y\n»»»"),
        (["say «hi»"], "«««\n    say «hi»\n»»»"),
        ([1, {"k": "v"}], '[1] «1»\n[2] «{"k": "v"}»'),
    ],
)
def test_list_given_to_a_str_field(items: list[Any], text: str) -> None:
    assert format_value(items, str_field=True) == text


@pytest.mark.parametrize(
    ("annotation", "text", "value"),
    [
        (int, "42", 42),
        (int, " 42 ", 42),
        (int, "42.0", 42),
        (float, "3.14", 3.14),
        (float, "1e3", 1000.0),
        (bool, "True", True),
        (bool, "true", True),
        (bool, "yes", True),
        (bool, "1", True),
        (bool, "False", False),
        (list[str], '["a", "b"]', ["a", "b"]),
        (list[str], "['a', 'b']", ["a", "b"]),
        (list[int], "[1, 2,]", [1, 2]),
        (tuple[int, str], "(1, 'x')", (1, "x")),
        (Optional[int], "None", None),  # noqa: UP045
        (Optional[int], "null", None),  # noqa: UP045
        (Optional[int], "5", 5),  # noqa: UP045
        (str | None, "None", None),  # the one rule: a section of only None is no value
        (str | None, "None of them", "None of them"),
        (str | None, "{not json}", "{not json}"),
        (Color, "red", Color.RED),
        (Color, "BLUE", Color.BLUE),
        (Level, "2", Level.HIGH),
        (Literal["a", "b"], "a", "a"),
        (Literal["a", "b"], "Literal['b']", "b"),
        (Literal["a", "b"], "'a'", "a"),
        (Literal[1, 2, 3], "2", 2),
        (dict[str, Any], '{"a": 1}', {"a": 1}),
        (Any, "42", 42),
        (Any, "anything", "anything"),
        (dict[str, Optional[int]], "{'a': None}", {"a": None}),  # noqa: UP045
        (Point, '```json\n{"y": 1, "x": 2}\n```', Point(y=1, x=2)),
        (Point, "{'y': 1, 'x': 2}", Point(y=1, x=2)),
        (Point, "{y: 1, x: 2}", Point(y=1, x=2)),
        (Point, 'Here it is: {"y": 1, "x": 2}', Point(y=1, x=2)),
        # Drift DSPy rejects and structio reads, because there is one reading only.
        (Color, "Red", Color.RED),
        (Literal["a", "b"], "A", "a"),
        (list[str], "- a\n- b", ["a", "b"]),
    ],
)
def test_parse_text_accepts(annotation: Any, text: str, value: Any) -> None:
    assert read_text(type_info(annotation), text) == value


@pytest.mark.parametrize(
    ("annotation", "text", "reason"),
    [
        (int, "42.5", "expected int"),
        (int, "forty", "expected int"),
        (int, "", "empty value"),
        (Color, "Purple", "not a value or name of Color"),
        (Literal["a", "b"], "c", "expected Literal['a', 'b']"),
        (list[str], "just some prose", "expected list[str]"),
        (Point, '{"y": 1}', "x: Field required"),
    ],
)
def test_parse_text_rejects(annotation: Any, text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=re.escape(reason)):
        read_text(type_info(annotation), text)


def test_constraints_are_enforced_and_named() -> None:
    info = type_info(float, (("ge", 0.0), ("le", 1.0)))
    assert read_text(info, "0.5") == 0.5
    with pytest.raises(ValueError, match=r"less than or equal to 1 \(constraint le=1.0\)"):
        read_text(info, "7.5")
    short = type_info(str, (("max_length", 3),))
    with pytest.raises(ValueError, match="constraint max_length=3"):
        read_text(short, "toolong")


def test_type_info_is_cached_per_annotation_and_constraints() -> None:
    assert type_info(list[int]) is type_info(list[int])
    assert type_info(int, (("ge", 1),)) is not type_info(int)
