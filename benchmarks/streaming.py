"""Streaming: structio's ``Predict.stream`` against DSPy 3.4.1's ``streamify``, one server.

One loopback OpenAI-compatible server (`_loopback_stream.py`, in its own process, so its
CPU is never counted here and it never holds this process's GIL) streams every answer as
Server-Sent Events: a ChatAdapter answer for ``question -> reasoning, answer`` (a
reasoning of about 1,500 characters, a short answer) in content chunks of 4 characters,
about a token each. Against it, in this one run:

- time to the first complete field: wall time from the start of a call to the moment
  the ``reasoning`` output is known complete (structio: its `FieldValue`; DSPy: the
  `StreamResponse` of a ``StreamListener("reasoning")`` with ``is_last_chunk=True``), and
  to the first text of it shown (structio's first `FieldDelta`, DSPy's first
  `StreamResponse`), with the server sending one content chunk every 2 ms, so that the
  stream's own pace dominates. The server sends on a fixed schedule, so each time is
  also shown as a lag after the chunk that made it knowable was sent;
- CPU per chunk: client CPU time (``time.process_time``, every thread of this process)
  of a whole streamed call, the server sending without delay, divided by the number of
  content chunks: raw httpx reading the SSE lines (the floor), structio's ``LM.stream``
  alone, its ``Predict.stream`` on each transport, raw ``litellm.completion(stream=True)``
  (the floor of structio's litellm path), DSPy's ``streamify`` with a listener on
  ``reasoning`` (synchronous, as ``async_streaming=False`` gives it, and an async
  program read as an async generator), and structio's ``Predict.astream``.

Systems are interleaved round by round (the order rotated), medians over rounds, each
warmed up and its output checked first (every field's streamed text, the final
prediction). Caches are off everywhere, and the server counts requests to prove it: every
call must make exactly one. Then the targets, each marked met or missed (informational:
the exit code is 0). Systems that are not installed (DSPy, litellm) are left out; a DSPy
system that fails is reported as such, with its error, and left out of the tables.

Run: python benchmarks/streaming.py [--quick]     (pip install -r benchmarks/requirements.txt)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline, before any import

from _loopback_stream import ANSWER, CHUNK_SIZE, CONTENT, REASONING, pieces
from calls import Targets, _ratio, import_dspy, import_litellm

import structio as sio

HERE = Path(__file__).resolve().parent
SPEC = "question -> reasoning, answer"
QUESTION = "Why is the sky blue?"
API_KEY = "k"
FIELD = "reasoning"  # the field whose completion is timed
CLOSES_FIELD = "[[ ## answer ## ]]"  # the marker after which the reasoning cannot change


@dataclass(frozen=True)
class Settings:
    """How much to measure."""

    cpu_rounds: int
    block_seconds: float  # CPU time one block of calls aims at
    latency_rounds: int
    delay_ms: float  # between content chunks, for the latency measurement
    warm_calls: int  # checked calls per system before timing, after 3 first ones


FULL = Settings(cpu_rounds=11, block_seconds=0.25, latency_rounds=9, delay_ms=2.0, warm_calls=5)
QUICK = Settings(cpu_rounds=1, block_seconds=0.01, latency_rounds=1, delay_ms=2.0, warm_calls=1)


# -- the server ---------------------------------------------------------------------------


class Loopback:
    """The streaming server in a child process: its ``url`` and its request count."""

    def __init__(self, chunk_size: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "_loopback_stream.py"), "--chunk-size", str(chunk_size)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        if not self.url.startswith("http://"):
            self.close()
            raise RuntimeError("the loopback server did not start")
        self._stats = self.url.rsplit("/v1", 1)[0] + "/_stats"

    def requests(self) -> int:
        """Chat completions served so far."""
        with urllib.request.urlopen(self._stats, timeout=10) as response:
            return int(json.load(response)["requests"])

    def close(self) -> None:
        """Stop the server (closing its stdin ends it) and wait for it."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            self.process.wait(timeout=10)


@contextlib.contextmanager
def loopback(chunk_size: int) -> Iterator[Loopback]:
    """A running `Loopback`, stopped on exit."""
    server = Loopback(chunk_size)
    try:
        yield server
    finally:
        server.close()


