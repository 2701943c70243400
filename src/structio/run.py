"""Batch predictions from a data file to a JSONL file that survives interruptions.

Each finished row is appended (and flushed) as ``{"line": n, "inputs": {...}, "outputs":
{...}}``, ``line`` being the row's line in the data file. A rerun reads the file, skips the
rows already there (and drops a last line cut off by a crash), and does the rest. Rows that
fail go to ``<output>.errors.jsonl`` (rewritten each run) with the error, so none is lost.

`run_batch` does the same through the provider's batch API (``structio run --batch``): the
same output and errors files, so either kind of run picks up where the other stopped, and
``<output>.batch.json`` records the batches until they have been read.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING, Any

from structio._util.data import jsonable
from structio._util.files import read_jsonl
from structio._util.progress import Progress
from structio.exceptions import ContextWindowExceededError, ParseError
from structio.finetune import Problem, read_examples
from structio.predict import Predict, Prediction
from structio.settings import current_settings

if TYPE_CHECKING:
    from structio.batch import Outcome

__all__ = ["MAX_CONSECUTIVE_ERRORS", "RunSummary", "errors_path", "run_batch", "run_file"]


@dataclass
class RunSummary:
    """What a run did: rows done now, done before, failed (with their errors).

    A run can end early: ``stopped`` then says why (the same error again and again, so the
    rest would fail too), or ``interrupted`` is set (Ctrl-C). Either way every row finished
    is in the output, and a rerun does the rest.
    """

    output: Path
    done: int = 0
    already_done: int = 0
    failed: list[tuple[int, str]] = field(default_factory=list)
    #: What the batches cost, for a batch run (``--batch``).
    cost_line: str | None = None
    #: Why the run stopped before the end (a systematic error), else ``None``.
    stopped: str | None = None
    #: The error class that stopped the run (``"AuthenticationError"``...), else ``None``.
    stopped_by: str | None = None
    #: Whether Ctrl-C (SIGINT) ended the run.
    interrupted: bool = False

    def report(self) -> str:
        """One line per fact, then the first failures in input order."""
        lines = [
            f"{self.done:,} rows predicted, {self.already_done:,} already in {self.output}, "
            f"{len(self.failed):,} failed"
        ]
        if self.cost_line:
            lines.append(self.cost_line)
        if self.failed:
            lines.append(
                f"failed rows are in {errors_path(self.output)}; rerun to retry them "
                "(online, or with --batch in a new batch):"
            )
            lines.extend(f"  line {line}: {error}" for line, error in sorted(self.failed)[:10])
        return "\n".join(lines)


def errors_path(output: Path) -> Path:
    """Where a run writes its failed rows: ``preds.jsonl`` -> ``preds.errors.jsonl``."""
    return output.with_name(f"{output.stem}.errors.jsonl")


def done_lines(output: Path) -> set[int]:
    """The data lines already predicted in ``output``; a cut-off last line is removed."""
    if not output.exists():
        return set()
    done: set[int] = set()
    good_end = 0
    read = 0

    def lines(handle: IO[bytes]) -> Iterator[bytes]:
        nonlocal read
        for raw in handle:
            read += len(raw)
            yield raw

    with output.open("rb") as handle:
        for item in read_jsonl(lines(handle)):
            if item.error is not None or not item.complete:
                break  # written in part when the run stopped
            row = item.value
            if isinstance(row, dict) and isinstance(row.get("line"), int):
                done.add(row["line"])
            good_end = read  # every byte so far, blank lines included, belongs to good rows
    if good_end < output.stat().st_size:
        with output.open("r+b") as writable:
            writable.truncate(good_end)
    return done


#: Consecutive rows failing with the same kind of error that stop a run (`run_file`).
MAX_CONSECUTIVE_ERRORS = 5

# How often the waiting loop looks at the stop flag, in seconds.
_POLL = 0.1


def run_file(
    predict: Predict,
    data: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    output: str | os.PathLike[str],
    *,
    concurrency: int = 8,
    progress: bool = True,
    max_consecutive_errors: int | None = MAX_CONSECUTIVE_ERRORS,
) -> RunSummary:
    """Predict every row of ``data`` into ``output``, resuming where a previous run stopped.

    Args:
        predict: What predicts each row.
        data: A ``.jsonl`` or ``.csv`` file, or an iterable of dicts.
        output: The JSONL file rows are appended to (rows already there are skipped).
        concurrency: Calls in flight at once.
        progress: Say what is happening and draw a progress line on standard error (only
            on a terminal).
        max_consecutive_errors: Stop once this many rows in a row fail with the same kind
            of error (the same class, and the same HTTP status): an unknown model, a
            server that is down or a rejected key fails every row alike. Errors that
            belong to one row (an answer that does not parse, a prompt over the context
            window) never count. ``None`` never stops.

    Returns:
        The `RunSummary`. ``stopped`` is set when errors stopped the run, ``interrupted``
        when Ctrl-C did: in the main thread, SIGINT stops the run cleanly rather than
        raising `KeyboardInterrupt` inside it. No new row is sent; the calls in flight
        finish and are written (a second Ctrl-C leaves them); the output holds every row
        finished, and the same call later does the rest.
    """
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    summary = RunSummary(out)
    done = done_lines(out)
    inputs_of = predict.signature.input_fields
    bar = Progress.over(data, label=predict.signature.__name__, enabled=progress)
    _load_client(predict, bar)
    bar.restart_clock()
    streak = _Streak(max_consecutive_errors)
    stop = _StopFlag()
    workers = _Workers(predict, concurrency)
    in_flight: dict[int, dict[str, Any]] = {}

    def finish(line: int, result: Prediction | BaseException, handle: IO[str]) -> None:
        inputs = in_flight.pop(line)
        if isinstance(result, BaseException):
            summary.failed.append((line, f"{type(result).__name__}: {result}"))
            bar.advance(failed=True)
            if streak.add(result) and summary.stopped is None:
                summary.stopped = streak.message()
                summary.stopped_by = type(result).__name__
            return
        streak.reset()
        record = {"line": line, "inputs": jsonable(inputs), "outputs": jsonable(result.to_dict())}
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        handle.flush()
        summary.done += 1
        bar.advance()

    def collect(handle: IO[str], *, until: int) -> None:
        """Write finished rows until at most ``until`` are in flight (or the run stops)."""
        while len(in_flight) > until:
            if stop.count > 1:
                return  # a second Ctrl-C: leave the calls in flight
            if stop.count and not stop.told:
                stop.told = True
                workers.drop_queued(in_flight)
                if progress and in_flight:
                    ended = "\n" if bar.enabled else ""  # off the progress line
                    print(
                        f"{ended}structio: stopping; waiting for {len(in_flight):,} calls in "
                        "flight (Ctrl-C again to leave them)",
                        file=sys.stderr,
                    )
                continue
            item = workers.result(_POLL)
            if item is not None:
                finish(*item, handle)

    try:
        with stop.installed(), out.open("a", encoding="utf-8") as handle:
            for line, values in read_examples(data, predict.signature):
                if stop.count or summary.stopped:
                    break
                if line in done:
                    summary.already_done += 1
                    bar.advance(skipped=True)
                    continue
                if isinstance(values, Problem):
                    summary.failed.append((line, values.message))
                    bar.advance(failed=True)
                    continue
                inputs = {k: v for k, v in values.items() if k in inputs_of and v is not None}
                in_flight[line] = inputs
                workers.submit(line, inputs)
                # Bounded: the data is streamed, never read whole.
                collect(handle, until=2 * concurrency - 1)
            if summary.stopped and not stop.count:
                workers.drop_queued(in_flight)
            collect(handle, until=0)
    finally:
        workers.close()
        bar.close()
        _write_errors(out, summary.failed)
    summary.interrupted = stop.count > 0
    return summary


def _load_client(predict: Predict, bar: Progress) -> None:
    """Load the model's client before the first row, saying so: litellm takes seconds."""
    lm = predict.lm if predict.lm is not None else current_settings().lm
    load = getattr(lm, "load", None)
    if callable(load):
        bar.say("structio: loading the model client...")
        load()


