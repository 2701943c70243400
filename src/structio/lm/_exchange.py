"""One request over the pooled HTTP client, for any provider API: the seam of direct transports.

`HTTPTransport` carries requests of one `WireAPI` (how a provider's request is written and
its answer read) over the pooled HTTP clients of `structio.lm._pool` (httpx for sync
requests, aiohttp for async ones: `structio.lm._pool` says why): timeouts, the
response bound (`MAX_RESPONSE_BYTES`), redirects refused, server-sent event streams, and
failures translated into structio's error tree (`translate_error`). The APIs live beside
it: chat completions (`structio.lm._http`), OpenAI's Responses API, Anthropic's Messages
API and Gemini's ``generateContent``.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import AsyncGenerator, Generator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, overload

from structio.exceptions import (
    ContextWindowExceededError,
    LMConnectionError,
    LMError,
    LMTimeoutError,
    ServerError,
)
from structio.lm import _pool
from structio.lm._errors import (
    body_detail,
    context_exceeded_text,
    lm_error,
    redirect_detail,
    request_url,
    retry_after,
    status_error_class,
)
from structio.lm._stream import StreamAssembler

if TYPE_CHECKING:
    import httpx

    from structio.lm.types import LMResponse, StreamPiece

__all__ = [
    "MAX_RESPONSE_BYTES",
    "Endpoint",
    "HTTPStatusError",
    "HTTPTransport",
    "WireAPI",
    "client_key",
    "joined",
    "load",
    "replayable",
    "translate_error",
]

#: The most bytes of one response read, after decompression (a body, or a whole stream):
#: a completion is kilobytes; past this, a server (or a gzip bomb) is refused, not buffered.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


class Endpoint(NamedTuple):
    """Where one request goes: the URL, the headers and the model name in the body.

    ``base`` is the API base the URL was made from (other paths of the API are `joined` to
    it); ``secrets`` are the credentials it carries in its address (user, password, query
    values), hidden from what httpx logs of a request (`structio.lm._pool.hidden`).
    """

    url: str
    headers: dict[str, str]
    model: str
    provider: str
    client_key: tuple[Any, ...]
    base: str = ""
    secrets: tuple[str, ...] = ()


def joined(base: str, path: str, query: str = "") -> str:
    """``base`` with ``path`` added to its path, its query (if any) kept after them.

    An API base may carry a query (``https://host/v1?key=...``): the path goes before it,
    not into it. A fragment is never sent, so it is dropped.
    """
    if "?" not in base and "#" not in base:
        return f"{base}{path}?{query}" if query else f"{base}{path}"
    parts = urllib.parse.urlsplit(base)
    merged = "&".join(part for part in (parts.query, query) if part)
    return urllib.parse.urlunsplit(
        (parts.scheme, parts.netloc, parts.path.rstrip("/") + path, merged, "")
    )


def client_key(client: Mapping[str, Any]) -> tuple[Any, ...]:
    """Which pooled client serves requests with these settings: one per proxy and TLS setting."""
    return (client.get("proxy"), client.get("verify", True))


def load(client: Mapping[str, Any]) -> None:
    """Import httpx and open the client requests with these settings use (once: then free)."""
    _pool.client(client_key(client))


# -- requests -----------------------------------------------------------------------------------


def replayable(messages: list[dict[str, Any]], rename: str | None = None) -> list[dict[str, Any]]:
    """The messages without their ``reasoning_items`` (or with them under ``rename``).

    An assistant message may carry the provider's own reasoning blocks of an earlier reply
    (`structio.lm.types.Completion.reasoning_items`); the APIs that replay them read the key,
    the others must never send it. The list is returned as it is when no message has one.
    """
    if not any("reasoning_items" in message for message in messages):
        return messages
    kept: list[dict[str, Any]] = []
    for message in messages:
        if "reasoning_items" in message:
            message = dict(message)
            items = message.pop("reasoning_items")
            if rename is not None and items:
                message[rename] = items
        kept.append(message)
    return kept


class HTTPStatusError(Exception):
    """A response that is not a completion: its status, text and headers, to translate."""

    def __init__(self, status: int | None, text: str, headers: Mapping[str, str]) -> None:
        super().__init__(f"HTTP {status}: {text}" if status else text)
        self.status = status
        self.text = text
        self.headers = dict(headers)


def _encode(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


@overload
def _post(
    http: httpx.Client, point: Endpoint, body: dict[str, Any], timeout: float
) -> httpx.Request: ...


@overload
def _post(
    http: _pool.AsyncHTTP, point: Endpoint, body: dict[str, Any], timeout: float
) -> _pool.Request: ...


def _post(
    http: httpx.Client | _pool.AsyncHTTP, point: Endpoint, body: dict[str, Any], timeout: float
) -> httpx.Request | _pool.Request:
    """The request of one call: ``body`` posted to ``point``."""
    return http.build_request(
        "POST", point.url, content=_encode(body), headers=point.headers, timeout=timeout
    )


class WireAPI(Protocol):
    """One provider API spoken over the pooled HTTP client: a public seam of `HTTPTransport`.

    The transport does the HTTP (pooled clients, timeouts, the response bound, redirects
    refused, errors translated); an API only writes a request and reads its answer. Every
    API takes the messages and parameters in OpenAI's chat-completions shape (what the
    adapters write) and answers in it (`LMResponse`, OpenAI-style tool calls), so an
    adapter never knows which API carried its request. Built in: `CHAT` (OpenAI's chat
    completions and every compatible server), and in their own modules OpenAI's Responses
    API, Anthropic's Messages API and Gemini's ``generateContent``.
    """

    def provider(self, model: str) -> str:
        """The provider's name, as errors and usage say it (``"openai"``, ``"anthropic"``)."""
        ...

    def endpoint(self, model: str, client: Mapping[str, Any], *, stream: bool) -> Endpoint:
        """Where a request goes (URL, headers, the model name the provider knows).

        Raises:
            AuthenticationError: The provider needs a key and none is set.
            ConfigurationError: The address cannot be made.
        """
        ...

    def body(
        self,
        point: Endpoint,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        *,
        stream: bool,
    ) -> dict[str, Any]:
        """The JSON body of a request (``stream``: a streamed one).

        Raises:
            ConfigurationError: A parameter the provider does not support, named with the
                model, before anything is sent.
        """
        ...

    def response(
        self, data: Mapping[str, Any], model: str, provider: str, latency: float, attempts: int
    ) -> LMResponse:
        """A response body as an `LMResponse` (no completion: `structio.ServerError`)."""
        ...

    def assembler(self, model: str, provider: str) -> StreamAssembler:
        """What reads a streamed response's lines (``feed_line``) into the whole response."""
        ...


