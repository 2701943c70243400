"""A loopback server that answers as Anthropic's Messages API does (``POST /v1/messages``).

It runs on 127.0.0.1 in a thread, on a real socket. Tests script its replies (a ``Message``
object, a recorded body or stream, an error, a stream cut short or broken by an error
event) and read back every request, each checked against the anthropic SDK's own request
types (`check_request`). With ``simulate_cache`` it bills prompt tokens as Anthropic's
prompt cache would (`CacheSimulator`), for tests and ``benchmarks/prompt_cache.py``.
"""

from __future__ import annotations

import json
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

RECORDED = Path(__file__).parent / "recorded" / "anthropic"


def recorded(name: str) -> Any:
    """A recorded response of ``recorded/anthropic`` (JSON decoded; a stream as its text)."""
    text = (RECORDED / name).read_text(encoding="utf-8")
    return json.loads(text) if name.endswith(".json") else text


# -- requests checked against the SDK's types ----------------------------------------------

_STRICT = False


def _forbid_extra_keys() -> None:
    """Make every request TypedDict of the SDK refuse keys it does not declare.

    pydantic ignores unknown keys of a TypedDict by default; a body with a misspelt key
    (``cache_contro``) would pass. Done once per process, on the SDK's own classes.
    """
    global _STRICT
    if _STRICT:
        return
    import anthropic.types  # noqa: F401 - loads the modules whose classes are changed
    from pydantic import ConfigDict
    from typing_extensions import is_typeddict

    for name, module in list(sys.modules.items()):
        if not name.startswith("anthropic.types") or module is None:
            continue
        for value in list(vars(module).values()):
            if isinstance(value, type) and is_typeddict(value):
                value.__pydantic_config__ = ConfigDict(  # type: ignore[attr-defined]
                    extra="forbid", arbitrary_types_allowed=True
                )
    _STRICT = True


_ADAPTERS: dict[bool, Any] = {}


def _adapter(stream: bool) -> Any:
    if stream not in _ADAPTERS:
        _forbid_extra_keys()
        from anthropic.types import message_create_params
        from pydantic import TypeAdapter

        kind = (
            message_create_params.MessageCreateParamsStreaming
            if stream
            else message_create_params.MessageCreateParamsNonStreaming
        )
        _ADAPTERS[stream] = TypeAdapter(kind)
    return _ADAPTERS[stream]


def _consumed(value: Any) -> Any:
    """Every lazily validated iterable read (which validates it), response models refused."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        # The SDK's content unions also take its response models (which keep any key): a
        # request block that only fits one of those is not a request block.
        raise ValueError(f"not a request block of the SDK: {type(value).__name__} {value!r}")
    if isinstance(value, dict):
        return {key: _consumed(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ValidatorIterator":
        return [_consumed(item) for item in value]
    return value


def check_request(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` validated as the anthropic SDK's ``MessageCreateParams`` (strict keys).

    Raises:
        pydantic.ValidationError | ValueError: The body is not a valid Messages request.
    """
    result: dict[str, Any] = _consumed(_adapter(bool(body.get("stream"))).validate_python(body))
    return result


# -- token counts and the prompt cache ---------------------------------------------------------


def count_tokens(text: str) -> int:
    """Tokens of ``text`` by tiktoken's ``cl100k_base``: an approximation of Claude's tokenizer."""
    import tiktoken

    return len(_encoding(tiktoken).encode(text, disallowed_special=()))


_ENCODING: list[Any] = []


def _encoding(tiktoken: Any) -> Any:
    if not _ENCODING:
        _ENCODING.append(tiktoken.get_encoding("cl100k_base"))
    return _ENCODING[0]


