"""The type model: what structio knows about a declared type, computed once and cached.

A `TypeInfo` holds everything that depends only on an (annotation, constraints) pair: the
name and output hint shown to the model, the JSON schema, and the pydantic validator with
the constraints applied. An abstract iterable (``Iterable[T]``, ``Iterator[T]``,
``Generator[T, ...]``, ``Sequence[T]``, ``Collection[T]``) is declared as the list it is read
as, once (`declared_type`): each item validated, the schema and the name a list's. Reading
text into a value lives in `structio.parsing`; writing a value into a prompt in
`structio.rendering`. pydantic is imported on first use, so
``import structio`` stays fast.
"""

from __future__ import annotations

import collections.abc
import datetime
import decimal
import enum
import functools
import json
import types
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from structio.reasoning import Reasoning
from structio.typemodel.text import type_name

if TYPE_CHECKING:
    from pydantic import TypeAdapter, ValidationError

__all__ = [
    "TypeInfo",
    "constraint_problem",
    "core_type",
    "declared_type",
    "list_item_type",
    "type_info",
    "union_args",
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

# Abstract iterables read as a list. Left to pydantic, ``Iterable[T]`` validates to a lazy,
# one-shot iterator whose bad item raises only when iterated: no ParseError, no re-ask, and
# a second pass finds nothing.
_READ_AS_LIST = frozenset(
    (
        collections.abc.Iterable,
        collections.abc.Iterator,
        collections.abc.Generator,
        collections.abc.Sequence,
        collections.abc.MutableSequence,
        collections.abc.Collection,
        collections.abc.Reversible,
    )
)
# Generic containers whose arguments may hold an abstract iterable.
_CONTAINERS = frozenset((list, tuple, set, frozenset, dict))

_NUMERIC_BASES = (int, float, decimal.Decimal, datetime.date, datetime.time, datetime.timedelta)
_SIZED_BASES = (str, bytes, bytearray, list, tuple, set, frozenset, dict)


class TypeInfo:
    """What structio knows about one (annotation, constraints) pair; built once and cached."""

    __slots__ = (
        "__dict__",
        "accepts_any_text",
        "annotation",
        "constraints",
        "enum",
        "is_str",
        "literal",
        "optional",
        "str_or_none",
    )

    def __init__(self, annotation: Any, constraints: tuple[tuple[str, Any], ...]) -> None:
        annotation = declared_type(annotation)
        self.annotation = annotation
        self.constraints = constraints
        # Reasoning is text written by the model, read and shown as a str.
        self.is_str = annotation is str or annotation is Reasoning
        self.enum: type[enum.Enum] | None = (
            annotation
            if isinstance(annotation, type) and issubclass(annotation, enum.Enum)
            else None
        )
        self.literal: tuple[Any, ...] | None = (
            typing.get_args(annotation) if typing.get_origin(annotation) is Literal else None
        )
        members = union_args(annotation)
        self.str_or_none = str in members and _NONE_TYPE in members
        # Any text is a valid value of such a type, so text alone never shows it was answered.
        self.accepts_any_text = self.is_str or str in members or annotation is typing.Any
        self.optional = annotation is typing.Any or _NONE_TYPE in members

    @functools.cached_property
    def name(self) -> str:
        """Display name, e.g. ``Literal['a', 'b']``."""
        return type_name(self.annotation)

    @functools.cached_property
    def hint(self) -> str:
        """The ``# note: the value you produce ...`` text for an output ('' for ``str``)."""
        a = self.annotation
        if self.is_str:
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
            loc = _location(err["loc"])
            msg = err["msg"]
            key = _CONSTRAINT_ERRORS.get(err["type"])
            if key and key in declared:
                msg += f" (constraint {key}={declared[key]!r})"
            reasons.append(f"{loc}: {msg}" if loc else msg)
        return f"expected {self.name}: " + "; ".join(reasons)


def _location(loc: tuple[int | str, ...]) -> str:
    """Where in a value an error is: ``[1].qty`` (item 1's ``qty``), ``tags[0]``."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def declared_type(annotation: Any) -> Any:
    """The annotation as structio reads it: every abstract iterable in it made a list.

    ``Iterable[T]``, ``Iterator[T]``, ``Generator[T, ...]``, ``Sequence[T]`` and
    ``Collection[T]`` (from `collections.abc` or `typing`, bare or nested in ``Optional``,
    ``Annotated``, unions and the builtin containers) become ``list[T]``; anything else is
    returned as it is (the same object when nothing changes).
    """
    if typing.get_origin(annotation) is None and annotation not in _READ_AS_LIST:
        return annotation  # a plain class: the usual case, and nothing to make a list
    try:
        declared = _cached_declared(annotation)
    except TypeError:  # unhashable metadata in an Annotated
        declared = _declared(annotation)
    # The cache answers an equal annotation with the object it saw first: give back the
    # caller's own where nothing changed.
    return annotation if declared == annotation else declared


@functools.lru_cache(maxsize=4096)
def _cached_declared(annotation: Any) -> Any:
    return _declared(annotation)


def _declared(annotation: Any) -> Any:
    generic: Any = list
    origin = typing.get_origin(annotation)
    if origin is None:
        return generic if annotation in _READ_AS_LIST else annotation
    args = typing.get_args(annotation)
    if origin in _READ_AS_LIST:
        return generic[_declared(args[0])] if args else generic
    if origin is typing.Annotated:
        inner = _declared(args[0])
        if inner is args[0]:
            return annotation
        annotated: Any = typing.Annotated
        params = (inner, *annotation.__metadata__)
        return annotated[params]
    if origin is typing.Union or origin is types.UnionType or origin in _CONTAINERS:
        changed = tuple(arg if arg is Ellipsis else _declared(arg) for arg in args)
        if all(new is old for new, old in zip(changed, args, strict=True)):
            return annotation
        if origin is types.UnionType or origin is typing.Union:
            union: Any = typing.Union
            return union[changed]
        container: Any = origin
        return container[changed]
    return annotation


def core_type(annotation: Any) -> Any:
    """The type a loose reading targets: ``Annotated`` and ``Optional`` removed."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    args = [a for a in union_args(annotation) if a is not _NONE_TYPE]
    if len(args) == 1:
        return core_type(args[0])
    return annotation


def list_item_type(annotation: Any) -> Any | None:
    """The item type of a list output (``list[T]``, ``Iterable[T]``, either optional), or None."""
    core = core_type(declared_type(annotation))
    if typing.get_origin(core) is not list:
        return None
    args = typing.get_args(core)
    return args[0] if args else Any


def union_args(annotation: Any) -> tuple[Any, ...]:
    """The members of a union annotation (``Optional`` included), or ``()``."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return typing.get_args(annotation)
    return ()


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
