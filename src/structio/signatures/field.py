"""Signature fields: what `InputField()` and `OutputField()` declare."""

from __future__ import annotations

import string
import types
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from structio.typemodel.info import declared_type

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "MISSING",
    "Constraints",
    "InputField",
    "OutputField",
    "SignatureField",
    "infer_prefix",
]


class _Missing:
    """Sentinel type for "no default declared"."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __reduce__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""Marks a field without a default (distinct from a default of ``None``)."""

# Order and wording of the constraint labels shown to the model (DSPy's wire format).
_CONSTRAINT_LABELS: dict[str, str] = {
    "gt": "greater than",
    "ge": "greater than or equal to",
    "lt": "less than",
    "le": "less than or equal to",
    "min_length": "minimum length",
    "max_length": "maximum length",
    "multiple_of": "a multiple of the given number",
    "allow_inf_nan": "allow 'inf', '-inf', 'nan' values",
}

FieldKind = Literal["input", "output"]

_UPPER = frozenset(string.ascii_uppercase)
_LOWER = frozenset(string.ascii_lowercase)
_LETTERS = _UPPER | _LOWER
_LOWER_OR_DIGIT = _LOWER | frozenset(string.digits)


def infer_prefix(name: str) -> str:
    """The label DSPy derives from a field name, as DSPy 3.4.1's ``infer_prefix`` does.

    Words are split at underscores, before a capitalised word (``someName``), between a
    lower-case letter or digit and a capital (``parseHTML``), and between letters and
    digits (``text2number``). Each word is then capitalised, except words all in capitals,
    which are kept (acronyms). Only ASCII letters take part in the splits, as in DSPy.

    Example:
        >>> [infer_prefix(n) for n in ("question", "some_name", "HTMLParser", "text2number")]
        ['Question', 'Some Name', 'HTML Parser', 'Text 2 Number']

    Args:
        name: A field name (any string is accepted).

    Returns:
        The words joined by spaces, without the colon that DSPy's field prefix adds.
    """
    # First, a capitalised ASCII word starts a new word after whatever character precedes
    # it (but a line break). The word, once split off, cannot also be what precedes the
    # next one: DSPy's scan resumes after it.
    pieces: list[str] = []
    index, size = 0, len(name)
    while index < size:
        char = name[index]
        if (
            index + 2 < size
            and char != "\n"
            and name[index + 1] in _UPPER
            and name[index + 2] in _LOWER
        ):
            end = index + 3
            while end < size and name[end] in _LOWER:
                end += 1
            pieces.append(f"{char}_{name[index + 1 : end]}")
            index = end
        else:
            pieces.append(char)
            index += 1
    spaced = "".join(pieces)
    # Then the boundaries between two characters: lower or digit before a capital, a
    # letter next to a decimal digit (any script's digits, as a regular expression's \d).
    out: list[str] = []
    previous = ""
    for char in spaced:
        if previous and (
            (previous in _LOWER_OR_DIGIT and char in _UPPER)
            or (previous in _LETTERS and char.isdecimal())
            or (previous.isdecimal() and char in _LETTERS)
        ):
            out.append("_")
        out.append(char)
        previous = char
    return " ".join(
        word if word.isupper() else word.capitalize() for word in "".join(out).split("_")
    )


