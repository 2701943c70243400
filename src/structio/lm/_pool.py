"""The direct transport's pooled HTTP clients, and what is logged of their requests.

One `httpx.Client` per proxy and TLS setting for the process (sync requests), one
`AsyncHTTP` (an ``aiohttp.ClientSession``) per event loop and setting (async requests: a
connection belongs to the loop that opened it), each closed at exit or with its loop.
The library is imported when the first client is made.

Why aiohttp for async requests (``benchmarks/async_clients.py``: 50 ms server, the pool
sized as here; 2 shared cores): at concurrency 64 and 256, ``httpx.AsyncClient`` spends
7-9 ms of CPU per request and serves 85-110 requests/s, ``httpx2.AsyncClient`` (the fork
the openai SDK moved to) 2.6-3.5 ms and 270-330/s, ``aiohttp`` 0.22-0.28 ms and
1,150-2,400/s. httpcore's pool, httpcore2's too, scans every connection for every queued
request (encode/httpcore#1035); aiohttp's connector takes an idle connection from a list
and parses HTTP in C. aiohttp is no extra install either: litellm depends on it. Sync
requests stay on httpx (aiohttp has no sync client; httpx's sync pool is cheap per call).
`AsyncHTTP` keeps what the transports use of httpx's interface (``build_request``,
``send``; a response's ``status_code``, ``headers``, ``aiter_bytes``, ``aiter_lines``,
``aread``, ``aclose``) and httpx's behaviour: redirects never followed, the same TLS
context (`verify`), proxies given or from the environment, credentials in the address
sent as Basic authorization, failures below HTTP raised as `RequestFailedError`.

httpx logs each request it sends at INFO, its URL whole (``HTTP Request: POST <url>
"HTTP/1.1 200 OK"``), so the user, password and query values of an API base (credentials,
by the one secret rule: `structio._util.secrets.public_url`) would reach every program that
logs at INFO. A request sent through `opened`, or inside `hidden`, has the credentials of
its address replaced in httpx's records by a filter on httpx's logger; the requests of the
rest of the program are logged as httpx logs them. litellm's logger, which logs a
request's ``api_base`` at DEBUG, gets the same filter. An async request (`aopened`) is
logged alike, by structio, on the ``structio.http`` logger, its credentials replaced.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
import weakref
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterator,
    Mapping,
    Sequence,
)
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, overload

from structio._util.secrets import redact, secret_values

if TYPE_CHECKING:
    import asyncio
    import logging
    import ssl

    import aiohttp
    import httpx

__all__ = [
    "AsyncHTTP",
    "AsyncResponse",
    "RequestFailedError",
    "Deadline",
    "aclient",
    "address_secrets",
    "aopened",
    "client",
    "deadline",
    "deadline_passed",
    "hidden",
    "opened",
    "until",
    "within",
]

_T = TypeVar("_T")

# -- what httpx logs -------------------------------------------------------------------------------

# The credentials of the address being sent to, while this transport sends (never longer:
# a generator that yields inside a request does not hold them).
_URL_SECRETS: ContextVar[Sequence[str]] = ContextVar("structio_url_secrets", default=())


class _HideURLSecrets:
    """Replace the credentials of the address being sent to in httpx's records.

    A filter by duck typing (`logging.Filterer` calls any object's ``filter``), so that
    ``import structio`` does not import `logging`.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = _URL_SECRETS.get()
        if secrets:
            try:
                text = record.getMessage()
            except Exception:  # a record that cannot be formatted: logging reports it
                return True
            clean = redact(text, secrets)
            if clean != text:
                record.msg, record.args = clean, ()
        return True


_FILTER = _HideURLSecrets()


def _watch_httpx_log() -> None:
    """Put the filter on httpx's and litellm's loggers, once (it costs nothing when idle).

    litellm logs a request's ``api_base`` whole at DEBUG (1.83 does), as httpx logs its URL.
    """
    import logging

    for name in ("httpx", "LiteLLM"):
        found = logging.getLogger(name)
        if _FILTER not in found.filters:
            found.addFilter(_FILTER)


def address_secrets(settings: Mapping[str, Any]) -> tuple[str, ...]:
    """The credentials in the address of these settings (``api_base`` or ``base_url``).

    Its user, password and query values (see `structio._util.secrets.public_url`).
    """
    base = str(settings.get("api_base") or settings.get("base_url") or "")
    return tuple(secret_values({"api_base": base})) if "@" in base or "?" in base else ()


@contextlib.contextmanager
def hidden(secrets: Sequence[str]) -> Iterator[None]:
    """While inside, ``secrets`` are replaced in what httpx logs (in this thread or task).

    Only around the sending of a request: the context of a generator that yields inside
    would hold them for its caller.
    """
    if not secrets:
        yield
        return
    _watch_httpx_log()  # also for a request litellm sends over a client of its own
    token = _URL_SECRETS.set(secrets)
    try:
        yield
    finally:
        _URL_SECRETS.reset(token)


@contextlib.contextmanager
def opened(
    http: httpx.Client, request: httpx.Request, secrets: Sequence[str], at: float | None = None
) -> Iterator[httpx.Response]:
    """``request`` sent, its response streamed (as ``http.stream`` does), then closed.

    ``secrets`` (the credentials of its address) are hidden from what httpx logs of it;
    every connect and read of it ends by ``at`` (`until`), that of its body too.
    """
    with hidden(secrets), until(at):
        response = http.send(request, stream=True)
    try:
        yield response
    finally:
        response.close()


@contextlib.asynccontextmanager
async def aopened(
    http: AsyncHTTP, request: Request, secrets: Sequence[str]
) -> AsyncIterator[AsyncResponse]:
    """Async form of `opened`, over the pooled `AsyncHTTP` client.

    The request is logged as httpx logs one (``HTTP Request: POST <url> "HTTP/1.1 200
    OK"``, INFO), on the ``structio.http`` logger, ``secrets`` replaced.
    """
    response = await http.send(request, stream=True)
    log = _http_log()
    if log.isEnabledFor(_INFO):
        status = f"{response.status_code} {response.reason_phrase}"
        line = f'HTTP Request: {request.method} {request.url} "HTTP/1.1 {status}"'
        log.info(redact(line, secrets) if secrets else line)
    try:
        yield response
    finally:
        await response.aclose()


_INFO = 20  # logging.INFO, without importing logging


@functools.cache
def _http_log() -> logging.Logger:
    """The ``structio.http`` logger (`logging` is imported at the first async request)."""
    import logging

    return logging.getLogger("structio.http")


# -- the deadline of an attempt --------------------------------------------------------------------

# The least wait a read is given once the deadline is near or past: zero would make httpcore's
# socket non-blocking, and a read with nothing to read would then fail as a broken connection
# (``BlockingIOError``), not as the timeout it is.
_LEAST = 0.001

# The deadline (``time.monotonic()``) of the attempt this thread or task is sending, for the
# requests that litellm sends over a pooled client (`until`).
_DEADLINE: ContextVar[float | None] = ContextVar("structio_deadline", default=None)


class Deadline(dict[str, Any]):
    """httpx's timeouts of one request (``connect``, ``read``, ``write``...) cut to a deadline.

    httpx has no timeout for a whole request: each read may wait ``timeout`` anew, so a server
    that sends a byte (or an SSE keep-alive comment) a second holds a request for ever. httpcore
    reads a request's ``"timeout"`` extension (this dict) before every connect, write and read:
    each is given the time left before ``at`` (a ``time.monotonic()`` reading) where that is
    less. A copy of it is a plain dict, with the timeouts as given.
    """

    def __init__(self, timeouts: Mapping[str, Any], at: float) -> None:
        super().__init__(timeouts)
        self.at = at

    def get(self, key: str, default: Any = None) -> Any:
        """The timeout ``key``, or the time left before the deadline if that is less."""
        left = max(self.at - time.monotonic(), _LEAST)
        value = super().get(key, default)
        return left if value is None else min(float(value), left)


def _cut(request: httpx.Request) -> None:
    """A request hook of every pooled httpx client: its timeouts cut to the deadline, if any."""
    at = _DEADLINE.get()
    if at is not None:
        request.extensions["timeout"] = Deadline(request.extensions.get("timeout") or {}, at)


def _timed(response: httpx.Response) -> None:
    """A response hook of every pooled httpx client: its body read by the deadline, if any.

    httpcore gives a body's reads the read timeout left when the body began (`Deadline`),
    each read anew: a server that sends a byte (or a keep-alive comment) now and then is
    never late for one. Each piece read is checked against the clock instead.
    """
    at = _DEADLINE.get()
    if at is not None:
        response.stream = _timed_stream()(response.stream, at, response.request)


@functools.cache
def _timed_stream() -> Callable[[Any, float, httpx.Request], httpx.SyncByteStream]:
    """The class of a response's byte stream that raises ``httpx.ReadTimeout`` past ``at``.

    Made on first use: httpx is imported with the first client, not with this module.
    """
    import httpx

    class TimedStream(httpx.SyncByteStream):
        def __init__(self, stream: Any, at: float, request: httpx.Request) -> None:
            self.stream = stream
            self.at = at
            self.request = request

        def __iter__(self) -> Iterator[bytes]:
            for piece in self.stream:
                if time.monotonic() > self.at:
                    raise httpx.ReadTimeout(_LATE, request=self.request)
                yield piece

        def close(self) -> None:
            self.stream.close()

    return TimedStream


_LATE = "the attempt took longer than its timeout (connecting, the headers and the whole body)"


@contextlib.contextmanager
def until(at: float | None) -> Iterator[None]:
    """While inside, requests sent over a pooled httpx client end by ``at`` (monotonic).

    Their connect, writes and reads, the body's too, wherever it is read later: the deadline
    travels with each request (`Deadline`). Only around the sending of a request, as `hidden`.
    """
    if at is None:
        yield
        return
    token = _DEADLINE.set(at)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def deadline(timeout: Any) -> float | None:
    """When an attempt of ``timeout`` seconds begun now must end (``time.monotonic()``).

    None when ``timeout`` is not a number of seconds (an ``httpx.Timeout`` given to litellm as
    a call parameter is litellm's to apply, read by read).
    """
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
        return time.monotonic() + timeout
    return None


async def within(awaitable: Awaitable[_T], at: float | None, late: Callable[[], Exception]) -> _T:
    """``awaitable`` awaited, cancelled at ``at`` (monotonic) with the error ``late`` makes.

    Around one wait only, never across a ``yield``: the caller's own code is not cancelled.
    """
    if at is None:
        return await awaitable
    import asyncio

    try:
        return await asyncio.wait_for(awaitable, max(at - time.monotonic(), 0.0))
    except asyncio.TimeoutError:
        raise late() from None


def deadline_passed(url: str, timeout: float) -> RequestFailedError:
    """The timeout of an attempt that was still reading when its ``timeout`` seconds ran out."""
    return RequestFailedError(
        f"the attempt took longer than its timeout of {timeout:g} s (connecting, the "
        "headers and the whole body or stream)",
        timeout=True,
        url=_public(url),
    )


# -- the clients -----------------------------------------------------------------------------------

_LOCK = threading.Lock()
_CLIENTS: dict[tuple[Any, ...], httpx.Client] = {}
# One async client per event loop: httpx's connections belong to the loop that opened them.
_ASYNC_CLIENTS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[Any, ...], tuple[httpx.AsyncClient, Any]]
] = weakref.WeakKeyDictionary()


