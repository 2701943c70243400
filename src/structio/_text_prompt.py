"""A signature, demos and inputs as one plain string, for completion models and reading."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from structio.exceptions import FormatError
from structio.rendering.formatting import input_text
from structio.signatures.history import History
from structio.signatures.signature import Signature, unknown_fields_message

__all__ = ["prompt_string"]

SEPARATOR = "\n\n---\n\n"


def prompt_string(
    signature: type[Signature],
    demos: Sequence[Mapping[str, Any]],
    inputs: Mapping[str, Any],
) -> str:
    """Instructions, each demo and history turn as ``field: value`` lines, then the request.

    The request holds the given inputs and ends with the first output's label, empty, so a
    completion model writes the answer next. A value over several lines starts on the line
    after its label.

    Raises:
        FormatError: An input is not an input of the signature.
    """
    unknown = [name for name in inputs if name not in signature.input_fields]
    if unknown:
        raise FormatError(unknown_fields_message(signature, unknown, "input"))
    blocks = [signature.instructions.strip()]
    blocks.extend(_block(signature, demo) for demo in demos)
    for name, field in signature.input_fields.items():
        value = inputs.get(name)
        if field.annotation is History and isinstance(value, History):
            blocks.extend(_block(signature, turn) for turn in value.messages)
    request = _block(signature, {k: v for k, v in inputs.items() if not isinstance(v, History)})
    first_output = next(iter(signature.output_fields), None)
    label = f"{first_output}:" if first_output else ""
    blocks.append(f"{request}\n{label}" if request else label)
    return SEPARATOR.join(b for b in blocks if b)


def _block(signature: type[Signature], values: Mapping[str, Any]) -> str:
    lines: list[str] = []
    for name, field in signature.fields.items():
        if name not in values or values[name] is None or field.annotation is History:
            continue
        text = input_text(values[name], str_field=field.annotation is str)
        lines.append(f"{name}:\n{text}" if "\n" in text else f"{name}: {text}")
    return "\n".join(lines)