def _blocks_in_order(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The cacheable blocks of a request in the order of the prefix: tools, system, messages."""
    yield from body.get("tools") or ()
    system = body.get("system")
    if isinstance(system, str):
        yield {"type": "text", "text": system}
    else:
        yield from system or ()
    for message in body.get("messages") or ():
        content = message["content"]
        if isinstance(content, str):
            yield {"type": "text", "text": content, "_role": message["role"]}
        else:
            for block in content:
                yield {**block, "_role": message["role"]}


class CacheSimulator:
    """Anthropic's prompt-cache accounting, simulated over the requests it sees.

    A prefix is the request's blocks up to a block that carries ``cache_control``. At each
    breakpoint (last first), a prefix already cached by an earlier request is a hit: its
    tokens are read; the longest hit wins. The prefixes at breakpoints past the hit, of at
    least ``minimum`` tokens, are written (and cached for later requests). The rest of the
    prompt is plain input. Tokens are counted with tiktoken (`count_tokens`), an
    approximation of Claude's tokenizer.
    """

    def __init__(self, minimum: int = 1024) -> None:
        self.minimum = minimum
        self.cached: set[str] = set()
        self._lock = threading.Lock()

    def usage(self, body: dict[str, Any]) -> dict[str, int]:
        """Anthropic's ``usage`` input counts for one request (and the cache updated)."""
        keys: list[str] = []
        sizes: list[int] = []
        breakpoints: list[int] = []
        total = 0
        for block in _blocks_in_order(body):
            plain = {k: v for k, v in block.items() if k != "cache_control"}
            keys.append(json.dumps(plain, sort_keys=True))
            total += count_tokens(json.dumps(plain, sort_keys=True))
            sizes.append(total)
            if block.get("cache_control"):
                breakpoints.append(len(keys))
        prefixes = ["\n".join(keys[:end]) for end in breakpoints]
        with self._lock:
            read = 0
            hit_at = 0
            for end, prefix in reversed(list(zip(breakpoints, prefixes))):
                if prefix in self.cached:
                    read, hit_at = sizes[end - 1], end
                    break
            written = 0
            for end, prefix in zip(breakpoints, prefixes):
                if end > hit_at and sizes[end - 1] >= self.minimum:
                    self.cached.add(prefix)
                    written = sizes[end - 1] - read
        return {
            "input_tokens": total - read - written,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
        }


# -- replies ----------------------------------------------------------------------------------


def message(
    text: str = "ok",
    *,
    stop_reason: str = "end_turn",
    tool_uses: list[dict[str, Any]] | None = None,
    thinking: list[dict[str, Any]] | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``Message`` object as the API sends it."""
    content: list[dict[str, Any]] = list(thinking or [])
    if text:
        content.append({"type": "text", "text": text})
    for use in tool_uses or ():
        content.append({"type": "tool_use", **use})
    return {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage
        or {
            "input_tokens": 20,
            "output_tokens": 5,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


@dataclass
class Reply:
    """What the server answers to one request.

    ``message`` is a ``Message`` object: sent as it is, or, for a streamed request, as the
    events Anthropic sends for it (`events`). ``sse`` sends a recorded stream's text as it
    is. ``status`` other than 200 sends Anthropic's error body (``error_type``,
    ``error_message``). ``cut_after`` closes a stream after that many events, before
    ``message_stop``; ``error_after`` sends an ``error`` event of ``error_type`` there.
    """

    message: dict[str, Any] | None = None
    sse: str | None = None
    status: int = 200
    error_type: str = "invalid_request_error"
    error_message: str = "error"
    headers: dict[str, str] = field(default_factory=dict)
    cut_after: int | None = None
    error_after: int | None = None


def _sse(kind: str, data: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n"


def events(message: dict[str, Any]) -> list[str]:
    """The server-sent events Anthropic streams for ``message``, in order."""
    usage = dict(message["usage"])
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    out = [_sse("message_start", {"type": "message_start", "message": start})]
    out.append(_sse("ping", {"type": "ping"}))
    for index, block in enumerate(message["content"]):
        kind = block["type"]
        empty = {"text": {"type": "text", "text": ""}}.get(kind)
        if kind == "tool_use":
            empty = {**block, "input": {}}
        elif kind == "thinking":
            empty = {"type": "thinking", "thinking": "", "signature": ""}
        elif empty is None:
            empty = block
        out.append(
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": empty},
            )
        )
        deltas: list[dict[str, Any]] = []
        if kind == "text":
            text = block["text"]
            deltas = [{"type": "text_delta", "text": text[i : i + 4]} for i in range(0, len(text), 4)]
        elif kind == "tool_use":
            raw = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": ""}]
            deltas += [
                {"type": "input_json_delta", "partial_json": raw[i : i + 5]}
                for i in range(0, len(raw), 5)
            ]
        elif kind == "thinking":
            deltas = [{"type": "thinking_delta", "thinking": block["thinking"]}]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        for delta in deltas:
            out.append(
                _sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage.get("output_tokens", 0)},
            },
        )
    )
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return out


@dataclass
class Request:
    """One request the server received: its body (as sent), headers and path."""

    body: dict[str, Any]
    headers: httpx.Headers
    path: str
    #: The body's problem when it does not validate as the SDK's request type, else None.
    invalid: str | None = None


class AnthropicServer:
    """Serves ``POST /v1/messages`` from a script of `Reply` objects.

    With the script empty it answers ``handler(request)`` when set, else ``default``. A
    request whose body the SDK's types refuse is answered 400, as Anthropic would.
    """

    def __init__(self, *, simulate_cache: bool = False) -> None:
        self.requests: list[Request] = []
        self.script: deque[Reply] = deque()
        self.default = Reply(message=message())
        self.handler: Callable[[Request], Reply] | None = None
        self.cache = CacheSimulator() if simulate_cache else None
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """The API base (Anthropic's is ``https://api.anthropic.com``: no ``/v1``)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> AnthropicServer:
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def reply(self, *replies: Reply) -> None:
        """Queue replies, used one per request in order."""
        self.script.extend(replies)

    def _next(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self.script:
                return self.script.popleft()
        return self.handler(request) if self.handler is not None else self.default

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                request = Request(body, httpx.Headers(list(self.headers.items())), self.path)
                try:
                    check_request(body)
                except Exception as exc:  # the SDK's verdict, whatever its class
                    request.invalid = str(exc)
                reply = server._next(request)
                if self.path.split("?")[0] != "/v1/messages":
                    self._json(404, _error("not_found_error", f"no route {self.path}"), {})
                elif request.invalid is not None:
                    self._json(400, _error("invalid_request_error", request.invalid), {})
                elif reply.status != 200:
                    self._json(reply.status, _error(reply.error_type, reply.error_message), reply.headers)
                elif body.get("stream"):
                    self._stream(reply, body)
                else:
                    self._json(200, server._answer(reply, body), reply.headers)

            def _json(self, status: int, data: dict[str, Any], headers: dict[str, str]) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

            def _stream(self, reply: Reply, body: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                if reply.sse is not None:
                    chunks = [part + "\n\n" for part in reply.sse.split("\n\n") if part.strip()]
                else:
                    chunks = events(server._answer(reply, body))
                for number, chunk in enumerate(chunks):
                    if reply.error_after is not None and number == reply.error_after:
                        error = _error(reply.error_type, reply.error_message)
                        self.wfile.write(_sse("error", error).encode())
                        break
                    if reply.cut_after is not None and number == reply.cut_after:
                        break
                    self.wfile.write(chunk.encode())
                    self.wfile.flush()
                self.close_connection = True

        return Handler

    def _answer(self, reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
        answer = dict(reply.message or message())
        if self.cache is not None:
            usage = {**answer["usage"], **self.cache.usage(body)}
            answer["usage"] = usage
        return answer


def _error(kind: str, text: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": text}}
