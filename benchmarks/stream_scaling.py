"""Streaming as the work grows: per-chunk cost against line length, items as they complete.

Three measurements, in this one run, each printed as a table and its target marked met or
missed (informational: the exit code is 0):

1. Per-chunk CPU of each adapter's stream reader (``adapter.stream_reader(sig)`` fed the
   completion in 4-character chunks, then ``finish``) when the ``str`` output is one
   unbroken line, at 500 and at 20,000 chunks: a reader that rereads or copies the
   unfinished line per chunk costs more per chunk as the line grows. Target: the per-chunk
   CPU at 20,000 chunks at most 1.2x that at 500, for every adapter (Chat, JSON, XML,
   Compact, and ToolOutput, whose reader is fed the answer tool's argument deltas). The
   two sizes are interleaved round by round; medians over rounds.
2. A 600 KB ``str`` answer (one unbroken line, ChatAdapter) streamed in 4-character chunks
   by a loopback server (`_loopback_stream.py`, in its own process, sending without
   delay): client CPU (``time.process_time``) of structio's ``Predict.stream`` on the
   direct transport against raw httpx reading the same SSE lines (the floor), interleaved
   round by round. Target: at most 3x the floor.
3. Time to the first ``FieldItem`` of a 50-item ``list[str]`` through ``Predict.stream``,
   the server sending one 4-character chunk every 2 ms, against the time to the whole
   answer. Target: at most 1/20 of it.

Run: python benchmarks/stream_scaling.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from _loopback_stream import list_items, long_content
from calls import Targets
from streaming import API_KEY, loopback, model_name, sse_texts

import structio as sio

QUESTION = "Write it."
CHUNK = 4


@dataclass(frozen=True)
class Settings:
    """How much to measure."""

    rounds: int
    chunks: tuple[int, int]  # the short and the long line, in chunks
    long_answer: int  # characters of the `str` answer streamed through Predict.stream
    latency_rounds: int
    items: int
    delay_ms: float


FULL = Settings(
    rounds=7, chunks=(500, 20_000), long_answer=600_000, latency_rounds=5, items=50, delay_ms=2.0
)
QUICK = Settings(
    rounds=1, chunks=(100, 1_000), long_answer=8_000, latency_rounds=1, items=10, delay_ms=1.0
)
ADAPTERS: dict[str, sio.Adapter] = {
    "ChatAdapter": sio.ChatAdapter(),
    "JSONAdapter": sio.JSONAdapter(),
    "XMLAdapter": sio.XMLAdapter(),
    "CompactAdapter": sio.CompactAdapter(),
    "ToolOutputAdapter": sio.ToolOutputAdapter(),
}


def _cpu(run: Callable[[], object]) -> float:
    start = time.process_time()
    run()
    return time.process_time() - start


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.2f} µs"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms"


# -- 1. each adapter's reader ---------------------------------------------------------------


def _completion(adapter: sio.Adapter, sig: type[sio.Signature], chunks: int) -> str:
    """The adapter's completion whose answer is one line, about ``chunks`` chunks long.

    For `ToolOutputAdapter`, the answer tool's arguments (which its reader is fed).
    """
    words = "lorem ipsum dolor sit amet consectetur "
    line = (words * (chunks * CHUNK // len(words) + 1))[: chunks * CHUNK]
    if isinstance(adapter, sio.ToolOutputAdapter):
        return json.dumps({"answer": line})
    record = adapter.format_finetune_data(sig, [], {"question": QUESTION}, {"answer": line})
    return str(record["messages"][-1]["content"])


def _feeder(adapter: sio.Adapter) -> Callable[[Any, str], list[sio.StreamEvent]]:
    """How a piece reaches the reader: as text, or as the answer tool's argument delta."""
    if isinstance(adapter, sio.ToolOutputAdapter):
        name = adapter.tool_name
        return lambda reader, part: reader.feed_call(0, name, part)  # type: ignore[no-any-return]
    return lambda reader, part: reader.feed(part)  # type: ignore[no-any-return]


