"""Signatures as plain data: types written as text, user classes as ``module:QualName``.

A type is written the way it reads in Python (``list[str]``, ``dict[str, int] | None``,
``Literal['a', 'b']``, ``Any``), except that a class which is not a builtin is written as
``module:QualName`` (``myapp.models:Patient``, ``datetime:date``), so that loading it is an
import and never an ``eval``.
"""

from __future__ import annotations

import importlib
import re
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal

from structio.exceptions import SignatureError

__all__ = ["signature_from_dict", "signature_to_dict", "type_from_text", "type_to_text"]

_NONE = type(None)
_BUILTIN_NAMES = frozenset(
    ("str", "int", "float", "bool", "bytes", "list", "dict", "tuple", "set", "frozenset")
)
_CLASS_REF = re.compile(
    r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|([A-Za-z_][\w.]*):([A-Za-z_][\w.]*)"""
)
_TYPING_FORMS = {typing.Any: "Any"}


def type_to_text(annotation: Any, *, where: str = "type") -> str:
    """Write an annotation as text that `type_from_text` reads back to an equal one.

    Raises:
        SignatureError: The annotation cannot be written (``Annotated`` metadata, a class
            defined inside a function, an unsupported typing construct).
    """
    if annotation is _NONE or annotation is None:
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
    qualname = cls.__qualname__
    if "<locals>" in qualname:
        raise SignatureError(
            f"cannot save {where}: the class {qualname} is defined inside a function, so it "
            "cannot be imported when the file is loaded; define it at module level"
        )
    return f"{cls.__module__}:{qualname}"


def type_from_text(text: str, *, where: str = "type") -> Any:
    """Read a type written by `type_to_text`, importing ``module:QualName`` classes.

    Raises:
        SignatureError: The text is not a type, or a class cannot be imported; the message
            names it.
    """
    from structio.signatures._spec import resolve_type

    classes: dict[str, Any] = {}

    def substitute(match: re.Match[str]) -> str:
        if match.group(1) is None:  # a quoted string inside Literal[...]
            return match.group(0)
        alias = f"__structio_class_{len(classes)}"
        classes[alias] = _import_class(match.group(1), match.group(2), where)
        return alias

    return resolve_type(_CLASS_REF.sub(substitute, text), custom_types=classes, where=where)


def _import_class(module_name: str, qualname: str, where: str) -> Any:
    ref = f"{module_name}:{qualname}"
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise SignatureError(
            f"cannot load {where}: type {ref!r} is not importable ({exc}); install or put "
            f"module {module_name!r} on the path"
        ) from None
    for attr in qualname.split("."):
        if not hasattr(obj, attr):
            raise SignatureError(
                f"cannot load {where}: type {ref!r} is not importable (module {module_name!r} "
                f"has no {qualname!r})"
            )
        obj = getattr(obj, attr)
    return obj


def signature_to_dict(sig: Any) -> dict[str, Any]:
    """The signature as plain data (see `Signature.to_dict`)."""
    from structio.adapters._values import jsonable
    from structio.signatures.field import MISSING

    fields: list[dict[str, Any]] = []
    for name, field in sig.fields.items():
        where = f"field `{name}` of {sig.__name__}"
        item: dict[str, Any] = {
            "name": name,
            "kind": field.kind,
            "type": type_to_text(field.annotation, where=where),
        }
        if field.desc is not None:
            item["desc"] = field.desc
        if field.prefix is not None:
            item["prefix"] = field.prefix
        if field.constraints:
            item["constraints"] = dict(field.constraints)
        if field.default_factory is not None:
            raise SignatureError(
                f"cannot save {where}: a default_factory is code; give a default= value"
            )
        if field.default is not MISSING:
            item["default"] = jsonable(field.default)
        fields.append(item)
    return {
        "name": sig.__name__,
        "instructions": sig.instructions if sig.__sig_explicit__ else None,
        "fields": fields,
    }


def signature_from_dict(data: Mapping[str, Any]) -> Any:
    """Build a signature from `signature_to_dict`'s data.

    Raises:
        SignatureError: The data is malformed, or a type cannot be imported.
    """
    from structio.signatures.field import InputField, OutputField
    from structio.signatures.signature import make_signature

    if not isinstance(data, Mapping) or not isinstance(data.get("fields"), list):
        raise SignatureError("a saved signature is a dict with a list of 'fields'")
    name = data.get("name") or "StringSignature"
    spec: dict[str, Any] = {}
    for index, item in enumerate(data["fields"]):
        if not isinstance(item, Mapping) or not {"name", "kind", "type"} <= item.keys():
            raise SignatureError(
                f"saved signature {name}: field {index} needs 'name', 'kind' and 'type'"
            )
        where = f"field `{item['name']}` of {name}"
        annotation = type_from_text(str(item["type"]), where=where)
        if item["kind"] not in ("input", "output"):
            raise SignatureError(f"{where}: kind must be 'input' or 'output'")
        make = InputField if item["kind"] == "input" else OutputField
        options: dict[str, Any] = dict(item.get("constraints") or {})
        if "default" in item:
            options["default"] = _typed(annotation, item["default"], where)
        field = make(desc=item.get("desc"), prefix=item.get("prefix"), **options)
        spec[str(item["name"])] = (annotation, field)
    return make_signature(spec, data.get("instructions"), name=str(name))


def _typed(annotation: Any, value: Any, where: str) -> Any:
    """A JSON value back as the annotation's type (a dict back to a model...)."""
    if value is None:
        return None
    from pydantic import PydanticSchemaGenerationError, TypeAdapter, ValidationError

    try:
        return TypeAdapter(annotation).validate_python(value)
    except PydanticSchemaGenerationError:  # a type pydantic cannot check: keep the value
        return value
    except ValidationError as exc:
        raise SignatureError(
            f"{where}: saved default {value!r} is not a valid value: {exc}"
        ) from None
