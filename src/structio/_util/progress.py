"""A progress line on standard error: redrawn on a terminal, a plain line now and then off it.

On a terminal, tqdm draws the line: each redraw returns to the start of the line and
blanks what the previous one left beyond its end, and the line is cut to the terminal's
width, read again at each redraw (a window made narrower never makes it wrap). Off a
terminal (nohup, cron, CI), nothing is written unless the command line asked for plain
lines (`plain_lines`): then one whole line every few seconds, which a log keeps readably.

tqdm is imported when a line is first drawn, never by ``import structio``.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any, TextIO

__all__ = ["Progress", "active", "plain_lines"]

# Seconds between two plain lines off a terminal, when the command line asked for them.
_PLAIN_EVERY: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "structio_plain_progress", default=None
)

# How long a note (a retry, a re-ask) stays on the line, in seconds.
NOTE_HOLD = 5.0

# The bar's width where the terminal has room for it, and the narrowest worth drawing.
_BAR = 24
_NARROWEST_BAR = 8


@contextlib.contextmanager
def plain_lines(every: float = 10.0) -> Iterator[None]:
    """Have the bars made inside write a plain line every ``every`` seconds off a terminal.

    For the ``structio`` command: under nohup, cron or CI its log then shows a run's
    progress. A library caller's stderr stays silent off a terminal, as before.
    """
    token = _PLAIN_EVERY.set(every)
    try:
        yield
    finally:
        _PLAIN_EVERY.reset(token)


# The bars shown, oldest first; weakly held, so a bar its caller dropped unclosed goes.
_ACTIVE: list[weakref.ref[Progress]] = []
_ACTIVE_LOCK = threading.Lock()


def active() -> Progress | None:
    """The bar shown now (the last one opened and not closed), if one is."""
    with _ACTIVE_LOCK:
        while _ACTIVE:
            bar = _ACTIVE[-1]()
            if bar is not None:
                return bar
            _ACTIVE.pop()
    return None


class Progress:
    """Counts finished items and shows how far the work is, on standard error.

    On a terminal the line reads ``label 1,234/50,000 [#####-------] 2.5% 41.0/s ETA
    19m45s, 3 failed, retry 2/3 after HTTP 500``, cut to the terminal's width; with no
    known total, ``label 1,234 41.0/s``. Off a terminal, with `plain_lines` in force (or
    ``every`` given), a line such as ``structio: Triage 1,234/50,000 rows (2.5%), 41.0/s,
    3 failed, ETA 19m45s`` every ``every`` seconds; else nothing, so logs stay clean.
    """

    def __init__(
        self,
        total: int | None,
        *,
        label: str = "structio",
        enabled: bool = True,
        stream: TextIO | None = None,
        every: float | None = None,
    ) -> None:
        """Make the bar (drawn from its first item on).

        Args:
            total: Items to expect; ``None`` if unknown (streamed input).
            label: What is counted, first on the line.
            enabled: ``False`` shows nothing at all.
            stream: Where to write (standard error by default).
            every: Seconds between two plain lines off a terminal; by default those of
                `plain_lines`, or none at all.
        """
        self.total = total
        self.label = label
        self.stream = stream or sys.stderr
        every = _PLAIN_EVERY.get() if every is None else every
        wanted = enabled and (total is None or total > 0)
        self.terminal = wanted and _isatty(self.stream)
        self.every = every if wanted and not self.terminal else None
        #: Whether a line is drawn in place (a terminal): what is printed meanwhile starts
        #: on a line of its own. An unknown total shows the count and the rate, no bar.
        self.enabled = self.terminal
        #: Whether anything is shown: drawn in place, or plain lines off a terminal.
        self.shown = self.terminal or self.every is not None
        self.done = 0
        self.failed = 0
        # Items counted without work (rows a previous run did): not part of the rate.
        self.skipped = 0
        self._start = time.monotonic()
        self._lock = threading.Lock()
        self._status: str | None = None
        self._note: str | None = None
        self._note_until = 0.0
        self._bar: Any = None  # the tqdm line, made on the first draw
        self._closed = False
        self._stop = threading.Event()
        self._plain_written = False
        self._ticker: threading.Thread | None = None
        if self.shown:
            with _ACTIVE_LOCK:
                _ACTIVE.append(weakref.ref(self))
        if self.every is not None:
            self._ticker = threading.Thread(target=self._tick, name="structio-progress")
            self._ticker.daemon = True
            self._ticker.start()

    @classmethod
    def over(cls, source: Any, *, label: str, enabled: bool = True) -> Progress:
        """A bar over the rows of a data file or a sized collection.

        The rows are counted only when the bar will be shown: counting reads the whole file.
        """
        shown = enabled and (_isatty(sys.stderr) or _PLAIN_EVERY.get() is not None)
        return cls(_count_rows(source) if shown else None, label=label, enabled=shown)

    def say(self, text: str) -> None:
        """Write ``text`` as a line of its own, above the bar on a terminal (else nothing).

        For what happens before the first item, so a terminal does not sit silent; a log
        off a terminal has its plain lines.
        """
        if self.terminal:
            self._write_line(text)

    def status(self, text: str | None) -> None:
        """Show ``text`` on the line until it is replaced, or cleared with ``None``.

        A short state of the whole work, e.g. ``provider down: waiting 8 s``.
        """
        self._status = text
        self._redraw()

    def note(self, text: str, *, hold: float = NOTE_HOLD) -> None:
        """Show ``text`` for ``hold`` seconds (a `status` shows instead while one is set).

        For what happened to one item: a retry, a re-ask, a fallback request.
        """
        self._note, self._note_until = text, time.monotonic() + hold
        self._redraw()

    def restart_clock(self) -> None:
        """Measure the rate from now (after setup that is no part of the work)."""
        with self._lock:
            self._start = time.monotonic()

    def advance(self, *, failed: bool = False, skipped: bool = False) -> None:
        """Count one finished item (``failed`` ones are shown separately).

        ``skipped`` items (done before, no work now) count toward the total but not the rate.
        """
        with self._lock:
            self.done += 1
            self.failed += int(failed)
            self.skipped += int(skipped)
        if self.terminal and not self._closed:
            # tqdm redraws at most every 0.1 s, and for the last item.
            self._line().update(1)
            if self.done == self.total:
                self._line().refresh()

    def close(self) -> None:
        """End the line (a last plain line off a terminal, if any was written)."""
        if self._closed:
            return
        self._note = None  # what happened to one item: no part of the last line
        with _ACTIVE_LOCK:
            _ACTIVE[:] = [ref for ref in _ACTIVE if ref() not in (self, None)]
        if self._ticker is not None:
            self._stop.set()
            self._ticker.join()
            if self._plain_written:
                self._write_line(self.plain_line())
        if self.terminal:
            self._line().close()
        self._closed = True

    def line(self, now: float | None = None, *, width: int | None = None) -> str:
        """The terminal's line as it would be drawn at ``now`` (a `time.monotonic` reading).

        Args:
            now: When; now by default.
            width: The most columns the line may take. What matters least goes first: the
                bar narrows and goes, then the time left, the rate and the share; the
                count, the failed count and the status stay (cut at the end if need be).
                ``None``: no limit.
        """
        from tqdm.utils import disp_len, disp_trim  # type: ignore[import-untyped]

        now = time.monotonic() if now is None else now
        rate, eta = self._pace(now)
        extras = self._extras(now)
        if self.total is None:
            head, share = f"{self.label} {self.done:,}", ""
        else:
            total = max(self.total, self.done)
            head = f"{self.label} {self.done:,}/{total:,}"
            share = f" {100 * self.done / total:.1f}%"
        pace = f" {rate:.1f}/s" + (f" ETA {eta}" if eta else "")
        shorter = [f"{share} {rate:.1f}/s", share, ""]
        rest = share + pace + extras
        if self.total is not None:
            room = _BAR if width is None else min(_BAR, width - disp_len(f"{head} []{rest}"))
            if room >= _NARROWEST_BAR:
                filled = int(room * self.done / max(self.total, self.done))
                return f"{head} [{'#' * filled}{'-' * (room - filled)}]{rest}"
        line = head + rest
        for middle in shorter:
            if width is None or disp_len(line) <= width:
                break
            line = head + middle + extras
        if width is not None and disp_len(line) > width:
            line = str(disp_trim(line, width))
        return line

    def plain_line(self, now: float | None = None) -> str:
        """The line written off a terminal: whole, with no bar, for a log to keep."""
        now = time.monotonic() if now is None else now
        rate, eta = self._pace(now)
        if self.total is None:
            count = f"{self.done:,} rows"
        else:
            total = max(self.total, self.done)
            count = f"{self.done:,}/{total:,} rows ({100 * self.done / total:.1f}%)"
        line = f"structio: {self.label} {count}, {rate:.1f}/s"
        if self.failed:
            line += f", {self.failed:,} failed"
        if eta:
            line += f", ETA {eta}"
        shown = self._shown_status(now)
        return line + (f", {shown}" if shown else "")

    def _pace(self, now: float) -> tuple[float, str]:
        """Items per second of work (skipped ones left out), and the time left if known."""
        worked = self.done - self.skipped
        rate = worked / max(now - self._start, 1e-9)
        if self.total is None:
            return rate, ""
        left = max(self.total, self.done) - self.done
        return rate, _duration(left / rate) if left and worked else ""

    def _extras(self, now: float) -> str:
        """``, 3 failed`` and the status or note, for the terminal's line."""
        extras = f", {self.failed:,} failed" if self.failed else ""
        shown = self._shown_status(now)
        return extras + (f", {shown}" if shown else "")

    def _shown_status(self, now: float) -> str | None:
        if self._status:
            return self._status
        return self._note if self._note and now < self._note_until else None

    def _line(self) -> Any:
        """The tqdm line that draws this bar on the terminal (made on first use)."""
        if self._bar is None:
            with self._lock:  # a worker's note and the first item may come at once
                if self._bar is None:
                    self._bar = _tqdm_line(self)
        return self._bar

    def _redraw(self) -> None:
        if self.terminal and not self._closed:
            self._line().refresh()

    def _write_line(self, text: str) -> None:
        """Write ``text`` on a line of its own, above the bar on a terminal."""
        if self.terminal and self._bar is not None:
            type(self._bar).write(text, file=self.stream)
            return
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed log: the work goes on without it
            pass

    def _tick(self) -> None:
        """Off a terminal: a plain line every ``every`` seconds until closed."""
        assert self.every is not None  # noqa: S101 - the ticker runs only with an interval
        while not self._stop.wait(self.every):
            self._write_line(self.plain_line())
            self._plain_written = True


def _tqdm_line(owner: Progress) -> Any:
    """A tqdm bar that draws ``owner``'s line, cut to the terminal's width at each redraw."""
    return _line_class()(
        owner,
        total=owner.total,
        file=owner.stream,
        dynamic_ncols=True,
        mininterval=0.1,
        miniters=1,
        leave=True,
        # Always the line the cursor is on: tqdm would put a second bar open at once (a
        # nested one, one left open) on a line of its own, moving the cursor up and down.
        position=0,
    )


@functools.cache
def _line_class() -> Any:
    """The tqdm bar class that draws a `Progress` line (made once, when first drawn)."""
    from tqdm import tqdm  # type: ignore[import-untyped]  # no stubs nor py.typed

    class Line(tqdm):  # type: ignore[misc]
        # No monitor thread: the bar is redrawn by its own updates and by `Progress`.
        monitor_interval = 0

        def __init__(self, owner: Progress, **options: Any) -> None:
            self.owner = owner  # before tqdm's first draw, which reads it
            super().__init__(**options)

        def __str__(self) -> str:
            self.format_dict  # noqa: B018 - reads the terminal's width again (dynamic_ncols)
            # tqdm gives one column short of the terminal's width: some terminals wrap a
            # line that fills it.
            return self.owner.line(width=self.ncols or None)

    return Line


def _duration(seconds: float) -> str:
    """``45s``, ``3m05s``, ``2h07m``: a time left, to the second under an hour."""
    whole = int(seconds + 0.5)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _count_rows(source: Any) -> int | None:
    """Rows to expect from a data file or a sized collection; ``None`` if unknown.

    A file's rows are its non-blank lines (the readers skip blank ones), less the header
    line of a ``.csv`` file.
    """
    if isinstance(source, (str, os.PathLike)):
        try:
            with open(source, "rb") as handle:
                rows = sum(1 for raw in handle if not raw.isspace())
        except OSError:
            return None
        header = os.fspath(source).lower().endswith(".csv")
        return max(rows - 1, 0) if header else rows
    try:
        return len(source)
    except TypeError:
        return None