def _exchange_sync(
    api: WireAPI,
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    timeout: float,
    start: float,
    attempt: int,
) -> LMResponse:
    at = time.monotonic() + timeout
    point = api.endpoint(model, client, stream=False)
    body = api.body(point, messages, params, client, stream=False)
    http = _pool.client(point.client_key)
    request = _post(http, point, body, timeout)
    with _pool.opened(http, request, point.secrets, at) as response:
        content = _bounded(response.iter_bytes(), response, _Clock(at, timeout, point.url))
    return _read(api, response, content, model, point.provider, start, attempt)


async def _exchange_async(
    api: WireAPI,
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    timeout: float,
    start: float,
    attempt: int,
) -> LMResponse:
    at = time.monotonic() + timeout
    point = api.endpoint(model, client, stream=False)
    clock = _Clock(at, timeout, point.url)
    body = api.body(point, messages, params, client, stream=False)
    http = await _pool.aclient(point.client_key)
    async with _pool.aopened(http, _post(http, point, body, timeout), point.secrets) as response:
        content = await _abounded(response, clock)
    return _read(api, response, content, model, point.provider, start, attempt)


def _stream_sync(
    api: WireAPI,
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    timeout: float,
) -> Generator[StreamPiece | StreamAssembler, None, None]:
    at = time.monotonic() + timeout
    point = api.endpoint(model, client, stream=True)
    clock = _Clock(at, timeout, point.url)
    body = api.body(point, messages, params, client, stream=True)
    http = _pool.client(point.client_key)
    with _pool.opened(http, _post(http, point, body, timeout), point.secrets, at) as response:
        if response.status_code != 200:
            text = _bounded(response.iter_bytes(), response, clock).decode(errors="replace")
            raise HTTPStatusError(response.status_code, text, response.headers)
        assembler = api.assembler(model, point.provider)
        size = 0
        for line in response.iter_lines():
            size += len(line) + 1
            if size > MAX_RESPONSE_BYTES:
                raise _too_large(response)
            clock.check()
            new = assembler.feed_line(line)
            if assembler.pieces:  # rare: reasoning, calls, logprobs
                yield from assembler.handed(new)
            elif new:
                yield new
    yield assembler


