"""A server on 127.0.0.1 answering as OpenAI's ``POST /v1/responses`` does, for wire tests.

It runs in a background thread on a real socket. Tests script its replies (`ResponsesReply`:
a whole ``response`` object, recorded or built here; an error status with OpenAI's error
body; a recorded event stream sent as it is) and read back every request it received.
A streamed request (``"stream": true``) is answered with the events the Responses API sends
for the scripted response (``response.created``, each output item added, its deltas, done,
then ``response.completed``), or with the recorded stream as it was.

Every request body is checked against the openai SDK's own request type
(`openai.types.responses.ResponseCreateParams`, unknown keys refused): `check_body` says
what is wrong with one; `ResponsesServer.invalid` lists the requests that failed it.
"""

from __future__ import annotations

import functools
import itertools
import json
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).parent / "recorded" / "openai_responses"

_ids = itertools.count(1)


def recorded(name: str) -> Any:
    """A recorded response (``.json``: the body; ``.sse``: the event stream's text)."""
    text = (RECORDED / name).read_text(encoding="utf-8")
    return json.loads(text) if name.endswith(".json") else text


@functools.cache
def _request_type() -> Any:
    from openai.types.responses import ResponseCreateParams
    from pydantic import ConfigDict, TypeAdapter

    # extra="forbid" reaches every nested TypedDict: a misspelled key anywhere is refused.
    return TypeAdapter(ResponseCreateParams, config=ConfigDict(extra="forbid"))


def check_body(body: dict[str, Any]) -> str | None:
    """What makes ``body`` an invalid Responses API request for the openai SDK; None if valid."""
    from pydantic import ValidationError

    try:
        _request_type().validate_python(body)
    except ValidationError as exc:
        return str(exc)[:3000]
    return None


def usage(
    input_tokens: int = 20, output_tokens: int = 5, cached: int = 0, reasoning: int = 0
) -> dict[str, Any]:
    """A Responses ``usage`` object."""
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


def message_item(text: str, logprobs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An assistant ``message`` output item holding ``text``."""
    part: dict[str, Any] = {"type": "output_text", "text": text, "annotations": []}
    if logprobs is not None:
        part["logprobs"] = logprobs
    return {
        "type": "message",
        "id": f"msg_{next(_ids)}",
        "status": "completed",
        "role": "assistant",
        "content": [part],
    }


def call_item(call_id: str, name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    """A ``function_call`` output item."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "type": "function_call",
        "id": f"fc_{next(_ids)}",
        "call_id": call_id,
        "name": name,
        "arguments": args,
        "status": "completed",
    }


def reasoning_item(summary: list[str], encrypted: str = "gAAAA-secret") -> dict[str, Any]:
    """A ``reasoning`` output item with its summary texts and encrypted content."""
    return {
        "type": "reasoning",
        "id": f"rs_{next(_ids)}",
        "summary": [{"type": "summary_text", "text": text} for text in summary],
        "encrypted_content": encrypted,
    }