def model_name(delay_ms: float) -> str:
    """The model name that asks the server for ``delay_ms`` between content chunks."""
    return f"openai/test-delay-{delay_ms:g}ms" if delay_ms else "openai/test"


def sse_texts(lines: Iterable[str]) -> list[str]:
    """The content pieces of an OpenAI chat-completions SSE stream, read as raw httpx would."""
    texts = []
    for line in lines:
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        for choice in json.loads(line[6:])["choices"]:
            content = choice["delta"].get("content")
            if content:
                texts.append(content)
    return texts


# -- what a call gives --------------------------------------------------------------------


@dataclass
class Outcome:
    """What one streamed call gave, checked once per system before it is timed.

    Attributes:
        streamed: The streamed text joined: the whole completion for a raw client or an
            LM, the ``reasoning`` deltas for a predictor.
        reasoning: The final ``reasoning`` (None for a raw client or an LM).
        answer: The final ``answer`` (None for a raw client or an LM).
        pieces: How many pieces of text the stream gave.
        completions: How many times the ``reasoning`` was given as complete.
    """

    streamed: str
    reasoning: str | None = None
    answer: str | None = None
    pieces: int = 0
    completions: int = 1


@dataclass
class Timing:
    """Seconds from the start of one call: first text shown, field complete, the end."""

    first_delta: float
    complete: float
    total: float


Call = Callable[[], Outcome]
Timed = Callable[[], Timing]


class _Clock:
    """Marks the first delta and the field's completion of one call, from its start."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.first_delta: float | None = None
        self.complete: float | None = None

    def delta(self) -> None:
        if self.first_delta is None:
            self.first_delta = time.perf_counter() - self.start

    def done(self) -> None:
        if self.complete is None:
            self.complete = time.perf_counter() - self.start

    def timing(self, name: str) -> Timing:
        if self.first_delta is None or self.complete is None:
            raise RuntimeError(f"{name}: the stream never showed the {FIELD} field complete")
        return Timing(self.first_delta, self.complete, time.perf_counter() - self.start)


# -- the systems --------------------------------------------------------------------------


def chat_messages() -> list[dict[str, Any]]:
    """The messages structio's ChatAdapter sends for QUESTION."""
    return [dict(m) for m in sio.ChatAdapter().format(SPEC, [], {"question": QUESTION})]


def raw_httpx_systems(url: str) -> tuple[Callable[[float], Call], Callable[[float], Timed]]:
    """Raw httpx reading the SSE stream line by line: a call, and a timed call, per delay."""
    import httpx

    client = httpx.Client(timeout=60)
    headers = {"authorization": f"Bearer {API_KEY}"}
    endpoint = f"{url}/chat/completions"

    def body(delay_ms: float) -> dict[str, Any]:
        return {
            "model": model_name(delay_ms).removeprefix("openai/"),
            "messages": chat_messages(),
            "stream": True,
            "stream_options": {"include_usage": True},
        }

    def call(delay_ms: float) -> Call:
        request = body(delay_ms)

        def run() -> Outcome:
            with client.stream("POST", endpoint, json=request, headers=headers) as response:
                texts = sse_texts(response.iter_lines())
            return Outcome("".join(texts), pieces=len(texts))

        return run

    def timed(delay_ms: float) -> Timed:
        request = body(delay_ms)

        def run() -> Timing:
            clock, text = _Clock(), ""
            with client.stream("POST", endpoint, json=request, headers=headers) as response:
                for line in response.iter_lines():
                    if not line.startswith("data: ") or line == "data: [DONE]":
                        continue
                    for choice in json.loads(line[6:])["choices"]:
                        content = choice["delta"].get("content")
                        if content:
                            # The reasoning's first text follows its marker line.
                            seen = len(text)
                            text += content
                            if len(text) > CONTENT.index(REASONING):
                                clock.delta()
                            if CLOSES_FIELD in text[max(0, seen - len(CLOSES_FIELD)) :]:
                                clock.done()
            return clock.timing("raw httpx")

        return run

    return call, timed


def raw_litellm_call(litellm: Any, url: str) -> Call:
    """Raw ``litellm.completion(stream=True)`` with structio's settings, reading each chunk."""
    chat = chat_messages()

    def run() -> Outcome:
        texts = []
        for chunk in litellm.completion(
            model=model_name(0),
            api_base=url,
            api_key=API_KEY,
            messages=chat,
            stream=True,
            stream_options={"include_usage": True},
            timeout=120.0,
            max_retries=0,
        ):
            if chunk.choices and chunk.choices[0].delta.content:
                texts.append(chunk.choices[0].delta.content)
        return Outcome("".join(texts), pieces=len(texts))

    return run


