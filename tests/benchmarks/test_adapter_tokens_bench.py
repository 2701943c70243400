"""`benchmarks/adapter_tokens.py`: CompactAdapter's prompt meets its target (DSPy optional)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_adapter_tokens_benchmark_meets_its_targets() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "adapter_tokens.py")],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        cwd=ROOT,
    )
    out = result.stdout
    shares = re.search(r"CompactAdapter / JSONAdapter = A ([\d.]+), B ([\d.]+)", out)
    assert shares is not None
    assert max(float(shares[1]), float(shares[2])) <= 0.55
    assert "(target <= 0.55): met" in out
    assert "(target: no fewer): met" in out
    for adapter in ("ChatAdapter", "JSONAdapter", "XMLAdapter", "CompactAdapter"):
        assert f"| structio {adapter} |" in out
    assert "| structio ToolOutputAdapter + its tool (JSON) |" in out
