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
    for heading in (
        "## Per call",
        "## Per call on each direct transport",
        "## Predict.batch",
        "## Cold start",
        "## Async",
        "Targets",
    ):
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
    # Each direct transport against a raw POST of its own request, each to its own API.
    for transport in ("chat", "responses", "anthropic", "gemini"):
        assert f"raw httpx POST of structio's request ({transport})" in names
    assert any(name.startswith("structio, anthropic/ (direct)") for name in names)
    assert any(name.startswith("structio, gemini/ (direct)") for name in names)
    assert "[met] each transport's calls went to its own API" in out
    assert "[met] cold start: every run made exactly one request" in out
