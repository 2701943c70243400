"""`MockTransport`: an `LM` transport answered by a function, as ``httpx.MockTransport`` is.

With it an `LM` runs its own machinery (retries with backoff, ``Retry-After``, the
response cache, stream assembly and replay, history, usage) without a socket::

    def handler(request: MockRequest) -> str:
        return "Paris" if "France" in str(request.messages) else "?"

    lm = LM("openai/test", transport=MockTransport(handler), cache=False)
    lm([{"role": "user", "content": "Capital of France?"}]).text   # 'Paris'

`structio.FakeLM` replaces the LM instead: use it to script a call's replies; use a
`MockTransport` to test what the LM itself does with them.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from structio.exceptions import ConfigurationError, LMConnectionError, LMError, LMTimeoutError
from structio.lm import _http
from structio.lm._errors import lm_error
from structio.lm._stream import StreamAssembler
from structio.lm.client import ClientSettings
from structio.lm.types import Completion, LMResponse, StreamPiece, Usage

__all__ = ["MockReply", "MockRequest", "MockTransport"]


@dataclass(frozen=True)
class MockRequest:
    """One request a `MockTransport` received.

    Attributes:
        model: The model string of the LM.
        messages: The messages sent.
        params: The request parameters (the call's over the LM's), read-only.
        client: The client settings (the call's over the LM's).
        attempt: 1 for the first request of a call, 2 for its first retry...
        stream: Whether the request was made as a stream.
    """

    model: str
    messages: tuple[Mapping[str, Any], ...]
    params: Mapping[str, Any]
    client: ClientSettings
    attempt: int
    stream: bool

    @property
    def text(self) -> str:
        """The last message's content as text (what a test usually reads)."""
        if not self.messages:
            return ""
        content = self.messages[-1].get("content")
        return content if isinstance(content, str) else str(content or "")


#: What a handler may return: the response, its text, an OpenAI ``chat.completion`` dict,
#: or an exception (raised as if the provider failed so).
MockReply = LMResponse | str | Mapping[str, Any] | BaseException
Handler = Callable[[MockRequest], MockReply]
Translate = Callable[[BaseException, str, int], LMError | None]