class _Streak:
    """Consecutive failures of one kind: a systematic error, not a row's own."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.kind: tuple[str, int | None] | None = None
        self.count = 0
        self.last: BaseException | None = None

    def add(self, error: BaseException) -> bool:
        """Count ``error``; whether the streak has reached the limit."""
        if isinstance(error, (ParseError, ContextWindowExceededError)):
            # The model answered, or this row's prompt is too long: nothing systematic.
            self.reset()
            return False
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
        return (
            f"stopped after {self.count} rows in a row failed with the same error, so the "
            f"rest would fail too: {type(error).__name__}: {_first_line(str(error))}; fix "
            "the cause and rerun the same command (the rows done are kept)"
        )


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


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

    def drop_queued(self, in_flight: dict[int, dict[str, Any]]) -> None:
        """Take back the rows no thread has started: they stay undone, for the next run."""
        while True:
            try:
                job = self.jobs.get_nowait()
            except queue.Empty:
                return
            if job is not None:
                in_flight.pop(job[0], None)

    def close(self) -> None:
        """Let the threads end once their current row is done."""
        for _ in self.threads:
            self.jobs.put(None)


def run_batch(
    predict: Predict,
    data: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    output: str | os.PathLike[str],
    *,
    poll_interval: float = 30.0,
    max_requests: int = 50_000,
    max_bytes: int = 200 * 1024 * 1024,
    progress: bool = True,
) -> RunSummary:
    """`run_file` through the provider's batch API: submit, wait, write every answer.

    The rows already in ``output`` are not sent; neither are rows answered in the response
    cache (they are written at once). The batches are recorded in ``<output>.batch.json``
    (`structio.batch.state_path`) as soon as each exists, so a run stopped while waiting
    (Ctrl-C, a crash) is picked up by the same command: it polls the same batches, and
    creates the batch of a file uploaded just before the stop, without paying twice. Each
    answer is written to ``output`` in `run_file`'s format as its batch is read; failed rows
    (unreadable answers, provider errors, rows of an expired or failed batch) go to
    ``<output>.errors.jsonl``, for a rerun with or without batches.

    Raises:
        ConfigurationError: The model has no batch API structio can reach, or the state file
            belongs to another model or signature.
        LMError: The provider refused an upload or a batch.
    """
    from structio.batch import BatchCall, BatchLimits, state_path, submit

    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    summary = RunSummary(out)
    done = done_lines(out)
    inputs_of = predict.signature.input_fields
    rows: dict[int, dict[str, Any]] = {}
    for line, values in read_examples(data, predict.signature):
        if line in done:
            summary.already_done += 1
        elif isinstance(values, Problem):
            summary.failed.append((line, values.message))
        else:
            rows[line] = {k: v for k, v in values.items() if k in inputs_of and v is not None}
    adapter, lm, params = predict._resolve(None, None, None, None)
    call = BatchCall(
        adapter,
        lm,
        predict.signature,
        predict.demos,
        params,
        predict.max_prompt_tokens,
        predict.truncation_step,
        predict.check_inputs,
    )
    try:
        with out.open("a", encoding="utf-8") as handle:

            def write(line: int, inputs: Mapping[str, Any], outcome: Outcome) -> None:
                if isinstance(outcome, BaseException):
                    summary.failed.append((line, f"{type(outcome).__name__}: {outcome}"))
                    return
                prediction = Prediction.from_result(outcome)
                record = {
                    "line": line,
                    "inputs": jsonable(inputs),
                    "outputs": jsonable(prediction.to_dict()),
                }
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                handle.flush()  # written at once: a stop later keeps it
                summary.done += 1

            job = submit(
                call,
                rows,
                wrap=Prediction.from_result,
                state=state_path(out),
                limits=BatchLimits(max_requests, max_bytes),
                on_result=write,
                keep=False,
                progress=progress,
            )
            try:
                job.wait(poll_interval=poll_interval)
            except KeyboardInterrupt:
                if progress:
                    print(
                        f"structio batch: the batches keep running at the provider; run the "
                        f"same command again to pick them up ({state_path(out)})",
                        file=sys.stderr,
                    )
                raise
            summary.cost_line = job.report()
    finally:
        _write_errors(out, summary.failed)
    return summary


def _write_errors(out: Path, failed: list[tuple[int, str]]) -> None:
    path = errors_path(out)
    if not failed:
        path.unlink(missing_ok=True)
        return
    with path.open("w", encoding="utf-8") as handle:
        for line, error in sorted(failed):
            handle.write(json.dumps({"line": line, "error": error}, ensure_ascii=False) + "\n")