def _reading(adapter: sio.Adapter, sig: type[sio.Signature], chunks: int) -> Callable[[], int]:
    text = _completion(adapter, sig, chunks)
    parts = [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)]
    values = adapter.parse(sig, text)
    feed = _feeder(adapter)

    def run() -> int:
        reader = adapter.stream_reader(sig)
        for part in parts:
            feed(reader, part)
        reader.finish(values)
        return len(parts)

    # Checked once: the deltas join to the answer, which comes whole.
    reader = adapter.stream_reader(sig)
    events = [e for part in parts for e in feed(reader, part)] + reader.finish(values)
    deltas = "".join(e.delta for e in events if isinstance(e, sio.FieldDelta))
    if deltas != values["answer"] or any(isinstance(e, sio.Reread) for e in events):
        raise RuntimeError(f"{type(adapter).__name__}: the stream does not give the answer")
    return run


def reader_scaling(settings: Settings, targets: Targets) -> None:
    """Per-chunk CPU of each adapter's reader at the two line lengths."""
    sig = sio.Signature("question -> answer")
    short, long = settings.chunks
    runs = {
        (name, n): _reading(adapter, sig, n)
        for name, adapter in ADAPTERS.items()
        for n in (short, long)
    }
    times: dict[tuple[str, int], list[float]] = {key: [] for key in runs}
    for round_ in range(settings.rounds):
        keys = list(runs)
        keys = keys[round_ % len(keys) :] + keys[: round_ % len(keys)]  # the order rotated
        for key in keys:
            times[key].append(_cpu(runs[key]) / key[1])
    print(
        f"## Per-chunk CPU of each stream reader: one unbroken line, {CHUNK}-character "
        f"chunks, median of {settings.rounds} rounds\n"
        f"\n| adapter | {short:,} chunks | {long:,} chunks | ratio |\n|---|---:|---:|---:|"
    )
    for name in ADAPTERS:
        a = statistics.median(times[(name, short)])
        b = statistics.median(times[(name, long)])
        print(f"| {name} | {_us(a)} | {_us(b)} | {b / a:.2f}x |")
        targets.check(
            f"{name}: per-chunk CPU at {long:,} chunks / at {short:,}", b / a, 1.2, at_most=True
        )
    print()


# -- 2. a long answer through Predict.stream ------------------------------------------------


def _raw_httpx(url: str, model: str, messages: list[dict[str, Any]]) -> Callable[[], str]:
    import httpx

    client = httpx.Client(timeout=600)
    headers = {"authorization": f"Bearer {API_KEY}"}
    body = {"model": model.removeprefix("openai/"), "messages": messages, "stream": True}

    def run() -> str:
        with client.stream(
            "POST", f"{url}/chat/completions", json=body, headers=headers
        ) as response:
            return "".join(sse_texts(response.iter_lines()))

    return run


def _predict_stream(predict: sio.Predict) -> Callable[[], str]:
    def run() -> str:
        deltas = []
        with predict.stream(question=QUESTION) as stream:
            for event in stream:
                if isinstance(event, sio.FieldDelta):
                    deltas.append(event.delta)
        if "".join(deltas) != stream.result.answer:
            raise RuntimeError("Predict.stream: the deltas do not join to the answer")
        return "".join(deltas)

    return run