class MockTransport:
    """A `Transport` whose provider is ``handler(request)``.

    The handler gets a `MockRequest` and returns an `LMResponse`, a string (the text of
    one completion that finished with ``"stop"``), an OpenAI ``chat.completion`` dict (read
    as the direct transport reads a response), or an exception, which it may also raise.
    An `LMError` (``RateLimitError(..., retry_after=2)``, ``ServerError``...) is what the
    provider failing that way would raise: the LM retries the retryable ones. Any other
    exception goes through `translate_error`: ``TimeoutError`` and ``ConnectionError``
    become `LMTimeoutError` and `LMConnectionError` (retried), others are raised as they
    are, unless ``translate=`` says otherwise.

    A streamed request gets the same answer, fed to the `StreamAssembler` as a provider's
    chunks would be: the first choice's text in pieces of ``piece_size`` characters, then
    the finish reasons and the usage.

    ``requests`` lists every request received, in order.

    Args:
        handler: ``handler(request) -> reply`` (see above).
        piece_size: Characters per streamed piece of the first choice's text.
        name: The transport's name (``lm.resolved_transport``; the name to register it
            under, if it is registered).
        translate: ``translate(exc, model, attempt) -> LMError | None`` for the exceptions
            the handler raises that are not `LMError` (None: raise it as it is).
    """

    def __init__(
        self,
        handler: Handler,
        *,
        piece_size: int = 8,
        name: str = "mock",
        translate: Translate | None = None,
    ) -> None:
        if not callable(handler):
            raise ConfigurationError(f"MockTransport(handler) needs a function, not {handler!r}")
        if piece_size < 1:
            raise ConfigurationError(f"piece_size must be 1 or more, not {piece_size}")
        self.handler = handler
        self.piece_size = piece_size
        self.name = name
        self.translate = translate
        self.requests: list[MockRequest] = []

    def __repr__(self) -> str:
        return f"MockTransport({self.handler!r}, name={self.name!r})"

    def load(self, client: Mapping[str, Any]) -> None:
        """Nothing to load."""

    def _answer(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        attempt: int,
        stream: bool,
        start: float,
    ) -> LMResponse:
        request = MockRequest(
            model=model,
            messages=tuple(messages),
            params=MappingProxyType(dict(params)),
            client=client if isinstance(client, ClientSettings) else ClientSettings(client),
            attempt=attempt,
            stream=stream,
        )
        self.requests.append(request)
        reply = self.handler(request)
        latency = time.perf_counter() - start
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, LMResponse):
            return replace(reply, latency=latency)
        if isinstance(reply, str):
            return LMResponse((Completion(reply, "stop"),), model=model, latency=latency)
        if isinstance(reply, Mapping):
            return _http.to_response(reply, model, self.name, latency, attempt)
        raise ConfigurationError(
            "a MockTransport handler returns an LMResponse, a str, a chat.completion dict or "
            f"an exception, not a {type(reply).__name__}"
        )

    def send(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        timeout: float,
        start: float,
        attempt: int,
    ) -> LMResponse:
        """The handler's answer to one request."""
        return self._answer(model, messages, params, client, attempt, False, start)

    async def asend(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        timeout: float,
        start: float,
        attempt: int,
    ) -> LMResponse:
        """Async form of `send` (the handler itself is called as it is: synchronously)."""
        return self._answer(model, messages, params, client, attempt, False, start)

    def stream(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        timeout: float,
        attempt: int,
    ) -> Generator[StreamPiece | StreamAssembler, None, None]:
        """The handler's answer as a stream: text pieces, then the assembler."""
        response = self._answer(model, messages, params, client, attempt, True, time.perf_counter())
        assembler = StreamAssembler(model, self.name)
        for chunk in _chunks(response, self.piece_size):
            new = assembler.feed_chunk(chunk)
            if assembler.pieces:  # rare: reasoning, calls, logprobs
                yield from assembler.handed(new)
            elif new:
                yield new
        assembler.done = True
        yield assembler

    async def astream(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        timeout: float,
        attempt: int,
    ) -> AsyncGenerator[StreamPiece | StreamAssembler, None]:
        """Async form of `stream`."""
        for item in self.stream(model, messages, params, client, timeout, attempt):
            yield item

    def translate_error(
        self,
        exc: BaseException,
        model: str,
        attempt: int,
        *,
        secrets: Sequence[str] = (),
        key_given: bool = False,
    ) -> LMError | None:
        """``translate=``'s error, else timeouts and connection errors; else None."""
        if self.translate is not None:
            return self.translate(exc, model, attempt)
        if isinstance(exc, TimeoutError):
            cls: type[LMError] = LMTimeoutError
        elif isinstance(exc, ConnectionError):
            cls = LMConnectionError
        else:
            return None
        return lm_error(
            cls,
            model=model,
            provider=self.name,
            attempts=attempt,
            detail=f"{type(exc).__name__}: {exc}",
            secrets=secrets,
        )


def _chunks(response: LMResponse, piece_size: int) -> list[dict[str, Any]]:
    """``response`` as the ``chat.completion.chunk`` objects a provider would stream."""
    chunks: list[dict[str, Any]] = []
    for index, completion in enumerate(response.completions):
        if completion.reasoning:
            delta: dict[str, Any] = {"reasoning_content": completion.reasoning}
            chunks.append({"choices": [{"index": index, "delta": delta}]})
        text = completion.text
        size = piece_size if index == 0 else max(len(text), 1)
        pieces = [text[at : at + size] for at in range(0, len(text), size)] or [""]
        for piece in pieces:
            chunks.append({"choices": [{"index": index, "delta": {"content": piece}}]})
        for position, call in enumerate(completion.tool_calls or ()):
            delta = {"tool_calls": [{**dict(call), "index": position}]}
            chunks.append({"choices": [{"index": index, "delta": delta}]})
        end: dict[str, Any] = {"index": index, "delta": {}}
        if completion.finish_reason:
            end["finish_reason"] = completion.finish_reason
        chunks.append({"choices": [end]})
    if response.usage != Usage():
        chunks.append({"choices": [], "usage": response.usage.as_openai()})
    return chunks
