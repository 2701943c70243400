"""What a streamed call returns: events as the model writes, then the result.

`Predict.stream` and a typed prompt function's ``.stream`` return a `Stream`:
iterate it for `FieldDelta`, `FieldItem`, `FieldValue`, `ReasoningDelta`, `Reread` and
`Failed` events, the last item being the result (a `Prediction`, or the function's return
value), also kept in `Stream.result`; `Stream.items` gives a list output's items alone.
A prompt function that returns ``str`` gives a `TextStream` of text pieces instead.
The ``a``-prefixed methods return the async forms.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, Generic, TypeGuard, TypeVar, Union

from structio.exceptions import RereadError, UsageError
from structio.parsing.stream import FieldDelta, FieldItem, FieldValue, Reread, StreamEvent
from structio.signatures.signature import Signature
from structio.typemodel.info import list_item_type

__all__ = [
    "AsyncStream",
    "AsyncTextStream",
    "FieldEvent",
    "Stream",
    "TextStream",
    "list_outputs",
]

R = TypeVar("R")

FieldEvent = Union[FieldDelta, FieldItem, FieldValue, Reread]  # noqa: UP007 - 3.10
"""What `Stream.field` yields: the events of one output, and every `Reread`."""

_NOT_YET: Any = object()


def _not_ended(what: str) -> UsageError:
    return UsageError(
        f"the {what} has not ended yet: iterate it to its end first, or call .collect()"
    )


def _check_field(name: str, fields: tuple[str, ...]) -> None:
    if name not in fields:
        raise UsageError(
            f"{name!r} is not an output of this stream; its outputs: {', '.join(fields)}"
        )


def _concerns(item: object, name: str) -> TypeGuard[FieldEvent]:
    return isinstance(item, Reread) or (
        isinstance(item, (FieldDelta, FieldItem, FieldValue)) and item.field == name
    )


def list_outputs(signature: type[Signature] | None) -> tuple[str, ...]:
    """The outputs of ``signature`` whose values are lists (``list[T]``, ``Iterable[T]``...)."""
    if signature is None:
        return ()
    return tuple(
        name
        for name, f in signature.output_fields.items()
        if list_item_type(f.annotation) is not None
    )


def _list_output(name: str | None, lists: tuple[str, ...], fields: tuple[str, ...]) -> str:
    """The list output `items` follows: ``name``, or the only one."""
    if name is None:
        if len(lists) != 1:
            shown = ", ".join(lists) or "none"
            raise UsageError(
                f"items() needs the name of a list output when there is not exactly one; "
                f"this stream's list outputs: {shown}"
            )
        return lists[0]
    _check_field(name, fields)
    if name not in lists:
        raise UsageError(
            f"{name!r} is not a list output, so it has no items; its list outputs: "
            f"{', '.join(lists) or 'none'}"
        )
    return name


class _Items:
    """What `items` has given of one list output, and what a `Reread` lets it give next."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.given: list[Any] = []
        self.checked = 0  # after a Reread: how many of the given items the new reading matched

    def new(self, item: object) -> tuple[bool, Any]:
        """Whether ``item`` (a stream item) is an item to give now, and the item."""
        if isinstance(item, Reread):
            self.checked = 0
            return False, None
        if not isinstance(item, FieldItem) or item.field != self.name:
            return False, None
        if item.index < len(self.given):  # given before a Reread: it must read the same
            if item.index != self.checked or not _equal(self.given[item.index], item.value):
                raise RereadError(
                    f"the answer was read again and item {item.index} of `{self.name}` is "
                    f"now {item.value!r}, not the {self.given[item.index]!r} already given; "
                    "to follow rereads, iterate the stream's events instead of items()",
                    field=self.name,
                    index=item.index,
                )
            self.checked += 1
            return False, None
        self.given.append(item.value)
        self.checked = len(self.given)
        return True, item.value

    def ended(self) -> None:
        """At the stream's end: a Reread that gave fewer items than were given is a change."""
        if self.checked < len(self.given):
            raise RereadError(
                f"the answer was read again and `{self.name}` has only {self.checked} of the "
                f"{len(self.given)} items already given; to follow rereads, iterate the "
                "stream's events instead of items()",
                field=self.name,
                index=self.checked,
            )


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # a value whose == raises cannot be shown equal
        return False


class _Outcome(Generic[R]):
    """The result a stream ends with, kept once it has come."""

    _result: Any = _NOT_YET

    @property
    def result(self) -> R:
        """The result, once the stream has ended.

        Raises:
            UsageError: The stream has not ended yet.
        """
        if self._result is _NOT_YET:
            raise _not_ended("stream")
        result: R = self._result
        return result


