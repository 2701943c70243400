"""Types and values: how they are shown to the model and read back from its text.

This module decides how a type is described to the model, how a value is written into a
prompt, and how text becomes a typed value: the one home of these rules, shared by every
adapter.

Everything that depends only on an annotation (its display name, the output hint, the JSON
schema, the pydantic validator) is computed once per (annotation, constraints) and cached.
pydantic and json-repair are imported on first use, so ``import structio`` stays fast.
"""

from __future__ import annotations

import ast
import datetime
import decimal
import enum
import functools
import json
import textwrap
import types
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from structio.adapters._readers import (
    NO_READING,
    bool_reading,
    json_region,
    label_forms,
    list_items,
    number_reading,
    python_call_reading,
    strip_fence,
)
from structio.formatting import as_formatting, has_own_format

if TYPE_CHECKING:
    from pydantic import TypeAdapter, ValidationError

__all__ = [
    "TypeInfo",
    "constraint_problem",
    "decode_text",
    "format_value",
    "input_text",
    "jsonable",
    "prompt_text",
    "type_info",
    "type_name",
]

_NONE_TYPE = type(None)

_HINT_PREFIX = "        # note: the value you produce "

# pydantic error types that correspond to a declared constraint, to name it in errors.
_CONSTRAINT_ERRORS: dict[str, str] = {
    "greater_than": "gt",
    "greater_than_equal": "ge",
    "less_than": "lt",
    "less_than_equal": "le",
    "string_too_short": "min_length",
    "too_short": "min_length",
    "string_too_long": "max_length",
    "too_long": "max_length",
    "multiple_of": "multiple_of",
    "finite_number": "allow_inf_nan",
}

_NUMERIC_BASES = (int, float, decimal.Decimal, datetime.date, datetime.time, datetime.timedelta)
_SIZED_BASES = (str, bytes, bytearray, list, tuple, set, frozenset, dict)


