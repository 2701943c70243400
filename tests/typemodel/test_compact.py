"""The compact type notation: every type form, constraints, descriptions, nesting, recursion."""

from __future__ import annotations

import dataclasses
import datetime
import enum
from typing import Annotated, Any, Literal, Optional, Union

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from structio.typemodel.compact import compact_fields, compact_type


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.Enum):
    """How bad it is."""

    LOW = 1
    HIGH = 2


class Address(BaseModel):
    street: str
    zip: str | None


class Described(BaseModel):
    """A postal address."""

    street: str = Field(description="Street and number")
    zip: str | None = Field(None, max_length=10)


class Node(BaseModel):
    """A tree node."""

    name: str
    children: list[Node] = []


class Even(BaseModel):
    odd: Odd | None = None


class Odd(BaseModel):
    even: Even | None = None


Even.model_rebuild()


class Aliased(BaseModel):
    first_name: str = Field(alias="firstName")
    last: str = Field(alias="last name")


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Movie(TypedDict):
    title: str
    year: int


class Opaque:
    """A class pydantic has no schema for."""


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (str, "string"),
        (int, "int"),
        (float, "float"),
        (bool, "bool"),
        (type(None), "null"),
        (Any, "any"),
        (Literal["US", "UK", "FR"], '"US" | "UK" | "FR"'),
        (Literal[1, 2, 3], "1 | 2 | 3"),
        (Literal["a", 1, None, True], '"a" | 1 | null | true'),
        (Literal["only"], '"only"'),
        (Color, '"red" | "green"'),
        (Optional[int], "int | null"),  # noqa: UP045 - typing.Optional is its own object
        (int | None, "int | null"),
        (Union[int, str], "int | string"),  # noqa: UP007 - typing.Union too
        (Union[float, str, None], "float | string | null"),  # noqa: UP007
        (list[str], "string[]"),
        (list[list[int]], "int[][]"),
        (list[int | str], "(int | string)[]"),
        (list[Literal["a", "b"]], '("a" | "b")[]'),
        (list[int] | None, "int[] | null"),
        (tuple[int, str], "[int, string]"),
        (tuple[int, ...], "int[]"),
        (set[str], "string[]  // unique"),
        (dict[str, int], "map<string, int>"),
        (dict[str, Any], "map<string, any>"),
        (dict, "map<string, any>"),
        (dict[Literal["a", "b"], float], 'map<"a" | "b", float>'),
        (dict[str, list[int]], "map<string, int[]>"),
        (datetime.date, "string  // ISO 8601 date"),
        (datetime.datetime, "string  // ISO 8601 date-time"),
        (bytes, "string"),
        (Address, "{ street: string, zip: string | null }"),
        (list[Address], "{ street: string, zip: string | null }[]"),
        (Point, "{ x: int, y: int }"),
        (Movie, "{ title: string, year: int }"),
        (Opaque, "Opaque"),
    ],
)
def test_each_type_form(annotation: Any, expected: str) -> None:
    assert compact_type(annotation) == expected


@pytest.mark.parametrize(
    ("annotation", "constraints", "expected"),
    [
        (int, (("ge", 0), ("le", 130)), "int  // 0 to 130"),
        (int, (("ge", 0),), "int  // >= 0"),
        (int, (("le", 9),), "int  // <= 9"),
        (float, (("gt", 0), ("lt", 1)), "float  // > 0, < 1"),
        (float, (("ge", 0.5), ("lt", 1.5)), "float  // >= 0.5, < 1.5"),
        (int, (("multiple_of", 5),), "int  // multiple of 5"),
        (float, (("allow_inf_nan", False),), "float  // finite"),
        (float, (("allow_inf_nan", True),), "float"),
        (str, (("min_length", 1), ("max_length", 200)), "string  // 1 to 200 chars"),
        (str, (("min_length", 3), ("max_length", 3)), "string  // exactly 3 chars"),
        (str, (("max_length", 1),), "string  // at most 1 char"),
        (list[int], (("min_length", 1),), "int[]  // at least 1 item"),
        (list[int], (("min_length", 2),), "int[]  // at least 2 items"),
        (dict[str, int], (("max_length", 4),), "map<string, int>  // at most 4 entries"),
        (str | None, (("max_length", 10),), "string | null  // at most 10 chars"),
    ],
)
def test_declared_constraints_are_shown(
    annotation: Any, constraints: tuple[tuple[str, Any], ...], expected: str
) -> None:
    assert compact_type(annotation, constraints) == expected


def test_constraints_inside_a_type_say_where_they_apply() -> None:
    assert compact_type(list[Annotated[int, Field(ge=0)]]) == "int[]  // each >= 0"
    assert compact_type(dict[str, Annotated[float, Field(gt=0)]]) == (
        "map<string, float>  // each value > 0"
    )
    assert compact_type(Annotated[str, Field(pattern=r"^[A-Z]{3}$")]) == (
        "string  // pattern ^[A-Z]{3}$"
    )
    either = Annotated[int, Field(ge=1)] | Annotated[str, Field(min_length=2)]
    assert compact_type(either) == "int | string  // int >= 1, string at least 2 chars"
    assert compact_type(Annotated[str, Field(examples=["EUR", "USD"])]) == (
        'string  // e.g. "EUR", "USD"'
    )


