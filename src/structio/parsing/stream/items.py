"""A JSON array's elements as each is complete, from its text in pieces (every stream reader).

`ArrayItems` is fed the text of one array as it arrives and says which elements are
whole: an element is whole once the ``,`` or ``]`` after it at the array's own depth has
arrived. Each character is looked at once, whatever the size of the pieces, so reading an
array costs time in proportion to its length. `ListItems` reads those elements as the list
output's items, with the item type's validator, as validating the whole list would.
"""

from __future__ import annotations

import json
import re
from typing import Any

from structio.parsing.stream.events import StreamEvent
from structio.parsing.stream.reader import StreamReader
from structio.typemodel.info import TypeInfo, type_info

__all__ = ["ArrayItems", "ListItems"]


_OUTSIDE = re.compile(r'[\[\]{},"]')
_INSIDE = re.compile(r'["\\]')
_BLANK = " \t\r\n"


class ArrayItems:
    """The elements of one JSON array, each as soon as it is complete.

    Args:
        opened: Whether the array's ``[`` was read already (else blank space, then the
            ``[``, is expected: anything else ends the reading, see `failed`).
    """

    def __init__(self, *, opened: bool = False) -> None:
        self.opened = opened
        #: Whether the array has closed (its ``]`` read).
        self.closed = False
        #: Whether the text is no plain array (nothing more is read).
        self.failed = False
        self._depth = 1  # nesting inside the array: 1 is the array's own level
        self._in_string = False
        self._escaped = False  # a backslash ended the last piece, inside a string
        self._element: list[str] = []  # the text of the element being read, in pieces

    @property
    def done(self) -> bool:
        """Whether nothing more will be read (closed, or not an array)."""
        return self.closed or self.failed

    def feed(self, text: str) -> tuple[list[str], int]:
        """Read the next piece: the texts of the elements it completes, and how much was read.

        All of ``text`` is read unless the array closes in it: then the count ends after
        its ``]``. An empty element (``[1,,2]``) makes the reading fail; a last one after a
        trailing comma (``[1,]``) is no element.
        """
        if self.done:
            return [], 0
        at = 0
        if not self.opened:
            start = len(text) - len(text.lstrip(_BLANK))
            if start == len(text):
                return [], len(text)
            if text[start] != "[":
                self.failed = True
                return [], start
            self.opened = True
            at = start + 1
        elements: list[str] = []
        begin = at  # where this piece's part of the current element starts
        while at < len(text):
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                    at += 1
                    continue
                stop = _INSIDE.search(text, at)
                if stop is None:
                    at = len(text)
                    break
                at = stop.end()
                if stop.group() == "\\":
                    self._escaped = True
                else:
                    self._in_string = False
                continue
            stop = _OUTSIDE.search(text, at)
            if stop is None:
                at = len(text)
                break
            char, at = stop.group(), stop.end()
            if char == '"':
                self._in_string = True
            elif char in "[{":
                self._depth += 1
            elif char in "]}" and self._depth > 1:
                self._depth -= 1
            elif char == "}":
                self.failed = True  # `[1}`: no plain array
                return elements, at
            elif char == "," and self._depth > 1:
                continue
            else:  # `,` or `]` at the array's own level: an element ends
                self._element.append(text[begin : at - 1])
                element = "".join(self._element).strip(_BLANK)
                self._element = []
                begin = at
                if char == "]":
                    self.closed = True
                    if element:  # else `[]`, or a trailing comma's (`[1,]`)
                        elements.append(element)
                    return elements, at
                if not element:
                    self.failed = True
                    return elements, at
                elements.append(element)
        self._element.append(text[begin:at])
        return elements, at


class ListItems:
    """A list output's items, each read once its JSON text is whole (see `ArrayItems`).

    Each element is decoded as JSON and validated with the item type, as the list's own
    validator validates each of its items; the first element that does not read so ends
    the items (the whole completion's reading says what the list is).

    Args:
        name: The list output.
        item: Its item type.
        opened: Whether the array's ``[`` was read already.
    """

    def __init__(self, name: str, item: Any, *, opened: bool = False) -> None:
        self.name = name
        self.info: TypeInfo = type_info(item)
        self.array = ArrayItems(opened=opened)
        self.stopped = False

    def feed(self, text: str, reader: StreamReader) -> tuple[list[StreamEvent], int]:
        """Read the next piece; the `FieldItem` events of ``reader`` (a `StreamReader`)."""
        elements, used = self.array.feed(text)
        events: list[StreamEvent] = []
        for element in elements:
            if self.stopped:
                break
            try:
                value = self.info.validate(json.loads(element))
            except ValueError:  # json's errors are ValueErrors too
                self.stopped = True
                break
            events.extend(reader._item(self.name, value))
        return events, used
