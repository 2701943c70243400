"""What the readers of `parsing.locate` return, and the name rules they share.

`Found` (where each output's text is), `norm` (a field name as drift-proof text), whether
text may spell an output's name (`_may_name`, `_may_mark`: the cheap test before a search), an
output's ``{name}`` placeholder echoed as a value (`is_placeholder`), the prompt's own text
copied into a value (`PromptText`, `set_aside`) and the wording of an output written twice
(`two_values`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Found", "PromptText", "is_placeholder", "norm", "set_aside", "two_values"]

_NORM = re.compile(r"[\s_\-]+")


def norm(name: str) -> str:
    """A field name as drift-proof text: ``Needs-Human``, ``needs human``, ``needsHuman``."""
    # No cache: one keyed by name misses on every call once more names are alive than it
    # holds (ten thousand signatures), and the common name, letters, digits and
    # underscores, costs about what a cache hit does.
    plain = name.replace("_", "")
    if plain.isalnum():  # no whitespace, no hyphen left to take out
        return plain.lower()
    return _NORM.sub("", name).lower()


def _by_norm(names: Iterable[str]) -> dict[str, str]:
    """Each name by its `norm` (computed per call: see `norm` for why no cache)."""
    return {norm(n): n for n in names}


@dataclass
class Found:
    """Where a reader found the outputs.

    Attributes:
        texts: For each output field, the text of its value (or a decoded JSON value).
        cut_off: Output fields the completion may have cut off (JSON that ends early): the
            one being written and any not written yet. None of them gets a value.
        how: Which reader found them, for error messages.
        open: Output fields whose text runs to the end of the completion with nothing to
            close it (no marker after a section, no closing bracket): had the model been
            stopped there, the value might be incomplete.
        weak: Output fields read from a section whose marker does not start its line (no
            section with a marker that does was found): more text may still bring one,
            which would be read instead.
        conflicts: Output fields given two different values (two sections, or a JSON key
            written twice), each with ``(the text shown, why)``: no value is read for them.
    """

    texts: dict[str, Any] = field(default_factory=dict)
    cut_off: set[str] = field(default_factory=set)
    how: str = ""
    open: set[str] = field(default_factory=set)
    weak: set[str] = field(default_factory=set)
    conflicts: dict[str, tuple[str, str]] = field(default_factory=dict)


_TAIL_DECORATION_CHARS = " \t\n\r\f\v*_`#~"


# The prompt's `{name}` placeholder echoed as a value: alone, with the prompt's type note,
# or as the first line of a template the model repeated before writing its answer.
_BRACE_FIRST = re.compile(r"\s*\{")
_PLACEHOLDER = re.compile(r"^\{(\w+)\}(?:[ \t]+#[ \t]*note:[^\n]*)?(?:\n.*)?$", re.DOTALL)


def two_values(first: str, second: str) -> str:
    """Why an output written twice, with two different values, has none."""
    return (
        f"it is written twice, with two different values ({_clipped(first)!r} and "
        f"{_clipped(second)!r}), and no one of them is the answer"
    )


def _clipped(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def is_placeholder(value: str, name: str) -> bool:
    """Whether ``value`` is output ``name``'s placeholder from the prompt (``{name}``)."""
    # Most values do not start with a brace: no need to copy them stripped (1 MB of text).
    if _BRACE_FIRST.match(value) is None:
        return False
    placeholder = _PLACEHOLDER.match(value.strip())
    return placeholder is not None and norm(placeholder.group(1)) == norm(name)


@dataclass(frozen=True)
class PromptText:
    """What an adapter's prompt wrote in the place of one output's value.

    Attributes:
        hint: The text the prompt wrote after the value's placeholder (the type note,
            ``# note: the value you produce ...``); ``""`` for none.
        placeholders: The texts the prompt showed as the value itself, beyond the
            ``{name}`` every reader sets aside already (`is_placeholder`).
        optional: Whether the output may be left without a value (it admits ``None`` or
            has a default).
    """

    hint: str = ""
    placeholders: frozenset[str] = frozenset()
    optional: bool = False
    _words: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _first: str | None = field(init=False, repr=False, compare=False)
    _kept: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        words = tuple(self.hint.split())
        object.__setattr__(self, "_words", words)
        # The hint's first word, searched for in a value: most values hold none of it.
        object.__setattr__(self, "_first", words[0] if words else None)
        # Only an optional output's placeholder means no value; a required one's is refused.
        object.__setattr__(self, "_kept", self.optional and bool(self.placeholders))

    def value_of(self, raw: str) -> Any:
        """``raw`` without the prompt's own text (see `set_aside`), or ``raw`` itself."""
        if self._kept and raw.strip() in self.placeholders:
            return None  # the prompt's placeholder kept: no value, left to the default
        words = self._words
        if not words:
            return raw
        # The hint can only be the value's last words: one split from the right, O(n).
        parts = raw.rsplit(maxsplit=len(words))
        if len(parts) > len(words) and tuple(parts[1:]) == words:
            return parts[0].rstrip()
        return raw


