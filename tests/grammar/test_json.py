"""JSON schemas as grammars: every value of the schema, as json.dumps writes it, and no other."""

from __future__ import annotations

import json
from typing import Any, Literal

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structio.grammar import Grammar
from structio.grammar.ir import Rules
from structio.grammar.json import RuleSet, object_of
from structio.typemodel.schema import fields_schema
from tests.grammar.llg import SYNTAXES, accepts


class Leaf(pydantic.BaseModel):
    name: str
    score: float = 0.0
    tags: list[str] = []


class Tree(pydantic.BaseModel):
    leaf: Leaf | None = None
    children: list[Tree] = []
    kind: Literal["a", "b"] = "a"


def _grammar(schema: dict[str, Any]) -> Grammar:
    rules = RuleSet()
    root = object_of(schema, rules)
    return Grammar(Rules(root, tuple(rules.rules.items())))


def _dumps(value: Any, style: int) -> str:
    if style == 0:
        return json.dumps(value, indent=2, ensure_ascii=False)
    if style == 1:
        return json.dumps(value)  # ", " and ": ", ASCII escapes
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


SCHEMA = fields_schema({"tree": Tree, "counts": dict[str, int], "pair": tuple[int, bool]})
GRAMMAR = _grammar(SCHEMA)

leaves = st.builds(
    Leaf,
    name=st.text(max_size=12),
    score=st.floats(allow_nan=False, allow_infinity=False),
    tags=st.lists(st.text(max_size=5), max_size=3),
)
trees = st.recursive(
    st.builds(Tree, leaf=st.none() | leaves, kind=st.sampled_from(["a", "b"])),
    lambda inner: st.builds(Tree, children=st.lists(inner, max_size=3), leaf=st.none() | leaves),
    max_leaves=6,
)
values = st.fixed_dictionaries(
    {
        "tree": trees.map(lambda t: t.model_dump(mode="json", exclude_defaults=False)),
        "counts": st.dictionaries(
            st.text(max_size=6), st.integers(-(2**63), 2**63 - 1), max_size=4
        ),
        "pair": st.tuples(st.integers(-1000, 1000), st.booleans()).map(list),
    }
).map(lambda value: {key: value[key] for key in SCHEMA["properties"]})  # declared order


@settings(max_examples=40, deadline=None)
@given(values, st.integers(0, 2), st.sampled_from(SYNTAXES))
def test_every_value_is_accepted(value: dict[str, Any], style: int, syntax: str) -> None:
    assert accepts(GRAMMAR, _dumps(value, style), syntax)


@settings(max_examples=25, deadline=None)
@given(values, st.sampled_from(SYNTAXES))
def test_omissible_properties_may_be_left_out(value: dict[str, Any], syntax: str) -> None:
    tree = {k: v for k, v in value["tree"].items() if k == "children"}
    assert accepts(GRAMMAR, json.dumps({**value, "tree": tree}), syntax)


@pytest.mark.parametrize("syntax", SYNTAXES)
@pytest.mark.parametrize(
    "damaged",
    [
        '{"tree": {}, "counts": {}}',  # a required property missing
        '{"counts": {}, "tree": {}, "pair": [1, true]}',  # out of order
        '{"tree": {"kind": "c"}, "counts": {}, "pair": [1, true]}',  # not a choice
        '{"tree": {}, "counts": {"a": 1.5}, "pair": [1, true]}',  # not an integer
        '{"tree": {}, "counts": {}, "pair": [1, true, 2]}',  # too long a tuple
        '{"tree": {}, "counts": {}, "pair": [1, true],}',  # trailing comma
        '{"tree": {"leaf": {"name": "a\nb"}}, "counts": {}, "pair": [1, true]}',  # raw newline
        '{"tree": {}, "counts": {}, "pair": [1, true]} x',  # text after it
        '{"tree": {},' + " " * 30 + '"counts": {}, "pair": [1, true]}',  # endless space
        '{"tree": {}, "counts": {}, "pair": [01, true]}',  # a leading zero
    ],
)
def test_damaged_json_is_refused(damaged: str, syntax: str) -> None:
    assert not accepts(GRAMMAR, damaged, syntax)


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_array_bounds_enum_const_and_type_lists(syntax: str) -> None:
    schema = {
        "type": "object",
        "properties": {
            "few": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2},
            "color": {"enum": ["red", 1, None]},
            "fixed": {"const": "x"},
            "either": {"type": ["string", "null"]},
            "anything": {},
        },
        "required": ["few", "color", "fixed", "either", "anything"],
    }
    grammar = _grammar(schema)
    good = {"few": [1], "color": None, "fixed": "x", "either": None, "anything": [{"a": [1.5e3]}]}
    assert accepts(grammar, json.dumps(good), syntax)
    assert accepts(grammar, json.dumps({**good, "few": [1, 2], "color": 1}), syntax)
    for bad in ({"few": []}, {"few": [1, 2, 3]}, {"color": "blue"}, {"fixed": "y"}):
        assert not accepts(grammar, json.dumps({**good, **bad}), syntax)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=20), st.booleans())
def test_strings_with_any_characters_when_escaped(text: str, ascii_only: bool) -> None:
    grammar = _grammar(
        {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}
    )
    assert accepts(grammar, json.dumps({"s": text}, ensure_ascii=ascii_only))


class Größe(pydantic.BaseModel):
    wert: int


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_definition_names_become_ascii_rule_names(syntax: str) -> None:
    grammar = _grammar(fields_schema({"g": Größe}))
    assert "def-gr--e ::=" in grammar.gbnf()
    assert accepts(grammar, '{"g": {"wert": 1}}', syntax)
