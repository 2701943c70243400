"""Types in a short TypeScript-like notation, for prompts that ask for JSON.

A full JSON schema spends most of its tokens on syntax (``"type":``, ``"properties":``,
``"title":``, ``"$defs"``). This notation says the same in a few words, as TypeScript and
BAML write types::

    {
      name: string,  // Full name, as printed
      age: int,  // 0 to 130
      country: "US" | "UK" | "FR",
      addresses: { street: string, zip?: string | null }[],
      scores: map<string, float>
    }

- ``string``, ``int``, ``float``, ``bool``, ``null``, ``any``; a ``Literal`` or an ``Enum``
  is the union of its JSON values (``"US" | "UK"``); ``Optional[T]`` is ``T | null``;
- ``list[T]`` and ``set[T]`` are ``T[]``, a tuple ``[A, B]``, ``dict[str, V]``
  ``map<string, V>``;
- a model (pydantic, dataclass, ``TypedDict``) is an object literal, inline where it is used.
  A model used in more than one place, or one that contains itself, is written once after
  the type as ``Name = { ... }`` and named where it is used: shorter, and the only finite
  way to write a recursive model;
- ``key?:`` marks a field that may be left out (it has a default);
- every declared constraint and description stays visible, as a ``//`` comment on its
  field's line: ``0 to 130`` (ge and le), ``> 0``, ``1 to 200 chars``, ``at least 1
  item``, ``multiple of 5``, ``pattern ^[A-Z]{3}$``, ``ISO 8601 date``, a model's or an
  enum's docstring. A constraint inside a list or map says so (``each >= 0``).

The notation is read from the JSON schema pydantic makes of the type, so it covers every
type pydantic validates, and field names are the aliases a JSON answer must use. A type
pydantic has no schema for is written by its Python name. Pure and cached, like
`structio.typemodel.info.type_info`.
"""

from __future__ import annotations

import functools
import json
import re
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from structio.typemodel.info import core_type, declared_type
from structio.typemodel.text import type_name

__all__ = ["CompactField", "compact_fields", "compact_type"]

Constraints = tuple[tuple[str, Any], ...]

CompactField = tuple[str, Any, Constraints, "str | None"]
"""One field of an object: (name, annotation, constraints, description)."""

_INDENT = "  "
# An object whose fields carry no comment is written on one line up to this width.
_ONE_LINE_WIDTH = 80
_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_NOT_NAME = re.compile(r"[^A-Za-z0-9_]")
_FORMATS = {
    "date-time": "ISO 8601 date-time",
    "date": "ISO 8601 date",
    "time": "ISO 8601 time",
    "duration": "ISO 8601 duration",
    "binary": "",  # bytes: read from the string as it is, nothing to say
}
# A signature field's constraints as the schema keywords pydantic writes for them, so that
# they are worded as the constraints inside a model are.
_CONSTRAINT_KEYWORDS = {
    "gt": "exclusiveMinimum",
    "ge": "minimum",
    "lt": "exclusiveMaximum",
    "le": "maximum",
    "multiple_of": "multipleOf",
    "min_length": "minLength",
    "max_length": "maxLength",
}


def compact_type(annotation: Any, constraints: Constraints = ()) -> str:
    """An annotation in the compact notation, with its constraints as a ``//`` comment.

    Models used twice or recursively follow the type as ``Name = { ... }`` lines.

    Args:
        annotation: The declared type.
        constraints: Field constraints, ``(("ge", 0), ("le", 130))``.

    Example:
        >>> compact_type(list[int] | None)
        'int[] | null'
        >>> compact_type(int, (("ge", 0), ("le", 130)))
        'int  // 0 to 130'
    """
    annotation = declared_type(annotation)  # an abstract iterable is shown as the list it is
    try:
        return _cached_type(annotation, constraints)
    except TypeError:  # an unhashable annotation (Annotated with unhashable metadata)
        return _render_type(annotation, constraints)