def structio_predict(url: str, transport: str, delay_ms: float) -> sio.Predict:
    """structio's ``Predict(SPEC)`` on an LM for the server, cache off, on ``transport``."""
    lm = sio.LM(
        model_name(delay_ms), api_base=url, api_key=API_KEY, cache=False, transport=transport
    )
    return sio.Predict(SPEC, lm=lm)


def structio_lm_call(url: str, transport: str) -> Call:
    """structio's ``LM.stream`` alone, on the messages its Predict sends."""
    lm = sio.LM(model_name(0), api_base=url, api_key=API_KEY, cache=False, transport=transport)
    chat = chat_messages()

    def run() -> Outcome:
        texts = []
        for item in lm.stream(chat):
            if isinstance(item, str):
                texts.append(item)
            elif item.text != "".join(texts):
                raise RuntimeError("LM.stream: the response's text is not the pieces joined")
        return Outcome("".join(texts), pieces=len(texts))

    return run


def _structio_outcome(
    deltas: list[str], values: list[Any], prediction: Any, pieces_seen: int
) -> Outcome:
    return Outcome(
        "".join(deltas),
        prediction.reasoning,
        prediction.answer,
        pieces_seen,
        sum(value == REASONING for value in values),
    )


def structio_call(predict: sio.Predict) -> Call:
    """A ``Predict.stream`` call read to its end, keeping the reasoning's deltas."""

    def run() -> Outcome:
        deltas: list[str] = []
        values: list[Any] = []
        count = 0
        with predict.stream(question=QUESTION) as stream:
            for item in stream:
                if isinstance(item, sio.FieldDelta):
                    count += 1
                    if item.field == FIELD:
                        deltas.append(item.delta)
                elif isinstance(item, sio.FieldValue) and item.field == FIELD:
                    values.append(item.value)
        return _structio_outcome(deltas, values, stream.result, count)

    return run


def structio_timed(predict: sio.Predict) -> Timed:
    """A ``Predict.stream`` call: when the first delta and the reasoning's value came."""

    def run() -> Timing:
        clock = _Clock()
        with predict.stream(question=QUESTION) as stream:
            for item in stream:
                if isinstance(item, sio.FieldDelta):
                    clock.delta()
                elif isinstance(item, sio.FieldValue) and item.field == FIELD:
                    clock.done()
        return clock.timing("structio")

    return run


def structio_async(predict: sio.Predict, loop: asyncio.AbstractEventLoop) -> tuple[Call, Timed]:
    """``Predict.astream``, each call run to its end on one event loop kept for all."""

    async def read() -> Outcome:
        deltas: list[str] = []
        values: list[Any] = []
        count = 0
        async with predict.astream(question=QUESTION) as stream:
            async for item in stream:
                if isinstance(item, sio.FieldDelta):
                    count += 1
                    if item.field == FIELD:
                        deltas.append(item.delta)
                elif isinstance(item, sio.FieldValue) and item.field == FIELD:
                    values.append(item.value)
        return _structio_outcome(deltas, values, stream.result, count)

    async def timed(clock: _Clock) -> None:
        async with predict.astream(question=QUESTION) as stream:
            async for item in stream:
                if isinstance(item, sio.FieldDelta):
                    clock.delta()
                elif isinstance(item, sio.FieldValue) and item.field == FIELD:
                    clock.done()

    def run_timed() -> Timing:
        clock = _Clock()
        loop.run_until_complete(timed(clock))
        return clock.timing("structio astream")

    return lambda: loop.run_until_complete(read()), run_timed


def dspy_program(dspy: Any, url: str, delay_ms: float, *, is_async: bool) -> Any:
    """``dspy.streamify(Predict(SPEC))`` with a listener on the reasoning, made once.

    The listener has ``allow_reuse=True``: without it a listener streams one call only,
    and a program made once and called again (as a server would) streams nothing more.
    Synchronous: ``async_streaming=False`` (a sync generator, the program run in DSPy's
    worker threads); async: ``is_async_program=True``, an async generator.
    """
    predict = dspy.Predict(SPEC)
    if delay_ms:
        predict.set_lm(dspy.LM(model_name(delay_ms), api_base=url, api_key=API_KEY, cache=False))
    listener = dspy.streaming.StreamListener(signature_field_name=FIELD, allow_reuse=True)
    if is_async:
        return dspy.streamify(predict, stream_listeners=[listener], is_async_program=True)
    return dspy.streamify(predict, stream_listeners=[listener], async_streaming=False)


