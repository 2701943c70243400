"""Reading ``[[ ## field ## ]]`` sections as they arrive (`ChatAdapter`)."""

from __future__ import annotations

from structio.parsing.locate import is_fence_line, is_placeholder, norm, split_line
from structio.parsing.stream.events import StreamEvent
from structio.parsing.stream.items import ListItems
from structio.parsing.stream.lines import UnfinishedLine
from structio.parsing.stream.reader import Locate, StreamReader
from structio.signatures.signature import Signature

__all__ = ["SectionStreamReader"]


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
        self._by_norm = {norm(name): name for name in signature.fields}
        self._output_set = set(self.outputs)
        self._line = UnfinishedLine()  # the line being received
        self._line_sent = 0  # how much of a whole line read now was given to its section
        self._lines_seen = 0  # where the visible text of the complete lines ends
        self._current: str | None = None  # the output whose section is being streamed
        self._listing: ListItems | None = None  # the list output whose items are being read
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

    def _read(self, visible: str) -> list[StreamEvent]:
        if self._stopped:
            return []
        events: list[StreamEvent] = []
        closed = False
        if "\n" in visible:
            # The line so far is joined once, as it ends: never while it grows.
            lines = (self._line.text() + visible).split("\n")
            self._line_sent = self._line.sent
            self._line.reset(lines.pop())
            for line in lines:
                self._lines_seen += len(line) + 1
                closed = self._whole_line(line, events) or closed
                self._line_sent = 0
                if self._ended():
                    break
        else:
            self._line.add(visible)
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
        if not self._stopped and (self._current is not None or self._listing is not None):
            self._partial_line(events)
        return events

    def _ended(self) -> bool:
        """Whether ``[[ ## completed ## ]]`` has ended the answer (what follows is not read)."""
        return self._stopped

    def _restart(self) -> None:
        self._line.reset()
        self._line_sent = 0
        self._lines_seen = 0
        self._current = None
        self._listing = None
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
            if self._open_section() and not self._started and self._echoed(line):
                return False
            if self._open_section():
                self._body(line[self._line_sent :], events, fence=is_fence_line(line))
                self._body("\n", events)
            return False
        head, markers = split
        if self._open_section():
            self._body(head[self._line_sent :], events)
        self._current = None
        self._listing = None
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
            if self._open(name, strong) and not self._echoed(rest):
                self._body(rest, events)
        return True

    def _echoed(self, text: str) -> bool:
        """Whether the section's first text is its ``{name}`` placeholder, echoed.

        Then the section is no answer: nothing of it is streamed, and the field's next
        section is streamed instead.
        """
        name = self._current or (self._listing.name if self._listing else None)
        if name is None or not text.strip() or not is_placeholder(text, name):
            return False
        self._streamed.discard(name)
        self._current = None
        self._listing = None
        return True

    def _open_section(self) -> bool:
        """Whether a section being read gives events (its text, or its items)."""
        return self._current is not None or self._listing is not None

    def _open(self, name: str | None, strong: bool) -> bool:
        """Start a section; whether it gives events (a text streamed, or items)."""
        self._current = None
        self._listing = None
        self._started = False
        self._held = ""
        self._fenced = False
        if name is None or not strong or name in self._streamed or name in self.given:
            return False
        if name in self.text_fields:
            self._current = name
        elif name in self.list_items:
            self._listing = ListItems(name, self.list_items[name])
        else:
            return False
        self._streamed.add(name)
        return True

    def _partial_line(self, events: list[StreamEvent]) -> None:
        line = self._line
        if line.first == "`":
            return  # it may be a fence line: wait for the whole line
        if not self._started and line.first == "{":
            return  # it may be the field's `{name}` placeholder: wait for the whole line
        self._body(line.take(), events)

    def _body(self, text: str, events: list[StreamEvent], *, fence: bool = False) -> None:
        """Send a section's text, holding blank space (and fence lines) until text follows."""
        if self._listing is not None:
            if not fence and text:  # a fence around the list is not its text
                events.extend(self._listing.feed(text, self)[0])
            return
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
