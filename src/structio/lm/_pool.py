"""The direct transport's pooled httpx clients, and what httpx logs of their requests.

One `httpx.Client` per proxy and TLS setting for the process, one `httpx.AsyncClient` per
event loop and setting (httpx's connections belong to the loop that opened them), each
closed at exit or with its loop. httpx is imported when the first client is made.

httpx logs each request it sends at INFO, its URL whole (``HTTP Request: POST <url>
"HTTP/1.1 200 OK"``), so the user, password and query values of an API base (credentials,
by the one secret rule: `structio._util.secrets.public_url`) would reach every program that
logs at INFO. A request sent through `opened` (`aopened`), or inside `hidden`, has the
credentials of its address replaced in httpx's records by a filter on httpx's logger; the
requests of the rest of the program are logged as httpx logs them. litellm's logger, which
logs a request's ``api_base`` at DEBUG, gets the same filter.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from structio._util.secrets import redact, secret_values

if TYPE_CHECKING:
    import asyncio

    import httpx

__all__ = ["aclient", "address_secrets", "aopened", "client", "hidden", "opened"]

# -- what httpx logs -------------------------------------------------------------------------------

# The credentials of the address being sent to, while this transport sends (never longer:
# a generator that yields inside a request does not hold them).
_URL_SECRETS: ContextVar[Sequence[str]] = ContextVar("structio_url_secrets", default=())


class _HideURLSecrets(logging.Filter):
    """Replace the credentials of the address being sent to in httpx's records."""

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
    http: httpx.Client, request: httpx.Request, secrets: Sequence[str]
) -> Iterator[httpx.Response]:
    """``request`` sent, its response streamed (as ``http.stream`` does), then closed.

    ``secrets`` (the credentials of its address) are hidden from what httpx logs of it.
    """
    with hidden(secrets):
        response = http.send(request, stream=True)
    try:
        yield response
    finally:
        response.close()


@contextlib.asynccontextmanager
async def aopened(
    http: httpx.AsyncClient, request: httpx.Request, secrets: Sequence[str]
) -> AsyncIterator[httpx.Response]:
    """Async form of `opened`."""
    with hidden(secrets):
        response = await http.send(request, stream=True)
    try:
        yield response
    finally:
        await response.aclose()


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
                if not _CLIENTS:
                    atexit.register(_close_clients)
                _CLIENTS[key] = found
    return found


def _close_clients() -> None:
    with _LOCK:
        for found in _CLIENTS.values():
            found.close()
        _CLIENTS.clear()


async def aclient(
    key: tuple[Any, ...], make: Callable[[], httpx.AsyncClient] | None = None
) -> httpx.AsyncClient:
    """The running event loop's async client for ``key``, made on first use (see `client`)."""
    import asyncio

    loop = asyncio.get_running_loop()
    clients = _ASYNC_CLIENTS.get(loop)
    if clients is None:
        clients = _ASYNC_CLIENTS.setdefault(loop, {})
    entry = clients.get(key)
    if entry is None:
        import httpx

        _watch_httpx_log()
        if make is None:
            proxy, verify = key
            made = httpx.AsyncClient(limits=_limits(), proxy=proxy, verify=verify)
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
    made: httpx.AsyncClient, loop: asyncio.AbstractEventLoop, key: tuple[Any, ...]
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
