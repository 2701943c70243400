"""A list output's ``<item>`` children, each as soon as it closes (`XMLStreamReader`)."""

from __future__ import annotations

from typing import Any

from structio.parsing.locate import norm
from structio.parsing.stream.events import StreamEvent
from structio.parsing.stream.reader import StreamReader
from structio.parsing.xml import (
    _TAG,
    Node,
    Shape,
    _element,
    _is_close,
    _item,
    _key,
    _may_be_tag,
    _same,
    _skeleton,
    _UnclosedError,
    shape_of,
)
from structio.parsing.xml_text import _CDATA_OPEN
from structio.typemodel.info import type_info

__all__ = ["ElementItems"]

# A child still open is read again as text comes: at most this many times the text, and
# this many characters more, in all (linear work); then the items are left to the end.
_REREADS = 8
_REREAD_ALLOWANCE = 16_384


class ElementItems:
    """The items of a list output's open element, read child by child as `parsing.xml` does.

    A child is read once it has closed, by the code that reads the whole element
    (`parsing.xml._element`, then `_item`), and validated with the item type as the list's
    validator validates each item. Only ``<item>`` children are given: a list of models
    written without them reads otherwise once all of it is there. A child that is the
    prompt's ``...``, or holds a CDATA section, ends the items: the whole element says.

    Args:
        name: The list output.
        annotation: Its declared type.
        tag: The element's tag as written.
        start: Where its content starts in the reader's buffer.
    """

    def __init__(self, name: str, annotation: Any, tag: str, start: int) -> None:
        self.name = name
        self.tag = tag
        self.shape: Shape = shape_of(annotation)
        self.info = type_info(self.shape.item().annotation)
        self.position = start
        self.count = 0
        self.stopped = False
        self._inner = frozenset({norm(tag)})
        self._work = 0  # characters handed to the element reader so far

    def read(self, text: str, reader: StreamReader) -> list[StreamEvent]:
        """Read on through ``text`` (the buffer, which only grows); the items now whole."""
        events: list[StreamEvent] = []
        while not self.stopped:
            child = self._next(text)
            if child is None:
                break
            if _skeleton(child):
                self.stopped = True
                break
            try:
                value = self.info.validate(_item(child, self.shape.item(self.count)))
            except ValueError:
                self.stopped = True
                break
            self.count += 1
            events.extend(reader._item(self.name, value))
        return events

    def _next(self, text: str) -> Node | None:
        """The next child that has closed (None: more text is needed, or the list ended)."""
        while True:
            at = text.find("<", self.position)
            if at == -1:
                self.position = len(text)
                return None
            if text.startswith(_CDATA_OPEN, at):
                self.stopped = True  # where it ends decides what is text: the end says
                return None
            match = _TAG.match(text, at)
            if match is None:
                if _may_be_tag(text, at):
                    self.position = at  # the tag may not be whole yet
                    return None
                self.position = at + 1
                continue
            name = match.group(2)
            if match.group(1):
                if _is_close(match) and _same(name, self.tag, True):
                    self.stopped = True  # the list is closed: its value follows
                    return None
                self.position = match.end() if _is_close(match) else at + 1
                continue
            if name != "item" or self._work > _REREADS * len(text) + _REREAD_ALLOWANCE:
                # Not an item (the list reads otherwise, or not at all), or a child that
                # stays open was read again too often: the whole element says the rest.
                self.stopped = True
                return None
            if match.group(4):
                self.position = match.end()
                return Node(name, _key(match), True, (), "")
            self._work += len(text) - at
            try:
                child, after = _element(
                    text,
                    match.end(),
                    name,
                    self.shape.child(name, self.count),
                    self._inner,
                    depth=1,
                    key=_key(match),
                )
            except _UnclosedError:
                self.position = at  # read again once more text has come
                return None
            if _CDATA_OPEN in text[at:after]:
                self.stopped = True
                return None
            self.position = after
            return child
