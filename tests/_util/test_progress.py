"""Progress lines: drawn only on a terminal; rows counted only when a bar is drawn."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from structio._util import progress as _progress
from structio._util.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_an_unknown_total_shows_the_count_without_a_bar() -> None:
    screen = Terminal()
    bar = Progress(None, label="rows", stream=screen)
    for _ in range(3):
        bar.advance()
    bar.close()
    assert "\rrows 3 " in screen.getvalue()
    assert "[" not in screen.getvalue()


def test_rows_are_counted_only_for_a_drawn_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("{}\n{}\n{}\n", encoding="utf-8")
    counted: list[object] = []
    real = _progress._count_rows

    def spy(source: object) -> int | None:
        counted.append(source)
        return real(source)

    monkeypatch.setattr(_progress, "_count_rows", spy)
    monkeypatch.setattr(_progress.sys, "stderr", io.StringIO())  # not a terminal
    assert Progress.over(data, label="x").enabled is False
    assert counted == []
    monkeypatch.setattr(_progress.sys, "stderr", Terminal())
    bar = Progress.over(data, label="x")
    assert (bar.enabled, bar.total, counted) == (True, 3, [data])
    assert Progress.over(data, label="x", enabled=False).enabled is False
    assert Progress.over(iter([1]), label="x").total is None


def test_a_csv_header_and_blank_lines_are_not_rows(tmp_path: Path) -> None:
    table = tmp_path / "rows.csv"
    table.write_text("ticket\n" + "".join(f"t{n}\n" for n in range(50_000)), encoding="utf-8")
    assert _progress._count_rows(table) == 50_000
    lines = tmp_path / "rows.jsonl"
    lines.write_text('{"a": 1}\n\n  \n{"a": 2}\n{"a": 3}', encoding="utf-8")  # no last newline
    assert _progress._count_rows(lines) == 3


def test_the_line_shows_the_share_the_time_left_and_thousands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(_progress.time, "monotonic", lambda: clock[0])
    screen = Terminal()
    bar = Progress(50_000, label="Triage", stream=screen)
    for _ in range(2_000):
        bar.advance(skipped=True)  # done by an earlier run: no part of the rate
    clock[0] += 10.0
    for _ in range(1_000):
        bar.advance()
    # 3,000 of 50,000 done; 1,000 worked in 10 s: 47,000 left at 100/s.
    assert bar.line() == "Triage 3,000/50,000 [#-----------------------] 6.0% 100.0/s ETA 7m50s"
    bar.advance(failed=True)
    assert bar.line().endswith(", 1 failed")
    for _ in range(46_999):
        bar.advance()
    clock[0] += 470.0  # 48,000 worked in 480 s
    assert bar.line() == f"Triage 50,000/50,000 [{'#' * 24}] 100.0% 100.0/s, 1 failed"
    bar.close()
    # The last redraw blanks what a longer one before it left (tqdm pads with spaces).
    assert screen.getvalue().endswith("\n")
    assert screen.getvalue().split("\r")[-1].rstrip() == bar.line()
