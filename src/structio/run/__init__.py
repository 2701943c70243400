"""Batch predictions from a data file to a JSONL file that survives interruptions.

Each finished row is appended (and flushed) as ``{"line": n, "inputs": {...}, "outputs":
{...}, "model": ..., "adapter": ...}``, ``line`` being the row's line in the data file. Rows
are written as they finish, not in input order: a row is found by its ``line``, never by its
place in the file. A rerun reads the file, skips the rows already there (and drops a last
line cut off by a crash), and does the rest. It first checks that the file is this run's to
continue: every line a row of this format, of the same signature (its outputs), model and
adapter, each answering the data row of its ``line`` as that row is now (its inputs).
Anything else is refused with `ConfigurationError` before any call, the file left as it
was. Rows that fail go to ``<output>.errors.jsonl`` (rewritten each run) with the error, so
none is lost.

`run_batch` does the same through the provider's batch API (``structio run --batch``): the
same output and errors files, so either kind of run picks up where the other stopped, and
``<output>.batch.json`` records the batches until they have been read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Container, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from structio._util.data import jsonable
from structio._util.files import Appender, atomic_write, read_jsonl, save_error
from structio._util.progress import Progress
from structio.exceptions import ConfigurationError, SaveError
from structio.finetune import Problem, read_examples
from structio.predict import Predict, Prediction
from structio.run._control import _Outage, _StopFlag, _Streak, _Workers, transient, wait_out
from structio.settings import current_settings, resolve_adapter

if TYPE_CHECKING:
    from collections.abc import Generator

    from structio.batch import Outcome
    from structio.signatures.signature import Signature

__all__ = [
    "MAX_CONSECUTIVE_ERRORS",
    "MAX_OUTAGE",
    "RunSummary",
    "errors_path",
    "run_batch",
    "run_file",
]


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
        rows = "row" if self.done == 1 else "rows"
        lines = [
            f"{self.done:,} {rows} predicted, {self.already_done:,} already in {self.output}, "
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


def done_lines(output: str | os.PathLike[str]) -> set[int]:
    """The data lines already predicted in ``output``; a cut-off last line is removed.

    Raises:
        ConfigurationError: A line of ``output`` is not a row `run_file` writes.
        SaveError: ``output`` cannot be read (a folder, no permission...).
    """
    return set(_Done.read(Path(output)).rows)


# The keys of a row of the output. The first three are in every row; rows written before
# the model and the adapter were recorded lack those two, and are not checked for them.
_ROW_KEYS = frozenset(("line", "inputs", "outputs", "model", "adapter"))
# What a row also says of how its prediction was made, read by `structio eval`: each
# output's confidence (when asked for), the tokens, the cost and the requests.
_META_KEYS = frozenset(("_confidence", "_usage", "_cost", "_requests"))
# How a row begins (`json.dumps` of a dict whose first key is "line"): a last line cut off
# by a crash is known by it, and no other line is ever removed.
_ROW_START = b'{"line":'


@dataclass(frozen=True)
class _Maker:
    """What makes a run's predictions: the signature, the model and the adapter."""

    signature: type[Signature]
    model: str | None
    adapter: str

    @classmethod
    def of(cls, predict: Predict) -> _Maker:
        lm = predict.lm if predict.lm is not None else current_settings().lm
        model = getattr(lm, "model", None)
        adapter = type(resolve_adapter(predict.adapter)).__name__
        return cls(predict.signature, model if isinstance(model, str) else None, adapter)

    def record(
        self, line: int, inputs: Mapping[str, Any], outputs: Mapping[str, Any], meta: Any = None
    ) -> str:
        """A row of the output: the line of JSON written for one prediction.

        With the prediction's ``meta`` (a `PredictionMeta`), the row also holds what
        `structio eval` reads: ``_usage``, ``_cost``, ``_requests`` and, when it was asked
        for, ``_confidence``.
        """
        row: dict[str, Any] = {
            "line": line,
            "inputs": jsonable(dict(inputs)),
            "outputs": jsonable(dict(outputs)),
        }
        if self.model is not None:
            row["model"] = self.model
        row["adapter"] = self.adapter
        if meta is not None:
            row["_usage"] = {
                "prompt_tokens": meta.usage.prompt_tokens,
                "completion_tokens": meta.usage.completion_tokens,
            }
            if meta.cost is not None:
                row["_cost"] = meta.cost
            row["_requests"] = len(meta.responses)
            if meta.confidence is not None:
                row["_confidence"] = meta.confidence
        return json.dumps(row, ensure_ascii=False) + "\n"

    def problem(self, row: Mapping[str, Any]) -> str | None:
        """Why a well-formed row was not made by this run, or ``None``."""
        sig = self.signature
        outputs = list(row["outputs"])
        if set(outputs) != set(sig.output_fields):
            return (
                f"it holds predictions of the outputs {_names(outputs)}, not of "
                f"{sig.__name__}'s ({_names(sig.output_fields)})"
            )
        unknown = [name for name in row["inputs"] if name not in sig.input_fields]
        if unknown:
            return (
                f"it records the inputs {_names(row['inputs'])}, not {sig.__name__}'s "
                f"({_names(sig.input_fields)})"
            )
        model = row.get("model")
        if model is not None and self.model is not None and model != self.model:
            return f"it was predicted by the model {model!r}, not {self.model!r}"
        adapter = row.get("adapter")
        if adapter is not None and adapter != self.adapter:
            return f"it was predicted through {adapter}, not {self.adapter}"
        return None


