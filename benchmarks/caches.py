"""Caches past their size: the render cache and the token count cache, as their load grows.

Three curves, each point measured on its own cache (a signature, or a tokenizer, of its
own), the points of a curve measured in interleaved rounds, CPU time (``process_time``),
medians:

- *history*: ``ChatAdapter.format`` of one chat whose History has 1,000 to 8,000 turns,
  formatted again and again (as a chat server does every turn): time per call and per turn;
- *chats*: K chats of 100 turns each on one signature, formatted round-robin (a server with
  K conversations open), K from 10 to 100: time per call;
- *counts*: a tokenizer (o200k_base) counting 1,000 to 32,000 distinct texts (20 to 300
  words, about 200 tokens) over and over, in the same order: time per count.

Every curve also gives the memory its cache keeps: what is still allocated (tracemalloc)
after the first, cold, round, the inputs themselves excluded. A cache that fits its load
costs the same per turn, chat or text whatever the load; one that does not falls off a cliff
where the load outgrows it. One more curve gives the render cache a budget of 4 MiB (about
2,500 of these turns) to show what happens past it: a history read in full on every call
then misses on every turn, as with any LRU, and each turn costs what rendering it costs,
however long the history.

Run: python benchmarks/caches.py [--quick]
Against other code: PYTHONPATH=/path/to/other/checkout/src python benchmarks/caches.py
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

import structio as sio
from structio.rendering.tokens import Tokenizer, get_tokenizer

_VOCABULARY = (
    "the a an of to and in is it for on with as at by from this that be are was or not "
    "your my our their we you they order refund charge invoice account plan billing card "
    "payment month week day time support team help question answer reply thanks please "
    "issue problem error page login password email address update change cancel renew "
    "price discount pro free trial upgrade downgrade export report data file upload "
    "download share access user admin setting option feature request bug fix release "
    "version mobile app web browser server network slow fast again still never always "
    "today yesterday tomorrow soon later now here there because when where why how what "
    "could would should might will can did does have has had get got make made see saw"
)
WORDS = _VOCABULARY.split()


def sentence(rng: random.Random, low: int, high: int) -> str:
    """Between ``low`` and ``high`` words of plain English-like text."""
    return " ".join(rng.choices(WORDS, k=rng.randint(low, high))).capitalize() + "."


def median_ms(samples: Sequence[float]) -> float:
    """The median of samples in seconds, in milliseconds."""
    return statistics.median(samples) * 1e3


def retained(action: Callable[[], Any]) -> int:
    """Bytes still allocated after ``action()``: what the caches it filled keep."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    action()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return after - before


def interleaved(cases: Sequence[Callable[[], Any]], rounds: int) -> list[list[float]]:
    """CPU seconds of each case per round, the cases taking turns within every round."""
    samples: list[list[float]] = [[] for _ in cases]
    for _ in range(rounds):
        for index, case in enumerate(cases):
            start = time.process_time()
            case()
            samples[index].append(time.process_time() - start)
    return samples


def cache_bytes(owner: Any) -> str:
    """The cache's own estimate of its size, where the code measured has one."""
    size = getattr(owner, "nbytes", None)
    if size is None:
        size = getattr(owner, "cache_bytes", None)
    return "—" if size is None else f"{size / 2**20:.1f} MiB"


def history_curve(sizes: Sequence[int], rounds: int) -> None:
    """``format`` of one chat with a long History, per size of the History."""
    rng = random.Random(1)
    adapter = sio.ChatAdapter()
    turns = [
        {"question": f"Turn {i}: {sentence(rng, 5, 40)}", "answer": sentence(rng, 5, 60)}
        for i in range(max(sizes))
    ]
    calls = []
    memory = []
    sigs = []
    for size in sizes:
        sig = sio.make_signature("question, history: History -> answer")  # a cache of its own
        inputs = {"question": "And now?", "history": sio.History(turns[:size])}

        def call(sig: Any = sig, inputs: dict[str, Any] = inputs) -> Any:
            return adapter.format(sig, [], inputs)

        memory.append(retained(call))
        calls.append(call)
        sigs.append(sig)
    samples = interleaved(calls, rounds)
    print("\n| history turns | per call | per turn | cache memory | cache's estimate |")
    print("|---:|---:|---:|---:|---:|")
    for size, times, kept, sig in zip(sizes, samples, memory, sigs, strict=True):
        per_call = median_ms(times)
        print(
            f"| {size:,} | {per_call:.2f} ms | {per_call * 1e3 / size:.2f} µs "
            f"| {kept / 2**20:.1f} MiB | {cache_bytes(adapter._plan(sig).rendered)} |"
        )


