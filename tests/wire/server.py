"""An OpenAI-compatible chat-completions server on 127.0.0.1, for tests of the real wire path.

It runs in a background thread on a real socket. Tests script its replies (text, status,
headers, delays, malformed bodies) and read back every request it received.

It also serves OpenAI's batch API: ``POST /v1/files`` (a multipart upload),
``GET /v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches/{id}`` and
``POST /v1/batches/{id}/cancel``. How each batch goes is scripted by a `BatchPlan` (its
states, one per poll, and how it ends); its requests are answered by the same reply logic
as a chat request (the script of `Reply` objects, then ``handler`` or ``default``).
"""

from __future__ import annotations

import gzip
import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx


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
    #: Wait, after this many streamed chunks, until ``release`` is set (or 30 s have gone):
    #: the client can prove it read those chunks before the rest was sent.
    hold_after: int | None = None
    release: threading.Event = field(default_factory=threading.Event)
    #: When the request asks for ``logprobs``: each choice's token entries, in OpenAI's
    #: chat shape (``{"token", "logprob", "bytes", "top_logprobs"}``), sent instead of the
    #: made-up ones of `token_logprobs`. Their tokens must spell the choice's content; a
    #: stream then sends one token per chunk.
    logprobs: list[list[dict[str, Any]]] | None = None
    #: Send the log probabilities in the legacy completions shape (`legacy_logprobs`), as
    #: llama-cpp-python's server does, instead of OpenAI's chat shape.
    legacy: bool = False
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
    #: With ``Reply.hold_after``: whether the client released the held stream (not the
    #: 30 s wait running out).
    released: bool | None = None
    finished: threading.Event = field(default_factory=threading.Event)

    @property
    def sent(self) -> int:
        """How many chunks were written."""
        return len(self.sent_at)

    def wait(self, timeout: float) -> bool:
        """Wait until the handler has stopped sending; whether it did within ``timeout``."""
        return self.finished.wait(timeout)


def _headers(received: Any) -> httpx.Headers:
    """The request's headers as HTTP reads them: names match in any case.

    Clients differ in how they spell names (the OpenAI SDK of 2026 sends ``authorization``,
    httpx ``Authorization``); both are the same header.
    """
    return httpx.Headers(list(received.items()))


@dataclass
class Request:
    """One request the server received (or one request line of a batch it ran)."""

    body: dict[str, Any]
    headers: httpx.Headers
    started: float
    path: str
    method: str = "POST"

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.body["messages"]
        return messages


#: The states a batch goes through when nothing else is scripted.
COMPLETED = ("validating", "in_progress", "finalizing", "completed")


@dataclass
class BatchPlan:
    """How the server runs one batch.

    ``statuses`` are the states the batch reports: the first at its creation, then one
    more at each poll, staying at the last. The requests are answered once the batch
    leaves ``validating``; a reply whose status is not 200 puts the request in the error
    file. A last state of ``expired`` or ``cancelled`` answers only the first ``answered``
    requests (the rest go to the error file, as OpenAI reports unrun requests); ``failed``
    answers none and reports ``errors`` as the batch's own.
    """

    statuses: tuple[str, ...] = COMPLETED
    answered: int = 0
    errors: tuple[str, ...] = ("the input file is invalid",)


