"""`benchmarks/evaluate_rows.py --quick`: structio eval over generated files, its table."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_evaluate_rows_benchmark_quick_prints_its_table_and_targets() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "evaluate_rows.py"), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        cwd=ROOT,
        env=env,
    )
    out = result.stdout
    assert "## structio eval: 100, 1,000 rows, 1 rounds" in out
    rows = [line.split(" | ")[0].removeprefix("| ") for line in out.splitlines()]
    assert "100" in rows
    assert "1,000" in rows
    targets = [line for line in out.splitlines() if "(target" in line]
    assert len(targets) == 2
    assert all(line.endswith(("met", "missed")) for line in targets)
