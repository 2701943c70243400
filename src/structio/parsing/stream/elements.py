"""Reading output elements as they arrive (`XMLAdapter`)."""

from __future__ import annotations

from structio.parsing.stream.events import StreamEvent
from structio.parsing.stream.reader import Locate, StreamReader
from structio.parsing.stream.xml_items import ElementItems
from structio.parsing.xml import XMLScan, _Open
from structio.signatures.signature import Signature

__all__ = ["XMLStreamReader"]

# -- streams --------------------------------------------------------------------------------


class XMLStreamReader(StreamReader):
    """Reads output elements as they arrive (`XMLAdapter`).

    An output's value is given once its closing tag has arrived, read by the adapter's own
    reader from the text so far. A ``str`` output's text is streamed as it comes, up to its
    first ``&`` or ``<`` (whether escapes are decoded depends on all of its text, and a ``<``
    may start its closing tag); the rest comes with its value. Leading and trailing blank
    space is never sent (the value is stripped). A list output's ``<item>`` children are
    given as each closes (`ElementItems`).

    Only a piece holding a ``>`` can open or close an element, so only such a piece has the
    text joined and scanned; text no element needs any more is dropped. A piece of a long
    ``str`` output's text costs its own length, however long the text before it.
    """

    def __init__(self, signature: type[Signature], locate: Locate) -> None:
        super().__init__(signature, locate)
        self._outputs = {name: f.annotation for name, f in signature.output_fields.items()}
        self._restart()

    def _restart(self) -> None:
        self._buffer = ""  # the visible text from `_offset` on, as far as it was joined
        self._pieces: list[str] = []  # the text after `_buffer`, not joined yet
        self._length = 0  # the length of `_buffer` and `_pieces` together
        self._offset = 0
        self._listing: ElementItems | None = None
        self._scan = XMLScan(self._outputs)
        self._streaming: _Open | None = None  # the element whose text is being sent
        self._examined = 0  # how far its text has been looked at
        self._stopped = False  # whether the rest of its text waits for its close
        self._started = False
        self._held = ""
        self._streamed: set[str] = set()

    def _read(self, visible: str) -> list[StreamEvent]:
        self._pieces.append(visible)
        self._length += len(visible)
        events: list[StreamEvent] = []
        if ">" in visible:
            self._scan_on(events)
        current = self._scan.current
        if current is not None and current != self._streaming:
            self._streaming = None
            if (
                current.name in self.text_fields
                and current.name not in self._streamed
                and current.name not in self.given
            ):
                self._streaming = current
                self._streamed.add(current.name)
                self._examined = current.start
                self._stopped = self._started = False
                self._held = ""
        if current is not None and current == self._streaming and not self._stopped:
            self._stream_text(current.name, events)
        return events

    def _scan_on(self, events: list[StreamEvent]) -> None:
        """Scan the text so far: values of the elements now closed, items of an open list."""
        if self._pieces:
            self._buffer += "".join(self._pieces)
            self._pieces = []
        if self._scan.advance(self._buffer, final=False):
            prefix = self._text.upto(self._offset + self._scan.position)
            events.extend(self._settle(self.locate(prefix), "XML"))
        current = self._scan.current
        if self._listing is not None and (current is None or current.name != self._listing.name):
            self._listing = None
        if (
            current is not None
            and self._listing is None
            and current.name in self.list_items
            and current.name not in self._streamed
            and current.name not in self.given
        ):
            self._streamed.add(current.name)
            annotation = self._outputs[current.name]
            self._listing = ElementItems(current.name, annotation, current.tag, current.start)
        if self._listing is not None:
            events.extend(self._listing.read(self._buffer, self))
        if current is None:  # an element streamed before is closed: nothing needs its text
            self._streaming = None
            self._drop(self._scan.position)

    def _drop(self, keep: int) -> None:
        """Drop the buffer's text before ``keep``: no element is open, none needs it."""
        if keep <= 0:
            return
        self._buffer = self._buffer[keep:]
        self._offset += keep
        self._length -= keep
        self._scan.position -= keep

    def _since(self, start: int) -> str:
        """The visible text from ``start`` (in the buffer) to the end, as short as it is."""
        joined = len(self._buffer)
        if start >= joined:
            tail: list[str] = []
            size = self._length - start
            for piece in reversed(self._pieces):
                tail.append(piece)
                size -= len(piece)
                if size <= 0:
                    break
            text = "".join(reversed(tail))
            return text[len(text) - (self._length - start) :]
        return self._buffer[start:] + "".join(self._pieces)

    def _stream_text(self, name: str, events: list[StreamEvent]) -> None:
        chunk = self._since(self._examined)
        cut = _first_of(chunk, "&<")
        if cut != -1:
            chunk = chunk[:cut]
            self._stopped = True
        self._examined += len(chunk)
        if not self._started:
            chunk = chunk.lstrip()
            if not chunk:
                return
            if chunk.startswith("{"):  # may be the prompt's `{name}`: wait for the close
                self._stopped = True
                return
            self._started = True
        combined = self._held + chunk
        kept = combined.rstrip()
        self._held = combined[len(kept) :]
        events.extend(self._send(name, kept))


def _first_of(text: str, chars: str) -> int:
    found = [index for index in (text.find(char) for char in chars) if index != -1]
    return min(found) if found else -1
