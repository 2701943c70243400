"""What the adapters say of a signature's fields.

Their descriptions, which outputs take any text, and what a skeleton of ``{name}``
placeholders writes in each output's place (`placeholder_texts`).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

from structio.parsing.found import PromptText
from structio.signatures.field import SignatureField
from structio.signatures.signature import Signature
from structio.typemodel.info import type_info

__all__ = ["describe_fields", "field_names", "placeholder_texts", "text_outputs"]


def describe_fields(fields: Mapping[str, SignatureField]) -> str:
    """Numbered lines, one per field: its name, type, description and constraints."""
    lines = []
    for i, (name, field) in enumerate(fields.items(), 1):
        line = f"{i}. `{name}` ({type_info(field.annotation).name}): {field.desc or ''}"
        for klass, description in _type_descriptions(field.annotation):
            line += f"\n    Type description of {klass.__name__}: {description}"
        if field.constraints:
            line += f"\nConstraints: {field.constraints_text}"
        lines.append(line)
    return "\n".join(lines).strip()


def _type_descriptions(annotation: Any) -> list[tuple[type, str]]:
    """The classes inside an annotation that describe themselves to the model, and how.

    A class with a ``prompt_description()`` classmethod (`ToolCalls`) gets a ``Type
    description of`` line under its field, once, as DSPy writes one for its types.
    """
    found: list[tuple[type, str]] = []
    pending = [annotation]
    seen: set[int] = set()
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        describe = (
            getattr(current, "prompt_description", None)
            if isinstance(current, type) and typing.get_origin(current) is None
            else None
        )
        if describe is not None:
            text = describe()
            if text:
                found.append((current, text))
        pending.extend(typing.get_args(current))
    return found


def field_names(fields: Mapping[str, Any]) -> str:
    """The fields' names in backticks, comma-separated (``(none)`` for no field)."""
    return ", ".join(f"`{n}`" for n in fields) or "(none)"


def text_outputs(signature: type[Signature]) -> dict[str, bool]:
    """Each output, and whether any text at all would be a valid value of it.

    Such an output (``str``, ``Optional[str]``, a union with ``str``, ``Any``) never takes a
    completion's whole text as its value: a refusal would become the answer.
    """
    cache = signature.__structio_cache__
    found: dict[str, bool] | None = cache.get("text_outputs")
    if found is None:
        found = cache["text_outputs"] = {
            name: type_info(f.annotation).accepts_any_text
            for name, f in signature.output_fields.items()
        }
    return found


def placeholder_texts(signature: type[Signature]) -> dict[str, PromptText]:
    """The type note a prompt showing each output as `TypeInfo.placeholder` wrote.

    ``{name}``, then its type note (``# note: the value you produce ...``), as the system
    message of `ChatAdapter`, `JSONAdapter` and `XMLAdapter` shows an output (computed once
    per signature). See `structio.parsing.found.set_aside`; the ``{name}`` placeholder itself
    (with its note or without) every reader sets aside as no value already
    (`structio.parsing.found.is_placeholder`).
    """
    cache = signature.__structio_cache__
    found: dict[str, PromptText] | None = cache.get("placeholder_texts")
    if found is None:
        found = cache["placeholder_texts"] = {}
        for name, f in signature.output_fields.items():
            hint = type_info(f.annotation).placeholder(name)[len(name) + 2 :]
            if hint:  # a `str` output's placeholder has no note after it
                found[name] = PromptText(hint=hint)
    return found
