"""`benchmarks/observe.py --quick`: it runs offline and prints a row for each way of observing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_observe_benchmark_quick_prints_its_table() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "observe.py"), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        cwd=ROOT,
    )
    rows = [line.split(" | ") for line in result.stdout.splitlines() if line.startswith("| ")]
    measured = {row[0].removeprefix("| "): row for row in rows[1:]}
    assert set(measured) == {
        "raw httpx POST",
        "Predict, nothing observed",
        "Predict in track_usage()",
        "Predict, a no-op Callback",
        "Predict, OpenTelemetryCallback",
    }
    assert all(row[3] == "1 |" for row in measured.values())  # one request per call
    assert measured["Predict, nothing observed"][2] == "1.00"
    assert "The hooks of one unobserved call (start, response, end): " in result.stdout