def compact_fields(fields: Sequence[CompactField]) -> str:
    """An object of these fields in the compact notation, every field required.

    Each field's description and constraints are a ``//`` comment on its line; models used
    twice or recursively follow the object as ``Name = { ... }`` lines.

    Args:
        fields: ``(name, annotation, constraints, description)`` for each field, in order.

    Example:
        >>> print(compact_fields([("age", int, (("ge", 0),), "In years.")]))
        {
          age: int  // In years. >= 0
        }
    """
    key = tuple(fields)
    try:
        return _cached_fields(key)
    except TypeError:
        return _render_fields(key)


@functools.lru_cache(maxsize=1024)
def _cached_type(annotation: Any, constraints: Constraints) -> str:
    return _render_type(annotation, constraints)


@functools.lru_cache(maxsize=1024)
def _cached_fields(fields: tuple[CompactField, ...]) -> str:
    return _render_fields(fields)


def _render_type(annotation: Any, constraints: Constraints) -> str:
    [schema], defs = _schemas([annotation])
    renderer = _Renderer(defs, [schema])
    shown = renderer.shown(schema, 0, annotation)
    notes = [*shown.notes, *_constraint_notes(annotation, constraints)]
    text = _commented(shown.text, _comment([], shown.docs, notes), "")
    return renderer.with_definitions(text)


def _render_fields(fields: tuple[CompactField, ...]) -> str:
    schemas, defs = _schemas([annotation for _, annotation, _, _ in fields])
    renderer = _Renderer(defs, schemas)
    members = []
    for (name, annotation, constraints, desc), schema in zip(fields, schemas, strict=True):
        shown = renderer.shown(schema, 1, annotation)
        notes = [*shown.notes, *_constraint_notes(annotation, constraints)]
        members.append(_Member(name, shown, _comment(_lines(desc), shown.docs, notes), False))
    return renderer.with_definitions(_object_text(members, 0))


# -- schemas ---------------------------------------------------------------------------------


def _schemas(annotations: list[Any]) -> tuple[list[Any], dict[str, Any]]:
    """Each type's JSON schema (``None``: pydantic has none), and their shared definitions.

    All schemas share one set of definitions, so two models of the same name in different
    fields get different names, as pydantic names them.
    """
    from pydantic import TypeAdapter

    adapters: dict[int, TypeAdapter[Any]] = {}
    for index, annotation in enumerate(annotations):
        try:
            adapter: TypeAdapter[Any] = TypeAdapter(annotation)
            adapter.json_schema()
        except Exception:  # noqa: S112 - no schema: the type is shown by its name
            continue
        adapters[index] = adapter
    by_key, top = TypeAdapter.json_schemas([(i, "validation", a) for i, a in adapters.items()])
    schemas = [by_key.get((i, "validation")) for i in range(len(annotations))]
    return schemas, dict(top.get("$defs", {}))


def _constraint_notes(annotation: Any, constraints: Constraints) -> list[str]:
    """A field's declared constraints as notes, in the words of the schema's own."""
    declared = dict(constraints)
    pseudo = {_CONSTRAINT_KEYWORDS[k]: v for k, v in declared.items() if k in _CONSTRAINT_KEYWORDS}
    notes = _number_notes(pseudo)
    core = typing.get_origin(core_type(annotation)) or core_type(annotation)
    if core is str:
        unit, plural = "char", None
    elif isinstance(core, type) and issubclass(core, Mapping):
        unit, plural = "entry", "entries"
    else:
        unit, plural = "item", None
    notes += _length_notes(pseudo.get("minLength"), pseudo.get("maxLength"), unit, plural)
    if declared.get("allow_inf_nan") is False:
        notes.append("finite")
    return notes


# -- rendering -------------------------------------------------------------------------------


@dataclass
class _Shown:
    """A type as text, with what its field's comment should say about it.

    ``text``'s lines after the first are indented for where it stands; ``docs`` are the
    descriptions of an inline model or enum, ``notes`` its constraints.
    """

    text: str
    notes: list[str] = field(default_factory=list)
    docs: list[str] = field(default_factory=list)
    union: bool = False


