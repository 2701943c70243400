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

import json
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from structio._util.data import jsonable
from structio._util.files import read_jsonl
from structio._util.progress import Progress
from structio.finetune import Problem, read_examples
from structio.predict import Predict, Prediction

if TYPE_CHECKING:
    from structio.batch import Outcome

__all__ = ["RunSummary", "errors_path", "run_batch", "run_file"]


@dataclass
class RunSummary:
    """What a run did: rows done now, done before, failed (with their errors)."""

    output: Path
    done: int = 0
    already_done: int = 0
    failed: list[tuple[int, str]] = field(default_factory=list)
    #: What the batches cost, for a batch run (``--batch``).
    cost_line: str | None = None

    def report(self) -> str:
        """One line per fact, then the first failures."""
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
            lines.extend(f"  line {line}: {error}" for line, error in self.failed[:10])
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


def run_file(
    predict: Predict,
    data: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    output: str | os.PathLike[str],
    *,
    concurrency: int = 8,
    progress: bool = True,
) -> RunSummary:
    """Predict every row of ``data`` into ``output``, resuming where a previous run stopped."""
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    summary = RunSummary(out)
    done = done_lines(out)
    inputs_of = predict.signature.input_fields
    bar = Progress.over(data, label=predict.signature.__name__, enabled=progress)
    pending: dict[Future[Prediction], tuple[int, dict[str, Any]]] = {}

    def finish(future: Future[Prediction], handle: Any) -> None:
        line, inputs = pending.pop(future)
        try:
            prediction = future.result()
        except Exception as exc:
            summary.failed.append((line, f"{type(exc).__name__}: {exc}"))
            bar.advance(failed=True)
            return
        record = {
            "line": line,
            "inputs": jsonable(inputs),
            "outputs": jsonable(prediction.to_dict()),
        }
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        handle.flush()
        summary.done += 1
        bar.advance()

    pool = ThreadPoolExecutor(max_workers=concurrency)
    try:
        with out.open("a", encoding="utf-8") as handle:
            for line, values in read_examples(data, predict.signature):
                if line in done:
                    summary.already_done += 1
                    bar.advance()
                    continue
                if isinstance(values, Problem):
                    summary.failed.append((line, values.message))
                    bar.advance(failed=True)
                    continue
                inputs = {k: v for k, v in values.items() if k in inputs_of and v is not None}
                pending[pool.submit(_predict, predict, inputs)] = (line, inputs)
                while len(pending) >= 2 * concurrency:  # bounded: the data is streamed
                    finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                    for future in finished:
                        finish(future, handle)
            while pending:
                finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for future in finished:
                    finish(future, handle)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        bar.close()
        _write_errors(out, summary.failed)
    return summary


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


def _predict(predict: Predict, inputs: dict[str, Any]) -> Prediction:
    return predict(**inputs)


def _write_errors(out: Path, failed: list[tuple[int, str]]) -> None:
    path = errors_path(out)
    if not failed:
        path.unlink(missing_ok=True)
        return
    with path.open("w", encoding="utf-8") as handle:
        for line, error in sorted(failed):
            handle.write(json.dumps({"line": line, "error": error}, ensure_ascii=False) + "\n")
