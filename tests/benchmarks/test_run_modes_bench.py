"""`benchmarks/run_modes.py --quick`: online, Ray and batch runs on loopback servers, one table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_run_modes_benchmark_quick_prints_its_table() -> None:
    pytest.importorskip(
        "ray", reason="the benchmark runs Ray (structio[ray]): EXTRAS=ray bash scripts/setup"
    )
    # About 50 s alone; starting a local Ray cluster on a loaded 2-core machine has taken
    # over 300 s, so the bound only catches a hang.
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run_modes.py"), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
        cwd=ROOT,
    )
    out = result.stdout
    assert "## Run modes: 60 rows" in out
    names = [line.split(" | ", 1)[0].removeprefix("| ") for line in out.splitlines()]
    assert "online run_file, c=8" in names
    assert "online run_file, c=64" in names
    assert "Ray, 2 actors x 4 (c=8)" in names
    assert "Ray, 2 actors x 32 (c=64)" in names
    assert "provider batch (run_batch), queue time 0" in names
    assert "every row answered with exactly one request: yes" in out
