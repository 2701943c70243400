"""Anthropic's Message Batches API on 127.0.0.1, for tests of structio's Anthropic batches.

A real HTTP server in a background thread, answering as ``api.anthropic.com`` does:
``POST /v1/messages/batches`` (the requests inline; each checked against the anthropic
SDK's own request types, as the API checks them: a bad one refuses the whole batch with a
400 ``invalid_request_error``), ``GET /v1/messages/batches/{id}`` (a Message Batch object;
``processing_status`` moves one step per poll as an `AnthropicPlan` says),
``GET /v1/messages/batches/{id}/results`` (JSON Lines, once the batch has ended, in an order
of its own: results are matched by ``custom_id``) and ``POST .../cancel``. Requests without
the key or the ``anthropic-version`` header are refused as the API refuses them.

Each request of a batch is answered by ``handler(params)``: a Message dict (`message`, or a
recorded one), or an error body (`error_body`) for an ``errored`` result. Tests script HTTP
failures of the batch endpoints with ``faults`` and read back every request in
``requests``.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.wire.providers.anthropic_server import check_request, message

#: The key the server accepts.
KEY = "test-anthropic-key"
_CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
# The SDK's request type (anthropic 2.14) no longer lists the sampling parameters, which
# the Messages API still takes (and the Messages API of structio sends) for the models
# that have them: they are checked here, the rest by the SDK's type.
_SAMPLING = {"temperature": float, "top_p": float, "top_k": int}
_CREATED = "2026-11-27T10:00:00Z"


def error_body(kind: str, text: str) -> dict[str, Any]:
    """An error response body of Anthropic's (``kind``: ``invalid_request_error``...)."""
    return {"type": "error", "error": {"type": kind, "message": text}}


@dataclass
class AnthropicPlan:
    """How the server runs one batch.

    ``statuses`` are the processing statuses it reports: the first at its creation, then
    one more at each poll, staying at the last (which must be ``ended``). ``expire_after``
    answers only that many requests; the rest are ``expired`` results. A cancel moves the
    batch to ``canceling`` then ``ended``, every request after the first ``answered`` being
    ``canceled``.
    """

    statuses: tuple[str, ...] = ("in_progress", "in_progress", "ended")
    expire_after: int | None = None
    answered: int = 0


@dataclass
class Fault:
    """An HTTP failure of the next request to ``method`` ``path`` (a regular expression)."""

    method: str
    path: str
    status: int
    body: dict[str, Any]


@dataclass
class _Batch:
    id: str
    requests: list[dict[str, Any]]
    plan: AnthropicPlan
    step: int = 0
    results: list[dict[str, Any]] = field(default_factory=list)
    cancel_initiated_at: str | None = None


