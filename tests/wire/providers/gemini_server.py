"""A Gemini API server on 127.0.0.1, for tests of the ``"gemini"`` transport's real wire path.

It answers ``POST /v1beta/models/{model}:generateContent`` with a JSON
``GenerateContentResponse`` and ``:streamGenerateContent?alt=sse`` with server-sent events,
one whole ``GenerateContentResponse`` chunk per event, the finish reason and the usage in
the last, as Google's API does. Tests script its replies (`GeminiReply`: a response body,
recorded bytes, an error in Google's shape, a stream cut short) and read back every request
(`GeminiRequest`). `check_request` validates a request body with the google-genai SDK's own
types (a development dependency; structio never imports it).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pydantic
from google.genai import types

#: The usage a reply reports unless it says otherwise.
USAGE = {"promptTokenCount": 12, "candidatesTokenCount": 5, "totalTokenCount": 17}


def text_response(
    *texts: str,
    finish: str = "STOP",
    usage: dict[str, Any] | None = None,
    thought: str | None = None,
) -> dict[str, Any]:
    """A ``GenerateContentResponse`` with one candidate per text (a thought part first)."""
    candidates = []
    for index, text in enumerate(texts or ("ok",)):
        parts: list[dict[str, Any]] = [{"text": thought, "thought": True}] if thought else []
        parts.append({"text": text})
        candidates.append(
            {"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": index}
        )
    return {
        "candidates": candidates,
        "usageMetadata": usage or USAGE,
        "modelVersion": "gemini-2.5-flash",
    }


def calls_response(
    *calls: tuple[str, dict[str, Any]], signature: str | None = None
) -> dict[str, Any]:
    """A response whose candidate calls functions, without ids (as Gemini does); the first
    call signed with ``signature`` (as Gemini 3 signs the first call of a step)."""
    parts: list[dict[str, Any]] = []
    for name, args in calls:
        parts.append({"functionCall": {"name": name, "args": args}})
    if signature:
        parts[0]["thoughtSignature"] = signature
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": USAGE,
    }


def error_body(code: int, status: str, message: str, **extra: Any) -> dict[str, Any]:
    """A Google error body: ``{"error": {"code", "message", "status", "details"...}}``."""
    return {"error": {"code": code, "message": message, "status": status, **extra}}


@dataclass
class GeminiReply:
    """What the server answers to one request.

    ``body`` is the response (streamed: cut into chunks, `stream_chunks`); ``raw`` is sent
    as it is (a recorded body or stream); ``status`` other than 200 sends ``body`` as the
    error. ``cut_after`` stops a stream after that many chunks, before its finish reason.
    """

    body: dict[str, Any] = field(default_factory=text_response)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    cut_after: int | None = None
    piece: int = 4


def stream_chunks(body: dict[str, Any], piece: int = 4) -> list[dict[str, Any]]:
    """A response as Gemini streams it: text in pieces, other parts whole; the last chunk
    with each candidate's finish reason, and the usage."""
    chunks: list[dict[str, Any]] = []
    candidates = body.get("candidates") or []
    for candidate in candidates:
        index = candidate.get("index", 0)
        for part in candidate["content"]["parts"]:
            text = part.get("text")
            pieces = (
                [{**part, "text": text[i : i + piece]} for i in range(0, len(text), piece)]
                if isinstance(text, str) and text
                else [part]
            )
            for one in pieces:
                content = {"role": "model", "parts": [one]}
                chunks.append({"candidates": [{"content": content, "index": index}]})
    last: dict[str, Any] = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": ""}]},
                "finishReason": candidate["finishReason"],
                "index": candidate.get("index", 0),
            }
            for candidate in candidates
        ],
        "usageMetadata": body.get("usageMetadata", USAGE),
    }
    if "promptFeedback" in body:
        last["promptFeedback"] = body["promptFeedback"]
    return [*chunks, last]


@dataclass
class GeminiRequest:
    """One request the server received."""

    path: str
    query: str
    headers: httpx.Headers
    body: dict[str, Any]

    @property
    def stream(self) -> bool:
        return self.path.endswith(":streamGenerateContent")


class GeminiServer:
    """Serves the Gemini API from a script of `GeminiReply` (then ``default``)."""

    def __init__(self) -> None:
        self.requests: list[GeminiRequest] = []
        self.script: deque[GeminiReply] = deque()
        self.default = GeminiReply()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def reply(self, *replies: GeminiReply) -> None:
        """Queue replies, used one per request in order."""
        self.script.extend(replies)

    def __enter__(self) -> GeminiServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next(self, request: GeminiRequest) -> GeminiReply:
        with self._lock:
            self.requests.append(request)
            return self.script.popleft() if self.script else self.default

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                path, _, query = self.path.partition("?")
                body = json.loads(self.rfile.read(length) or b"{}")
                request = GeminiRequest(
                    path, query, httpx.Headers(list(self.headers.items())), body
                )
                reply = server._next(request)
                if reply.status != 200 or not request.stream:
                    data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                    self._send(reply.status, "application/json", data, reply.headers)
                    return
                if reply.raw is not None:
                    self._send(200, "text/event-stream", reply.raw, reply.headers)
                    return
                chunks = stream_chunks(reply.body, reply.piece)
                if reply.cut_after is not None:
                    chunks = chunks[: reply.cut_after]
                data = b"".join(
                    b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n" for chunk in chunks
                )
                self._send(200, "text/event-stream", data, reply.headers)

            def _send(self, status: int, kind: str, data: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler


def serve() -> Iterator[GeminiServer]:
    """A started server, stopped after the test (the body of each module's fixture)."""
    with GeminiServer() as server:
        yield server


# -- request bodies checked with the SDK's own types ---------------------------------------

# The fields of a REST ``generateContent`` request body and the SDK type of each; the SDK's
# models refuse unknown keys (``extra="forbid"``), so a misspelt or invented field fails.
_FIELDS: dict[str, Any] = {
    "contents": list[types.Content],
    "systemInstruction": types.Content,
    "generationConfig": types.GenerationConfig,
    "tools": list[types.Tool],
    "toolConfig": types.ToolConfig,
    "safetySettings": list[types.SafetySetting],
    "cachedContent": str,
}


def check_request(body: dict[str, Any]) -> None:
    """Validate a request body with google-genai's types; raise AssertionError if invalid.

    Validated from JSON, as the API reads it: bytes fields (``inlineData.data``,
    ``thoughtSignature``) must be base64.
    """
    unknown = sorted(set(body) - set(_FIELDS))
    assert not unknown, f"not fields of a generateContent request: {unknown}"
    assert isinstance(body.get("contents"), list), "a request has contents"
    for name, value in body.items():
        try:
            pydantic.TypeAdapter(_FIELDS[name]).validate_json(json.dumps(value))
        except pydantic.ValidationError as exc:
            raise AssertionError(f"{name} is not valid for google-genai: {exc}") from None


#: Fields of real responses that google-genai 3.6.1's types do not know yet (recorded in
#: 2026: ``usageMetadata.serviceTier``); taken off before a recorded response is checked.
NEWER_FIELDS = ("serviceTier",)


def check_response(data: dict[str, Any]) -> types.GenerateContentResponse:
    """A response body read by google-genai's own response type (unknown keys refused)."""
    usage = {k: v for k, v in (data.get("usageMetadata") or {}).items() if k not in NEWER_FIELDS}
    known = {**data, "usageMetadata": usage} if "usageMetadata" in data else data
    return types.GenerateContentResponse.model_validate_json(json.dumps(known))