def long_answer(settings: Settings, targets: Targets) -> None:
    """Predict.stream of a long one-line answer against raw httpx reading its SSE lines."""
    size = settings.long_answer
    model = model_name(0).replace("test", f"test-long{size}")
    sig = sio.Signature("question -> answer")
    with loopback(CHUNK) as server:
        lm = sio.LM(model, api_base=server.url, api_key=API_KEY, cache=False, transport="direct")
        predict = sio.Predict(sig, lm=lm)
        messages = [dict(m) for m in sio.ChatAdapter().format(sig, [], {"question": QUESTION})]
        systems = {
            "raw httpx, SSE lines (the floor)": _raw_httpx(server.url, model, messages),
            "structio Predict.stream (direct)": _predict_stream(predict),
        }
        expected = long_content(size).split("\n")[1]
        for name, run in systems.items():  # warmed up and checked
            text = run()
            if expected not in text:
                raise RuntimeError(f"{name}: not the answer")
        times: dict[str, list[float]] = {name: [] for name in systems}
        for round_ in range(settings.rounds):
            order = list(systems)[round_ % 2 :] + list(systems)[: round_ % 2]
            for name in order:
                times[name].append(_cpu(systems[name]))
    chunks = len(long_content(size)) // CHUNK
    print(
        f"## A {size:,}-character answer on one line in {CHUNK}-character chunks "
        f"(about {chunks:,}): client CPU per call, median of {settings.rounds} rounds\n"
        "\n| system | CPU / call | CPU / chunk | / floor |\n|---|---:|---:|---:|"
    )
    floor = statistics.median(times["raw httpx, SSE lines (the floor)"])
    for name, values in times.items():
        cpu = statistics.median(values)
        print(f"| {name} | {_ms(cpu)} | {_us(cpu / chunks)} | {cpu / floor:.2f}x |")
    ratio = statistics.median(times["structio Predict.stream (direct)"]) / floor
    targets.check(f"{size:,}-char answer: Predict.stream CPU / raw httpx", ratio, 3.0, at_most=True)
    print()


# -- 3. the first item of a list ------------------------------------------------------------


def first_item(settings: Settings, targets: Targets) -> None:
    """Wall time to the first FieldItem of a list, and to the whole answer."""
    count = settings.items
    model = model_name(settings.delay_ms).replace("test", f"test-list{count}")
    sig = sio.Signature("question -> items: list[str]")
    expected = list_items(count)
    firsts: list[float] = []
    wholes: list[float] = []
    with loopback(CHUNK) as server:
        lm = sio.LM(model, api_base=server.url, api_key=API_KEY, cache=False, transport="direct")
        predict = sio.Predict(sig, lm=lm)
        for round_ in range(settings.latency_rounds + 1):  # the first is a warm-up
            start = time.perf_counter()
            first = None
            items = []
            with predict.stream(question=QUESTION) as stream:
                for event in stream:
                    if isinstance(event, sio.FieldItem):
                        if first is None:
                            first = time.perf_counter() - start
                        items.append(event.value)
            whole = time.perf_counter() - start
            if items != expected or stream.result.items != expected or first is None:
                raise RuntimeError("Predict.stream: the items are not the list's")
            if round_:
                firsts.append(first)
                wholes.append(whole)
    first_ms, whole_ms = statistics.median(firsts), statistics.median(wholes)
    print(
        f"## A {count}-item list[str] (ChatAdapter, a JSON array on one line), one "
        f"{CHUNK}-character chunk every {settings.delay_ms:g} ms: wall time, median of "
        f"{settings.latency_rounds} rounds\n"
        "\n| through | first FieldItem | whole answer | first / whole |\n|---|---:|---:|---:|"
    )
    ratio = first_ms / whole_ms
    print(f"| structio Predict.stream (direct) | {_ms(first_ms)} | {_ms(whole_ms)} | {ratio:.3f} |")
    targets.check(
        f"{count}-item list: time to the first item / to the whole answer (x = fraction)",
        ratio,
        1 / 20,
        at_most=True,
    )
    print()


def main() -> None:
    """Run the three measurements and print their tables and targets."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (small sizes)")
    settings = QUICK if parser.parse_args().quick else FULL
    targets = Targets()
    reader_scaling(settings, targets)
    long_answer(settings, targets)
    first_item(settings, targets)
    targets.print()


if __name__ == "__main__":
    main()
