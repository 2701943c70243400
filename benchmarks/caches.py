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
- *window* (``--window`` alone): a sliding window of the last N turns (100, 1,000) of a
  conversation growing a turn a call, against a growing chat of N turns and DSPy's
  ``ChatAdapter.format`` of the window: time per call, and whether the window costs at
  most 1.5x the growing chat at 1,000 turns.

Every curve also gives the memory its cache keeps: what is still allocated (tracemalloc)
after the first, cold, round, the inputs themselves excluded. A cache that fits its load
costs the same per turn, chat or text whatever the load; one that does not falls off a cliff
where the load outgrows it. One more curve gives the render cache a budget of 4 MiB (about
2,500 of these turns) to show what happens past it: a history read in full on every call
then misses on every turn, as with any LRU, and each turn costs what rendering it costs,
however long the history.

Run: python benchmarks/caches.py [--quick] [--window]
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


def window_curve(sizes: Sequence[int], calls: int, rounds: int) -> None:
    """A sliding window of N turns against a growing chat of N turns, and DSPy's format.

    Each call of the *window* formats the last N turns of a conversation that grew by one
    turn since the previous call: every turn but the newest was seen before, one place
    later. Each call of the *growing chat* formats a chat of the same length whose newest
    turn is new and whose other turns stand where they stood (a chat that grows by one turn
    a call, held at N). DSPy 3.4.1's `ChatAdapter.format` of the window, where installed.
    """
    try:
        import dspy
    except ImportError:
        dspy = None
    rng = random.Random(4)
    adapter = sio.ChatAdapter()
    total = max(sizes) + calls * (rounds + 1)
    turns = [
        {"question": f"Turn {i}: {sentence(rng, 5, 40)}", "answer": sentence(rng, 5, 60)}
        for i in range(total)
    ]
    newest = [
        {"question": f"New turn {i}: {sentence(rng, 5, 40)}", "answer": sentence(rng, 5, 60)}
        for i in range(calls * (rounds + 1))
    ]
    if dspy is not None:
        theirs_sig = dspy.make_signature(
            {
                "question": (str, dspy.InputField()),
                "history": (dspy.History, dspy.InputField()),
                "answer": (str, dspy.OutputField()),
            }
        )
        theirs_adapter = dspy.ChatAdapter()
    print(
        f"\n| turns | window, per call | per turn | growing chat, per call | per turn "
        f"| window / growing | DSPy {getattr(dspy, '__version__', '—')}, per call "
        "| DSPy / window |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        window_sig = sio.make_signature("question, history: History -> answer")
        growing_sig = sio.make_signature("question, history: History -> answer")

        def window(call: int, sig: Any = window_sig, size: int = size) -> Any:
            history = sio.History(turns[call + 1 : call + 1 + size])
            return adapter.format(sig, [], {"question": "And now?", "history": history})

        def growing(call: int, sig: Any = growing_sig, size: int = size) -> Any:
            history = sio.History([*turns[: size - 1], newest[call]])
            return adapter.format(sig, [], {"question": "And now?", "history": history})

        def dspy_window(call: int, size: int = size) -> Any:
            history = dspy.History(messages=turns[call + 1 : call + 1 + size])
            return theirs_adapter.format(
                theirs_sig, [], {"question": "And now?", "history": history}
            )

        cases: list[Callable[[int], Any]] = [window, growing]
        if dspy is not None:
            cases.append(dspy_window)
        # The chat so far, as a running chat has it: every turn but the next one seen.
        adapter.format(window_sig, [], {"question": "?", "history": sio.History(turns[:size])})
        adapter.format(growing_sig, [], {"question": "?", "history": sio.History(turns[:size])})
        samples: list[list[float]] = [[] for _ in cases]
        for round_ in range(rounds + 1):
            first = round_ * calls  # every call has turns of its own, across rounds
            for index, case in enumerate(cases):
                for call in range(first, first + calls):
                    start = time.process_time()
                    case(call)
                    if round_:  # the first round warms up
                        samples[index].append(time.process_time() - start)
        slid, grew = median_ms(samples[0]), median_ms(samples[1])
        theirs = (
            f"{median_ms(samples[2]):.2f} ms | {median_ms(samples[2]) / slid:.1f}x"
            if dspy
            else "— | —"
        )
        print(
            f"| {size:,} | {slid:.3f} ms | {slid * 1e3 / size:.2f} µs | {grew:.3f} ms "
            f"| {grew * 1e3 / size:.2f} µs | {slid / grew:.2f}x | {theirs} |"
        )
        if size >= 1_000:
            verdict = "met" if slid <= 1.5 * grew else "MISSED"
            print(f"\ntarget (window ≤ 1.5x growing chat at {size:,} turns): {verdict}")


def main() -> None:
    """Print the curves as Markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer points and rounds")
    parser.add_argument("--window", action="store_true", help="the sliding window only")
    args = parser.parse_args()
    rounds = 3 if args.quick else 7
    print(f"structio from {sio.__file__}; median of {rounds} interleaved rounds, CPU time")
    if args.window:
        window_curve([100, 1_000], 10, rounds)
        return
    if args.quick:
        history_curve([1_000, 4_000, 6_000], rounds)
        past_budget_curve([1_000, 4_000, 6_000], 4 * 2**20, rounds)
        chats_curve([10, 40, 45, 100], 100, rounds)
        counts_curve([1_000, 16_000, 20_000], rounds)
        window_curve([100, 1_000], 10, rounds)
    else:
        history_curve([1_000, 2_000, 3_000, 4_000, 4_096, 4_200, 5_000, 6_000, 8_000], rounds)
        past_budget_curve([1_000, 2_000, 2_500, 3_000, 4_000, 6_000, 8_000], 4 * 2**20, rounds)
        chats_curve([10, 20, 30, 40, 41, 45, 50, 60, 80, 100], 100, rounds)
        counts_curve([1_000, 2_000, 4_000, 8_000, 16_000, 16_384, 17_000, 24_000, 32_000], rounds)
        window_curve([100, 1_000], 10, rounds)


if __name__ == "__main__":
    main()
