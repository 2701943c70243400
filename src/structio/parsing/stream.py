"""Reading a completion while it is written: each output the moment it is complete.

A `StreamReader` takes the completion's text in pieces, as a model streams it, and says
what can be said already, as events: `FieldDelta` (new text of a ``str`` output) and
`FieldValue` (an output's typed value, once its text can no longer change). It never
guesses: a value is given only when the text after it cannot change it (a ``[[ ## next ## ]]``
marker line or ``[[ ## completed ## ]]`` closes a section; a ``,`` or ``}`` closes a JSON
member), and it is read by the same code that reads the whole completion, from the text
received so far. At the end, `StreamReader.finish` compares what was said with the reading
of the whole completion: it gives every value not given yet, and, should the whole
completion read differently (a late ``</think>``, a fallback reading), a `Reread` event
first, then every output again.

Reasoning drafts (``<think>...</think>``) are never streamed as output, text before the
first marker is not an output, and a marker split across pieces is recognised whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from structio.parsing.locate import (
    Found,
    is_fence_line,
    is_placeholder,
    norm,
    settled_prefix,
    split_line,
)
from structio.parsing.read import output_infos, read_json_value
from structio.signatures.signature import Signature

__all__ = [
    "FieldDelta",
    "FieldValue",
    "JSONStreamReader",
    "Reread",
    "SectionStreamReader",
    "StreamEvent",
    "StreamReader",
    "ThinkFilter",
]

Locate = Callable[[str], "Found | None"]
"""Where the outputs are in a text (the adapter's own reading, drafts and fences set aside)."""


class StreamEvent:
    """Something a stream says about the outputs while the model writes them.

    Events are immutable, compare by value and match by position
    (``case FieldDelta(name, text)``).
    """

    __slots__ = ()
    __match_args__: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__match_args__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self), self._values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{type(self).__name__}({shown})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")


# Plain classes, not dataclasses: building a frozen dataclass costs a millisecond at import.
class FieldDelta(StreamEvent):
    """New text of a ``str`` output, as it arrives.

    The deltas of a field, joined, are its final value (unless a `Reread` follows).

    Attributes:
        field: The output's name.
        delta: The new text.
    """

    __slots__ = ("delta", "field")
    __match_args__ = ("field", "delta")
    field: str
    delta: str

    def __init__(self, field: str, delta: str) -> None:
        object.__setattr__(self, "field", field)
        object.__setattr__(self, "delta", delta)


class FieldValue(StreamEvent):
    """An output's typed value: given once, when its text is complete, and never changed.

    Attributes:
        field: The output's name.
        value: The value, as the final `Prediction` holds it.
    """

    __slots__ = ("field", "value")
    __match_args__ = ("field", "value")
    field: str
    value: Any

    def __init__(self, field: str, value: Any) -> None:
        object.__setattr__(self, "field", field)
        object.__setattr__(self, "value", value)


class Reread(StreamEvent):
    """The answer is read anew: every event before this one is void.

    Given when the whole completion reads differently from what was streamed (the model
    ended a reasoning draft late, the adapter's format could not be read and the fallback
    read it or asked again). The events after it give every output again, from the start.

    Attributes:
        reason: What happened, in words.
    """

    __slots__ = ("reason",)
    __match_args__ = ("reason",)
    reason: str

    def __init__(self, reason: str) -> None:
        object.__setattr__(self, "reason", reason)


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        equal = a == b
    except Exception:  # a value whose == raises cannot be shown equal
        return False
    if not isinstance(equal, bool):
        return False
    return equal or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)


