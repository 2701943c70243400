"""``Field: value`` lines: outputs written as labels, one reader of `parsing.locate`."""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterable, Mapping

from structio.parsing.found import _TAIL_DECORATION_CHARS, Found, is_placeholder, norm, two_values

__all__ = ["find_labels"]


@functools.lru_cache(maxsize=256)
def _label_line(names: tuple[str, ...]) -> re.Pattern[str]:
    """A line that labels one of ``names``: ``Answer: 4``, ``**Answer** - 4``, ``### Answer``.

    The label is a name however its words are separated or cased (`norm`), maybe after
    bullets, a number, a heading's ``#`` or emphasis; then a colon, ``=``, a spaced dash,
    or nothing more on the line (the value is on the lines after it). No two neighbouring
    runs of the pattern take the same characters, so a long run of ``*`` is not tried at
    every split point.
    """
    spelled = sorted({norm(n) for n in names if norm(n)}, key=len, reverse=True)
    alternatives = "|".join(r"[ \t_\-]*".join(re.escape(c) for c in name) for name in spelled)
    return re.compile(
        rf"^[ \t*_#>\-]*(?:\d{{1,3}}[.)][ \t]*[*_`]*)?({alternatives})[ \t*_`]*"
        r"(?:[:=]|(?<=[ \t])[\-\u2013\u2014][ \t]|$)[ \t*_`]*([^\n]*)",
        re.IGNORECASE | re.MULTILINE,
    )


def find_labels(
    text: str,
    names: Iterable[str],
    outputs: Mapping[str, bool],
    narrow: Collection[str] = (),
) -> Found | None:
    """Read ``Field: value`` lines; only when every required output is labelled that way.

    ``outputs`` maps each output name to whether it is required. A label may be written in
    markdown (``**Answer:**``, ``- Answer:``, ``### Answer`` with the value below) or with
    ``=`` or a spaced dash; a value runs on to the next labelled line.
    An output labelled twice with two different values is a conflict (`Found.conflicts`).

    When one required output has no label, it takes the text before the first label only
    if that is a single line and the output is ``narrow`` (no text at all would be a valid
    value of it, so the line is checked by its type): one candidate, one reading.
    """
    by_norm = {norm(n): n for n in names}
    # Each value as its label line's rest and where the lines after it start; it ends where
    # the next line labelled with a field starts.
    starts: dict[str, tuple[str, int]] = {}
    ends: dict[str, int] = {}
    current: str | None = None
    # An output labelled again: its name, its value there (as in `starts`) and its end.
    again: list[tuple[str, tuple[str, int], int]] = []
    first_label = -1
    for match in _label_line(tuple(by_norm.values())).finditer(text):
        name = by_norm.get(norm(match.group(1)))
        if name is None:
            continue
        if first_label == -1:
            first_label = match.start()
        if current is not None:
            ends[current] = match.start()
        elif again and again[-1][2] == -1:
            again[-1] = (*again[-1][:2], match.start())
        start = (match.group(2).rstrip(_TAIL_DECORATION_CHARS), match.end() + 1)
        current = name if name not in starts else None
        if current is not None:
            starts[current] = start
        else:
            again.append((name, start, -1))
    found = Found(how="labels")
    for name in outputs:
        if name in starts:
            found.texts[name] = _labelled(text, starts[name], ends.get(name, -1))
    for name, at, end in again:
        value = _labelled(text, at, end)
        first = found.texts.get(name)
        if first is not None and value != first and not is_placeholder(value, name):
            del found.texts[name]
            found.conflicts[name] = (first, two_values(first, value))
    if starts:  # a value runs on to the next label, so the last runs to the end
        found.open.add(next(reversed(starts)))
    missing = [
        name
        for name, needed in outputs.items()
        if needed and name not in found.texts and name not in found.conflicts
    ]
    if len(missing) == 1 and found.texts and missing[0] in narrow:
        before = [line for line in text[:first_label].splitlines() if line.strip()]
        if len(before) == 1:
            found.texts[missing[0]] = before[0].strip()
            missing = []
    if not (found.texts or found.conflicts) or missing:
        return None
    return found


def _labelled(text: str, start: tuple[str, int], end: int) -> str:
    """A labelled value: its label line's rest, then its lines up to ``end`` (-1: all)."""
    first, rest = start
    end = len(text) + 1 if end == -1 else end
    return (first + "\n" + text[rest : end - 1] if rest < end else first).strip()