def _dspy_outcome(dspy: Any, chunks: list[str], completions: int, prediction: Any) -> Outcome:
    if not isinstance(prediction, dspy.Prediction):
        raise RuntimeError(f"DSPy's stream did not end with a Prediction: {prediction!r}")
    return Outcome(
        "".join(chunks), prediction.reasoning, prediction.answer, len(chunks), completions
    )


def dspy_systems(
    dspy: Any, url: str, loop: asyncio.AbstractEventLoop
) -> tuple[dict[str, Callable[[float], Call]], dict[str, Callable[[float], Timed]]]:
    """DSPy's streamify, sync and async: a call and a timed call, per delay, by label."""
    from dspy.streaming import StreamResponse

    def reading(item: Any, chunks: list[str]) -> bool:
        """Keep a listener's chunk; True if it is the reasoning's last."""
        if isinstance(item, StreamResponse) and item.signature_field_name == FIELD:
            chunks.append(item.chunk)
            return bool(item.is_last_chunk)
        return False

    def sync_call(delay_ms: float) -> Call:
        program = dspy_program(dspy, url, delay_ms, is_async=False)

        def run() -> Outcome:
            chunks: list[str] = []
            last, completions = None, 0
            for item in program(question=QUESTION):
                completions += reading(item, chunks)
                last = item
            return _dspy_outcome(dspy, chunks, completions, last)

        return run

    def sync_timed(delay_ms: float) -> Timed:
        program = dspy_program(dspy, url, delay_ms, is_async=False)

        def run() -> Timing:
            clock, chunks = _Clock(), []
            for item in program(question=QUESTION):
                if isinstance(item, StreamResponse):
                    clock.delta()
                if reading(item, chunks):
                    clock.done()
            return clock.timing("DSPy streamify")

        return run

    def async_call(delay_ms: float) -> Call:
        program = dspy_program(dspy, url, delay_ms, is_async=True)

        async def read() -> Outcome:
            chunks: list[str] = []
            last, completions = None, 0
            async for item in program(question=QUESTION):
                completions += reading(item, chunks)
                last = item
            return _dspy_outcome(dspy, chunks, completions, last)

        return lambda: loop.run_until_complete(read())

    def async_timed(delay_ms: float) -> Timed:
        program = dspy_program(dspy, url, delay_ms, is_async=True)

        async def read(clock: _Clock) -> None:
            chunks: list[str] = []
            async for item in program(question=QUESTION):
                if isinstance(item, StreamResponse):
                    clock.delta()
                if reading(item, chunks):
                    clock.done()

        def run() -> Timing:
            clock = _Clock()
            loop.run_until_complete(read(clock))
            return clock.timing("DSPy streamify (async)")

        return run

    calls = {DSPY_SYNC: sync_call, DSPY_ASYNC: async_call}
    timed = {DSPY_SYNC: sync_timed, DSPY_ASYNC: async_timed}
    return calls, timed


RAW = "raw httpx, SSE lines (the floor)"
RAW_LITELLM = "raw litellm.completion(stream=True)"
LM_DIRECT = "structio LM.stream (direct)"
PREDICT_DIRECT = "structio Predict.stream (direct)"
PREDICT_LITELLM = "structio Predict.stream (litellm)"
ASTREAM_DIRECT = "structio Predict.astream (direct)"
DSPY_SYNC = "DSPy 3.4.1 streamify, sync (async_streaming=False)"
DSPY_ASYNC = "DSPy 3.4.1 streamify, async program"


@dataclass
class Systems:
    """Every system measured, by label: its call (no delay) and its timed call (delayed)."""

    calls: dict[str, Call]
    timed: dict[str, Timed]
    failed: dict[str, str]  # label -> why it is left out