class StreamReader:
    """Reads a streamed completion; this base class says nothing before the end.

    Adapters give one per call (`Adapter.stream_reader`). Subclasses recognise their
    format as it arrives; every reader shares `finish`, which keeps the promise that no
    event contradicts the final reading.

    Args:
        signature: The signature whose outputs are read.
        locate: The adapter's reading of where the outputs are in a (partial) text.
    """

    def __init__(self, signature: type[Signature], locate: Locate) -> None:
        self.signature = signature
        self.locate = locate
        self.outputs = tuple(signature.output_fields)
        #: The outputs whose text is streamed: those of type ``str`` exactly.
        self.text_fields = frozenset(
            name for name, f in signature.output_fields.items() if f.annotation is str
        )
        #: Values given so far, by output.
        self.given: dict[str, Any] = {}
        #: Text given so far as deltas, by output.
        self.sent: dict[str, str] = {}
        # Outputs given a text that the whole completion may not confirm.
        self._doubtful: set[str] = set()

    def feed(self, piece: str) -> list[StreamEvent]:
        """Read the next piece of the completion; the events it allows."""
        return []

    @property
    def said(self) -> bool:
        """Whether any event has been given."""
        return bool(self.given or self.sent)

    def finish(self, values: Mapping[str, Any]) -> list[StreamEvent]:
        """The last events, given the whole completion's reading (``values``, every output).

        Every output gets its value (and a ``str`` output the rest of its text) unless it
        has it already; if anything said before disagrees with ``values``, a `Reread`
        comes first and every output is given again.
        """
        wrong = [
            name
            for name in self.outputs
            if (name in self.given and not _same(self.given[name], values.get(name)))
            or (
                name in self.sent
                and not (
                    isinstance(values.get(name), str) and values[name].startswith(self.sent[name])
                )
            )
        ]
        events: list[StreamEvent] = []
        if wrong:
            events.append(
                Reread(
                    "the whole completion reads "
                    + ", ".join(f"`{name}`" for name in wrong)
                    + " differently from what was streamed; every output follows again"
                )
            )
            self.given.clear()
            self.sent.clear()
        for name in self.outputs:
            if name in self.given or name not in values:
                continue
            events.extend(self._complete(name, values[name]))
        return events

    # -- for subclasses -------------------------------------------------------------------

    def _send(self, name: str, text: str) -> list[StreamEvent]:
        if not text:
            return []
        self.sent[name] = self.sent.get(name, "") + text
        return [FieldDelta(name, text)]

    def _complete(self, name: str, value: Any) -> list[StreamEvent]:
        """A field's value, after the rest of its text for a ``str`` output."""
        events: list[StreamEvent] = []
        if name in self.text_fields and isinstance(value, str):
            sent = self.sent.get(name, "")
            if not value.startswith(sent):
                self._doubtful.add(name)  # `finish` will say so with a Reread
                return []
            events = self._send(name, value[len(sent) :])
        self.given[name] = value
        events.append(FieldValue(name, value))
        return events

    def _settle(self, found: Found | None, how: str) -> list[StreamEvent]:
        """Give the values of the outputs ``found`` in a prefix that more text cannot change."""
        if found is None or not found.how.startswith(how):
            return []
        infos = output_infos(self.signature)
        from_json = found.how.startswith("JSON")
        events: list[StreamEvent] = []
        for name, raw in found.texts.items():
            if (
                name in self.given
                or name in self._doubtful
                or raw is None  # JSON null: the output is left to its default
                or name in found.open
                or name in found.cut_off
                or name in found.weak
            ):
                continue
            try:
                value = read_json_value(infos[name], raw, from_json=from_json)
            except ValueError:
                self._doubtful.add(name)  # the whole completion will say what this is
                continue
            events.extend(self._complete(name, value))
        return events


# -- reasoning drafts -----------------------------------------------------------------------

_TAG = re.compile(r"<(/?)think(?:ing)?>", re.IGNORECASE)
_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
_TAG_FORMS = ("<think>", "<thinking>", "</think>", "</thinking>")


def _partial_tag(text: str) -> int:
    """Where a tag that the next piece may complete starts at the end of ``text`` (or -1)."""
    start = text.rfind("<", max(0, len(text) - 12))
    if start == -1:
        return -1
    tail = text[start:].lower()
    return start if any(form.startswith(tail) for form in _TAG_FORMS) else -1