async def _stream_async(
    api: WireAPI,
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    timeout: float,
) -> AsyncGenerator[StreamPiece | StreamAssembler, None]:
    at = time.monotonic() + timeout
    point = api.endpoint(model, client, stream=True)
    clock = _Clock(at, timeout, point.url)
    body = api.body(point, messages, params, client, stream=True)
    http = await _pool.aclient(point.client_key)
    async with _pool.aopened(http, _post(http, point, body, timeout), point.secrets) as response:
        if response.status_code != 200:
            text = (await _abounded(response, clock)).decode(errors="replace")
            raise HTTPStatusError(response.status_code, text, response.headers)
        assembler = api.assembler(model, point.provider)
        size = 0
        async for line in response.aiter_lines():
            size += len(line) + 1
            if size > MAX_RESPONSE_BYTES:
                raise _too_large(response)
            clock.check()
            new = assembler.feed_line(line)
            if assembler.pieces:
                for piece in assembler.handed(new):
                    yield piece
            elif new:
                yield new
    yield assembler


class _Clock(NamedTuple):
    """The deadline of one attempt: ``timeout`` seconds from its start, ``at`` (monotonic).

    A read never waits past it (httpx: `structio.lm._pool.Deadline`; aiohttp: its total
    timeout), but a server that keeps sending (keep-alive comments, a byte at a time) is
    answered by every read: the loops that read look at the clock too (`check`).
    """

    at: float
    timeout: float
    url: str

    def check(self) -> None:
        """Raise the attempt's timeout if its deadline has passed."""
        if time.monotonic() > self.at:
            raise _pool.deadline_passed(self.url, self.timeout)


def _bounded(
    pieces: Iterable[bytes], response: httpx.Response | _pool.AsyncResponse, clock: _Clock
) -> bytes:
    """The decompressed body, read piece by piece up to `MAX_RESPONSE_BYTES`, by the deadline."""
    read: list[bytes] = []
    size = 0
    for piece in pieces:
        size += len(piece)
        if size > MAX_RESPONSE_BYTES:
            raise _too_large(response)
        clock.check()
        read.append(piece)
    return b"".join(read)


async def _abounded(response: _pool.AsyncResponse, clock: _Clock) -> bytes:
    """Async form of `_bounded`, over the response's decompressed bytes."""
    read: list[bytes] = []
    size = 0
    async for piece in response.aiter_bytes():
        size += len(piece)
        if size > MAX_RESPONSE_BYTES:
            raise _too_large(response)
        clock.check()
        read.append(piece)
    return b"".join(read)


def _too_large(response: httpx.Response | _pool.AsyncResponse) -> HTTPStatusError:
    return HTTPStatusError(
        None,
        f"the response passed {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB (decompressed) and "
        "was not read further: no completion is that large (a misbehaving server, or a "
        "compressed body that expands without bound)",
        response.headers,
    )


def _read(
    api: WireAPI,
    response: httpx.Response | _pool.AsyncResponse,
    content: bytes,
    model: str,
    provider: str,
    start: float,
    attempt: int,
) -> LMResponse:
    text = content.decode(errors="replace")
    if response.status_code != 200:
        raise HTTPStatusError(response.status_code, text, response.headers)
    try:
        data = json.loads(content)
    except ValueError:
        raise HTTPStatusError(None, f"the response is not JSON: {text[:2000]}", {}) from None
    if not isinstance(data, dict):
        raise HTTPStatusError(None, f"the response is not a JSON object: {text[:2000]}", {})
    try:
        return api.response(data, model, provider, time.perf_counter() - start, attempt)
    except LMError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        # A body of the wrong shape ({"choices": 5}) is the server's fault, in our tree.
        raise HTTPStatusError(
            None, f"the response is not of the API's shape ({exc}): {text[:2000]}", {}
        ) from None


