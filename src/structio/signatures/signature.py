"""`Signature`: what a model call takes and returns, declared once as a class."""

from __future__ import annotations

import copyreg
import functools
import inspect
import os
import sys
import threading
import types
import typing
import weakref
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

from structio.exceptions import FormatError, SignatureError
from structio.signatures._serialize import (
    dspy_state,
    signature_from_dict,
    signature_to_dict,
    with_dspy_state,
)
from structio.signatures._spec import parse_spec
from structio.signatures.declare import (
    _bind,
    _bind_explicit,
    _caller_module,
    _caller_namespace,
    _check_namespace,
    _check_type,
    _default_instructions,
    _from_mapping_item,
    _from_parsed,
    _own_annotations,
)
from structio.signatures.field import SignatureField
from structio.typemodel.text import type_name

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "Signature",
    "SignatureLike",
    "SignatureMeta",
    "as_signature",
    "from_portable",
    "make_signature",
    "portable",
    "unknown_fields_message",
]

_FieldMap = types.MappingProxyType  # read-only views handed to users


class _Memo(dict[Any, Any]):
    """A signature's memo for adapters (plans, validators): derived, and kept per process.

    It pickles empty, so a signature shipped to another process (pickle, cloudpickle) takes
    none of it along: its entries are rebuilt there on first use, and some could not travel.
    """

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_Memo, ())


class SignatureMeta(type):
    """Metaclass of `Signature`: collects fields at class creation and validates them.

    Signature classes are values, not object factories: their properties (`instructions`,
    `input_fields`, `output_fields`, `fields`, `signature`) live here, two signatures with
    the same instructions and fields compare equal, and calling `Signature("a -> b")` builds
    a new signature class from a string spec.
    """

    __sig_inputs__: types.MappingProxyType[str, SignatureField]
    __sig_outputs__: types.MappingProxyType[str, SignatureField]
    __sig_fields__: types.MappingProxyType[str, SignatureField]
    __sig_instructions__: str
    __sig_explicit__: bool
    __structio_cache__: dict[Any, Any]

    def __new__(
        mcs,
        name: str,
        bases: tuple[type, ...],
        namespace: dict[str, Any],
        **kwargs: Any,
    ) -> SignatureMeta:
        """Create a signature class: collect, bind and validate its fields."""
        declared: dict[str, SignatureField] = {}
        kept: dict[str, Any] = {}
        for key, value in namespace.items():
            if isinstance(value, SignatureField):
                declared[key] = value
            else:
                kept[key] = value
        cls = super().__new__(mcs, name, bases, kept, **kwargs)
        inputs: dict[str, SignatureField] = {}
        outputs: dict[str, SignatureField] = {}
        for base in reversed(bases):
            if isinstance(base, SignatureMeta):
                for fname, field in base.__sig_fields__.items():
                    inputs.pop(fname, None)
                    outputs.pop(fname, None)
                    (inputs if field.is_input else outputs)[fname] = field
        annotations = _own_annotations(cls, namespace)
        _check_namespace(name, kept, annotations, declared)
        for fname, field in declared.items():
            bound = _bind(name, fname, field, annotations)
            # A redeclared field keeps its place; one that changes kind moves to its new group.
            (outputs if bound.is_input else inputs).pop(fname, None)
            (inputs if bound.is_input else outputs)[fname] = bound
        doc = namespace.get("__doc__")
        # The root Signature class documents itself; its docstring is no instructions.
        is_root = not any(isinstance(base, SignatureMeta) for base in bases)
        if isinstance(doc, str) and doc.strip() and not is_root:
            instructions, explicit = inspect.cleandoc(doc), True
        else:
            inherited = next(
                (b for b in cls.__mro__[1:] if isinstance(b, SignatureMeta) and b.__sig_explicit__),
                None,
            )
            if inherited is not None:
                instructions, explicit = inherited.__sig_instructions__, True
            else:
                instructions, explicit = _default_instructions(inputs, outputs), False
        _install(cls, inputs, outputs, instructions, explicit)
        return cls

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        """Build a signature from a spec, or (on a signature with fields) hold field values.

        ``Signature("context: list[str], question -> answer: int", "Answer briefly.")``
        builds a new signature class (keywords: ``custom_types``, ``name``). A signature
        that has fields, called with its fields' values by name (``QA(question="2+2?",
        answer="4")``), gives an instance holding them as attributes, as a DSPy signature
        does; a field not given takes its default.

        Raises:
            FormatError: A value names no field, or a field without a default is not given.
        """
        if cls.__sig_fields__:
            if args:
                raise TypeError(
                    f"{cls.__name__} already has fields; build new signatures with "
                    "Signature('...') or derive them with append/insert/delete; to hold "
                    f"field values, pass them by name: {cls.__name__}(field=value, ...)"
                )
            return _instance(cls, kwargs)
        return _new_signature(cls, *args, **kwargs)

    @property
    def instructions(cls) -> str:
        """The instructions: the cleaned docstring, or DSPy's default sentence."""
        return cls.__sig_instructions__

    @property
    def input_fields(cls) -> Mapping[str, SignatureField]:
        """The input fields, in declaration order."""
        return cls.__sig_inputs__

    @property
    def output_fields(cls) -> Mapping[str, SignatureField]:
        """The output fields, in declaration order."""
        return cls.__sig_outputs__

    @property
    def fields(cls) -> Mapping[str, SignatureField]:
        """All fields: inputs first, then outputs, each group in declaration order."""
        return cls.__sig_fields__

    @property
    def signature(cls) -> str:
        """The field names as a spec, e.g. ``"context, question -> answer"``."""
        return f"{', '.join(cls.__sig_inputs__)} -> {', '.join(cls.__sig_outputs__)}"

    def __eq__(cls, other: object) -> bool:
        if cls is other:
            return True
        if not isinstance(other, SignatureMeta):
            return NotImplemented
        return cls.__sig_instructions__ == other.__sig_instructions__ and list(
            cls.__sig_fields__.items()
        ) == list(other.__sig_fields__.items())

    def __hash__(cls) -> int:
        return hash((cls.__sig_instructions__, tuple(cls.__sig_fields__)))

    def __repr__(cls) -> str:
        def side(fields: Mapping[str, SignatureField]) -> str:
            return ", ".join(f"{n}: {type_name(f.annotation)}" for n, f in fields.items())

        return (
            f"{cls.__name__}({side(cls.__sig_inputs__)} -> {side(cls.__sig_outputs__)}; "
            f"instructions={cls.__sig_instructions__!r})"
        )