def _limits() -> httpx.Limits:
    import httpx

    # Keep-alive for a whole batch's worth of workers: closing and reopening connections
    # costs more CPU than the request itself.
    return httpx.Limits(max_connections=None, max_keepalive_connections=256)


def client(key: tuple[Any, ...], make: Callable[[], httpx.Client] | None = None) -> httpx.Client:
    """The process's client for ``key`` (``(proxy, verify)``), made on first use.

    The litellm transport keeps its own clients here too (`structio.lm._litellm_guard`),
    under keys of another shape and made by its ``make``, so that every pooled client is
    opened and closed alike.
    """
    found = _CLIENTS.get(key)
    if found is None:
        with _LOCK:
            found = _CLIENTS.get(key)
            if found is None:
                import atexit

                import httpx

                _watch_httpx_log()
                if make is None:
                    proxy, verify = key
                    found = httpx.Client(limits=_limits(), proxy=proxy, verify=verify)
                else:
                    found = make()
                found.event_hooks["request"].append(_cut)
                found.event_hooks["response"].append(_timed)
                if not _CLIENTS:
                    atexit.register(_close_clients)
                _CLIENTS[key] = found
    return found


def _close_clients() -> None:
    with _LOCK:
        for found in _CLIENTS.values():
            found.close()
        _CLIENTS.clear()


