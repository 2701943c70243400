"""A piece of a stream costs what the piece does, however long the line it continues.

Every reader keeps the line (or element) it is receiving in pieces: no piece has the text
before it joined, copied or searched again. Two checks, neither timed: the work counted
per piece (Python lines run, characters handed to regular expressions; see
`tests/reliability/_linear_work.py`) stays flat from 500 to 8,000 pieces of one line; and
the memory a piece allocates while it is read (`tracemalloc`'s peak) does not grow with
the line, which a copy of the line per piece (``line + piece``, a slice of the whole line)
would make grow with it. The CPU time is measured in `benchmarks/stream_scaling.py`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

import structio as sio
from tests.parsing._stream_work import ADAPTERS, LONG, SHORT, one_line

ROOT = Path(__file__).resolve().parents[2]
# Per piece, the long line may cost this much more than the short one (a fixed cost shared).
FLAT = 1.2


def test_the_work_per_piece_does_not_grow_with_the_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.parsing._stream_work"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout)
    assert counts.keys() == ADAPTERS.keys()
    for name, (short, long) in counts.items():
        assert long / LONG <= FLAT * short / SHORT, (name, short, long)


def _allocated_per_piece(adapter: sio.Adapter, size: int) -> list[int]:
    """The bytes each 4-character piece of the answer's line allocates while it is read."""
    sig = sio.Signature("question -> answer")
    text = one_line(adapter, sig, size)
    reader = adapter.stream_reader(sig)
    pieces = [text[start : start + 4] for start in range(0, len(text), 4)]
    started = tracemalloc.is_tracing()
    if not started:
        tracemalloc.start()
    allocated = []
    try:
        for piece in pieces:
            before, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            reader.feed(piece)
            _, peak = tracemalloc.get_traced_memory()
            allocated.append(peak - before)
    finally:
        if not started:
            tracemalloc.stop()
    return allocated[len(allocated) // 2 : -len(allocated) // 4]  # well inside the line


@pytest.mark.parametrize("adapter", ADAPTERS, ids=list(ADAPTERS))
def test_a_piece_copies_nothing_of_the_line_before_it(adapter: str) -> None:
    # Nine pieces in ten: a list of pieces that grows now and then allocates its size once.
    short = _ninth_decile(_allocated_per_piece(ADAPTERS[adapter], 4_000))
    long = _ninth_decile(_allocated_per_piece(ADAPTERS[adapter], 64_000))
    # A copy of the line per piece would allocate 30 KB or more here.
    assert long <= short + 1_024, (short, long)


def _ninth_decile(sizes: list[int]) -> int:
    return sorted(sizes)[len(sizes) * 9 // 10]
