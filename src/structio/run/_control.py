"""How `run_file` keeps going: its worker threads, Ctrl-C, and the errors that stop or pause it.

Three kinds of failed row, three answers:

- a row's own error (an answer that does not parse, a prompt over the context window) is a
  failed row, and the run goes on;
- an error in the settings every row uses (an unknown model, a refused key, a 400 on
  every row) stops the run: at the first row for a `ConfigurationError`, after a streak of
  rows failing alike otherwise (`_Streak`);
- a provider that is down for a while (HTTP 5xx, 429, a connection refused or reset, a
  timeout, after the LM's own retries) pauses the whole run (`_Outage`): no new row is
  sent, waits grow, a probe resends a row, and when the provider answers again every row
  that failed meanwhile is sent again. Only an outage longer than the run's budget stops
  it.
"""

from __future__ import annotations

import contextlib
import math
import queue
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import TYPE_CHECKING, Any

from structio._util.log import logger
from structio.exceptions import (
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    ContextWindowExceededError,
    LMError,
    ParseError,
)
from structio.lm.errors import RETRYABLE

if TYPE_CHECKING:
    from structio.predict import Predict, Prediction

__all__ = ["CLOCK", "FIRST_WAIT", "MAX_WAIT", "Clock", "transient"]

#: The first wait of an outage, in seconds; each further wait doubles it, up to `MAX_WAIT`.
FIRST_WAIT = 2.0
#: The longest wait between two probes of a provider that is down (unless it asks for more
#: with ``Retry-After``), in seconds.
MAX_WAIT = 60.0
# A row that fails (transiently) in this many outages, other rows being answered in
# between, is its own failure: it alone brings the provider down, or is refused as if it
# were down, and would otherwise pause the run again and again.
_ROW_OUTAGES = 3
# How often a wait looks at the stop flag and redraws its countdown, in seconds.
_TICK = 0.1