@dataclass
class _Member:
    key: str
    shown: _Shown
    comment: list[str]
    optional: bool


class _Renderer:
    """Writes schemas in the notation, naming the models used twice or recursively."""

    def __init__(self, defs: dict[str, Any], roots: list[Any]) -> None:
        self.defs = defs
        self.names: dict[str, str] = {}
        self.order: list[str] = []
        self._roots = roots
        self._parents: dict[str, list[str]] = {key: [] for key in defs}
        self._refs = {key: _refs_in(schema) for key, schema in defs.items()}
        for key, refs in self._refs.items():
            for ref in refs:
                if ref in self._parents:
                    self._parents[ref].append(key)
        self._cyclic = {key for key in defs if self._reaches(key, key)}
        self._occurrences: dict[str, int] = {}
        self._root_refs = [ref for root in roots for ref in _refs_in(root)]
        taken: set[str] = set()
        for key in defs:
            if self._named(key):
                name = _NOT_NAME.sub("_", key) or "Model"
                while name in taken:
                    name += "_"
                taken.add(name)
                self.names[key] = name

    def _reaches(self, start: str, goal: str) -> bool:
        seen: set[str] = set()
        pending = list(self._refs.get(start, ()))
        while pending:
            key = pending.pop()
            if key == goal:
                return True
            if key not in seen and key in self._refs:
                seen.add(key)
                pending.extend(self._refs[key])
        return False

    def _named(self, key: str) -> bool:
        """Whether a model is written once by name: it contains itself, or is used twice."""
        if key in self._cyclic:
            return True
        return "properties" in self.defs[key] and self._count(key) >= 2

    def _count(self, key: str) -> int:
        """How often a definition would be written out if every non-named one were inlined."""
        found = self._occurrences.get(key)
        if found is None:
            found = self._root_refs.count(key)
            for parent in set(self._parents[key]):
                times = self._refs[parent].count(key)
                found += times * (1 if self._named(parent) else self._count(parent))
            self._occurrences[key] = found
        return found

    def with_definitions(self, text: str) -> str:
        """The text, then ``Name = { ... }`` for each named model it (or another) uses."""
        lines = [text]
        index = 0
        while index < len(self.order):  # a definition may name further models
            key = self.order[index]
            index += 1
            schema = self.defs[key]
            shown = self.shown(schema, 0, None)
            comment = _comment(_lines(schema.get("description")), [], shown.notes)
            lines.append(_commented(f"{self.names[key]} = {shown.text}", comment, ""))
        return "\n".join(lines)

    def shown(self, schema: Any, indent: int, annotation: Any) -> _Shown:
        """A schema as text at this indentation (``annotation`` names one without a schema)."""
        if schema is None:
            return _Shown(type_name(annotation))
        if not isinstance(schema, dict) or not schema:
            return _Shown("any")
        if "$ref" in schema:
            key = schema["$ref"].rsplit("/", 1)[-1]
            if key not in self.defs:
                return _Shown("any")
            if key in self.names:
                if key not in self.order:
                    self.order.append(key)
                return _Shown(self.names[key])
            target = self.defs[key]
            inner = self.shown(target, indent, None)
            return _Shown(
                inner.text,
                inner.notes,
                [*_lines(target.get("description")), *inner.docs],
                inner.union,
            )
        for keyword in ("anyOf", "oneOf"):
            if keyword in schema:
                return self._union([self.shown(arm, indent, None) for arm in schema[keyword]])
        if "allOf" in schema and len(schema["allOf"]) == 1:
            return self.shown(schema["allOf"][0], indent, None)
        if "const" in schema:
            return _Shown(_literal(schema["const"]))
        if "enum" in schema:
            values = [_literal(value) for value in schema["enum"]]
            return _Shown(" | ".join(values), union=len(values) > 1)
        kind = schema.get("type")
        if isinstance(kind, list):
            arms = [self.shown({**schema, "type": one}, indent, None) for one in kind]
            return self._union(arms)
        if kind == "string":
            notes = _length_notes(schema.get("minLength"), schema.get("maxLength"), "char")
            if "pattern" in schema:
                notes.append(f"pattern {schema['pattern']}")
            described = _FORMATS.get(schema.get("format", ""), schema.get("format", ""))
            if described:
                notes.append(described)
            return _Shown("string", notes + _examples(schema))
        if kind in ("integer", "number"):
            text = "int" if kind == "integer" else "float"
            return _Shown(text, _number_notes(schema) + _examples(schema))
        if kind == "boolean":
            return _Shown("bool")
        if kind == "null":
            return _Shown("null")
        if kind == "array":
            return self._array(schema, indent)
        if kind == "object" or "properties" in schema:
            return self._object(schema, indent)
        return _Shown("any")

    def _union(self, arms: list[_Shown]) -> _Shown:
        texts: list[str] = []
        nullable = False
        for arm in arms:
            if arm.text == "null":
                nullable = True
            elif arm.text not in texts:
                texts.append(arm.text)
        real = [arm for arm in arms if arm.text != "null"]
        notes: list[str] = []
        docs: list[str] = []
        for arm in real:
            docs.extend(doc for doc in arm.docs if doc not in docs)
            if len(real) == 1 or "\n" in arm.text:
                notes.extend(arm.notes)
            else:  # say which member a constraint is about
                notes.extend(f"{arm.text} {note}" for note in arm.notes)
        text = " | ".join([*texts, "null"] if nullable else texts) or "null"
        return _Shown(text, notes, docs, union=len(texts) + nullable > 1)

    def _array(self, schema: dict[str, Any], indent: int) -> _Shown:
        notes: list[str] = []
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list):
            members = [self.shown(item, indent, None) for item in prefix]
            texts = [member.text for member in members]
            rest = schema.get("items")
            if isinstance(rest, dict):  # tuple[int, *tuple[str, ...]]: more items may follow
                texts.append(f"...{_wrapped(self.shown(rest, indent, None))}[]")
            for number, member in enumerate(members, 1):
                notes.extend(f"item {number} {note}" for note in member.notes)
            return _Shown(f"[{', '.join(texts)}]", notes)
        items = self.shown(schema.get("items"), indent, None) if "items" in schema else None
        text = f"{_wrapped(items)}[]" if items is not None else "any[]"
        if items is not None:
            notes.extend(f"each {note}" for note in items.notes)
        notes += _length_notes(schema.get("minItems"), schema.get("maxItems"), "item")
        if schema.get("uniqueItems"):
            notes.append("unique")
        return _Shown(text, notes, items.docs if items is not None else [])

    def _object(self, schema: dict[str, Any], indent: int) -> _Shown:
        properties = schema.get("properties")
        notes = _length_notes(
            schema.get("minProperties"), schema.get("maxProperties"), "entry", "entries"
        )
        if isinstance(properties, dict):
            required = set(schema.get("required", ()))
            members = []
            for key, prop in properties.items():
                shown = self.shown(prop, indent + 1, None)
                desc = _lines(prop.get("description")) if isinstance(prop, dict) else []
                comment = _comment(desc, shown.docs, shown.notes)
                members.append(_Member(key, shown, comment, key not in required))
            return _Shown(_object_text(members, indent), notes)
        values = schema.get("additionalProperties")
        value = self.shown(values, indent, None) if isinstance(values, dict) else _Shown("any")
        names = schema.get("propertyNames")
        key = self.shown(names, indent, None).text if isinstance(names, dict) else "string"
        notes.extend(f"each value {note}" for note in value.notes)
        return _Shown(f"map<{key}, {value.text}>", notes, value.docs)