def _inputs(values: Mapping[str, Any], names: Container[str]) -> dict[str, Any]:
    """What of a data row is sent, and recorded: its inputs, without those left empty."""
    return {k: v for k, v in values.items() if k in names and v is not None}


def _names(names: Iterable[str]) -> str:
    return ", ".join(names) or "none"


def _digest(inputs: Mapping[str, Any]) -> int:
    """A row's inputs as JSON data, as a 64-bit number: compared without keeping the rows."""
    text = json.dumps(jsonable(dict(inputs)), sort_keys=True, ensure_ascii=False)
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def _row_keys_problem(value: Any) -> str | None:
    """Why a line's JSON is not a row of this format, or ``None``."""
    if not isinstance(value, dict) or not {"line", "inputs", "outputs"} <= set(value):
        return 'it is not a row structio run writes (a JSON object of "line", "inputs", "outputs")'
    unknown = sorted(set(value) - _ROW_KEYS - _META_KEYS)
    line = value["line"]
    if (
        unknown
        or not isinstance(line, int)
        or isinstance(line, bool)
        or line < 1
        or not isinstance(value["inputs"], dict)
        or not isinstance(value["outputs"], dict)
        or not all(isinstance(value.get(key, ""), str) for key in ("model", "adapter"))
    ):
        return "it is not a row structio run writes (its keys or their values differ)"
    return None


# A row of the data as `read_examples` gives it: its line, and its values or its problem.
_Row = tuple[int, dict[str, Any] | Problem]