def past_budget_curve(sizes: Sequence[int], budget: int, rounds: int) -> None:
    """The history curve with a render cache of ``budget`` bytes, to see past its size."""
    import inspect

    from structio.rendering.memo import RenderCache

    if "max_bytes" not in inspect.signature(RenderCache).parameters:
        print(f"\n(this code's render cache has no byte budget: no curve past {budget:,} bytes)")
        return
    rng = random.Random(1)
    adapter = sio.ChatAdapter()
    turns = [
        {"question": f"Turn {i}: {sentence(rng, 5, 40)}", "answer": sentence(rng, 5, 60)}
        for i in range(max(sizes))
    ]
    calls = []
    for size in sizes:
        sig = sio.make_signature("question, history: History -> answer")
        adapter._plan(sig).rendered = RenderCache(max_bytes=budget)
        inputs = {"question": "And now?", "history": sio.History(turns[:size])}

        def call(sig: Any = sig, inputs: dict[str, Any] = inputs) -> Any:
            return adapter.format(sig, [], inputs)

        call()
        calls.append(call)
    samples = interleaved(calls, rounds)
    print(f"\n| history turns, cache of {budget / 2**20:.0f} MiB | per call | per turn |")
    print("|---:|---:|---:|")
    for size, times in zip(sizes, samples, strict=True):
        per_call = median_ms(times)
        print(f"| {size:,} | {per_call:.2f} ms | {per_call * 1e3 / size:.2f} µs |")


def chats_curve(counts: Sequence[int], turns: int, rounds: int) -> None:
    """K chats on one signature, formatted round-robin, per K."""
    rng = random.Random(2)
    adapter = sio.ChatAdapter()
    histories = [
        sio.History(
            [
                {
                    "question": f"Chat {c}, turn {i}: {sentence(rng, 5, 40)}",
                    "answer": sentence(rng, 5, 60),
                }
                for i in range(turns)
            ]
        )
        for c in range(max(counts))
    ]
    rounds_of = []
    memory = []
    sigs = []
    for count in counts:
        sig = sio.make_signature("question, history: History -> answer")

        def one_round(sig: Any = sig, count: int = count) -> None:
            for history in histories[:count]:
                adapter.format(sig, [], {"question": "And now?", "history": history})

        memory.append(retained(one_round))
        rounds_of.append(one_round)
        sigs.append(sig)
    samples = interleaved(rounds_of, rounds)
    print(
        f"\n| chats ({turns} turns each) | per call | per turn | cache memory | cache's estimate |"
    )
    print("|---:|---:|---:|---:|---:|")
    for count, times, kept, sig in zip(counts, samples, memory, sigs, strict=True):
        per_call = median_ms(times) / count
        print(
            f"| {count} | {per_call:.3f} ms | {per_call * 1e3 / turns:.2f} µs "
            f"| {kept / 2**20:.1f} MiB | {cache_bytes(adapter._plan(sig).rendered)} |"
        )


def counts_curve(sizes: Sequence[int], rounds: int) -> None:
    """A tokenizer counting N distinct texts over and over, per N."""
    import tiktoken

    get_tokenizer()  # loads o200k_base from litellm's files; tiktoken keeps it
    encoding = tiktoken.get_encoding("o200k_base")

    def encode(text: str) -> list[int]:
        tokens: list[int] = encoding.encode(text, disallowed_special=())
        return tokens

    rng = random.Random(3)
    texts = [f"{i}. {sentence(rng, 20, 300)}" for i in range(max(sizes))]
    tokens = sum(len(encode(t)) for t in texts[:1000]) / 1000
    passes = []
    memory = []
    cold = []
    tokenizers = []
    for size in sizes:
        tokenizer = Tokenizer(encode, "o200k_base")  # a cache of its own, default bounds
        batch = texts[:size]

        def one_pass(tokenizer: Tokenizer = tokenizer, batch: list[str] = batch) -> None:
            count = tokenizer.count
            for text in batch:
                count(text)

        start = time.process_time()
        one_pass()
        cold.append((time.process_time() - start) / size)
        tokenizer.clear()
        memory.append(retained(one_pass))
        passes.append(one_pass)
        tokenizers.append(tokenizer)
    samples = interleaved(passes, rounds)
    print(
        f"\n| distinct texts (~{tokens:.0f} tokens) | cold, per count | again, per count "
        "| cache memory | per text | cache's estimate |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for size, times, kept, first, tokenizer in zip(
        sizes, samples, memory, cold, tokenizers, strict=True
    ):
        print(
            f"| {size:,} | {first * 1e6:.1f} µs | {median_ms(times) * 1e3 / size:.2f} µs "
            f"| {kept / 2**20:.1f} MiB | {kept / size / 1024:.2f} KiB | {cache_bytes(tokenizer)} |"
        )


def main() -> None:
    """Print the three curves as Markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer points and rounds")
    args = parser.parse_args()
    rounds = 3 if args.quick else 7
    print(f"structio from {sio.__file__}; median of {rounds} interleaved rounds, CPU time")
    if args.quick:
        history_curve([1_000, 4_000, 6_000], rounds)
        past_budget_curve([1_000, 4_000, 6_000], 4 * 2**20, rounds)
        chats_curve([10, 40, 45, 100], 100, rounds)
        counts_curve([1_000, 16_000, 20_000], rounds)
    else:
        history_curve([1_000, 2_000, 3_000, 4_000, 4_096, 4_200, 5_000, 6_000, 8_000], rounds)
        past_budget_curve([1_000, 2_000, 2_500, 3_000, 4_000, 6_000, 8_000], 4 * 2**20, rounds)
        chats_curve([10, 20, 30, 40, 41, 45, 50, 60, 80, 100], 100, rounds)
        counts_curve([1_000, 2_000, 4_000, 8_000, 16_000, 16_384, 17_000, 24_000, 32_000], rounds)


if __name__ == "__main__":
    main()