class Clock:
    """Time as the outage waits read and spend it (a test puts a faster one in `CLOCK`)."""

    def now(self) -> float:
        """Seconds on a monotonic clock."""
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``."""
        time.sleep(seconds)


#: The clock of every run's outage waits.
CLOCK = Clock()


def transient(error: BaseException) -> bool:
    """Whether ``error`` says the provider is down for now, rather than the request is wrong.

    HTTP 5xx (or a malformed or empty answer), 429, a connection error and a timeout are;
    a refused key, a 400 (a model that does not exist, a parameter it does not take) and
    every error of structio's own are not.
    """
    if isinstance(error, RETRYABLE):  # what the LM itself retries
        return True
    if not isinstance(error, LMError) or isinstance(error, (BadRequestError, AuthenticationError)):
        return False
    status = error.status_code
    return status is not None and (status == 429 or status >= 500)


def _clock_text(seconds: float) -> str:
    """``0:42``, ``15:00``, ``1:02:03``: a duration as a clock shows it."""
    whole = int(seconds)
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}:{secs:02d}"
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {_first_line(str(error))}"


class _Outage:
    """A provider that stopped answering: the rows waiting for it, and how long it has been.

    Rows that fail transiently wait here (`failed`), in the order they failed; the run sends
    none of them, nor any new row, until the provider answers. `next_wait` says how long to
    wait before the next probe (or that the budget is spent); `probe` gives the row to send,
    each waiting row in turn, so that one row the provider keeps refusing does not hide
    that it answers the others. The first answer of any kind (`answered`) ends the outage
    and gives back every waiting row, to be sent again.
    """

    def __init__(self, budget: float, clock: Clock | None = None) -> None:
        #: The longest outage the run waits out, in seconds; 0 waits out none.
        self.budget = budget
        self.clock = clock or CLOCK
        #: Rows waiting for the provider: line -> inputs.
        self.waiting: dict[int, dict[str, Any]] = {}
        #: When the outage began (a `Clock.now` reading), or ``None`` when there is none.
        self.started: float | None = None
        #: The last transient error of this outage.
        self.error: BaseException | None = None
        #: Waits so far in this outage.
        self.waits = 0
        # Outages so far, and those in which each row failed (the last one's number, and
        # how many): see _ROW_OUTAGES.
        self._number = 0
        self._strikes: dict[int, tuple[int, int]] = {}
        # How often each row failed in this outage: probes go to the least tried.
        self._tries: dict[int, int] = {}

    @property
    def enabled(self) -> bool:
        return self.budget > 0

    @property
    def paused(self) -> bool:
        """Whether the provider is down: the run sends nothing new, only probes."""
        return self.started is not None

    def elapsed(self) -> float:
        return 0.0 if self.started is None else self.clock.now() - self.started

    def failed(self, line: int, inputs: dict[str, Any], error: BaseException) -> bool:
        """Keep a row that failed for a later try, if ``error`` is an outage's.

        Returns:
            Whether the row waits here: ``False`` when outages are not waited out, the
            error is not transient, or the row has now failed in `_ROW_OUTAGES` outages
            (its failure is its own).
        """
        if not self.enabled or not transient(error):
            return False
        number = self._number if self.started is not None else self._number + 1
        last, count = self._strikes.get(line, (0, 0))
        if last != number:
            last, count = number, count + 1
        if count >= _ROW_OUTAGES:
            self._strikes.pop(line, None)
            return False
        self._strikes[line] = (last, count)
        if self.started is None:
            self._number, self.started, self.waits = number, self.clock.now(), 0
            self._tries = {}
            logger().warning(
                "structio run: the provider is unavailable (%s): the run pauses, and waits "
                "for it%s; the rows that failed are sent again when it answers",
                _error_text(error),
                self._limit(" up to "),
            )
        self.error = error
        self.waiting[line] = inputs
        self._tries[line] = self._tries.get(line, 0) + 1
        return True

    def answered(self) -> dict[int, dict[str, Any]]:
        """The provider answered a call: the outage (if any) is over; the rows to resend."""
        if self.started is None:
            return {}
        rows, self.waiting = self.waiting, {}
        logger().info(
            "structio run: the provider answers again after %s: the run resumes (%d %s sent again)",
            _clock_text(self.elapsed()),
            len(rows),
            "row" if len(rows) == 1 else "rows",
        )
        self.started, self.error = None, None
        return rows

    def abandon(self) -> dict[int, dict[str, Any]]:
        """The run stops during the outage: the rows that were waiting (never written)."""
        rows, self.waiting = self.waiting, {}
        self.started = None
        return rows

    def next_wait(self) -> float | None:
        """Seconds to wait before the next probe, or ``None`` when the budget is spent."""
        left = self.budget - self.elapsed()
        if left <= 0:
            return None
        # A quarter at most added, so runs sharing a provider spread out.
        jitter = 1 + random.random() / 4  # noqa: S311 - not a secret
        step = min(FIRST_WAIT * 2.0 ** min(self.waits, 16) * jitter, MAX_WAIT)
        asked = getattr(self.error, "retry_after", None)
        if isinstance(asked, (int, float)) and asked > step:
            step = float(asked)  # Retry-After: the provider said how long
        self.waits += 1
        wait = min(step, left)
        logger().info(
            "structio run: waiting %.0f s before sending a row again (outage %s%s)",
            wait,
            _clock_text(self.elapsed()),
            self._limit(" of "),
        )
        return wait

    @property
    def tried_all(self) -> bool:
        """Whether every waiting row has failed a probe too: a new row would say more.

        A row the provider refuses on its own (a server error on that prompt alone) would
        otherwise be the only probe, and hold the run until its budget is spent.
        """
        return all(self._tries.get(line, 0) > 1 for line in self.waiting)

    def probe(self) -> tuple[int, dict[str, Any]]:
        """The row to send to see whether the provider answers: the least tried, oldest first."""
        line = min(self.waiting, key=lambda waiting: self._tries.get(waiting, 0))
        return line, self.waiting.pop(line)

    def status(self, left: float | None) -> str:
        """The progress line's words while waiting ``left`` more seconds (``None``: probing)."""
        doing = "sending a row again" if left is None else f"waiting {math.ceil(left)} s"
        return (
            f"provider unavailable ({self._cause()}): {doing}; "
            f"outage {_clock_text(self.elapsed())}{self._limit(' of ')}"
        )

    def _limit(self, before: str) -> str:
        """The budget as text after ``before`` (``" of 15:00"``), or that there is none."""
        if math.isinf(self.budget):
            return ", no limit"
        return before + _clock_text(self.budget)

    def _cause(self) -> str:
        error = self.error
        status = getattr(error, "status_code", None)
        if status is not None:
            return f"HTTP {status}"
        return type(error).__name__

    def stop_message(self) -> str:
        """Why the run stopped: an outage longer than the budget."""
        error = self.error
        assert error is not None  # noqa: S101 - only asked during an outage
        return (
            f"stopped: the provider has been unavailable for {_clock_text(self.elapsed())}, "
            f"longer than the {_clock_text(self.budget)} a run waits (--max-outage, "
            f"max_outage=): {_error_text(error)}; rerun the same command to continue (the rows "
            "done are kept, the rest are sent)"
        )


def wait_out(
    outage: _Outage, seconds: float, *, stopped: Callable[[], bool], show: Callable[[str], None]
) -> None:
    """Wait ``seconds`` (on the outage's clock), showing a countdown; a stop ends it at once."""
    clock = outage.clock
    end = clock.now() + seconds
    while not stopped():
        left = end - clock.now()
        if left <= 0:
            return
        show(outage.status(left))
        clock.sleep(min(_TICK, left))


