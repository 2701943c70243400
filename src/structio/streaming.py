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
- The Predicts a program calls stream when the program shows them as DSPy's modules do,
  by ``named_predictors()`` (a `structio.Module` subclass), or when a listener names one
  (``predict=``): the program runs in a worker thread (`structio.asyncify`, or awaited
  with ``is_async_program=True``), and the calls of a listened Predict's signature made
  inside it are streamed by the call layer (`structio.settings.listening`). Two Predicts
  of one signature class are one to a listener.
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
from structio.settings import listening

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


# A listened Predict's signature class -> its name in the program and its listened outputs.
_Routes = dict[Any, tuple[str, frozenset[str]]]


def _predictors(program: Any) -> list[tuple[str, Any]]:
    """The program's predictors by DSPy's names: ``named_predictors()``, or the Predict itself."""
    if isinstance(program, Predict):
        return [("predict" if isinstance(program, ChainOfThought) else "self", program)]
    named = getattr(program, "named_predictors", None)
    return list(named()) if callable(named) else []


def _bind(program: Any, listeners: list[StreamListener]) -> _Routes:
    """Each listened Predict's signature with its name and outputs; the listeners filled in.

    A listener without ``predict`` is given the one predictor of the program that has its
    output, as DSPy's `streamify` does.

    Raises:
        UsageError: A listener's output is no predictor's, or several predictors' (name the
            one: ``predict=``), or the program shows no predictors (no ``named_predictors``).
    """
    named = _predictors(program)
    names = {id(p): name for name, p in named}
    fields: dict[int, set[str]] = {}
    for listener in listeners:
        field = listener.signature_field_name
        if listener.predict is None:
            having = [(n, p) for n, p in named if field in p.signature.output_fields]
            if not having:
                raise UsageError(_unheard(program, field, named))
            if len(having) > 1:
                raise UsageError(
                    f"{field!r} is an output of several predictors of the program "
                    f"({', '.join(n for n, _ in having)}): name the one to stream, "
                    "StreamListener(signature_field_name=..., predict=program.<predictor>)"
                )
            listener.predict_name, listener.predict = having[0]
        elif field not in listener.predict.signature.output_fields:
            raise UsageError(f"{field!r} is not an output of {listener.predict!r}")
        listener.predict_name = listener.predict_name or names.get(id(listener.predict)) or "self"
        fields.setdefault(id(listener.predict), set()).add(field)
    routes: _Routes = {}
    for listener in listeners:
        outputs = frozenset(fields[id(listener.predict)])
        routes[listener.predict.signature] = (str(listener.predict_name), outputs)
    return routes


def _unheard(program: Any, field: str, named: list[tuple[str, Any]]) -> str:
    if not named:
        return (
            f"structio cannot see the predictors of {type(program).__name__}: give it "
            "named_predictors() (subclass structio.Module), name the predictor, "
            "StreamListener(signature_field_name=..., predict=...), or stream one Predict "
            "with `async for event in predict.astream(...)`"
        )
    outputs = sorted({f for _, p in named for f in p.signature.output_fields})
    return f"{field!r} is not an output of the program; its outputs: {', '.join(outputs)}"


class _Chunks:
    """One stream's events turned into DSPy's items: chunks, status messages, the result."""

    def __init__(
        self,
        program: Any,
        provider: StatusMessageProvider | None,
        listened: bool,
        include_final: bool,
    ) -> None:
        self.program = program
        self.provider = provider
        self.listened = listened
        self.include_final = include_final
        self.open: set[tuple[str, str]] = set()  # listened str outputs whose text has begun
        self.streamed = False

    def start(self, inputs: dict[str, Any]) -> list[Any]:
        """The status message before the program runs, if the provider gives one."""
        if self.provider is None:
            return []
        message = self.provider.module_start_status_message(self.program, inputs)
        return [StatusMessage(message)] if message else []

    def event(self, item: Any, route: tuple[str, frozenset[str]] | None) -> list[Any]:
        """What one item of a listened Predict's stream gives the user."""
        if isinstance(item, Prediction):
            return self.end(item)
        if not self.listened:
            return [item]  # no listener: structio's own events, as DSPy gives raw chunks
        if route is None:
            return []
        name, fields = route
        if isinstance(item, Reread):  # the outputs stream again from their start
            self.open = {key for key in self.open if key[0] != name}
            return []
        field = getattr(item, "field", None)
        if field not in fields:
            return []
        key = (name, field)
        if isinstance(item, FieldDelta):
            self.open.add(key)
            self.streamed = True
            return [StreamResponse(name, field, item.delta, False)]
        if isinstance(item, FieldValue):
            self.streamed = True
            if key in self.open:
                self.open.discard(key)
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
        if self.include_final or not self.listened or not self.streamed:
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
            runs whole (in a worker thread, or awaited with ``is_async_program=True``),
            the listened outputs of the Predicts it calls streaming as they are written
            (found by its ``named_predictors()``, or named by a listener's ``predict``),
            then its result.
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
        UsageError: A listener names no output of the program's predictors, or an output
            of several (name the one with ``predict=``), or the program shows no predictors
            and the listener names none.

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
    listeners = list(stream_listeners or [])
    routes = _bind(program, listeners)

    def chunks() -> _Chunks:
        return _Chunks(
            program,
            status_message_provider,
            bool(listeners),
            include_final_prediction_in_output_stream,
        )

    async def async_streamer(*args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        state = chunks()
        for item in state.start(kwargs):
            yield item
        if isinstance(program, Predict):  # its own stream: no thread, no listening
            route = routes.get(program.signature)
            async with program.astream(*args, **kwargs) as stream:
                async for event in stream:
                    for item in state.event(event, route):
                        yield item
            return
        async for item in _heard(program, is_async_program, args, kwargs, routes, state):
            yield item

    def sync_streamer(*args: Any, **kwargs: Any) -> Generator[Any, None, None]:
        if not isinstance(program, Predict):  # the program runs on a loop of its own
            yield from apply_sync_streaming(async_streamer(*args, **kwargs))
            return
        state = chunks()
        yield from state.start(kwargs)
        route = routes.get(program.signature)
        with program.stream(*args, **kwargs) as stream:
            for event in stream:
                yield from state.event(event, route)

    return async_streamer if async_streaming else sync_streamer


_END = object()


async def _heard(
    program: Any, is_async: bool, args: Any, kwargs: Any, routes: _Routes, state: _Chunks
) -> AsyncGenerator[Any, None]:
    """Run a program whole, its listened Predicts' events given as they come, then its result.

    The Predicts stream because the call layer finds them in `settings.listening` (the
    program's thread or task runs in a copy of this context); their events come here
    through a queue, from whichever thread made the call.
    """
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[Any] = asyncio.Queue()

    def hearer(signature: Any) -> Callable[[Any], None]:
        def hear(event: Any) -> None:
            loop.call_soon_threadsafe(events.put_nowait, (signature, event))

        return hear

    with listening({signature: hearer(signature) for signature in routes}):
        task = asyncio.ensure_future(_run_whole(program, is_async, args, kwargs))
    task.add_done_callback(lambda _: events.put_nowait(_END))
    try:
        while (entry := await events.get()) is not _END:
            signature, event = entry
            for item in state.event(event, routes.get(signature)):
                yield item
        result = task.result()
    finally:
        task.cancel()  # the user stopped reading: the program's result is not wanted
    for item in state.end(result):
        yield item


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
