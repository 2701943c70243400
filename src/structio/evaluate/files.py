"""Evaluating prediction files: a labelled data file joined with the rows `structio run` writes.

A prediction row is ``{"line": n, "inputs": {...}, "outputs": {...}, ...}``, ``line``
being the data file's line it answers; rows come in any order. The data file's labelled
outputs are put in a temporary SQLite table on disk, keyed by line, and each prediction
file is then read a row at a time: memory stays flat over any number of rows. Optional keys
of a prediction row are read when present: ``"_confidence"`` (field -> number in ``[0,
1]``), ``"_usage"`` (``prompt_tokens``, ``completion_tokens``), ``"_cost"`` (USD) and
``"_requests"``. Failed rows are read from the run's errors file (``{"line", "error"}``
rows), each counted under its error's class.
"""

from __future__ import annotations

import csv
import json
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from structio._util.data import jsonable
from structio._util.files import open_text, read_jsonl
from structio._util.log import logger
from structio._util.progress import Progress
from structio.evaluate.evaluation import Evaluation, reason_of
from structio.evaluate.metrics import UserMetric
from structio.exceptions import ConfigurationError
from structio.finetune import Problem, read_examples
from structio.signatures import Signature

__all__ = ["Labels", "evaluate_files", "prediction_rows"]

_RUN_FORMAT = (
    'a row of `structio run` output: {"line": n, "inputs": {...}, "outputs": {...}}; '
    "pass the file `structio run -o` wrote"
)


class Labels:
    """The labelled outputs of a data file by line, in a temporary SQLite table on disk."""

    def __init__(self, data: str | os.PathLike[str], signature: type[Signature] | None) -> None:
        self.path = Path(data)
        self.signature = signature
        self.rows = 0
        #: Data rows that could not be read, and the first of them (``line N: why``).
        self.problem_count = 0
        self.first_problem: str | None = None
        self._db = sqlite3.connect("")  # "": a temporary database on disk, not in memory
        try:
            self._db.execute("CREATE TABLE labels (line INTEGER PRIMARY KEY, row TEXT)")
            self._db.executemany("INSERT OR REPLACE INTO labels VALUES (?, ?)", self._read())
            self._db.commit()
        except BaseException:
            self._db.close()  # a missing or unreadable file: the table goes with the error
            raise

    def _read(self) -> Iterator[tuple[int, str]]:
        for line, row in _data_rows(self.path, self.signature):
            if isinstance(row, Problem):
                self.problem_count += 1
                self.first_problem = self.first_problem or f"line {line}: {row.message}"
                continue
            self.rows += 1
            yield line, json.dumps(jsonable(row), ensure_ascii=False)

    def get(self, line: int) -> dict[str, Any] | None:
        """The data row of ``line`` (labels and inputs), or ``None`` when there is none."""
        found = self._db.execute("SELECT row FROM labels WHERE line = ?", (line,)).fetchone()
        return None if found is None else dict(json.loads(found[0]))

    def close(self) -> None:
        """Remove the table."""
        self._db.close()


def _data_rows(
    path: Path, signature: type[Signature] | None
) -> Iterator[tuple[int, Mapping[str, Any] | Problem]]:
    suffix = path.suffix.lower()
    # CSV cells are text: the signature reads them as its types. JSON lines hold JSON values
    # already, compared as JSON (validating each row would cost more than scoring it).
    if signature is not None and suffix == ".csv":
        yield from read_examples(path, signature)
        return
    if not path.is_file():
        raise ConfigurationError(f"no such file: {str(path)!r}")
    with open_text(path) as handle:
        if suffix == ".csv":
            reader = csv.DictReader(handle)
            for row in reader:
                yield reader.line_num, {k: v for k, v in row.items() if k is not None}
            return
        for item in read_jsonl(handle):
            if isinstance(item.value, dict):
                yield item.line, item.value
            else:
                yield item.line, Problem(item.line, item.error or "a line must hold an object")


