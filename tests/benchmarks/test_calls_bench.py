"""`benchmarks/calls.py --quick`: it runs offline (loopback only) and prints its tables."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_calls_benchmark_quick_prints_its_tables() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "calls.py"), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        cwd=ROOT,
    )
    out = result.stdout
    for heading in ("## Per call", "## Predict.batch", "## Cold start", "Targets"):
        assert heading in out
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    names = [row.split(" | ", 1)[0].removeprefix("| ") for row in rows]
    assert "raw httpx POST" in names
    assert any(name.startswith("structio Predict (") for name in names)
    assert any(name.startswith("structio Predict.batch (") for name in names)
    assert any(name.startswith("structio (") for name in names)  # cold start
    per_call = [row for row in rows if row.startswith("| raw httpx POST |")]
    assert per_call[0].split(" | ")[1].endswith("µs")
    assert "`import structio` loads litellm: False; loads httpx: False" in out
    assert "every call made exactly one request: all 1" in out
