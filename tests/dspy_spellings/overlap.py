"""How many calls run at once: a counter the concurrency tests share."""

from __future__ import annotations

import threading
import time


class Overlap:
    """Call it inside each call: it counts the calls running together (``most``).

    With ``pairs=True`` each call first waits for a second one (a barrier), so a limit below
    two breaks it; then each call lingers a moment, room for others to overlap were they
    allowed.
    """

    def __init__(self, *, pairs: bool) -> None:
        self.pairs = pairs
        self.most = 0
        self._active = 0
        self._lock = threading.Lock()
        self._gate = threading.Barrier(2, timeout=5)

    def __call__(self, *args: object) -> None:
        with self._lock:
            self._active += 1
            self.most = max(self.most, self._active)
        try:
            if self.pairs:
                self._gate.wait()
            time.sleep(0.02)
        finally:
            with self._lock:
                self._active -= 1