class SignatureField:
    """One input or output of a signature: its type, description, constraints and default.

    Created by `InputField` / `OutputField`; a signature keeps its own bound copy that knows
    the field's name and annotation. Instances are immutable: manipulation methods of a
    signature build new ones.
    """

    __slots__ = (
        "_admits_none",
        "annotation",
        "constraints",
        "default",
        "default_factory",
        "desc",
        "kind",
        "name",
        "prefix",
        "type_given",
    )

    kind: FieldKind
    name: str | None
    annotation: Any
    type_given: bool
    desc: str | None
    prefix: str | None
    default: Any
    default_factory: Callable[[], Any] | None
    constraints: Mapping[str, Any]
    _admits_none: bool | None

    def __init__(
        self,
        kind: FieldKind,
        *,
        desc: str | None = None,
        prefix: str | None = None,
        default: Any = MISSING,
        default_factory: Callable[[], Any] | None = None,
        constraints: Mapping[str, Any] | None = None,
        name: str | None = None,
        annotation: Any = None,
        type_given: bool = False,
    ) -> None:
        if kind not in ("input", "output"):
            raise ValueError(f"field kind must be 'input' or 'output', not {kind!r}")
        if default is not MISSING and default_factory is not None:
            raise TypeError("give a field either default= or default_factory=, not both")
        if desc is not None and not isinstance(desc, str):
            raise TypeError(f"desc= must be a string, not {type(desc).__name__}")
        if prefix is not None and not isinstance(prefix, str):
            raise TypeError(f"prefix= must be a string, not {type(prefix).__name__}")
        set_ = object.__setattr__
        set_(self, "kind", kind)
        set_(self, "desc", desc)
        set_(self, "prefix", prefix)
        set_(self, "default", default)
        set_(self, "default_factory", default_factory)
        set_(self, "constraints", types.MappingProxyType(_ordered_constraints(constraints or {})))
        set_(self, "name", name)
        # The type as it is read (an abstract iterable is a list), decided once for every
        # adapter, reader and prompt that looks at the field.
        set_(self, "annotation", declared_type(annotation))
        set_(self, "type_given", type_given)
        set_(self, "_admits_none", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("SignatureField is immutable; use Signature.with_updated_fields()")

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt through the constructor: the default for slots would set each attribute,
        # which an immutable field refuses. The memo of `admits_none` is recomputed there.
        attrs = {
            "desc": self.desc,
            "prefix": self.prefix,
            "default": self.default,
            "default_factory": self.default_factory,
            "constraints": dict(self.constraints),
            "name": self.name,
            "annotation": self.annotation,
            "type_given": self.type_given,
        }
        return (_restore_field, (self.kind, attrs))

    @property
    def is_input(self) -> bool:
        """Whether this is an input field."""
        return self.kind == "input"

    @property
    def is_output(self) -> bool:
        """Whether this is an output field."""
        return self.kind == "output"

    @property
    def has_default(self) -> bool:
        """Whether a default or a default factory was declared."""
        return self.default is not MISSING or self.default_factory is not None

    def get_default(self) -> Any:
        """Return the declared default (calling the factory), or `MISSING` when there is none."""
        if self.default_factory is not None:
            return self.default_factory()
        return self.default

    @property
    def admits_none(self) -> bool:
        """Whether ``None`` is a valid value of the annotation (``X | None``, ``Any``...)."""
        if self._admits_none is None:
            object.__setattr__(self, "_admits_none", _admits_none(self.annotation))
        return bool(self._admits_none)

    @property
    def required(self) -> bool:
        """Whether a value must be supplied: no default and ``None`` is not a valid value."""
        return not self.has_default and not self.admits_none

    @property
    def json_schema_extra(self) -> dict[str, Any]:
        """The field as DSPy describes it: ``desc``, ``prefix`` and ``__dspy_field_type``.

        DSPy keeps these in a pydantic field's ``json_schema_extra``, so code written for
        DSPy reads them there. Once the field is in a signature, ``prefix`` defaults to
        ``infer_prefix(name) + ":"`` and ``desc`` to ``"${name}"``, as in DSPy; constraints
        appear as ``constraints`` (their text as shown to the model), and an input declared
        without a type is marked ``IS_TYPE_UNDEFINED``. Neither ``prefix`` nor
        this dict changes a prompt. The dict is a new one each time: to change the field,
        use `Signature.with_updated_fields`.
        """
        extra: dict[str, Any] = {}
        if self.desc is not None:
            extra["desc"] = self.desc
        extra["__dspy_field_type"] = self.kind
        if self.is_input and self.name is not None and not self.type_given:
            # DSPy's mark of an input declared without a type (its Predict then skips the
            # type check of the value).
            extra["IS_TYPE_UNDEFINED"] = True
        if self.constraints:
            extra["constraints"] = self.constraints_text
        if self.prefix is not None:
            extra["prefix"] = self.prefix
        elif self.name is not None:
            extra["prefix"] = infer_prefix(self.name) + ":"
        if self.desc is None and self.name is not None:
            extra["desc"] = f"${{{self.name}}}"
        return extra

    @property
    def constraints_text(self) -> str:
        """The constraints as shown to the model, e.g. ``greater than or equal to: 1``."""
        return ", ".join(f"{_CONSTRAINT_LABELS[k]}: {v}" for k, v in self.constraints.items())

    def replace(self, **changes: Any) -> SignatureField:
        """Return a copy with some attributes changed (constraints are merged, not replaced)."""
        attrs: dict[str, Any] = {
            "desc": self.desc,
            "prefix": self.prefix,
            "default": self.default,
            "default_factory": self.default_factory,
            "constraints": dict(self.constraints),
            "name": self.name,
            "annotation": self.annotation,
            "type_given": self.type_given,
        }
        for key in list(changes):
            if key in _CONSTRAINT_LABELS:
                value = changes.pop(key)
                if value is None:
                    attrs["constraints"].pop(key, None)
                else:
                    attrs["constraints"][key] = value
        unknown = set(changes) - set(attrs) - {"kind"}
        if unknown:
            raise TypeError(f"unknown field attribute(s): {', '.join(sorted(unknown))}")
        if "default" in changes and "default_factory" not in changes:
            attrs["default_factory"] = None
        if "default_factory" in changes and "default" not in changes:
            attrs["default"] = MISSING
        attrs.update(changes)
        kind = attrs.pop("kind", self.kind)
        return SignatureField(kind, **attrs)

    def _key(self) -> tuple[Any, ...]:
        return (
            self.kind,
            self.name,
            self.annotation,
            self.desc,
            tuple(self.constraints.items()),
            _default_key(self.default),
            self.default_factory,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SignatureField):
            return NotImplemented
        try:
            return self._key() == other._key()
        except Exception:  # an exotic annotation or default whose __eq__ raises
            return self is other

    def __hash__(self) -> int:
        return hash((self.kind, self.name, self.desc))

    def __repr__(self) -> str:
        maker = "InputField" if self.is_input else "OutputField"
        parts = []
        if self.name is not None:
            parts.append(f"name={self.name!r}")
        if self.type_given or self.name is not None:
            parts.append(f"type={_type_repr(self.annotation)}")
        if self.desc:
            parts.append(f"desc={self.desc!r}")
        parts.extend(f"{k}={v!r}" for k, v in self.constraints.items())
        if self.default is not MISSING:
            parts.append(f"default={self.default!r}")
        if self.default_factory is not None:
            parts.append(f"default_factory={self.default_factory!r}")
        return f"{maker}({', '.join(parts)})"


def _restore_field(kind: FieldKind, attrs: dict[str, Any]) -> SignatureField:
    """A pickled field rebuilt (see `SignatureField.__reduce__`)."""
    return SignatureField(kind, **attrs)


def _default_key(default: Any) -> Any:
    try:
        hash(default)
    except TypeError:
        return repr(default)
    return default


def _type_repr(annotation: Any) -> str:
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    return repr(annotation).replace("typing.", "")


def _ordered_constraints(constraints: Mapping[str, Any]) -> dict[str, Any]:
    unknown = set(constraints) - set(_CONSTRAINT_LABELS)
    if unknown:
        raise TypeError(f"unknown constraint(s): {', '.join(sorted(unknown))}")
    return {k: constraints[k] for k in _CONSTRAINT_LABELS if constraints.get(k) is not None}


def _admits_none(annotation: Any) -> bool:
    if annotation is Any or annotation is None or annotation is type(None):
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _admits_none(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return any(_admits_none(arg) for arg in typing.get_args(annotation))
    if origin is Literal:
        return None in typing.get_args(annotation)
    return False


class Constraints(TypedDict, total=False):
    """Pydantic constraints a field may declare; shown to the model and enforced on outputs.

    Keys: ``gt``, ``ge``, ``lt``, ``le`` (bounds), ``min_length``, ``max_length`` (of a
    string or collection), ``multiple_of``, ``allow_inf_nan`` (floats).
    """

    gt: float
    ge: float
    lt: float
    le: float
    min_length: int
    max_length: int
    multiple_of: float
    allow_inf_nan: bool


def _make(
    kind: FieldKind,
    maker: str,
    desc: str | None,
    description: str | None,
    prefix: str | None,
    default: Any,
    default_factory: Callable[[], Any] | None,
    constraints: Mapping[str, Any],
) -> SignatureField:
    unknown = set(constraints) - set(_CONSTRAINT_LABELS)
    if unknown:
        raise TypeError(
            f"{maker}() got unexpected keyword argument(s): {', '.join(sorted(unknown))}; "
            f"it accepts desc, default, default_factory, description, prefix and the "
            f"constraints {', '.join(_CONSTRAINT_LABELS)}"
        )
    if desc is None and description is not None:
        desc = description
    return SignatureField(
        kind,
        desc=desc,
        prefix=prefix,
        default=default,
        default_factory=default_factory,
        constraints=constraints,
    )


def InputField(  # noqa: N802 - a factory named like the class it stands for, as in DSPy and pydantic
    desc: str | None = None,
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | None = None,
    description: str | None = None,
    prefix: str | None = None,
    **constraints: Unpack[Constraints],
) -> Any:
    """Declare an input of a signature.

    Args:
        desc: What the field holds, shown to the model next to the field's name.
        default: Value used when the caller omits this input.
        default_factory: Callable producing the default (for mutable defaults).
        description: Alias of ``desc`` (pydantic's spelling); ``desc`` wins when both are given.
        prefix: DSPy's label of the field, kept and saved for DSPy code that reads it
            (`SignatureField.json_schema_extra`; ``infer_prefix(name) + ":"`` by default);
            never shown to the model.
        **constraints: ``gt``, ``ge``, ``lt``, ``le``, ``min_length``, ``max_length``,
            ``multiple_of``, ``allow_inf_nan`` (see `Constraints`); shown to the model.

    Returns:
        A `SignatureField` (typed as ``Any`` so that ``x: int = InputField()`` type-checks).
    """
    return _make(
        "input", "InputField", desc, description, prefix, default, default_factory, constraints
    )


def OutputField(  # noqa: N802 - a factory named like the class it stands for, as in DSPy and pydantic
    desc: str | None = None,
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | None = None,
    description: str | None = None,
    prefix: str | None = None,
    **constraints: Unpack[Constraints],
) -> Any:
    """Declare an output of a signature.

    Constraints are shown to the model and enforced when a completion is parsed: a value
    that violates one is a `ParseError` naming the constraint. A default (or a type that
    admits ``None``) is used when the model omits the field.

    Args:
        desc: What the field holds, shown to the model next to the field's name.
        default: Value used when the completion omits this output.
        default_factory: Callable producing the default (for mutable defaults).
        description: Alias of ``desc`` (pydantic's spelling); ``desc`` wins when both are given.
        prefix: DSPy's label of the field, kept and saved for DSPy code that reads it
            (`SignatureField.json_schema_extra`; ``infer_prefix(name) + ":"`` by default);
            never shown to the model.
        **constraints: ``gt``, ``ge``, ``lt``, ``le``, ``min_length``, ``max_length``,
            ``multiple_of``, ``allow_inf_nan`` (see `Constraints`); enforced when parsing.

    Returns:
        A `SignatureField` (typed as ``Any`` so that ``x: int = OutputField()`` type-checks).
    """
    return _make(
        "output", "OutputField", desc, description, prefix, default, default_factory, constraints
    )