class _Done:
    """The rows already in an output file: the data line each answers, and its inputs."""

    def __init__(self, output: Path, rows: dict[int, int], inputs: Iterable[str] = ()) -> None:
        self.output = output
        #: Data line -> the digest of the inputs its prediction recorded.
        self.rows = rows
        #: The signature's inputs: what of a data row its prediction records.
        self.inputs = frozenset(inputs)

    @classmethod
    def read(cls, output: Path, maker: _Maker | None = None) -> _Done:
        """Read ``output``, refusing (with ``maker``) the rows of another run.

        Every line is checked before the file is changed: only then is a last line cut off
        by a crash removed.

        Raises:
            ConfigurationError: A line is not a row of this format, or (with ``maker``) its
                outputs, inputs, model or adapter are not this run's.
            SaveError: ``output`` cannot be read or its cut-off last line removed (a
                folder, no permission...).
        """
        try:
            return cls._read(output, maker)
        except OSError as exc:
            if isinstance(exc, SaveError):
                raise
            raise save_error(
                output, "the output", exc, doing="read", kept="nothing was changed"
            ) from exc

    @classmethod
    def _read(cls, output: Path, maker: _Maker | None) -> _Done:
        rows: dict[int, int] = {}
        inputs = maker.signature.input_fields if maker is not None else {}
        if not output.exists():
            return cls(output, rows, inputs)
        good_end = 0
        read = 0
        last = b""

        def lines(handle: IO[bytes]) -> Iterator[bytes]:
            nonlocal read, last
            for raw in handle:
                read += len(raw)
                last = raw
                yield raw

        with output.open("rb") as handle:
            for item in read_jsonl(lines(handle)):
                if not item.complete:  # the last line, without its newline
                    if not last.lstrip().startswith(_ROW_START):
                        raise _not_a_run(output, item.line, "it is not a row structio run writes")
                    break  # written in part when a run stopped: redone
                if item.error is not None:
                    raise _not_a_run(output, item.line, f"it is {item.error}")
                problem = _row_keys_problem(item.value)
                if problem is not None:
                    raise _not_a_run(output, item.line, problem)
                problem = maker.problem(item.value) if maker is not None else None
                if problem is not None:
                    raise ConfigurationError(
                        f"{str(output)!r} line {item.line:,} is not this run's: {problem}; "
                        f"{_start_over(output)}"
                    )
                rows[item.value["line"]] = _digest(item.value["inputs"])
                good_end = read  # every byte so far, blank lines included, belongs to rows
        if good_end < output.stat().st_size:
            with output.open("r+b") as writable:
                writable.truncate(good_end)
        return cls(output, rows, inputs)

    def check(self, line: int, values: Mapping[str, Any] | Problem, source: object) -> None:
        """Refuse a done row whose data row is not the one its prediction answered.

        Raises:
            ConfigurationError: The data row has changed since it was predicted.
        """
        if isinstance(values, Problem) or _digest(_inputs(values, self.inputs)) != self.rows[line]:
            raise ConfigurationError(
                f"{str(self.output)!r} line {_output_line(self.output, line):,} answers "
                f"{_data_row(source, line)} as it was, but that row has changed since (its "
                f"inputs are not the ones recorded); {_start_over(self.output)}, or delete "
                "that line of it to predict the row again"
            )

    def checked(self, rows: Iterable[_Row], source: object) -> Iterator[_Row]:
        """``rows``, each done one `check`-ed; at their end, that none of the done is missing.

        Raises:
            ConfigurationError: A data row has changed, or is no longer there.
        """
        left = set(self.rows)
        for line, values in rows:
            if line in left:
                self.check(line, values, source)
                left.discard(line)
            yield line, values
        if left:
            line = min(left)
            raise ConfigurationError(
                f"{str(self.output)!r} line {_output_line(self.output, line):,} answers "
                f"{_data_row(source, line)}, which is no longer there (the data has changed "
                f"since); {_start_over(self.output)}, or delete that line of it"
            )


def _not_a_run(output: Path, line: int, problem: str) -> ConfigurationError:
    """The error for an output file that is not a run's output at all (never changed)."""
    return ConfigurationError(
        f"{str(output)!r} line {line:,}: {problem}, so the file is not the output of a "
        "structio run to continue; write the predictions to another file (-o)"
    )


def _start_over(output: Path) -> str:
    return f"write to another file (-o), or delete {str(output)!r} to start over"


def _data_row(source: object, line: int) -> str:
    if isinstance(source, (str, os.PathLike)):
        return f"line {line:,} of {str(source)!r}"
    return f"example {line:,} of the data"


def _output_line(output: Path, line: int) -> int:
    """The line of ``output`` that holds the prediction of data line ``line`` (for errors)."""
    with output.open("rb") as handle:
        for item in read_jsonl(handle):
            if isinstance(item.value, dict) and item.value.get("line") == line:
                return item.line
    return 0  # pragma: no cover - only asked of a row just read


def _refuse_empty(data: object, signature: type[Signature]) -> None:
    """Refuse a data file without a row: a run of it would do nothing and report success."""
    if not isinstance(data, (str, os.PathLike)):
        return
    # A generator: closed at once, so the file is not left open until it is collected.
    rows = cast("Generator[Any, None, None]", read_examples(data, signature))
    with contextlib.closing(rows):
        if next(rows, None) is None:
            raise ConfigurationError(
                f"no rows in the data file {str(data)!r}: it is empty (a .jsonl file holds one "
                "JSON object per line, a .csv file a header row and a row per example); give "
                "the file that holds the rows to predict"
            )


def _reiterable(data: object) -> bool:
    """Whether ``data`` can be read twice: a file, or a collection rather than an iterator."""
    return isinstance(data, (str, os.PathLike)) or iter(cast(Iterable[Any], data)) is not data


