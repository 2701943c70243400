"""Inputs of a call checked against their declared types, and converted where declared.

An input declared as a media or tool type (`Image`, `list[Tool]`...) given as a URL, a path
or a function becomes that type; any other input is checked, never changed
(`check_input_types`).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

from structio.adapters.native import tool_types
from structio.exceptions import FormatError
from structio.media import Media
from structio.signatures.field import SignatureField
from structio.signatures.history import History
from structio.signatures.signature import Signature
from structio.typemodel.info import type_info

__all__ = ["check_input_types", "coerced", "holds_value_types", "input_texts"]


def check_input_types(signature: type[Signature], inputs: Mapping[str, Any] | None) -> None:
    """Raise `FormatError` for an input value that does not fit its declared type.

    Checked as pydantic checks in lax mode (``"3"`` fits ``int``; ``3`` does not fit
    ``str``), with the field's constraints; the value sent is the one given, unchanged.
    Inputs the adapters convert themselves (`History`, media and tool types) and names that
    are not inputs (the adapter reports those) are left to the adapter.

    Raises:
        FormatError: Naming the field, its type, the value and why it does not fit.
    """
    if not inputs:
        return
    fields = signature.input_fields
    for name, value in inputs.items():
        field = fields.get(name)
        if field is None:
            continue
        annotation = field.annotation
        if (annotation is str and type(value) is str) or annotation is Any:
            continue  # the usual input: nothing to check
        if annotation is History or holds_value_types(annotation):
            continue
        info = type_info(annotation, tuple(field.constraints.items()))
        try:
            info.validator  # noqa: B018 - built here to tell a type pydantic cannot check
        except Exception:  # an arbitrary class: pydantic has no schema for it
            if isinstance(annotation, type) and not isinstance(value, annotation):
                problem = f"not an instance of {annotation.__name__}"
                raise FormatError(
                    _input_type_message(signature, name, info.name, value, problem)
                ) from None
            continue
        checked = value
        if isinstance(value, Mapping) and not isinstance(value, dict):
            # Checked as the dict of its values, read key by key: pydantic would call the
            # value's own `items()`, which a prediction's output of that name hides.
            checked = {key: value[key] for key in value}
        try:
            info.validate(checked)
        except ValueError as problem:
            raise FormatError(
                _input_type_message(signature, name, info.name, value, str(problem))
            ) from None


def _input_type_message(
    signature: type[Signature], name: str, type_text: str, value: Any, problem: str
) -> str:
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return (
        f"input `{name}` of {signature.__name__} must be {type_text}, not "
        f"{type(value).__name__} {shown}: {problem} (pass check_inputs=False to send values "
        "as they are)"
    )


def holds_value_types(annotation: Any) -> bool:
    """Whether an annotation names a media or tool type anywhere in it (``list[Image]``)."""
    # On 3.10 `list[int]` passes isinstance(..., type), but is no class to issubclass.
    if isinstance(annotation, type) and typing.get_origin(annotation) is None:
        if issubclass(annotation, Media):
            return True
        types = tool_types()
        if types is not None and issubclass(annotation, types[0]):
            return True
    return any(holds_value_types(arg) for arg in typing.get_args(annotation))


def coerced(
    sig: type[Signature],
    fields: tuple[tuple[str, SignatureField], ...],
    values: Mapping[str, Any],
) -> Mapping[str, Any]:
    """Inputs of a call, a demo or a history turn as their declared media or tool types.

    A URL or a path becomes an `Image` (`Audio`, `File`), a function a `Tool`.
    """
    if not fields:
        return values
    changed: dict[str, Any] | None = None
    for name, field in fields:
        value = values.get(name)
        if value is None:
            continue
        try:
            converted = type_info(field.annotation).validate(value)
        except ValueError as exc:
            raise FormatError(f"input `{name}` of {sig.__name__}: {exc}") from None
        if converted is not value:
            if changed is None:
                changed = dict(values)
            changed[name] = converted
    return values if changed is None else changed


def input_texts(inputs: Mapping[str, Any]) -> tuple[str, ...]:
    """The texts of the inputs a model may repeat: strings, and strings in lists."""
    found: list[str] = []
    for value in inputs.values():
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(v for v in value if isinstance(v, str))
    return tuple(found)
