"""`benchmarks/stream_scaling.py --quick`: it runs offline (loopback only) and prints its tables."""

from __future__ import annotations

from tests.benchmarks._quick import run_quick


def _rows(out: str, name: str) -> list[list[str]]:
    """The cells of every table row named ``name``."""
    rows = [line for line in out.splitlines() if line.startswith(f"| {name} |")]
    return [row.strip("| ").split(" | ") for row in rows]


def test_stream_scaling_quick_prints_its_tables_and_targets() -> None:
    out = run_quick("stream_scaling.py")
    for adapter in (
        "ChatAdapter",
        "JSONAdapter",
        "XMLAdapter",
        "CompactAdapter",
        "ToolOutputAdapter",
    ):
        (row,) = _rows(out, adapter)
        assert row[1].endswith("µs")
        assert row[2].endswith("µs")
        assert row[3].endswith("x")
        assert f"{adapter}: per-chunk CPU at 1,000 chunks / at 100" in out
    (floor,) = _rows(out, "raw httpx, SSE lines (the floor)")
    assert floor[-1] == "1.00x"
    streams = _rows(out, "structio Predict.stream (direct)")
    assert len(streams) == 2  # the long answer's CPU, and the list's first item
    first, whole = (float(cell.removesuffix(" ms").replace(",", "")) for cell in streams[1][1:3])
    assert 0 < first < whole  # the first item comes before the whole answer
    assert "Targets" in out
    assert out.count("- [") == 7  # every target is marked (five readers, the long answer, the list)
