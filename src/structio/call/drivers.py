"""`call`, `acall`, `stream`, `astream`: four short drivers of one call flow.

Each builds the first request (`begin`), tells the callbacks, and runs `call_flow`:
it makes the requests the flow asks for, sends each response (or the provider's error)
back in, and returns (or, for streams, yields after the events) the flow's `CallResult`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Generator, Iterable, Iterator, Mapping
from typing import Any, Union

from structio.adapters.base import Adapter, SignatureLike
from structio.call.flow import Flow, Restart, call_flow
from structio.call.options import CallOptions
from structio.call.request import Builder, Request, begin
from structio.call.result import CallResult
from structio.lm.base import BaseLM, reset_origin, set_origin
from structio.lm.types import (
    AsyncLMStream,
    LMResponse,
    LogprobsPiece,
    ReasoningPiece,
    StreamItem,
    ToolCallPiece,
)
from structio.observe.dispatch import CallScope, call_started
from structio.parsing.confidence import field_confidence
from structio.parsing.stream import (
    Failed,
    FieldValue,
    ReasoningDelta,
    Reread,
    StreamEvent,
    StreamReader,
)
from structio.settings import listener_of

__all__ = ["StreamOut", "acall", "astream", "call", "stream"]

StreamOut = Union[StreamEvent, CallResult]  # noqa: UP007 - a runtime alias on 3.10
"""What `stream` yields: events while the model writes, then the `CallResult`."""

_DEFAULT = CallOptions()


def call(
    adapter: Adapter,
    lm: BaseLM,
    signature: SignatureLike,
    demos: Iterable[Mapping[str, Any]] = (),
    inputs: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    options: CallOptions = _DEFAULT,
    build: Builder | None = None,
) -> CallResult:
    """Format, call the model, and read every choice, with re-asks, fallback and context cut.

    Args:
        adapter: The wire format.
        lm: The model.
        signature: A signature class or a string spec.
        demos: Few-shot examples.
        inputs: The signature's inputs.
        params: Request parameters for this call (``temperature``, ``n``...).
        options: How the call is made: truncation, re-asks, input checks (`CallOptions`).
        build: Build the prompt yourself from the adapter (prompt functions do); by default
            ``adapter.render(signature, demos, inputs)``.

    Raises:
        FormatError: An input is missing, unknown, or (with ``options.check_inputs``) does
            not fit its type.
        ParseError: A completion cannot be read (after the fallback, if any, or the last
            re-ask: the error's ``attempts`` holds the earlier ones). It is ``adapter``'s
            error; when the fallback request failed too, its message says so and why, and
            the fallback's own error is its ``__cause__``. When the model hit its token
            limit, the error says so (``truncated``).
        LMError: The provider failed; never answered with a fallback.
        TruncationError: The parts that cannot be dropped exceed the budget.
    """
    request = begin(adapter, lm, signature, demos, inputs, params, options, build)
    heard = listener_of(signature)  # a `structio.streamify` listening to this call
    with _observe(request, lm) as scope:
        flow = call_flow(request, lm, options, scope)
        result = _run(flow, lm) if heard is None else _run_heard(flow, lm, heard)
        scope.ended(result)
    return result


async def acall(
    adapter: Adapter,
    lm: BaseLM,
    signature: SignatureLike,
    demos: Iterable[Mapping[str, Any]] = (),
    inputs: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    options: CallOptions = _DEFAULT,
    build: Builder | None = None,
) -> CallResult:
    """Async form of `call`: the same flow, with ``await lm.acall``."""
    request = begin(adapter, lm, signature, demos, inputs, params, options, build)
    heard = listener_of(signature)
    with _observe(request, lm) as scope:
        flow = call_flow(request, lm, options, scope)
        result = await (_arun(flow, lm) if heard is None else _arun_heard(flow, lm, heard))
        scope.ended(result)
    return result


def stream(
    adapter: Adapter,
    lm: BaseLM,
    signature: SignatureLike,
    demos: Iterable[Mapping[str, Any]] = (),
    inputs: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    options: CallOptions = _DEFAULT,
    build: Builder | None = None,
) -> Generator[StreamOut, None, None]:
    """`call`, read while the model writes: stream events, then the `CallResult` last.

    The prompt is built here (a wrong input raises now); the request is made when the
    stream is first read. The events are those of the first choice, from the adapter's
    `stream_reader`; the result is what `call` returns for the same completion (the same
    flow: fallback, re-asks and context cut; a new request after events were given is
    announced with a `Reread`). Closing the generator early ends the request.

    Raises:
        FormatError, TruncationError: At once, as `call`.
        ParseError, LMError: While iterating, as `call`.
    """
    request = begin(adapter, lm, signature, demos, inputs, params, options, build)
    return _streamed(request, lm, options)


def astream(
    adapter: Adapter,
    lm: BaseLM,
    signature: SignatureLike,
    demos: Iterable[Mapping[str, Any]] = (),
    inputs: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    options: CallOptions = _DEFAULT,
    build: Builder | None = None,
) -> AsyncGenerator[StreamOut, None]:
    """Async form of `stream`: the same flow, with ``lm.astream``."""
    request = begin(adapter, lm, signature, demos, inputs, params, options, build)
    return _astreamed(request, lm, options)


def _observe(request: Request, lm: BaseLM) -> CallScope:
    """Tell the callbacks a call starts (next to nothing when none is configured)."""
    return call_started(
        request.adapter, lm, request.original, request.inputs, request.sent, request.params
    )


# -- the drivers: requests out, responses (or errors) back into the flow ----------------


def _run(flow: Flow, lm: BaseLM) -> CallResult:
    try:
        step = next(flow)
        while True:
            if isinstance(step, Restart):
                step = flow.send(None)
                continue
            request = step.request
            # The origin tells a model that writes its own replies (FakeLM) the format.
            token = set_origin(request.adapter, request.signature)
            try:
                response = lm(request.messages, **request.params)
            except Exception as exc:  # the flow decides: cut and ask again, or raise
                step = flow.throw(exc)
                continue
            finally:
                reset_origin(token)
            step = flow.send(response)
    except StopIteration as done:
        result: CallResult = done.value
        return result
    except BaseException:
        flow.close()  # a driver that stops early (an error, a cancellation) ends the flow
        raise


async def _arun(flow: Flow, lm: BaseLM) -> CallResult:
    try:
        step = next(flow)
        while True:
            if isinstance(step, Restart):
                step = flow.send(None)
                continue
            request = step.request
            token = set_origin(request.adapter, request.signature)
            try:
                response = await lm.acall(request.messages, **request.params)
            except Exception as exc:
                step = flow.throw(exc)
                continue
            finally:
                reset_origin(token)
            step = flow.send(response)
    except StopIteration as done:
        result: CallResult = done.value
        return result
    except BaseException:
        flow.close()  # a driver that stops early (an error, a cancellation) ends the flow
        raise


def _run_heard(flow: Flow, lm: BaseLM, heard: Callable[[StreamEvent], None]) -> CallResult:
    """A call `structio.streamify` listens to: streamed, each event told to ``heard``.

    Its result is what `_run` gives for the same completion (the same flow).
    """
    events = _drive_stream(flow, lm)
    while True:
        try:
            event = next(events)
        except StopIteration as done:
            result: CallResult = done.value
            return result
        heard(event)


async def _arun_heard(flow: Flow, lm: BaseLM, heard: Callable[[StreamEvent], None]) -> CallResult:
    """Async form of `_run_heard`."""
    body = _adrive_stream(flow, lm)
    try:
        async for out in body:
            if isinstance(out, CallResult):
                return out
            heard(out)
    finally:
        await body.aclose()
    raise AssertionError("a streamed call ended without its result")  # pragma: no cover


def _streamed(
    request: Request, lm: BaseLM, options: CallOptions
) -> Generator[StreamOut, None, None]:
    with _observe(request, lm) as scope:
        result = yield from _drive_stream(call_flow(request, lm, options, scope), lm)
        scope.ended(result)
    yield result


def _drive_stream(flow: Flow, lm: BaseLM) -> Generator[StreamEvent, None, CallResult]:
    reader: StreamReader | None = None
    shown = False  # whether this attempt gave any event (a Restart must then void them)
    said = False  # whether the stream gave any event (an error must then void them)
    try:
        step = next(flow)
        while True:
            if isinstance(step, Restart):
                if shown:
                    yield Reread(step.reason)
                step = flow.send(None)
                continue
            request = step.request
            reader = request.adapter.stream_reader(request.signature, inputs=request.inputs)
            shown = False
            scorer = _Scorer(request) if request.confidence else None
            source = lm.stream(request.messages, pieces=True, **request.params)
            with source:
                try:
                    item = _next(source, request)
                except Exception as exc:  # before any text: the flow decides
                    step = flow.throw(exc)
                    continue
                while not isinstance(item, LMResponse):
                    events = reader.feed(item) if type(item) is str else _piece(reader, item)
                    if scorer is not None:
                        events = scorer.scored(item, events)
                    if events:
                        shown = said = True
                        yield from events
                    item = _next(source, request)
            step = flow.send(item)
    except StopIteration as done:
        result: CallResult = done.value
    except Exception as exc:
        flow.close()
        if said:
            yield Failed(exc)  # what was shown is void: the stream raises, with no result
        raise
    except BaseException:
        flow.close()
        raise
    assert reader is not None  # noqa: S101 - a flow sends at least once
    yield from _scored(reader.finish(result.outputs[0]), result)
    yield from _native_events(request, result)
    return result


async def _astreamed(
    request: Request, lm: BaseLM, options: CallOptions
) -> AsyncGenerator[StreamOut, None]:
    with _observe(request, lm) as scope:
        body = _adrive_stream(call_flow(request, lm, options, scope), lm)
        try:
            async for out in body:
                if isinstance(out, CallResult):
                    scope.ended(out)
                yield out
        finally:
            await body.aclose()


async def _adrive_stream(flow: Flow, lm: BaseLM) -> AsyncGenerator[StreamOut, None]:
    """The events of a streamed call, then its `CallResult` (an async generator returns none)."""
    reader: StreamReader | None = None
    shown = said = False
    try:
        step = next(flow)
        while True:
            if isinstance(step, Restart):
                if shown:
                    yield Reread(step.reason)
                step = flow.send(None)
                continue
            request = step.request
            reader = request.adapter.stream_reader(request.signature, inputs=request.inputs)
            shown = False
            scorer = _Scorer(request) if request.confidence else None
            source = lm.astream(request.messages, pieces=True, **request.params)
            async with source:
                try:
                    item = await _anext(source, request)
                except Exception as exc:
                    step = flow.throw(exc)
                    continue
                while not isinstance(item, LMResponse):
                    events = reader.feed(item) if type(item) is str else _piece(reader, item)
                    if scorer is not None:
                        events = scorer.scored(item, events)
                    if events:
                        shown = said = True
                        for event in events:
                            yield event
                    item = await _anext(source, request)
            step = flow.send(item)
    except StopIteration as done:
        result: CallResult = done.value
    except Exception as exc:
        flow.close()
        if said:
            yield Failed(exc)
        raise
    except BaseException:
        flow.close()
        raise
    assert reader is not None  # noqa: S101 - a flow sends at least once
    for event in [
        *_scored(reader.finish(result.outputs[0]), result),
        *_native_events(request, result),
    ]:
        yield event
    yield result


def _piece(reader: StreamReader, piece: StreamItem) -> list[StreamEvent]:
    """The events of a reasoning or tool-call piece of the stream."""
    if isinstance(piece, ReasoningPiece):
        return [ReasoningDelta(piece.text)] if piece.text else []
    if isinstance(piece, ToolCallPiece):
        return reader.feed_call(piece.index, piece.name, piece.arguments)
    return []


class _Scorer:
    """Each `FieldValue` given while the model writes, with its confidence (when asked).

    The value is complete in the text so far, and the tokens that spell it have come (a
    `LogprobsPiece` comes before its text): its confidence is read as the whole answer's
    is, from the text and the log probabilities received so far.
    """

    def __init__(self, request: Request) -> None:
        self.fields = {name: f.annotation for name, f in request.original.output_fields.items()}
        self.texts: list[str] = []
        self.entries: list[Mapping[str, Any]] = []

    def scored(self, item: StreamItem, events: list[StreamEvent]) -> list[StreamEvent]:
        if type(item) is str:
            self.texts.append(item)
        elif isinstance(item, LogprobsPiece):
            self.entries.extend(item.entries)
        if not any(type(e) is FieldValue for e in events):
            return events
        text = "".join(self.texts)
        self.texts = [text]
        return [self._one(text, e) if type(e) is FieldValue else e for e in events]

    def _one(self, text: str, event: FieldValue) -> FieldValue:
        if event.field not in self.fields:
            return event
        known = field_confidence(text, self.entries, {event.field: self.fields[event.field]})
        return FieldValue(event.field, event.value, known[event.field])


def _scored(events: Iterable[StreamEvent], result: CallResult) -> list[StreamEvent]:
    """The events at the end of a stream, each `FieldValue` with its output's confidence."""
    known = result.confidence[0] if result.confidence else None
    if not known:
        return list(events)
    return [
        FieldValue(e.field, e.value, known.get(e.field)) if type(e) is FieldValue else e
        for e in events
    ]


def _native_events(request: Request, result: CallResult) -> list[StreamEvent]:
    """The values of the outputs that came beside the text (the reader never saw them)."""
    if request.native is None or not result.outputs:
        return []
    wire = request.signature.output_fields
    return [
        FieldValue(name, value) for name, value in result.outputs[0].items() if name not in wire
    ]


def _next(source: Iterator[StreamItem], request: Request) -> StreamItem:
    # The origin is set around each read, never across a yield to the caller: a model
    # that writes its own replies reads it when the stream starts.
    token = set_origin(request.adapter, request.signature)
    try:
        return next(source)
    finally:
        reset_origin(token)


async def _anext(source: AsyncLMStream, request: Request) -> StreamItem:
    token = set_origin(request.adapter, request.signature)
    try:
        return await source.__anext__()
    finally:
        reset_origin(token)
