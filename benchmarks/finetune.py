"""Writing finetune JSONL: rows per second, and peak memory as the row count grows.

Each measurement runs in a fresh process (so peak memory is that run's alone): examples
of the quickstart's Triage signature (tickets of 5 to 40 words), streamed from a Python
generator or read from a JSONL file, written with every check on (types, read-back,
token counts, duplicates). Peak memory must not grow with the row count.

Run: python benchmarks/finetune.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORDS = (  # noqa: SIM905 - a vocabulary reads best as one text
    "charged twice refund app crash login error invoice dark mode export csv slow page card "
    "declined account password reset email phone delivery late missing order discount"
).split()


def examples(count: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(7)
    for i in range(count):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 40)))
        yield {
            "ticket": f"#{i} {words}",
            "category": rng.choice(["billing", "bug", "other"]),
            "urgency": rng.randint(1, 5),
        }


def child(count: int, source: str, adapter: str, workdir: Path) -> None:
    """One measured run; prints a JSON line with the figures."""
    sys.path.insert(0, str(ROOT / "examples"))
    from quickstart import Triage  # type: ignore[import-not-found]

    import structio as sio
    from structio import finetune

    data: Any = examples(count)
    if source == "jsonl":
        data = workdir / f"examples-{count}.jsonl"
    chosen = sio.JSONAdapter() if adapter == "json" else sio.ChatAdapter()
    # What the process holds before the run: the interpreter, pydantic, tiktoken's tables.
    finetune.write_jsonl(Triage, list(examples(50)), workdir / "warm.jsonl", adapter=chosen)
    baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    summary = finetune.write_jsonl(Triage, data, workdir / "out.jsonl", adapter=chosen)
    seconds = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    figures = {
        "rows": summary.written,
        "seconds": seconds,
        "peak_mib": peak_kib / 1024,
        "growth_mib": (peak_kib - baseline_kib) / 1024,
    }
    print(json.dumps(figures))


def measure(count: int, source: str, adapter: str, workdir: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(count), source, adapter, str(workdir)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        sys.exit(f"the measured run failed:\n{done.stderr}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10x fewer rows (a smoke run)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        count, source, adapter, workdir = args.child
        child(int(count), source, adapter, Path(workdir))
        return
    counts = (1_000, 10_000) if args.quick else (10_000, 100_000)
    print("| rows | examples from | adapter | rows/s | peak memory | growth during the run |")
    print("|---:|---|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for count in counts:
            with (workdir / f"examples-{count}.jsonl").open("w", encoding="utf-8") as handle:
                for row in examples(count):
                    handle.write(json.dumps(row) + "\n")
        for source, adapter in (("generator", "chat"), ("jsonl", "chat"), ("jsonl", "json")):
            for count in counts:
                r = measure(count, source, adapter, workdir)
                rate = r["rows"] / r["seconds"]
                print(
                    f"| {int(r['rows']):,} | {source} | {adapter} | {rate:,.0f} | "
                    f"{r['peak_mib']:.0f} MiB | {r['growth_mib']:.1f} MiB |"
                )


if __name__ == "__main__":
    main()