def build_systems(
    url: str,
    dspy: Any | None,
    litellm: Any | None,
    settings: Settings,
    loop: asyncio.AbstractEventLoop,
) -> Systems:
    """Each system, in the order of the tables; DSPy's only where it could be made."""
    delay = settings.delay_ms
    raw_call, raw_timed = raw_httpx_systems(url)
    calls: dict[str, Call] = {RAW: raw_call(0)}
    timed: dict[str, Timed] = {RAW: raw_timed(delay)}
    calls[LM_DIRECT] = structio_lm_call(url, "direct")
    calls[PREDICT_DIRECT] = structio_call(structio_predict(url, "direct", 0))
    timed[PREDICT_DIRECT] = structio_timed(structio_predict(url, "direct", delay))
    calls[ASTREAM_DIRECT], _ = structio_async(structio_predict(url, "direct", 0), loop)
    _, timed[ASTREAM_DIRECT] = structio_async(structio_predict(url, "direct", delay), loop)
    if litellm is not None:
        calls[RAW_LITELLM] = raw_litellm_call(litellm, url)
        calls[PREDICT_LITELLM] = structio_call(structio_predict(url, "litellm", 0))
        timed[PREDICT_LITELLM] = structio_timed(structio_predict(url, "litellm", delay))
    failed: dict[str, str] = {}
    if dspy is not None:
        # The brief of the comparison: DSPy configured globally, its default adapter.
        dspy.configure(lm=dspy.LM(model_name(0), api_base=url, api_key=API_KEY, cache=False))
        dspy_calls, dspy_timed = dspy_systems(dspy, url, loop)
        for label in dspy_calls:
            try:
                calls[label] = dspy_calls[label](0)
                timed[label] = dspy_timed[label](delay)
            except Exception as exc:  # reported, never faked
                failed[label] = f"{type(exc).__name__}: {exc}"
                calls.pop(label, None)
    return Systems(calls, timed, failed)


# -- checking -----------------------------------------------------------------------------


def check(name: str, outcome: Outcome) -> None:
    """Raise unless ``outcome`` is what the server sent, read as the system should."""
    if name in (RAW, RAW_LITELLM, LM_DIRECT):
        if outcome.streamed != CONTENT:
            raise RuntimeError(f"{name}: the streamed text differs from the server's")
        return
    problems = []
    if outcome.streamed != REASONING:
        problems.append(f"streamed reasoning ends {outcome.streamed[-40:]!r}")
    if outcome.reasoning != REASONING:
        problems.append(f"final reasoning {str(outcome.reasoning)[:40]!r}...")
    if outcome.answer != ANSWER:
        problems.append(f"final answer {outcome.answer!r}")
    if outcome.completions != 1:
        problems.append(f"the reasoning given complete {outcome.completions} times")
    if outcome.pieces < 10:
        problems.append(f"only {outcome.pieces} pieces streamed (not streaming?)")
    if problems:
        raise RuntimeError(f"{name}: " + "; ".join(problems))


def warm_and_check(
    server: Loopback, systems: Systems, warm: int
) -> tuple[dict[str, float], dict[str, float]]:
    """Warm each call up, check its output; its CPU per call and requests per call.

    A structio system that fails raises (a bug to see); a DSPy one is left out, with why.
    """
    cpu: dict[str, float] = {}
    requests: dict[str, float] = {}
    for name, call in list(systems.calls.items()):
        try:
            for _ in range(3):  # connections, lazy imports, first-use caches
                outcome = call()
            check(name, outcome)
            timing = systems.timed.get(name)
            if timing is not None:
                timing()  # the delayed LM's own connection and first use
            before, start = server.requests(), time.process_time()
            for _ in range(warm):
                check(name, call())
            cpu[name] = (time.process_time() - start) / warm
            requests[name] = (server.requests() - before) / warm
        except Exception as exc:
            if "DSPy" not in name:
                raise
            systems.failed[name] = f"{type(exc).__name__}: {exc}"
            del systems.calls[name]
            systems.timed.pop(name, None)
    return cpu, requests


# -- measuring ----------------------------------------------------------------------------


@dataclass
class CpuResult:
    """Medians over rounds, in seconds per call."""

    cpu: float
    wall: float
    calls: int  # per block
    requests_per_call: float