def _object_text(members: list[_Member], indent: int) -> str:
    """An object literal: on one line when short and without comments, else one per line."""
    if not members:
        return "{}"
    heads = [f"{_key(m.key)}{'?' if m.optional else ''}: {m.shown.text}" for m in members]
    if not any(m.comment for m in members) and not any("\n" in head for head in heads):
        line = "{ " + ", ".join(heads) + " }"
        if len(_INDENT * indent) + len(line) <= _ONE_LINE_WIDTH:
            return line
    inner = _INDENT * (indent + 1)
    lines = ["{"]
    for number, (member, head) in enumerate(zip(members, heads, strict=True), 1):
        comma = "," if number < len(members) else ""
        lines.append(_commented(f"{inner}{head}{comma}", member.comment, inner))
    lines.append(f"{_INDENT * indent}}}")
    return "\n".join(lines)


def _commented(text: str, comment: list[str], indent: str) -> str:
    """``text`` with its comment: after its first line, or above it when it has many lines.

    The comma that ends a field's last line stays there; the comment goes on the first line,
    where the field's name is.
    """
    if not comment:
        return text
    if len(comment) > 1:
        above = "".join(f"{indent}// {line}\n" for line in comment)
        return above + text
    first, newline, rest = text.partition("\n")
    return f"{first}  // {comment[0]}{newline}{rest}"


