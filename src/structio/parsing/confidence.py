"""How sure the model was of each output: a number in [0, 1] from its token log probabilities.

Pure: a completion's text, its log-probability entries (OpenAI's chat shape, plain
mappings: ``{"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob"}...]}``)
and the outputs' declared types give one number per output, or ``None`` when it cannot be
known (no logprobs, tokens that do not spell the text, an output not found in the text).

What the number means:

- **A label** (a ``Literal``, an ``Enum``, a ``bool``): the probability of the chosen
  option against the other options. At each token where the options part ways (the first
  token that rules some out), the probability mass of the alternatives in ``top_logprobs``
  that spell the chosen option is divided by the mass of those that spell any option still
  possible there; the factors multiply when options part ways more than once. It reads
  "had the model picked one of the options, how likely this one". An option absent from
  the top ``k`` alternatives counts as 0, so with a small ``k`` the number is an upper
  bound. Without ``top_logprobs`` it is the chosen token's own probability there (against
  every token). A value that is none of the options is scored as any other value.
- **Any other value**: the geometric mean of the probabilities of the value's own tokens,
  ``exp(mean(logprob))``. Not the product (the probability of the whole text), which
  falls towards 0 with length whatever the model's certainty: a long, sure answer would
  score below a short, unsure one. The mean per token compares values of any length.

"The value's own tokens" are the tokens that overlap the value's text: not the markers
(``[[ ## f ## ]]``, ``<f>``) nor the keys (``"f":``) nor a JSON string's quotes; a token
that holds both a quote and the value's first letters counts. Structured values (lists,
objects) count their brackets too: they are what the model wrote for the value. Where the
value is: its first ``[[ ## f ## ]]`` section, else its first ``<f>`` element, else its
first ``"f":`` key, after any ``</think>`` draft.
"""

from __future__ import annotations

import enum
import math
import re
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from structio._util.scan import scan_brackets

__all__ = ["field_confidence", "label_options", "value_span"]

Entry = Mapping[str, Any]

# What may stand around a label's text and is no part of it.
_LABEL_QUOTES = "\"'`*"
# The start of any section marker: where a section's text ends.
_NEXT_MARKER = re.compile(r"\[\[[ \t]{0,8}#")
_THINK_END = re.compile(r"</think(?:ing)?>", re.IGNORECASE)


def field_confidence(
    text: str, entries: Sequence[Entry] | None, fields: Mapping[str, Any]
) -> dict[str, float | None]:
    """Each output's confidence in ``text``, from its token log probabilities.

    Args:
        text: The completion's text, which the tokens of ``entries`` spell.
        entries: The completion's logprob entries, in OpenAI's chat shape; ``None`` when
            the response has none.
        fields: Each output's name and declared type (annotation).

    Returns:
        For each output in ``fields``, a number in [0, 1] (see the module) or ``None``.
    """
    unknown: dict[str, float | None] = dict.fromkeys(fields)
    if not entries:
        return unknown
    spans = _token_spans(text, entries)
    if spans is None:
        return unknown
    raw = text.encode("utf-8")
    for name, annotation in fields.items():
        span = value_span(text, name)
        if span is None:
            continue
        options = label_options(annotation)
        if options:
            span = _label_span(text, span)
        start = len(text[: span[0]].encode("utf-8"))
        end = start + len(text[span[0] : span[1]].encode("utf-8"))
        tokens = [(a, b, e) for a, b, e in spans if a < end and b > start]
        if not tokens:
            continue
        chosen = _chosen(text[span[0] : span[1]], options) if options else None
        if chosen is None:
            unknown[name] = _mean_probability(e for _, _, e in tokens)
        else:
            unknown[name] = _label_probability(raw, start, end, tokens, options, chosen)
    return unknown