def measure_cpu(
    server: Loopback, systems: Systems, settings: Settings
) -> tuple[dict[str, CpuResult], int]:
    """CPU and wall time per streamed call, no delay, interleaved; and chunks per call."""
    chunks = len(pieces(CONTENT, CHUNK_SIZE))
    first, requests = warm_and_check(server, systems, settings.warm_calls)
    blocks = {
        name: max(3, min(200, round(settings.block_seconds / max(cpu, 1e-6))))
        for name, cpu in first.items()
    }
    names = list(systems.calls)
    cpu_samples: dict[str, list[float]] = {name: [] for name in names}
    wall_samples: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(settings.cpu_rounds):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            call, n = systems.calls[name], blocks[name]
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(n):
                call()
            cpu_samples[name].append((time.process_time() - cpu) / n)
            wall_samples[name].append((time.perf_counter() - wall) / n)
    results = {
        name: CpuResult(
            statistics.median(cpu_samples[name]),
            statistics.median(wall_samples[name]),
            blocks[name],
            requests[name],
        )
        for name in names
    }
    return results, chunks


def measure_latency(
    server: Loopback, systems: Systems, settings: Settings
) -> tuple[dict[str, Timing], dict[str, float]]:
    """Times to the first delta and to the field's completion, delayed stream, interleaved."""
    names = list(systems.timed)
    samples: dict[str, list[Timing]] = {name: [] for name in names}
    requests: dict[str, int] = dict.fromkeys(names, 0)
    for round_ in range(settings.latency_rounds):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            before = server.requests()
            samples[name].append(systems.timed[name]())
            requests[name] += server.requests() - before
    results = {
        name: Timing(
            statistics.median(t.first_delta for t in runs),
            statistics.median(t.complete for t in runs),
            statistics.median(t.total for t in runs),
        )
        for name, runs in samples.items()
    }
    per_call = {name: requests[name] / settings.latency_rounds for name in names}
    return results, per_call


def schedule(delay_ms: float) -> tuple[float, float]:
    """When the server sends the chunk that starts the reasoning, and the one that closes it.

    Content chunk ``i`` (from 0) leaves ``(i + 1) * delay`` after the request arrives.
    """
    first = CONTENT.index(REASONING) // CHUNK_SIZE  # the chunk holding its first character
    last = (CONTENT.index(CLOSES_FIELD) + len(CLOSES_FIELD) - 1) // CHUNK_SIZE
    return (first + 1) * delay_ms / 1000, (last + 1) * delay_ms / 1000


# -- reporting ----------------------------------------------------------------------------


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} µs"


def _x(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}x"


