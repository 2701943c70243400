"""DSPy's streaming spellings: `streamify`, `StreamListener`, `StreamResponse`, status messages.

A thin layer over `Predict.astream` / `Predict.stream`: ``structio.streamify(predict,
stream_listeners=[StreamListener(signature_field_name="answer")])`` gives a function whose
call is an async generator (a plain one with ``async_streaming=False``) of `StreamResponse`
chunks of the listened outputs as the model writes them, then the final `Prediction`.

Where structio differs from DSPy:

- Without listeners the stream gives structio's own events (`structio.FieldDelta`,
  `structio.FieldValue`...) where DSPy gives litellm's raw chunks.
- A ``str`` output streams its text piece by piece; an output of another type (``int``, a
  model, a list) comes as one last chunk, its value as text, once it is complete.
- Only the fields of the `Predict` given to `streamify` stream. A program of your own (any
  callable) runs whole in a worker thread (`structio.asyncify`) and gives its result only;
  listeners on it are refused, since structio cannot see the Predicts inside it: stream one
  of them with its own ``astream`` instead.
- Status messages: a provider's ``module_start_status_message`` and
  ``module_end_status_message`` are asked for around the program; the LM and tool ones are
  never asked for.
- Listeners keep no state between streams, so every listener is reusable
  (``allow_reuse`` is accepted and has no effect).
- When the answer is read anew (a `structio.Reread`: the fallback, a re-ask), the listened
  outputs stream again from their start.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import inspect
import json
import queue
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterable
from typing import Any

from structio._asyncify import asyncify
from structio._util.data import jsonable
from structio.exceptions import UsageError
from structio.parsing.stream import FieldDelta, FieldValue, Reread
from structio.predict import ChainOfThought, Predict, Prediction

__all__ = [
    "StatusMessage",
    "StatusMessageProvider",
    "StreamListener",
    "StreamResponse",
    "apply_sync_streaming",
    "streamify",
    "streaming_response",
]


@dataclasses.dataclass
class StreamResponse:
    """A piece of a listened output's text, as DSPy's ``dspy.streaming.StreamResponse``.

    Attributes:
        predict_name: The Predict's name in the program, as DSPy names it (``"self"`` for
            a `Predict` given to `streamify`, ``"predict"`` for a `ChainOfThought`).
        signature_field_name: The output's name.
        chunk: The new text (``""`` in a last chunk that only closes a ``str`` output).
        is_last_chunk: Whether the output is complete with this chunk.
    """

    predict_name: str
    signature_field_name: str
    chunk: str
    is_last_chunk: bool


@dataclasses.dataclass
class StatusMessage:
    """A status message of a stream, as DSPy's ``dspy.streaming.StatusMessage``."""

    message: str


class StatusMessageProvider:
    """The status messages a stream gives, as DSPy's ``StatusMessageProvider``.

    Subclass it and return a string from a method to have it given as a `StatusMessage`;
    ``None`` gives none. structio asks only for the module's messages (around the program);
    the tool and LM methods are kept so that DSPy's subclasses still work.
    """

    def tool_start_status_message(self, instance: Any, inputs: dict[str, Any]) -> str | None:
        """Status message before a tool is called (never asked for by structio)."""
        return f"Calling tool {getattr(instance, 'name', instance)}..."

    def tool_end_status_message(self, outputs: Any) -> str | None:
        """Status message after a tool is called (never asked for by structio)."""
        return "Tool calling finished! Querying the LLM with tool calling results..."

    def module_start_status_message(self, instance: Any, inputs: dict[str, Any]) -> str | None:
        """Status message before the program runs."""
        return None

    def module_end_status_message(self, outputs: Any) -> str | None:
        """Status message after the program has run."""
        return None

    def lm_start_status_message(self, instance: Any, inputs: dict[str, Any]) -> str | None:
        """Status message before an LM is called (never asked for by structio)."""
        return None

    def lm_end_status_message(self, outputs: Any) -> str | None:
        """Status message after an LM is called (never asked for by structio)."""
        return None


class StreamListener:
    """Which output to stream, as DSPy's ``dspy.streaming.StreamListener``.

    Args:
        signature_field_name: The output to stream.
        predict: The Predict whose output it is; found by `streamify` when ``None``.
        predict_name: Its name in the program; set by `streamify` when ``None``.
        allow_reuse: Accepted for DSPy; structio's listeners are always reusable.
    """

    def __init__(
        self,
        signature_field_name: str,
        predict: Any = None,
        predict_name: str | None = None,
        allow_reuse: bool = False,
    ) -> None:
        self.signature_field_name = signature_field_name
        self.predict = predict
        self.predict_name = predict_name
        self.allow_reuse = allow_reuse

    def __repr__(self) -> str:
        return (
            f"StreamListener(signature_field_name={self.signature_field_name!r}, "
            f"predict_name={self.predict_name!r})"
        )


