"""How a whole completion is read: sections, JSON objects, labels, as real models write them.

Every adapter uses these readers, each trying its own format first. They find *where* each
output's text is; `parsing.read` decides what the text means. A reader returns nothing rather
than guess: a marker merely mentioned inside a sentence is no section, an unfilled
template (``{answer}``) is no value, and JSON cut off mid-value is reported as cut off.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from structio._util.scan import scan_brackets, strip_fence
from structio.parsing.decode import decode_json, decode_object

__all__ = [
    "Found",
    "without_echoes",
    "bare_json_value",
    "bare_value",
    "find_json",
    "find_labels",
    "find_sections",
    "norm",
]


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
    """

    texts: dict[str, Any] = field(default_factory=dict)
    cut_off: set[str] = field(default_factory=set)
    how: str = ""
    open: set[str] = field(default_factory=set)


# -- sections -------------------------------------------------------------------------------

# Every repetition is bounded, so a marker-like run of any length is scanned in linear time.
_MARKER = re.compile(
    r"\[\[[ \t]{0,8}#{1,3}[ \t]{0,8}([A-Za-z][\w \-]{0,60}?)[ \t]{0,8}#{1,3}[ \t]{0,8}\]\]"
)
_DECORATION = re.compile(r"^[\s*_`#>|:~\-]*$")
_LEAD_DECORATION = re.compile(r"^[\s*_`~]*:?[\s*_`~]*")
_TAIL_DECORATION_CHARS = " \t\n\r\f\v*_`#~"
_FENCE_LINE = re.compile(r"^\s*```[\w+-]*\s*$")
_PLACEHOLDER = re.compile(r"^\{(\w+)\}(?:\s+#\s*note:.*)?$", re.DOTALL)


def find_sections(text: str, names: Iterable[str], outputs: Iterable[str]) -> Found | None:
    """Read ``[[ ## name ## ]]`` sections, however decorated; ``None`` if no output has one.

    A marker splits the text when it starts its line, ends its line (glued to the previous
    text), or follows another splitting marker on the same line. One inside a sentence is
    a mention and stays text. Reading stops at ``[[ ## completed ## ]]`` once an output has
    been seen (what follows is a model inventing more), and an output takes its first
    value that is not an unfilled template, preferring markers that start a line.
    """
    by_norm = _by_norm(tuple(names))
    output_set = set(outputs)
    sections = _plain_sections(text, by_norm, output_set)
    if sections is None:
        sections = _all_sections(text, by_norm, output_set)
    found = Found(how="sections")
    last_lines = sections[-1][2]
    for prefer_strong in (True, False):
        for name, strong, lines in sections:
            if name not in output_set or name in found.texts or (prefer_strong and not strong):
                continue
            value = _section_text(lines)
            placeholder = _PLACEHOLDER.match(value.strip())
            if placeholder and norm(placeholder.group(1)) == norm(name):
                continue  # the structure echoed from the system message, not a value
            found.texts[name] = value
            if lines is last_lines:  # no marker after it: it runs to the end of the text
                found.open.add(name)
    return found if found.texts else None


Section = tuple[str | None, bool, list[str]]  # (output name or None, strong, lines)


def _all_sections(text: str, by_norm: Mapping[str, str], output_set: set[str]) -> list[Section]:
    """Split a completion at every splitting marker (see `find_sections`)."""
    sections: list[tuple[str | None, bool, list[str]]] = [(None, True, [])]
    seen_output = False
    for line in text.split("\n"):
        splits = _splitting_markers(line)
        if not splits:
            sections[-1][2].append(line)
            continue
        head = line[: splits[0][0].start()].rstrip(_TAIL_DECORATION_CHARS)
        if head.strip():
            sections[-1][2].append(head)
        stop = False
        for index, (match, strong) in enumerate(splits):
            end = splits[index + 1][0].start() if index + 1 < len(splits) else len(line)
            rest = _LEAD_DECORATION.sub("", line[match.end() : end], count=1)
            rest = rest.rstrip(_TAIL_DECORATION_CHARS) if index + 1 < len(splits) else rest
            label = norm(match.group(1))
            name = by_norm.get(label)
            if label == "completed" and seen_output:
                sections.append((None, True, []))  # it closes the section before it
                stop = True
                break
            seen_output = seen_output or name in output_set
            sections.append((name, strong, [rest] if rest.strip() else []))
        if stop:
            break
    return sections


