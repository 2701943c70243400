"""A one-line progress bar on standard error, shown only on a terminal."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, TextIO

__all__ = ["Progress"]


class Progress:
    """Counts finished items and redraws ``label done/total [###   ] rate`` now and then.

    Nothing is written unless ``enabled`` and the stream is a terminal, so logs and CI
    output stay clean.
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
        self._start = time.monotonic()
        self._last_draw = 0.0
        self._lock = threading.Lock()

    @classmethod
    def over(cls, source: Any, *, label: str, enabled: bool = True) -> Progress:
        """A bar over the rows of a data file or a sized collection.

        The rows are counted only when the bar will be drawn: counting reads the whole file.
        """
        drawn = enabled and _isatty(sys.stderr)
        return cls(_count_rows(source) if drawn else None, label=label, enabled=drawn)

    def advance(self, *, failed: bool = False) -> None:
        """Count one finished item (``failed`` ones are shown separately)."""
        with self._lock:
            self.done += 1
            self.failed += int(failed)
            now = time.monotonic()
            if self.enabled and (now - self._last_draw > 0.1 or self.done == self.total):
                self._last_draw = now
                self._draw(now)

    def close(self) -> None:
        """End the line."""
        if self.enabled:
            with self._lock:
                self._draw(time.monotonic())
                self.stream.write("\n")
                self.stream.flush()

    def _draw(self, now: float) -> None:
        rate = self.done / max(now - self._start, 1e-9)
        failed = f", {self.failed} failed" if self.failed else ""
        if self.total is None:
            self.stream.write(f"\r{self.label} {self.done} {rate:.1f}/s{failed}")
            self.stream.flush()
            return
        width = 24
        filled = int(width * min(self.done, self.total) / self.total)
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r{self.label} {self.done}/{self.total} [{bar}] {rate:.1f}/s{failed}")
        self.stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _count_rows(source: Any) -> int | None:
    """Rows to expect from a data file (its lines) or a sized collection; ``None`` if unknown."""
    if isinstance(source, (str, os.PathLike)):
        try:
            with open(source, "rb") as handle:
                return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
        except OSError:
            return None
    try:
        return len(source)
    except TypeError:
        return None