def _bind(program: Any, listeners: list[StreamListener]) -> dict[str, str]:
    """Each listened output of ``program`` with its predict name; the listeners filled in.

    Raises:
        UsageError: A listener names no output of the program, or another Predict, or the
            program is not a `Predict`.
    """
    if not listeners:
        return {}
    if not isinstance(program, Predict):
        raise UsageError(
            "streamify streams the outputs of the Predict it is given; structio cannot see "
            f"the Predicts inside {type(program).__name__}: stream one with "
            "`async for event in predict.astream(...)`, or call streamify without "
            "stream_listeners to get the program's result"
        )
    name = "predict" if isinstance(program, ChainOfThought) else "self"
    outputs = program.signature.output_fields
    fields: dict[str, str] = {}
    for listener in listeners:
        if listener.predict is not None and listener.predict is not program:
            raise UsageError(
                f"the listener of {listener.signature_field_name!r} names another Predict: "
                "structio streams the Predict given to streamify; stream that one with "
                "its own streamify or astream"
            )
        if listener.signature_field_name not in outputs:
            raise UsageError(
                f"{listener.signature_field_name!r} is not an output of the program; its "
                f"outputs: {', '.join(outputs)}"
            )
        listener.predict = program
        listener.predict_name = listener.predict_name or name
        fields[listener.signature_field_name] = listener.predict_name
    return fields


class _Chunks:
    """One stream's events turned into DSPy's items: chunks, status messages, the result."""

    def __init__(
        self,
        program: Any,
        provider: StatusMessageProvider | None,
        fields: dict[str, str],
        include_final: bool,
    ) -> None:
        self.program = program
        self.provider = provider
        self.fields = fields
        self.include_final = include_final
        self.open: set[str] = set()  # listened str outputs whose text has begun
        self.streamed = False

    def start(self, inputs: dict[str, Any]) -> list[Any]:
        """The status message before the program runs, if the provider gives one."""
        if self.provider is None:
            return []
        message = self.provider.module_start_status_message(self.program, inputs)
        return [StatusMessage(message)] if message else []

    def event(self, item: Any) -> list[Any]:
        """What one item of the program's stream gives the user."""
        if isinstance(item, Prediction):
            return self.end(item)
        if not self.fields:
            return [item]  # no listener: structio's own events, as DSPy gives raw chunks
        if isinstance(item, Reread):
            self.open.clear()  # the outputs stream again from their start
            return []
        field = getattr(item, "field", None)
        if field not in self.fields:
            return []
        name = self.fields[field]
        if isinstance(item, FieldDelta):
            self.open.add(field)
            self.streamed = True
            return [StreamResponse(name, field, item.delta, False)]
        if isinstance(item, FieldValue):
            self.streamed = True
            if field in self.open:
                self.open.discard(field)
                return [StreamResponse(name, field, "", True)]
            value = item.value
            text = value if isinstance(value, str) else json.dumps(jsonable(value))
            return [StreamResponse(name, field, text, True)]
        return []

    def end(self, result: Any) -> list[Any]:
        """The end: the module's status message, and the result unless left out.

        As DSPy's: left out only when listeners are given, asked to leave it out, and
        something was streamed.
        """
        items: list[Any] = []
        if self.provider is not None:
            message = self.provider.module_end_status_message(result)
            if message:
                items.append(StatusMessage(message))
        if self.include_final or not self.fields or not self.streamed:
            items.append(result)
        return items