def type_name(annotation: Any) -> str:
    """The type's name as shown to the model: ``list[str]``, ``Union[str, NoneType]``..."""
    if annotation is _NONE_TYPE or annotation is None:
        return "NoneType"
    if annotation is Ellipsis:
        return "..."
    origin = typing.get_origin(annotation)
    if origin is None:
        if isinstance(annotation, type):
            return annotation.__name__
        name = getattr(annotation, "__name__", None) or getattr(annotation, "_name", None)
        return name if isinstance(name, str) else str(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        return f"Literal[{', '.join(repr(a) for a in args)}]"
    if origin is typing.Union or origin is types.UnionType:
        return f"Union[{', '.join(type_name(a) for a in args)}]"
    if origin is typing.Annotated:
        return type_name(args[0])
    name = getattr(origin, "__name__", None) or getattr(origin, "_name", None) or str(origin)
    if not args:
        return str(name)
    return f"{name}[{', '.join(type_name(a) for a in args)}]"


class TypeInfo:
    """What structio knows about one (annotation, constraints) pair; built once and cached."""

    __slots__ = (
        "__dict__",
        "annotation",
        "constraints",
        "enum",
        "is_str",
        "literal",
        "optional",
        "str_or_none",
    )

    def __init__(self, annotation: Any, constraints: tuple[tuple[str, Any], ...]) -> None:
        self.annotation = annotation
        self.constraints = constraints
        self.is_str = annotation is str
        self.enum: type[enum.Enum] | None = (
            annotation
            if isinstance(annotation, type) and issubclass(annotation, enum.Enum)
            else None
        )
        self.literal: tuple[Any, ...] | None = (
            typing.get_args(annotation) if typing.get_origin(annotation) is Literal else None
        )
        union_args = _union_args(annotation)
        self.str_or_none = str in union_args and _NONE_TYPE in union_args
        self.optional = annotation is typing.Any or _NONE_TYPE in union_args

    @functools.cached_property
    def name(self) -> str:
        """Display name, e.g. ``Literal['a', 'b']``."""
        return type_name(self.annotation)

    @functools.cached_property
    def hint(self) -> str:
        """The ``# note: the value you produce ...`` text for an output ('' for ``str``)."""
        a = self.annotation
        if a is str:
            return ""
        if a is bool:
            return "must be True or False"
        if a is int or a is float:
            return f"must be a single {a.__name__} value"
        if self.enum is not None:
            return "must be one of: " + "; ".join(str(m.value) for m in self.enum)
        if self.literal is not None:
            members = "; ".join(str(v) for v in self.literal)
            return f"must exactly match (no extra characters) one of: {members}"
        return "must adhere to the JSON schema: " + self.schema_text

    def placeholder(self, name: str) -> str:
        """``{name}`` followed by the output hint, as in the system message's structure."""
        hint = self.hint
        return f"{{{name}}}{_HINT_PREFIX}{hint}" if hint else f"{{{name}}}"

    @functools.cached_property
    def schema_text(self) -> str:
        """Pydantic's JSON schema, ``type`` first and the other keys sorted, on one line."""
        from pydantic import TypeAdapter

        schema = TypeAdapter(self.annotation).json_schema()
        return json.dumps(_reorder_schema(schema), ensure_ascii=False)

    @functools.cached_property
    def validator(self) -> TypeAdapter[Any]:
        """A pydantic TypeAdapter for the annotation with its constraints applied."""
        from pydantic import Field, TypeAdapter

        if self.constraints:
            constrained: Any = typing.Annotated[self.annotation, Field(**dict(self.constraints))]
            return TypeAdapter(constrained)
        return TypeAdapter(self.annotation)

    def validate(self, value: Any) -> Any:
        """Validate a Python value (lax mode); raises ValueError with a readable reason."""
        from pydantic import ValidationError

        try:
            return self.validator.validate_python(value)
        except ValidationError as exc:
            raise ValueError(self._reason(exc)) from None

    def _reason(self, exc: ValidationError) -> str:
        declared = dict(self.constraints)
        reasons = []
        for err in exc.errors(include_url=False):
            loc = ".".join(str(p) for p in err["loc"])
            msg = err["msg"]
            key = _CONSTRAINT_ERRORS.get(err["type"])
            if key and key in declared:
                msg += f" (constraint {key}={declared[key]!r})"
            reasons.append(f"{loc}: {msg}" if loc else msg)
        return f"expected {self.name}: " + "; ".join(reasons)

    def parse_text(self, text: str) -> Any:
        """Turn a section's text into a typed value, or raise ValueError saying why."""
        if self.is_str:
            return self.validate(text) if self.constraints else text
        stripped = text.strip()
        if self.enum is not None:
            return self._parse_enum(self.enum, stripped)
        if self.literal is not None:
            if stripped in self.literal:
                return self.validate(stripped)
            stripped = _unwrap_literal(stripped)
            if stripped in self.literal:
                return self.validate(stripped)
        if self.str_or_none:
            return self.validate(text)
        if not stripped:
            if self.optional:
                return None  # an empty section of an optional field: no value was given
            raise ValueError(f"expected {self.name}, found an empty value")
        candidate = decode_text(stripped)
        try:
            return self.validate(candidate)
        except ValueError:
            lenient = self._lenient(stripped)
            if lenient is NO_READING:
                raise
            return self.validate(lenient)

    def _lenient(self, text: str) -> Any:
        """The one reading of loosely written text for this type, or `NO_READING`."""
        core = _core_type(self.annotation)
        if core is bool:
            return bool_reading(text)
        if core in (int, float, decimal.Decimal):
            return number_reading(text)
        if isinstance(core, type) and issubclass(core, enum.Enum):
            return _match_label(text, [(m, [m.value, m.name]) for m in core])
        if typing.get_origin(core) is Literal:
            return _match_label(text, [(v, [v]) for v in typing.get_args(core)])
        if typing.get_origin(core) in (list, set, frozenset, tuple):
            return list_items(text)
        return NO_READING

    def parse_json_value(self, value: Any) -> Any:
        """Turn a value decoded from JSON into a typed value, or raise ValueError."""
        if isinstance(value, str):
            return self.parse_text(value)
        if self.is_str:
            if isinstance(value, (dict, list)):
                value = json.dumps(value, ensure_ascii=False)
            elif isinstance(value, (int, float)):  # bool included: JSON true -> "True"
                value = str(value)
        return self.validate(value)

    @staticmethod
    def _parse_enum(enum_cls: type[enum.Enum], text: str) -> Any:
        for member in enum_cls:
            if member.value == text or str(member.value) == text:
                return member
        for member in enum_cls:
            if member.name == text:
                return member
        member = _match_label(text, [(m, [m.value, m.name]) for m in enum_cls])
        if member is not NO_READING:
            return member
        allowed = "; ".join(str(m.value) for m in enum_cls)
        raise ValueError(
            f"{text!r} is not a value or name of {enum_cls.__name__} (one of: {allowed})"
        )


def _core_type(annotation: Any) -> Any:
    """The type a loose reading targets: ``Annotated`` and ``Optional`` removed."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    args = [a for a in _union_args(annotation) if a is not _NONE_TYPE]
    if len(args) == 1:
        return _core_type(args[0])
    return annotation


def _match_label(text: str, choices: list[tuple[Any, list[Any]]]) -> Any:
    """The one choice a loosely written label names: exact first, then ignoring case."""
    for form in label_forms(text):
        exact = [value for value, names in choices if any(str(n) == form for n in names)]
        if len(exact) == 1:
            return exact[0]
        folded = [
            value
            for value, names in choices
            if any(str(n).casefold() == form.casefold() for n in names)
        ]
        if len(folded) == 1:
            return folded[0]
    return NO_READING


def _union_args(annotation: Any) -> tuple[Any, ...]:
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return typing.get_args(annotation)
    return ()


def _unwrap_literal(text: str) -> str:
    for opener in ("Literal[", "str["):
        if text.startswith(opener) and text.endswith("]"):
            text = text[len(opener) : -1].strip()
            break
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return text


@functools.lru_cache(maxsize=4096)
def _cached_info(annotation: Any, constraints: tuple[tuple[str, Any], ...]) -> TypeInfo:
    return TypeInfo(annotation, constraints)


def type_info(annotation: Any, constraints: tuple[tuple[str, Any], ...] = ()) -> TypeInfo:
    """Return the (cached) TypeInfo of an annotation with its constraints."""
    try:
        return _cached_info(annotation, constraints)
    except TypeError:  # an unhashable annotation (e.g. Annotated with unhashable metadata)
        return TypeInfo(annotation, constraints)


def _reorder_schema(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _reorder_schema(node[k]) for k in sorted(node, key=lambda k: (k != "type", k))}
    if isinstance(node, list):
        return [_reorder_schema(item) for item in node]
    return node


_LITERAL_ERRORS = (ValueError, SyntaxError, TypeError, MemoryError, RecursionError)


def decode_text(text: str) -> Any:
    """Read JSON-ish text: JSON, a Python literal or constructor call, or repairable JSON.

    Text without brackets that is neither JSON nor a Python literal is returned as it is
    (pydantic reads ``yes`` or `` 42 `` itself). JSON that is cut off (an unclosed string,
    list or object) is refused rather than completed: its last value may be incomplete.

    Raises:
        ValueError: The JSON in the text is cut off.
    """
    try:
        return json.loads(text, strict=False)
    except ValueError:
        pass
    try:
        # Python reprs (None, True, single quotes, tuples) keep their exact meaning this way.
        return ast.literal_eval(text)
    except _LITERAL_ERRORS:
        pass
    call = python_call_reading(text)
    if call is not NO_READING:
        return call
    region = json_region(strip_fence(text))
    if region is None:
        return text
    inner, cut_off = region
    if cut_off:
        raise ValueError(f"the value is cut off (an unclosed {inner[0]!r}); it may be incomplete")
    for decode in (_json_lenient, ast.literal_eval, _json_repaired):
        try:
            return decode(inner)
        except _LITERAL_ERRORS:
            continue
    return text


def _json_lenient(text: str) -> Any:
    return json.loads(text, strict=False)


def _json_repaired(text: str) -> Any:
    import json_repair

    repaired = json_repair.loads(text)
    if repaired == "" and text.strip():
        raise ValueError("json-repair found no JSON")
    return repaired


def _is_native(value: Any) -> bool:
    t = type(value)
    if t is str or t is int or t is float or t is bool or value is None:
        return True
    if t is list or t is tuple:
        return all(_is_native(v) for v in value)
    if t is dict:
        return all(type(k) is str and _is_native(v) for k, v in value.items())
    return False


def jsonable(value: Any) -> Any:
    """Convert a value to JSON-compatible data (models, enums, dates... via pydantic)."""
    if _is_native(value):
        return value
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, by_alias=False, fallback=str)


# json.dumps with a non-default option builds an encoder per call; this one is reused.
_ENCODER = json.JSONEncoder(ensure_ascii=False)


def prompt_text(value: Any) -> str:
    """A value as prompt text: strings verbatim, scalars via ``str``, the rest as JSON."""
    t = type(value)
    if t is str:
        return typing.cast(str, value)
    if value is None or t is bool or t is int or t is float:
        return str(value)
    data = jsonable(value)
    if isinstance(data, (dict, list, tuple)):
        return _ENCODER.encode(data)
    return str(data)


def input_text(value: Any, *, str_field: bool, as_class: type | None = None) -> str:
    """An input's text, honouring formatting classes and values' own ``__format__``.

    Such values render with their ``__format__`` (a plain list or dict given to a field
    typed with a formatting class becomes one); anything else renders as `format_value`.
    """
    if as_class is not None:
        value = as_formatting(value, as_class)
    t = type(value)
    plain = t is str or t is int or t is float or t is bool or value is None
    if not plain and has_own_format(value):
        return format(value, "")
    return format_value(value, str_field=str_field)


def format_value(value: Any, *, str_field: bool) -> str:
    """Render a field's value; a list given to a ``str`` field becomes a numbered «» list."""
    if str_field and isinstance(value, list):
        return _blob_list(value)
    return prompt_text(value)


def _blob(text: str) -> str:
    if "\n" not in text and "«" not in text and "»" not in text:
        return f"«{text}»"
    return "«««\n" + textwrap.indent(text, "    ", lambda _line: True) + "\n»»»"


def _blob_list(items: list[Any]) -> str:
    if not items:
        return "N/A"
    if len(items) == 1:
        return _blob(prompt_text(items[0]))
    return "\n".join(f"[{i}] {_blob(prompt_text(item))}" for i, item in enumerate(items, 1))


def constraint_problem(annotation: Any, constraints: Mapping[str, Any]) -> str | None:
    """Say why constraints cannot apply to a plain annotation, or ``None`` if they can.

    Only plain classes and simple generics are checked; unions and other constructs are
    left to pydantic at validation time.
    """
    target = typing.get_origin(annotation) or annotation
    if not isinstance(target, type):
        return None
    numeric = [
        k for k in constraints if k in ("gt", "ge", "lt", "le", "multiple_of", "allow_inf_nan")
    ]
    sized = [k for k in constraints if k in ("min_length", "max_length")]
    if numeric and not issubclass(target, _NUMERIC_BASES):
        return f"{', '.join(numeric)} need a number (or date), not {type_name(annotation)}"
    if sized and not issubclass(target, _SIZED_BASES):
        return f"{', '.join(sized)} need a string or collection, not {type_name(annotation)}"
    return None
