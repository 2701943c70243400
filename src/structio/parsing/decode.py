"""The one decoding ladder: JSON-ish text to Python data, never completing a cut-off value.

Every reader that turns model text into data (a section's value, a JSON object in a
completion, a bare JSON answer) goes through `decode_text` or `decode_object`, so the same
text always decodes the same way.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from typing import Any

from structio._util.scan import MAX_DEPTH, json_region, scan_brackets, strip_fence
from structio.parsing.lenient import NO_READING, python_call_reading

__all__ = ["decode_json", "decode_object", "decode_text"]

# json.loads with strict=False builds a decoder per call; this one is built once.
_DECODER = json.JSONDecoder(strict=False)
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
        ValueError: No step could read the text, or what it read nests deeper than
            `MAX_DEPTH` (validating and reporting such a value would exhaust the stack).
    """
    # Text with this few brackets cannot nest too deep: the usual answer skips the walk.
    deep = text.count("[") + text.count("{") + text.count("(") > MAX_DEPTH
    try:  # the usual case, and the first step: plain JSON
        value = _DECODER.decode(text)
        return _shallow(value) if deep else value
    except _LITERAL_ERRORS:  # RecursionError too: deep nesting is refused, not raised
        pass
    steps: list[Callable[[str], Any]] = []
    if python:
        steps.append(ast.literal_eval)
    if repair:
        steps.append(_json_repaired)
    for step in steps:
        try:
            value = step(text)
            return _shallow(value) if deep else value
        except _LITERAL_ERRORS:
            continue
    raise ValueError("the text is not JSON")


def decode_object(text: str, *, repair: bool = True) -> dict[Any, Any] | None:
    """A ``{...}`` chunk as a dict by the ladder, or ``None`` if it is not one.

    Args:
        text: The chunk.
        repair: Let json-repair read it last (see `decode_json`).
    """
    try:
        value = decode_json(text, repair=repair)
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

    _check_depth(text)  # json-repair recurses per level and rescans the text at each
    # json-repair would read `<value>` as "value>" and `undefined` as a string: each is no
    # value, as `null` is (a required field is then missing, the others are still read).
    text = _NO_VALUE.sub(lambda m: m.group(0).replace(m.group(1), "null"), text)
    try:
        repaired = json_repair.loads(text)
    except AssertionError as error:  # its own checks fail on some text (`{'```json```[`)
        raise ValueError("json-repair could not read the text") from error
    if repaired == "" and text.strip():
        raise ValueError("json-repair found no JSON")
    _check_nothing_invented(repaired, text)
    return repaired


# A bare `<placeholder>` or JavaScript's `undefined` where a value belongs (after a key, in
# a list): the model wrote no value there, whatever json-repair would make of it.
_NO_VALUE = re.compile(r"[:\[,]\s*(<[^<>\"'\n]{1,60}>|\bundefined\b)\s*(?=[,}\]]|\Z)")


# How each empty value is written, when a model writes it: json-repair reports these for a
# key with no value (`{"a": }`) or a bracket it closed itself (`{"a": [}`), so one that the
# text does not hold was made up by the repair.
_WRITTEN_EMPTY = {
    "empty string": re.compile(r"\"\"|''"),
    "null": re.compile(r"\b(?:null|None|NULL|Null)\b"),
    "empty object": re.compile(r"\{\s*\}"),
    "empty list": re.compile(r"\[\s*\]"),
}


def _check_nothing_invented(value: Any, text: str) -> None:
    """Raise ValueError if the repaired value holds more empty values than the text writes."""
    counts = dict.fromkeys(_WRITTEN_EMPTY, 0)
    pending = [value]
    while pending:
        item = pending.pop()
        if item == "" and isinstance(item, str):
            counts["empty string"] += 1
        elif item is None:
            counts["null"] += 1
        elif isinstance(item, dict):
            counts["empty object"] += not item
            pending.extend(item.values())
        elif isinstance(item, list):
            counts["empty list"] += not item
            pending.extend(item)
    for kind, count in counts.items():
        if count and count > len(_WRITTEN_EMPTY[kind].findall(text)):
            raise ValueError(f"repairing the JSON would invent an {kind}: a value is missing")


def _check_depth(text: str) -> None:
    """Raise ValueError if the first bracketed value nests deeper than `MAX_DEPTH`."""
    starts = [i for i in (text.find("{"), text.find("[")) if i != -1]
    if starts:
        scan_brackets(text, min(starts))


def _shallow(value: Any) -> Any:
    """``value`` itself, or ValueError if its lists and dicts nest deeper than `MAX_DEPTH`."""
    if not isinstance(value, (list, dict, tuple)):
        return value
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"the value is nested deeper than {MAX_DEPTH} levels")
        children = item.values() if isinstance(item, dict) else item
        pending.extend((c, depth + 1) for c in children if isinstance(c, (list, dict, tuple)))
    return value
