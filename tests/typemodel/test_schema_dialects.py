"""Schema dialects: pydantic's schemas as OpenAI, Anthropic, Gemini and local servers take them.

Unit cases per dialect, then a property over generated pydantic models: whatever the model,
each dialect's schema keeps to that dialect's rules (`DIALECTS`, checked here by a walker of
its own), is ``None`` exactly when the dialect cannot express the model, and no constraint
taken off the wire goes missing from the descriptions.
"""

from __future__ import annotations

import datetime
import enum
import itertools
import json
import re
import uuid
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal, Optional, Union

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, conint, conlist, constr

from structio.lm.profile import SCHEMA_DIALECTS
from structio.typemodel.dialects import (
    DIALECTS,
    Dialect,
    anthropic_schema,
    constraint_note,
    gemini_schema,
    openai_schema,
    plain_schema,
    wire_schema,
)
from structio.typemodel.schema import fields_schema, strict_schema

NAMES = sorted(DIALECTS)


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: conint(ge=1, le=9)  # type: ignore[valid-type]


class Dog(BaseModel):
    kind: Literal["dog"]
    name: constr(pattern=r"^[A-Z][a-z]+$", min_length=2)  # type: ignore[valid-type]


Pet = Annotated[Union[Cat, Dog], Field(discriminator="kind")]  # noqa: UP007


class Tree(BaseModel):
    """A tree whose children may be left out: recursion through an optional property."""

    value: int
    children: list[Tree] = []


class Chain(BaseModel):
    """Recursion through a required property: a chain that must always go on."""

    value: int
    rest: list[Chain]


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Inner(BaseModel):
    note: str


class Outer(BaseModel):
    inner: Inner
    items: list[Inner]
    maybe: Optional[Inner] = None  # noqa: UP045


def schema_of(**fields: Any) -> dict[str, Any]:
    return fields_schema(fields)


