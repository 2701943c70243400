"""What the readers of `parsing.locate` return, and the name rules they share.

`Found` (where each output's text is), `norm` (a field name as drift-proof text), an
output's ``{name}`` placeholder echoed as a value (`is_placeholder`) and the wording of an
output written twice (`two_values`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Found", "is_placeholder", "norm", "two_values"]

_NORM = re.compile(r"[\s_\-]+")


@functools.lru_cache(maxsize=4096)
def norm(name: str) -> str:
    """A field name as drift-proof text: ``Needs-Human``, ``needs human``, ``needsHuman``."""
    return _NORM.sub("", name).lower()


@functools.lru_cache(maxsize=1024)
def _by_norm(names: tuple[str, ...]) -> dict[str, str]:
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
    if "{" not in value:  # most values: no need to strip and match
        return False
    placeholder = _PLACEHOLDER.match(value.strip())
    return placeholder is not None and norm(placeholder.group(1)) == norm(name)
