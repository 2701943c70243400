"""Types as text, in the spellings structio needs.

There are three, each for a different reader, and all live here:

- `type_name`: what the *model* reads (``list[str]``, ``Union[str, NoneType]``), spelled
  exactly as DSPy 3.4.1 spells it, so prompts match byte for byte;
- `type_to_text`: what a *saved file* holds (``list[str] | None``,
  ``myapp.models:Patient``), which `Signature.from_dict` reads back to an equal type;
- a signature's ``signature`` string (``question: str -> answer: int``) uses `type_name`.

A fourth spelling, the short notation `CompactAdapter` shows the model (``age: int  // 0 to
130``), is read from a type's JSON schema rather than from the type, and lives beside this
module in `structio.typemodel.compact`.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal

from structio._util.refs import class_ref
from structio.exceptions import SignatureError
from structio.reasoning import Reasoning

__all__ = ["type_name", "type_to_text"]

_NONE_TYPE = type(None)
_BUILTIN_NAMES = frozenset(
    ("str", "int", "float", "bool", "bytes", "list", "dict", "tuple", "set", "frozenset")
)
_TYPING_FORMS = {typing.Any: "Any"}


def type_name(annotation: Any) -> str:
    """The type's name as shown to the model: ``list[str]``, ``Union[str, NoneType]``..."""
    if annotation is _NONE_TYPE or annotation is None:
        return "NoneType"
    if annotation is Ellipsis:
        return "..."
    if annotation is Reasoning:  # DSPy shows its Reasoning type as the str it is
        return "str"
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


def type_to_text(annotation: Any, *, where: str = "type") -> str:
    """Write an annotation as text that `type_from_text` reads back to an equal one.

    Raises:
        SignatureError: The annotation cannot be written (``Annotated`` metadata, a class
            defined inside a function, an unsupported typing construct).
    """
    if annotation is _NONE_TYPE or annotation is None:
        return "None"
    if annotation is Ellipsis:  # tuple[int, ...]
        return "..."
    if annotation in _TYPING_FORMS:
        return _TYPING_FORMS[annotation]
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        return f"Literal[{', '.join(repr(a) for a in args)}]"
    if origin is typing.Union or origin is types.UnionType:
        return " | ".join(type_to_text(a, where=where) for a in args)
    if origin is typing.Annotated:
        raise SignatureError(
            f"cannot save {where}: Annotated[...] metadata is not saved; declare constraints "
            "with InputField/OutputField (ge=, max_length=...) instead"
        )
    if origin is not None:
        base = _class_text(origin, where)
        if not args:
            return base
        return f"{base}[{', '.join(type_to_text(a, where=where) for a in args)}]"
    if isinstance(annotation, type):
        return _class_text(annotation, where)
    raise SignatureError(f"cannot save {where}: the type {annotation!r} has no text form")


def _class_text(cls: Any, where: str) -> str:
    if not isinstance(cls, type):
        raise SignatureError(f"cannot save {where}: {cls!r} is not a class")
    if cls.__module__ == "builtins" and cls.__name__ in _BUILTIN_NAMES:
        return cls.__name__
    try:
        return class_ref(cls)
    except ValueError as exc:
        raise SignatureError(f"cannot save {where}: {exc}") from None
