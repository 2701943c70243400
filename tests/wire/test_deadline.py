"""``timeout`` bounds a whole attempt: connecting, the headers, the body, the whole stream.

A server that keeps a request alive without finishing it (SSE keep-alive comments, a body
or a stream a byte at a time) answers every read, so a timeout between reads never fires.
Each call here, sync and async, called and streamed, over both transports, must end with
`LMTimeoutError` by its one-second timeout, where without the bound it would run until the
server stops. No clock is read by the tests: the server says how each answer ended, cut by
the client while it was still being sent (the deadline at work) or stopped by the server
itself after `_LIFETIME` seconds (a request nothing bounded).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import structio as sio

HI = [{"role": "user", "content": "hi"}]
TIMEOUT = 1.0
# litellm spends most of a second of CPU on its first async request in a process (its
# handlers and clients are made then): on a loaded 2-core machine that alone can pass 1 s,
# ending the attempt before it connects.
TIMEOUTS = {"direct": TIMEOUT, "litellm": 3.0}
# The most a handler keeps sending: an answer no deadline cut ends here, by the server.
_LIFETIME = 30.0


class _OutlivedError(Exception):
    """The answer was still being sent after `_LIFETIME`: nothing on the client cut it."""


_CHUNK = {"choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": None}]}
_BODY = json.dumps(
    {"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}]}
).encode()


def _keep_alive(send: Callable[[bytes], None], stop: threading.Event) -> None:
    """An event stream that sends nothing but a comment, five times a second."""
    send(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
    while not stop.wait(0.2):
        send(b": keep-alive\n\n")


def _trickled_body(send: Callable[[bytes], None], stop: threading.Event) -> None:
    """A whole (non-streamed) answer, its body a byte every 0.2 s."""
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(_BODY)}"
    send(head.encode() + b"\r\n\r\n")
    for index in range(len(_BODY)):
        if stop.wait(0.2):
            return
        send(_BODY[index : index + 1])


def _trickled_stream(send: Callable[[bytes], None], stop: threading.Event) -> None:
    """An endless event stream of text chunks, a byte every 5 ms (a chunk about every 0.4 s)."""
    send(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
    event = b"data: " + json.dumps(_CHUNK).encode() + b"\n\n"
    while True:
        for index in range(len(event)):
            if stop.wait(0.005):
                return
            send(event[index : index + 1])


SERVERS = {"keep_alive": _keep_alive, "trickled_body": _trickled_body}
SERVERS["trickled_stream"] = _trickled_stream


class _SlowServer:
    """A loopback server whose every answer is sent by ``serve`` until the test ends."""

    def __init__(self, serve: Callable[[Callable[[bytes], None], threading.Event], None]) -> None:
        self.serve = serve
        self.stop = threading.Event()
        self.requests = 0
        self.cut = 0  # answers the client stopped reading (closed) while they were sent
        self.outlived = 0  # answers the server itself gave up on after _LIFETIME
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.05)
        self.threads: list[threading.Thread] = []
        self.accepting = threading.Thread(target=self._accept, daemon=True)
        self.accepting.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            thread = threading.Thread(target=self._handle, args=(conn,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def _handle(self, conn: socket.socket) -> None:
        started = time.monotonic()
        # Counted when the connection comes: on a loaded machine the deadline may cut the
        # attempt while the client is still writing its request, which is the same cut.
        self.requests += 1
        with conn:
            conn.settimeout(5.0)
            try:
                _read_request(conn)

                def send(data: bytes) -> None:
                    if time.monotonic() - started > _LIFETIME:
                        raise _OutlivedError
                    conn.sendall(data)

                self.serve(send, self.stop)
            except _OutlivedError:
                self.outlived += 1
            except OSError:
                self.cut += 1  # the client closed the connection: what the deadline does

    def ended(self) -> tuple[int, int, int]:
        """Requests (connections), answers cut by the client, answers that outlived, at the end.

        The handlers notice a closed connection at their next send (0.2 s at most).
        """
        for thread in list(self.threads):
            thread.join(_LIFETIME + 5.0)
        return self.requests, self.cut, self.outlived

    def close(self) -> None:
        self.stop.set()
        self.accepting.join(5.0)
        self.sock.close()
        for thread in self.threads:
            thread.join(5.0)


def _read_request(conn: socket.socket) -> None:
    """Read one HTTP request (its head, then a body of ``Content-Length`` bytes)."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            raise ConnectionResetError
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        piece = conn.recv(65536)
        if not piece:
            raise ConnectionResetError
        body += piece