def report_latency(
    results: dict[str, Timing],
    requests: dict[str, float],
    settings: Settings,
    targets: Targets,
) -> None:
    """The time-to-first-field table and its targets."""
    first_sent, close_sent = schedule(settings.delay_ms)
    chunks = len(pieces(CONTENT, CHUNK_SIZE))
    print(
        f"## Time to the first complete field: `{FIELD}` ({len(REASONING):,} characters), "
        f"{chunks} content chunks of {CHUNK_SIZE} characters, one every "
        f"{settings.delay_ms:g} ms; wall time, median of {settings.latency_rounds} rounds\n\n"
        f"The server sends the reasoning's first text at {_ms(first_sent)} and the chunk that "
        f"closes it at {_ms(close_sent)}; *lag* is the time after that.\n\n"
        "| system | first delta | lag | field complete | lag | whole call "
        "| complete ÷ DSPy | requests / call |\n|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    dspy = results.get(DSPY_SYNC)
    for name, t in results.items():
        print(
            f"| {name} | {_ms(t.first_delta)} | {_ms(t.first_delta - first_sent)} "
            f"| {_ms(t.complete)} | {_ms(t.complete - close_sent)} | {_ms(t.total)} "
            f"| {_x(_ratio(t.complete, dspy.complete) if dspy else None)} "
            f"| {requests[name]:g} |"
        )
    ours = results[PREDICT_DIRECT]
    complete = _ratio(ours.complete, dspy.complete) if dspy else None
    first = _ratio(ours.first_delta, dspy.first_delta) if dspy else None
    if complete is not None and first is not None:
        print(
            f"\nstructio Predict.stream (direct) / DSPy streamify (sync): first delta "
            f"{first:.2f}x, field complete {complete:.2f}x"
        )
    targets.check(
        f"time to the first complete field, structio (direct) <= DSPy's: {_ms(ours.complete)}"
        f" vs {_ms(dspy.complete) if dspy else '—'}",
        complete,
        1.0,
        at_most=True,
    )
    targets.check(
        f"time to the first delta, structio (direct) <= DSPy's: {_ms(ours.first_delta)} vs "
        f"{_ms(dspy.first_delta) if dspy else '—'}",
        first,
        1.0,
        at_most=True,
    )


def report_cpu(
    results: dict[str, CpuResult], chunks: int, settings: Settings, targets: Targets
) -> None:
    """The CPU-per-chunk table and its targets."""
    print(
        f"\n## CPU per chunk: a whole streamed call ({chunks} content chunks, no delay), "
        f"CPU time of this process over the chunks, median of {settings.cpu_rounds} rounds\n\n"
        "| system | CPU / chunk | CPU / call | wall / call | ÷ raw httpx | ÷ DSPy (sync) "
        "| calls / block | requests / call |\n|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    raw = results[RAW].cpu
    dspy = results.get(DSPY_SYNC)
    for name, r in results.items():
        print(
            f"| {name} | {_us(r.cpu / chunks)} | {_ms(r.cpu)} | {_ms(r.wall)} "
            f"| {r.cpu / raw:.2f}x | {_x(_ratio(r.cpu, dspy.cpu) if dspy else None)} "
            f"| {r.calls} | {r.requests_per_call:g} |"
        )
    ours = results[PREDICT_DIRECT].cpu
    dspy_async = results.get(DSPY_ASYNC)
    for label, other in (("sync", dspy), ("async program", dspy_async)):
        if other is not None:
            print(
                f"\nDSPy streamify ({label}) / structio Predict.stream (direct): "
                f"{other.cpu / ours:.1f}x CPU per chunk"
            )
    targets.check(
        "CPU per chunk, structio Predict.stream (direct) <= 0.5x DSPy streamify (sync)",
        _ratio(ours, dspy.cpu) if dspy else None,
        0.5,
        at_most=True,
    )
    targets.check(
        "CPU per chunk, structio Predict.stream (direct) <= 0.5x DSPy streamify (async program)",
        _ratio(ours, dspy_async.cpu) if dspy_async else None,
        0.5,
        at_most=True,
    )
    litellm = results.get(RAW_LITELLM)
    via_litellm = results.get(PREDICT_LITELLM)
    if litellm is not None and via_litellm is not None:
        print(
            f"\nstructio Predict.stream (litellm) / raw litellm stream: "
            f"{via_litellm.cpu / litellm.cpu:.2f}x CPU"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few calls (a smoke run)")
    args = parser.parse_args()
    settings = QUICK if args.quick else FULL
    warnings.filterwarnings("ignore")
    if not hasattr(sio, "FieldDelta"):
        raise SystemExit(f"structio at {sio.__file__} has no streaming (FieldDelta): too old")
    dspy = import_dspy()
    litellm = import_litellm()
    targets = Targets()
    started = time.perf_counter()
    loop = asyncio.new_event_loop()
    with loopback(CHUNK_SIZE) as server:
        print(f"Loopback server: {server.url} (its own process)")
        print(f"structio {sio.__version__} from {Path(sio.__file__).parent}")
        if dspy is not None:
            print(f"DSPy {dspy.__version__}, its default adapter (ChatAdapter) and engine")
        else:
            print("DSPy: not installed, left out")
        if litellm is None:
            print("litellm: not installed, its rows left out")
        print()
        systems = build_systems(server.url, dspy, litellm, settings, loop)
        cpu, chunks = measure_cpu(server, systems, settings)
        latency, latency_requests = measure_latency(server, systems, settings)
        report_latency(latency, latency_requests, settings, targets)
        report_cpu(cpu, chunks, settings, targets)
        for name, why in systems.failed.items():
            print(f"\n{name}: could not be measured: {why}")
        requests = {name: r.requests_per_call for name, r in cpu.items()}
        for name, value in latency_requests.items():
            requests[f"{name} (delayed)"] = value
        targets.flag(
            "caches off: every call made exactly one request",
            all(v == 1 for v in requests.values()),
            ", ".join(f"{k}: {v:g}" for k, v in requests.items() if v != 1) or "all 1",
        )
    loop.close()
    targets.print()
    print(f"\nThe whole run took {time.perf_counter() - started:.0f} s.")


if __name__ == "__main__":
    main()
