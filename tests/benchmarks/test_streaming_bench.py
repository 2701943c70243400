"""`benchmarks/streaming.py --quick`: it runs offline (loopback only) and prints its tables."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _cells(out: str, name: str) -> list[str]:
    """The cells of every table row named ``name`` (one row per table it is in)."""
    rows = [line for line in out.splitlines() if line.startswith(f"| {name} |")]
    return [row.strip("| ").split(" | ") for row in rows]


def test_streaming_benchmark_quick_prints_its_tables() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "streaming.py"), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        cwd=ROOT,
    )
    out = result.stdout
    for heading in ("## Time to the first complete field", "## CPU per chunk", "Targets"):
        assert heading in out
    # Both tables time the floor and structio's direct stream, sync and async.
    for name in (
        "raw httpx, SSE lines (the floor)",
        "structio Predict.stream (direct)",
        "structio Predict.astream (direct)",
    ):
        latency, cpu = _cells(out, name)
        first_delta, complete, whole = latency[1], latency[3], latency[5]
        assert all(cell.endswith(" ms") for cell in (first_delta, complete, whole))
        # The reasoning closes about 800 ms into the stream, and no sooner (2 ms a chunk).
        assert 700 < float(complete.removesuffix(" ms").replace(",", "")) < 5000
        assert cpu[1].endswith("µs")
        assert cpu[-1] == "1"  # requests per call
    assert len(_cells(out, "structio LM.stream (direct)")) == 1  # the CPU table only
    # DSPy is measured where it is installed and said to be left out where not.
    dspy_rows = _cells(out, "DSPy 3.4.1 streamify, sync (async_streaming=False)")
    assert len(dspy_rows) == 2 or "DSPy: not installed, left out" in out
    assert "could not be measured" not in out
    assert "every call made exactly one request: all 1" in out