def response(
    *items: dict[str, Any],
    status: str = "completed",
    incomplete: str | None = None,
    model: str = "gpt-5-mini-2025-08-07",
    used: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A whole ``response`` object with these output items."""
    return {
        "id": f"resp_{next(_ids)}",
        "object": "response",
        "created_at": 1760000000,
        "status": status,
        "error": None,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "model": model,
        "output": list(items),
        "usage": used or usage(),
    }


def text_response(text: str, **kwargs: Any) -> dict[str, Any]:
    """A response whose output is one message of ``text``."""
    return response(message_item(text), **kwargs)


@dataclass
class ResponsesReply:
    """What the server answers to one request.

    ``body`` is the response object (sent as JSON, or as events when streamed); ``sse`` a
    recorded event stream sent as it is to a streamed request. ``status`` other than 200
    sends OpenAI's error body (``error_message``, ``error_code``); ``error_body`` sends that
    body instead. ``cut_after`` closes a stream after that many events, with no
    ``response.completed``; ``fail_after`` sends ``response.failed`` after that many.
    """

    body: dict[str, Any] | None = None
    sse: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error_message: str = "error"
    error_code: str | None = None
    error_body: dict[str, Any] | None = None
    chunk_size: int = 4
    cut_after: int | None = None
    fail_after: int | None = None
    fail_code: str = "server_error"
    fail_message: str = "The model failed to generate a response."


@dataclass
class Received:
    """One request the server received."""

    body: dict[str, Any]
    headers: dict[str, str]
    path: str


def _pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


def events_of(body: dict[str, Any], chunk_size: int = 4) -> list[dict[str, Any]]:
    """The events the Responses API streams for the response ``body`` (as it does, in order)."""
    start = {**body, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": start},
        {"type": "response.in_progress", "response": start},
    ]
    for index, item in enumerate(body.get("output") or ()):
        kind = item["type"]
        base = {"output_index": index, "item_id": item.get("id")}
        if kind == "message":
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "content": []},
                }
            )
            for part_index, part in enumerate(item["content"]):
                if part["type"] == "refusal":
                    for piece in _pieces(part["refusal"], chunk_size):
                        events.append(
                            {
                                "type": "response.refusal.delta",
                                **base,
                                "content_index": part_index,
                                "delta": piece,
                            }
                        )
                    continue
                logprobs = list(part.get("logprobs") or [])
                pieces = list(_pieces(part["text"], chunk_size))
                for number, piece in enumerate(pieces):
                    event = {
                        "type": "response.output_text.delta",
                        **base,
                        "content_index": part_index,
                        "delta": piece,
                    }
                    if "logprobs" in part:
                        # All of a part's token logprobs ride on its first delta here.
                        event["logprobs"] = logprobs if number == 0 else []
                    events.append(event)
                events.append(
                    {
                        "type": "response.output_text.done",
                        **base,
                        "content_index": part_index,
                        "text": part["text"],
                    }
                )
        elif kind == "function_call":
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "arguments": "", "status": "in_progress"},
                }
            )
            for piece in _pieces(item["arguments"], chunk_size):
                events.append(
                    {"type": "response.function_call_arguments.delta", **base, "delta": piece}
                )
            events.append(
                {
                    "type": "response.function_call_arguments.done",
                    **base,
                    "arguments": item["arguments"],
                }
            )
        elif kind == "reasoning":
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "summary": []},
                }
            )
            for summary_index, summary in enumerate(item.get("summary") or ()):
                for piece in _pieces(summary["text"], chunk_size):
                    events.append(
                        {
                            "type": "response.reasoning_summary_text.delta",
                            **base,
                            "summary_index": summary_index,
                            "delta": piece,
                        }
                    )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    end = "response.incomplete" if body.get("status") == "incomplete" else "response.completed"
    events.append({"type": end, "response": body})
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return events


def sse(events: list[dict[str, Any]]) -> str:
    """Events as the Responses API writes them: ``event:`` and ``data:`` lines."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


class ResponsesServer:
    """Serves ``POST /v1/responses`` from a script of `ResponsesReply` objects.

    With the script empty it answers ``default``. ``requests`` holds every request received;
    ``invalid`` the SDK's complaint about each body that is not a valid request.
    """

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.invalid: list[str] = []
        self.script: deque[ResponsesReply] = deque()
        self.default = ResponsesReply(body=text_response("ok"))
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> ResponsesServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def reply(self, *replies: ResponsesReply) -> None:
        """Queue replies, used one per request in order."""
        self.script.extend(replies)

    @property
    def last(self) -> dict[str, Any]:
        """The body of the last request."""
        return self.requests[-1].body

    def _next(self, body: dict[str, Any], headers: dict[str, str], path: str) -> ResponsesReply:
        problem = check_body(body)
        with self._lock:
            self.requests.append(Received(body, headers, path))
            if problem:
                self.invalid.append(problem)
            return self.script.popleft() if self.script else self.default

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path != "/v1/responses":
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                reply = server._next(body, dict(self.headers.items()), self.path)
                if reply.status != 200:
                    error = reply.error_body or {
                        "error": {
                            "message": reply.error_message,
                            "type": "invalid_request_error",
                            "param": None,
                            "code": reply.error_code,
                        }
                    }
                    self._json(reply.status, error, reply.headers)
                    return
                if body.get("stream"):
                    self._stream(reply)
                else:
                    self._json(200, reply.body or {}, reply.headers)

            def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

            def _stream(self, reply: ResponsesReply) -> None:
                if reply.sse is not None:
                    blocks = [b + "\n\n" for b in reply.sse.split("\n\n") if b.strip()]
                else:
                    events = events_of(reply.body or {}, reply.chunk_size)
                    if reply.fail_after is not None:
                        failed = {
                            **(reply.body or {}),
                            "status": "failed",
                            "error": {"code": reply.fail_code, "message": reply.fail_message},
                        }
                        events = [
                            *events[: reply.fail_after],
                            {"type": "response.failed", "response": failed},
                        ]
                    blocks = [sse([event]) for event in events]
                if reply.cut_after is not None:
                    blocks = blocks[: reply.cut_after]
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    for block in blocks:
                        self.wfile.write(block.encode())
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        return Handler
