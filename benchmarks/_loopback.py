"""A loopback model server for `calls.py`: four providers' APIs, keep-alive, standard library only.

Run as a script it listens on ``127.0.0.1`` (a free port), prints its base URL
(``http://127.0.0.1:PORT/v1``) on one line of standard output, and serves until its
standard input closes (its parent ended) or it is sent SIGTERM. It runs in its own
process so that its CPU time is never counted in the measuring process's
``time.process_time()``, and it never holds that process's GIL.

Each of four APIs gets a canned answer of its own shape (usage included) whose text is the
same complete ChatAdapter answer for ``question -> answer``, the format structio's and
DSPy's ChatAdapter read:

- ``POST .../chat/completions``: an OpenAI ``chat.completion``;
- ``POST .../responses``: an OpenAI Responses API ``response`` (one ``output_text``);
- ``POST .../messages``: an Anthropic Messages ``message`` (one ``text`` block);
- ``POST .../models/{model}:generateContent``: a Gemini ``GenerateContentResponse``
  (under any version prefix, ``/v1beta`` or none: clients build that path differently).

The shapes follow the recorded provider responses in ``tests/wire/providers/recorded/``.
``GET /_stats`` answers ``{"requests": N, "by_api": {"chat": N, ...}}``, the model requests
served so far, so the benchmark can check that each call made exactly one request of the
expected API (no cache hit, no retry). ``GET /_last`` answers the last model request as
``{"path": ..., "headers": {...}, "body": "..."}`` (the body as sent, decoded as UTF-8), so
a raw client can replay exactly what a library sent. Anything else is a 404.

``--delay SECONDS`` (0 by default) makes each model answer wait that long before it is
written, as a model's latency would: a timer per request (the event loop's, no thread),
deadlines taken when the request arrived, and the answers of one connection written in
the order of its requests. With a delay, throughput is bound by concurrency (at most
concurrency / delay calls per second) and by the client's CPU, which is what an async
client benchmark measures.

HTTP/1.1 only: request line, headers, a ``Content-Length`` or chunked body; connections
stay open (keep-alive) unless the client asks to close; pipelined requests are answered
in order. Written on ``asyncio.Protocol`` rather than streams: a request costs one
``data_received`` and one ``write``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import signal
import sys
from collections.abc import Callable
from typing import NamedTuple

ANSWER = "[[ ## answer ## ]]\nParis\n\n[[ ## completed ## ]]"

COMPLETION = {
    "id": "chatcmpl-loopback",
    "object": "chat.completion",
    "created": 1_700_000_000,
    "model": "test",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": ANSWER},
            "logprobs": None,
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129},
    "system_fingerprint": None,
}

_MAX_HEAD = 64 * 1024


def _response(status: str, body: bytes, *, close: bool = False) -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        f"connection: {'close' if close else 'keep-alive'}\r\n\r\n"
    )
    return head.encode("ascii") + body


RESPONSE = {
    "id": "resp_loopback",
    "object": "response",
    "created_at": 1_700_000_000,
    "status": "completed",
    "background": False,
    "error": None,
    "incomplete_details": None,
    "instructions": None,
    "max_output_tokens": None,
    "model": "test",
    "output": [
        {
            "type": "message",
            "id": "msg_loopback",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
        }
    ],
    "parallel_tool_calls": True,
    "previous_response_id": None,
    "reasoning": {"effort": None, "summary": None},
    "store": True,
    "temperature": 1.0,
    "text": {"format": {"type": "text"}},
    "tool_choice": "auto",
    "tools": [],
    "top_p": 1.0,
    "truncation": "disabled",
    "usage": {
        "input_tokens": 120,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 9,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 129,
    },
    "user": None,
    "metadata": {},
}

MESSAGE = {
    "id": "msg_loopback",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5-20250929",
    "content": [{"type": "text", "text": ANSWER}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 120,
        "output_tokens": 9,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "service_tier": "standard",
    },
}

GENERATE_CONTENT = {
    "candidates": [
        {
            "content": {"parts": [{"text": ANSWER}], "role": "model"},
            "finishReason": "STOP",
            "index": 0,
        }
    ],
    "modelVersion": "gemini-2.5-flash",
    "responseId": "loopback",
    "usageMetadata": {
        "promptTokenCount": 120,
        "candidatesTokenCount": 9,
        "totalTokenCount": 129,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 120}],
    },
}

_OK = _response("200 OK", json.dumps(COMPLETION).encode())
_ANSWERS = {
    "chat": _OK,
    "responses": _response("200 OK", json.dumps(RESPONSE).encode()),
    "messages": _response("200 OK", json.dumps(MESSAGE).encode()),
    "gemini": _response("200 OK", json.dumps(GENERATE_CONTENT).encode()),
}
_NOT_FOUND = _response("404 Not Found", b'{"error": {"message": "not found"}}')
_BAD = _response("400 Bad Request", b'{"error": {"message": "bad request"}}', close=True)


class _Stats:
    requests = 0
    by_api: dict[str, int] = {}  # noqa: RUF012 - one server per process
    last: Request | None = None  # the last model request, for ``GET /_last``
    delay = 0.0  # seconds each model answer waits before it is written (--delay)


def api_of(method: str, path: str) -> str | None:
    """Which API a request calls (a key of ``_ANSWERS``), or None if it calls none."""
    if method != "POST":
        return None
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/messages"):
        return "messages"
    if path.endswith(":generateContent") and "/models/" in path:
        return "gemini"
    return None


def _chunked(buffer: bytearray, start: int) -> int | None:
    """The end offset of a chunked body beginning at ``start``, or None if incomplete."""
    pos = start
    while True:
        eol = buffer.find(b"\r\n", pos)
        if eol < 0:
            return None
        size = int(bytes(buffer[pos:eol]).split(b";", 1)[0].strip() or b"0", 16)
        pos = eol + 2
        if size == 0:
            # Optional trailers, then an empty line.
            while True:
                eol = buffer.find(b"\r\n", pos)
                if eol < 0:
                    return None
                if eol == pos:
                    return eol + 2
                pos = eol + 2
        if len(buffer) < pos + size + 2:
            return None
        pos += size + 2


class Request(NamedTuple):
    """One request cut from a connection's buffer."""

    method: str
    path: str
    body: bytes
    close: bool  # whether the client asked for the connection to be closed after it
    headers: dict[str, str] = {}  # noqa: RUF012 - names lowercased, values as sent


