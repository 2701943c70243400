"""The progress line on a real pseudo-terminal, and the plain lines written off one."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import termios
import threading
import time
from collections.abc import Iterator
from typing import TextIO

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tqdm.utils import disp_len  # type: ignore[import-untyped]

from structio._util import progress as _progress
from structio._util.progress import Progress, plain_lines


def set_width(fd: int, columns: int) -> None:
    """Give the terminal of ``fd`` a window ``columns`` wide (24 rows)."""
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))


class Screen:
    """The lines a terminal shows for some output, and whether any line wrapped."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.lines: list[str] = []
        self.line: list[str] = []
        self.column = 0
        self.widest = 0

    def feed(self, text: str) -> None:
        for char in text:
            if char == "\r":
                self.column = 0
            elif char == "\n":
                self.lines.append("".join(self.line).rstrip())
                self.line, self.column = [], 0
            else:
                if self.column < len(self.line):
                    self.line[self.column] = char
                else:
                    self.line.append(char)
                self.column += 1
                self.widest = max(self.widest, self.column)

    def shown(self) -> list[str]:
        """Every line, the one being drawn last."""
        return [*self.lines, "".join(self.line).rstrip()]


class Pty:
    """A pseudo-terminal: the side a program writes to, and what it wrote, as text."""

    def __init__(self, columns: int) -> None:
        self.master, self.slave = pty.openpty()
        set_width(self.slave, columns)
        self.stream: TextIO = open(self.slave, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        self.chunks: list[bytes] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the other side closed
                return
            if not chunk:
                return
            self.chunks.append(chunk)

    def output(self, until: str) -> str:
        """All written so far, once ``until`` has come (10 s at most)."""
        deadline = time.monotonic() + 10.0
        while until not in self.text() and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.text()

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", "replace")

    def close(self) -> None:
        self.stream.close()
        os.close(self.slave)
        self.reader.join(timeout=10.0)
        os.close(self.master)


@pytest.fixture
def terminal() -> Iterator[Pty]:
    screen = Pty(60)
    yield screen
    screen.close()


def test_redraws_fit_a_60_column_terminal_and_leave_nothing_behind(terminal: Pty) -> None:
    bar = Progress(50_000, label="AVeryLongSignatureNameForTriage", stream=terminal.stream)
    assert bar.terminal
    for n in range(1_500):
        bar.advance(failed=n % 500 == 0)
        if n == 700:
            bar.status("provider down: waiting 8 s before the next request, try 3")
        if n == 1_200:
            bar.status(None)  # the line gets shorter: what it left must be blanked
    bar.close()
    text = terminal.output(until="\n")
    screen = Screen(60)
    screen.feed(text)
    assert "\r" in text  # redrawn in place
    assert screen.widest < 60  # no redraw wraps
    (last,) = [line for line in screen.shown() if line]
    # No leftovers of the longer lines; what matters most stays: the count, the failures.
    assert re.fullmatch(r"AVeryLongSignatureNameForTriage 1,500/50,000 3\.0%, 3 failed", last)


def test_the_status_shows_and_a_narrower_window_is_followed(terminal: Pty) -> None:
    bar = Progress(100, label="Triage", stream=terminal.stream)
    bar.advance()
    bar.status("provider down: waiting 8 s")
    drawn = terminal.output(until="provider down: waiting 8 s")
    assert "provider down: waiting 8 s" in drawn.split("\r")[-1]
    set_width(terminal.slave, 30)
    bar.status("retry 2/3 after HTTP 500")
    bar.close()
    text = terminal.output(until="\n")
    after = text[len(drawn) :]
    for redraw in after.replace("\n", "\r").split("\r"):
        assert len(redraw.rstrip()) < 30, redraw


def test_a_note_goes_after_its_time_a_status_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(_progress.time, "monotonic", lambda: clock[0])
    bar = Progress(10, label="Triage", enabled=False)
    bar.note("retry 1/3 in 0.5 s after HTTP 500", hold=2.5)
    assert bar.line().endswith(", retry 1/3 in 0.5 s after HTTP 500")
    clock[0] += 3.0
    assert "retry" not in bar.line()
    bar.status("provider down: waiting 8 s")
    bar.note("re-ask 1")
    assert bar.line().endswith(", provider down: waiting 8 s")  # the run's state first
    bar.status(None)
    assert bar.line().endswith(", re-ask 1")


def test_off_a_terminal_a_plain_line_comes_every_interval() -> None:
    log = io.StringIO()
    bar = Progress(50_000, label="Triage", stream=log, every=0.02)
    assert bar.shown
    assert not bar.enabled  # not drawn in place
    for n in range(1_234):
        bar.advance(failed=n < 3)
    bar.status("provider down: waiting 8 s")
    deadline = time.monotonic() + 10.0
    while "provider down" not in log.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    bar.close()
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue()
    pattern = (
        r"structio: Triage 1,234/50,000 rows \(2\.5%\), [0-9.]+/s, 3 failed, ETA \w+, "
        r"provider down: waiting 8 s"
    )
    assert re.fullmatch(pattern, lines[-1]), lines[-1]
    assert all(line.startswith("structio: Triage ") for line in lines)


def test_off_a_terminal_nothing_is_written_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    log = io.StringIO()
    monkeypatch.setattr(_progress.sys, "stderr", log)
    quiet = Progress(10, label="Triage")
    assert not quiet.shown
    quiet.advance()
    quiet.status("provider down")
    quiet.close()
    assert log.getvalue() == ""
    with plain_lines(every=60.0):
        shown = Progress.over([1, 2, 3], label="Triage")
        silenced = Progress.over([1, 2, 3], label="Triage", enabled=False)
    assert (shown.shown, shown.total, shown.every) == (True, 3, 60.0)
    assert not silenced.shown
    assert _progress.active() is shown
    shown.close()
    silenced.close()
    assert _progress.active() is not shown
    assert log.getvalue() == ""  # closed before its first line: nothing to end


def test_say_writes_above_the_bar_on_a_terminal(terminal: Pty) -> None:
    bar = Progress(10, label="Triage", stream=terminal.stream)
    bar.advance()
    bar.say("structio: warning: something")
    bar.close()
    screen = Screen(60)
    screen.feed(terminal.output(until="\n" + "Triage 1/10"))
    shown = [line for line in screen.shown() if line]
    assert shown[0] == "structio: warning: something"
    assert shown[-1].startswith("Triage 1/10 ")


@given(
    label=st.text(min_size=1, max_size=60),
    total=st.one_of(st.none(), st.integers(1, 10**9)),
    done=st.integers(0, 10**6),
    failed=st.integers(0, 10**6),
    status=st.one_of(st.none(), st.text(max_size=80)),
    width=st.integers(1, 200),
)
def test_a_line_never_exceeds_the_width_it_is_given(
    label: str, total: int | None, done: int, failed: int, status: str | None, width: int
) -> None:
    bar = Progress(total, label=label, enabled=False)
    bar.done, bar.failed = done, min(failed, done)
    bar.status(status)
    now = bar._start + 10.0
    assert disp_len(bar.line(now, width=width)) <= width
    if disp_len(bar.line(now)) <= width:
        assert bar.line(now, width=width) == bar.line(now)  # room enough: nothing taken away
