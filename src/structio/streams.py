"""What a streamed call returns: events as the model writes, then the result.

`Predict.stream` and a typed prompt function's ``.stream`` return a `Stream`:
iterate it for `FieldDelta`, `FieldValue` and `Reread` events, the last item being the
result (a `Prediction`, or the function's return value), also kept in `Stream.result`.
A prompt function that returns ``str`` gives a `TextStream` of text pieces instead.
The ``a``-prefixed methods return the async forms.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, Generic, TypeGuard, TypeVar, Union

from structio.exceptions import UsageError
from structio.parsing.stream import FieldDelta, FieldValue, Reread, StreamEvent

__all__ = ["AsyncStream", "AsyncTextStream", "FieldEvent", "Stream", "TextStream"]

R = TypeVar("R")

FieldEvent = Union[FieldDelta, FieldValue, Reread]  # noqa: UP007 - a runtime alias on 3.10
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
        isinstance(item, (FieldDelta, FieldValue)) and item.field == name
    )


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

    def __init__(self, source: Iterator[StreamEvent | R], fields: tuple[str, ...]) -> None:
        self._source = source
        #: The outputs the stream gives, in signature order.
        self.fields = fields

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

    def __init__(self, source: AsyncIterator[StreamEvent | R], fields: tuple[str, ...]) -> None:
        self._source = source
        #: The outputs the stream gives, in signature order.
        self.fields = fields

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
