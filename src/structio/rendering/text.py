"""Values as prompt text: the one rule for how a value is written into a prompt."""

from __future__ import annotations

import json
import textwrap
import typing
from typing import Any

from structio._util.data import jsonable
from structio.media import markers

__all__ = ["format_value", "prompt_text"]

_ENCODER = json.JSONEncoder(ensure_ascii=False)


def prompt_text(value: Any) -> str:
    """A value as prompt text: strings verbatim, scalars via ``str``, the rest as JSON."""
    t = type(value)
    if t is str:
        return typing.cast(str, value)
    if value is None or t is bool or t is int or t is float:
        return str(value)
    # A model or container holding an image (audio, file) writes a marker in its place,
    # which the prompt part then turns into a content part.
    with markers():
        data = jsonable(value)
    if isinstance(data, (dict, list, tuple)):
        return _ENCODER.encode(data)
    return str(data)


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