class _Streak:
    """Consecutive failures of one kind: a systematic error, not a row's own."""

    def __init__(self, limit: int | None, *, outages: bool = False) -> None:
        self.limit = limit
        #: Whether transient errors pause the run (`_Outage`) rather than count here.
        self.outages = outages
        self.kind: tuple[str, int | None] | None = None
        self.count = 0
        self.last: BaseException | None = None

    def add(self, error: BaseException) -> bool:
        """Count ``error``; whether the streak has reached the limit."""
        if isinstance(error, (ParseError, ContextWindowExceededError)):
            # The model answered, or this row's prompt is too long: nothing systematic.
            self.reset()
            return False
        if self.outages and transient(error):
            # A row given up after outages (see _ROW_OUTAGES): the provider itself is
            # waited out, so these never add up to a stop.
            return False
        if _shared(error):
            # Every row's call is made with the same settings: the first says it for all.
            self.kind, self.count, self.last = (type(error).__name__, None), 1, error
            return self.limit is not None
        kind = (type(error).__name__, getattr(error, "status_code", None))
        if kind != self.kind:
            self.kind, self.count = kind, 0
        self.count += 1
        self.last = error
        return self.limit is not None and self.count >= self.limit

    def reset(self) -> None:
        self.kind, self.count, self.last = None, 0, None

    def message(self) -> str:
        """Why the run stopped, and what to do."""
        error = self.last
        assert error is not None  # noqa: S101 - only asked once the streak is reached
        if _shared(error):
            return (
                "stopped at the first failed row: its error is in the settings every row "
                f"uses: {_error_text(error)}; fix the cause and rerun the same command (the "
                "rows done are kept)"
            )
        return (
            f"stopped after {self.count} rows in a row failed with the same error, so the "
            f"rest would fail too: {_error_text(error)}; fix the cause and rerun the same "
            "command (the rows done are kept)"
        )


def _shared(error: BaseException) -> bool:
    """Whether ``error`` is in what every row's call shares: the settings, the key, the model.

    A rejected key (401/403) and an unknown model or endpoint (404) fail every row alike,
    so the first stops the run. A 400 stays on the streak rule: it may be a row's own (a
    content filter, an image the provider cannot read).
    """
    return isinstance(error, (ConfigurationError, AuthenticationError)) or (
        isinstance(error, BadRequestError) and getattr(error, "status_code", None) == 404
    )


class _StopFlag:
    """Ctrl-C as a flag the run looks at, rather than an exception anywhere inside it.

    `KeyboardInterrupt` raised inside a wait on a lock can break the lock itself (CPython
    then raises ``RuntimeError: release unlocked lock``); a flag ends the run where it
    chooses, every time.
    """

    def __init__(self) -> None:
        self.count = 0
        self.told = False

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Handle SIGINT while inside (main thread only; elsewhere Ctrl-C is left alone)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        try:
            previous = signal.signal(signal.SIGINT, self._on_sigint)
        except (OSError, ValueError):  # not the main interpreter
            yield
            return
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)


class _Workers:
    """Threads that predict rows; results come back on a queue, tagged with the row's line.

    Daemon threads rather than a `ThreadPoolExecutor`, whose threads the interpreter
    joins at exit: after a second Ctrl-C the process must end without waiting for the
    calls left in flight.
    """

    def __init__(self, predict: Predict, count: int) -> None:
        self.predict = predict
        self.jobs: queue.SimpleQueue[tuple[int, dict[str, Any]] | None] = queue.SimpleQueue()
        self.results: queue.SimpleQueue[tuple[int, Prediction | BaseException]] = (
            queue.SimpleQueue()
        )
        self.threads = [
            threading.Thread(target=self._work, name=f"structio-run-{n}", daemon=True)
            for n in range(count)
        ]
        for thread in self.threads:
            thread.start()

    def _work(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            line, inputs = job
            try:
                result: Prediction | BaseException = self.predict(**inputs)
            except BaseException as exc:  # whatever it is, the row waits for an answer
                result = exc
            self.results.put((line, result))

    def submit(self, line: int, inputs: dict[str, Any]) -> None:
        self.jobs.put((line, inputs))

    def result(self, timeout: float) -> tuple[int, Prediction | BaseException] | None:
        """The next finished row, or ``None`` if none finishes within ``timeout``."""
        try:
            return self.results.get(timeout=timeout)
        except queue.Empty:
            return None

    def take_queued(self) -> list[tuple[int, dict[str, Any]]]:
        """Take back the rows no thread has started, in the order they were submitted."""
        taken: list[tuple[int, dict[str, Any]]] = []
        while True:
            try:
                job = self.jobs.get_nowait()
            except queue.Empty:
                return taken
            if job is not None:
                taken.append(job)

    def close(self) -> None:
        """Let the threads end once their current row is done."""
        for _ in self.threads:
            self.jobs.put(None)
