"""`benchmarks/flat_costs.py --quick` runs (loopback only, DSPy if installed) and prints targets."""

from __future__ import annotations

from tests.benchmarks._quick import run_quick


def test_flat_costs_benchmark_quick_prints_every_target() -> None:
    out = run_quick("flat_costs.py")
    headings = ("## Predict.batch", "## Per call, 1 live signature", "## Parsing a 64 KB")
    assert [heading for heading in (*headings, "## Targets") if heading not in out] == []
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    concurrency = [row.split(" | ")[0].removeprefix("| ") for row in rows if row.endswith("x |")]
    assert {"1", "8", "64"} <= set(concurrency)
    targets = [line for line in out.splitlines() if line.startswith("- ")]
    assert any(line.startswith("- Predict.batch CPU per call at 64 / at 1: ") for line in targets)
    assert sum("live signatures / with 1" in line for line in targets) == 2
    # Every adapter, for both answers: a ratio to DSPy, or no DSPy to compare with.
    parses = [line for line in targets if line.startswith("- 64 KB ")]
    assert len(parses) == 2 * 4
    for line in targets:
        assert line.endswith((": met", ": missed", "no DSPy to compare with"))
