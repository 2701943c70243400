"""Text readers for values as models write them: numbers with units, yes/no, labels, lists.

Each reader returns the one reading of the text, or `NO_READING` when there is none or more
than one: ``42 items`` is 42, but ``12 or 13`` is refused, never guessed. `parsing.read`
decides when to use them; these functions only read text.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from typing import Any, Final

from structio._util.warn import ensure_filter

__all__ = [
    "NO_READING",
    "bool_reading",
    "final_label",
    "label_forms",
    "list_items",
    "names_only",
    "number_reading",
    "parse_python",
    "python_call_reading",
    "without_remark",
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
# A unit or a few words after the number: "30 items", "12 kg", "5 years old" (and "45%",
# "4 million", "4 or more", which `_NOT_A_UNIT` then refuses).
_UNIT = r"(?:%|[^\W\d_][^\W\d]*\.?(?:\s+[^\W\d_][^\W\d]*\.?){0,2})"
_NUMBER_TEXT = re.compile(
    rf"^{_LABEL}{_DECOR}(?:{_CURRENCY}\s*)?{_DECOR}({_NUMBER}){_DECOR}\s*"
    rf"(?:{_CURRENCY}|({_UNIT}))?{_DECOR}[.!]?$",
    re.IGNORECASE,
)
# Words that scale a number (`4 million`, `4k`, `2 dozen`, `4x`, `90%`, per cent), and a
# bare `e` (`4e`, an exponent with no digits): the number alone is another value, and
# scaling it would be a guess about units, so such text has no reading.
_SCALE = (
    r"k|m|b|bn|mn|mil|mill|mio|mln|thousands?|millions?|billions?|trillions?|hundreds?"
    r"|dozens?|lakhs?|crores?|grand|thou|x|times|fold|percent|percentage|pct|per\s*cent"
)
# Words that hedge a number (`4 or more`, `4 at least`, `4ish`, `40 odd`, `4 max`).
_HEDGE_WORDS = (
    r"or|and|nor|plus|more|less|fewer|least|most|max|maximum|min|minimum|approx|approximately"
    r"|roughly|about|around|ish|odd|some|something|tops|nearly|almost|over|under|above|below"
    r"|upwards?|up|est|estimated|circa|ca|maybe|probably|possibly|perhaps|likely|not|to"
)
# Words that raise a number to a power (`5 squared`, `2 to the power 3`, `10 raised`): the
# number alone is its base, another value.
_POWER = r"squared|cubed|powers?|raised|exponent|exp|sq|cu"
_NOT_A_UNIT = re.compile(rf"%|\b(?:{_SCALE}|{_POWER}|{_HEDGE_WORDS}|e)\b", re.IGNORECASE)
# A remark after a number that scales it (`4 (in millions)`); `e` is no word there (e.g.).
_SCALE_REMARK = re.compile(rf"[%\u00d7^]|\*\*|\b(?:{_SCALE}|{_POWER})\b", re.IGNORECASE)


def _holds_number_form(text: str) -> bool:
    """Whether ``text`` holds a character with a numeric value: a digit, ``½``, ``²``, ``Ⅻ``.

    Python's regular expressions take such characters for word characters (`str.isalnum`),
    so ``76½`` would read as 76 with the unit ``½``, and ``10²`` as 10: any of them after a
    number changes its value (a fraction added, a power), so the number alone is no reading.
    """
    return any(
        unicodedata.numeric(c, None) is not None or unicodedata.category(c) in ("No", "Nl")
        for c in text
    )


# The longest text read as a lone number with its decoration, label and unit.
_MAX_NUMBER_TEXT = 120


def number_reading(text: str) -> Any:
    """``Answer: 42``, ``**7**``, ``30 items``, ``$1,234.50`` -> the number's text, cleaned.

    Only a lone number with decoration around it is read; text with two numbers or with
    words that are not a label or a unit has no single reading, and neither has a number
    with a word that scales it (``4 million``, ``4k``, ``2 dozen``, ``4x``, ``90%``), raises
    it to a power (``5 squared``, ``10²``), adds a Unicode number form to it (``76½``) or
    hedges it (``4 or more``, ``4ish``): it is never scaled, which would guess at units.
    Scientific notation (``1e3``) is one number, written whole, and is read.
    """
    stripped = text.strip()
    if len(stripped) > _MAX_NUMBER_TEXT:
        return NO_READING  # no lone number is written this long; and the pattern stays cheap
    match = _NUMBER_TEXT.match(stripped)
    unit = match.group(2) if match else None
    if not match or (unit and (_NOT_A_UNIT.search(unit) or _holds_number_form(unit))):
        return NO_READING  # `4 million`, `4k`, `90%`, `4 or more`, `76½`: not the number alone
    return match.group(1).replace(",", "").replace("\u2212", "-")


# A value, then on the same line a short remark about it: in parentheses, or after a dash,
# or a full stop (`4 (two plus two)`, `4. That is the sum.`); not after a comma, which
# also separates items (`billing, bug`).
_REMARK = re.compile(
    r"^([^\n]+?)(?:[ \t]*\(([^()\n]{1,120})\)|[ \t]*(?:[\u2014\u2013]|[ \t]-)[ \t]+([^\n]{1,200})"
    r"|\.[ \t]+([^\n]{1,200}))[ \t]*[.!]?$"
)
# A remark that offers another answer or takes this one back: the value has no one reading.
_HEDGE_REMARK = re.compile(
    r"^(?:or|and|nor|but|not|no|maybe|possibly|perhaps|probably|likely|unlikely|approximately"
    r"|about|around|roughly|approx|est|estimated|estimates?|almost|nearly|over|under|above"
    r"|below|more|less|fewer|plus|max|maximum|min|minimum|at\s+(?:least|most)|up\s+to|give"
    r"|mostly|partly|partially|sometimes|usually|often|actually|wait|unless|if|either|between"
    r"|to|vs\.?|versus)\b|^[~\u2248<>/+\u00b1%]",
    re.IGNORECASE,
)


# The longest text read as a value with a remark: the value and both remark forms' limits.
_MAX_REMARK_TEXT = 400


def without_remark(text: str, *, number: bool = False) -> Any:
    """``4 (two plus two)`` or ``4. That is the sum.`` -> ``4``; else `NO_READING`.

    The remark must be short, on the value's line, and hold no digit and no word that
    offers another answer (``4 (or 5)``, ``4 (at least)``): then the value before it is
    the one reading. The caller still reads that value strictly for its type.

    Args:
        text: The value and its remark.
        number: The value is a number: a remark that scales it (``4 (million)``, ``4 - in
            thousands``, ``90 (%)``) leaves no reading either.
    """
    stripped = text.strip()
    if len(stripped) > _MAX_REMARK_TEXT:
        return NO_READING  # no short value with a short remark; and the pattern stays cheap
    match = _REMARK.match(stripped)
    if match is None:
        return NO_READING
    remark = next(g for g in match.groups()[1:] if g is not None).strip()
    if _holds_number_form(remark) or _HEDGE_REMARK.match(remark):
        return NO_READING  # `4 (5 at most)`, `4 (½ more)`, `4 (or so)`: another value
    if number and _SCALE_REMARK.search(remark):
        return NO_READING
    return match.group(1).strip()


_BOOL_TEXT = re.compile(
    rf"^(?:[A-Za-z][A-Za-z _-]{{0,29}}:\s*)?{_DECOR}(yes|no|true|false|y|n){_DECOR}"
    r"(?:$|[\s.,!;:(\u2014\u2013-]+(.*)$)",
    re.IGNORECASE | re.DOTALL,
)
_HEDGE = re.compile(r"^(?:or|and|nor|/)\b", re.IGNORECASE)
# Words in a remark after yes/no that take the answer back or hedge it: `yes, but ...`,
# `true (mostly)`, `no, probably`.
_BOOL_HEDGE = re.compile(
    r"\b(?:but|mostly|partly|partially|sometimes|probably|maybe|perhaps|possibly|likely"
    r"|unlikely|however|although|though|unless|except|depends|unsure|uncertain|unclear"
    r"|somewhat|arguably|if|either|sort\s+of|kind\s+of|in\s+part|not\s+(?:sure|certain"
    r"|entirely|always|necessarily|completely|really))\b",
    re.IGNORECASE,
)
_ANSWER_WORD = re.compile(r"\b(yes|no|true|false)\b", re.IGNORECASE)
_ANSWER_NEGATED = re.compile(r"\b(?:not|never|neither|nor)\b|n't\b", re.IGNORECASE)


def bool_reading(text: str) -> Any:
    """``Yes.``, ``No, because ...``, ``TRUE``, ``**yes**`` -> True/False; ``yes/no`` -> none.

    A remark after the answer may explain it (``yes (the text says so)``), never contradict
    or hedge it: one that says the other answer (``yes; no``, ``no - yes``), negates an
    answer word (``yes, not true``) or hedges (``true (mostly)``, ``yes, but ...``) leaves
    no reading.
    """
    match = _BOOL_TEXT.match(text.strip())
    if not match:
        return NO_READING
    value = match.group(1).lower() in ("yes", "true", "y")
    rest = (match.group(2) or "").strip()
    if not rest:
        return value
    if _HEDGE.match(rest) or _BOOL_HEDGE.search(rest):
        return NO_READING  # "yes or no", "true (mostly)", "yes, but ...": no one answer
    said = {word.lower() in ("yes", "true") for word in _ANSWER_WORD.findall(rest)}
    if said and (said != {value} or _ANSWER_NEGATED.search(rest)):
        return NO_READING  # "yes; no", "no - yes", "yes, not true": two answers
    return value


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
        candidate = candidate.strip("*_`~").strip()  # `**Billing**.`: the stop came last
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


# A choice written last, emphasized (`**pos**`, `` `pos` ``, `"pos"`), at the end of prose.
_EMPHASIZED_END = re.compile(r"(\*\*|__|\*|`|\"|')([^*`\"'\n]{1,60}?)\1\s*[.!]?\s*$")
_EMPHASIZED_TAIL = 80
_NEGATION = re.compile(
    r"\b(?:not|never|no|isn't|aren't|wasn't|n't|maybe|perhaps|possibly|unsure)\b", re.IGNORECASE
)
_SENTENCE_START = re.compile(r"(?:^|[.!?;:\n])\s*", re.MULTILINE)


def final_label(text: str, choices: list[tuple[Any, list[Any]]]) -> Any:
    """The choice a prose answer ends on, emphasized, when it is the only choice it names.

    ``The review is glowing, so the label is **pos**.`` gives ``pos`` when no other choice
    (nor this one again) is written anywhere in the text, and no negation comes before it
    in its sentence (``it is not **pos**``). ``choices`` pairs each value with the names
    it may be written as; returns the value, or `NO_READING`.
    """
    # The emphasized choice ends the text: only its last characters are searched, so a long
    # text costs one pass (the checks below), never one search per position.
    tail = max(len(text.rstrip()) - _EMPHASIZED_TAIL, 0)
    match = _EMPHASIZED_END.search(text, tail)
    if match is None:
        return NO_READING
    said = match.group(2).strip().casefold()
    spellings = [(value, {str(n).casefold() for n in names}) for value, names in choices]
    chosen = [index for index, (_, names) in enumerate(spellings) if said in names]
    if len(chosen) != 1:
        return NO_READING
    sentence_start = 0
    for start in _SENTENCE_START.finditer(text, 0, match.start()):
        sentence_start = start.end()
    if _NEGATION.search(text, sentence_start, match.start()):
        return NO_READING
    if not names_only(text, choices, choices[chosen[0]][0], times=1):
        return NO_READING  # another choice named, or this one twice: no one reading
    return choices[chosen[0]][0]


def names_only(
    text: str, choices: list[tuple[Any, list[Any]]], chosen: Any, times: int | None = None
) -> bool:
    """Whether the text names no choice but ``chosen`` (at most ``times`` times, if given).

    A name counts as a whole word, whatever its case.
    """
    folded = text.casefold()
    for value, names in choices:
        spellings = {str(n).casefold() for n in names} - {""}
        written = sum(
            len(re.findall(rf"(?<!\w){re.escape(name)}(?!\w)", folded)) for name in spellings
        )
        allowed = (len(folded) if times is None else times) if value == chosen else 0
        if written > allowed:
            return False
    return True


# Matched against a stripped line, so no two repetitions compete for the same spaces.
_BULLET = re.compile(r"(?:([-*•+])|(\d{1,3})[.)])\s+(.*)", re.DOTALL)


def list_items(text: str, *, marked_only: bool = False) -> Any:
    """A list the whole text is -> its items as text; `NO_READING` for anything else.

    Read: bulleted or numbered lines, one item per line (one bullet, one indentation, the
    numbers counting up from where they start); with ``marked_only`` false also plain lines
    and ``a, b, c``. Refused: a single line without commas (it may be prose, such as a
    refusal), bullets mixed with prose, two lists (a numbering that starts again, another
    bullet), and text with a bracket or brace (data written in part: ``[1, 2]`` is read as
    data or not at all, never split on its commas).

    Args:
        text: The text.
        marked_only: The items may be any text (``list[str]``): prose validates as such
            items, so plain lines and commas are no list; only bullets or numbers mark one.
    """
    if any(c in text for c in "[]{}"):
        return NO_READING
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return NO_READING
    bullets = [_BULLET.fullmatch(line.strip()) for line in lines]
    if all(bullets):
        marks = [m for m in bullets if m]
        if not _one_list(marks, lines):
            return NO_READING
        return [_clean_item(m.group(3)) for m in marks]
    if any(bullets) or marked_only:
        return NO_READING  # a mix of bullets and prose, or unmarked text: no single reading
    if len(lines) > 1:
        return [_clean_item(line) for line in lines]
    if "," in lines[0]:
        items = [_clean_item(part) for part in lines[0].split(",")]
        return items if all(items) else NO_READING
    return NO_READING


def _one_list(marks: list[re.Match[str]], lines: list[str]) -> bool:
    """Whether bulleted or numbered lines make one flat list, not two or a nested one."""
    if len({line[: len(line) - len(line.lstrip())] for line in lines}) > 1:
        return False  # nested: which level is the list?
    if all(m.group(1) for m in marks):
        return len({m.group(1) for m in marks}) == 1  # `-` then `*`: two lists
    if any(m.group(1) for m in marks):
        return False
    numbers = [int(m.group(2)) for m in marks]
    return numbers == list(range(numbers[0], numbers[0] + len(numbers)))


def _clean_item(item: str) -> str:
    item = item.strip().rstrip(",;").strip().strip("*_`~").strip()
    if len(item) >= 2 and item[0] == item[-1] and item[0] in "'\"":
        item = item[1:-1]
    return item


# The file name of every parse of completion text as Python: Python warns about text that
# is no good Python (``4k``: "invalid decimal literal"; ``'C:\d'``: "invalid escape
# sequence") while it parses it, and those warnings are about a model's text, not the
# program's code.
_COMPLETION_SOURCE = "<structio: completion text>"
_QUIET = tuple(
    ("ignore", None, category, re.compile(re.escape(_COMPLETION_SOURCE)), 0)
    for category in (SyntaxWarning, DeprecationWarning)  # 3.11 and older: Deprecation
)


def parse_python(text: str) -> ast.Expression:
    """``text`` parsed as one Python expression, without Python's warnings about it.

    The warnings are silenced by a filter matching only parses of this name
    (`_util.warn.ensure_filter`: thread-safe, unlike `warnings.catch_warnings`).

    Raises:
        SyntaxError: ``text`` is not a Python expression (also ValueError, MemoryError,
            RecursionError for text Python cannot take).
    """
    for entry in _QUIET:
        ensure_filter(entry)
    return ast.parse(text, filename=_COMPLETION_SOURCE, mode="eval")


def python_call_reading(text: str) -> Any:
    """``Patient(name='Al', age=3)`` -> ``{"name": "Al", "age": 3}`` (nested calls too)."""
    try:
        tree = parse_python(text.strip())
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
