"""Text readers for values as models write them: numbers with units, yes/no, labels, lists.

Each reader returns the one reading of the text, or `NO_READING` when there is none or more
than one: ``42 items`` is 42, but ``12 or 13`` is refused, never guessed. `parsing.read`
decides when to use them; these functions only read text.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Final

__all__ = [
    "NO_READING",
    "bool_reading",
    "label_forms",
    "list_items",
    "number_reading",
    "python_call_reading",
]


class _NoReading:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_READING"


NO_READING: Final[Any] = _NoReading()

_DECOR = r"[*_`\"']*"  # markdown and quotes; not "~", which hedges ("~40")
# A short label before the value: "Answer:", "Final answer:", "Urgency level -".
_LABEL = r"(?:[A-Za-z][A-Za-z _-]{0,29}\s*[:=]\s*|(?:the\s+)?(?:final\s+)?answer\s+is\s+)?"
_NUMBER = r"[-+\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+\u2212]?\.\d+"
_CURRENCY = r"(?:[$€£¥₹]|USD|EUR|GBP)"
# A unit or a few words after the number: "30 items", "12 kg", "45%", "5 years old".
_UNIT = r"(?:%|[^\W\d_][^\W\d]*\.?(?:\s+[^\W\d_][^\W\d]*\.?){0,2})"
_NUMBER_TEXT = re.compile(
    rf"^{_LABEL}{_DECOR}(?:{_CURRENCY}\s*)?{_DECOR}({_NUMBER}){_DECOR}\s*"
    rf"(?:{_CURRENCY}|{_UNIT})?{_DECOR}[.!]?$",
    re.IGNORECASE,
)


# The longest text read as a lone number with its decoration, label and unit.
_MAX_NUMBER_TEXT = 120


def number_reading(text: str) -> Any:
    """``Answer: 42``, ``**7**``, ``30 items``, ``$1,234.50`` -> the number's text, cleaned.

    Only a lone number with decoration around it is read; text with two numbers or with
    words that are not a label or a unit has no single reading.
    """
    stripped = text.strip()
    if len(stripped) > _MAX_NUMBER_TEXT:
        return NO_READING  # no lone number is written this long; and the pattern stays cheap
    match = _NUMBER_TEXT.match(stripped)
    if not match:
        return NO_READING
    return match.group(1).replace(",", "").replace("\u2212", "-")


_BOOL_TEXT = re.compile(
    rf"^(?:[A-Za-z][A-Za-z _-]{{0,29}}:\s*)?{_DECOR}(yes|no|true|false|y|n){_DECOR}"
    r"(?:$|[\s.,!;:\u2014\u2013-]+(.*)$)",
    re.IGNORECASE | re.DOTALL,
)
_HEDGE = re.compile(r"^(?:or|and|nor|/)\b", re.IGNORECASE)


def bool_reading(text: str) -> Any:
    """``Yes.``, ``No, because ...``, ``TRUE``, ``**yes**`` -> True/False; ``yes/no`` -> none."""
    match = _BOOL_TEXT.match(text.strip())
    if not match:
        return NO_READING
    rest = (match.group(2) or "").strip()
    if _HEDGE.match(rest):
        return NO_READING  # "yes or no", "true and false": two answers, no reading
    return match.group(1).lower() in ("yes", "true", "y")


_LITERAL_WRAPPER = re.compile(r"^(?:Literal|str)\[(.*)\]$", re.DOTALL)
_LABEL_PREFIX = re.compile(r"^[A-Za-z][A-Za-z _-]{0,29}\s*:\s*")


def label_forms(text: str) -> list[str]:
    """The text as a label might be meant: decoration, quotes and wrappers removed.

    ``**Billing**.`` gives ``Billing``; ``Category: 'bug'`` gives ``bug`` (and the whole
    text); ``Literal['x']`` gives ``x``; ``Urgency.HIGH`` gives ``HIGH``.
    """
    forms: list[str] = []

    def add(candidate: str) -> None:
        candidate = candidate.strip().strip("*_`~").strip().rstrip(".,!;:").strip()
        wrapped = _LITERAL_WRAPPER.match(candidate)
        if wrapped:
            candidate = wrapped.group(1).strip()
        if len(candidate) >= 2 and candidate[0] == candidate[-1] and candidate[0] in "'\"`":
            candidate = candidate[1:-1].strip()
        if candidate and candidate not in forms:
            forms.append(candidate)
        dotted = candidate.rsplit(".", 1)
        if len(dotted) == 2 and dotted[0].isidentifier() and dotted[1].isidentifier():
            forms.append(dotted[1])  # EnumName.MEMBER

    stripped = text.strip()
    add(stripped)
    prefixed = _LABEL_PREFIX.match(stripped)
    if prefixed:
        add(stripped[prefixed.end() :])
    return forms


# Matched against a stripped line, so no two repetitions compete for the same spaces.
_BULLET = re.compile(r"(?:[-*•+]|\d{1,3}[.)])\s+(.*)", re.DOTALL)


def list_items(text: str) -> Any:
    """Bulleted or numbered lines, one item per line, or ``a, b, c`` -> the items as text.

    A single line without commas is no list (it may be prose, such as a refusal).
    """
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return NO_READING
    bullets = [_BULLET.fullmatch(line.strip()) for line in lines]
    if all(bullets):
        return [_clean_item(m.group(1)) for m in bullets if m]
    if any(bullets):
        return NO_READING  # a mix of bullets and prose: no single reading
    if len(lines) > 1:
        return [_clean_item(line) for line in lines]
    if "," in lines[0]:
        items = [_clean_item(part) for part in lines[0].split(",")]
        return items if all(items) else NO_READING
    return NO_READING


def _clean_item(item: str) -> str:
    item = item.strip().rstrip(",;").strip().strip("*_`~").strip()
    if len(item) >= 2 and item[0] == item[-1] and item[0] in "'\"":
        item = item[1:-1]
    return item


def python_call_reading(text: str) -> Any:
    """``Patient(name='Al', age=3)`` -> ``{"name": "Al", "age": 3}`` (nested calls too)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return NO_READING
    try:
        return _call_value(tree.body, top=True)
    except ValueError:
        return NO_READING


def _call_value(node: ast.expr, *, top: bool = False) -> Any:
    if isinstance(node, ast.Call) and not node.args:
        if not isinstance(node.func, (ast.Name, ast.Attribute)):
            raise ValueError("not a constructor call")
        return {kw.arg: _call_value(kw.value) for kw in node.keywords if kw.arg is not None}
    if top:
        raise ValueError("not a constructor call")
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_call_value(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        return {
            _call_value(k): _call_value(v) for k, v in zip(node.keys, node.values, strict=True) if k
        }
    return ast.literal_eval(node)