@dataclass
class Received:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class AnthropicBatchServer:
    """Serves the Message Batches endpoints; `handler` answers each request of a batch."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.handler: Callable[[dict[str, Any]], dict[str, Any]] = lambda params: message()
        #: How the next batches go, one plan per batch created; then ``plan``.
        self.plans: deque[AnthropicPlan] = deque()
        self.plan = AnthropicPlan()
        #: HTTP failures to answer, each once, to the first request that matches.
        self.faults: list[Fault] = []
        self.batches: dict[str, _Batch] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """The API base (as ``https://api.anthropic.com``): the server's root."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> AnthropicBatchServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def count(self, method: str, path: str) -> int:
        """How many requests of ``method`` went to ``path`` (a regular expression)."""
        return sum(1 for r in self.requests if r.method == method and re.fullmatch(path, r.path))

    @property
    def sent(self) -> list[dict[str, Any]]:
        """Every request of every batch created, in order."""
        return [request for batch in self.batches.values() for request in batch.requests]

    # -- the API --------------------------------------------------------------------------

    def _create(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            return 400, error_body("invalid_request_error", "requests: at least 1 is required")
        seen: set[str] = set()
        for index, request in enumerate(requests):
            problem = _problem(request)
            if problem is None and request["custom_id"] in seen:
                problem = f"custom_id {request['custom_id']!r} is not unique"
            if problem is not None:
                return 400, error_body("invalid_request_error", f"requests.{index}: {problem}")
            seen.add(request["custom_id"])
        with self._lock:
            plan = self.plans.popleft() if self.plans else self.plan
            batch = _Batch(f"msgbatch_{next(self._ids):04d}", requests, plan)
            self.batches[batch.id] = batch
            return 200, self._object(batch)

    def _retrieve(self, batch_id: str, *, cancel: bool = False) -> tuple[int, dict[str, Any]]:
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return 404, error_body("not_found_error", f"no batch {batch_id}")
            status = batch.plan.statuses[batch.step]
            if cancel:
                if status == "ended":
                    return 400, error_body("invalid_request_error", "the batch has ended")
                kept = batch.plan.answered
                batch.plan = AnthropicPlan(("canceling", "ended"), answered=kept)
                batch.step = 0
                batch.cancel_initiated_at = _CREATED
            else:
                batch.step = min(batch.step + 1, len(batch.plan.statuses) - 1)
            if batch.plan.statuses[batch.step] == "ended" and not batch.results:
                self._run(batch)
            return 200, self._object(batch)

    def _run(self, batch: _Batch) -> None:
        """Answer each request as the plan says (run on the server's lock)."""
        canceled = batch.cancel_initiated_at is not None
        for index, request in enumerate(batch.requests):
            result: dict[str, Any]
            if canceled and index >= batch.plan.answered:
                result = {"type": "canceled"}
            elif batch.plan.expire_after is not None and index >= batch.plan.expire_after:
                result = {"type": "expired"}
            else:
                answer = self.handler(request["params"])
                if answer.get("type") == "error":
                    result = {"type": "errored", "error": answer}
                else:
                    result = {"type": "succeeded", "message": answer}
            batch.results.append({"custom_id": request["custom_id"], "result": result})

    def _results(self, batch_id: str) -> tuple[int, bytes]:
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None or not batch.results:
                body = error_body("not_found_error", f"batch {batch_id} has no results yet")
                return 404, json.dumps(body).encode()
            # The API gives results in an order of its own: last first here.
            lines = [json.dumps(result) for result in reversed(batch.results)]
        return 200, ("\n".join(lines) + "\n").encode()

    def _object(self, batch: _Batch) -> dict[str, Any]:
        status = batch.plan.statuses[batch.step]
        ended = status == "ended"
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        if ended:
            for line in batch.results:
                counts[line["result"]["type"]] += 1
        else:
            counts["processing"] = len(batch.requests)
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": status,
            "request_counts": counts,
            "created_at": _CREATED,
            "expires_at": "2026-11-28T10:00:00Z",
            "ended_at": _CREATED if ended else None,
            "archived_at": None,
            "cancel_initiated_at": batch.cancel_initiated_at,
            "results_url": (
                f"{self.base_url}/v1/messages/batches/{batch.id}/results" if ended else None
            ),
        }

    def _fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.method == method and re.fullmatch(fault.path, path):
                    self.faults.remove(fault)
                    return fault
        return None

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                """Stay quiet: tests read the recorded requests instead."""

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else {}
                path = self.path.partition("?")[0]
                headers = {k.lower(): v for k, v in self.headers.items()}
                with server._lock:
                    server.requests.append(Received(method, path, headers, body))
                if headers.get("x-api-key") != KEY:
                    error = error_body("authentication_error", "invalid x-api-key")
                    self._json(401, error)
                    return
                if headers.get("anthropic-version") != "2023-06-01":
                    error = error_body("invalid_request_error", "anthropic-version: required")
                    self._json(400, error)
                    return
                fault = server._fault(method, path)
                if fault is not None:
                    self._json(fault.status, fault.body)
                    return
                self._route(method, path, body)

            def _route(self, method: str, path: str, body: dict[str, Any]) -> None:
                if method == "POST" and path == "/v1/messages/batches":
                    self._json(*server._create(body))
                    return
                found = re.fullmatch(r"/v1/messages/batches/([^/]+)(/results|/cancel)?", path)
                if found is None:
                    self._json(404, error_body("not_found_error", f"no route {path}"))
                    return
                batch_id, tail = found.group(1), found.group(2)
                if method == "GET" and tail is None:
                    self._json(*server._retrieve(batch_id))
                elif method == "POST" and tail == "/cancel":
                    self._json(*server._retrieve(batch_id, cancel=True))
                elif method == "GET" and tail == "/results":
                    status, data = server._results(batch_id)
                    kind = "application/binary" if status == 200 else "application/json"
                    self._send(status, data, kind)
                else:
                    self._json(405, error_body("invalid_request_error", f"{method} {path}"))

            def _json(self, status: int, data: dict[str, Any]) -> None:
                self._send(status, json.dumps(data).encode(), "application/json")

            def _send(self, status: int, data: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _problem(request: Any) -> str | None:
    """What is wrong with one request of a batch, as the API would refuse it; None if valid."""
    if not isinstance(request, dict) or set(request) != {"custom_id", "params"}:
        return "a request is {custom_id, params}, and nothing else"
    if not _CUSTOM_ID.fullmatch(str(request["custom_id"])):
        return f"custom_id {request['custom_id']!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$"
    params = dict(request["params"]) if isinstance(request["params"], dict) else None
    if params is None:
        return "params: not an object"
    if params.get("stream"):
        return "params.stream: a batch request cannot stream"
    for name, kind in _SAMPLING.items():
        value = params.pop(name, None)
        if value is not None and not isinstance(value, (kind, int)):
            return f"params.{name}: not a number"
    try:
        check_request(params)
    except ValueError as exc:  # pydantic's ValidationError is one
        return f"params: {exc}"
    return None
