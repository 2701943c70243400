"""An OpenAI-compatible chat-completions server on 127.0.0.1, for tests of the real wire path.

It runs in a background thread on a real socket. Tests script its replies (text, status,
headers, delays, malformed bodies) and read back every request it received.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """What the server answers to one request.

    ``content`` is the text of each choice (a list gives one choice each; a string is
    repeated for ``n``); ``None`` sends ``"content": null``, as a reply that only calls
    tools does. ``status`` other than 200 sends an OpenAI-style error body with
    ``error_message`` and ``error_code``. ``raw_body`` sends those bytes as they are.
    ``reasoning_content`` and ``reasoning`` add a reasoning model's thinking to each
    choice's message under that name (both spellings servers use), streamed in pieces
    before the content. ``usage`` is sent as given (add ``completion_tokens_details`` for
    reasoning tokens): in the body, or in a last chunk when a stream asks for usage.
    """

    content: str | list[str | None] | None = "ok"
    finish_reason: str = "stop"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    error_message: str = "error"
    error_code: str | None = None
    raw_body: bytes | None = None
    tool_calls: list[dict[str, Any]] | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    #: For a streamed request (``"stream": true``): the text is sent in pieces of this size.
    chunk_size: int = 3
    #: Seconds between two streamed chunks.
    chunk_delay: float = 0.0
    #: Stop the stream (close the connection) after this many chunks, without ``[DONE]``.
    cut_after: int | None = None
    #: Pause ``stall`` seconds (once) after this many streamed chunks: a server gone quiet.
    stall_after: int | None = None
    stall: float = 0.0
    usage: dict[str, Any] = field(
        default_factory=lambda: {
            "prompt_tokens": 11,
            "completion_tokens": 3,
            "total_tokens": 14,
            "prompt_tokens_details": {"cached_tokens": 4},
        }
    )


@dataclass
class StreamLog:
    """What the server did for one streamed reply: chunks sent, and how it ended.

    Times are ``time.monotonic()`` readings. ``disconnected`` is set when a write failed
    because the client had closed the connection (a stream left early).
    """

    started: float
    #: How many chunks the reply holds (``[DONE]`` not counted).
    total: int
    #: When each chunk was written, in order.
    sent_at: list[float] = field(default_factory=list)
    #: When a write found the client gone (BrokenPipe / ConnectionReset), else None.
    disconnected: float | None = None
    #: Whether ``[DONE]`` was written: the whole reply went out.
    completed: bool = False
    #: When the handler stopped sending, for whatever reason.
    ended: float | None = None
    finished: threading.Event = field(default_factory=threading.Event)

    @property
    def sent(self) -> int:
        """How many chunks were written."""
        return len(self.sent_at)

    def wait(self, timeout: float) -> bool:
        """Wait until the handler has stopped sending; whether it did within ``timeout``."""
        return self.finished.wait(timeout)


@dataclass
class Request:
    """One request the server received."""

    body: dict[str, Any]
    headers: dict[str, str]
    started: float
    path: str

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.body["messages"]
        return messages


class OpenAIServer:
    """Serves ``POST /v1/chat/completions`` from a script of `Reply` objects.

    With the script empty it answers ``default`` (or ``handler(request)`` when given).
    Each streamed reply is logged in ``streams`` (`StreamLog`): when each chunk went out,
    and whether the client closed the connection before the end.
    """

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.script: deque[Reply] = deque()
        self.default = Reply()
        self.handler: Callable[[Request], Reply] | None = None
        self.in_flight = 0
        self.max_in_flight = 0
        #: One entry per streamed reply, in the order they started.
        self.streams: list[StreamLog] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> OpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def reply(self, *replies: Reply) -> None:
        """Queue replies, used one per request in order."""
        self.script.extend(replies)

    def _next_reply(self, request: Request) -> Reply:
        with self._lock:
            if self.script:
                return self.script.popleft()
        return self.handler(request) if self.handler else self.default

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                """Stay quiet: tests read the recorded requests instead."""

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                request = Request(body, dict(self.headers), time.monotonic(), self.path)
                with server._lock:
                    server.requests.append(request)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                self.counted = True
                try:
                    self._answer(server._next_reply(request), body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test); nothing to answer
                finally:
                    self._release()

            def _release(self) -> None:
                # Before the answer is sent: once the client has it, it may send its next
                # request at once, and that one must not count this one as still in flight.
                if self.counted:
                    self.counted = False
                    with server._lock:
                        server.in_flight -= 1

            def _answer(self, reply: Reply, body: dict[str, Any]) -> None:
                if reply.delay:
                    time.sleep(reply.delay)
                self._release()
                if body.get("stream") and reply.status == 200 and reply.raw_body is None:
                    self._stream(reply, body)
                    return
                if reply.raw_body is not None:
                    data = reply.raw_body
                elif reply.status != 200:
                    error = {
                        "message": reply.error_message,
                        "type": "error",
                        "code": reply.error_code,
                    }
                    data = json.dumps({"error": error}).encode()
                else:
                    data = json.dumps(_completion(reply, body)).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, reply: Reply, body: dict[str, Any]) -> None:
                chunks = _chunks(reply, body)
                log = StreamLog(started=time.monotonic(), total=len(chunks))
                with server._lock:
                    server.streams.append(log)
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Connection", "close")
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.close_connection = True
                    for count, chunk in enumerate(chunks):
                        if reply.cut_after is not None and count >= reply.cut_after:
                            return
                        self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                        self.wfile.flush()
                        log.sent_at.append(time.monotonic())
                        if reply.stall_after is not None and count + 1 == reply.stall_after:
                            time.sleep(reply.stall)
                        if reply.chunk_delay:
                            time.sleep(reply.chunk_delay)
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                    log.completed = True
                except (BrokenPipeError, ConnectionResetError):
                    log.disconnected = time.monotonic()  # the client closed the stream
                    raise
                finally:
                    log.ended = time.monotonic()
                    log.finished.set()

        return Handler


def _contents(reply: Reply, body: dict[str, Any]) -> list[str | None]:
    n = int(body.get("n") or 1)
    return reply.content if isinstance(reply.content, list) else [reply.content] * n


def _reasonings(reply: Reply) -> dict[str, str]:
    """The reasoning fields of each choice's message: name -> text."""
    fields = {"reasoning_content": reply.reasoning_content, "reasoning": reply.reasoning}
    return {name: text for name, text in fields.items() if text is not None}


