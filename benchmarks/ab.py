"""structio against an earlier structio: the same workloads on two source trees, interleaved.

A change is "no worse than before" only if it says so on a shared, noisy machine. Here each
round runs one fresh child process per tree, in alternating order, and each child measures
its own CPU time (``time.process_time``); the report gives the median per tree and the
median of the per-round ratios (after / before), so slow drift of the machine cancels out.

Workloads, each in its own child:

- ``import``: ``import structio`` in a fresh interpreter (the child's CPU time to the end
  of the import; bytecode compiled first for both trees);
- ``Predict, scripted``: a ``Predict("question -> answer")`` call with a scripted LM
  (structio's own test double), µs per call;
- ``Predict, direct`` and ``LM call, direct``: the same call over the direct transport to
  a loopback OpenAI-compatible server (`_loopback.py`, in its own process), caches off.

Run: python benchmarks/ab.py --before ../old/src [--after src] [--rounds 15]
(make the "before" tree with ``git worktree add ../old <commit>``)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

IMPORT = "import time\nimport structio\nprint(time.process_time() * 1e6)\n"

_CALLS = """
import time, structio as sio
{setup}
p = sio.Predict("question -> answer", lm=lm)
q = "What is the capital of France?"
for _ in range(50):
    {call}
samples = []
for _ in range(7):
    start = time.process_time()
    for _ in range({n}):
        {call}
    samples.append((time.process_time() - start) / {n} * 1e6)
samples.sort()
print(samples[len(samples) // 2])
"""

SCRIPTED = 'lm = sio.FakeLM(["[[ ## answer ## ]]\\nParis\\n\\n[[ ## completed ## ]]"] * 10**5)'
DIRECT = 'lm = sio.LM("openai/test", api_base={url!r}, api_key="k", cache=False)'


def workloads(url: str) -> dict[str, str]:
    """Child code for each workload, by name."""
    return {
        "import": IMPORT,
        "Predict, scripted": _CALLS.format(setup=SCRIPTED, call="p(question=q)", n=300),
        "Predict, direct": _CALLS.format(setup=DIRECT.format(url=url), call="p(question=q)", n=100),
        "LM call, direct": _CALLS.format(
            setup=DIRECT.format(url=url),
            call='lm([{"role": "user", "content": q}])',
            n=100,
        ),
    }


def child(source: Path, code: str) -> float:
    """Run ``code`` with ``source`` first on the path; what it printed, as a number."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return float(done.stdout.split()[-1])


def main() -> None:
    """Measure every workload on both trees, interleaved, and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the earlier src/ folder")
    parser.add_argument("--after", type=Path, default=HERE.parent / "src")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    for tree in trees.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree)], check=True)
    server = subprocess.Popen(
        [sys.executable, str(HERE / "_loopback.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().strip() if server.stdout else ""
        results: dict[str, dict[str, list[float]]] = {}
        for name, code in workloads(url).items():
            times: dict[str, list[float]] = {"before": [], "after": []}
            for round_ in range(args.rounds):
                order = ["before", "after"] if round_ % 2 == 0 else ["after", "before"]
                for which in order:
                    times[which].append(child(trees[which], code))
            results[name] = times
    finally:
        server.terminate()
        server.wait()
    unit = {"import": "ms"}
    print(f"Median of {args.rounds} rounds; the trees alternate within each round.\n")
    print("| workload | before | after | after / before (median of rounds) |")
    print("|---|---:|---:|---:|")
    for name, times in results.items():
        scale = 1e-3 if unit.get(name) == "ms" else 1.0
        shown = unit.get(name, "µs")
        ratios = [a / b for a, b in zip(times["after"], times["before"], strict=True)]
        print(
            f"| {name} | {statistics.median(times['before']) * scale:,.1f} {shown} "
            f"| {statistics.median(times['after']) * scale:,.1f} {shown} "
            f"| {statistics.median(ratios):.3f} |"
        )


if __name__ == "__main__":
    main()