@overload
async def aclient(key: tuple[Any, ...]) -> AsyncHTTP: ...


@overload
async def aclient(key: tuple[Any, ...], make: Callable[[], _T]) -> _T: ...


async def aclient(key: tuple[Any, ...], make: Callable[[], Any] | None = None) -> Any:
    """The running event loop's async client for ``key``, made on first use (see `client`).

    Without ``make``, an `AsyncHTTP` for ``key`` (``(proxy, verify)``); with it, what it
    makes (the litellm transport's httpx clients), closed with the loop alike (``aclose``).
    """
    import asyncio

    loop = asyncio.get_running_loop()
    clients = _ASYNC_CLIENTS.get(loop)
    if clients is None:
        clients = _ASYNC_CLIENTS.setdefault(loop, {})
    entry = clients.get(key)
    if entry is None:
        _watch_httpx_log()
        if make is None:
            proxy, verify = key
            made: Any = AsyncHTTP(proxy, verify)
        else:
            made = make()
        # asyncio.run() closes every async generator still open before it closes the loop:
        # this one closes the client then, so no connection outlives its loop unclosed.
        keeper = _close_with_loop(made, loop, key)
        await keeper.__anext__()
        entry = clients.setdefault(key, (made, keeper))
        if entry[0] is not made:  # another task made one meanwhile
            await keeper.aclose()
    return entry[0]