class ThinkFilter:
    """The text of a stream without its reasoning drafts, as `clean` sets them aside.

    ``<think>...</think>`` (or ``<thinking>``) at the start of a line is dropped; a tag
    split across pieces is held until it is whole. A closing tag without its opening one
    (the chat template wrote the opening), at the start or end of a line, means all before
    it was a draft: `feed` then says so (``reset``). A tag in the middle of a line is text.
    """

    def __init__(self) -> None:
        self.inside = False
        self._held = ""
        self._line_start = True  # whether the text not yet read starts a line

    def feed(self, piece: str) -> tuple[str, bool]:
        """The visible text of the next piece, and whether all visible text before is void."""
        text = self._held + piece
        self._held = ""
        if "<" not in text and not self.inside:  # the usual piece
            self._line_start = _starts_line(text, len(text), self._line_start)
            return text, False
        visible: list[str] = []
        reset = False
        position = 0  # where the text not yet given or dropped starts
        search = 0  # where the next tag is looked for
        while True:
            pattern = _CLOSE if self.inside else _TAG
            tag = pattern.search(text, search)
            if tag is None:
                partial = _partial_tag(text[search:])
                held_from = len(text) if partial == -1 else search + partial
                self._held = text[held_from:]
                if not self.inside:
                    visible.append(text[position:held_from])
                break
            if self.inside:  # the first closing tag ends the draft, wherever it is
                self.inside = False
                position = search = tag.end()
                continue
            at_start = _starts_line(text, tag.start(), self._line_start)
            if not tag.group(1):  # an opening tag
                if at_start:
                    visible.append(text[position : tag.start()])
                    self.inside = True
                    position = tag.end()
                search = tag.end()
                continue
            ends = True if at_start else _ends_draft(text, tag.end())
            if ends:
                visible = []  # a close without an open: what came before was the draft
                reset = True
                position = search = tag.end()
                continue
            if ends is None:  # what follows it is not here yet: the next piece says
                visible.append(text[position : tag.start()])
                self._held = text[tag.start() :]
                break
            search = tag.end()  # in the middle of a line: text
        self._line_start = _starts_line(text, len(text) - len(self._held), self._line_start)
        return "".join(visible), reset

    def flush(self) -> str:
        """Text held at the end of the stream (a ``<`` that began no tag)."""
        held, self._held = self._held, ""
        return "" if self.inside else held


_GLUED_ANSWER = ("[[", "{", "```")
_ELEMENT_STARTS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz/")


def _ends_draft(text: str, end: int) -> bool | None:
    """Whether a lone closing tag ending at ``end`` ends a draft, as `clean` decides.

    It does when only blanks follow it to the end of its line, or when the answer's
    structure is glued to it (``<x``, ``</``, ``[[``, ``{``, a fence); ``None`` when the
    text after it is too short to say.
    """
    after = text[end:]
    blanks = after.lstrip(" \t\r")
    if blanks.startswith("\n"):
        return True
    if not blanks:
        return None
    if len(blanks) == len(after):  # glued to the tag
        if after[0] == "<":
            return None if len(after) == 1 else after[1] in _ELEMENT_STARTS
        if after.startswith(_GLUED_ANSWER):
            return True
        if any(form.startswith(after) for form in _GLUED_ANSWER):
            return None
    return False


def _starts_line(text: str, index: int, line_start: bool) -> bool:
    """Whether ``text[index]`` starts a line (only blanks before it on its line).

    ``line_start`` says whether ``text`` itself starts one. Only the blanks just before
    ``index`` are looked at, so many tags on one long line cost no more than the line.
    """
    i = index
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    return text[i - 1] == "\n" if i > 0 else line_start


class _Text:
    """The visible text of a stream: drafts set aside; the whole of it, joined on demand."""

    def __init__(self) -> None:
        self.filter = ThinkFilter()
        self.pieces: list[str] = []
        self.length = 0

    def add(self, piece: str) -> tuple[str, bool]:
        visible, reset = self.filter.feed(piece)
        if reset:
            self.pieces = []
            self.length = 0
        if visible:
            self.pieces.append(visible)
            self.length += len(visible)
        return visible, reset

    def upto(self, end: int) -> str:
        text = "".join(self.pieces)
        self.pieces = [text]
        return text[:end]


# -- sections -------------------------------------------------------------------------------

# The readings of a section stream read at most this many times the text, and this many
# characters more: linear work, and no reading put off in a completion of a few sections.
_REREADS = 8
_REREAD_ALLOWANCE = 16_384