#: Consecutive rows failing with the same kind of error that stop a run (`run_file`).
MAX_CONSECUTIVE_ERRORS = 5

#: The longest provider outage a run waits out, in seconds (`run_file`'s ``max_outage``).
MAX_OUTAGE = 900.0

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
    max_outage: float = MAX_OUTAGE,
) -> RunSummary:
    """Predict every row of ``data`` into ``output``, resuming where a previous run stopped.

    A provider that is down for a while does not end the run. When a row fails with a
    transient error (HTTP 5xx, 429, a connection error, a timeout: after the LM's own
    retries, ``LM(num_retries=)``), the whole run pauses: no new row is sent, the rows not
    yet started are taken back, and the run waits 2 s, 4 s, 8 s... (at most a minute
    between two tries, or what ``Retry-After`` asks), then sends one of the failed rows
    again (a new row once each has failed such a try). The first answer ends the pause:
    every row that failed meanwhile is sent again (none lost, none written twice) and the
    run goes on at full concurrency. While it waits, the progress line says so
    (``provider unavailable (HTTP 500): waiting 8 s; outage 0:42 of 15:00``) and the
    ``structio`` logger records each pause, wait and resumption. An outage longer than
    ``max_outage`` stops the run (``stopped`` says why); the same call later continues it.

    Args:
        predict: What predicts each row.
        data: A ``.jsonl`` or ``.csv`` file, or an iterable of dicts.
        output: The JSONL file rows are appended to (rows already there are skipped).
        concurrency: Calls in flight at once.
        progress: Say what is happening and draw a progress line on standard error (only
            on a terminal).
        max_consecutive_errors: Stop once this many rows in a row fail with the same kind
            of error (the same class, and the same HTTP status). Errors that belong to one
            row (an answer that does not parse, a prompt over the context window) never
            count, nor do transient errors while outages are waited out. Errors in what
            every row shares stop the run at the first row: a `ConfigurationError`, a
            rejected key (`AuthenticationError`), an unknown model or endpoint (404).
            ``None`` never stops.
        max_outage: The longest provider outage waited out, in seconds, counted from the
            first failure and begun anew by every answer. ``0`` waits out none: a
            transient error fails its row, and rows failing alike stop the run
            (``max_consecutive_errors``), as any other error. A row that fails in three
            outages, the provider answering other rows in between, is a failed row.

    Returns:
        The `RunSummary`. ``stopped`` is set when errors stopped the run (the rows then
        waiting for the provider are among the failed), ``interrupted`` when Ctrl-C did:
        in the main thread, SIGINT stops the run cleanly rather than raising
        `KeyboardInterrupt` inside it, during a pause too. No new row is sent; the calls
        in flight finish and are written (a second Ctrl-C leaves them); the output holds
        every row finished, and the same call later does the rest.

    Raises:
        ConfigurationError: ``output`` holds lines that are not this run's to continue
            (another file, another signature, model or adapter, a data row changed since it
            was predicted). Checked before any call, except a changed row of ``data`` given
            as an iterator (read once), which is found when the run reaches it. Or ``data``
            is a file without a row (nothing is written), or ``max_outage`` is negative.
        SaveError: ``output`` or its errors file cannot be written: a path that cannot be
            (checked before any call), or a full disk during the run. Every row written
            before is kept whole, none in part; a rerun does the rest.
    """
    if not max_outage >= 0:  # NaN too
        raise ConfigurationError(f"max_outage must be 0 seconds or more, not {max_outage}")
    _refuse_empty(data, predict.signature)
    out = Path(output)
    summary = RunSummary(out)
    maker = _Maker.of(predict)
    done = _Done.read(out, maker)
    if done.rows and _reiterable(data):
        for _ in done.checked(read_examples(data, predict.signature), data):
            pass  # every done row checked before the first call
    inputs_of = predict.signature.input_fields
    bar = Progress.over(data, label=predict.signature.__name__, enabled=progress)
    _load_client(predict, bar)
    bar.restart_clock()
    outage = _Outage(max_outage)
    streak = _Streak(max_consecutive_errors, outages=outage.enabled)
    stop = _StopFlag()
    workers = _Workers(predict, concurrency)
    in_flight: dict[int, dict[str, Any]] = {}

    def send(rows: Iterable[tuple[int, dict[str, Any]]]) -> None:
        for line, inputs in rows:
            in_flight[line] = inputs
            workers.submit(line, inputs)

    def fail(line: int, error: str) -> None:
        summary.failed.append((line, error))
        bar.advance(failed=True)

    def resume() -> None:
        """The provider answered: an outage is over, and its rows are sent again."""
        if outage.paused:
            bar.status(None)
            send(outage.answered().items())

    def finish(line: int, result: Prediction | BaseException, handle: Appender) -> None:
        inputs = in_flight.pop(line)
        if isinstance(result, BaseException):
            if outage.failed(line, inputs, result):
                # Paused: the rows no thread has started wait with this one.
                for queued, values in workers.take_queued():
                    outage.waiting[queued] = in_flight.pop(queued, values)
                return
            if not transient(result):  # an answer (or no call): the provider is there
                resume()
            fail(line, f"{type(result).__name__}: {result}")
            if streak.add(result) and summary.stopped is None:
                summary.stopped = streak.message()
                summary.stopped_by = type(result).__name__
            return
        resume()
        streak.reset()
        # Through the class: an output may be named to_dict (see Prediction).
        row = maker.record(line, inputs, Prediction.to_dict(result), Prediction.meta_of(result))
        handle.write(row)
        summary.done += 1
        bar.advance()

    def wait_then_probe(*, fresh: bool) -> bool:
        """Nothing in flight, rows waiting: wait, then send one again (or stop, out of time).

        Returns:
            Whether to send a new row of the data as the probe instead (only when
            ``fresh`` rows remain): every waiting row has failed a probe already.
        """
        seconds = outage.next_wait()
        if seconds is None:
            summary.stopped = outage.stop_message()
            summary.stopped_by = type(outage.error).__name__
            error = f"{type(outage.error).__name__}: {outage.error}"
            for line in outage.abandon():
                fail(line, error)  # in the errors file; a rerun sends them
            bar.status(None)
            return False
        wait_out(outage, seconds, stopped=lambda: stop.count > 0, show=bar.status)
        if stop.count:
            return False
        bar.status(outage.status(None))
        if fresh and outage.tried_all:
            return True
        send([outage.probe()])
        return False

    def collect(handle: Appender, *, until: int, fresh: bool = True) -> None:
        """Write finished rows until ``until`` at most are in flight, with no outage on.

        Returns early when the run stops (a second Ctrl-C, an outage out of time), or, during
        an outage, for the caller to send a new row as a probe (``fresh``: rows remain).
        """
        while len(in_flight) > until or outage.paused:
            if stop.count > 1:
                return  # a second Ctrl-C: leave the calls in flight
            if stop.count and not stop.told:
                stop.told = True
                for line, _ in workers.take_queued():
                    in_flight.pop(line, None)  # they stay undone, for the next run
                outage.abandon()  # as those: the next run sends them
                bar.status(None)
                if progress and in_flight:
                    ended = "\n" if bar.enabled else ""  # off the progress line
                    print(
                        f"{ended}structio: stopping; waiting for {len(in_flight):,} calls in "
                        "flight (Ctrl-C again to leave them)",
                        file=sys.stderr,
                    )
                continue
            if outage.paused and (stop.count or summary.stopped or not outage.waiting):
                # Stopping (a row failed meanwhile: it is left for the next run, as the
                # rows not sent), or no row left to probe with: nothing to wait for.
                outage.abandon()
                bar.status(None)
                continue
            if outage.paused and not in_flight:
                if wait_then_probe(fresh=fresh):
                    return
                continue
            item = workers.result(_POLL)
            if item is not None:
                finish(*item, handle)

    ended = False
    try:
        with stop.installed(), Appender(out, what="the output", kept=_ROW_LOST) as handle:
            for line, values in read_examples(data, predict.signature):
                if stop.count or summary.stopped:
                    break
                if line in done.rows:
                    done.check(line, values, data)  # an iterator's rows are checked here
                    summary.already_done += 1
                    bar.advance(skipped=True)
                    continue
                if isinstance(values, Problem):
                    fail(line, values.message)
                    continue
                send([(line, _inputs(values, inputs_of))])
                # Bounded: the data is streamed, never read whole.
                collect(handle, until=2 * concurrency - 1)
            if summary.stopped and not stop.count:
                for line, _ in workers.take_queued():
                    in_flight.pop(line, None)
            collect(handle, until=0, fresh=False)
        ended = True
    finally:
        workers.close()
        bar.close()
        _write_errors(out, summary.failed, quiet=not ended)
    summary.interrupted = stop.count > 0
    return summary


