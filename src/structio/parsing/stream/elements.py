"""Reading output elements as they arrive (`XMLAdapter`)."""

from __future__ import annotations

from structio.parsing.stream.events import StreamEvent
from structio.parsing.stream.reader import Locate, StreamReader
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
    space is never sent (the value is stripped).
    """

    def __init__(self, signature: type[Signature], locate: Locate) -> None:
        super().__init__(signature, locate)
        self._outputs = {name: f.annotation for name, f in signature.output_fields.items()}
        self._restart()

    def _restart(self) -> None:
        self._buffer = ""
        self._scan = XMLScan(self._outputs)
        self._streaming: _Open | None = None  # the element whose text is being sent
        self._examined = 0  # how far its text has been looked at
        self._stopped = False  # whether the rest of its text waits for its close
        self._started = False
        self._held = ""
        self._streamed: set[str] = set()

    def _read(self, visible: str) -> list[StreamEvent]:
        self._buffer += visible
        events: list[StreamEvent] = []
        if self._scan.advance(self._buffer, final=False):
            prefix = self._buffer[: self._scan.position]
            events.extend(self._settle(self.locate(prefix), "XML"))
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

    def _stream_text(self, name: str, events: list[StreamEvent]) -> None:
        chunk = self._buffer[self._examined :]
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