def _chunks(reply: Reply, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of a streamed reply, OpenAI's shape."""

    def chunk(index: int, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", "test"),
            "choices": [{"index": index, "delta": delta, "finish_reason": finish}],
        }

    chunks = []
    size = reply.chunk_size
    for index, text in enumerate(_contents(reply, body)):
        # A reply with no text (only tool calls) opens with ``"content": null``, as OpenAI's.
        opening = {"role": "assistant", "content": "" if text is not None else None}
        chunks.append(chunk(index, opening))
        # Both spellings at once go in the same deltas, as a server that sends both does.
        thoughts = _reasonings(reply)
        longest = max((len(thought) for thought in thoughts.values()), default=0)
        for start in range(0, longest, size):
            delta = {name: thought[start : start + size] for name, thought in thoughts.items()}
            chunks.append(chunk(index, delta))
        for start in range(0, len(text or ""), size):
            chunks.append(chunk(index, {"content": (text or "")[start : start + size]}))
        for position, call in enumerate(reply.tool_calls or ()):
            function = call["function"]
            arguments = function["arguments"]
            half = len(arguments) // 2
            first = {"index": position, "id": call["id"], "type": "function"}
            first["function"] = {"name": function["name"], "arguments": arguments[:half]}
            chunks.append(chunk(index, {"tool_calls": [first]}))
            rest = {"index": position, "function": {"arguments": arguments[half:]}}
            chunks.append(chunk(index, {"tool_calls": [rest]}))
        chunks.append(chunk(index, {}, reply.finish_reason))
    if (body.get("stream_options") or {}).get("include_usage"):
        last = chunk(0, {})
        last["choices"] = []
        last["usage"] = reply.usage
        chunks.append(last)
    return chunks


def _completion(reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
    contents = _contents(reply, body)
    message: dict[str, Any] = {"role": "assistant", **_reasonings(reply)}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "test"),
        "choices": [
            {
                "index": i,
                "message": {**message, "content": text},
                "finish_reason": reply.finish_reason,
            }
            for i, text in enumerate(contents)
        ],
        "usage": reply.usage,
    }