# A completion as the adapter asks for it: each marker exactly as written, alone on its line.
_PLAIN_MARKER = re.compile(r"^\[\[ ## ([A-Za-z]\w*) ## \]\][ \t]*$", re.MULTILINE)


def _plain_sections(
    text: str, by_norm: Mapping[str, str], output_set: set[str]
) -> list[Section] | None:
    """`_all_sections` for a completion whose only ``[[`` are plain markers, else ``None``.

    Such a completion is what models write nearly always, and one split reads it.
    """
    pieces = _PLAIN_MARKER.split(text)
    if len(pieces) < 3 or text.count("[[") != len(pieces) // 2:
        return None
    # Each marker takes its whole line, so every piece but the first starts with that
    # line's end, and every piece but the last ends with the line end before a marker.
    head = pieces[0]
    sections: list[Section] = [(None, True, head[:-1].split("\n") if head else [])]
    seen_output = False
    last = len(pieces) - 2
    for index in range(1, len(pieces), 2):
        label = norm(pieces[index])
        if label == "completed" and seen_output:
            sections.append((None, True, []))  # it closes the section before it
            break
        name = by_norm.get(label)
        seen_output = seen_output or name in output_set
        body = pieces[index + 1]
        if index == last:
            lines = body[1:].split("\n") if body else []
        else:
            lines = body[1:-1].split("\n") if len(body) >= 2 else []
        sections.append((name, True, lines))
    return sections


def _splitting_markers(line: str) -> list[tuple[re.Match[str], bool]]:
    if "[[" not in line:  # most lines: no marker at all
        return []
    matches = list(_MARKER.finditer(line))
    splits: list[tuple[re.Match[str], bool]] = []
    for match in matches:
        at_start = not splits and bool(_DECORATION.match(line[: match.start()]))
        at_end = bool(_DECORATION.match(line[match.end() :]))
        if at_start or at_end:
            splits.append((match, True))
        elif splits:
            splits.append((match, False))  # several on one line, after a real marker
    return splits


def _section_text(lines: list[str]) -> str:
    fences = [i for i, line in enumerate(lines) if _FENCE_LINE.match(line)]
    if len(fences) % 2 == 1:
        # An unpaired fence line belongs to a fence around the whole answer, not the value.
        drop = fences[-1] if fences[-1] == len(lines) - 1 else fences[0]
        lines = lines[:drop] + lines[drop + 1 :]
    return "\n".join(lines).strip()


# -- Field: value lines ---------------------------------------------------------------------

_LABEL_LINE = re.compile(r"^[\s*_#>\-]*([A-Za-z][\w \-]{0,40}?)[\s*_`]*:[\s*_`]*(.*)$")


def find_labels(text: str, names: Iterable[str], outputs: Mapping[str, bool]) -> Found | None:
    """Read ``Field: value`` lines; only when every required output is labelled that way.

    ``outputs`` maps each output name to whether it is required. A value runs on to the
    next labelled line.
    """
    by_norm = {norm(n): n for n in names}
    current: str | None = None
    collected: dict[str, list[str]] = {}
    for line in text.split("\n"):
        match = _LABEL_LINE.match(line)
        name = by_norm.get(norm(match.group(1))) if match else None
        if match and name is not None:
            current = name if name not in collected else None
            if current is not None:
                collected[current] = [match.group(2).rstrip(_TAIL_DECORATION_CHARS)]
        elif current is not None:
            collected[current].append(line)
    found = Found(how="labels")
    for name in outputs:
        if name in collected:
            found.texts[name] = "\n".join(collected[name]).strip()
    if collected:  # a value runs on to the next label, so the last runs to the end
        found.open.add(next(reversed(collected)))
    required = [name for name, needed in outputs.items() if needed]
    if not found.texts or any(name not in found.texts for name in required):
        return None
    return found


