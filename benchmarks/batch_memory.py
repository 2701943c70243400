"""`Predict.batch` over many inputs: peak memory and bytes per item.

A batch of ``question -> answer: int`` calls answered by a `FakeLM` (no network), its
inputs streamed from a Python generator. Each figure comes from a fresh process, so a peak
is that run's alone: the growth of the process's peak resident memory (``ru_maxrss``) in
one run, and Python's own allocations (``tracemalloc``: the peak during the batch, and what
is still held once it returned, the list of predictions) in another, since tracing costs
memory of its own. What the batch must hold is its results; everything above that is
overhead that grows with the input count unless inputs are streamed.

Run: python benchmarks/batch_memory.py [--quick] [--count N] [--concurrency N]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

ANSWER = "[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]"


def questions(count: int) -> Iterator[dict[str, Any]]:
    for i in range(count):
        yield {"question": f"What is {i} + {i}? Answer with the number only, please."}


def child(count: int, concurrency: int, mode: str) -> None:
    """One measured run; prints a JSON line with the figures."""
    import structio as sio

    predict = sio.Predict("question -> answer: int", lm=sio.FakeLM(lambda _messages: ANSWER))
    # What the process holds before the run: the interpreter, pydantic, a warm call path.
    predict.batch(questions(50), max_concurrency=concurrency, progress=False)
    figures: dict[str, Any] = {"count": count, "structio": sio.__file__}
    if mode == "tracemalloc":
        tracemalloc.start()
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
    baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    results = predict.batch(questions(count), max_concurrency=concurrency, progress=False)
    figures["seconds"] = time.perf_counter() - start
    if mode == "tracemalloc":
        held, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        figures["peak_bytes"] = peak - before
        figures["held_bytes"] = held - before
    else:
        # ru_maxrss is in KiB on Linux.
        figures["rss_growth_bytes"] = (
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - baseline_kib
        ) * 1024
    figures["failed"] = sum(isinstance(r, BaseException) for r in results)
    print(json.dumps(figures))


def measure(count: int, concurrency: int, mode: str) -> dict[str, Any]:
    options = ["--child", mode, "--count", str(count), "--concurrency", str(concurrency)]
    done = subprocess.run(
        [sys.executable, __file__, *options],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        sys.exit(f"the measured run failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5,000 inputs instead of 100,000")
    parser.add_argument("--count", type=int, help="how many inputs")
    parser.add_argument("--concurrency", type=int, default=8, help="max_concurrency")
    parser.add_argument("--child", choices=["rss", "tracemalloc"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    count = args.count or (5_000 if args.quick else 100_000)
    if args.child:
        child(count, args.concurrency, args.child)
        return

    rss = measure(count, args.concurrency, "rss")
    traced = measure(count, args.concurrency, "tracemalloc")
    mib = 1024 * 1024
    print(
        f"Predict.batch over {count:,} generated inputs, FakeLM, max_concurrency={args.concurrency}"
    )
    print(f"  structio from                {rss['structio']}")
    print(f"  time (untraced run)          {rss['seconds']:8.2f} s")
    print(
        f"  peak RSS growth              {rss['rss_growth_bytes'] / mib:8.1f} MiB"
        f"  ({rss['rss_growth_bytes'] / count:,.0f} bytes per item)"
    )
    print(
        f"  tracemalloc peak             {traced['peak_bytes'] / mib:8.1f} MiB"
        f"  ({traced['peak_bytes'] / count:,.0f} bytes per item)"
    )
    print(
        f"  held after it returned       {traced['held_bytes'] / mib:8.1f} MiB"
        f"  ({traced['held_bytes'] / count:,.0f} bytes per item)"
    )
    overhead = traced["peak_bytes"] - traced["held_bytes"]
    print(
        f"  peak above the results       {overhead / mib:8.1f} MiB"
        f"  ({overhead / count:,.0f} bytes per item)"
    )
    if rss["failed"] or traced["failed"]:
        print(f"  failed items: {rss['failed']} and {traced['failed']}")


if __name__ == "__main__":
    main()
