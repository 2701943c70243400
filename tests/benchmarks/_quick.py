"""Running a benchmark's quick mode from a test (each benchmark's test shares this)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_quick(script: str, *args: str) -> str:
    """What ``benchmarks/<script> --quick`` prints; a run that fails raises."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--quick", *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        cwd=ROOT,
    )
    return result.stdout
