"""The base of every stream reader: what was said, and `finish`, which keeps the promise."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from structio.parsing.locate import Found
from structio.parsing.read import output_infos, read_json_value
from structio.parsing.stream.events import (
    FieldDelta,
    FieldItem,
    FieldValue,
    ReasoningDelta,
    Reread,
    StreamEvent,
)
from structio.parsing.stream.think import ThinkFilter
from structio.signatures.signature import Signature
from structio.typemodel.info import list_item_type

__all__ = ["Locate", "StreamReader", "VisibleText"]

Locate = Callable[[str], "Found | None"]
"""Where the outputs are in a text (the adapter's own reading, drafts and fences set aside)."""


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


def _starts(value: Any, items: list[Any]) -> bool:
    """Whether ``value`` is a list that starts with ``items``."""
    return (
        isinstance(value, list)
        and len(value) >= len(items)
        and all(_same(a, b) for a, b in zip(value, items, strict=False))
    )


class StreamReader:
    """Reads a streamed completion; this base class gives no output before the end.

    Adapters give one per call (`Adapter.stream_reader`). Every reader sets reasoning
    drafts (``<think>...</think>``) aside as `ReasoningDelta` events (`feed`); subclasses
    recognise their format in the rest as it arrives (`_read`). Every reader shares
    `finish`, which keeps the promise that no event contradicts the final reading.

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
        #: The outputs whose values are lists, and the type of their items.
        self.list_items = {
            name: item
            for name, f in signature.output_fields.items()
            if (item := list_item_type(f.annotation)) is not None
        }
        #: Values given so far, by output.
        self.given: dict[str, Any] = {}
        #: Items given so far, by list output.
        self.items: dict[str, list[Any]] = {}
        #: Text given so far as deltas, by output, in pieces (joined only when compared:
        #: one string grown by each delta would be copied whole each time).
        self.sent: dict[str, list[str]] = {}
        # Outputs given a text that the whole completion may not confirm.
        self._doubtful: set[str] = set()
        # The reasoning given so far, given again after a late `</think>`'s Reread.
        self._reasoning: list[str] = []

        self._text = VisibleText()

    def feed(self, piece: str) -> list[StreamEvent]:
        """Read the next piece of the completion's text; the events it allows."""
        visible, reset = self._text.add(piece)
        drafted = self._text.drafted
        events: list[StreamEvent] = []
        if reset:
            if self.said:
                # What was said came from a draft: void it at once, as a whole completion
                # cut anywhere else would never have said it. Reasoning given before is
                # void with it, so it comes again, ahead of the draft it preceded.
                events.append(
                    Reread("a late </think> ended a reasoning draft; every output follows again")
                )
                drafted = "".join(self._reasoning) + drafted
                self.given.clear()
                self.sent.clear()
                self.items.clear()
                self._doubtful.clear()
            self._restart()
        if drafted:
            self._reasoning.append(drafted)
            events.append(ReasoningDelta(drafted))
        if visible:
            events.extend(self._read(visible))
        return events

    def feed_call(self, index: int, name: str, arguments: str) -> list[StreamEvent]:
        """Read the next piece of a native tool call's arguments (call ``index``, tool ``name``).

        Only a format whose outputs are a tool's arguments (`ToolOutputAdapter`) reads
        them; by default they say nothing.
        """
        return []

    @property
    def said(self) -> bool:
        """Whether any output event has been given."""
        return bool(self.given or self.sent or self.items)

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
            or (name in self.items and not _starts(values.get(name), self.items[name]))
            or (
                name in self.sent
                and not (
                    isinstance(values.get(name), str) and values[name].startswith(self._sent(name))
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
            self.items.clear()
        for name in self.outputs:
            if name in self.given or name not in values:
                continue
            events.extend(self._complete(name, values[name]))
        return events

    # -- for subclasses -------------------------------------------------------------------

    def _read(self, visible: str) -> list[StreamEvent]:
        """Read the next visible text (drafts set aside); the events it allows."""
        return []

    def _restart(self) -> None:
        """A late ``</think>``: the visible text so far was a draft; read anew from here.

        `finish` sorts out anything said from the draft.
        """

    def _item(self, name: str, value: Any) -> list[StreamEvent]:
        """The next item of the list output ``name``."""
        if name in self.given or name in self._doubtful:
            return []
        items = self.items.setdefault(name, [])
        items.append(value)
        return [FieldItem(name, len(items) - 1, value)]

    def _send(self, name: str, text: str) -> list[StreamEvent]:
        if not text:
            return []
        self.sent.setdefault(name, []).append(text)
        return [FieldDelta(name, text)]

    def _sent(self, name: str) -> str:
        """The text given so far as deltas of ``name``."""
        pieces = self.sent.get(name)
        if not pieces:
            return ""
        if len(pieces) > 1:
            pieces[:] = ["".join(pieces)]
        return pieces[0]

    def _complete(self, name: str, value: Any) -> list[StreamEvent]:
        """A field's value, after the rest of its text for a ``str`` output."""
        events: list[StreamEvent] = []
        if name in self.text_fields and isinstance(value, str):
            sent = self._sent(name)
            if not value.startswith(sent):
                self._doubtful.add(name)  # `finish` will say so with a Reread
                return []
            events = self._send(name, value[len(sent) :])
        elif name in self.list_items and isinstance(value, list):
            items = self.items.setdefault(name, [])
            if not _starts(value, items):
                self._doubtful.add(name)  # `finish` will say so with a Reread
                return []
            new = value[len(items) :]
            events = [FieldItem(name, len(items) + i, item) for i, item in enumerate(new)]
            items.extend(new)
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


class VisibleText:
    """The visible text of a stream: drafts set aside; the whole of it, joined on demand."""

    def __init__(self) -> None:
        self.filter = ThinkFilter()
        self.pieces: list[str] = []
        self.length = 0
        #: The draft text set aside by the last `add` (with all text before, after a reset).
        self.drafted = ""

    def add(self, piece: str) -> tuple[str, bool]:
        """The visible text of the next piece, and whether all visible text before is void."""
        visible, reset = self.filter.feed(piece)
        self.drafted = self.filter.drafted
        if reset:
            self.drafted = "".join(self.pieces) + self.drafted
            self.pieces = []
            self.length = 0
        if visible:
            self.pieces.append(visible)
            self.length += len(visible)
        return visible, reset

    def extend(self, text: str) -> None:
        """Add ``text`` as it is, with no draft filter (a tool call's JSON arguments)."""
        self.pieces.append(text)
        self.length += len(text)

    def upto(self, end: int) -> str:
        """The visible text so far, up to ``end``."""
        text = "".join(self.pieces)
        self.pieces = [text]
        return text[:end]
