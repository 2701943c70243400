"""Scanning text for brackets and quotes, as models write JSON and Python literals."""

from __future__ import annotations

import re

__all__ = ["MAX_DEPTH", "json_region", "scan_brackets", "strip_fence"]

#: The deepest nesting of brackets read from a model's text. Real answers stay far below;
#: deeper text is refused rather than given to recursive decoders that would fail or crawl.
MAX_DEPTH = 64
_OPENER = {"}": "{", "]": "["}

_FENCE_OPEN = re.compile(r"^\s*```[\w+-]*[ \t]*\n")


def strip_fence(text: str) -> str:
    """Remove a code fence around the whole text (a missing closing fence is tolerated)."""
    opened = _FENCE_OPEN.match(text)
    if not opened:
        return text
    inner = text[opened.end() :]
    # The closing fence is found from the end with string methods: a pattern searched from
    # every position (`\n?[ \t]*```\s*$`) read each run of spaces once per space in it, so
    # a fence, a newline and 100 KB of spaces took seconds (quadratic).
    body = inner.rstrip()
    if not body.endswith("```"):
        return inner
    end = len(body[:-3].rstrip(" \t"))
    return inner[: end - 1] if inner[end - 1 : end] == "\n" else inner[:end]


def json_region(text: str) -> tuple[str, bool] | None:
    """The first ``{...}`` or ``[...]`` in the text, and whether it is cut off (unclosed).

    Returns ``None`` when the text has no bracket at all.
    """
    starts = [i for i in (text.find("{"), text.find("[")) if i != -1]
    if not starts:
        return None
    start = min(starts)
    end, _ = scan_brackets(text, start)
    return (text[start : end + 1], False) if end != -1 else (text[start:], True)


def scan_brackets(text: str, start: int) -> tuple[int, int]:
    """Where the bracket at ``start`` closes (-1 if never), and its last top-level comma.

    Strings are skipped (double-quoted, or single-quoted as in Python reprs), so brackets
    and commas inside them do not count; an apostrophe between letters (``it's``) opens no
    string. A closer of the wrong kind (``[a}``) closes nothing: -1.

    Raises:
        ValueError: The brackets nest deeper than `MAX_DEPTH`.
    """
    openers: list[str] = []
    last_comma = -1
    quote: str | None = None
    i = start
    n = len(text)
    while i < n:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch == '"' or (ch == "'" and not _between_letters(text, i)):
            quote = ch
        elif ch in "{[":
            openers.append(ch)
            if len(openers) > MAX_DEPTH:
                raise ValueError(f"the value is nested deeper than {MAX_DEPTH} levels")
        elif ch in "}]":
            if not openers or openers.pop() != _OPENER[ch]:
                return -1, last_comma  # `[a}`: brackets that do not pair close nothing
            if not openers:
                return i, last_comma
        elif ch == "," and len(openers) == 1:
            last_comma = i
        i += 1
    return -1, last_comma


def open_brackets(text: str, start: int = 0) -> str | None:
    """The brackets still open at the end of strict JSON text, outermost first.

    ``None`` when the text ends inside a string, a closer does not pair, or the nesting is
    deeper than `MAX_DEPTH`. Only double quotes open strings, as in JSON.
    """
    openers: list[str] = []
    in_string = False
    i = start
    n = len(text)
    while i < n:
        ch = text[i]
        if in_string:
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            openers.append(ch)
            if len(openers) > MAX_DEPTH:
                return None
        elif ch in "}]" and (not openers or openers.pop() != _OPENER[ch]):
            return None
        i += 1
    return None if in_string else "".join(openers)


def _between_letters(text: str, i: int) -> bool:
    return text[i - 1 : i].isalnum() and text[i + 1 : i + 2].isalnum()