@pytest.fixture(params=sorted(SERVERS))
def slow(request: pytest.FixtureRequest) -> Iterator[_SlowServer]:
    server = _SlowServer(SERVERS[request.param])
    try:
        yield server
    finally:
        server.close()


def _lm(server: _SlowServer, transport: str, **options: Any) -> sio.LM:
    settings: dict[str, Any] = {
        "api_base": server.base_url,
        "api_key": "test-key",
        "cache": False,
        "num_retries": 0,
        "backoff": 0.01,
        "timeout": TIMEOUTS[transport],
        "transport": transport,
    }
    settings.update(options)
    lm = sio.LM("openai/test", **settings)
    lm.load()  # litellm's import (seconds, once) is no part of an attempt
    return lm


def _call(lm: sio.LM, **params: Any) -> None:
    lm(HI, **params)


def _acall(lm: sio.LM, **params: Any) -> None:
    asyncio.run(lm.acall(HI, **params))


def _stream(lm: sio.LM, **params: Any) -> None:
    with lm.stream(HI, **params) as stream:
        list(stream)


def _astream(lm: sio.LM, **params: Any) -> None:
    async def read() -> None:
        async with lm.astream(HI, **params) as stream:
            async for _item in stream:
                pass

    asyncio.run(read())


WAYS = {"call": _call, "acall": _acall, "stream": _stream, "astream": _astream}


@pytest.mark.parametrize("way", sorted(WAYS))
def test_an_attempt_ends_with_a_timeout_by_its_deadline(
    slow: _SlowServer, transport: str, way: str
) -> None:
    lm = _lm(slow, transport)
    with pytest.raises(sio.LMTimeoutError):
        WAYS[way](lm)
    # One request, whose answer the client cut while it was still coming.
    assert slow.ended() == (1, 1, 0), f"{way} over {transport}"


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_call_timeout_is_the_deadline_of_its_attempt(transport: str, way: str) -> None:
    # The call's own timeout=, not the LM's (an hour here), bounds the attempt.
    server = _SlowServer(_keep_alive)
    try:
        lm = _lm(server, transport, timeout=3600.0)
        with pytest.raises(sio.LMTimeoutError):
            WAYS[way](lm, timeout=TIMEOUTS[transport])
        assert server.ended() == (1, 1, 0)
    finally:
        server.close()


def test_a_timed_out_attempt_is_retried_as_any_timeout(transport: str) -> None:
    # No text was given (keep-alive comments only): the retry policy retries the stream,
    # each attempt with a deadline of its own.
    server = _SlowServer(_keep_alive)
    try:
        lm = _lm(server, transport, num_retries=1)
        with pytest.raises(sio.LMTimeoutError, match="after 2 attempts"):
            _stream(lm)
        assert server.ended() == (2, 2, 0)
    finally:
        server.close()


def test_a_stream_that_gave_text_is_not_retried(transport: str) -> None:
    server = _SlowServer(_trickled_stream)
    try:
        lm = _lm(server, transport, num_retries=2, timeout=2.0)
        pieces: list[Any] = []
        with pytest.raises(sio.LMTimeoutError), lm.stream(HI) as stream:
            pieces.extend(stream)
        assert pieces  # text came before the deadline, so the attempt was the only one
        assert server.ended() == (1, 1, 0)
    finally:
        server.close()