def prediction_rows(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The rows of a `structio run` output, checked; a last line cut off by a crash is skipped.

    Raises:
        ConfigurationError: The file is missing, or a line is not a row of that format (the
            error names the file and the line).
    """
    file = Path(path)
    if not file.is_file():
        raise ConfigurationError(f"no such file: {str(file)!r}")
    with open_text(file, newline=None) as handle:
        for item in read_jsonl(handle):
            value = item.value
            if item.error is not None and not item.complete:
                return  # the run was writing this line when it stopped
            if (
                item.error is not None
                or not isinstance(value, dict)
                or not isinstance(value.get("line"), int)
                or not isinstance(value.get("outputs"), dict)
            ):
                why = item.error or "not such a row"
                raise ConfigurationError(
                    f"{str(file)!r}, line {item.line}: {why}; expected {_RUN_FORMAT}"
                )
            yield value


def _failed_rows(path: Path | None) -> Iterator[tuple[int, str]]:
    if path is None or not path.is_file():
        return
    with open_text(path, newline=None) as handle:
        for item in read_jsonl(handle):
            value = item.value
            if isinstance(value, dict) and isinstance(value.get("line"), int):
                yield value["line"], reason_of(str(value.get("error", "")))


def evaluate_files(
    data: str | os.PathLike[str],
    predictions: Sequence[str | os.PathLike[str]],
    *,
    errors: Sequence[str | os.PathLike[str] | None] | None = None,
    names: Sequence[str] | None = None,
    signature: type[Signature] | None = None,
    metrics: Mapping[str, UserMetric] | None = None,
    tolerance: float | Mapping[str, float] = 0.0,
    bins: int = 10,
    progress: bool = False,
) -> list[Evaluation]:
    """Evaluate each prediction file against the labels of ``data``; one `Evaluation` each.

    Args:
        data: The labelled data file (``.jsonl`` or ``.csv``) the predictions were made from.
        predictions: One or more outputs of `structio run` over ``data`` (two adapters,
            two models...), each evaluated on its own and shown side by side.
        errors: Each prediction file's errors file (``None``: no failed rows recorded).
        names: What to call each system (by default the prediction file's name).
        signature: The signature predicted: its output types choose each field's metric
            (without one, each labelled JSON value's type does) and read CSV cells.
        metrics: A user metric per output field.
        tolerance: The absolute tolerance of number fields.
        bins: Confidence bins for calibration.
        progress: Show a progress bar on a terminal.

    Raises:
        ConfigurationError: A file is missing or not in its format.
    """
    types = (
        {name: field.annotation for name, field in signature.output_fields.items()}
        if signature is not None
        else None
    )
    labels = Labels(data, signature)
    if labels.problem_count:
        logger().warning(
            "%s: %d row(s) could not be read and are not scored; the first, %s",
            str(labels.path),
            labels.problem_count,
            labels.first_problem,
        )
    results: list[Evaluation] = []
    try:
        for index, path in enumerate(predictions):
            name = names[index] if names is not None else Path(path).name
            result = Evaluation(name, types=types, metrics=metrics, tolerance=tolerance, bins=bins)
            errors_file = errors[index] if errors is not None else None
            _evaluate_one(labels, Path(path), errors_file, result, progress)
            result.unreadable = labels.problem_count
            results.append(result)
    finally:
        labels.close()
    return results


def _evaluate_one(
    labels: Labels,
    path: Path,
    errors_file: str | os.PathLike[str] | None,
    result: Evaluation,
    progress: bool,
) -> None:
    bar = Progress(labels.rows, label=f"eval {path.name}", enabled=progress)
    seen = 0
    try:
        for row in prediction_rows(path):
            data = labels.get(row["line"])
            if data is None:
                raise ConfigurationError(
                    f"{str(path)!r}: a prediction for line {row['line']}, but "
                    f"{str(labels.path)!r} has no row there; were they made from another file?"
                )
            outputs: dict[str, Any] = row["outputs"]
            gold = {name: data[name] for name in outputs if name in data}
            result.add(
                gold,
                outputs,
                confidence=_mapping(row.get("_confidence")),
                usage=_mapping(row.get("_usage")),
                cost=row.get("_cost"),
                requests=row.get("_requests"),
            )
            seen += 1
            bar.advance()
        for _line, reason in _failed_rows(None if errors_file is None else Path(errors_file)):
            result.fail(reason)
            bar.advance(failed=True)
    finally:
        bar.close()
    result.missing = max(0, labels.rows - seen - sum(result.failed.values()))


def _mapping(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, dict) else None