def take_request(buffer: bytearray) -> Request | None:
    """Cut the first complete request out of ``buffer``; ``None`` while it is incomplete.

    Raises:
        ValueError: The request head is too long or malformed.
    """
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        if len(buffer) > _MAX_HEAD:
            raise ValueError("request head too long")
        return None
    lines = bytes(buffer[:end]).decode("latin-1").split("\r\n")
    method, target, version = lines[0].split(" ", 2)
    sent: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        sent[name.strip().lower()] = value.strip()
    headers = {name: value.lower() for name, value in sent.items()}
    body_start = end + 4
    chunked = "chunked" in headers.get("transfer-encoding", "")
    if chunked:
        body_end = _chunked(buffer, body_start)
        if body_end is None:
            return None
    else:
        body_end = body_start + int(headers.get("content-length", "0"))
        if len(buffer) < body_end:
            return None
    raw = bytes(buffer[body_start:body_end])
    del buffer[:body_end]
    connection = headers.get("connection", "")
    close = connection == "close" or (version == "HTTP/1.0" and connection != "keep-alive")
    body = _dechunk(raw) if chunked else raw
    return Request(method, target.split("?", 1)[0], body, close, sent)


def _dechunk(raw: bytes) -> bytes:
    """A chunked request body's data (clients here send ``content-length``; kept general)."""
    out, pos = bytearray(), 0
    while True:
        eol = raw.index(b"\r\n", pos)
        size = int(raw[pos:eol].split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            return bytes(out)
        out += raw[eol + 2 : eol + 2 + size]
        pos = eol + 2 + size + 2


class _Connection(asyncio.Protocol):
    """One client connection: parse each request from the buffer, answer it at once."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        # With a delay: the answers not yet written, in request order, with their deadlines
        # (and whether to close after each); one timer per connection writes the due ones.
        self.pending: collections.deque[tuple[float, bytes, bool]] = collections.deque()
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        try:
            while self._one_request():
                pass
        except (ValueError, IndexError):
            if self.transport is not None:
                self.transport.write(_BAD)
                self.transport.close()

    def _one_request(self) -> bool:
        """Answer the first complete request in the buffer; False if there is none."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return False
        request = take_request(self.buffer)
        if request is None:
            return False
        method, path = request.method, request.path
        delay = 0.0
        api = api_of(method, path)
        if api is not None:
            _Stats.requests += 1
            _Stats.by_api[api] = _Stats.by_api.get(api, 0) + 1
            _Stats.last = request
            answer, delay = _ANSWERS[api], _Stats.delay
        elif method == "GET" and path == "/_stats":
            stats = {"requests": _Stats.requests, "by_api": _Stats.by_api}
            answer = _response("200 OK", json.dumps(stats).encode())
        elif method == "GET" and path == "/_last":
            last = _Stats.last
            seen = (
                {"path": last.path, "headers": last.headers, "body": last.body.decode()}
                if last is not None
                else None
            )
            answer = _response("200 OK", json.dumps(seen).encode())
        else:
            answer = _NOT_FOUND
        if delay > 0 or self.pending:  # never ahead of an answer still waiting
            return self._later(answer, request.close, delay)
        transport.write(answer)
        if request.close:
            transport.close()
            return False
        return True

    def _later(self, answer: bytes, close: bool, delay: float) -> bool:
        """Write ``answer`` after ``delay``, and after every answer still pending before it."""
        loop = asyncio.get_running_loop()
        self.pending.append((loop.time() + delay, answer, close))
        if self.timer is None:
            self.timer = loop.call_at(self.pending[0][0], self._flush)
        return not close

    def _flush(self) -> None:
        """Write the answers that are due, in order; set the timer for the next one."""
        self.timer = None
        transport, loop = self.transport, asyncio.get_running_loop()
        now = loop.time()
        while self.pending and self.pending[0][0] <= now:
            _, answer, close = self.pending.popleft()
            if transport is None or transport.is_closing():
                self.pending.clear()
                return
            transport.write(answer)
            if close:
                transport.close()
                self.pending.clear()
                return
        if self.pending:
            self.timer = loop.call_at(self.pending[0][0], self._flush)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.pending.clear()


async def serve(connection: Callable[[], asyncio.Protocol] = _Connection) -> None:
    """Listen, print the base URL, and serve until stdin closes or SIGTERM arrives.

    ``connection`` makes the protocol of each connection (`_loopback_stream.py` passes its own).
    """
    loop = asyncio.get_running_loop()
    server = await loop.create_server(connection, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    done = loop.create_future()

    def stop() -> None:
        if not done.done():
            done.set_result(None)

    loop.add_signal_handler(signal.SIGTERM, stop)
    loop.add_signal_handler(signal.SIGINT, stop)
    # The parent holds our stdin open; when it ends, for any reason, stdin reads EOF.
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    async def watch_stdin() -> None:
        while await reader.read(4096):
            pass
        stop()

    watcher = asyncio.ensure_future(watch_stdin())
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    await done
    watcher.cancel()
    # Not `async with server`: from Python 3.12 closing waits for every connection to end,
    # and a client's keep-alive connection may outlive the benchmark's use of it.
    server.close()
    if hasattr(server, "close_clients"):  # Python 3.13
        server.close_clients()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--delay", type=float, default=0.0, help="seconds before each model answer is written"
    )
    _Stats.delay = parser.parse_args().delay
    asyncio.run(serve())
