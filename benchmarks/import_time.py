"""How long ``import structio`` takes in a fresh interpreter, and what it loads.

Each round starts a new interpreter for ``pass`` and one for ``import structio``, in turn,
so both see the same machine load; the figures are the medians of the differences (start-up
subtracted), with bytecode already written, as an installed package runs: wall time, and
CPU time (user + system of the child), which a busy machine disturbs far less. It also says
whether the import loads pydantic, litellm, httpx or logging (it should load none), how
long the first model-map lookup takes (litellm's map, read without importing litellm), and
lists the slowest modules of one run by ``python -X importtime``.

    python benchmarks/import_time.py [--rounds 21] [--module structio]

The figure is the one README.md and benchmarks/README.md state.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

HEAVY = ("pydantic", "litellm", "httpx", "logging")


def run(code: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one fresh interpreter running code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--module", default="structio")
    args = parser.parse_args()
    module = args.module

    # As installed packages are used: with bytecode written once and read after.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    run(f"import {module}", env)

    walls, cpus = [], []
    for _ in range(args.rounds):
        bare_wall, bare_cpu = run("pass", env)
        wall, cpu = run(f"import {module}", env)
        walls.append(wall - bare_wall)
        cpus.append(cpu - bare_cpu)
    print(f"import {module}, Python {sys.version.split()[0]}, median of {args.rounds} rounds:")
    for what, values in (("wall", walls), ("CPU", cpus)):
        print(
            f"  {what}: {statistics.median(values) * 1e3:.0f} ms "
            f"({min(values) * 1e3:.0f} to {max(values) * 1e3:.0f} ms)"
        )

    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys, {module}; print(*(m in sys.modules for m in {HEAVY!r}))",
        ],
        check=True,
        env=env,
        capture_output=True,
        text=True,
    ).stdout.split()
    print("loads " + ", ".join(f"{name}: {flag}" for name, flag in zip(HEAVY, loaded, strict=True)))

    # The model map (context windows, prices) is read from litellm's package without
    # importing litellm, once per process, at the first lookup.
    map_code = (
        "import time, structio.lm.models as m; t = time.perf_counter(); m.model_map(); "
        "print(time.perf_counter() - t)"
    )
    reads = [
        float(
            subprocess.run(
                [sys.executable, "-c", map_code], check=True, env=env, capture_output=True
            ).stdout
        )
        for _ in range(max(3, args.rounds // 3))
    ]
    print(f"first model-map lookup: {statistics.median(reads) * 1e3:.0f} ms (median)")

    report = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        check=True,
        env=env,
        capture_output=True,
        text=True,
    ).stderr
    rows = []
    for line in report.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    print("slowest imports (cumulative µs, one run):")
    for total, name in sorted(rows, reverse=True)[:8]:
        print(f"  {total:>8,}  {name}")


if __name__ == "__main__":
    main()
