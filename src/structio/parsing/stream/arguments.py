"""Reading the answer tool's arguments as they arrive (`ToolOutputAdapter`)."""

from __future__ import annotations

from structio.parsing.stream.events import ReasoningDelta, StreamEvent
from structio.parsing.stream.json_object import JSONStreamReader
from structio.parsing.stream.reader import Locate
from structio.parsing.stream.think import ThinkFilter
from structio.signatures.signature import Signature

__all__ = ["ArgumentsStreamReader"]


class ArgumentsStreamReader(JSONStreamReader):
    """Reads the JSON arguments of the first call to the answer tool, as they are streamed.

    The arguments are one JSON object of the outputs, read as `JSONStreamReader` reads a
    JSON answer: a ``str`` output streamed as it is decoded, every value once the ``,`` or
    ``}`` after it has come. Text beside the call gives only its reasoning drafts: whether
    the model answers in text instead (read at the end) is known only then.

    Args:
        signature: The signature whose outputs are read.
        locate: The adapter's reading of where the outputs are in a (partial) text.
        tool_name: The answer tool's name.
    """

    def __init__(self, signature: type[Signature], locate: Locate, tool_name: str) -> None:
        super().__init__(signature, locate)
        self.tool_name = tool_name
        self._beside = ThinkFilter()  # the text beside the call: only its drafts are read
        self._call: int | None = None  # the index of the call whose arguments are read

    def feed(self, piece: str) -> list[StreamEvent]:
        """Read the next piece of the text beside the call: its drafts, as reasoning."""
        self._beside.feed(piece)
        drafted = self._beside.drafted
        return [ReasoningDelta(drafted)] if drafted else []

    def feed_call(self, index: int, name: str, arguments: str) -> list[StreamEvent]:
        """Read the next piece of the answer tool's arguments (other calls say nothing)."""
        if name != self.tool_name or not arguments:
            return []
        if self._call is None:
            self._call = index
        elif index != self._call:
            return []  # a second call to the tool: the reading takes the first
        # The arguments are the text the JSON reader reads (no drafts in JSON arguments).
        self._text.extend(arguments)
        return self._read(arguments)