def _load_client(predict: Predict, bar: Progress) -> None:
    """Load the model's client before the first row, saying so: litellm takes seconds."""
    lm = predict.lm if predict.lm is not None else current_settings().lm
    load = getattr(lm, "load", None)
    if callable(load):
        bar.say("structio: loading the model client...")
        load()


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
        ConfigurationError: The model has no batch API structio can reach, the state file
            belongs to another model or signature, or ``output`` is not this run's to
            continue, or ``data`` is a file without a row (as in `run_file`; all checked
            before any request).
        LMError: The provider refused an upload or a batch.
        SaveError: ``output``, its errors file or the state file cannot be written (as in
            `run_file`; see `structio.batch.submit` for the state file).
    """
    from structio.batch import BatchCall, BatchLimits, state_path, submit

    _refuse_empty(data, predict.signature)
    out = Path(output)
    summary = RunSummary(out)
    maker = _Maker.of(predict)
    done = _Done.read(out, maker)
    inputs_of = predict.signature.input_fields
    rows: dict[int, dict[str, Any]] = {}
    for line, values in done.checked(read_examples(data, predict.signature), data):
        if line in done.rows:
            summary.already_done += 1
        elif isinstance(values, Problem):
            summary.failed.append((line, values.message))
        else:
            rows[line] = _inputs(values, inputs_of)
    adapter, lm, params = predict._resolve(None, None, None, None)
    call = BatchCall(
        adapter,
        lm,
        predict.signature,
        predict.demos,
        params,
        predict.options,
    )
    ended = False
    try:
        with Appender(out, what="the output", kept=_ROW_LOST) as handle:

            def write(line: int, inputs: Mapping[str, Any], outcome: Outcome) -> None:
                if isinstance(outcome, BaseException):
                    summary.failed.append((line, f"{type(outcome).__name__}: {outcome}"))
                    return
                prediction = Prediction.from_result(outcome)
                # Written at once (a stop later keeps it); through the class, as run_file.
                outputs, meta = Prediction.to_dict(prediction), Prediction.meta_of(prediction)
                handle.write(maker.record(line, inputs, outputs, meta))
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
                job.wait(poll_interval=poll_interval, report=False)  # in run's summary
            except KeyboardInterrupt:
                if progress:
                    print(
                        f"structio batch: the batches keep running at the provider; run the "
                        f"same command again to pick them up ({state_path(out)})",
                        file=sys.stderr,
                    )
                raise
            summary.cost_line = job.report()
        ended = True
    finally:
        _write_errors(out, summary.failed, quiet=not ended)
    return summary


# What a row that could not be written leaves (a `SaveError`'s last words).
_ROW_LOST = "this row was not written; the rows before it are kept, and a rerun does the rest"


def _write_errors(out: Path, failed: list[tuple[int, str]], *, quiet: bool = False) -> None:
    """Write the failed rows to the errors file (atomically), or remove it when none failed.

    Args:
        out: The run's output.
        failed: ``(line, error)`` of each failed row.
        quiet: Let a file that cannot be written go: the run is ending with an error of its
            own, which says more (a full disk fails this file as it failed the output).

    Raises:
        SaveError: The errors file cannot be written or removed (unless ``quiet``).
    """
    path = errors_path(out)

    def write(handle: IO[str]) -> None:
        for line, error in sorted(failed):
            handle.write(json.dumps({"line": line, "error": error}, ensure_ascii=False) + "\n")

    try:
        if failed:
            atomic_write(path, write, what="the errors file")
            return
        try:
            path.unlink(missing_ok=True)
        except (OSError, ValueError) as exc:
            raise save_error(
                path, "the errors file", exc, doing="remove", kept="it is as it was"
            ) from exc
    except SaveError:
        if not quiet:
            raise
