"""The pooled async client (aiohttp behind httpx's interface): lines, proxies, failures."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structio as sio
from structio.lm import _pool
from tests.wire.server import OpenAIServer, Reply

MESSAGES = [{"role": "user", "content": "hi"}]


class _Content:
    """What `AsyncResponse` reads of an aiohttp response's body: pieces as they come."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def iter_any(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece


class _Raw:
    """An aiohttp response reduced to what `AsyncResponse` reads."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.status = 200
        self.reason = "OK"
        self.headers = {"Retry-After": "3", "X-Twice": "a"}
        self.content = _Content(pieces)
        self.released = False

    def release(self) -> None:
        self.released = True


def _lines(pieces: list[bytes]) -> list[str]:
    async def read() -> list[str]:
        response = _pool.AsyncResponse(_Raw(pieces), "http://h/")  # type: ignore[arg-type]
        return [line async for line in response.aiter_lines()]

    return asyncio.run(read())


def _cut(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


@settings(deadline=None)  # an event loop per example: slow on a loaded machine
@given(
    st.lists(st.text(alphabet="ab é\u2028", max_size=6), max_size=6),
    st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=6, max_size=6),
    st.lists(st.integers(0, 60), max_size=8),
)
def test_lines_are_those_of_the_whole_body_wherever_the_pieces_are_cut(
    texts: list[str], ends: list[str], cuts: list[int]
) -> None:
    # httpx's iter_lines splits as str.splitlines does; a "\r\n" (or a UTF-8 character)
    # cut between two pieces is still one line end (one character).
    body = "".join(text + end for text, end in zip(texts, ends, strict=False))
    data = body.encode()
    assert _lines(_cut(data, cuts)) == body.splitlines()


def test_a_body_without_a_last_line_end_keeps_its_last_line() -> None:
    assert _lines([b"data: 1\r", b"\ndata: 2\r", b"\r", b"tail"]) == [
        "data: 1",
        "data: 2",
        "",
        "tail",
    ]


def test_headers_are_read_by_lower_case_name() -> None:
    response = _pool.AsyncResponse(_Raw([]), "http://h/")  # type: ignore[arg-type]
    assert response.headers == {"retry-after": "3", "x-twice": "a"}
    assert response.status_code == 200


def test_credentials_in_the_address_become_basic_authorization_replacing_the_key() -> None:
    url, headers = _pool._basic(
        "https://us%40er:p%3Ass@host:8443/v1/chat?key=1", {"authorization": "Bearer k", "X": "y"}
    )
    assert url == "https://host:8443/v1/chat?key=1"
    assert headers == {"X": "y", "Authorization": "Basic dXNAZXI6cDpzcw=="}


# -- over the wire ---------------------------------------------------------------------------------


@pytest.fixture
def proxy_server() -> Iterator[OpenAIServer]:
    """A second loopback server, standing as a forward proxy."""
    found = OpenAIServer().start()
    yield found
    found.stop()


def _lm(server: OpenAIServer, **options: Any) -> sio.LM:
    settings: dict[str, Any] = {"api_key": "k", "cache": False, "backoff": 0.01}
    settings.update(options)
    return sio.LM("openai/test", api_base=server.base_url, **settings)


def test_async_requests_go_through_the_proxy_given(
    server: OpenAIServer, proxy_server: OpenAIServer
) -> None:
    proxy_server.reply(Reply(content="via the proxy"))
    lm = _lm(server, proxy=proxy_server.base_url.removesuffix("/v1"))
    assert asyncio.run(lm.acall(MESSAGES)).text == "via the proxy"
    assert server.requests == []
    (request,) = proxy_server.requests
    assert request.path == f"{server.base_url}/chat/completions"  # the whole URL


@pytest.fixture
def own_sync_clients(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's sync clients, made here, closed and forgotten after the test.

    An LM opens its sync client on its first call, async or not, and httpx reads the
    environment's proxies when a client is made: one made here must not serve later tests.
    """
    monkeypatch.setattr(_pool, "_CLIENTS", {})
    yield
    for made in _pool._CLIENTS.values():
        made.close()


@pytest.mark.usefixtures("own_sync_clients")
def test_async_requests_take_the_environments_proxy_unless_no_proxy_names_the_host(
    server: OpenAIServer, proxy_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy_server.base_url.removesuffix("/v1"))
    proxy_server.reply(Reply(content="via the proxy"))
    lm = _lm(server)
    assert asyncio.run(lm.acall(MESSAGES)).text == "via the proxy"
    assert len(proxy_server.requests) == 1
    assert server.requests == []
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    server.reply(Reply(content="direct"))
    assert asyncio.run(lm.acall(MESSAGES)).text == "direct"
    assert len(proxy_server.requests) == 1
    assert len(server.requests) == 1


def test_an_async_timeout_is_an_lm_timeout_naming_the_address(server: OpenAIServer) -> None:
    server.reply(Reply(delay=1.0), Reply(delay=1.0))
    lm = _lm(server, timeout=0.2, num_retries=1)
    with pytest.raises(sio.LMTimeoutError) as caught:
        asyncio.run(lm.acall(MESSAGES))
    assert f"{server.base_url}/chat/completions" in str(caught.value)
    assert len(server.requests) == 2  # retried once, as a timeout is


def test_a_refused_connection_is_an_lm_connection_error() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    lm = sio.LM(
        "openai/test",
        api_base=f"http://127.0.0.1:{port}/v1",
        api_key="k",
        cache=False,
        num_retries=0,
    )
    with pytest.raises(sio.LMConnectionError):
        asyncio.run(lm.acall(MESSAGES))


def test_an_async_request_is_logged_as_httpx_logs_one(
    server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="structio.http")
    server.reply(Reply(content="ok"))
    assert asyncio.run(_lm(server).acall(MESSAGES)).text == "ok"
    (record,) = [r for r in caplog.records if r.name == "structio.http"]
    assert record.getMessage() == (
        f'HTTP Request: POST {server.base_url}/chat/completions "HTTP/1.1 200 OK"'
    )


def test_one_async_client_per_loop_and_setting_closed_with_its_loop(server: OpenAIServer) -> None:
    async def clients() -> list[Any]:
        return [
            await _pool.aclient((None, True)),
            await _pool.aclient((None, True)),
            await _pool.aclient((None, False)),
        ]

    first, again, other = asyncio.run(clients())
    assert first is again
    assert other is not first
    assert isinstance(first, _pool.AsyncHTTP)
    assert first.session.closed
    assert other.session.closed