def label_options(annotation: Any) -> tuple[str, ...]:
    """The options a label output may take, as written (``()`` for any other type).

    ``bool`` is ``true`` / ``false`` (compared without case, so ``True`` is one), a
    ``Literal`` its values, an ``Enum`` its members' values; ``None`` in an optional type
    is no option.
    """
    if annotation is bool:
        return ("true", "false")
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return tuple(dict.fromkeys(str(member.value) for member in annotation))
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return tuple(
            dict.fromkeys(
                str(value).lower() if isinstance(value, bool) else str(value)
                for value in typing.get_args(annotation)
            )
        )
    if origin is typing.Union or origin is types.UnionType:
        kept = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(kept) == 1:
            return label_options(kept[0])
    return ()


def value_span(text: str, name: str) -> tuple[int, int] | None:
    """Where output ``name``'s value is in ``text`` (character offsets), or ``None``.

    Its first ``[[ ## name ## ]]`` section (up to the next marker, whitespace aside), else
    its first ``<name>`` element, else the value after its first ``"name":`` key (a
    string's text without its quotes); all after any ``</think>`` draft.
    """
    begin = 0
    for match in _THINK_END.finditer(text):
        begin = match.end()
    escaped = re.escape(name)
    marker = re.compile(
        rf"\[\[[ \t]{{0,8}}#{{1,3}}[ \t]{{0,8}}{escaped}[ \t]{{0,8}}#{{1,3}}[ \t]{{0,8}}\]\]"
    )
    found = marker.search(text, begin)
    if found is not None:
        after = _NEXT_MARKER.search(text, found.end())
        return _stripped(text, found.end(), after.start() if after else len(text))
    element = re.compile(rf"<{escaped}(?:\s[^>]*)?>").search(text, begin)
    if element is not None:
        close = text.find(f"</{name}>", element.end())
        return _stripped(text, element.end(), close if close != -1 else len(text))
    key = re.compile(rf'"{escaped}"\s*:\s*').search(text, begin)
    if key is not None:
        return _json_value(text, key.end())
    return None


