"""How a whole completion is read: sections, JSON objects, labels, as real models write them.

Every adapter uses these readers, each trying its own format first. They find *where* each
output's text is; `parsing.read` decides what the text means. A reader returns nothing rather
than guess: a marker merely mentioned inside a sentence is no section, an unfilled
template (``{answer}``) is no value, and JSON cut off mid-value is reported as cut off.

What they return, `Found`, and the name rules they share are in `parsing.found`; the
``Field: value`` reader is `parsing.labels` (`find_labels`, importable from here too).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from structio._util.scan import open_brackets, scan_brackets, strip_fence
from structio.parsing.decode import (
    Conflict,
    DuplicateKeyError,
    decode_json,
    decode_marked,
    marked_pairs,
    unique_pairs,
)
from structio.parsing.found import (
    _TAIL_DECORATION_CHARS,
    Found,
    _by_norm,
    _may_mark,
    _may_name,
    _spellings,
    is_placeholder,
    norm,
    two_values,
)
from structio.parsing.labels import _label_line, find_labels

__all__ = [
    "Found",
    "without_echoes",
    "bare_json_value",
    "bare_value",
    "find_json",
    "find_labels",
    "find_sections",
    "is_placeholder",
    "is_fence_line",
    "norm",
    "settled_prefix",
    "split_line",
    "two_values",
]


# -- sections -------------------------------------------------------------------------------

# Every repetition is bounded, so a marker-like run of any length is scanned in linear time.
_MARKER = re.compile(
    r"\[\[[ \t]{0,8}#{1,3}[ \t]{0,8}([A-Za-z][\w \-]{0,60}?)[ \t]{0,8}#{1,3}[ \t]{0,8}\]\]"
)
# A run of the decoration a marker may stand among and still start or end its line.
_DECORATION_RUN = re.compile(r"[\s*_`#>|:~\-]*")
_LEAD_DECORATION = re.compile(r"^[\s*_`~]*:?[\s*_`~]*")
# A line that is a code fence and nothing else, in a text of many lines.
_FENCE_LINE = re.compile(r"^[^\S\n]*```[\w+-]*[^\S\n]*$", re.MULTILINE)


def find_sections(text: str, names: Iterable[str], outputs: Iterable[str]) -> Found | None:
    """Read ``[[ ## name ## ]]`` sections, however decorated; ``None`` if no output has one.

    A marker splits the text when it starts its line, ends its line (glued to the previous
    text), or follows another splitting marker on the same line. One inside a sentence is
    a mention and stays text. Reading stops at ``[[ ## completed ## ]]`` once an output has
    been seen (what follows is a model inventing more), and an output takes its first
    value that is not an unfilled template, preferring markers that start a line. An output
    given two different values before that is a conflict (`Found.conflicts`): neither is
    its value.
    """
    if "[[" not in text:  # no marker at all, and no need to look at every line for one
        return None
    by_norm = _by_norm(names)
    output_set = set(outputs)
    sections = _plain_sections(text, by_norm, output_set)
    if sections is None:
        sections = _all_sections(text, by_norm, output_set)
    found = Found(how="sections")
    texts = found.texts
    last = len(sections) - 1
    for index, (name, strong, body) in enumerate(sections):
        if name not in output_set:
            continue
        value = _section_text(body)
        if is_placeholder(value, name):
            continue  # the structure echoed from the system message, not a value
        first = texts.get(name)
        if first is None:
            texts[name] = value
            if not strong:
                found.weak.add(name)
            if index == last:  # no marker after it: it runs to the end of the text
                found.open.add(name)
        elif first != value:
            found.conflicts.setdefault(name, (first, two_values(first, value)))
        elif strong and name in found.weak:  # the same value after a marker that starts a line
            found.weak.discard(name)
            if index == last:
                found.open.add(name)
            else:
                found.open.discard(name)
    for name in found.conflicts:
        del texts[name]
        found.weak.discard(name)
        found.open.discard(name)
    return found if found.texts or found.conflicts else None


Section = tuple[str | None, bool, str]  # (output name or None, strong, text)


def _all_sections(text: str, by_norm: Mapping[str, str], output_set: set[str]) -> list[Section]:
    """Split a completion at every splitting marker (see `find_sections`).

    Only the lines that hold a ``[[`` are looked at; the lines between them are sliced off
    the text whole: a long completion has many lines and few markers.
    """
    sections: list[tuple[str | None, bool, list[str]]] = [(None, True, [])]
    answered = False  # a section before holds an output's value, not its echoed template
    checked = 0  # sections before this one have been looked at for that
    position = 0  # where the text not yet given to a section starts (always a line start)
    search = 0
    while (bracket := text.find("[[", search)) != -1:
        line_start = text.rfind("\n", 0, bracket) + 1
        line_end = text.find("\n", bracket)
        line_end = len(text) if line_end == -1 else line_end
        search = line_end + 1
        line = text[line_start:line_end]
        split = split_line(line)
        if split is None:
            continue
        if line_start > position:  # the lines before this one, whole
            sections[-1][2].append(text[position : line_start - 1])
        position = line_end + 1
        head, markers = split
        if head.strip():
            sections[-1][2].append(head)
        for label, strong, rest in markers:
            name = by_norm.get(label)
            # Each section is looked at once, when a `completed` first follows it.
            while not answered and checked < len(sections):
                name_, _, parts = sections[checked]
                answered = (
                    name_ is not None
                    and name_ in output_set
                    and not is_placeholder("\n".join(parts), name_)
                )
                checked += 1
            if label == "completed" and answered:
                sections.append((None, True, []))  # it closes the section before it
                return _joined(sections)
            sections.append((name, strong, [rest] if rest.strip() else []))
    if position <= len(text):  # the lines after the last marker
        sections[-1][2].append(text[position:])
    return _joined(sections)


def _joined(sections: list[tuple[str | None, bool, list[str]]]) -> list[Section]:
    return [(name, strong, "\n".join(parts)) for name, strong, parts in sections]


# A completion as the adapter asks for it: each marker exactly as written, alone on its line
# (matched where a line starts).
_PLAIN_MARKER = re.compile(r"\[\[ ## ([A-Za-z]\w*) ## \]\][ \t]*(?=\n|\Z)")


def _plain_split(text: str) -> list[str] | None:
    """``text`` split at its plain markers, or ``None`` if some ``[[`` starts none.

    The pieces are what `re.split` gives: text, label, text, and so on. Only the places
    of ``[[`` are tried: a pattern anchored at every line start (``^`` in MULTILINE) is
    tried at every character, a third of a 1 MB answer's parse.
    """
    pieces: list[str] = []
    last = 0
    at = _find_pair(text, 0)
    while at != -1:
        match = _PLAIN_MARKER.match(text, at) if at == 0 or text[at - 1] == "\n" else None
        if match is None:
            return None
        pieces += (text[last:at], match.group(1))
        last = match.end()
        at = _find_pair(text, last)
    pieces.append(text[last:])
    return pieces


def _find_pair(text: str, start: int) -> int:
    """``text.find("[[", start)``, at memchr's speed where ``[`` alone is rare.

    `str.find` reads a two-character needle a few characters a step; a single character
    is found by memchr, many times faster, and a ``[`` that starts no pair is stepped
    over. Text where it often does is left to `str.find` after a few.
    """
    for _ in range(8):
        at = text.find("[", start)
        if at == -1 or text.startswith("[", at + 1):
            return at
        start = at + 1
    return text.find("[[", start)


def _plain_sections(
    text: str, by_norm: Mapping[str, str], output_set: set[str]
) -> list[Section] | None:
    """`_all_sections` for a completion whose only ``[[`` are plain markers, else ``None``.

    Such a completion is what models write nearly always, and one split reads it.
    """
    pieces = _plain_split(text)
    if pieces is None or len(pieces) < 3:
        return None
    # Each marker takes its whole line, so every piece but the first starts with that
    # line's end, and every piece but the last ends with the line end before a marker.
    sections: list[Section] = [(None, True, pieces[0][:-1])]
    seen_output = False
    last = len(pieces) - 2
    for index in range(1, len(pieces), 2):
        label = norm(pieces[index])
        if label == "completed" and seen_output:
            sections.append((None, True, ""))  # it closes the section before it
            break
        name = by_norm.get(label)
        body = pieces[index + 1]
        body = body[1:] if index == last else body[1:-1]
        # An echoed template (`{answer}`) is no answer: its `completed` ends nothing.
        seen_output = seen_output or (
            name in output_set and name is not None and not is_placeholder(body, name)
        )
        sections.append((name, True, body))
    return sections


def split_line(line: str) -> tuple[str, list[tuple[str, bool, str]]] | None:
    """A line's splitting markers (see `find_sections`), or ``None`` if it has none.

    Returns the text before the first marker (its decoration stripped: it ends the section
    before), and for each marker its normalized label, whether it is strong (starts or ends
    its line) and the text after it on the line, up to the next marker.
    """
    splits = _splitting_markers(line)
    if not splits:
        return None
    head = line[: splits[0][0].start()].rstrip(_TAIL_DECORATION_CHARS)
    markers: list[tuple[str, bool, str]] = []
    for index, (match, strong) in enumerate(splits):
        end = splits[index + 1][0].start() if index + 1 < len(splits) else len(line)
        rest = _LEAD_DECORATION.sub("", line[match.end() : end], count=1)
        rest = rest.rstrip(_TAIL_DECORATION_CHARS) if index + 1 < len(splits) else rest
        markers.append((norm(match.group(1)), strong, rest))
    return head, markers


def settled_prefix(line: str) -> str:
    """The start of an unfinished line that is its section's text whatever follows it.

    The line may yet end with a marker, whose decoration before it is not text, or hold one
    at its start: everything from the first ``[[`` (or a last ``[``) on, and decoration
    just before it, may still change meaning; the rest cannot (see `split_line`).
    """
    cut = line.find("[[")
    if cut == -1:
        cut = len(line) - 1 if line.endswith("[") else len(line)
    return line[:cut].rstrip(_TAIL_DECORATION_CHARS)


def is_fence_line(line: str) -> bool:
    """Whether a line is a code fence and nothing else (```` ``` ```` or ```` ```python ````)."""
    return _FENCE_LINE.fullmatch(line) is not None


def _splitting_markers(line: str) -> list[tuple[re.Match[str], bool]]:
    if "[[" not in line:  # most lines: no marker at all
        return []
    # Where the decoration that starts the line ends and where that ending it starts: found
    # once, not by looking at what comes before and after each marker (a long line with
    # many markers would be read again for each).
    lead = _DECORATION_RUN.match(line)
    trail = _DECORATION_RUN.match(line[::-1])
    lead_end = lead.end() if lead else 0
    trail_start = len(line) - (trail.end() if trail else 0)
    splits: list[tuple[re.Match[str], bool]] = []
    for match in _MARKER.finditer(line):
        at_start = not splits and match.start() <= lead_end
        at_end = match.end() >= trail_start
        if at_start or at_end:
            splits.append((match, True))
        elif splits:
            splits.append((match, False))  # several on one line, after a real marker
    return splits


def _section_text(text: str) -> str:
    # Searched in the whole text, not line by line: a long value has many lines.
    # A text without a backtick is told by memchr, quicker than a search for three.
    if "`" not in text or "```" not in text or len(_FENCE_LINE.findall(text)) % 2 == 0:
        return text.strip()
    # An unpaired fence line belongs to a fence around the whole answer, not the value: the
    # last line if it is one, else the first fence line (never the last line, so a line
    # end follows it).
    last_line = text.rfind("\n") + 1
    if _FENCE_LINE.fullmatch(text, last_line):
        return text[: max(last_line - 1, 0)].strip()
    first = _FENCE_LINE.search(text)
    if first is None:  # cannot happen: there is an odd number of them
        return text.strip()
    return (text[: first.start()] + text[first.end() + 1 :]).strip()


# -- JSON objects ---------------------------------------------------------------------------

_NOT_WRAPPERS = frozenset({"properties", "$defs", "definitions", "items", "schema"})

# A line that starts a turn the model was not asked to write: an invented tool observation
# or result, a new user or assistant turn, or a chat template's turn token. After an answer,
# it means the model ran on (ReAct-style loops, base models continuing a transcript).
_RUNAWAY = re.compile(
    r"^[ \t>*#_]*(?:observation|user|human|assistant|system|tool(?:[ _](?:output|result))?"
    r"|function(?:[ _](?:output|result))?)[ \t*_]*:"
    r"|<\|(?:im_start|im_end|user|assistant|system|end|eot_id|start_header_id|endoftext)\|>"
    r"|\[INST\]",
    re.IGNORECASE | re.MULTILINE,
)


def find_json(text: str, outputs: Iterable[str]) -> Found | None:
    """The JSON object in the text that best fits the outputs; ``None`` if none fits.

    Several objects (an echoed schema or input before the answer) are weighed by how many
    output names they hold, the later winning a tie; a wrapper such as ``{"output":
    {...}}`` is opened; keys match the outputs whatever their case or separators. An object
    the text cuts off marks the output it was writing as cut off.

    Once an object that names an output has been read, a line that starts a turn the model
    was not asked for (an invented ``Observation:`` or tool result, a new ``User:`` or
    ``Assistant:`` turn, a chat template's turn token) ends the answer: objects after it
    are the model running on, and are never read in its place.

    A key written twice with two different values has no one reading: the output it is, or
    whose value holds it, is a conflict (`Found.conflicts`).
    """
    output_list = list(outputs)
    by_norm = {norm(n): n for n in output_list}
    best: tuple[int, Found] | None = None
    text = strip_fence(text)
    inner = _wrapped_string(text, by_norm)
    if inner is not None and (found_inner := find_json(inner, output_list)) is not None:
        return found_inner
    answered = -1  # where the last object naming an output ends
    for obj, complete, start, end, conflicted in _objects(text, tuple(by_norm)):
        if answered != -1 and _RUNAWAY.search(text, answered, start):
            break
        found, score = _fit(obj, by_norm)
        if conflicted:
            _set_conflicts_aside(found)
        if score:
            answered = end
        if complete is not None:
            # Cut off: only members before the last top-level comma are whole. Any other
            # output may have been about to be written, so none is defaulted or completed.
            whole = set(_matched_keys(complete, by_norm).values())
            found.cut_off.update(name for name in output_list if name not in whole)
        if score and (best is None or score >= best[0]):
            best = (score, found)
    if best is None:
        return _headless(text, by_norm)
    return best[1]


# An object that lost its opening brace, or its brace and the first key's opening quote
# (`answer": 4}`): the text starts with a key, its closing quote and a colon.
_HEADLESS = re.compile(r'\s*("?)([A-Za-z_][\w \-]{0,60})"\s*:')


_RAW_DECODER = json.JSONDecoder(strict=False, object_pairs_hook=unique_pairs)
_RAW_MARKING_DECODER = json.JSONDecoder(strict=False, object_pairs_hook=marked_pairs)
# `json.loads` as it is (control characters refused), a repeated key refused too.
_STRICT_DECODER = json.JSONDecoder(object_pairs_hook=unique_pairs)
_STRUCTURAL = frozenset('{}[],:"')


def _headless(text: str, by_norm: Mapping[str, str]) -> Found | None:
    """The object whose ``{`` (and first ``"``) the text lost, when it has one reading.

    Only when the text starts with an output's key and, given back what it lost, is one
    whole JSON object (strict: nothing else repaired, nothing after it).
    """
    match = _HEADLESS.match(text)
    if match is None or norm(match.group(2)) not in by_norm:
        return None
    head = "{" if match.group(1) else '{"'
    whole = head + text.strip()
    conflicted = False
    try:  # prose may follow the object, as after any answer; more JSON may not
        obj, end = _RAW_DECODER.raw_decode(whole)
    except DuplicateKeyError:
        obj, end = _RAW_MARKING_DECODER.raw_decode(whole)
        conflicted = True
    except ValueError:
        return None
    if not isinstance(obj, dict) or whole[end:].lstrip()[:1] in _STRUCTURAL:
        return None
    found, score = _fit(obj, by_norm)
    if conflicted:
        _set_conflicts_aside(found)
    return found if score else None


def _set_conflicts_aside(found: Found) -> None:
    """Move each output whose value is or holds a `Conflict` to `Found.conflicts`."""
    for name, value in list(found.texts.items()):
        conflict = _first_conflict(value)
        if conflict is not None:
            del found.texts[name]
            shown = " / ".join(conflict.error.values)
            found.conflicts[name] = (shown, str(conflict.error))


def _first_conflict(value: Any) -> Conflict | None:
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, Conflict):
            return item
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
    return None


# `{"response": "{\"answer\": 4}"}`: one key that is no output, holding the answer as a
# string of JSON; models add a tool call's closing tag inside it (`...}</invoke>"}`).
_WRAPPED_HEAD = re.compile(r'\s*\{\s*"([^"\\\n]{1,60})"\s*:\s*"\s*(?=\{)')
_WRAPPED_TAIL = re.compile(r'\}\s*(?:</?[A-Za-z_][\w:-]*>\s*)*"\s*\}\s*\Z')
_ESCAPE = re.compile(r'\\(["\\/nrt])')
_ESCAPED = {'"': '"', "\\": "\\", "/": "/", "n": "\n", "r": "\r", "t": "\t"}


def _wrapped_string(text: str, by_norm: Mapping[str, str]) -> str | None:
    """The JSON text a single wrapping key holds as a string, unescaped; else ``None``.

    The string is taken from the text between its quotes, not decoded: models write it
    with inner quotes left unescaped, or escaped once too often, and the object around it
    is then no JSON. Escapes are undone where they are escapes; what is left is read as
    any answer is, so a value it cuts off is still refused.
    """
    head = _WRAPPED_HEAD.match(text)
    if head is None or norm(head.group(1)) in by_norm:
        return None
    tail = _WRAPPED_TAIL.search(text, head.end())
    if tail is None:
        return None
    inner = text[head.end() : tail.start() + 1]
    return _ESCAPE.sub(lambda m: _ESCAPED[m.group(1)], inner) if '\\"' in inner else inner


def _fit(obj: dict[Any, Any], by_norm: Mapping[str, str]) -> tuple[Found, int]:
    matched = _matched_keys(obj, by_norm)
    # `"answer": "{answer}"` is the prompt's structure echoed, not a value: as if absent.
    texts = {
        name: value
        for key, name in matched.items()
        if not (isinstance(value := obj[key], str) and is_placeholder(value, name))
    }
    found = Found(texts=texts, how="JSON")
    score = len(found.texts)
    for key, value in obj.items():
        if isinstance(value, dict) and str(key) not in _NOT_WRAPPERS:
            inner, inner_score = _fit(value, by_norm)
            if inner_score > score:
                found, score = inner, inner_score
    return found, score


def _matched_keys(obj: Mapping[Any, Any], by_norm: Mapping[str, str]) -> dict[Any, str]:
    """Keys of ``obj`` that name an output (an exact spelling wins over a drifted one)."""
    chosen: dict[str, Any] = {}
    for key in obj:
        name = by_norm.get(norm(str(key)))
        if name is not None and (name not in chosen or key == name):
            chosen[name] = key
    return {key: name for name, key in chosen.items()}


_Object = tuple[dict[Any, Any], "dict[Any, Any] | None", int, int, bool]


def _objects(text: str, names: tuple[str, ...]) -> list[_Object]:
    """Every top-level ``{...}`` in the text that may name an output, decoded.

    Each comes with ``None`` when it is closed, or, when the text cuts it off, with the
    members that were complete (those before its last top-level comma); then where it
    starts and ends in the text, and whether a key in it is given two different values
    (each such key then holds a `Conflict`).

    A chunk whose text spells none of the outputs' ``names`` (normalized; see `_spellings`)
    can give no output, and neither can a chunk inside it: it is passed over whole, not
    decoded. Decoding is what costs, so code full of braces is scanned, not decoded chunk
    by chunk.
    """
    if text.startswith("{") and text.endswith("}"):  # the usual answer: one whole object
        try:
            whole = decode_json(text, python=False, repair=False)
        except ValueError:  # DuplicateKeyError too: the chunks below say where
            whole = None
        if isinstance(whole, dict):
            return [(whole, None, 0, len(text), False)]
    spellings = _spellings(names)
    if spellings is not None and not _may_name(text, spellings):
        return []  # every chunk is part of the text: none can name an output
    found: list[_Object] = []
    position = 0
    # A chunk that cannot be read is searched for objects inside it, which json-repair (the
    # costly step) then reads again. Such rereading is limited to the length of the text in
    # all; past that, chunks inside are read as JSON or Python literals only. Without the
    # limit each level of nesting would be repaired again, the whole chunk each time.
    failed_until = -1
    rereading = len(text)
    while True:
        start = text.find("{", position)
        if start == -1:
            return found
        try:
            end, last_comma = scan_brackets(text, start)
        except ValueError:  # nested too deep to be an answer: nothing more to read
            return found
        chunk = text[start : end + 1] if end != -1 else text[start:]
        if spellings is not None and not _may_name(chunk, spellings):
            if end == -1:
                return found
            position = end + 1
            continue
        if end == -1 and _STRAY_BRACE.match(text, start):
            position = start + 1  # `{` on its own before the answer: it opens nothing
            continue
        if end == -1 and (closed := _only_brace_missing(chunk)) is not None:
            # Whole as far as it goes, but cut: an output it does not hold may have been
            # about to be written, so none is defaulted.
            found.append((closed, closed, start, len(text), False))
            return found
        nested = start <= failed_until
        repair = not nested or len(chunk) <= rereading
        if nested and repair:
            rereading -= len(chunk)
        obj, conflicted = decode_marked(chunk, repair=repair)
        if obj is None:
            failed_until = max(failed_until, end if end != -1 else len(text))
        if obj is not None:
            complete = None
            if end == -1:
                head = text[start:last_comma] + "}" if last_comma != -1 else "{}"
                complete, head_conflicted = decode_marked(head)
                complete = complete or {}
                conflicted = conflicted or head_conflicted
                # The complete members are read from their own exact text: json-repair's
                # reading of a cut-off object may differ even in members before the cut.
                # A key given another value after the cut keeps its conflict.
                obj = {
                    **obj,
                    **{k: v for k, v in complete.items() if not isinstance(obj.get(k), Conflict)},
                }
            found.append((obj, complete, start, end + 1 if end != -1 else len(text), conflicted))
        if end == -1:
            return found
        position = end + 1 if obj is not None else start + 1


# A brace, then (across blank space and maybe a fence line) another: the first opens nothing.
_STRAY_BRACE = re.compile(r"\{\s*(?:```[\w-]*[ \t]*\n\s*)?\{")
# How a complete JSON value can end: a string's closing quote, a closed list or object, or
# a literal. A number cannot tell: `2` may be the start of `25`.
_CLOSED_END = re.compile(r'(?:["\]}]|\btrue|\bfalse|\bnull)\Z')
_CLOSING_FENCE = re.compile(r"\s*(?:```\s*)?\Z")


def _only_brace_missing(chunk: str) -> dict[Any, Any] | None:
    """The object, when the text stops after a complete member and lacks only its last ``}``.

    Every value is then whole (a string closed, a list or inner object closed, a literal),
    so nothing is completed but the object itself. A cut inside a value (an open string,
    list or inner object, or a number that may have gone on) is not read here.
    """
    end = _CLOSING_FENCE.search(chunk)
    body = chunk[: end.start()] if end else chunk
    if not _CLOSED_END.search(body) or open_brackets(body) != "{":
        return None
    try:
        value = _STRICT_DECODER.decode(body + "}")
    except ValueError:  # not strict JSON once closed (or a key repeated): the usual reading
        return None
    return value if isinstance(value, dict) else None


def bare_value(outputs: Mapping[str, bool], text: str) -> Found | None:
    """The whole text as the value of a single output of a narrow type (``42``, ``Yes.``).

    ``outputs`` maps each output name to whether any text would be a valid value of it
    (``str``, ``Optional[str]``...). Such an output never takes the whole text this way: a
    refusal would become its value.
    """
    if len(outputs) != 1 or not text.strip():
        return None
    name, any_text = next(iter(outputs.items()))
    if any_text:
        return None
    return Found(texts={name: text}, how="bare value", open={name})


def bare_json_value(outputs: Iterable[str], text: str) -> Found | None:
    """A single output answered with a bare JSON value (``42``, ``"Paris"``), exactly."""
    names = list(outputs)
    if len(names) != 1:
        return None
    try:
        value = decode_json(text, python=False, repair=False)
    except ValueError:
        return None
    if isinstance(value, dict):
        return None
    # A number has nothing to close it ("12" may have been going to be "123").
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return Found(texts={names[0]: value}, how="JSON value", open={names[0]} if number else set())


# -- echoed inputs --------------------------------------------------------------------------

# An input shorter than this (spaces aside) is too short to tell a copy from an answer that
# happens to quote it (`Paris`), except when it is the whole completion.
_ECHO_MIN = 8


@functools.lru_cache(maxsize=256)
def _output_marks(names: tuple[str, ...]) -> re.Pattern[str]:
    """Where an output's value is introduced in every format: a JSON key, an XML tag."""
    alternatives = "|".join(re.escape(name) for name in names)
    return re.compile(rf"\"(?:{alternatives})\"[ \t]{{0,8}}:|<(?:{alternatives})[\s/>]")


def _marks(text: str, outputs: tuple[str, ...]) -> list[tuple[int, int]]:
    """Each place in ``text`` that introduces an output's value: a marker, key, tag or label."""
    wanted = {norm(name) for name in outputs}
    found = [m.span() for m in _MARKER.finditer(text) if norm(m.group(1)) in wanted]
    if outputs and _may_mark(text, outputs):
        found += [m.span() for m in _output_marks(outputs).finditer(text)]
        found += [m.span(1) for m in _label_line(outputs).finditer(text)]
    return sorted(found)


class _Echoes:
    """What the inputs of a call look like when a model repeats them, prepared once.

    Attributes:
        needles: Each input that holds an output's mark, every whitespace character taken
            out, and long enough (`_ECHO_MIN`) to tell a copy from a quote.
        wholes: Every non-empty input, whitespace taken out (a completion that is only one
            of them is no answer).
        longest: The length of the longest input, as written.
    """

    __slots__ = ("longest", "needles", "wholes")

    def __init__(self, texts: tuple[str, ...], outputs: tuple[str, ...]) -> None:
        flat = ["".join(text.split()) for text in texts]
        self.needles = [
            f
            for f, t in zip(flat, texts, strict=True)
            if len(f) >= _ECHO_MIN and _marks(t, outputs)
        ]
        self.wholes = frozenset(f for f in flat if f)
        self.longest = max(map(len, texts), default=0)


# Keyed by the input strings themselves: a stream reader asks once per reading with the same
# strings, whose hashes Python keeps, so a hit costs no pass over an input. Small, because
# it holds the inputs (documents, maybe) and a copy of each.
_echoes = functools.lru_cache(maxsize=16)(_Echoes)


def _echo_spans(text: str, needles: list[str]) -> list[list[int]]:
    """Where ``text`` reproduces one of the ``needles``, whitespace aside.

    A model that repeats an input drops blank lines, re-indents or re-wraps it: the copy is
    found with every whitespace character ignored, in both texts (one pass over each).
    """
    kept = [i for i, c in enumerate(text) if not c.isspace()]
    flat = "".join(text[i] for i in kept)
    spans: list[list[int]] = []
    for needle in needles:
        position = flat.find(needle)
        while position != -1:
            spans.append([kept[position], kept[position + len(needle) - 1] + 1])
            position = flat.find(needle, position + len(needle))
    spans.sort()
    merged: list[list[int]] = []
    for span in spans:
        if merged and span[0] <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], span[1])
        else:
            merged.append(span)
    return merged


def without_echoes(text: str, echoes: Iterable[str], outputs: Iterable[str]) -> str:
    r"""The text without copies of the call's inputs that would be read as an answer.

    Compared with every whitespace character ignored, so a copy with its blank lines
    dropped, re-indented or re-wrapped is still a copy:

    * A completion that is nothing but an input is no answer: ``""`` (a model that repeats
      ``- apples\n- pears`` has not answered with that list, whatever its type).
    * A model that repeats an input also repeats any ``[[ ## answer ## ]]``,
      ``"answer":``, ``<answer>`` or ``Answer:`` the input holds; read as an output, that
      would replace the real answer, or be taken for one where there is none. Every copy
      of such an input is set aside (before the answer, after it), except a copy that an
      output's own marker, key, tag or label introduces: a model asked to repeat the text
      wrote it as that output's value, and it is read as the value it is.

    A copy of an input that holds no mark, inside an output's value, stays: the value is
    what the model wrote under that output's marker, and quoting an input is a common
    answer (`text -> with_title`).

    Args:
        text: The completion, cleaned.
        echoes: The texts of the call's inputs.
        outputs: The signature's output names.
    """
    names = tuple(outputs)
    prepared = _echoes(tuple(echoes), names)
    if (
        prepared.wholes
        and len(text) <= 2 * prepared.longest + 64
        and "".join(text.split()) in prepared.wholes
    ):
        return ""
    if not prepared.needles:
        return text
    spans = _echo_spans(text, prepared.needles)
    if not spans:
        return text
    marks = [end for start, end in _marks(text, names) if not any(s <= start < e for s, e in spans)]
    pieces: list[str] = []
    last = 0
    for start, end in spans:
        if any(mark <= start and not text[mark:start].strip() for mark in marks):
            continue  # the output's value, written as a copy of the input
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    return "".join(pieces)