def _new_signature(
    cls: SignatureMeta,
    spec: str | Mapping[str, Any] | None = None,
    instructions: str | None = None,
    *,
    custom_types: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> type[Signature]:
    """`Signature(spec, instructions)`: a new signature class built from the spec."""
    if spec is None:
        raise TypeError(
            f"{cls.__name__} is a signature class and is not instantiated; pass it to an "
            "adapter or Predict. To build a signature from a spec, call "
            "Signature('question -> answer', 'instructions')."
        )
    return _make_signature(
        spec,
        instructions,
        name=name,
        custom_types=custom_types,
        caller_ns=_caller_namespace(),
        base=typing.cast("type[Signature]", cls),
    )


def _instance(cls: SignatureMeta, values: Mapping[str, Any]) -> Signature:
    """An instance of a signature holding its fields' values (DSPy's ``Sig(a=..., b=...)``)."""
    unknown = [name for name in values if name not in cls.__sig_fields__]
    if unknown:
        raise FormatError(unknown_fields_message(cls, unknown, "field"))
    missing = [
        name
        for name, field in cls.__sig_fields__.items()
        if name not in values and not field.has_default
    ]
    if missing:
        raise FormatError(
            f"{cls.__name__}(...) needs a value for every field without a default; missing: "
            + ", ".join(f"`{name}`" for name in missing)
        )
    instance: Signature = object.__new__(typing.cast("type[Signature]", cls))
    for name, field in cls.__sig_fields__.items():
        object.__setattr__(instance, name, values[name] if name in values else field.get_default())
    return instance


def make_signature(
    fields: str | Mapping[str, Any],
    instructions: str | None = None,
    name: str | None = None,
    *,
    custom_types: Mapping[str, Any] | None = None,
) -> type[Signature]:
    """Build a signature class from a dict of fields (or a string spec).

    Args:
        fields: ``{"q": (str, InputField()), "a": (int, OutputField())}``; a value may also be
            a bare ``InputField()``/``OutputField()`` (type ``str``), and a type may be given
            as text (``"list[str]"``). A string is read as a spec (``"q -> a: int"``).
        instructions: The instructions; by default DSPy's sentence naming the fields.
        name: The class name (``"StringSignature"`` by default).
        custom_types: Names for user classes used in type texts, e.g. ``{"Patient": Patient}``.

    Raises:
        SignatureError: A field is malformed, or a name is used twice.
    """
    return _make_signature(
        fields,
        instructions,
        name=name,
        custom_types=custom_types,
        caller_ns=_caller_namespace(),
        base=Signature,
    )


def _make_signature(
    spec: str | Mapping[str, Any],
    instructions: str | None,
    *,
    name: str | None,
    custom_types: Mapping[str, Any] | None,
    caller_ns: Mapping[str, Any],
    base: type[Signature],
) -> type[Signature]:
    class_name = name or "StringSignature"
    if not class_name.isidentifier():
        raise SignatureError(f"signature name {class_name!r} is not a Python identifier")
    if instructions is not None and not isinstance(instructions, str):
        raise SignatureError(
            f"instructions for {class_name} must be a string, not {type(instructions).__name__}"
        )
    if isinstance(spec, str):
        try:
            ins, outs = parse_spec(spec, custom_types=custom_types, caller_ns=caller_ns)
        except SignatureError as exc:
            raise SignatureError(f"{class_name}: {exc}") from None
        fields = [_from_parsed(class_name, p, "input") for p in ins]
        fields += [_from_parsed(class_name, p, "output") for p in outs]
    elif isinstance(spec, Mapping):
        fields = [
            _from_mapping_item(class_name, key, value, custom_types, caller_ns)
            for key, value in spec.items()
        ]
    else:
        raise SignatureError(
            "a signature is built from a string spec or a dict of fields, "
            f"not {type(spec).__name__}"
        )
    return _build(class_name, fields, instructions, base=base, module=_caller_module(caller_ns))


def _build(
    name: str,
    fields: list[SignatureField],
    instructions: str | None,
    *,
    base: type[Signature],
    module: str,
) -> type[Signature]:
    inputs: dict[str, SignatureField] = {}
    outputs: dict[str, SignatureField] = {}
    for field in fields:
        fname = field.name or ""  # fields reaching here are bound, so they have a name
        if fname in inputs or fname in outputs:
            other = inputs.get(fname) or outputs[fname]
            if other.kind != field.kind:
                raise SignatureError(
                    f"{name}: `{fname}` is used as both an input and an output field; "
                    "input and output names must be distinct"
                )
            raise SignatureError(f"{name}: field `{fname}` is declared twice")
        (inputs if field.is_input else outputs)[fname] = field
    cls = SignatureMeta(name, (base,), {"__module__": module, "__qualname__": name})
    if instructions is None:
        _install(cls, inputs, outputs, _default_instructions(inputs, outputs), False)
    else:
        _install(cls, inputs, outputs, instructions, True)
    return typing.cast("type[Signature]", cls)


def _install(
    cls: SignatureMeta,
    inputs: dict[str, SignatureField],
    outputs: dict[str, SignatureField],
    instructions: str,
    explicit: bool,
) -> None:
    cls.__sig_inputs__ = _FieldMap(inputs)
    cls.__sig_outputs__ = _FieldMap(outputs)
    cls.__sig_fields__ = _FieldMap({**inputs, **outputs})
    cls.__sig_instructions__ = instructions
    cls.__sig_explicit__ = explicit
    # Per-signature memo for adapters (system messages, type descriptions, validators).
    cls.__structio_cache__ = _Memo()


def _field_or_fail(cls: SignatureMeta, name: str) -> SignatureField:
    if name not in cls.fields:
        raise SignatureError(unknown_fields_message(cls, [name], "field"))
    return cls.fields[name]


_KINDS = {"input": "input_fields", "output": "output_fields", "field": "fields"}
_PLURALS = {"input": "inputs", "output": "outputs", "field": "fields"}


def unknown_fields_message(
    signature: SignatureMeta, names: Iterable[str], kind: Literal["input", "output", "field"]
) -> str:
    """The one wording of "these names are not inputs / outputs / fields of the signature".

    Each name gets a "did you mean" guess when one is close, and a name of the other kind
    says so (```answer` is an output of QA, not an input``); the message ends with what the
    signature does have.
    """
    import difflib

    known = list(getattr(signature, _KINDS[kind]))
    parts = []
    for name in names:
        if kind != "field" and name in signature.fields:
            other = "output" if kind == "input" else "input"
            parts.append(f"`{name}` is an {other} of {signature.__name__}, not an {kind}")
            continue
        close = difflib.get_close_matches(str(name), known, n=1)
        guess = f" (did you mean `{close[0]}`?)" if close else ""
        parts.append(
            f"`{name}` is not {'a' if kind == 'field' else 'an'} {kind} of "
            f"{signature.__name__}{guess}"
        )
    listed = ", ".join(f"`{n}`" for n in known) or "(none)"
    return "; ".join(parts) + f". Its {_PLURALS[kind]} are: {listed} ({signature.signature})"


# -- pickling ---------------------------------------------------------------------------------
#
# A signature class defined at the top of a module pickles by reference, as any class does.
# One made at run time (a string spec, `make_signature`, `from_dict`, a derived copy, a
# class defined in a function) has no name to import, so it pickles as what makes it: its
# bases, its own attributes, its fields (each a `SignatureField`, annotations and all) and
# its instructions, and is built anew when unpickled: once per process, then that class
# again. cloudpickle ships the classes it cannot import by value with its own reducer,
# which pickle's table cannot change: `portable` hands a signature to any pickler so that
# it goes this way; `Predict` pickles its signature so.

# The attribute naming a class shipped by value, so that a process builds it only once.
_SHIP_ID = "__structio_ship_id__"
_SHIP_LOCK = threading.Lock()
# The signatures built from a pickle in this process, by the ship id of their original.
_UNPICKLED: weakref.WeakValueDictionary[str, SignatureMeta] = weakref.WeakValueDictionary()


def _importable(cls: type) -> bool:
    """Whether ``cls`` is what its module and qualified name lead to, as pickle looks it up."""
    found: Any = sys.modules.get(cls.__module__)
    for part in cls.__qualname__.split("."):
        if found is None:
            return False
        found = getattr(found, part, None)
    return found is cls


def _reduce_signature(cls: SignatureMeta) -> str | tuple[Any, ...]:
    """How pickle saves a signature class: by reference if it can be imported, else rebuilt."""
    if _importable(cls):
        return cls.__qualname__
    return _by_value(cls)


def _by_value(cls: SignatureMeta) -> tuple[Any, ...]:
    """The reduction of ``cls`` into what builds it again (see `_restore_signature`)."""
    with _SHIP_LOCK:
        # Read from the class itself: a subclass must not take its base's.
        ship_id = vars(cls).get(_SHIP_ID)
        if not isinstance(ship_id, str):
            ship_id = os.urandom(16).hex()
            type.__setattr__(cls, _SHIP_ID, ship_id)
    # The user's own attributes (methods, constants, the docstring) travel; what the
    # metaclass derives is installed again from the fields and the instructions.
    attrs = {
        key: value
        for key, value in vars(cls).items()
        if key in ("__doc__", "__annotations__") or not key.startswith("__")
    }
    args = (
        ship_id,
        cls.__name__,
        cls.__qualname__,
        cls.__module__,
        cls.__bases__,
        attrs,
        tuple(cls.__sig_fields__.values()),
        cls.__sig_instructions__,
        cls.__sig_explicit__,
    )
    return (_restore_signature, args)


def _restore_signature(
    ship_id: str,
    name: str,
    qualname: str,
    module: str,
    bases: tuple[type, ...],
    attrs: Mapping[str, Any],
    fields: tuple[SignatureField, ...],
    instructions: str,
    explicit: bool,
) -> type[Signature]:
    """A signature pickled by value, built anew (see `_by_value`), or the one built before.

    Reusing the class built from the same original keeps one class, and one memo of its
    prompts, per process when a worker unpickles a `Predict` for every task.
    """
    with _SHIP_LOCK:
        built = _UNPICKLED.get(ship_id)
        if built is not None:
            return typing.cast("type[Signature]", built)
        cls = SignatureMeta(name, bases, {"__module__": module, "__qualname__": qualname})
        # Set after the class is made: they were checked when the original was declared,
        # and the namespace check would read its field annotations as undeclared fields.
        for key, value in attrs.items():
            setattr(cls, key, value)
        inputs = {field.name or "": field for field in fields if field.is_input}
        outputs = {field.name or "": field for field in fields if field.is_output}
        _install(cls, inputs, outputs, instructions, explicit)
        # Shipped again from here (a worker's own workers), it keeps its original's name.
        type.__setattr__(cls, _SHIP_ID, ship_id)
        _UNPICKLED[ship_id] = cls
        return typing.cast("type[Signature]", cls)


# Pickle saves any class by reference unless the copyreg table names a reducer for its
# metaclass; multiprocessing's pickler copies this table, and cloudpickle uses it for the
# classes it can import.
copyreg.pickle(SignatureMeta, _reduce_signature)


class _Portable:
    """A signature as `portable` hands it to a pickler."""

    __slots__ = ("signature",)

    def __init__(self, signature: SignatureMeta) -> None:
        self.signature = signature

    def __copy__(self) -> _Portable:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _Portable:
        # Classes are atomic to `copy`: a copied Predict keeps its very signature.
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        cls = self.signature
        # A class of __main__ goes by value too: a Ray or Spark worker has another
        # __main__ (multiprocessing's spawn imports the parent's, and either way works).
        if _importable(cls) and cls.__module__ != "__main__":
            return (_same, (cls,))
        return _by_value(cls)


def _same(value: Any) -> Any:
    return value


def portable(signature: type[Signature]) -> Any:
    """``signature`` in a form that every pickler saves the way structio pickles signatures.

    Pickled, it is the signature class again once unpickled. A class that can be imported
    (not from ``__main__``) goes by reference; any other as its fields, instructions and
    attributes, built once per process that unpickles it. cloudpickle, left to itself,
    ships such a class by value with its own machinery, which tells classes apart by
    ``==``: two equal signatures with different names would become one in a worker.
    """
    return _Portable(signature)


def from_portable(value: Any) -> Any:
    """The signature `portable` wrapped, for a copy that did not go through a pickler.

    ``copy.copy`` hands an object's state over as it is: `portable`'s wrapper included.
    """
    return value.signature if isinstance(value, _Portable) else value


class Signature(metaclass=SignatureMeta):
    """Base class of signatures: typed inputs and outputs plus instructions.

    Declare a signature as a class whose docstring is the instructions::

        class Triage(Signature):
            \"\"\"Route a support ticket.\"\"\"

            ticket: str = InputField()
            category: Literal["billing", "bug", "other"] = OutputField()
            urgency: int = OutputField(desc="1 (low) to 5 (high)", ge=1, le=5)

    or from a string spec: ``Signature("context: list[str], question -> answer: int")``.
    Every manipulation method returns a new class and leaves the original unchanged.
    """

    # Not a field: a ClassVar annotation keeps it out of the field scan.
    __structio_cache__: ClassVar[dict[Any, Any]]

    def __repr__(self) -> str:  # an instance holding field values (`Sig(a=1)`)
        values = ", ".join(f"{name}={getattr(self, name)!r}" for name in type(self).fields)
        return f"{type(self).__name__}({values})"

    @classmethod
    def equals(cls, other: Any) -> bool:
        """Whether ``other`` is a signature with the same fields and instructions (DSPy's name).

        The same as ``cls == other``: names of the classes do not count.
        """
        return isinstance(other, SignatureMeta) and cls == other

    @classmethod
    def to_dict(cls) -> dict[str, Any]:
        """The signature as JSON-ready data: name, instructions, fields and module.

        Each field has ``name``, ``kind``, ``type`` (text such as ``list[str]``; classes
        that are not builtins as ``module:QualName``) and, when set, ``desc``, ``prefix``,
        ``constraints`` and ``default``. ``instructions`` is ``None`` when they are the
        default sentence. ``module`` is the module the signature was defined in, whose
        types `from_dict` allows once the loading program has imported it. `from_dict`
        reads it back to an equal signature.

        Raises:
            SignatureError: A type has no text form (``Annotated`` metadata, a class defined
                inside a function) or a default is a factory.
        """
        return signature_to_dict(cls)

    @staticmethod
    def from_dict(
        data: Mapping[str, Any],
        *,
        allowed_modules: Iterable[str] | None = None,
        trust_types: bool = False,
        types: Mapping[str, Any] | None = None,
    ) -> type[Signature]:
        """Build a signature from `to_dict`'s data, importing only the modules allowed.

        A type named ``module:QualName`` is imported only from structio, the standard
        modules of plain types (``datetime``, ``decimal``, ``enum``, ``uuid``,
        ``pathlib``...), the module the data says the signature was defined in when this
        program has imported it already, and ``allowed_modules``. Anything else is refused
        before it is imported: importing a module runs its code.

        Args:
            data: What `to_dict` returned (older data without ``module`` is read too).
            allowed_modules: More modules whose classes the data may name; each name
                allows its submodules (``["myapp"]`` allows ``myapp.models``).
            trust_types: Allow any module: only for data you trust as you trust code.
            types: The type of a field, by field name, used instead of the type the data
                writes for it (nothing is imported for that field): how data whose types
                cannot be imported here (classes of the script that saved it, ``__main__``)
                is read, with the classes of the signature it was saved from.

        Raises:
            SignatureError: The data is malformed, names a module that is not allowed (the
                message names it and says how to allow it), or a type cannot be imported.
        """
        name, instructions, fields, module = signature_from_dict(
            data, allowed_modules=allowed_modules, trust_types=trust_types, types=types
        )
        # The loaded class keeps the module it was saved from, so saving it again keeps
        # the same allowance.
        return _make_signature(
            fields,
            instructions,
            name=name,
            custom_types=None,
            caller_ns={"__name__": module} if module else _caller_namespace(),
            base=Signature,
        )

    @classmethod
    def with_instructions(cls, instructions: str) -> type[Self]:
        """Return a copy of this signature with new instructions."""
        if not isinstance(instructions, str):
            raise SignatureError(
                f"instructions for {cls.__name__} must be a string, "
                f"not {type(instructions).__name__}"
            )
        return cls._derive(instructions=instructions)

    @classmethod
    def dump_state(cls) -> dict[str, Any]:
        """DSPy's state: the instructions and each field's prefix and description."""
        return dspy_state(cls)

    @classmethod
    def load_state(cls, state: Mapping[str, Any]) -> type[Self]:
        """A copy with `dump_state`'s texts put in: instructions, then fields in order."""
        return cast("type[Self]", with_dspy_state(cls, state))

    @classmethod
    def append_instructions(cls, text: str) -> type[Self]:
        """Return a copy whose instructions are the current ones, a blank line, and ``text``."""
        return cls.with_instructions(f"{cls.instructions}\n\n{text}")

    @classmethod
    def with_updated_fields(cls, name: str, type_: Any = None, **kwargs: Any) -> type[Self]:
        """Return a copy with field ``name`` changed.

        Args:
            name: The field to change.
            type_: A new annotation, or ``None`` to keep the current one.
            **kwargs: Attributes to change: ``desc``, ``default``, ``default_factory``,
                ``prefix`` or a constraint (``ge=0``; ``None`` removes a constraint).
        """
        field = _field_or_fail(cls, name)
        changes = dict(kwargs)
        if type_ is not None:
            _check_type(cls.__name__, name, type_)
            changes.update(annotation=type_, type_given=True)
        try:
            updated = field.replace(**changes)
        except TypeError as exc:
            raise SignatureError(f"cannot update field `{name}` of {cls.__name__}: {exc}") from None
        fields = [updated if n == name else f for n, f in cls.fields.items()]
        return cls._derive(fields=fields)

    @classmethod
    def insert(cls, index: int, name: str, field: SignatureField, type_: Any = None) -> type[Self]:
        """Return a copy with ``field`` inserted at ``index`` among the inputs or the outputs.

        The field goes into the inputs or the outputs according to how it was declared
        (`InputField` or `OutputField`). Negative indices count from the end: ``-1`` appends.

        Args:
            index: Position within the inputs or within the outputs.
            name: Name of the new field.
            field: An `InputField(...)` or `OutputField(...)`.
            type_: Its type; by default the field's own annotation, else ``str``.

        Raises:
            SignatureError: ``field`` is not a signature field, or ``name`` is taken or invalid.
            IndexError: ``index`` is out of range.
        """
        if not isinstance(field, SignatureField):
            raise SignatureError(
                f"insert into {cls.__name__}: field `{name}` must be InputField(...) or "
                f"OutputField(...), not {type(field).__name__}"
            )
        if name in cls.fields:
            kind = cls.fields[name].kind
            raise SignatureError(
                f"insert into {cls.__name__}: a field named `{name}` already exists (an "
                f"{kind}); delete it first or choose another name"
            )
        annotation = type_ if type_ is not None else field.annotation
        given = type_ is not None or field.type_given
        bound = _bind_explicit(cls.__name__, name, field, annotation if given else str, given)
        group = list((cls.input_fields if bound.is_input else cls.output_fields).values())
        size = len(group)
        if not -(size + 1) <= index <= size:
            raise IndexError(
                f"invalid index to insert: {index}; for the {bound.kind} fields of "
                f"{cls.__name__} it must be in the range [{-(size + 1)}, {size}]"
            )
        group.insert(index if index >= 0 else index + size + 1, bound)
        other = cls.output_fields if bound.is_input else cls.input_fields
        return cls._derive(fields=[*group, *other.values()])

    @classmethod
    def prepend(cls, name: str, field: SignatureField, type_: Any = None) -> type[Self]:
        """Return a copy with ``field`` first among the inputs or the outputs."""
        return cls.insert(0, name, field, type_)

    @classmethod
    def append(cls, name: str, field: SignatureField, type_: Any = None) -> type[Self]:
        """Return a copy with ``field`` last among the inputs or the outputs."""
        return cls.insert(-1, name, field, type_)

    @classmethod
    def delete(cls, name: str) -> type[Self]:
        """Return a copy without field ``name``.

        A name that is no field and close to none gives an unchanged copy, as DSPy
        documents (``Unchanged = NewSig.delete("nonexistent")``).

        Raises:
            SignatureError: The name is no field but close to one (``answr`` for
                ``answer``): a typo must not pass silently.
        """
        if name not in cls.fields:
            import difflib

            if difflib.get_close_matches(str(name), list(cls.fields), n=1):
                _field_or_fail(cls, name)
        return cls._derive(fields=[f for n, f in cls.fields.items() if n != name])

    @classmethod
    def _derive(
        cls,
        *,
        fields: Iterable[SignatureField] | None = None,
        instructions: str | None = None,
    ) -> type[Self]:
        field_list = list(cls.fields.values()) if fields is None else list(fields)
        text = cls.instructions if instructions is None else instructions
        new = _build(cls.__name__, field_list, text, base=Signature, module=cls.__module__)
        return typing.cast("type[Self]", new)


SignatureLike = type[Signature] | str
"""A signature class, or a string spec such as ``"question -> answer: int"``."""


@functools.lru_cache(maxsize=256)
def _from_spec(spec: str) -> type[Signature]:
    # Cached by the text alone, so only builtin, typing and structio names may resolve here;
    # a spec naming user classes must be built with Signature(...) where they are in scope.
    return _make_signature(spec, None, name=None, custom_types=None, caller_ns={}, base=Signature)


def as_signature(signature: SignatureLike) -> type[Signature]:
    """Accept a signature class or a string spec (specs are parsed once and cached)."""
    if isinstance(signature, SignatureMeta):
        return signature
    if isinstance(signature, str):
        return _from_spec(signature)
    raise TypeError(
        "expected a Signature class or a string spec such as 'question -> answer', "
        f"not {type(signature).__name__}"
    )
