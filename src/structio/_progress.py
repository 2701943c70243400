"""A one-line progress bar on standard error, shown only on a terminal."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """Counts finished items and redraws ``label done/total [###   ] rate`` now and then.

    Nothing is written unless ``enabled`` and the stream is a terminal, so logs and CI
    output stay clean.
    """

    def __init__(
        self,
        total: int,
        *,
        label: str = "structio",
        enabled: bool = True,
        stream: TextIO | None = None,
    ) -> None:
        self.total = total
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0 and _isatty(self.stream)
        self.done = 0
        self.failed = 0
        self._start = time.monotonic()
        self._last_draw = 0.0
        self._lock = threading.Lock()

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
        width = 24
        filled = int(width * self.done / self.total)
        rate = self.done / max(now - self._start, 1e-9)
        failed = f", {self.failed} failed" if self.failed else ""
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r{self.label} {self.done}/{self.total} [{bar}] {rate:.1f}/s{failed}")
        self.stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