class SectionStreamReader(StreamReader):
    """Reads ``[[ ## field ## ]]`` sections as they arrive (`ChatAdapter`).

    A section's value is given once a later line holding a marker has been received
    whole, read from the text so far by the adapter's own reader; a ``str`` section is
    streamed line by line, and within a line up to where a marker may still begin.
    Leading and trailing blank space is never sent (the value is stripped), and neither is
    a code fence line until text follows it.
    """

    def __init__(self, signature: type[Signature], locate: Locate) -> None:
        super().__init__(signature, locate)
        self._text = _Text()
        self._by_norm = {norm(name): name for name in signature.fields}
        self._output_set = set(self.outputs)
        self._line = ""  # the line being received
        self._line_sent = 0  # how much of it has been given to the section
        self._lines_seen = 0  # where the visible text of the complete lines ends
        self._current: str | None = None  # the output whose section is being streamed
        self._started = False  # whether that section's text has begun
        self._held = ""  # blank space and fence lines not sent yet
        self._fenced = False  # whether a fence line is held
        self._streamed: set[str] = set()  # outputs streamed once (later sections are not)
        self._seen_output = False
        # The output section open before any answer, and its first line of text: an echoed
        # template (`{answer}`) is no answer, so its `completed` ends nothing.
        self._unsure: str | None = None
        self._unsure_first: str | None = None
        self._stopped = False
        self._pending = False  # a line holding a marker arrived since the last reading
        self._located = 0  # characters read by the readings so far

    def feed(self, piece: str) -> list[StreamEvent]:
        """Read the next piece; the events it allows."""
        visible, reset = self._text.add(piece)
        if reset:
            self._restart()
        if self._stopped or not visible:
            return []
        events: list[StreamEvent] = []
        text = self._line + visible
        closed = False
        if "\n" in visible:
            lines = text.split("\n")
            self._line = lines.pop()
            for line in lines:
                self._lines_seen += len(line) + 1
                closed = self._whole_line(line, events) or closed
                self._line_sent = 0
                if self._ended():
                    break
        else:
            self._line = text
        self._pending = self._pending or closed
        if self._pending and self._located + self._lines_seen <= (
            _REREADS * self._lines_seen + _REREAD_ALLOWANCE
        ):
            # A reading reads the whole text so far: many marker lines were read once per
            # line (quadratic). Past a few readings of its length, a reading waits for the
            # text to grow enough to pay for it; `finish` gives what it would have said.
            self._pending = False
            self._located += self._lines_seen
            prefix = self._text.upto(self._lines_seen)
            events.extend(self._settle(self.locate(prefix), "sections"))
        if not self._stopped and self._current is not None:
            self._partial_line(events)
        return events

    def _ended(self) -> bool:
        """Whether ``[[ ## completed ## ]]`` has ended the answer (what follows is not read)."""
        return self._stopped

    def _restart(self) -> None:
        # A late </think>: the text so far was a draft. Start again; `finish` sorts out
        # anything said from the draft.
        self._line = ""
        self._line_sent = 0
        self._lines_seen = 0
        self._current = None
        self._seen_output = False
        self._unsure = None
        self._unsure_first = None
        self._stopped = False

    def _whole_line(self, line: str, events: list[StreamEvent]) -> bool:
        """Read a received line; whether it holds a marker (a section may have closed)."""
        split = split_line(line) if "[[" in line else None
        if split is None:
            if self._unsure is not None and self._unsure_first is None and line.strip():
                self._unsure_first = line
            if self._current is not None and not self._started and self._echoed(line):
                return False
            if self._current is not None:
                self._body(line[self._line_sent :], events, fence=is_fence_line(line))
                self._body("\n", events)
            return False
        head, markers = split
        if self._current is not None:
            self._body(head[self._line_sent :], events)
        self._current = None
        for label, strong, rest in markers:
            if self._unsure is not None:  # the section before this marker is whole
                first = self._unsure_first or ""
                self._seen_output = not is_placeholder(first, self._unsure)
                self._unsure = None
            if label == "completed" and self._seen_output:
                self._stopped = True
                break
            name = self._by_norm.get(label)
            if not self._seen_output and name is not None and name in self._output_set:
                self._unsure = name
                self._unsure_first = rest if rest.strip() else None
            if self._open(name, strong) is not None and not self._echoed(rest):
                self._body(rest, events)
        return True

    def _echoed(self, text: str) -> bool:
        """Whether the section's first text is its ``{name}`` placeholder, echoed.

        Then the section is no answer: nothing of it is streamed, and the field's next
        section is streamed instead.
        """
        name = self._current
        if name is None or not text.strip() or not is_placeholder(text, name):
            return False
        self._streamed.discard(name)
        self._current = None
        return True

    def _open(self, name: str | None, strong: bool) -> str | None:
        """Start a section; the output it streams, if any."""
        self._current = None
        self._started = False
        self._held = ""
        self._fenced = False
        if (
            name is not None
            and strong
            and name in self.text_fields
            and name not in self._streamed
            and name not in self.given
        ):
            self._current = name
            self._streamed.add(name)
        return self._current

    def _partial_line(self, events: list[StreamEvent]) -> None:
        line = self._line
        if line.lstrip().startswith("`"):
            return  # it may be a fence line: wait for the whole line
        if not self._started and line.lstrip().startswith("{"):
            return  # it may be the field's `{name}` placeholder: wait for the whole line
        safe = settled_prefix(line)
        if len(safe) > self._line_sent:
            self._body(safe[self._line_sent :], events)
            self._line_sent = len(safe)

    def _body(self, text: str, events: list[StreamEvent], *, fence: bool = False) -> None:
        """Send a section's text, holding blank space (and fence lines) until text follows."""
        name = self._current
        if name is None or not text:
            return
        if fence or (self._fenced and not text.strip()):
            self._held += text  # sent once text follows: a last fence line is not the value's
            self._fenced = True
            return
        self._fenced = False
        if not self._started:
            text = text.lstrip()
            if not text:
                return
            self._held = self._held.lstrip()
            self._started = True
        combined = self._held + text
        kept = combined.rstrip()
        self._held = combined[len(kept) :]
        if kept:
            events.extend(self._send(name, kept))