def everything(schema: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair in a JSON document, at any depth."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            yield key, value
            yield from everything(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from everything(item)


def descriptions(schema: Any) -> str:
    return "\n".join(v for k, v in everything(schema) if k == "description" and isinstance(v, str))


# -- unions ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", NAMES)
def test_a_discriminated_union_is_any_of_without_discriminator(dialect: str) -> None:
    source = schema_of(pet=Pet)
    assert "oneOf" in json.dumps(source)  # pydantic's, which OpenAI strict refuses
    wire = wire_schema(source, dialect)
    assert wire is not None
    text = json.dumps(wire)
    assert "oneOf" not in text
    assert "discriminator" not in text
    assert wire["properties"]["pet"] == {
        "anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]
    }
    tag = wire["$defs"]["Cat"]["properties"]["kind"]
    if DIALECTS[dialect].const:
        assert tag["const"] == "cat"
    else:  # Gemini: a one-value enum
        assert tag["enum"] == ["cat"]
        assert "const" not in tag


def test_the_input_schema_is_left_as_it_was() -> None:
    source = schema_of(pet=Pet, tree=Tree)
    before = json.dumps(source, sort_keys=True)
    for name in NAMES:
        wire_schema(source, name)
    assert json.dumps(source, sort_keys=True) == before


def test_plain_unions_and_optional_fields() -> None:
    class Row(BaseModel):
        either: Union[int, str]  # noqa: UP007
        maybe: Optional[int] = None  # noqa: UP045
        count: int = 3

    openai = openai_schema(schema_of(row=Row))
    assert openai is not None
    row = openai["$defs"]["Row"]
    assert row["required"] == ["either", "maybe", "count"]  # strict: every property
    assert row["additionalProperties"] is False
    assert row["properties"]["either"]["anyOf"] == [{"type": "integer"}, {"type": "string"}]
    assert row["properties"]["maybe"]["anyOf"] == [{"type": "integer"}, {"type": "null"}]
    assert "default" not in json.dumps(openai)  # OpenAI: "'default' is not permitted"
    anthropic = anthropic_schema(schema_of(row=Row))
    assert anthropic is not None
    row = anthropic["$defs"]["Row"]
    assert row["required"] == ["either"]  # optional ones stay optional
    assert row["additionalProperties"] is False
    assert row["properties"]["count"]["default"] == 3
    gemini = gemini_schema(schema_of(row=Row))
    assert gemini is not None
    assert gemini["$defs"]["Row"]["required"] == ["either"]
    assert "additionalProperties" not in gemini["$defs"]["Row"]
    assert "default" not in json.dumps(gemini)


# -- recursion ------------------------------------------------------------------------------


def test_recursion_per_dialect() -> None:
    source = schema_of(tree=Tree)
    openai = openai_schema(source)
    assert openai is not None
    assert openai["$defs"]["Tree"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    assert anthropic_schema(source) is None  # "Recursive schemas: not supported"
    gemini = gemini_schema(source)  # cycles only through optional properties
    assert gemini is not None
    assert gemini["$defs"]["Tree"]["required"] == ["value"]
    assert plain_schema(source)["$defs"]["Tree"]["properties"]["children"]["default"] == []
    required = schema_of(chain=Chain)
    assert gemini_schema(required) is None
    assert openai_schema(required) is not None
    assert plain_schema(required)["$defs"]["Chain"]["required"] == ["value", "rest"]


def test_a_described_reference_to_a_recursive_model_is_wrapped_not_unrolled() -> None:
    class Holder(BaseModel):
        tree: Tree = Field(description="The tree.")

    openai = openai_schema(schema_of(holder=Holder))
    assert openai is not None
    assert openai["$defs"]["Holder"]["properties"]["tree"] == {
        "description": "The tree.",
        "anyOf": [{"$ref": "#/$defs/Tree"}],
    }
    plain = plain_schema(schema_of(holder=Holder))
    assert plain["$defs"]["Holder"]["properties"]["tree"] == {
        "$ref": "#/$defs/Tree",
        "description": "The tree.",
    }


def test_a_described_reference_is_written_out_where_refs_take_no_siblings() -> None:
    class Paint(BaseModel):
        color: Color = Field(description="The color.")

    openai = openai_schema(schema_of(paint=Paint))
    assert openai is not None
    assert openai["$defs"]["Paint"]["properties"]["color"] == {
        "enum": ["red", "blue"],
        "title": "Color",
        "type": "string",
        "description": "The color.",
    }
    assert "Color" not in openai["$defs"]  # no longer referred to
    assert "Color" in plain_schema(schema_of(paint=Paint))["$defs"]


# -- constraints ----------------------------------------------------------------------------


def test_numeric_bounds() -> None:
    source = schema_of(age=Annotated[int, Field(ge=1, le=130, description="Age in years")])
    openai = openai_schema(source)
    assert openai is not None
    assert openai["properties"]["age"] == {
        "maximum": 130,
        "minimum": 1,
        "description": "Age in years",
        "type": "integer",
    }
    anthropic = anthropic_schema(source)
    assert anthropic is not None
    age = anthropic["properties"]["age"]
    assert "minimum" not in age
    assert "maximum" not in age
    assert age["description"] == "Age in years (must be ≥ 1; must be ≤ 130)"
    gemini = gemini_schema(source)
    assert gemini is not None
    assert gemini["properties"]["age"]["minimum"] == 1
    multiple = schema_of(n=conint(multiple_of=3))
    for name in ("gemini", "json-schema", "anthropic"):
        wire = wire_schema(multiple, name)
        assert wire is not None
        assert wire["properties"]["n"] == {
            "type": "integer",
            "description": "must be a multiple of 3",
        }
    assert wire_schema(multiple, "openai-strict") == {
        "type": "object",
        "properties": {"n": {"multipleOf": 3, "type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }


def test_string_constraints() -> None:
    source = schema_of(code=constr(pattern=r"^[A-Z]{3}$", min_length=3, max_length=3))
    openai = openai_schema(source)
    assert openai is not None
    assert openai["properties"]["code"] == {
        "pattern": "^[A-Z]{3}$",
        "type": "string",
        "description": "at least 3 characters; at most 3 characters",
    }
    anthropic = anthropic_schema(source)
    assert anthropic is not None
    assert anthropic["properties"]["code"]["pattern"] == "^[A-Z]{3}$"  # a simple pattern
    gemini = gemini_schema(source)
    assert gemini is not None
    code = gemini["properties"]["code"]
    assert "pattern" not in code
    assert "must match the regular expression ^[A-Z]{3}$" in code["description"]
    assert plain_schema(source)["properties"]["code"]["maxLength"] == 3
    bounded = schema_of(word=constr(pattern=r"^\w+\b"))  # Anthropic: no word boundaries
    anthropic = anthropic_schema(bounded)
    assert anthropic is not None
    assert anthropic["properties"]["word"] == {
        "type": "string",
        "description": r"must match the regular expression ^\w+\b",
    }


def test_array_bounds() -> None:
    source = schema_of(
        some=conlist(str, min_length=1, max_length=3), many=conlist(str, min_length=2)
    )
    openai = openai_schema(source)
    assert openai is not None
    assert openai["properties"]["some"]["minItems"] == 1
    assert openai["properties"]["some"]["maxItems"] == 3
    anthropic = anthropic_schema(source)
    assert anthropic is not None
    some, many = anthropic["properties"]["some"], anthropic["properties"]["many"]
    assert some["minItems"] == 1  # 0 and 1 are the values Anthropic takes
    assert "maxItems" not in some
    assert some["description"] == "at most 3 items"
    assert "minItems" not in many
    assert many["description"] == "at least 2 items"
    gemini = gemini_schema(source)
    assert gemini is not None
    assert gemini["properties"]["many"]["minItems"] == 2


def test_unique_items_are_described_everywhere() -> None:
    source = schema_of(ids=set[int])
    for name in NAMES:
        wire = wire_schema(source, name)
        assert wire is not None
        assert wire["properties"]["ids"] == {
            "items": {"type": "integer"},
            "type": "array",
            "description": "items must be unique",
        }


def test_a_tuple_where_prefix_items_are_not_taken() -> None:
    source = schema_of(pair=tuple[int, str])
    openai = openai_schema(source)
    assert openai is not None
    pair = openai["properties"]["pair"]
    assert pair["items"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert pair["description"] == "items in this order: integer, string"
    assert (pair["minItems"], pair["maxItems"]) == (2, 2)
    gemini = gemini_schema(source)
    assert gemini is not None
    assert gemini["properties"]["pair"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]


def test_formats() -> None:
    source = schema_of(day=datetime.date, id=uuid.UUID, blob=bytes)
    openai = openai_schema(source)
    assert openai is not None
    assert openai["properties"]["day"]["format"] == "date"
    assert openai["properties"]["id"]["format"] == "uuid"
    assert openai["properties"]["blob"] == {"type": "string", "description": "format: binary"}
    gemini = gemini_schema(source)
    assert gemini is not None
    assert gemini["properties"]["day"] == {"type": "string", "description": "format: date"}
    assert plain_schema(source)["properties"]["blob"]["format"] == "binary"


# -- open objects, literals, enums, nesting ------------------------------------------------


def test_an_open_dict_where_objects_must_be_closed() -> None:
    source = schema_of(counts=dict[str, int])
    assert openai_schema(source) is None
    assert anthropic_schema(source) is None
    assert strict_schema({"counts": dict[str, int]}) is None
    gemini = gemini_schema(source)
    assert gemini is not None
    assert gemini["properties"]["counts"]["additionalProperties"] == {"type": "integer"}
    assert plain_schema(source)["properties"]["counts"]["additionalProperties"] == {
        "type": "integer"
    }


def test_any_has_no_type_to_send() -> None:
    source = schema_of(anything=Any)
    assert openai_schema(source) is None
    assert anthropic_schema(source) is None
    assert gemini_schema(source) is None
    assert plain_schema(source)["properties"]["anything"] == {}


def test_literals() -> None:
    source = schema_of(
        choice=Literal["a", "b"], yes=Literal[True], maybe=Literal["x", None], mixed=Literal["a", 1]
    )
    openai = openai_schema(source)
    assert openai is not None
    assert openai["properties"]["choice"] == {"enum": ["a", "b"], "type": "string"}
    assert openai["properties"]["yes"] == {"const": True, "type": "boolean"}
    # Every schema typed: pydantic's {"enum": ["x", null]} is a string enum or null.
    assert openai["properties"]["maybe"] == {
        "anyOf": [{"type": "string", "enum": ["x"]}, {"type": "null"}]
    }
    assert openai["properties"]["mixed"] == {
        "anyOf": [{"type": "string", "enum": ["a"]}, {"type": "integer", "enum": [1]}]
    }
    assert plain_schema(source)["properties"]["maybe"] == {"enum": ["x", None]}
    gemini = gemini_schema(source)  # enums of strings and numbers only, no const
    assert gemini is not None
    assert gemini["properties"]["choice"] == {"enum": ["a", "b"], "type": "string"}
    assert gemini["properties"]["yes"] == {"type": "boolean", "description": "must be true"}
    assert gemini["properties"]["maybe"] == {
        "anyOf": [{"type": "string", "enum": ["x"]}, {"type": "null"}]
    }
    assert gemini["properties"]["mixed"] == openai["properties"]["mixed"]


def test_enums() -> None:
    source = schema_of(color=Color)
    for name in NAMES:
        wire = wire_schema(source, name)
        assert wire is not None
        assert wire["properties"]["color"] == {"$ref": "#/$defs/Color"}
        assert wire["$defs"]["Color"] == {
            "enum": ["red", "blue"],
            "title": "Color",
            "type": "string",
        }


@pytest.mark.parametrize("dialect", ["openai-strict", "anthropic"])
def test_nested_models_are_closed_all_the_way_down(dialect: str) -> None:
    wire = wire_schema(schema_of(outer=Outer), dialect)
    assert wire is not None
    objects = [wire, *wire["$defs"].values()]
    assert len(objects) == 3
    for node in objects:
        assert node["additionalProperties"] is False
    if dialect == "openai-strict":
        assert wire["$defs"]["Outer"]["required"] == ["inner", "items", "maybe"]


def test_strict_schema_is_the_openai_dialect_of_the_fields() -> None:
    fields = {"pet": Pet, "n": int}
    assert strict_schema(fields) == openai_schema(fields_schema(fields))


def test_the_dialects_are_the_profiles() -> None:
    assert set(DIALECTS) == set(SCHEMA_DIALECTS)
    for name, dialect in DIALECTS.items():
        assert dialect.name == name
        assert "(read 20" in dialect.source
        assert {"oneOf", "discriminator"}.isdisjoint(dialect.keywords)
    with pytest.raises(KeyError):
        wire_schema({"type": "object", "properties": {}}, "xml")


def test_a_root_that_is_not_an_object() -> None:
    source = pydantic.TypeAdapter(list[int]).json_schema()
    assert openai_schema(source) is None  # OpenAI and Anthropic: the root is an object
    assert anthropic_schema(source) is None
    assert gemini_schema(source) == {"items": {"type": "integer"}, "type": "array"}


@pytest.mark.parametrize(
    ("keyword", "value", "note"),
    [
        ("minimum", 1, "must be ≥ 1"),
        ("exclusiveMaximum", 2.5, "must be < 2.5"),
        ("minLength", 1, "at least 1 character"),
        ("maxItems", 4, "at most 4 items"),
        ("const", "x", 'must be "x"'),
        ("enum", [1, 2], "must be one of 1, 2"),
        ("propertyNames", {"pattern": "^a"}, 'propertyNames: {"pattern": "^a"}'),
    ],
)
def test_constraint_notes(keyword: str, value: Any, note: str) -> None:
    assert constraint_note(keyword, value) == note


# -- the property: generated pydantic models --------------------------------------------------

_COUNTER = itertools.count()
_CONSTRAINTS = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength"}
    | {"maxLength", "pattern", "format", "minItems", "maxItems", "uniqueItems", "const", "enum"}
)
_ONE = ("items", "additionalProperties")
_LISTS = ("anyOf", "prefixItems", "allOf")


def _model(fields: list[tuple[Any, bool, str | None]], tag: str | None = None) -> type[BaseModel]:
    spec: dict[str, Any] = {}
    if tag is not None:
        spec["kind"] = (Literal[tag], ...)
    for index, (annotation, optional, description) in enumerate(fields):
        default: Any = None if optional else ...
        hint = Optional[annotation] if optional else annotation  # noqa: UP045
        spec[f"f{index}"] = (hint, Field(default, description=description))
    return pydantic.create_model(f"M{next(_COUNTER)}", **spec)


leaves = st.sampled_from(
    [
        int,
        str,
        float,
        bool,
        conint(ge=1),
        conint(gt=0, le=10),
        conint(multiple_of=5),
        constr(min_length=1, max_length=20),
        constr(pattern=r"^[a-z]+$"),
        constr(pattern=r"^x\b"),
        Literal["a", "b"],
        Literal[True],
        Literal["k", None],
        Color,
        datetime.date,
        datetime.datetime,
        uuid.UUID,
        Tree,
        Chain,
        Any,
    ]
)


def _extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    field = st.tuples(inner, st.booleans(), st.sampled_from([None, "A field."]))
    fields = st.lists(field, min_size=1, max_size=3)
    return st.one_of(
        inner.map(lambda t: list[t]),  # type: ignore[valid-type]
        inner.map(lambda t: conlist(t, min_length=2, max_length=5)),
        st.just(set[int]),
        inner.map(lambda t: dict[str, t]),  # type: ignore[valid-type]
        st.tuples(inner, inner).map(lambda ts: Union[ts[0], ts[1]]),  # noqa: UP007
        st.tuples(inner, inner).map(lambda ts: tuple[ts[0], ts[1]]),  # type: ignore[valid-type]
        fields.map(_model),
        st.lists(fields, min_size=2, max_size=3).map(
            lambda groups: Annotated[
                Union[tuple(_model(g, tag=f"t{i}") for i, g in enumerate(groups))],  # noqa: UP007
                Field(discriminator="kind"),
            ]
        ),
    )


annotations = st.recursive(leaves, _extend, max_leaves=6)
top_models = st.lists(
    st.tuples(annotations, st.booleans(), st.sampled_from([None, "Described."])),
    min_size=1,
    max_size=3,
).map(_model)


class _Source:
    """What a pydantic schema holds that decides whether a dialect can express it."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.defs: Mapping[str, Any] = schema.get("$defs", {})
        nodes = list(_nodes(schema))
        self.untyped = any(
            not node.keys() & {"type", "anyOf", "oneOf", "$ref", "enum", "const", "allOf"}
            for node in nodes
        )
        self.open_object = any(
            node.get("type") == "object"
            and "properties" not in node
            and node.get("additionalProperties") is not False
            for node in nodes
        )
        self.cycle = any(self._cycle(name, required_only=False) for name in self.defs)
        self.required_cycle = any(self._cycle(name, required_only=True) for name in self.defs)

    def _cycle(self, start: str, *, required_only: bool) -> bool:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for target in _targets(self.defs[todo.pop()], required_only):
                if target == start:
                    return True
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return False


def _nodes(schema: Any) -> Iterator[dict[str, Any]]:
    """Every schema node of a schema (not its data: enums, property names, defaults)."""
    if not isinstance(schema, dict):
        return
    yield schema
    for key in ("properties", "$defs", "patternProperties"):
        for sub in (schema.get(key) or {}).values():
            yield from _nodes(sub)
    for key in _ONE:
        yield from _nodes(schema.get(key))
    for key in (*_LISTS, "oneOf"):
        for sub in schema.get(key) or ():
            yield from _nodes(sub)


def _targets(schema: Any, required_only: bool) -> Iterator[str]:
    """The definitions a schema refers to (through required properties only, if asked)."""
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref")
    if isinstance(ref, str):
        yield ref.rpartition("/")[2]
    required = schema.get("required", [])
    for name, sub in (schema.get("properties") or {}).items():
        if not required_only or name in required:
            yield from _targets(sub, required_only)
    for key in _ONE:
        yield from _targets(schema.get(key), required_only)
    for key in (*_LISTS, "oneOf"):
        for sub in schema.get(key) or ():
            yield from _targets(sub, required_only)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return "number" if isinstance(value, float) else "string"


def check_rules(wire: dict[str, Any], rules: Dialect) -> None:
    """Assert that a wire schema keeps to its dialect's rules, read from `DIALECTS` alone."""
    if rules.object_root:
        assert wire["type"] == "object"
    defs = wire.get("$defs", {})
    for node in _nodes(wire):
        where = json.dumps(node)[:300]
        assert set(node) <= rules.keywords, (rules.name, sorted(set(node) - rules.keywords), where)
        if "$ref" in node:
            assert node["$ref"].removeprefix("#/$defs/") in defs, where
            if not rules.ref_siblings:
                assert set(node) == {"$ref"}, where
            continue
        if not rules.untyped:
            assert node.keys() & {"type", "anyOf", "enum", "const"}, where
            assert "enum" not in node or "type" in node, where
        if node.get("type") == "object" or "properties" in node:
            if rules.closed:
                assert node.get("additionalProperties") is False, where
                assert "properties" in node, where
            if rules.all_required:
                assert node["required"] == list(node["properties"]), where
        listed = [*node.get("enum", ()), *([node["const"]] if "const" in node else [])]
        assert all(_kind(value) in rules.enum_kinds for value in listed), where
        assert "const" not in node or rules.const, where
        if "format" in node and rules.formats is not None:
            assert node["format"] in rules.formats, where
        if "minItems" in node and rules.min_items is not None:
            assert node["minItems"] in rules.min_items, where
        if "pattern" in node and rules.bad_pattern is not None:
            assert not rules.bad_pattern.search(node["pattern"]), where
    cycles = _Source(wire)
    if rules.recursion == "no":
        assert not cycles.cycle
    if rules.recursion == "optional":
        assert not cycles.required_cycle


def check_constraints_kept(source: dict[str, Any], wire: dict[str, Any]) -> None:
    """Each constraint of the source is on the wire, or its note is in a description."""
    kept = list(everything(wire))
    values = [v for k, v in kept if k in ("enum", "const")]
    listed = [x for v in values for x in (v if isinstance(v, list) else [v])]
    said = descriptions(wire)
    for node in _nodes(source):
        for keyword in node.keys() & _CONSTRAINTS:
            value = node[keyword]
            if keyword == "uniqueItems" and value is False:
                continue
            if (keyword, value) in kept or constraint_note(keyword, value) in said:
                continue
            if keyword in ("enum", "const"):  # the values went to typed branches
                options = value if keyword == "enum" else [value]
                if all(v is None or v in listed for v in options):
                    continue
            raise AssertionError(f"{keyword}={value!r} is lost: {json.dumps(wire)[:500]}")


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(model=top_models)
def test_every_dialect_keeps_its_rules_for_any_model(model: type[BaseModel]) -> None:
    source = fields_schema({"answer": model, "note": str})
    facts = _Source(source)
    for name in NAMES:
        rules = DIALECTS[name]
        wire = wire_schema(source, name)
        cannot = (
            (rules.closed and facts.open_object)
            or (not rules.untyped and facts.untyped)
            or (rules.recursion == "no" and facts.cycle)
            or (rules.recursion == "optional" and facts.required_cycle)
        )
        assert (wire is None) == cannot, (name, json.dumps(source)[:800])
        if wire is None:
            continue
        text = json.dumps(wire)
        assert "oneOf" not in text
        assert '"discriminator"' not in text
        check_rules(wire, rules)
        check_constraints_kept(source, wire)


def test_the_property_catches_a_broken_dialect() -> None:
    """The rule checker fails on pydantic's own schema, so the property can fail."""
    source = fields_schema({"pet": Pet, "age": conint(ge=1)})
    with pytest.raises(AssertionError):
        check_rules(source, DIALECTS["openai-strict"])
    lossy = json.loads(json.dumps(source))
    del lossy["properties"]["age"]["minimum"]
    del lossy["$defs"]["Cat"]["properties"]["lives"]["minimum"]
    with pytest.raises(AssertionError, match="minimum=1 is lost"):
        check_constraints_kept(source, lossy)
    assert re.search("oneOf", json.dumps(source))
