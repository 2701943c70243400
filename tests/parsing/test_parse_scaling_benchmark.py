"""`benchmarks/parse_scaling.py --quick` runs (structio only) and prints one row per parse."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_parse_scaling_benchmark_quick_prints_a_row_per_shape_and_adapter() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "parse_scaling.py"), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        cwd=ROOT,
    )
    rows = [line for line in result.stdout.splitlines() if line.startswith("| ")]
    header, body = rows[0], rows[1:]
    assert "| 1 KB | 8 KB | 64 KB | linearity |" in header
    assert len(body) == 10 * 2  # every shape, with both adapters
    assert {row.split(" | ")[1] for row in body} == {"ChatAdapter", "JSONAdapter"}
    for row in body:
        cells = row.strip("| ").split(" | ")
        float(cells[2].replace(",", ""))  # a time per KB at 1 KB
        float(cells[5])  # the linearity figure
        assert cells[6:] == ["—"] * 4  # no DSPy in a quick run
