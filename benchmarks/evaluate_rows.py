"""`structio eval` over large prediction files: rows per second, and peak memory.

Each measurement runs the whole command (``structio eval DATA PREDICTIONS --sig Triage
--json --html REPORT``) in a fresh process, so peak memory is that run's alone. The
prediction file is what `structio run` writes for the quickstart's ``Triage`` signature,
rows in shuffled order (as concurrent runs write them), each with a ``_confidence``, a
``_usage`` and a ``_cost``; one row in fifty failed (in the errors file). Memory must not
grow with the rows: the labels go to an on-disk SQLite table and the figures are counts.

Targets, each measured side by side in this run:

- flat memory: the growth of the peak during the run at the largest size is at most
  1.5x that at the smallest size (plus 4 MiB for the allocator's noise);
- linear work: CPU time per row at the largest size is at most 1.3x that at the smallest.

Run: python benchmarks/evaluate_rows.py [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIG = f"{ROOT / 'examples' / 'quickstart.py'}:Triage"
CATEGORIES = ("billing", "bug", "other")


def write_files(count: int, workdir: Path) -> tuple[Path, Path]:
    """The labelled data and a prediction file (with its errors file) of ``count`` rows."""
    rng = random.Random(count)
    data, preds = workdir / f"data-{count}.jsonl", workdir / f"preds-{count}.jsonl"
    errors = workdir / f"preds-{count}.errors.jsonl"
    lines = list(range(1, count + 1))
    rng.shuffle(lines)
    with data.open("w", encoding="utf-8") as handle:
        for line in range(1, count + 1):
            row = {"ticket": f"ticket {line}", "category": CATEGORIES[line % 3], "urgency": 3}
            handle.write(json.dumps(row) + "\n")
    with preds.open("w", encoding="utf-8") as out, errors.open("w", encoding="utf-8") as bad:
        for line in lines:
            if line % 50 == 0:
                bad.write(json.dumps({"line": line, "error": "ParseError: cut off"}) + "\n")
                continue
            sure = rng.random()
            right = rng.random() < sure
            category = CATEGORIES[line % 3] if right else CATEGORIES[(line + 1) % 3]
            row = {
                "line": line,
                "inputs": {"ticket": f"ticket {line}"},
                "outputs": {"category": category, "urgency": rng.choice((2, 3, 3, 3))},
                "model": "openai/gpt-4o-mini",
                "adapter": "ChatAdapter",
                "_confidence": {"category": sure},
                "_usage": {"prompt_tokens": 180, "completion_tokens": 12},
                "_cost": 0.0000342,
            }
            out.write(json.dumps(row) + "\n")
    return data, preds


def child(data: Path, preds: Path, workdir: Path) -> None:
    """One measured run of the command; prints a JSON line with the figures."""
    from structio.cli import main

    def run(rows_file: Path, report: Path) -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(
                ["eval", str(data), str(rows_file), "--sig", SIG, "--json", "--html", str(report)]
            )
        if code:
            sys.exit(f"structio eval exited {code}")

    # What the process holds before the run: the interpreter, pydantic, the signature.
    warm = workdir / "warm.jsonl"
    with preds.open(encoding="utf-8") as handle:
        warm.write_text("".join(next(handle) for _ in range(50)), encoding="utf-8")
    run(warm, workdir / "warm.html")
    baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu, wall = time.process_time(), time.perf_counter()
    run(preds, workdir / "report.html")
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(
        json.dumps(
            {
                "cpu": cpu,
                "wall": wall,
                "peak_mib": peak_kib / 1024,
                "growth_mib": (peak_kib - baseline_kib) / 1024,
            }
        )
    )


def measure(data: Path, preds: Path, workdir: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(data), str(preds), str(workdir)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        sys.exit(f"the measured run failed:\n{done.stderr}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="100x fewer rows (a smoke run)")
    parser.add_argument("--rounds", type=int, default=3, help="runs per size (medians)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        data, preds, workdir = (Path(arg) for arg in args.child)
        child(data, preds, workdir)
        return
    counts = (100, 1_000) if args.quick else (10_000, 100_000)
    rounds = 1 if args.quick else args.rounds
    figures: dict[int, list[dict[str, float]]] = {count: [] for count in counts}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        files = {count: write_files(count, workdir) for count in counts}
        for _ in range(rounds):  # sizes interleaved round by round
            for count in counts:
                figures[count].append(measure(*files[count], workdir))
    print(f"## structio eval: {', '.join(f'{c:,}' for c in counts)} rows, {rounds} rounds")
    print("| rows | CPU s | rows/s (CPU) | rows/s (wall) | peak memory | growth during the run |")
    print("|---:|---:|---:|---:|---:|---:|")
    medians = {}
    for count in counts:
        runs = figures[count]
        m = {key: _median([r[key] for r in runs]) for key in runs[0]}
        medians[count] = m
        print(
            f"| {count:,} | {m['cpu']:.2f} | {count / m['cpu']:,.0f} | {count / m['wall']:,.0f} "
            f"| {m['peak_mib']:.0f} MiB | {m['growth_mib']:.1f} MiB |"
        )
    small, large = medians[counts[0]], medians[counts[-1]]
    growth_ratio = (large["growth_mib"] + 1) / (small["growth_mib"] + 1)
    flat = large["growth_mib"] <= 1.5 * small["growth_mib"] + 4
    per_row = (large["cpu"] / counts[-1]) / (small["cpu"] / counts[0])
    print(
        f"memory growth, largest / smallest (+1 MiB each): {growth_ratio:.2f} "
        f"(target <= 1.5x + 4 MiB): {'met' if flat else 'missed'}"
    )
    print(
        f"CPU per row, largest / smallest: {per_row:.2f} "
        f"(target <= 1.3): {'met' if per_row <= 1.3 else 'missed'}"
    )


if __name__ == "__main__":
    main()
