"""`BaseLM`: what structio needs from a language model, and the history of calls."""

from __future__ import annotations

import abc
import contextlib
import contextvars
import copy
import datetime
import os
import sys
import threading
import time
from collections import deque
from collections.abc import (
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    KeysView,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from typing import Any, TextIO, overload

from structio._util.secrets import public_params, redact, redact_data, secret_values
from structio.exceptions import ConfigurationError, ServerError
from structio.lm.profile import (
    TEXT_ONLY,
    ModelProfile,
    ProfileOverride,
    apply_override,
    check_override,
)
from structio.lm.types import (
    AsyncLMStream,
    Completion,
    LMResponse,
    LMStream,
    StreamItem,
    response_pieces,
)
from structio.lm.usage import record_usage

__all__ = [
    "BaseLM",
    "HistoryEntry",
    "Origin",
    "completion_outputs",
    "current_origin",
    "inspect_history",
    "no_choices_error",
    "origin",
    "origin_key",
    "reset_origin",
    "set_origin",
]

Messages = Sequence[Mapping[str, Any]]

_GLOBAL_HISTORY: deque[HistoryEntry] = deque(maxlen=200)
_GLOBAL_LOCK = threading.Lock()
# Where a pickled LM keeps the size of its history, which itself is not pickled.
_HISTORY_SIZE = "__structio_history_size__"


Origin = tuple[object, type]
"""Where a request comes from: the adapter that wrote it and the signature it asks for.

Typed loosely on purpose: this layer sits below the adapters and signatures, and only a
model that writes its own replies (`structio.testing.FakeLM`) reads the pair.
"""

# Set on every call, read only by models that write their own replies: a plain tuple, the
# cheapest thing to build.
_ORIGIN: contextvars.ContextVar[Origin | None] = contextvars.ContextVar(
    "structio_origin", default=None
)


@contextlib.contextmanager
def origin(adapter: object, signature: type) -> Iterator[None]:
    """Say, for the model calls inside, which adapter and signature the request is for.

    The call layer does this, so a model that writes its own replies (`FakeLM`) answers in
    the format the request asks for, without reading the prompt.
    """
    token = set_origin(adapter, signature)
    try:
        yield
    finally:
        _ORIGIN.reset(token)


OriginToken = contextvars.Token[Origin | None]


def set_origin(adapter: object, signature: type) -> OriginToken:
    """`origin` without a ``with`` block, for hot paths: reset with ``reset_origin(token)``."""
    return _ORIGIN.set((adapter, signature))


def reset_origin(token: OriginToken) -> None:
    """Undo `set_origin`."""
    _ORIGIN.reset(token)


def current_origin() -> Origin | None:
    """The adapter and signature of the request being made here, if the call layer said."""
    return _ORIGIN.get()


def origin_key(found: Origin | None = None) -> str | None:
    """A short key naming the adapter and signature of a request, the same in every process.

    A hash of the adapter's class name and the signature's name and field names (inputs,
    then outputs): what OpenAI's ``prompt_cache_key`` groups requests by, so that the calls
    of one signature and adapter share a cache. ``found`` is an origin; by default the one
    the call layer set here (`current_origin`); None when there is none.
    """
    found = found if found is not None else _ORIGIN.get()
    if found is None:
        return None
    import hashlib  # on the first key: `import structio` does not pay for it

    adapter, signature = found
    # Read by name: this layer sits below the signatures (see `Origin`).
    inputs = getattr(signature, "input_fields", None)
    outputs = getattr(signature, "output_fields", None)
    parts = [
        type(adapter).__name__,
        getattr(signature, "__name__", type(signature).__name__),
        ",".join(inputs) if isinstance(inputs, Mapping) else "",
        ",".join(outputs) if isinstance(outputs, Mapping) else "",
    ]
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
    return f"structio-{digest[:16]}"


def no_choices_error(model: str, *, provider: str | None = None, attempts: int = 1) -> ServerError:
    """The error for a response with no choice in it: retryable, as a 5xx is.

    A response without a completion is the provider failing, never an empty answer.
    """
    where = f"{model} (provider {provider})" if provider else model
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    return ServerError(
        f"{where}: the provider returned no choices{tries} (an empty 'choices' list: "
        "there is no completion to read); retry later, or check the provider's status",
        model=model,
        provider=provider,
        attempts=attempts,
    )


def _no_response(model: str) -> ServerError:
    # A model class whose stream ended without its response: nothing to read or record.
    return ServerError(f"{model}: the stream ended without a response", model=model)


def _new_uuid() -> str:
    """A random UUID4 in its string form, as ``str(uuid.uuid4())`` writes it.

    Made per call from 16 random bytes, the version and variant bits set as RFC 4122 says:
    a third of the cost of building a `uuid.UUID` and printing it.
    """
    data = bytearray(os.urandom(16))
    data[6] = (data[6] & 0x0F) | 0x40  # version 4
    data[8] = (data[8] & 0x3F) | 0x80  # the RFC 4122 variant
    h = data.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@dataclass(frozen=True, init=False)
class HistoryEntry(Mapping[str, Any]):
    """One call of a model: what was sent, what came back, what it cost.

    Every configured credential (the values of the LM's and the call's secret settings and
    secret headers) is replaced by ``[redacted]`` wherever it appears in the entry: in the
    messages, the parameters and the completions; the response returned to the caller is
    left as it came.

    An entry also reads as DSPy's history dicts do: ``entry["messages"]``,
    ``entry["outputs"]`` (the completions' texts, as ``lm("...")`` returns them),
    ``entry["usage"]`` (a dict of OpenAI's usage names), ``entry["cost"]``,
    ``entry["model"]``, ``entry["response"]``, ``entry["kwargs"]`` (the parameters),
    ``entry["prompt"]``, ``entry["timestamp"]`` (ISO 8601), ``entry["uuid"]``,
    ``entry["response_model"]`` and ``entry["model_type"]``.

    Attributes:
        model: The model string.
        messages: The messages sent.
        params: The request parameters (credentials removed).
        response: The response (completions, usage, cost, whether it was cached).
        timestamp: When the call ended (seconds since the epoch).
        prompt: The text the LM was called with (``lm("...")``), if it was called so.
        uuid: A random identifier of this call (a UUID4 string, as DSPy's entries have).
    """

    model: str
    messages: list[dict[str, Any]]
    params: dict[str, Any]
    response: LMResponse
    timestamp: float = field(default_factory=time.time)
    prompt: str | None = None
    uuid: str = field(default_factory=_new_uuid)

    def __init__(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: dict[str, Any],
        response: LMResponse,
        timestamp: float | None = None,
        prompt: str | None = None,
        uuid: str | None = None,
    ) -> None:
        # Written out, one entry per call: a frozen dataclass's own __init__ sets each field
        # through object.__setattr__, at several times the cost. ``None``: the defaults.
        self.__dict__.update(
            model=model,
            messages=messages,
            params=params,
            response=response,
            timestamp=time.time() if timestamp is None else timestamp,
            prompt=prompt,
            uuid=_new_uuid() if uuid is None else uuid,
        )

    def __getitem__(self, key: str) -> Any:
        try:
            read = _ENTRY_KEYS[key]
        except (KeyError, TypeError):
            raise KeyError(
                f"{key!r}: a history entry has the keys {', '.join(_ENTRY_KEYS)}"
            ) from None
        return read(self)

    def __iter__(self) -> Iterator[str]:
        return iter(_ENTRY_KEYS)

    def __len__(self) -> int:
        return len(_ENTRY_KEYS)

    def keys(self) -> KeysView[str]:
        """The keys, shown as a dict's are: ``dict_keys(['prompt', 'messages', ...])``.

        `Mapping.keys` would show the whole entry, prompt and response included.
        """
        return _EntryKeys(self)

    @property
    def latency(self) -> float:
        """Seconds the call took, retries included."""
        return self.response.latency

    @property
    def cost(self) -> float | None:
        """Cost in USD, when known (0.0 for cache hits)."""
        return self.response.cost


class _EntryKeys(KeysView[str]):
    """A history entry's keys, shown as a list of names."""

    def __repr__(self) -> str:
        return f"dict_keys({list(self)!r})"


def completion_outputs(response: LMResponse) -> list[Any]:
    """What DSPy's ``lm(...)`` returns: each choice's text, or dicts when there is more.

    A choice with native reasoning or tool calls makes every choice a dict: ``"text"``,
    and ``"reasoning_content"`` / ``"tool_calls"`` where the choice has them.
    """
    outputs: list[dict[str, Any]] = []
    for completion in response.completions:
        output: dict[str, Any] = {"text": completion.text}
        if completion.reasoning:
            output["reasoning_content"] = completion.reasoning
        if completion.tool_calls:
            output["tool_calls"] = [dict(call) for call in completion.tool_calls]
        outputs.append(output)
    if all(len(output) == 1 for output in outputs):
        return [output["text"] for output in outputs]
    return outputs


# How each of DSPy's history keys reads from an entry, in DSPy's order.
_ENTRY_KEYS: dict[str, Callable[[HistoryEntry], Any]] = {
    "prompt": lambda entry: entry.prompt,
    "messages": lambda entry: entry.messages,
    "kwargs": lambda entry: entry.params,
    "response": lambda entry: entry.response,
    "outputs": lambda entry: completion_outputs(entry.response),
    "usage": lambda entry: entry.response.usage.as_openai(),
    "cost": lambda entry: entry.response.cost,
    "timestamp": lambda entry: datetime.datetime.fromtimestamp(entry.timestamp).isoformat(),
    "uuid": lambda entry: entry.uuid,
    "model": lambda entry: entry.model,
    "response_model": lambda entry: entry.response.model,
    "model_type": lambda entry: "chat",
}


class BaseLM(abc.ABC):
    """Base class of language models: ``lm(messages)`` and ``await lm.acall(messages)``.

    Subclass it to plug in any backend: implement `_complete` (and `_acomplete` for a
    native async path; `_stream` / `_astream` for native streaming, else a stream is the
    whole answer as one piece). Every call, streamed or not, is recorded in `history` and
    in the process-wide history printed by `structio.inspect_history`, and added to the
    `structio.track_usage` trackers in effect.

    Attributes:
        model: The model's name.
        history: The most recent calls of this LM, oldest first.
    """

    model: str

    def __init__(
        self, model: str, *, history_size: int = 100, profile: ProfileOverride | None = None
    ) -> None:
        """Name the model; ``profile``: what it supports (`profile`), by default text only.

        Args:
            model: The model's name.
            history_size: How many of the latest calls `history` keeps.
            profile: A `ModelProfile`, or a dict of the fields to change from one that
                supports nothing beyond text (``{"tools": True}``).

        Raises:
            ConfigurationError: ``profile`` is not a profile or a dict of its fields.
        """
        self.model = model
        self.history: deque[HistoryEntry] = deque(maxlen=history_size)
        if profile is not None:
            self._profile = apply_override(TEXT_ONLY, check_override(profile))

    # -- pickling -------------------------------------------------------------------------
    #
    # An LM travels to worker processes (multiprocessing, Ray, Spark) with its settings;
    # what it did in this process does not: an unpickled LM starts with an empty history
    # of the same size. Subclasses drop their own process-local state (locks, clients) in
    # `__getstate__` and build it again in `__setstate__`, calling these.

    def __getstate__(self) -> dict[str, Any]:
        """The LM's attributes to pickle: everything but its history (only its size)."""
        state = dict(self.__dict__)
        history = state.pop("history", None)
        if isinstance(history, deque):
            state[_HISTORY_SIZE] = history.maxlen
        return state

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        """Restore a pickled LM, with an empty history."""
        attrs = dict(state)
        has_history = _HISTORY_SIZE in attrs
        size = attrs.pop(_HISTORY_SIZE, None)
        self.__dict__.update(attrs)
        if has_history:
            self.history = deque(maxlen=size)

    # -- what the model supports ------------------------------------------------------------

    @property
    def profile(self) -> ModelProfile:
        """What the model supports: structured output, tools, reasoning, limits, prices.

        Adapters and the call layer ask this and nothing else. By default a profile that
        supports nothing beyond text, or the ``profile=`` given to `__init__`; a subclass
        that knows its model overrides this property.
        """
        found: ModelProfile = self.__dict__.get("_profile", TEXT_ONLY)
        return found

    @property
    def supports_response_schema(self) -> bool:
        """Whether the model takes a JSON schema as ``response_format`` (`profile`)."""
        return self.profile.json_schema

    @property
    def supports_json_mode(self) -> bool:
        """Whether the model takes ``response_format={"type": "json_object"}`` (`profile`)."""
        return self.profile.json_object

    @property
    def supports_function_calling(self) -> bool:
        """Whether the model takes ``tools=`` and answers with tool calls (`profile`)."""
        return self.profile.tools

    @property
    def supports_reasoning(self) -> bool:
        """Whether the model reasons before it answers (`profile`)."""
        return self.profile.reasoning

    @property
    def max_input_tokens(self) -> int | None:
        """The model's context window in tokens, when known (`profile`)."""
        return self.profile.context_window

    @overload
    def __call__(self, prompt: str | None = None, /, **params: Any) -> list[Any]: ...

    @overload
    def __call__(self, messages: Messages, /, **params: Any) -> LMResponse: ...

    def __call__(
        self, request: Messages | str | None = None, /, **params: Any
    ) -> LMResponse | list[Any]:
        """Send messages and return one completion per choice (``n=``).

        ``lm(messages)``, a list of messages given by position, returns the `LMResponse`
        (completions, usage, cost). DSPy's spellings, ``lm("text")``,
        ``lm(prompt="text")`` and ``lm(messages=[...])``, return what DSPy's LM does: the
        list of the choices' texts (dicts with ``"text"`` when a choice also has reasoning
        or tool calls). Either way the call is in `history`.

        ``params`` are request parameters for this call; they update the LM's own.

        Raises:
            TypeError: No messages or prompt, or both.
            ServerError: The model returned no completion at all (an empty ``choices``
                list): never an empty answer.
        """
        start = time.perf_counter()
        if request is None or isinstance(request, str):
            sent, prompt = _dspy_request(request, params)
            response = self._complete(sent, params)
            return completion_outputs(self._record(sent, params, response, start, prompt))
        response = self._complete(_plain_messages(request), params)
        return self._record(request, params, response, start)

    @overload
    async def acall(self, prompt: str | None = None, /, **params: Any) -> list[Any]: ...

    @overload
    async def acall(self, messages: Messages, /, **params: Any) -> LMResponse: ...

    async def acall(
        self, request: Messages | str | None = None, /, **params: Any
    ) -> LMResponse | list[Any]:
        """Async form of ``lm(messages, **params)`` (and of DSPy's spellings)."""
        start = time.perf_counter()
        if request is None or isinstance(request, str):
            sent, prompt = _dspy_request(request, params)
            response = await self._acomplete(sent, params)
            return completion_outputs(self._record(sent, params, response, start, prompt))
        response = await self._acomplete(_plain_messages(request), params)
        return self._record(request, params, response, start)

    def stream(self, messages: Messages, *, pieces: bool = False, **params: Any) -> LMStream:
        """Send messages and read the answer as it is written.

        Iterating the result gives the first choice's text in pieces (`str`), then the
        whole `LMResponse` (all choices, finish reason, usage, cost) as the last item. The
        call is recorded in `history` once the stream ends; a stream left early is not.

        Args:
            messages: The chat messages.
            pieces: Also give the provider's reasoning (`ReasoningPiece`) and tool-call
                arguments (`ToolCallPiece`) of the first choice as they are streamed.
            **params: Request parameters for this call.

        Raises:
            LMError: The provider failed (when iterating; a failure after text has been
                given is never retried: it raises).
        """
        plain = _plain_messages(messages)  # checked now, not at the first item
        source = self._recorded(messages, self._stream(plain, params), params)
        return LMStream(source, pieces=pieces)

    def astream(self, messages: Messages, *, pieces: bool = False, **params: Any) -> AsyncLMStream:
        """Async form of `stream`: ``async for item in lm.astream(messages)``."""
        plain = _plain_messages(messages)
        source = self._arecorded(messages, self._astream(plain, params), params)
        return AsyncLMStream(source, pieces=pieces)

    def _recorded(
        self, messages: Messages, source: Iterator[StreamItem], params: Mapping[str, Any]
    ) -> Iterator[StreamItem]:
        start = time.perf_counter()
        try:
            for item in source:
                if isinstance(item, LMResponse):
                    yield self._record(messages, params, item, start)
                    return
                yield item
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()  # leaving early ends the request there, not when collected
        raise _no_response(self.model)

    async def _arecorded(
        self, messages: Messages, source: AsyncIterator[StreamItem], params: Mapping[str, Any]
    ) -> AsyncIterator[StreamItem]:
        start = time.perf_counter()
        try:
            async for item in source:
                if isinstance(item, LMResponse):
                    yield self._record(messages, params, item, start)
                    return
                yield item
        finally:
            close = getattr(source, "aclose", None)
            if close is not None:
                await close()
        raise _no_response(self.model)

    @abc.abstractmethod
    def _complete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> LMResponse:
        """Produce the response for one call (``params``: this call's request parameters)."""

    async def _acomplete(
        self, messages: list[dict[str, Any]], params: dict[str, Any]
    ) -> LMResponse:
        import asyncio

        return await asyncio.to_thread(self._complete, messages, params)

    def _stream(
        self, messages: list[dict[str, Any]], params: dict[str, Any]
    ) -> Iterator[StreamItem]:
        """Overridable: yield the first choice's text as it comes, then the `LMResponse`.

        Reasoning (`ReasoningPiece`) and tool-call arguments (`ToolCallPiece`) may come
        between (`stream` gives them to callers that ask). By default the whole answer
        (`_complete`) is one piece of each.
        """
        response = self._complete(messages, params)
        yield from response_pieces(response, [response.text] if response.text else [])

    async def _astream(
        self, messages: list[dict[str, Any]], params: dict[str, Any]
    ) -> AsyncIterator[StreamItem]:
        """Overridable: async form of `_stream` (by default the whole `_acomplete` answer)."""
        response = await self._acomplete(messages, params)
        for item in response_pieces(response, [response.text] if response.text else []):
            yield item

    def copy(self, **changes: Any) -> Any:
        """A shallow copy with a history of its own and attributes changed (DSPy's name).

        `LM` overrides it to build a new LM of its settings; here each keyword sets an
        attribute the LM has (``lm.copy(model="other")``).

        Raises:
            ConfigurationError: A keyword names no attribute of this LM.
        """
        unknown = [name for name in changes if name.startswith("_") or not hasattr(self, name)]
        if unknown:
            raise ConfigurationError(
                f"{type(self).__name__}.copy({unknown[0]}=...): this LM has no such setting; "
                f"a subclass of BaseLM copies only the attributes it has"
            )
        copied = copy.copy(self)
        copied.history = deque(maxlen=self.history.maxlen)
        for name, value in changes.items():
            setattr(copied, name, value)
        return copied

    def inspect_history(self, n: int = 1, *, file: TextIO | None = None) -> None:
        """Print this LM's last ``n`` calls, as `structio.inspect_history` prints the process's.

        DSPy's ``lm.inspect_history(n=1)``: returns nothing; ``file=`` prints elsewhere (an
        ``io.StringIO`` keeps the text).

        Args:
            n: How many of this LM's most recent calls to show.
            file: Where to print (standard output by default).
        """
        # deque.copy is one step under the GIL: a call recorded meanwhile cannot break it.
        _print_history(self.history.copy(), n, file=file)

    def request_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters a call sends: the LM's own updated by this call's ``params``."""
        return dict(params)

    def _history_params(self, params: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """What a call's history entry shows of its settings, and the credentials in them.

        ``(public_params(sent), secret_values(sent))`` of everything the call sends
        (`request_params`): a new dict, and the values to redact, longest first. A subclass
        whose own settings do not change between calls may keep their part of both.
        """
        sent = self.request_params(params)
        if not sent:
            return {}, []
        return public_params(sent), secret_values(sent)

    def _record(
        self,
        messages: Messages,
        params: Mapping[str, Any],
        response: LMResponse,
        start: float,
        prompt: str | None = None,
    ) -> LMResponse:
        if not response.completions:
            # Checked for every model, not only LM: a reply with nothing to read is a
            # failure to report, never an empty prediction.
            raise no_choices_error(self.model)
        if not response.latency:
            # Built directly: dataclasses.replace is slow for a per-call step.
            response = LMResponse(
                completions=response.completions,
                model=response.model,
                usage=response.usage,
                cost=response.cost,
                cached=response.cached,
                latency=time.perf_counter() - start,
            )
        shown, secrets = self._history_params(params)
        if secrets:
            entry = HistoryEntry(
                model=self.model,
                messages=redact_data(_plain_messages(messages), secrets),
                params=redact_data(shown, secrets),
                response=_redacted_response(response, secrets),
                prompt=None if prompt is None else redact(prompt, secrets),
            )
        else:  # the usual test double: nothing to hide, nothing to scan
            entry = HistoryEntry(
                model=self.model,
                messages=_plain_messages(messages),
                params=shown,
                response=response,
                prompt=prompt,
            )
        self.history.append(entry)
        with _GLOBAL_LOCK:
            _GLOBAL_HISTORY.append(entry)
        record_usage(self.model, response)  # the `track_usage` blocks in effect here
        return response


def _redacted_response(response: LMResponse, secrets: list[str]) -> LMResponse:
    """The response with credentials replaced in its completions (itself if there are none)."""
    if not secrets:
        return response
    completions = tuple(
        Completion(
            text=(text := redact(c.text, secrets)),
            finish_reason=c.finish_reason,
            tool_calls=redact_data(c.tool_calls, secrets),
            reasoning=redact(c.reasoning, secrets) if c.reasoning is not None else None,
            # A secret split over tokens is not found in them: where the text held one,
            # its tokens are not kept.
            logprobs=c.logprobs if text is c.text else None,
        )
        for c in response.completions
    )
    if all(
        new.text is old.text and new.tool_calls is old.tool_calls and new.reasoning is old.reasoning
        for new, old in zip(completions, response.completions, strict=True)
    ):
        return response
    return LMResponse(
        completions=completions,
        model=response.model,
        usage=response.usage,
        cost=response.cost,
        cached=response.cached,
        latency=response.latency,
    )


def _dspy_request(
    prompt: str | None, params: dict[str, Any]
) -> tuple[list[dict[str, Any]], str | None]:
    """The messages of a call spelled as DSPy's: ``lm("text")``, ``lm(messages=[...])``.

    Takes ``prompt=`` and ``messages=`` out of ``params``, which are the call's own.
    """
    if prompt is None:
        prompt = params.pop("prompt", None)
    messages = params.pop("messages", None)
    if messages is not None and prompt is not None:
        raise TypeError("an LM takes a prompt or messages=[...], not both")
    if messages is not None:
        return _plain_messages(messages), None
    if not isinstance(prompt, str):
        raise TypeError(
            "an LM call needs what to send: lm('text'), lm(messages=[{'role': 'user', "
            f"'content': '...'}}]) or lm([...messages]), not {type(prompt).__name__}"
        )
    return [{"role": "user", "content": prompt}], prompt


def _plain_messages(messages: Messages) -> list[dict[str, Any]]:
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):  # type: ignore[unreachable, unused-ignore]
        raise TypeError(
            "an LM takes a list of messages such as [{'role': 'user', 'content': '...'}], "
            f"not {type(messages).__name__}"
        )
    return [dict(message) for message in messages]


def inspect_history(n: int = 1, *, file: TextIO | None = None) -> None:
    """Print the last ``n`` model calls of this process: the prompt, the completions, the cost.

    Returns nothing, as DSPy's does, so that a REPL or notebook shows the history once. To
    keep the text, print it into a buffer: ``buffer = io.StringIO();
    structio.inspect_history(1, file=buffer); text = buffer.getvalue()``.

    Args:
        n: How many of the most recent calls to show.
        file: Where to print (standard output by default).
    """
    with _GLOBAL_LOCK:
        entries = list(_GLOBAL_HISTORY)
    _print_history(entries, n, file=file)


def _print_history(
    history: Iterable[HistoryEntry], n: int = 1, *, file: TextIO | None = None
) -> None:
    """Print the last ``n`` entries of ``history``: the one rendering of `inspect_history`."""
    entries = list(history)[-n:] if n > 0 else []
    text = "\n".join(_render(entry) for entry in entries) if entries else "(no model calls yet)\n"
    print(text, file=file or sys.stdout, end="")


def _render(entry: HistoryEntry) -> str:
    response = entry.response
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.timestamp))
    usage = response.usage
    facts = [f"{response.latency:.2f}s"]
    if response.cached:
        facts.append("cached")
    facts.append(f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens")
    if response.cost is not None:
        facts.append(f"${response.cost:.6f}")
    params = {k: v for k, v in entry.params.items() if k not in ("messages",)}
    lines = [f"[{when}] {entry.model} ({', '.join(facts)})"]
    if params:
        lines.append("params: " + ", ".join(f"{k}={v!r}" for k, v in params.items()))
    for message in entry.messages:
        lines.append(f"\n{str(message.get('role', '?')).capitalize()} message:\n")
        content = message.get("content")
        lines.append(content if isinstance(content, str) else repr(content))
    for index, completion in enumerate(response.completions):
        label = "Response" if len(response.completions) == 1 else f"Response {index + 1}"
        reason = f" (finish reason: {completion.finish_reason})" if completion.finish_reason else ""
        lines.append(f"\n{label}{reason}:\n")
        if completion.reasoning:
            # Apart from the answer and before it, indented so that where it ends shows:
            # the reasoning is not part of the completion's text.
            indented = "\n".join("  " + line for line in completion.reasoning.splitlines())
            lines.append(f"reasoning:\n{indented}\n")
        lines.append(completion.text)
        if completion.tool_calls:
            lines.append(f"tool calls: {list(completion.tool_calls)!r}")
    return "\n".join(lines) + "\n\n"