def _comment(descriptions: list[str], docs: list[str], notes: list[str]) -> list[str]:
    """A field's comment: its description, its type's description, then the constraints.

    One line when every part is one line, else one line per part.
    """
    parts = [*descriptions, *(doc for doc in docs if doc not in descriptions)]
    if notes:
        parts.append(", ".join(notes))
    if len(descriptions) > 1 or len(docs) > 1:
        return parts
    joined = ""
    for part in parts:
        if joined:
            joined += " " if joined[-1] in ".!?:;" else "; "
        joined += part
    return [joined] if joined else []


def _lines(text: Any) -> list[str]:
    """A description's non-empty lines, stripped (a comment ends at the end of its line)."""
    if not isinstance(text, str):
        return []
    return [line.strip() for line in text.strip().splitlines() if line.strip()]


def _key(name: str) -> str:
    return name if _IDENTIFIER.match(name) else json.dumps(name, ensure_ascii=False)


def _wrapped(shown: _Shown) -> str:
    """A type as the operand of ``[]``: a union in parentheses."""
    return f"({shown.text})" if shown.union else shown.text


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _number(value: Any) -> str:
    return str(value) if not isinstance(value, float) or not value.is_integer() else str(int(value))


def _number_notes(schema: Mapping[str, Any]) -> list[str]:
    low, high = schema.get("minimum"), schema.get("maximum")
    above, below = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    notes: list[str] = []
    if low is not None and high is not None:
        notes.append(f"{_number(low)} to {_number(high)}")
    else:
        if low is not None:
            notes.append(f">= {_number(low)}")
        if high is not None:
            notes.append(f"<= {_number(high)}")
    if above is not None:
        notes.append(f"> {_number(above)}")
    if below is not None:
        notes.append(f"< {_number(below)}")
    if schema.get("multipleOf") is not None:
        notes.append(f"multiple of {_number(schema['multipleOf'])}")
    return notes


def _length_notes(low: Any, high: Any, unit: str, plural: str | None = None) -> list[str]:
    """``1 to 200 chars``, ``at least 1 item``, ``exactly 3 items``."""
    many = plural or f"{unit}s"

    def units(count: Any) -> str:
        return unit if count == 1 else many

    if low is not None and high is not None:
        if low == high:
            return [f"exactly {low} {units(low)}"]
        return [f"{low} to {high} {many}"]
    if low is not None and low > 0:
        return [f"at least {low} {units(low)}"]
    if high is not None:
        return [f"at most {high} {units(high)}"]
    return []


def _examples(schema: Mapping[str, Any]) -> list[str]:
    examples = schema.get("examples")
    if not isinstance(examples, list) or not examples:
        return []
    return ["e.g. " + ", ".join(_literal(example) for example in examples[:3])]


def _refs_in(schema: Any) -> list[str]:
    """The definitions a schema refers to, once per reference."""
    found: list[str] = []
    pending = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                found.append(ref.rsplit("/", 1)[-1])
            pending.extend(value for key, value in node.items() if key != "$defs")
        elif isinstance(node, list):
            pending.extend(node)
    return found