def set_aside(found: Found, texts: Mapping[str, PromptText]) -> Found:
    """Take the prompt's own text out of the values ``found`` holds (in place).

    The one rule for the prompt's text copied into an answer: a value followed by the hint
    the prompt wrote after that output's placeholder, word for word (whitespace aside), is
    the value before it; an optional output holding exactly a placeholder the prompt showed
    for it has no value. Any other text is left as written (another output's hint, a hint
    changed by one word, a required output's placeholder), for the usual rules to read.

    Args:
        found: Where a reader found the outputs.
        texts: What the adapter's prompt wrote for each output (outputs it wrote nothing
            for are absent).
    """
    values = found.texts
    for name, text in texts.items():
        raw = values.get(name)
        # Most values hold neither the hint's first word nor can be the placeholder.
        if type(raw) is str and (text._kept or (text._first or "\0") in raw):
            values[name] = text.value_of(raw)
    return found


# A key is spelled in the text of its chunk: its letters and digits are there in order, with
# at most quotes, spaces and punctuation between them (`"ans" "wer"` is one Python string).
# The bytes that are neither: deleted from the chunk's ASCII bytes, they leave its spelling.
_NOT_SPELLING = bytes(b for b in range(128) if not chr(b).isdigit() and not chr(b).islower())
# What a key that is no string prints as (`1e-07`, `-1e999` as `inf`, `1j`, `...` as
# `Ellipsis`): text that spells no such name may still hold it as a number.
_NUMBER_SPELLING = re.compile(r"[0-9aefijn]+|ellipsis")


@functools.lru_cache(maxsize=1024)
def _spellings(names: tuple[str, ...]) -> tuple[str, ...] | None:
    """The outputs' normalized names as `_may_name` looks for them, or ``None`` if it cannot.

    Only ASCII names are looked for (lowercasing other letters may change their number or,
    for a final sigma, depend on the letters around them), and none that a number's key
    prints as.
    """
    if any(not n.isascii() or _NUMBER_SPELLING.fullmatch(n) for n in names):
        return None
    return names


def _may_name(chunk: str, spellings: tuple[str, ...]) -> bool:
    r"""Whether a key read from ``chunk`` by any step of the ladder may name an output.

    A key that names an output is the output's name once case, spaces, ``_`` and ``-`` are
    set aside (`norm`); every step reads its keys from the chunk's own characters, so the
    chunk's letters and digits hold that name in order. An escape (``\u0061nswer``)
    writes a letter with other characters: a chunk with a backslash may name anything.
    """
    if "\\" in chunk:
        return True
    lowered = chunk.lower()
    if any(name in lowered for name in spellings):  # spelled as it is, the usual case
        return True
    # Other characters than ASCII letters and digits only separate: dropping them and then
    # the other ASCII bytes leaves the letters and digits, in order (C speed, not a regex).
    letters = lowered.encode("ascii", "ignore").translate(None, _NOT_SPELLING).decode()
    return any(name in letters for name in spellings)


def _may_mark(text: str, outputs: tuple[str, ...]) -> bool:
    """Whether ``text`` may hold a key, tag or label of an output (see `_marks`).

    Their patterns are compiled per set of names, and a bounded cache of them misses on
    every call once more signatures are alive than it holds: text that cannot match them
    (the usual input, which names no output) is not searched. Each needs the output's
    letters and digits in order, as `_may_name` looks for them; only ASCII text and names
    are judged (case-insensitive matching takes some other letters for ASCII ones).
    """
    if not text.isascii() or not all(name.isascii() for name in outputs):
        return True
    return _may_name(text, tuple(norm(name) for name in outputs))