# -- JSON objects ---------------------------------------------------------------------------

_NOT_WRAPPERS = frozenset({"properties", "$defs", "definitions", "items", "schema"})


def find_json(text: str, outputs: Iterable[str]) -> Found | None:
    """The JSON object in the text that best fits the outputs; ``None`` if none fits.

    Several objects (an echoed schema or input before the answer) are weighed by how many
    output names they hold; a wrapper such as ``{"output": {...}}`` is opened; keys match
    the outputs whatever their case or separators. An object the text cuts off marks the
    output it was writing as cut off.
    """
    output_list = list(outputs)
    by_norm = {norm(n): n for n in output_list}
    best: tuple[int, Found] | None = None
    for obj, complete in _objects(strip_fence(text)):
        found, score = _fit(obj, by_norm)
        if complete is not None:
            # Cut off: only members before the last top-level comma are whole. Any other
            # output may have been about to be written, so none is defaulted or completed.
            whole = set(_matched_keys(complete, by_norm).values())
            found.cut_off.update(name for name in output_list if name not in whole)
        if score and (best is None or score >= best[0]):
            best = (score, found)
    return best[1] if best else None


def _fit(obj: dict[Any, Any], by_norm: Mapping[str, str]) -> tuple[Found, int]:
    matched = _matched_keys(obj, by_norm)
    found = Found(texts={by_norm[norm(str(k))]: obj[k] for k in matched}, how="JSON")
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


def _objects(text: str) -> list[tuple[dict[Any, Any], dict[Any, Any] | None]]:
    """Every top-level ``{...}`` in the text, decoded.

    Each comes with ``None`` when it is closed, or, when the text cuts it off, with the
    members that were complete (those before its last top-level comma).
    """
    if text.startswith("{") and text.endswith("}"):  # the usual answer: one whole object
        try:
            whole = decode_json(text, python=False, repair=False)
        except ValueError:
            whole = None
        if isinstance(whole, dict):
            return [(whole, None)]
    found: list[tuple[dict[Any, Any], dict[Any, Any] | None]] = []
    position = 0
    while True:
        start = text.find("{", position)
        if start == -1:
            return found
        try:
            end, last_comma = scan_brackets(text, start)
        except ValueError:  # nested too deep to be an answer: nothing more to read
            return found
        chunk = text[start : end + 1] if end != -1 else text[start:]
        obj = decode_object(chunk)
        if obj is not None:
            complete = None
            if end == -1:
                head = text[start:last_comma] + "}" if last_comma != -1 else "{}"
                complete = decode_object(head) or {}
                # The complete members are read from their own exact text: json-repair's
                # reading of a cut-off object may differ even in members before the cut.
                obj = {**obj, **complete}
            found.append((obj, complete))
        if end == -1:
            return found
        position = end + 1 if obj is not None else start + 1


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

# An echo is worth removing only when it could be read as an answer: it holds a marker.
_ECHO_MIN = 8


def without_echoes(text: str, echoes: Iterable[str], outputs: Iterable[str]) -> str:
    """The text without verbatim copies of inputs that come before an output's marker.

    A model that repeats its input before answering also repeats any ``[[ ## answer ## ]]``
    the input holds; read as a section, that would replace the real answer. A copy that no
    output marker follows (a model asked to repeat the text, say) is the answer and stays.
    """
    wanted = {norm(name) for name in outputs}
    markers = [m.start() for m in _MARKER.finditer(text) if norm(m.group(1)) in wanted]
    if not markers:
        return text
    last_marker = markers[-1]
    for echo in echoes:
        echo = echo.strip()
        if len(echo) < _ECHO_MIN or "[[" not in echo:
            continue
        position = text.find(echo)
        while position != -1 and position + len(echo) <= last_marker:
            text = text[:position] + text[position + len(echo) :]
            last_marker -= len(echo)
            position = text.find(echo, position)
    return text