def _stripped(text: str, start: int, end: int) -> tuple[int, int] | None:
    """``text[start:end]`` without the whitespace around it (``None`` if nothing is left)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def _json_value(text: str, start: int) -> tuple[int, int] | None:
    """The span of the JSON value that starts at ``start`` (a string's without quotes)."""
    if start >= len(text):
        return None
    first = text[start]
    if first == '"':
        i = start + 1
        while i < len(text) and text[i] != '"':
            i += 2 if text[i] == "\\" else 1
        return (start + 1, min(i, len(text))) if i > start + 1 else None
    if first in "[{":
        try:
            close, _ = scan_brackets(text, start)
        except ValueError:  # nested past what any reader reads: no value to score
            return None
        return (start, close + 1) if close != -1 else _stripped(text, start, len(text))
    end = start
    while end < len(text) and text[end] not in ",}]\n":
        end += 1
    return _stripped(text, start, end)


def _label_span(text: str, span: tuple[int, int]) -> tuple[int, int]:
    """A label's span without the quotes or emphasis around it (``"positive"``, ``**no**``)."""
    start, end = span
    while start < end and text[start] in _LABEL_QUOTES:
        start += 1
    while end > start and text[end - 1] in _LABEL_QUOTES:
        end -= 1
    return (start, end) if start < end else span


def _token_bytes(entry: Entry) -> bytes:
    """The bytes of a token: its ``bytes`` when given (a token may split a character)."""
    raw = entry.get("bytes")
    if isinstance(raw, list):
        try:
            return bytes(raw)
        except (TypeError, ValueError):  # not a list of bytes: the token's text stands
            pass
    token = entry.get("token")
    return token.encode("utf-8") if isinstance(token, str) else b""


def _token_spans(text: str, entries: Sequence[Entry]) -> list[tuple[int, int, Entry]] | None:
    """Each token's byte span in ``text``, or ``None`` if the tokens do not spell it.

    The tokens may cover only the start of the text (a stream read so far) or run past
    its end (a stop token some servers count): what both cover must agree.
    """
    raw = text.encode("utf-8")
    spans: list[tuple[int, int, Entry]] = []
    at = 0
    for entry in entries:
        token = entry.get("token")
        piece = token.encode("utf-8") if isinstance(token, str) else b""
        if not raw.startswith(piece, at):  # a token that splits a character, or the end
            piece = _token_bytes(entry)
            common = raw[at : at + len(piece)]
            if common != piece[: len(common)]:
                return None
        spans.append((at, at + len(piece), entry))
        at += len(piece)
    return spans


def _probability(logprob: Any) -> float:
    """``exp(logprob)``, 0 for what is no number (a server's ``null`` for a banned token)."""
    if isinstance(logprob, bool) or not isinstance(logprob, (int, float)) or math.isnan(logprob):
        return 0.0
    return min(1.0, math.exp(min(0.0, float(logprob))))


def _mean_probability(entries: Iterable[Entry]) -> float | None:
    """The geometric mean of the tokens' probabilities: ``exp(mean(logprob))``."""
    numbers = [
        float(lp)
        for lp in (entry.get("logprob") for entry in entries)
        if isinstance(lp, (int, float)) and not isinstance(lp, bool)
    ]
    return _probability(sum(numbers) / len(numbers)) if numbers else None


def _chosen(written: str, options: Sequence[str]) -> str | None:
    """The option ``written`` is (compared without case), if any."""
    folded = written.casefold()
    for option in options:
        if option.casefold() == folded:
            return option
    return None


def _spells(candidate: str, option: str) -> bool:
    """Whether text beginning with ``candidate`` may still be ``option``, or is it already."""
    folded, wanted = candidate.casefold(), option.casefold()
    if wanted.startswith(folded):
        return True
    # The option whole, then what ends a value (a quote, a comma), not more of a word.
    return folded.startswith(wanted) and not folded[len(wanted)].isalnum()


def _label_probability(
    raw: bytes,
    start: int,
    end: int,
    tokens: Sequence[tuple[int, int, Entry]],
    options: Sequence[str],
    chosen: str,
) -> float:
    """The chosen option's probability against the others (see the module)."""
    value = raw[start:end]
    result = 1.0
    for a, b, entry in tokens:
        before = value[: max(a, start) - start].decode("utf-8", "ignore")
        after = value[: min(b, end) - start].decode("utf-8", "ignore")
        possible = [o for o in options if _spells(before, o)]
        if len([o for o in options if _spells(after, o)]) == len(possible):
            continue  # this token rules no option out: the choice is not made here
        # What the token holds before the value (a quote, a space) is not the choice.
        lead = raw[a:start].decode("utf-8", "ignore") if a < start else ""
        alternatives = _alternatives(entry)
        if alternatives is None:
            result *= _probability(entry.get("logprob"))
            continue
        mine = every = 0.0
        for token, logprob in alternatives.items():
            rest = (
                token[len(lead) :]
                if token.startswith(lead)
                else token.lstrip(_LABEL_QUOTES + " \t\n")
            )
            if not rest:
                continue
            candidate = before + rest
            fits = [o for o in possible if _spells(candidate, o)]
            if fits:
                every += _probability(logprob)
                if chosen in fits:
                    mine += _probability(logprob)
        result *= mine / every if every else 0.0
    return result


def _alternatives(entry: Entry) -> dict[str, Any] | None:
    """A token's ``top_logprobs`` as token -> logprob with the chosen token itself, if any."""
    top = entry.get("top_logprobs")
    if not isinstance(top, list) or not top:
        return None
    alternatives: dict[str, Any] = {}
    for item in top:
        if isinstance(item, Mapping) and isinstance(item.get("token"), str):
            alternatives.setdefault(item["token"], item.get("logprob"))
    token = entry.get("token")
    if isinstance(token, str):
        alternatives.setdefault(token, entry.get("logprob"))
    return alternatives