def translate_error(
    exc: BaseException,
    model: str,
    attempts: int,
    *,
    secrets: Sequence[str] = (),
    key_given: bool = False,
    provider: str,
) -> LMError | None:
    """A failure of a request over the pooled client in structio's tree; None if not one.

    ``key_given`` is unused here: a missing key is refused before any request is sent.
    ``provider`` names the provider in the message.
    """
    common: dict[str, Any] = {
        "model": model,
        "provider": provider,
        "attempts": attempts,
        "secrets": secrets,
    }
    if isinstance(exc, HTTPStatusError):
        detail, code = body_detail(exc.text, exc.status)
        status = exc.status
        if status is not None and 300 <= status < 400:  # redirects are never followed
            detail = redirect_detail(status, exc.headers)
        cls: type[LMError] = status_error_class(status) if status else ServerError
        if status in (400, 413, 422) and (
            code == "context_length_exceeded" or context_exceeded_text(detail)
        ):
            cls = ContextWindowExceededError
        return lm_error(
            cls,
            detail=detail,
            status=status,
            retry_after=retry_after(exc.headers),
            **common,
        )
    if isinstance(exc, _pool.RequestFailedError):  # an async request (aiohttp) that got no response
        cls = LMTimeoutError if exc.timeout else LMConnectionError
        return lm_error(cls, detail=str(exc), url=exc.url, **common)
    module = type(exc).__module__
    if not module.startswith(("httpx", "httpcore")):
        return None
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return lm_error(LMTimeoutError, detail=_exception_text(exc), url=request_url(exc), **common)
    if isinstance(exc, httpx.TransportError):
        return lm_error(
            LMConnectionError, detail=_exception_text(exc), url=request_url(exc), **common
        )
    return lm_error(ServerError, detail=_exception_text(exc), what="the provider failed", **common)


def _exception_text(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text


class HTTPTransport:
    """A transport that speaks a `WireAPI` over the pooled HTTP client: a public seam.

    Everything a request needs besides the API's own shape is here, once for every API:
    the pooled sync and async clients, timeouts, the response bound, redirects refused,
    server-sent event streams, errors in structio's tree. `wire` says which API serves a
    model and its settings; a subclass with its own `WireAPI` is a new provider.

    Attributes:
        name: The name it is registered under.
    """

    name = "http"

    def __init__(self, api: WireAPI, name: str | None = None) -> None:
        self.api = api
        if name is not None:
            self.name = name

    def wire(self, model: str, client: Mapping[str, Any]) -> WireAPI:
        """The API that serves ``model`` with these client settings."""
        return self.api

    def load(self, client: Mapping[str, Any]) -> None:
        """Import httpx and open the pooled (sync) client of these settings."""
        load(client)

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
        """Make one request and read its response (raising what `translate_error` reads)."""
        api = self.wire(model, client)
        return _exchange_sync(api, model, messages, params, client, timeout, start, attempt)

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
        """Async form of `send`."""
        api = self.wire(model, client)
        return await _exchange_async(api, model, messages, params, client, timeout, start, attempt)

    def stream(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        timeout: float,
        attempt: int = 1,
    ) -> Generator[StreamPiece | StreamAssembler, None, None]:
        """One streamed request: the first choice's new text as it comes, then the assembler."""
        return _stream_sync(self.wire(model, client), model, messages, params, client, timeout)

    def astream(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        timeout: float,
        attempt: int = 1,
    ) -> AsyncGenerator[StreamPiece | StreamAssembler, None]:
        """Async form of `stream`."""
        return _stream_async(self.wire(model, client), model, messages, params, client, timeout)

    def translate_error(
        self,
        exc: BaseException,
        model: str,
        attempts: int,
        *,
        secrets: Sequence[str] = (),
        key_given: bool = False,
    ) -> LMError | None:
        """A failure of a request as structio's error, naming the API's provider."""
        return translate_error(
            exc, model, attempts, secrets=secrets, provider=self.api.provider(model)
        )