class Stream(_Outcome[R], Iterator[Union[StreamEvent, R]]):  # noqa: UP007
    """A call read while the model writes: events, then the result as the last item.

    Each ``str`` output streams as `FieldDelta` events; every output's typed value comes
    once, as a `FieldValue`, when its text is complete, and never changes. A `Reread`
    voids the events before it (the answer had to be read again); the events after it
    give every output anew. Leaving the loop early, or `close`, ends the request; use the
    stream as a context manager to be sure of it.

    Example:
        >>> for item in qa.stream(question="Why is the sky blue?"):       # doctest: +SKIP
        ...     if isinstance(item, sio.FieldDelta):
        ...         print(item.delta, end="", flush=True)
        >>> prediction = stream.result                                    # doctest: +SKIP
    """

    def __init__(
        self,
        source: Iterator[StreamEvent | R],
        fields: tuple[str, ...],
        lists: tuple[str, ...] = (),
    ) -> None:
        self._source = source
        #: The outputs the stream gives, in signature order.
        self.fields = fields
        #: The outputs whose values are lists (their items come as `FieldItem` events).
        self.lists = lists

    def __iter__(self) -> Stream[R]:
        return self

    def __next__(self) -> StreamEvent | R:
        item = next(self._source)
        if not isinstance(item, StreamEvent):
            self._result = item
        return item

    def collect(self) -> R:
        """Read the rest of the stream (its events are dropped) and return the result."""
        for _ in self:
            pass
        return self.result

    def field(self, name: str) -> Iterator[FieldEvent]:
        """Read on, yielding only the events of output ``name`` (and any `Reread`).

        Example:
            >>> for event in stream.field("answer"):                      # doctest: +SKIP
            ...     if isinstance(event, sio.FieldDelta):
            ...         print(event.delta, end="")

        Raises:
            UsageError: ``name`` is not an output of the signature.
        """
        _check_field(name, self.fields)
        for item in self:
            if _concerns(item, name):
                yield item

    def items(self, name: str | None = None) -> Iterator[Any]:
        """Read on, yielding each item of list output ``name`` once, as soon as it is complete.

        instructor's ``Iterable`` use: act on each extracted object as it arrives. Each
        item is validated, given once, in order; the result is kept in `result` as usual.
        Items repeated equal after a `Reread` are passed over.

        Example:
            >>> for person in extract.stream(text=page).items("people"):  # doctest: +SKIP
            ...     save(person)

        Args:
            name: The list output; may be left out when the signature has exactly one.

        Raises:
            UsageError: ``name`` is not a list output (or is needed and missing).
            RereadError: The answer was read again and an item already given changed.
        """
        seen = _Items(_list_output(name, self.lists, self.fields))
        for item in self:
            new, value = seen.new(item)
            if new:
                yield value
        seen.ended()

    def close(self) -> None:
        """Stop reading: the request ends and its connection is closed."""
        close = getattr(self._source, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> Stream[R]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncStream(_Outcome[R], AsyncIterator[Union[StreamEvent, R]]):  # noqa: UP007
    """Async form of `Stream`: ``async for item in qa.astream(...)``.

    Breaking out of an ``async for`` does not end the request at once; use
    ``async with qa.astream(...) as stream`` (or `aclose`) for that.
    """

    def __init__(
        self,
        source: AsyncIterator[StreamEvent | R],
        fields: tuple[str, ...],
        lists: tuple[str, ...] = (),
    ) -> None:
        self._source = source
        #: The outputs the stream gives, in signature order.
        self.fields = fields
        #: The outputs whose values are lists (their items come as `FieldItem` events).
        self.lists = lists

    def __aiter__(self) -> AsyncStream[R]:
        return self

    async def __anext__(self) -> StreamEvent | R:
        item = await self._source.__anext__()
        if not isinstance(item, StreamEvent):
            self._result = item
        return item

    async def collect(self) -> R:
        """Read the rest of the stream (its events are dropped) and return the result."""
        async for _ in self:
            pass
        return self.result

    async def field(self, name: str) -> AsyncIterator[FieldEvent]:
        """Read on, yielding only the events of output ``name`` (and any `Reread`).

        Raises:
            UsageError: ``name`` is not an output of the signature.
        """
        _check_field(name, self.fields)
        async for item in self:
            if _concerns(item, name):
                yield item

    async def items(self, name: str | None = None) -> AsyncIterator[Any]:
        """Async form of `Stream.items`: ``async for item in stream.items("people")``.

        Raises:
            UsageError: ``name`` is not a list output (or is needed and missing).
            RereadError: The answer was read again and an item already given changed.
        """
        seen = _Items(_list_output(name, self.lists, self.fields))
        async for item in self:
            new, value = seen.new(item)
            if new:
                yield value
        seen.ended()

    async def aclose(self) -> None:
        """Stop reading: the request ends and its connection is closed."""
        close = getattr(self._source, "aclose", None)
        if close is not None:
            await close()

    async def __aenter__(self) -> AsyncStream[R]:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class TextStream(_Outcome[str], Iterator[str]):
    """A completion's text in pieces, as a ``str``-returning prompt function streams it.

    ``str(stream)`` reads it to the end and gives the whole text (as magentic's
    ``StreamedStr``); so does `collect`. The text is also `result` once the stream ends.
    """

    def __init__(self, source: Iterator[str]) -> None:
        self._source = source
        self._pieces: list[str] = []

    def __iter__(self) -> TextStream:
        return self

    def __next__(self) -> str:
        try:
            piece = next(self._source)
        except StopIteration:
            self._result = "".join(self._pieces)
            raise
        self._pieces.append(piece)
        return piece

    def collect(self) -> str:
        """Read the rest of the stream and return the whole text."""
        for _ in self:
            pass
        return self.result

    def __str__(self) -> str:
        return self.collect()

    def close(self) -> None:
        """Stop reading: the request ends and its connection is closed."""
        close = getattr(self._source, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> TextStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncTextStream(_Outcome[str], AsyncIterator[str]):
    """Async form of `TextStream`; ``await stream.collect()`` gives the whole text."""

    def __init__(self, source: AsyncIterator[str]) -> None:
        self._source = source
        self._pieces: list[str] = []

    def __aiter__(self) -> AsyncTextStream:
        return self

    async def __anext__(self) -> str:
        try:
            piece = await self._source.__anext__()
        except StopAsyncIteration:
            self._result = "".join(self._pieces)
            raise
        self._pieces.append(piece)
        return piece

    async def collect(self) -> str:
        """Read the rest of the stream and return the whole text."""
        async for _ in self:
            pass
        return self.result

    async def aclose(self) -> None:
        """Stop reading: the request ends and its connection is closed."""
        close = getattr(self._source, "aclose", None)
        if close is not None:
            await close()

    async def __aenter__(self) -> AsyncTextStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
