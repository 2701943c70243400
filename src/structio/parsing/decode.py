"""The one decoding ladder: JSON-ish text to Python data, never completing a cut-off value.

Every reader that turns model text into data (a section's value, a JSON object in a
completion, a bare JSON answer) goes through `decode_text` or `decode_object`, so the same
text always decodes the same way.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from typing import Any

from structio._util.scan import json_region, strip_fence
from structio.parsing.lenient import NO_READING, python_call_reading

__all__ = ["decode_json", "decode_object", "decode_text"]

_LITERAL_ERRORS = (ValueError, SyntaxError, TypeError, MemoryError, RecursionError)


def decode_json(text: str, *, python: bool = True, repair: bool = True) -> Any:
    """The ladder: JSON (control characters allowed), a Python literal, then json-repair.

    Args:
        text: The text to decode, whole.
        python: Also read Python literals (``None``, ``True``, single quotes, tuples), which
            keep their exact meaning this way.
        repair: Last, let json-repair read damaged JSON (comments, trailing commas, missing
            quotes).

    Raises:
        ValueError: No step could read the text.
    """
    try:  # the usual case, and the first step: plain JSON
        return json.loads(text, strict=False)
    except ValueError:
        pass
    steps: list[Callable[[str], Any]] = []
    if python:
        steps.append(ast.literal_eval)
    if repair:
        steps.append(_json_repaired)
    for step in steps:
        try:
            return step(text)
        except _LITERAL_ERRORS:
            continue
    raise ValueError("the text is not JSON")


def decode_object(text: str) -> dict[Any, Any] | None:
    """A ``{...}`` chunk as a dict by the whole ladder, or ``None`` if it is not one."""
    try:
        value = decode_json(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def decode_text(text: str) -> Any:
    """Read JSON-ish text: JSON, a Python literal or constructor call, or repairable JSON.

    Text without brackets that is neither JSON nor a Python literal is returned as it is
    (pydantic reads ``yes`` or `` 42 `` itself). JSON that is cut off (an unclosed string,
    list or object) is refused rather than completed: its last value may be incomplete.

    Raises:
        ValueError: The JSON in the text is cut off.
    """
    try:
        return decode_json(text, repair=False)
    except ValueError:
        pass
    call = python_call_reading(text)
    if call is not NO_READING:
        return call
    region = json_region(strip_fence(text))
    if region is None:
        return text
    inner, cut_off = region
    if cut_off:
        raise ValueError(f"the value is cut off (an unclosed {inner[0]!r}); it may be incomplete")
    try:
        return decode_json(inner)
    except ValueError:
        return text


def _json_repaired(text: str) -> Any:
    import json_repair

    repaired = json_repair.loads(text)
    if repaired == "" and text.strip():
        raise ValueError("json-repair found no JSON")
    return repaired