@dataclass
class _Batch:
    id: str
    input_file_id: str
    plan: BatchPlan
    step: int = 0
    ran: bool = False
    total: int = 0
    ok: int = 0
    failed: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    problems: list[str] = field(default_factory=list)


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
        #: Uploaded files by id: their bytes.
        self.files: dict[str, bytes] = {}
        #: How the next batches go, one plan per batch created; then ``batch_plan``.
        self.batch_plans: deque[BatchPlan] = deque()
        self.batch_plan = BatchPlan()
        #: The request lines of every batch run, as the server answered them.
        self.batch_requests: list[Request] = []
        self._batches: dict[str, _Batch] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        # serve_forever looks for a shutdown request every poll_interval (0.5 s by default),
        # which each stop() waited out: 0.5 s per test, over 200 s of a suite run.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

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

    def count(self, method: str, path: str) -> int:
        """How many requests of ``method`` went to ``path`` (a ``{id}`` part matches any)."""
        pattern = re.compile(re.escape(path).replace(re.escape("{id}"), r"[^/]+") + "$")
        return sum(1 for r in self.requests if r.method == method and pattern.match(r.path))

    def batch(self, batch_id: str) -> dict[str, Any]:
        """The batch object the server would send for ``batch_id`` now (no state changes)."""
        with self._lock:
            return self._batch_object(self._batches[batch_id])

    # -- the batch API ----------------------------------------------------------------------

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    def _create_batch(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        file_id = body.get("input_file_id")
        with self._lock:
            if file_id not in self.files:
                return 404, _error_body(f"no such file: {file_id}")
            plan = self.batch_plans.popleft() if self.batch_plans else self.batch_plan
            batch = _Batch(self._new_id("batch"), str(file_id), plan)
            if body.get("endpoint") != "/v1/chat/completions":
                batch.problems.append(f"endpoint {body.get('endpoint')!r} is not served")
            if body.get("completion_window") != "24h":
                batch.problems.append("completion_window must be 24h")
            self._batches[batch.id] = batch
            return 200, self._batch_object(batch)

    def _retrieve_batch(self, batch_id: str, *, cancel: bool = False) -> tuple[int, dict[str, Any]]:
        with self._lock:
            batch = self._batches.get(batch_id)
        if batch is None:
            return 404, _error_body(f"no such batch: {batch_id}")
        if cancel:
            batch.plan = BatchPlan(("cancelling", "cancelled"), answered=0)
            batch.step = 0
        else:
            batch.step = min(batch.step + 1, len(batch.plan.statuses) - 1)
        if batch.plan.statuses[batch.step] != "validating" and not batch.ran:
            self._run(batch)
        with self._lock:
            return 200, self._batch_object(batch)

    def _run(self, batch: _Batch) -> None:
        """Answer the batch's requests as its plan says, writing its output and error files."""
        batch.ran = True
        lines = [json.loads(raw) for raw in self.files[batch.input_file_id].splitlines() if raw]
        batch.total = len(lines)
        ids = [line.get("custom_id") for line in lines]
        if len(set(ids)) != len(ids):
            batch.problems.append("custom_id values must be unique")
        for line in lines:
            if line.get("method") != "POST" or line.get("url") != "/v1/chat/completions":
                batch.problems.append(f"line {line.get('custom_id')}: wrong method or url")
        end = batch.plan.statuses[-1]
        if end == "failed" or batch.problems:
            batch.plan = BatchPlan(
                (*batch.plan.statuses[: batch.step + 1], "failed"),
                errors=tuple(batch.problems) or batch.plan.errors,
            )
            return
        output: list[bytes] = []
        errors: list[bytes] = []
        for index, line in enumerate(lines):
            custom_id = line.get("custom_id")
            request_id = f"batch_req_{index + 1}"
            if end in ("expired", "cancelled") and index >= batch.plan.answered:
                code = "batch_expired" if end == "expired" else "batch_cancelled"
                message = (
                    "This request could not be executed before the completion window expired."
                    if end == "expired"
                    else "This request was not executed: the batch was cancelled."
                )
                entry = {"code": code, "message": message}
                errors.append(
                    _jsonl(
                        {"id": request_id, "custom_id": custom_id, "response": None, "error": entry}
                    )
                )
                batch.failed += 1
                continue
            body = line.get("body") or {}
            request = Request(body, {}, time.monotonic(), line.get("url", ""), "POST")
            with self._lock:
                self.batch_requests.append(request)
            reply = self._next_reply(request)
            if reply.status == 200 and reply.raw_body is None:
                response = {
                    "status_code": 200,
                    "request_id": request_id,
                    "body": _completion(reply, body),
                }
                output.append(
                    _jsonl(
                        {
                            "id": request_id,
                            "custom_id": custom_id,
                            "response": response,
                            "error": None,
                        }
                    )
                )
                batch.ok += 1
            else:
                error = _error_body(reply.error_message, reply.error_code)
                response = {"status_code": reply.status, "request_id": request_id, "body": error}
                errors.append(
                    _jsonl(
                        {
                            "id": request_id,
                            "custom_id": custom_id,
                            "response": response,
                            "error": None,
                        }
                    )
                )
                batch.failed += 1
        with self._lock:
            if output:
                batch.output_file_id = self._new_id("file-out")
                self.files[batch.output_file_id] = b"".join(output)
            if errors:
                batch.error_file_id = self._new_id("file-err")
                self.files[batch.error_file_id] = b"".join(errors)

    def _batch_object(self, batch: _Batch) -> dict[str, Any]:
        status = batch.plan.statuses[batch.step]
        done = status in ("finalizing", "completed", "expired", "cancelled", "failed")
        # Halfway while in progress: the progress display has counts that move.
        completed = batch.ok if done else batch.ok // 2
        failed = batch.failed if done else batch.failed // 2
        ended = status in ("completed", "expired", "cancelled")
        errors = None
        if status == "failed":
            errors = {
                "object": "list",
                "data": [
                    {"code": "invalid_request", "message": m, "line": None}
                    for m in batch.plan.errors
                ],
            }
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "errors": errors,
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": status,
            "output_file_id": batch.output_file_id if ended else None,
            "error_file_id": batch.error_file_id if ended else None,
            "created_at": 0,
            "request_counts": {"total": batch.total, "completed": completed, "failed": failed},
            "metadata": {},
        }

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

            def do_GET(self) -> None:
                request = Request({}, _headers(self.headers), time.monotonic(), self.path, "GET")
                with server._lock:
                    server.requests.append(request)
                route = self.path.partition("?")[0]  # routed by path, as servers do
                found = re.fullmatch(r"/v1/files/([^/]+)/content", route)
                if found:
                    with server._lock:
                        data = server.files.get(found.group(1))
                    if data is None:
                        self._json(404, _error_body(f"no such file: {found.group(1)}"))
                    else:
                        self._send(200, data, "application/jsonl")
                    return
                found = re.fullmatch(r"/v1/batches/([^/]+)", route)
                if found:
                    self._json(*server._retrieve_batch(found.group(1)))
                    return
                self._json(404, _error_body(f"no route for GET {self.path}"))

            def _json(self, status: int, data: dict[str, Any]) -> None:
                self._send(status, json.dumps(data).encode(), "application/json")

            def _send(self, status: int, data: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _batch_api(self, raw: bytes) -> bool:
                """Answer a request of the batch API; False for any other path."""
                headers = _headers(self.headers)
                route = self.path.partition("?")[0]  # routed by path, as servers do
                if route == "/v1/files":
                    fields = _multipart(raw, self.headers.get("Content-Type", ""))
                    name, data = fields.get("file", ("", b""))
                    purpose = fields.get("purpose", ("", b""))[1].decode()
                    body = {"purpose": purpose, "filename": name, "bytes": len(data)}
                    with server._lock:
                        server.requests.append(Request(body, headers, time.monotonic(), self.path))
                        file_id = server._new_id("file")
                        server.files[file_id] = data
                    if purpose != "batch":
                        self._json(400, _error_body(f"purpose must be 'batch', not {purpose!r}"))
                        return True
                    self._json(
                        200,
                        {
                            "id": file_id,
                            "object": "file",
                            "bytes": len(data),
                            "filename": name,
                            "purpose": purpose,
                        },
                    )
                    return True
                cancel = re.fullmatch(r"/v1/batches/([^/]+)/cancel", route)
                if route != "/v1/batches" and not cancel:
                    return False
                body = json.loads(raw or b"{}")
                with server._lock:
                    server.requests.append(Request(body, headers, time.monotonic(), self.path))
                if cancel:
                    self._json(*server._retrieve_batch(cancel.group(1), cancel=True))
                else:
                    self._json(*server._create_batch(body))
                return True

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                if self._batch_api(raw):
                    return
                body = json.loads(raw or b"{}")
                request = Request(body, _headers(self.headers), time.monotonic(), self.path)
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
                        if reply.hold_after is not None and count + 1 == reply.hold_after:
                            log.released = reply.release.wait(30.0)
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


def gzip_bomb(size: int) -> bytes:
    """A gzip body that expands to ``size`` bytes of a JSON-looking prefix and spaces.

    Sent as ``Reply(raw_body=..., headers={"Content-Encoding": "gzip"})``: about a
    thousandth of ``size`` on the wire.
    """
    return gzip.compress(b'{"choices": [' + b" " * size + b"]}", compresslevel=9)


def _contents(reply: Reply, body: dict[str, Any]) -> list[str | None]:
    n = int(body.get("n") or 1)
    return reply.content if isinstance(reply.content, list) else [reply.content] * n


def _reasonings(reply: Reply) -> dict[str, str]:
    """The reasoning fields of each choice's message: name -> text."""
    fields = {"reasoning_content": reply.reasoning_content, "reasoning": reply.reasoning}
    return {name: text for name, text in fields.items() if text is not None}


def _chunks(reply: Reply, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of a streamed reply, OpenAI's shape."""

    def chunk(
        index: int, delta: dict[str, Any], finish: str | None = None, token: int = 0
    ) -> dict[str, Any]:
        choice = {"index": index, "delta": delta, "finish_reason": finish}
        if body.get("logprobs") and delta.get("content"):
            entries = (
                [reply.logprobs[index][token]]
                if reply.logprobs
                else token_logprobs(delta["content"], size, token)
            )
            choice["logprobs"] = _logprobs_object(entries, reply.legacy)
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", "test"),
            "choices": [choice],
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
        if reply.logprobs and body.get("logprobs"):  # one scripted token per chunk
            for position, entry in enumerate(reply.logprobs[index]):
                chunks.append(chunk(index, {"content": entry["token"]}, token=position))
        else:
            for start in range(0, len(text or ""), size):
                piece = (text or "")[start : start + size]
                chunks.append(chunk(index, {"content": piece}, token=start // size))
        for position, call in enumerate(reply.tool_calls or ()):
            # As OpenAI streams a call: its id and name first, then its arguments in pieces.
            function = call["function"]
            arguments = function["arguments"]
            first = {"index": position, "id": call["id"], "type": "function"}
            first["function"] = {"name": function["name"], "arguments": arguments[:size]}
            chunks.append(chunk(index, {"tool_calls": [first]}))
            for start in range(size, len(arguments), size):
                rest = {
                    "index": position,
                    "function": {"arguments": arguments[start : start + size]},
                }
                chunks.append(chunk(index, {"tool_calls": [rest]}))
        chunks.append(chunk(index, {}, reply.finish_reason))
    if (body.get("stream_options") or {}).get("include_usage"):
        last = chunk(0, {})
        last["choices"] = []
        last["usage"] = reply.usage
        chunks.append(last)
    return chunks


def token_logprobs(text: str, size: int, first: int = 0) -> list[dict[str, Any]]:
    """OpenAI's ``logprobs.content`` for a text whose tokens are its pieces of ``size``.

    ``first`` is the place of the text's first token in the whole completion (a stream's
    chunk): the log probabilities depend on it, so pieces put back in order are checkable.
    """
    pieces = [text[start : start + size] for start in range(0, len(text), size)]
    return [
        {
            "token": piece,
            "logprob": -0.5 * (i % 3),
            "bytes": list(piece.encode()),
            "top_logprobs": [{"token": piece, "logprob": -0.5 * (i % 3), "bytes": None}],
        }
        for i, piece in enumerate(pieces, start=first)
    ]


def _logprobs_object(entries: list[dict[str, Any]], legacy: bool) -> dict[str, Any]:
    """A choice's ``logprobs``: OpenAI's chat shape, or the legacy one (`legacy_logprobs`)."""
    return legacy_logprobs(entries) if legacy else {"content": entries}


def legacy_logprobs(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """OpenAI chat entries in the legacy completions shape llama-cpp-python sends.

    The shape of ``llama_cpp.llama_types.CompletionLogprobs``, built in
    ``Llama._create_completion`` (``llama_cpp/llama.py``, abetlen/llama-cpp-python at
    3691546f1c9e0c1bf93323dff02230bd959cf562): ``tokens``, ``text_offset`` (where each
    token starts in the text), ``token_logprobs``, and ``top_logprobs`` as one dict of
    token -> logprob per token, which holds the chosen token too.
    """
    offsets, at = [], 0
    for entry in entries:
        offsets.append(at)
        at += len(entry["token"])
    tops = []
    for entry in entries:
        top = {alt["token"]: alt["logprob"] for alt in entry.get("top_logprobs") or ()}
        top[entry["token"]] = entry["logprob"]
        tops.append(top)
    return {
        "tokens": [entry["token"] for entry in entries],
        "text_offset": offsets,
        "token_logprobs": [entry["logprob"] for entry in entries],
        "top_logprobs": tops,
    }


def _completion(reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
    contents = _contents(reply, body)
    message: dict[str, Any] = {"role": "assistant", **_reasonings(reply)}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    choices = [
        {"index": i, "message": {**message, "content": text}, "finish_reason": reply.finish_reason}
        for i, text in enumerate(contents)
    ]
    if body.get("logprobs"):  # asked for, as OpenAI sends them: one entry per token
        for i, (choice, text) in enumerate(zip(choices, contents, strict=True)):
            entries = (
                reply.logprobs[i]
                if reply.logprobs
                else token_logprobs(text or "", reply.chunk_size)
            )
            choice["logprobs"] = _logprobs_object(entries, reply.legacy)
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "test"),
        "choices": choices,
        "usage": reply.usage,
    }


def _error_body(message: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "error", "code": code}}


def _jsonl(data: dict[str, Any]) -> bytes:
    return json.dumps(data).encode() + b"\n"


def _multipart(raw: bytes, content_type: str) -> dict[str, tuple[str, bytes]]:
    """The fields of a ``multipart/form-data`` body: name -> (file name, bytes)."""
    found = re.search(r"boundary=\"?([^\";]+)", content_type)
    if found is None:
        return {}
    fields: dict[str, tuple[str, bytes]] = {}
    for part in raw.split(b"--" + found.group(1).encode()):
        head, separator, data = part.partition(b"\r\n\r\n")
        if not separator:
            continue
        text = head.decode("utf-8", "replace")
        name = re.search(r'name="([^"]*)"', text)
        filename = re.search(r'filename="([^"]*)"', text)
        if name:
            value = data[:-2] if data.endswith(b"\r\n") else data
            fields[name.group(1)] = (filename.group(1) if filename else "", value)
    return fields
