"""Reading one JSON object's members as they arrive (`JSONAdapter`, `CompactAdapter`)."""

from __future__ import annotations

import json
import re

from structio.parsing.locate import norm
from structio.parsing.stream.events import StreamEvent
from structio.parsing.stream.items import ListItems
from structio.parsing.stream.reader import Locate, StreamReader
from structio.signatures.signature import Signature

__all__ = ["JSONStreamReader"]


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
        self._list_name: str | None = None  # the list output whose value comes next
        self._list: ListItems | None = None  # its items, read as its array arrives

    def _read(self, visible: str) -> list[StreamEvent]:
        if self._state == _DONE:
            return []
        self._buffer += visible
        events: list[StreamEvent] = []
        while self._state != _DONE and self._step(events):
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

    def _step(self, events: list[StreamEvent]) -> bool:
        """Read on from `_at`; False when the buffer is used up (more text is needed)."""
        text, at, state = self._buffer, self._at, self._state
        if state == _STRING:
            return self._string(events)
        if state == _NESTED:
            more = self._nested()
            if self._list is not None:
                new, _ = self._list.feed(text[at : self._at], self)
                events.extend(new)
            return more
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
                if char == "[" and self._list_name is not None:
                    item = self.list_items[self._list_name]
                    self._list = ListItems(self._list_name, item, opened=True)
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
        listed = first and name in self.list_items and name not in self.given
        self._list_name = name if listed else None
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
        self._list = None
        prefix = self._text.upto(self._offset + at)
        # The object as it stands, closed here as the whole answer will close it.
        events.extend(self._settle(self.locate(prefix + "}"), "JSON"))
        self._state = _DONE if last else _KEY
        self._at = at + 1
