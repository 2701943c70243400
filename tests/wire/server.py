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
    repeated for ``n``). ``status`` other than 200 sends an OpenAI-style error body with
    ``error_message`` and ``error_code``. ``raw_body`` sends those bytes as they are.
    """

    content: str | list[str] = "ok"
    finish_reason: str = "stop"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    error_message: str = "error"
    error_code: str | None = None
    raw_body: bytes | None = None
    usage: dict[str, Any] = field(
        default_factory=lambda: {
            "prompt_tokens": 11,
            "completion_tokens": 3,
            "total_tokens": 14,
            "prompt_tokens_details": {"cached_tokens": 4},
        }
    )


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
    """

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.script: deque[Reply] = deque()
        self.default = Reply()
        self.handler: Callable[[Request], Reply] | None = None
        self.in_flight = 0
        self.max_in_flight = 0
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
                try:
                    self._answer(server._next_reply(request), body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test); nothing to answer
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _answer(self, reply: Reply, body: dict[str, Any]) -> None:
                if reply.delay:
                    time.sleep(reply.delay)
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

        return Handler


def _completion(reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
    n = int(body.get("n") or 1)
    contents = reply.content if isinstance(reply.content, list) else [reply.content] * n
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "test"),
        "choices": [
            {
                "index": i,
                "message": {"role": "assistant", "content": text},
                "finish_reason": reply.finish_reason,
            }
            for i, text in enumerate(contents)
        ],
        "usage": reply.usage,
    }
