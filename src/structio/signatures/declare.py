"""Fields declared: a class body's annotations or a mapping's items, checked and bound.

How `SignatureMeta` and `make_signature` turn what a user wrote into bound
`SignatureField`s: annotations evaluated in the caller's namespace, types and constraints
checked, the default instructions. Knows fields, not the `Signature` class.
"""

from __future__ import annotations

import inspect
import sys
import types
import typing
from collections import ChainMap
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from structio.exceptions import SignatureError
from structio.signatures._spec import ParsedField, is_type_like, resolve_type
from structio.signatures.field import MISSING, SignatureField
from structio.typemodel.info import constraint_problem
from structio.typemodel.text import type_name

if TYPE_CHECKING:
    pass


def _from_parsed(class_name: str, parsed: ParsedField, kind: str) -> SignatureField:
    field = SignatureField("input" if kind == "input" else "output", default=parsed.default)
    return _bind_explicit(class_name, parsed.name, field, parsed.annotation, parsed.type_given)


def _from_mapping_item(
    class_name: str,
    name: Any,
    value: Any,
    custom_types: Mapping[str, Any] | None,
    caller_ns: Mapping[str, Any],
) -> SignatureField:
    if not isinstance(name, str):
        raise SignatureError(f"{class_name}: field names must be strings, not {name!r}")
    if isinstance(value, SignatureField):
        given = value.type_given
        return _bind_explicit(class_name, name, value, value.annotation if given else str, given)
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], SignatureField):
        annotation = value[0]
        if isinstance(annotation, str):
            annotation = resolve_type(
                annotation, custom_types=custom_types, caller_ns=caller_ns, where=f"field `{name}`"
            )
        return _bind_explicit(class_name, name, value[1], annotation, True)
    raise SignatureError(
        f"{class_name}: field `{name}` must be given as (type, InputField()/OutputField()) "
        f"or as a bare InputField()/OutputField(), not {value!r}"
    )


def _default_instructions(
    inputs: Mapping[str, SignatureField], outputs: Mapping[str, SignatureField]
) -> str:
    ins = ", ".join(f"`{n}`" for n in inputs)
    outs = ", ".join(f"`{n}`" for n in outputs)
    return f"Given the fields {ins}, produce the fields {outs}."


def _own_annotations(cls: type, namespace: Mapping[str, Any]) -> dict[str, Any]:
    raw = namespace.get("__annotations__")
    if isinstance(raw, dict):
        return dict(raw)
    try:
        return dict(inspect.get_annotations(cls))
    except NameError:  # Python 3.14+: lazily evaluated annotations naming later classes
        import annotationlib  # type: ignore[import-not-found, unused-ignore]

        return dict(annotationlib.get_annotations(cls, format=annotationlib.Format.STRING))


def _check_namespace(
    class_name: str,
    kept: Mapping[str, Any],
    annotations: Mapping[str, Any],
    declared: Mapping[str, SignatureField],
) -> None:
    for attr, annotation in annotations.items():
        if attr in declared or _is_classvar(annotation) or attr.startswith("_"):
            continue
        value = kept.get(attr, MISSING)
        shown = type_name(annotation) if not isinstance(annotation, str) else annotation
        raise SignatureError(
            f"field `{attr}` in {class_name} must be declared with InputField() or "
            f"OutputField() (found {'no value' if value is MISSING else repr(value)}); "
            f"write `{attr}: {shown} = InputField()` or `= OutputField()`"
        )
    for attr, value in kept.items():
        if attr.startswith("_") or attr in annotations:
            continue
        if callable(value) or isinstance(value, (classmethod, staticmethod, property)):
            continue
        hint = ""
        if type(value).__name__ == "FieldInfo":
            hint = " (pydantic's Field() is not a signature field)"
        raise SignatureError(
            f"class attribute `{attr}` in {class_name} is not declared with InputField() or "
            f"OutputField(){hint}; write `{attr}: str = InputField()` or `= OutputField()`, "
            "or annotate a constant with ClassVar"
        )


def _is_classvar(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    return annotation is ClassVar or typing.get_origin(annotation) is ClassVar


def _bind(
    class_name: str,
    name: str,
    field: SignatureField,
    annotations: Mapping[str, Any],
) -> SignatureField:
    if name not in annotations:
        return _bind_explicit(class_name, name, field, str, False)
    annotation = annotations[name]
    if isinstance(annotation, str):
        annotation = _eval_annotation(class_name, name, annotation)
    return _bind_explicit(class_name, name, field, annotation, True)


def _eval_annotation(class_name: str, name: str, text: str) -> Any:
    # A string annotation (``from __future__ import annotations``) is the user's own code, so
    # it is evaluated as Python would; locals of the defining scope are searched too, so that
    # classes defined inside a function resolve.
    frame: types.FrameType | None = sys._getframe(0)
    while frame is not None and _is_structio_frame(frame.f_globals):
        frame = frame.f_back
    namespace: Mapping[str, Any] = (
        ChainMap(frame.f_locals, frame.f_globals) if frame is not None else {}
    )
    try:
        return eval(text, dict(namespace))  # noqa: S307 - annotations are the caller's own code
    except Exception as exc:
        raise SignatureError(
            f"cannot resolve the annotation {text!r} of field `{name}` in {class_name}: {exc}"
        ) from None


def _bind_explicit(
    class_name: str, name: str, field: SignatureField, annotation: Any, type_given: bool
) -> SignatureField:
    if not name.isidentifier() or name.startswith("_"):
        raise SignatureError(
            f"{class_name}: {name!r} is not a valid field name (a Python identifier not "
            "starting with '_')"
        )
    _check_type(class_name, name, annotation)
    desc = field.desc
    if desc is not None and desc == f"${{{name}}}":
        desc = None  # DSPy's placeholder description, which is never shown to the model
    bound = field.replace(name=name, annotation=annotation, type_given=type_given, desc=desc)
    if bound.constraints:
        _check_constraints(class_name, bound)
    return bound


def _check_type(class_name: str, name: str, annotation: Any) -> None:
    if not is_type_like(annotation):
        raise SignatureError(
            f"field `{name}` in {class_name} has annotation {annotation!r}, which is not a type; "
            "use a class or a typing construct such as list[str] or Literal['a', 'b']"
        )


def _check_constraints(class_name: str, field: SignatureField) -> None:
    problem = constraint_problem(field.annotation, field.constraints)
    if problem:
        raise SignatureError(f"field `{field.name}` in {class_name}: constraints {problem}")


def _is_structio_frame(f_globals: Mapping[str, Any]) -> bool:
    module = f_globals.get("__name__", "")
    return isinstance(module, str) and (module == "structio" or module.startswith("structio."))


def _caller_namespace() -> Mapping[str, Any]:
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and _is_structio_frame(frame.f_globals):
        frame = frame.f_back
    if frame is None:
        return {}
    return ChainMap(frame.f_locals, frame.f_globals)


def _caller_module(caller_ns: Mapping[str, Any]) -> str:
    module = caller_ns.get("__name__") if caller_ns else None
    return module if isinstance(module, str) else __name__
