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
