"""A one-line progress bar on standard error, shown only on a terminal."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, TextIO

__all__ = ["Progress"]


class Progress:
    """Counts finished items and redraws a progress line now and then.

    The line reads ``label 1,234/50,000 [#####-------] 2.5% 41.0/s ETA 19m45s, 3 failed``;
    with no known total, ``label 1,234 41.0/s``. Nothing is written unless ``enabled`` and
    the stream is a terminal, so logs and CI output stay clean.
    """

    def __init__(
        self,
        total: int | None,
        *,
        label: str = "structio",
        enabled: bool = True,
        stream: TextIO | None = None,
    ) -> None:
        self.total = total
        self.label = label
        self.stream = stream or sys.stderr
        # An unknown total (streamed input) shows the count and the rate without a bar.
        self.enabled = enabled and (total is None or total > 0) and _isatty(self.stream)
        self.done = 0
        self.failed = 0
        # Items counted without work (rows a previous run did): not part of the rate.
        self.skipped = 0
        self._start = time.monotonic()
        self._last_draw = 0.0
        self._lock = threading.Lock()
        self._status: str | None = None

    @classmethod
    def over(cls, source: Any, *, label: str, enabled: bool = True) -> Progress:
        """A bar over the rows of a data file or a sized collection.

        The rows are counted only when the bar will be drawn: counting reads the whole file.
        """
        drawn = enabled and _isatty(sys.stderr)
        return cls(_count_rows(source) if drawn else None, label=label, enabled=drawn)

    def say(self, text: str) -> None:
        """Write ``text`` as a line of its own, where the bar would be drawn (else nothing).

        For what happens before the first item, so a terminal does not sit silent.
        """
        if self.enabled:
            with self._lock:
                self.stream.write(text + "\n")
                self.stream.flush()

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
            now = time.monotonic()
            if self.enabled and (now - self._last_draw > 0.1 or self.done == self.total):
                self._last_draw = now
                self._draw(now)

    def status(self, text: str | None) -> None:
        """A short status shown on the progress line, cleared with None."""
        with self._lock:
            if text == self._status:
                return
            self._status = text
            if self.enabled:  # erased to the end: a shorter status leaves nothing behind
                self.stream.write("\r" + self.line(time.monotonic()) + "\x1b[K")
                self.stream.flush()

    def close(self) -> None:
        """End the line."""
        if self.enabled:
            with self._lock:
                self._draw(time.monotonic())
                self.stream.write("\n")
                self.stream.flush()

    def _draw(self, now: float) -> None:
        self.stream.write("\r" + self.line(now))
        self.stream.flush()

    def line(self, now: float | None = None) -> str:
        """The progress line as it would be drawn at ``now`` (a `time.monotonic` reading)."""
        now = time.monotonic() if now is None else now
        status = f" | {self._status}" if self._status else ""
        return self._counts(now) + status

    def _counts(self, now: float) -> str:
        worked = self.done - self.skipped
        rate = worked / max(now - self._start, 1e-9)
        failed = f", {self.failed:,} failed" if self.failed else ""
        if self.total is None:
            return f"{self.label} {self.done:,} {rate:.1f}/s{failed}"
        # A CSV cell holding line breaks makes the count of lines exceed the rows: the
        # total is at least what was done.
        total = max(self.total, self.done)
        width = 24
        filled = int(width * self.done / total)
        bar = "#" * filled + "-" * (width - filled)
        share = 100 * self.done / total
        left = total - self.done
        eta = f" ETA {_duration(left / rate)}" if left and worked else ""
        return (
            f"{self.label} {self.done:,}/{total:,} [{bar}] {share:.1f}% {rate:.1f}/s{eta}{failed}"
        )


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