async def _close_with_loop(
    made: Any, loop: asyncio.AbstractEventLoop, key: tuple[Any, ...]
) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await made.aclose()
        # The entry refers to the loop (through this generator): dropping it lets both go.
        clients = _ASYNC_CLIENTS.get(loop)
        if clients is not None and clients.get(key, (None,))[0] is made:
            del clients[key]
            if not clients:
                _ASYNC_CLIENTS.pop(loop, None)


# -- the async client ------------------------------------------------------------------------------


class RequestFailedError(Exception):
    """An async request that got no whole HTTP response: a timeout or a connection failure.

    Attributes:
        timeout: Whether it timed out (connecting, or waiting for the next bytes).
        url: The request's address without user, password or query.
    """

    def __init__(self, text: str, *, timeout: bool, url: str) -> None:
        super().__init__(text)
        self.timeout = timeout
        self.url = url


class Request(NamedTuple):
    """One request of `AsyncHTTP` (as `AsyncHTTP.build_request` makes it)."""

    method: str
    url: str
    content: bytes | None
    headers: Mapping[str, str]
    timeout: float | None


def _public(url: str) -> str:
    """``url`` without user, password, query or fragment (as `structio.lm._errors` shows one)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}{parts.path}"


def _failed(exc: BaseException, url: str) -> RequestFailedError:
    """An aiohttp failure as `RequestFailedError` (a timeout is one of aiohttp's own errors)."""
    import asyncio

    text = str(exc) or type(exc).__name__
    if text != type(exc).__name__:
        text = f"{type(exc).__name__}: {text}"
    timeout = isinstance(exc, asyncio.TimeoutError)
    return RequestFailedError(text, timeout=timeout, url=_public(url))


# TLS contexts by ``verify``, for the process: made as httpx makes them (its CA bundle,
# SSL_CERT_FILE and SSL_CERT_DIR), so that sync and async requests trust the same servers.
_SSL: dict[Any, ssl.SSLContext] = {}


def _ssl_context(verify: Any) -> ssl.SSLContext:
    found = _SSL.get(verify)
    if found is None:
        import httpx

        found = _SSL.setdefault(verify, httpx.create_ssl_context(verify=verify))
    return found


class AsyncHTTP:
    """The pooled async client of one proxy and TLS setting: an ``aiohttp.ClientSession``.

    What the transports use of ``httpx.AsyncClient`` (`build_request`, `send`, `aclose`),
    with httpx's behaviour: redirects never followed, no limit on connections (idle ones
    kept 5 s, as httpx keeps them), cookies not kept (no API needs them; a jar costs CPU
    per request), the proxy given or else the environment's (``HTTPS_PROXY``,
    ``NO_PROXY``...: `proxy`), no ``.netrc`` (httpx reads none either).
    """

    def __init__(self, proxy: str | None, verify: Any) -> None:
        import aiohttp

        self.proxy = proxy
        connector = aiohttp.TCPConnector(
            limit=0, limit_per_host=0, keepalive_timeout=5.0, ssl=_ssl_context(verify)
        )
        # Not trust_env=True: aiohttp would then read the environment's proxies and .netrc
        # in a thread for every request (two executor hand-offs a request: most of its CPU
        # at high concurrency). The environment is read once here instead (`proxy`).
        self.session = aiohttp.ClientSession(
            connector=connector, cookie_jar=aiohttp.DummyCookieJar()
        )
        self._timeouts: dict[float | None, aiohttp.ClientTimeout] = {}
        self._env: dict[str, str] = {} if proxy else _environment_proxies()
        self._proxies: dict[str, str | None] = {}

    def proxy_for(self, url: str) -> str | None:
        """The proxy a request to ``url`` goes through, if any.

        The one given, or else the environment's as httpx reads it (read when the client
        was made): ``<scheme>_proxy`` or ``all_proxy``, unless ``no_proxy`` names the host.
        """
        if self.proxy or not self._env:
            return self.proxy
        scheme, _, rest = url.partition("://")
        origin = rest.split("/", 1)[0].split("?", 1)[0].rpartition("@")[2]
        key = f"{scheme}://{origin}"
        if key not in self._proxies:
            # The standard library's own NO_PROXY rule (what httpx's reading matches); it
            # is public in urllib.request but missing from typeshed's stubs.
            from urllib.request import proxy_bypass_environment  # type: ignore[attr-defined]

            host = origin.rsplit(":", 1)[0] if origin.count(":") == 1 else origin
            bypass = proxy_bypass_environment(host, self._env)
            found = None if bypass else self._env.get(scheme.lower()) or self._env.get("all")
            self._proxies[key] = found
        return self._proxies[key]

    def build_request(
        self,
        method: str,
        url: str,
        *,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> Request:
        """A request to `send` (``timeout``: seconds for all of it, the body read included)."""
        return Request(method, url, content, headers or {}, timeout)

    async def send(self, request: Request, *, stream: bool = True) -> AsyncResponse:
        """Send ``request``; its response, the body unread (``stream`` is always so).

        Raises:
            RequestFailedError: No response came (timeout, refused or broken connection).
        """
        import asyncio

        import aiohttp

        url, headers = request.url, request.headers
        if "@" in url:  # credentials in the address: sent as Basic authorization, as httpx does
            url, headers = _basic(url, headers)
        timeout = self._timeouts.get(request.timeout)
        if timeout is None:
            seconds = request.timeout
            # total: the whole request, connecting to the body's last byte (aiohttp's timer
            # runs on while the body is read): a trickling body or an idle stream ends too.
            timeout = aiohttp.ClientTimeout(
                total=seconds, connect=seconds, sock_connect=seconds, sock_read=seconds
            )
            self._timeouts[request.timeout] = timeout
        try:
            raw = await self.session.request(
                request.method,
                url,
                data=request.content,
                headers=headers,
                timeout=timeout,
                allow_redirects=False,
                proxy=self.proxy_for(url),
            )
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            raise _failed(exc, url) from exc
        return AsyncResponse(raw, url)

    async def aclose(self) -> None:
        """Close every connection."""
        await self.session.close()


def _environment_proxies() -> dict[str, str]:
    """The proxies the environment names (``https_proxy``, ``no_proxy``...), by scheme."""
    from urllib.request import getproxies_environment

    return dict(getproxies_environment())


def _basic(url: str, headers: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """``url`` without its user and password, and ``headers`` with them as Basic authorization.

    As httpx sends them (it replaces an ``Authorization`` header); aiohttp would refuse both.
    """
    import base64
    from urllib.parse import unquote, urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.username is None:
        return url, dict(headers)
    user, password = unquote(parts.username), unquote(parts.password or "")
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    host = parts.netloc.rpartition("@")[2]
    kept = {k: v for k, v in headers.items() if k.lower() != "authorization"}
    kept["Authorization"] = f"Basic {token}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment)), kept


# What ends a line for `str.splitlines` (and so for httpx's ``iter_lines``).
_LINE_ENDS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


class AsyncResponse:
    """A response of `AsyncHTTP`, read as an ``httpx.Response`` is (the parts used here).

    Attributes:
        status_code: The HTTP status.
        reason_phrase: The status's reason (``"OK"``).
        headers: The headers, by lower-case name (repeated ones joined with ``", "``).
    """

    def __init__(self, raw: aiohttp.ClientResponse, url: str) -> None:
        self._raw = raw
        self._url = url
        self.status_code = raw.status
        self.reason_phrase = raw.reason or ""
        headers: dict[str, str] = {}
        for name, value in raw.headers.items():
            name = name.lower()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        self.headers = headers

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body, decompressed, as it comes.

        Raises:
            RequestFailedError: The connection broke or timed out before the body's end.
        """
        import asyncio

        import aiohttp

        try:
            async for piece in self._raw.content.iter_any():
                yield piece
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            # asyncio's own TimeoutError: the request's total time ran out while its body was read.
            raise _failed(exc, self._url) from exc

    async def aiter_lines(self) -> AsyncIterator[str]:
        r"""The body's lines as text (UTF-8), without their ends (``\n``, ``\r\n`` or ``\r``)."""
        import codecs

        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        rest, cr = "", False  # the line begun; whether a "\r" ended the last piece
        async for piece in self.aiter_bytes():
            text = decoder.decode(piece)
            if cr:
                text, cr = "\r" + text, False
            if text.endswith("\r"):  # maybe the first half of "\r\n": wait for the next piece
                text, cr = text[:-1], True
            if not text:
                continue
            text = rest + text
            lines = text.splitlines()
            rest = "" if text[-1] in _LINE_ENDS else lines.pop()
            for line in lines:
                yield line
        for line in (rest + ("\r" if cr else "") + decoder.decode(b"", final=True)).splitlines():
            yield line

    async def aread(self) -> bytes:
        """The whole body."""
        return b"".join([piece async for piece in self.aiter_bytes()])

    async def aclose(self) -> None:
        """Give the connection back to the pool (closed instead if the body was not all read)."""
        self._raw.release()