def test_a_model_is_an_object_with_its_descriptions_as_comments() -> None:
    assert compact_type(Described) == (
        "{  // A postal address.\n"
        "  street: string,  // Street and number\n"
        "  zip?: string | null  // at most 10 chars\n"
        "}"
    )


def test_an_enum_docstring_is_a_comment_on_its_field() -> None:
    class Ticket(BaseModel):
        level: Level
        color: Color

    assert compact_type(Ticket) == (
        '{\n  level: 1 | 2,  // How bad it is.\n  color: "red" | "green"\n}'
    )


def test_nested_models_are_inline_and_indented() -> None:
    class Inner(BaseModel):
        """Innermost."""

        value: int = Field(ge=0)

    class Item(BaseModel):
        sku: str = Field(description="Stock keeping unit")

    class Middle(BaseModel):
        inner: Inner
        items: list[Item]

    class Outer(BaseModel):
        middle: Middle | None = Field(description="The middle one")

    assert compact_type(Outer) == (
        "{\n"
        "  middle: {  // The middle one\n"
        "    inner: {  // Innermost.\n"
        "      value: int  // >= 0\n"
        "    },\n"
        "    items: {\n"
        "      sku: string  // Stock keeping unit\n"
        "    }[]\n"
        "  } | null\n"
        "}"
    )


def test_a_model_used_twice_is_named_once() -> None:
    class Order(BaseModel):
        billing: Described
        shipping: Described | None
        note: str

    assert compact_type(Order) == (
        "{ billing: Described, shipping: Described | null, note: string }\n"
        "Described = {  // A postal address.\n"
        "  street: string,  // Street and number\n"
        "  zip?: string | null  // at most 10 chars\n"
        "}"
    )


def test_an_enum_used_twice_stays_inline() -> None:
    class Pair(BaseModel):
        a: Color
        b: Color

    assert compact_type(Pair) == '{ a: "red" | "green", b: "red" | "green" }'


def test_a_recursive_model_is_named_and_the_text_is_finite() -> None:
    assert compact_type(Node) == (
        "Node\nNode = { name: string, children?: Node[] }  // A tree node."
    )
    assert compact_type(list[Node]).startswith("Node[]\nNode = {")


def test_mutually_recursive_models_are_each_named_once() -> None:
    text = compact_type(Even)
    assert text == "Even\nEven = { odd?: Odd | null }\nOdd = { even?: Even | null }"


def test_a_model_inside_a_recursive_one_is_inlined_when_used_once() -> None:
    class Leaf(BaseModel):
        value: int

    class Tree(BaseModel):
        leaf: Leaf
        subtrees: list[Tree]

    Tree.model_rebuild()
    assert compact_type(Tree) == "Tree\nTree = { leaf: { value: int }, subtrees: Tree[] }"


def test_keys_are_the_aliases_a_json_answer_uses_quoted_where_needed() -> None:
    assert compact_type(Aliased) == '{ firstName: string, "last name": string }'


def test_a_long_object_without_comments_takes_one_line_per_field() -> None:
    class Wide(BaseModel):
        first_field_name: str
        second_field_name: str
        third_field_name: str
        fourth_field_name: str

    text = compact_type(Wide)
    assert text.splitlines() == [
        "{",
        "  first_field_name: string,",
        "  second_field_name: string,",
        "  third_field_name: string,",
        "  fourth_field_name: string",
        "}",
    ]


def test_a_multi_line_description_is_written_above_its_field() -> None:
    class Note(BaseModel):
        text: str = Field(description="First line.\n\n  Second line.")

    assert compact_type(Note) == "{\n  // First line.\n  // Second line.\n  text: string\n}"


def test_an_empty_model_is_an_empty_object() -> None:
    class Empty(BaseModel):
        pass

    assert compact_type(Empty) == "{}"


def test_fields_take_descriptions_and_constraints_and_share_definitions() -> None:
    text = compact_fields(
        [
            ("age", int, (("ge", 0), ("le", 130)), "Age in years."),
            ("home", Described, (), "Where they live"),
            ("work", Described | None, (), None),
            ("tags", list[str], (("min_length", 1),), None),
        ]
    )
    assert text == (
        "{\n"
        "  age: int,  // Age in years. 0 to 130\n"
        "  home: Described,  // Where they live\n"
        "  work: Described | null,\n"
        "  tags: string[]  // at least 1 item\n"
        "}\n"
        "Described = {  // A postal address.\n"
        "  street: string,  // Street and number\n"
        "  zip?: string | null  // at most 10 chars\n"
        "}"
    )


def test_fields_without_comments_fit_one_line() -> None:
    assert compact_fields([("answer", int, (), None), ("ok", bool, (), "")]) == (
        "{ answer: int, ok: bool }"
    )


def test_two_models_of_one_name_stay_apart() -> None:
    def make(kind: type) -> type[BaseModel]:
        class Item(BaseModel):
            value: kind  # type: ignore[valid-type]

        return Item

    text = compact_fields([("a", make(int), (), None), ("b", make(str), (), None)])
    assert text == "{ a: { value: int }, b: { value: string } }"


def test_results_are_cached_and_unhashable_annotations_still_work() -> None:
    assert compact_type(list[int]) is compact_type(list[int])
    unhashable = Annotated[int, Field(ge=0), [1]]  # list metadata: cannot be hashed
    assert compact_type(unhashable) == "int  // >= 0"
    assert compact_fields([("x", unhashable, (), None)]) == "{\n  x: int  // >= 0\n}"
