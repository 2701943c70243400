"""Schema dialects: a pydantic JSON schema as each provider's structured output accepts it.

Providers take different subsets of JSON Schema for structured output and function tools,
and refuse a request (HTTP 400) whose schema steps outside theirs: OpenAI's strict mode
refuses ``oneOf`` (pydantic's discriminated unions), Anthropic refuses ``minimum`` and
recursion, Gemini refuses ``const``. One pure function per dialect turns a schema pydantic
wrote into that provider's wire schema:

- `openai_schema`: OpenAI strict structured outputs and strict function tools;
- `anthropic_schema`: Anthropic structured outputs and strict tools;
- `gemini_schema`: Gemini ``responseJsonSchema`` and function declarations' parameters;
- `plain_schema`: plain JSON Schema for local servers' guided decoding (vLLM, llama.cpp,
  Ollama), keeping all they support.

Each dialect's rules are data (`DIALECTS`, one `Dialect` each). The rules every dialect
shares: ``oneOf`` becomes ``anyOf`` (the branches of a discriminated union exclude each
other through their tags, so nothing is lost), ``discriminator`` and other annotations a
dialect lacks are dropped, ``const`` becomes a one-value ``enum`` where a dialect lacks
``const``, and a constraint a dialect lacks (``minimum``, ``pattern``, ``maxItems``...) is
taken off the wire schema and written into the description instead ("must be ≥ 1"), so the
model still sees it. The value is still validated against the declared type when the answer
is read, so no constraint is lost, and no request is refused for its schema.

A function returns ``None`` when its dialect cannot express the schema at all (an open
``dict`` or ``Any`` where every object must be closed, recursion a provider refuses): the
caller then asks for JSON mode, or no schema. Nothing here reads or writes values.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

__all__ = [
    "DIALECTS",
    "Dialect",
    "anthropic_schema",
    "constraint_note",
    "gemini_schema",
    "openai_schema",
    "plain_schema",
    "wire_schema",
]

Recursion = Literal["yes", "no", "optional"]


@dataclass(frozen=True)
class Dialect:
    """What one provider's structured output accepts of JSON Schema.

    Attributes:
        name: The dialect's name (`structio.lm.profile.ModelProfile.schema_dialect`).
        source: The documentation the rules were read from, and when.
        keywords: The keywords a schema may use anywhere; every other one is dropped (a
            constraint into the description).
        formats: The string formats kept (``None``: every format).
        enum_kinds: The JSON kinds of value an ``enum`` or ``const`` may list.
        const: Whether ``const`` is understood (else it becomes a one-value ``enum``).
        recursion: ``"yes"``: recursive ``$ref`` are fine; ``"no"``: a recursive schema
            cannot be sent; ``"optional"``: only when every cycle passes through a property
            that is not required.
        ref_siblings: Whether a ``$ref`` may have other keywords beside it (a description);
            else the definition is written out in its place, or wrapped in ``anyOf``.
        closed: Every object sets ``additionalProperties: false`` (an open ``dict``
            cannot be expressed).
        all_required: Every property of an object is required.
        object_root: The schema itself must be an object.
        untyped: A schema may leave the type open (``{}``, pydantic's ``Any``).
        min_items: The only values ``minItems`` may take (``None``: any).
        bad_pattern: Matches the regular expressions a ``pattern`` may not use.
        strict: Requests carry ``"strict": true`` with this dialect's schemas.
    """

    name: str
    source: str
    keywords: frozenset[str]
    formats: frozenset[str] | None
    enum_kinds: frozenset[str]
    const: bool
    recursion: Recursion
    ref_siblings: bool
    closed: bool
    all_required: bool
    object_root: bool
    untyped: bool
    min_items: frozenset[int] | None = None
    bad_pattern: re.Pattern[str] | None = None
    strict: bool = False


_CORE = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "anyOf", "enum"}
    | {"$ref", "$defs", "title", "description"}
)
_ALL_KINDS = frozenset({"string", "integer", "number", "boolean", "null"})

# The rules of each dialect, as each provider documents them. A keyword left out is dropped
# from the wire (a constraint is described instead), so a rule read too narrowly costs the
# model a hint, never a refused request: when a page was unclear, the narrower reading won.
# The pages were read from indexed copies (on the date given), not live.
DIALECTS: Mapping[str, Dialect] = MappingProxyType(
    {
        "openai-strict": Dialect(
            name="openai-strict",
            # https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
            # (read 2026-11-27): strings take pattern and format (these formats), numbers
            # multipleOf and the four bounds, arrays minItems and maxItems; no minLength,
            # maxLength, allOf, oneOf, not, if/then/else, patternProperties, uniqueItems;
            # $defs and recursive $ref are supported. Not on the page but refused by the API:
            # a $ref with sibling keywords (the openai SDK's to_strict_json_schema writes
            # such a $ref out) and "default" ("'default' is not permitted").
            source="https://platform.openai.com/docs/guides/structured-outputs#supported-schemas"
            " (read 2026-11-27)",
            keywords=_CORE
            | {"const", "pattern", "format", "minimum", "maximum", "exclusiveMinimum"}
            | {"exclusiveMaximum", "multipleOf", "minItems", "maxItems"},
            formats=frozenset(
                {"date-time", "time", "date", "duration", "email", "hostname", "ipv4"}
                | {"ipv6", "uuid"}
            ),
            enum_kinds=_ALL_KINDS,
            const=True,
            recursion="yes",
            ref_siblings=False,
            closed=True,
            all_required=True,
            object_root=True,
            untyped=False,
            strict=True,
        ),
        "anthropic": Dialect(
            name="anthropic",
            # https://platform.claude.com/docs/en/build-with-claude/structured-outputs
            # #json-schema-limitations (read 2026-11-27; the same rules for JSON outputs and
            # strict tools): enum of primitives, const, anyOf, $ref and $defs, default,
            # additionalProperties only false, these string formats, minItems 0 or 1, and
            # pattern without backreferences, lookaround or word boundaries. Not supported:
            # recursive schemas, numeric bounds, minLength/maxLength, other array bounds.
            source="https://platform.claude.com/docs/en/build-with-claude/structured-outputs"
            "#json-schema-limitations (read 2026-11-27)",
            keywords=_CORE | {"const", "default", "format", "pattern", "minItems"},
            formats=frozenset(
                {"date-time", "time", "date", "duration", "email", "hostname", "uri"}
                | {"ipv4", "ipv6", "uuid"}
            ),
            enum_kinds=_ALL_KINDS,
            const=True,
            recursion="no",
            ref_siblings=False,
            closed=True,
            all_required=False,
            object_root=True,
            untyped=False,
            min_items=frozenset({0, 1}),
            bad_pattern=re.compile(r"\\[1-9bBk]|\(\?<?[=!]|\(\?P?[<=]"),
            strict=True,
        ),
        "gemini": Dialect(
            name="gemini",
            # https://ai.google.dev/api/generate-content#FIELDS.response_json_schema and
            # https://ai.google.dev/gemini-api/docs/structured-output#json-schema (read
            # 2026-11-27): $defs, $ref (with no sibling but $-keywords), type, format,
            # title, description, enum (strings and numbers), items, prefixItems,
            # minItems, maxItems, minimum, maximum, anyOf, oneOf (read as anyOf),
            # properties, additionalProperties, required; cyclic $ref only through
            # properties that are not required. No const, pattern, length bounds, default.
            # Formats: the narrowest documented set (the OpenAPI responseSchema and
            # function declarations of older models take only date-time).
            source="https://ai.google.dev/api/generate-content#FIELDS.response_json_schema"
            " (read 2026-11-27)",
            keywords=_CORE
            | {"format", "minimum", "maximum", "minItems", "maxItems", "prefixItems"},
            formats=frozenset({"date-time"}),
            enum_kinds=frozenset({"string", "integer", "number"}),
            const=False,
            recursion="optional",
            ref_siblings=False,
            closed=False,
            all_required=False,
            object_root=False,
            untyped=False,
        ),
        "json-schema": Dialect(
            name="json-schema",
            # Local servers' guided decoding (read 2026-11-27):
            # https://github.com/ggml-org/llama.cpp/blob/master/grammars/README.md#json-schemas--gbnf
            # (llama.cpp and Ollama, which uses its converter; no uniqueItems, contains,
            # not, if/then/else, patternProperties, multipleOf) and
            # https://docs.vllm.ai/en/latest/features/structured_outputs.html (xgrammar,
            # guidance, outlines). Everything they enforce is kept.
            source="https://github.com/ggml-org/llama.cpp/blob/master/grammars/README.md"
            "#json-schemas--gbnf (read 2026-11-27)",
            keywords=_CORE
            | {"const", "default", "allOf", "prefixItems", "minItems", "maxItems"}
            | {"pattern", "format", "minLength", "maxLength", "minimum", "maximum"}
            | {"exclusiveMinimum", "exclusiveMaximum"},
            formats=None,
            enum_kinds=_ALL_KINDS,
            const=True,
            recursion="yes",
            ref_siblings=True,
            closed=False,
            all_required=False,
            object_root=False,
            untyped=True,
        ),
    }
)

# Keywords that say nothing a value must be: dropped without a note where a dialect lacks them.
_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "example", "discriminator", "deprecated"}
    | {"readOnly", "writeOnly", "$comment", "$schema", "$id", "$anchor", "contentMediaType"}
    | {"contentEncoding", "propertyOrdering"}
)
# Keywords whose value is one schema, a list of schemas, or a map of name to schema.
_ONE = frozenset(
    {"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then"}
    | {"else", "unevaluatedItems", "unevaluatedProperties"}
)
_LIST = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_MAP = frozenset({"properties", "$defs", "definitions", "patternProperties", "dependentSchemas"})
_DEFS = "#/$defs/"
# The order of notes in a description, whatever order pydantic wrote the keywords in.
_NOTE_ORDER = {
    keyword: rank
    for rank, keyword in enumerate(
        (
            *("const", "enum", "format", "pattern", "minLength", "maxLength", "minimum"),
            *("exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf", "minItems"),
            *("maxItems", "uniqueItems", "prefixItems", "minProperties", "maxProperties"),
        )
    )
}


def constraint_note(keyword: str, value: Any) -> str:
    """How a constraint reads in a description once it is off the wire (``"must be ≥ 1"``).

    Example:
        >>> constraint_note("maxLength", 5)
        'at most 5 characters'
    """
    text = json.dumps(value, ensure_ascii=False)
    plural = "" if value == 1 else "s"
    notes = {
        "minimum": f"must be ≥ {text}",
        "exclusiveMinimum": f"must be > {text}",
        "maximum": f"must be ≤ {text}",
        "exclusiveMaximum": f"must be < {text}",
        "multipleOf": f"must be a multiple of {text}",
        "minLength": f"at least {text} character{plural}",
        "maxLength": f"at most {text} character{plural}",
        "pattern": f"must match the regular expression {value}",
        "format": f"format: {value}",
        "minItems": f"at least {text} item{plural}",
        "maxItems": f"at most {text} item{plural}",
        "uniqueItems": "items must be unique",
        "minProperties": f"at least {text} entr{'y' if value == 1 else 'ies'}",
        "maxProperties": f"at most {text} entr{'y' if value == 1 else 'ies'}",
        "const": f"must be {text}",
    }
    if keyword == "enum" and isinstance(value, list):
        return "must be one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in value)
    if keyword == "patternProperties" and isinstance(value, Mapping):
        return "keys must match " + " or ".join(str(key) for key in value)
    if keyword in notes:
        return notes[keyword]
    return f"{keyword}: {text if len(text) <= 200 else text[:197] + '...'}"


def openai_schema(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """``schema`` as OpenAI's strict structured outputs and strict function tools take it.

    Every object lists all its properties as required and forbids others; ``$defs`` and
    recursive references stay. ``None`` when that cannot be: an open ``dict`` or ``Any``
    (closing it would force ``{}``), or a root that is not an object.
    """
    return _wire(schema, DIALECTS["openai-strict"])


def anthropic_schema(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """``schema`` as Anthropic's structured outputs and strict tools take it.

    Every object forbids other properties (its optional ones stay optional). ``None`` for
    an open ``dict`` or ``Any``, a root that is not an object, or a recursive schema, which
    Anthropic does not take.
    """
    return _wire(schema, DIALECTS["anthropic"])


def gemini_schema(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """``schema`` as Gemini's ``responseJsonSchema`` and function parameters take it.

    ``None`` for ``Any`` (a schema without a type) or a cycle of references through required
    properties (Gemini unrolls cycles only through optional ones).
    """
    return _wire(schema, DIALECTS["gemini"])


def plain_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` as plain JSON Schema for local servers' guided decoding; never ``None``.

    Objects stay as pydantic wrote them (open ``dict`` included); only what grammar-based
    decoders cannot enforce is moved into descriptions.
    """
    found = _wire(schema, DIALECTS["json-schema"])
    if found is None:  # pragma: no cover - the plain dialect expresses every schema
        raise AssertionError("the plain dialect refused a schema")
    return found


_CONVERTERS = MappingProxyType(
    {
        "openai-strict": openai_schema,
        "anthropic": anthropic_schema,
        "gemini": gemini_schema,
        "json-schema": plain_schema,
    }
)


def wire_schema(schema: Mapping[str, Any], dialect: str) -> dict[str, Any] | None:
    """``schema`` in the named dialect (a key of `DIALECTS`), or ``None`` if it cannot be.

    Raises:
        KeyError: ``dialect`` is not a dialect.
    """
    return _CONVERTERS[dialect](schema)


# -- the conversion ----------------------------------------------------------------------------


class _UnfitError(Exception):
    """The schema cannot be expressed in the dialect."""


def _wire(schema: Mapping[str, Any], dialect: Dialect) -> dict[str, Any] | None:
    root = copy.deepcopy(dict(schema))
    defs: dict[str, Any] = root.pop("$defs", None) or {}
    cyclic = _cyclic(defs)
    if cyclic and dialect.recursion == "no":
        return None
    if dialect.recursion == "optional" and _required_cycle(defs):
        return None
    converter = _Converter(dialect, defs, cyclic)
    try:
        out = converter.node(root)
        out_defs = {name: converter.node(d) for name, d in defs.items()}
    except _UnfitError:
        return None
    if not isinstance(out, dict) or (dialect.object_root and out.get("type") != "object"):
        return None
    used = _reachable(out, out_defs)
    if used:
        out["$defs"] = {name: out_defs[name] for name in out_defs if name in used}
    return out


class _Converter:
    """One schema's conversion: its definitions and which of them are recursive."""

    def __init__(self, dialect: Dialect, defs: Mapping[str, Any], cyclic: set[str]) -> None:
        self.dialect = dialect
        self.defs = defs
        self.cyclic = cyclic

    def node(self, schema: Any) -> Any:
        if isinstance(schema, bool):  # `additionalProperties: false`, `items: true`
            return schema
        if not isinstance(schema, dict):
            raise _UnfitError
        rules = self.dialect
        s, notes = self._normalized(dict(schema))
        if set(s) == {"$ref"}:
            return s
        if not rules.untyped and not s.keys() & {"type", "anyOf", "$ref", "enum", "const"}:
            raise _UnfitError  # Any: no type to send
        if s.get("type") == "object" or "properties" in s:
            self._object(s, notes)
        out: dict[str, Any] = {}
        for key, value in s.items():
            if key in rules.keywords:
                out[key] = self._children(key, value)
            elif key not in _ANNOTATIONS:
                _note(notes, key, value)
        if notes:
            said = out.get("description")
            ranked = sorted(notes, key=lambda note: _NOTE_ORDER.get(note[0], len(_NOTE_ORDER)))
            text = "; ".join(note for _, note in ranked)
            out["description"] = f"{said} ({text})" if said else text
        return out

    def _normalized(self, s: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        """References, unions, consts, enums and array forms as the dialect takes them."""
        rules = self.dialect
        notes: list[tuple[str, str]] = []
        while "$ref" in s and len(s) > 1 and not rules.ref_siblings:
            name = self._def_name(s["$ref"])
            if name in self.cyclic:  # written out, it would never end: wrap it instead
                if "anyOf" in s or "oneOf" in s:
                    raise _UnfitError
                s["anyOf"] = [{"$ref": s.pop("$ref")}]
            else:  # what the property says wins over what the definition says
                rest = {k: v for k, v in s.items() if k != "$ref"}
                s = {**copy.deepcopy(self.defs[name]), **rest}
        if "$ref" in s and not rules.ref_siblings:
            self._def_name(s["$ref"])  # a reference outside the schema cannot be followed
        all_of = s.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and "allOf" not in rules.keywords:
            s.pop("allOf")
            return self._normalized({**all_of[0], **s})
        if "oneOf" in s:  # one of, the other branches excluded by their tags: any of
            if "anyOf" in s:
                raise _UnfitError
            s["anyOf"] = s.pop("oneOf")
        if "allOf" in s and "allOf" not in rules.keywords:
            raise _UnfitError  # an intersection has no faithful form without allOf
        if "const" in s and not rules.const and "enum" not in s:
            s["enum"] = [s.pop("const")]
        elif "const" in s and _kind(s["const"]) not in rules.enum_kinds:
            _note(notes, "const", s.pop("const"))
        if isinstance(s.get("enum"), list):
            self._enum(s, notes)
        fmt = s.get("format")
        if fmt is not None and rules.formats is not None and fmt not in rules.formats:
            _note(notes, "format", s.pop("format"))
        pattern = s.get("pattern")
        if isinstance(pattern, str) and rules.bad_pattern and rules.bad_pattern.search(pattern):
            _note(notes, "pattern", s.pop("pattern"))
        least = s.get("minItems")
        if rules.min_items is not None and least is not None and least not in rules.min_items:
            _note(notes, "minItems", s.pop("minItems"))
        if "prefixItems" in s and "prefixItems" not in rules.keywords:
            self._tuple(s, notes)
        return s, notes

    def _enum(self, s: dict[str, Any], notes: list[tuple[str, str]]) -> None:
        """An enum stays when the dialect takes it; else one typed branch per kind of value.

        A dialect that wants every schema typed gets ``Literal["a", None]`` (pydantic's
        ``{"enum": ["a", null]}``) as ``anyOf`` a string enum and ``null``; a kind of value
        the dialect's enums cannot list (Gemini's booleans) keeps its type, and the values
        go to the description.
        """
        values: list[Any] = s["enum"]
        kinds = {_kind(v) for v in values}
        allowed = self.dialect.enum_kinds
        if kinds <= allowed and ("type" in s or self.dialect.untyped):
            return
        s.pop("enum")
        if kinds - allowed - {"null"}:  # values that cannot be listed: said in words
            if len(values) == 1:
                _note(notes, "const", values[0])
            else:
                _note(notes, "enum", values)
        groups: list[tuple[str, list[Any]]] = [
            ("string", [v for v in values if _kind(v) == "string"]),
            (
                "number" if "number" in kinds else "integer",
                [v for v in values if _kind(v) in ("integer", "number")],
            ),
            ("boolean", [v for v in values if _kind(v) == "boolean"]),
        ]
        branches: list[dict[str, Any]] = [
            {"type": kind, "enum": same} if kind in allowed else {"type": kind}
            for kind, same in groups
            if same
        ]
        if "null" in kinds:
            branches.append({"type": "null"})
        if len(branches) == 1 and s.get("type", branches[0]["type"]) == branches[0]["type"]:
            s.update(branches[0])
        elif branches:
            if "anyOf" in s:
                raise _UnfitError
            s.pop("type", None)
            s["anyOf"] = branches

    def _tuple(self, s: dict[str, Any], notes: list[tuple[str, str]]) -> None:
        """A tuple as an array whose items may be any of its item types, in order noted."""
        positions: list[Any] = s.pop("prefixItems")
        rest = s.pop("items", None)
        kinds = positions + ([rest] if isinstance(rest, dict) else [])
        unique = [k for i, k in enumerate(kinds) if k not in kinds[:i]]
        if unique:
            s["items"] = unique[0] if len(unique) == 1 else {"anyOf": unique}
        order = ", ".join(_brief(p) for p in positions)
        notes.append(("prefixItems", f"items in this order: {order}"))

    def _object(self, s: dict[str, Any], notes: list[tuple[str, str]]) -> None:
        """Close an object, and list its required properties, as the dialect demands."""
        rules = self.dialect
        properties = s.get("properties")
        if rules.closed:
            if properties is None:
                if s.get("additionalProperties") is not False:
                    raise _UnfitError  # an open dict: closing it would force {}
                properties = s["properties"] = {}
            if "patternProperties" in s:
                _note(notes, "patternProperties", s.pop("patternProperties"))
            s["additionalProperties"] = False
        if isinstance(properties, dict):
            if rules.all_required:
                s["required"] = list(properties)
            elif "required" in s:
                s["required"] = [name for name in s["required"] if name in properties]

    def _children(self, key: str, value: Any) -> Any:
        if key in _LIST and isinstance(value, list):
            return [self.node(item) for item in value]
        if key in _MAP and isinstance(value, dict):
            return {name: self.node(item) for name, item in value.items()}
        if key in _ONE and isinstance(value, (dict, bool)):
            return self.node(value)
        return copy.deepcopy(value)

    def _def_name(self, ref: Any) -> str:
        if isinstance(ref, str) and ref.startswith(_DEFS) and ref[len(_DEFS) :] in self.defs:
            return ref[len(_DEFS) :]
        raise _UnfitError  # a reference outside the schema's own definitions


def _note(notes: list[tuple[str, str]], keyword: str, value: Any) -> None:
    """Keep a constraint taken off the wire, to be written into the description."""
    notes.append((keyword, constraint_note(keyword, value)))


def _kind(value: Any) -> str:
    """The JSON kind of a value: string, integer, number, boolean, null, or other."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string" if isinstance(value, str) else "other"


def _brief(schema: Any) -> str:
    """A schema in a word or two, for a note: its type, or the name it refers to."""
    if isinstance(schema, dict):
        if isinstance(schema.get("$ref"), str):
            return str(schema["$ref"]).rpartition("/")[2]
        if "type" in schema:
            return str(schema["type"])
        if "const" in schema:
            return json.dumps(schema["const"], ensure_ascii=False)
    return "any"


def _refs(schema: Any, guarded: bool = False) -> Iterator[tuple[str, bool]]:
    """Each definition a schema refers to, and whether the way passes an optional property."""
    if isinstance(schema, list):
        for item in schema:
            yield from _refs(item, guarded)
        return
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_DEFS):
        yield ref[len(_DEFS) :], guarded
    listed = schema.get("required")
    required: list[Any] = listed if isinstance(listed, list) else []
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                yield from _refs(sub, guarded or name not in required)
        elif key in _MAP and isinstance(value, dict):
            for sub in value.values():
                yield from _refs(sub, guarded)
        elif key in _LIST or key in _ONE:
            yield from _refs(value, guarded)


def _cyclic(defs: Mapping[str, Any]) -> set[str]:
    """The definitions that refer, through others or directly, to themselves."""
    edges = {name: {target for target, _ in _refs(d)} for name, d in defs.items()}
    return {name for name in defs if name in _closure(edges, name)}


def _required_cycle(defs: Mapping[str, Any]) -> bool:
    """Whether some cycle of references passes only through required properties."""
    edges = {name: {t for t, guarded in _refs(d) if not guarded} for name, d in defs.items()}
    return any(name in _closure(edges, name) for name in defs)


def _closure(edges: Mapping[str, set[str]], start: str) -> set[str]:
    """Every definition reachable from ``start`` in one step or more."""
    seen: set[str] = set()
    todo = list(edges.get(start, ()))
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(edges.get(name, ()))
    return seen


def _reachable(root: Any, defs: Mapping[str, Any]) -> set[str]:
    """The definitions a converted schema still refers to, through each other too."""
    edges = {name: {target for target, _ in _refs(d)} for name, d in defs.items()}
    found: set[str] = set()
    for name, _ in _refs(root):
        found |= {name} | _closure(edges, name)
    return found