# -- JSON ----------------------------------------------------------------------------------

_STRING_STOP = re.compile(r'["\\]')
_NESTED_STOP = re.compile(r'[\[\]{}"\\]')
_SCALAR_END = re.compile(r"[\s,}\]]")
_HIGH_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")

_BEFORE, _KEY, _IN_KEY, _COLON, _VALUE, _STRING, _NESTED, _SCALAR, _AFTER, _DONE = range(10)


class JSONStreamReader(StreamReader):
    """Reads one JSON object's members as they arrive (`JSONAdapter`).

    A member's value is given once the ``,`` or ``}`` after it has arrived, read by the
    adapter's own reader from the object so far; a ``str`` value is streamed as it is
    decoded (escapes whole). Anything but one plain object (a fence or words before it are
    fine) is left to the end.
    """

    def __init__(self, signature: type[Signature], locate: Locate) -> None:
        super().__init__(signature, locate)
        self._text = _Text()
        self._by_norm = {norm(name): name for name in self.outputs}
        self._restart()

    def _restart(self) -> None:
        self._buffer = ""  # visible text from `_offset` on
        self._offset = 0
        self._at = 0  # where reading goes on in the buffer
        self._state = _BEFORE
        self._mark = 0  # where the key being read starts (its quote)
        self._raw_from = 0  # where the string's text not yet sent starts
        self._member: str | None = None  # the output whose string is being sent
        self._depth = 0
        self._in_string = False
        self._seen: set[str] = set()

    def feed(self, piece: str) -> list[StreamEvent]:
        """Read the next piece; the events it allows."""
        visible, reset = self._text.add(piece)
        if reset:
            self._restart()
        if not visible or self._state == _DONE:
            return []
        self._buffer += visible
        events: list[StreamEvent] = []
        while self._state != _DONE and self._read(events):
            pass
        # Drop what no state needs any more: an unfinished key or string is kept.
        keep = self._at
        if self._state == _IN_KEY:
            keep = self._mark
        elif self._state == _STRING and self._member is not None:
            keep = min(keep, self._raw_from)
        if keep:
            self._buffer = self._buffer[keep:]
            self._offset += keep
            self._at -= keep
            self._mark -= keep
            self._raw_from -= keep
        return events

    def _read(self, events: list[StreamEvent]) -> bool:
        """Read on from `_at`; False when the buffer is used up (more text is needed)."""
        text, at, state = self._buffer, self._at, self._state
        if state == _STRING:
            return self._string(events)
        if state == _NESTED:
            return self._nested()
        if state == _IN_KEY:
            return self._key()
        if state == _SCALAR:
            end = _SCALAR_END.search(text, at)
            self._at = end.start() if end else len(text)
            if end:
                self._state = _AFTER
            return end is not None
        if state == _BEFORE:
            start = text.find("{", at)
            self._at = start + 1 if start != -1 else len(text)
            if start != -1:
                self._state = _KEY
            return start != -1
        while at < len(text) and text[at].isspace():
            at += 1
        self._at = at
        if at == len(text):
            return False
        char = text[at]
        if state == _KEY and char == '"':
            self._state, self._mark, self._at = _IN_KEY, at, at + 1
        elif (state == _KEY and char == "}") or (state == _AFTER and char in ",}"):
            self._closed(at, events, last=char == "}")
        elif state == _COLON and char == ":":
            self._state, self._at = _VALUE, at + 1
        elif state == _VALUE:
            self._at = at + 1
            if char == '"':
                self._state, self._raw_from = _STRING, at + 1
            elif char in "{[":
                self._state, self._depth, self._in_string = _NESTED, 1, False
            else:
                self._state = _SCALAR
        else:
            self._state = _DONE  # not one plain object: the whole completion will say
        return True

    def _scan_string(self) -> tuple[int, int]:
        """Read a string from `_at`: (where it closes or -1, how far its text is whole)."""
        text, at = self._buffer, self._at
        while True:
            stop = _STRING_STOP.search(text, at)
            if stop is None:
                return -1, len(text)
            if stop.group() == '"':
                return stop.start(), stop.start()
            width = 6 if text[stop.start() + 1 : stop.start() + 2] == "u" else 2
            if stop.start() + width > len(text):
                return -1, stop.start()  # an escape not whole yet
            at = stop.start() + width

    def _key(self) -> bool:
        end, whole = self._scan_string()
        if end == -1:
            self._at = whole
            return False
        try:
            key = json.loads(self._buffer[self._mark : end + 1], strict=False)
        except ValueError:
            self._state = _DONE
            return True
        name = self._by_norm.get(norm(str(key)))
        first = name is not None and name not in self._seen
        if name is not None:
            self._seen.add(name)
        sending = first and name in self.text_fields and name not in self.given
        self._member = name if sending else None
        self._state, self._at = _COLON, end + 1
        return True

    def _string(self, events: list[StreamEvent]) -> bool:
        end, whole = self._scan_string()
        self._at = end if end != -1 else whole
        if self._member is not None:
            safe = whole
            if end == -1:
                # A high surrogate waits for its pair: decoded alone it would not join it.
                start = max(self._raw_from, safe - 6)
                last = _HIGH_SURROGATE.match(self._buffer, start) if safe - start == 6 else None
                if last is not None:
                    safe = start
            if safe > self._raw_from:
                try:
                    new = json.loads('"' + self._buffer[self._raw_from : safe] + '"', strict=False)
                except ValueError:
                    self._member = None  # not plain JSON text: the end will say
                else:
                    self._raw_from = safe
                    events.extend(self._send(self._member, new))
        if end == -1:
            return False
        self._state, self._at = _AFTER, end + 1
        return True

    def _nested(self) -> bool:
        text, at = self._buffer, self._at
        while True:
            stop = _NESTED_STOP.search(text, at)
            if stop is None:
                self._at = len(text)
                return False
            char = stop.group()
            if char == "\\":
                if stop.start() + 2 > len(text):
                    self._at = stop.start()
                    return False
                at = stop.start() + 2
                continue
            at = stop.start() + 1
            if char == '"':
                self._in_string = not self._in_string
            elif self._in_string:
                continue
            elif char in "{[":
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth == 0:
                    self._state, self._at = _AFTER, at
                    return True

    def _closed(self, at: int, events: list[StreamEvent], *, last: bool) -> None:
        """A member (or the object) closed at ``at``: give the values now complete."""
        self._member = None
        prefix = self._text.upto(self._offset + at)
        # The object as it stands, closed here as the whole answer will close it.
        events.extend(self._settle(self.locate(prefix + "}"), "JSON"))
        self._state = _DONE if last else _KEY
        self._at = at + 1