def streamify(
    program: Any,
    status_message_provider: StatusMessageProvider | None = None,
    stream_listeners: list[StreamListener] | None = None,
    include_final_prediction_in_output_stream: bool = True,
    is_async_program: bool = False,
    async_streaming: bool = True,
) -> Callable[..., Any]:
    """Stream a program's outputs as they are written: DSPy's ``dspy.streamify``.

    Args:
        program: A `Predict` (or `ChainOfThought`): its outputs stream. Any other callable
            runs whole (in a worker thread, or awaited with ``is_async_program=True``) and
            gives its result only.
        status_message_provider: Gives `StatusMessage` items before and after the program.
        stream_listeners: The outputs to stream, as `StreamResponse` chunks; without any,
            the stream gives structio's events (`structio.FieldDelta`...).
        include_final_prediction_in_output_stream: ``False`` leaves the final `Prediction`
            out when listeners streamed something (as DSPy's).
        is_async_program: A program of your own is async: its ``acall`` (or itself) is
            awaited instead of run in a thread.
        async_streaming: ``False``: the call gives a plain generator instead of an async one.

    Returns:
        A function taking the program's arguments and giving the stream.

    Raises:
        UsageError: A listener names no output of the program, or the program is not a
            `Predict` and listeners are given.

    Example:
        >>> import structio as sio
        >>> lm = sio.FakeLM([{"answer": "Paris"}], chunk_size=2)
        >>> stream = sio.streamify(
        ...     sio.Predict("question -> answer"),
        ...     stream_listeners=[sio.streaming.StreamListener(signature_field_name="answer")],
        ...     async_streaming=False,
        ... )
        >>> with sio.context(lm=lm):
        ...     items = list(stream(question="Capital of France?"))
        >>> "".join(i.chunk for i in items if isinstance(i, sio.streaming.StreamResponse))
        'Paris'
    """
    fields = _bind(program, list(stream_listeners or []))

    def chunks() -> _Chunks:
        return _Chunks(
            program, status_message_provider, fields, include_final_prediction_in_output_stream
        )

    async def async_streamer(*args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        state = chunks()
        for item in state.start(kwargs):
            yield item
        if isinstance(program, Predict):
            async with program.astream(*args, **kwargs) as stream:
                async for event in stream:
                    for item in state.event(event):
                        yield item
            return
        result = await _run_whole(program, is_async_program, args, kwargs)
        for item in state.end(result):
            yield item

    def sync_streamer(*args: Any, **kwargs: Any) -> Generator[Any, None, None]:
        state = chunks()
        yield from state.start(kwargs)
        if isinstance(program, Predict):
            with program.stream(*args, **kwargs) as stream:
                for event in stream:
                    yield from state.event(event)
            return
        if is_async_program or inspect.iscoroutinefunction(program):
            # an async program of the user's: awaited on a loop of its own
            yield from apply_sync_streaming(async_streamer(*args, **kwargs))
            return
        yield from state.end(program(*args, **kwargs))

    return async_streamer if async_streaming else sync_streamer


async def _run_whole(program: Any, is_async: bool, args: Any, kwargs: Any) -> Any:
    """The result of a program that is not a Predict: awaited, or run in a worker thread."""
    if is_async:
        call = getattr(program, "acall", program)
        return await call(*args, **kwargs)
    if inspect.iscoroutinefunction(program):
        return await program(*args, **kwargs)
    return await asyncify(program)(*args, **kwargs)


_DONE = object()


def apply_sync_streaming(async_generator: AsyncIterator[Any]) -> Generator[Any, None, None]:
    """An async generator as a plain one, as DSPy's: run on an event loop of its own thread.

    The thread runs in a copy of the caller's `contextvars` context (its settings).
    """
    items: queue.Queue[Any] = queue.Queue()
    context = contextvars.copy_context()

    async def drain() -> None:
        try:
            async for item in async_generator:
                items.put((True, item))
        except BaseException as exc:  # handed to the consumer, raised there
            items.put((False, exc))
        finally:
            items.put(_DONE)

    thread = threading.Thread(target=context.run, args=(asyncio.run, drain()), daemon=True)
    thread.start()
    while (entry := items.get()) is not _DONE:
        ok, value = entry
        if not ok:
            raise value
        yield value
    thread.join()


async def streaming_response(streamer: AsyncIterator[Any]) -> AsyncGenerator[str, None]:
    """A stream as server-sent events (``data: {...}``), as DSPy's ``streaming_response``.

    A `Prediction` is ``{"prediction": {outputs}}``; a `StreamResponse`, a `StatusMessage`
    and a structio event are ``{"chunk": {...}}``; a string that starts with ``data:``
    passes as it is. The last event is ``data: [DONE]``.

    Raises:
        ValueError: An item of another kind.
    """
    async for value in streamer:
        if isinstance(value, Prediction):
            data: dict[str, Any] = {"prediction": jsonable(dict(value))}
        elif isinstance(value, (StreamResponse, StatusMessage)):
            data = {"chunk": dataclasses.asdict(value)}
        elif isinstance(value, str) and value.startswith("data:"):
            yield value
            continue
        elif hasattr(value, "__match_args__"):  # a structio stream event
            data = {"chunk": {"type": type(value).__name__, **_event_fields(value)}}
        else:
            raise ValueError(f"Unknown chunk value type: {value!r}")
        yield f"data: {json.dumps(data, ensure_ascii=False)}\n\n"
    yield "data: [DONE]\n\n"


def _event_fields(event: Any) -> dict[str, Any]:
    names: Iterable[str] = event.__match_args__
    return {name: jsonable(getattr(event, name)) for name in names}
