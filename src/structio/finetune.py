"""Finetune data: labelled examples in, one JSONL line of chat messages per example out.

Each line is ``{"messages": [...]}``: exactly the prompt the adapter sends at inference,
then the assistant's answer written in the adapter's format. The same file is valid for
OpenAI chat fine-tuning and for Hugging Face TRL's conversational format.

    >>> summary = write_jsonl(Triage, "tickets.jsonl", "train.jsonl")   # doctest: +SKIP
    >>> print(summary.report())                                         # doctest: +SKIP

Examples come from a Python iterable of dicts, a JSONL file (one object per line) or a CSV
file (a header row of field names; cells are read as the fields' types). They are streamed:
memory stays flat however many there are (duplicates are tracked in a temporary SQLite
table on disk, token statistics in a histogram). The output is written to a temporary file
beside the target and moved into place at the end, so a crash or Ctrl-C never leaves a
half-written file at the target path. Ctrl-C and SIGTERM remove the temporary file; one
left by ``kill -9`` is removed by a later write to the same path once it is an hour old
(`structio._util.files.atomic_write`).

Every example is checked: its fields and types, that the answer written reads back (with
the adapter's own parser) to the example's outputs, its token count against a limit, and
that it is not a duplicate. Any problem names the input line and what to do; with
``skip_invalid`` the good rows are written and the rest reported, otherwise nothing is.
"""

from __future__ import annotations

import csv
import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from structio._demos import InvalidFieldError, checked_demos, typed_values
from structio._util.files import JSONLine, atomic_write, open_text, read_jsonl
from structio._util.log import logger
from structio._util.progress import Progress
from structio._util.seen import SeenTexts
from structio.adapters.base import as_signature
from structio.exceptions import ConfigurationError, DataError, FormatError, ParseError
from structio.lm import models
from structio.rendering.tokens import (
    DEFAULT_ENCODING,
    OPENAI_FRAMING,
    Tokenizer,
    count_chat,
    get_tokenizer,
)
from structio.settings import resolve_adapter
from structio.signatures.signature import Signature

if TYPE_CHECKING:
    from structio.adapters.base import Adapter, SignatureLike

__all__ = ["Problem", "Summary", "read_examples", "validate", "write_jsonl"]

ROLES = ("system", "user", "assistant")
MESSAGE_KEYS = frozenset(("role", "content", "name", "weight"))
# Problems kept in full for the report; beyond this only counted (memory stays flat).
MAX_PROBLEMS_KEPT = 1000
DATA_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}


@dataclass(frozen=True)
class Problem:
    """One problem with one input row.

    Attributes:
        line: The line of the input file (or the example's number, from 1, for a Python
            iterable) the problem is on.
        message: What is wrong and what to do.
        field: The field concerned, if one is.
        unit: ``"line"`` or ``"example"``: what ``line`` counts.
    """

    line: int
    message: str
    field: str | None = None
    unit: str = "line"

    def __str__(self) -> str:
        return f"{self.unit} {self.line}: {self.message}"


@dataclass
class Summary:
    """What a `write_jsonl` or `validate` run found.

    Attributes:
        path: The file written or validated.
        rows: Input rows read.
        written: Rows written (0 for `validate`, which writes nothing).
        skipped: Rows with problems (left out with ``skip_invalid``).
        problems: The first 1,000 problems, in input order (``problem_count`` has them all).
        problem_count: How many problems there were.
        token_counts: Histogram of tokens per valid row (count -> rows).
        token_limit: The limit rows were checked against, if any.
        largest_known: With no model or limit given, the map's largest window and its model.
        model: The model named for the limit and the price, if any.
        cost: Estimated training cost in USD (tokens x epochs x price), when a price is known.
        cost_note: Where the price came from, or why there is no estimate.
        checked_only: A `validate` run (nothing written).
    """

    path: Path | None = None
    rows: int = 0
    written: int = 0
    skipped: int = 0
    problems: list[Problem] = field(default_factory=list)
    problem_count: int = 0
    token_counts: Counter[int] = field(default_factory=Counter)
    token_limit: int | None = None
    largest_known: tuple[int, str] | None = None
    model: str | None = None
    cost: float | None = None
    cost_note: str = ""
    checked_only: bool = False

    def add_problem(self, problem: Problem) -> None:
        """Record a problem (keeping the first 1,000 in full)."""
        self.problem_count += 1
        if len(self.problems) < MAX_PROBLEMS_KEPT:
            self.problems.append(problem)

    @property
    def valid(self) -> int:
        """Rows without problems."""
        return sum(self.token_counts.values())

    @property
    def tokens(self) -> dict[str, int]:
        """``min``, ``median``, ``max`` and ``total`` tokens per valid row (0s when none)."""
        counts = self.token_counts
        if not counts:
            return {"min": 0, "median": 0, "max": 0, "total": 0}
        keys = sorted(counts)
        middle, seen, median = (self.valid - 1) // 2, 0, keys[0]
        for key in keys:
            seen += counts[key]
            if seen > middle:
                median = key
                break
        total = sum(k * n for k, n in counts.items())
        return {"min": keys[0], "median": median, "max": keys[-1], "total": total}

    def report(self) -> str:
        """A readable summary: counts, token statistics, cost, and the first problems."""
        t = self.tokens
        if self.checked_only:
            head = f"{_rows(self.rows)} checked in {self.path}: {self.valid:,} valid, " + (
                f"{self.skipped:,} with problems"
            )
        else:
            head = (
                f"{_rows(self.rows)} read, {self.written:,} written, {self.skipped:,} skipped"
                + (f" -> {self.path}" if self.path is not None and self.written else "")
            )
        if self.valid:
            tokens = (
                f"tokens per row: min {t['min']:,}, median {t['median']:,}, max {t['max']:,}; "
                f"total {t['total']:,}"
                + (
                    f" (limit {self.token_limit:,})"
                    if self.token_limit and not self.largest_known
                    else ""
                )
            )
        else:  # no statistics of no rows
            tokens = "no valid rows" if self.checked_only else "no rows written"
        lines = [head, tokens]
        if self.largest_known is not None and t["max"] > _MOST_MODELS_TAKE:
            lines.append(
                f"note: no model named, so rows were checked only against the largest context "
                f"window litellm knows ({self.token_limit:,} tokens, {self.largest_known[1]}); "
                f"a row of {t['max']:,} tokens is over most models' limit: give --model"
            )
        if self.cost is not None:
            lines.append(f"estimated training cost: ${self.cost:,.2f} ({self.cost_note})")
        elif self.cost_note:
            lines.append(f"estimated training cost: unknown ({self.cost_note})")
        if self.problem_count:
            lines.append(f"{self.problem_count:,} problem(s):")
            lines.extend(f"  {p}" for p in self.problems[:20])
            if self.problem_count > 20:
                lines.append(f"  ... and {self.problem_count - 20:,} more (Summary.problems)")
        return "\n".join(lines)


# Tokens most chat models take (128k): a longer row with no model named is worth a note.
_MOST_MODELS_TAKE = 131_072


def _rows(count: int) -> str:
    """``1 row``, ``2 rows``."""
    return f"{count:,} row" if count == 1 else f"{count:,} rows"


def read_examples(
    source: Iterable[Mapping[str, Any]] | str | os.PathLike[str],
    signature: type[Signature],
) -> Iterator[tuple[int, dict[str, Any] | Problem]]:
    """Stream ``(line, values)`` from a source, values converted to the fields' types.

    A row that cannot be read, names an unknown field or has a value of the wrong type
    comes as ``(line, Problem)`` instead.

    Raises:
        ConfigurationError: The file does not exist, cannot be opened or is not ``.jsonl``
            / ``.csv``.
    """
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        kind = DATA_SUFFIXES.get(path.suffix.lower())
        if kind is None:
            raise ConfigurationError(
                f"cannot read examples from {str(path)!r}: use a .jsonl file (one JSON object "
                "per line) or a .csv file (a header row of field names)"
            )
        if not path.is_file():
            raise ConfigurationError(f"no such file: {str(path)!r}")
        with _opened(path) as handle:
            rows = _jsonl_rows(handle) if kind == "jsonl" else _csv_rows(handle)
            for line, row in rows:
                yield line, _typed(signature, line, row, from_text=kind == "csv")
        return
    if isinstance(cast(Any, source), Mapping):  # a dict iterates its keys: say so instead
        raise ConfigurationError("examples must be an iterable of dicts (or a file), not a dict")
    items: Iterable[Any] = source
    for number, row in enumerate(items, 1):
        if not isinstance(row, Mapping):
            problem = f"an example must be a dict of field name to value, not {type(row).__name__}"
            yield number, Problem(number, problem, unit="example")
            continue
        yield number, _typed(signature, number, row, unit="example")


def _opened(path: Path, newline: str | None = "") -> IO[str]:
    """``path`` open for reading as text (by default its newlines as written, for CSV).

    A byte-order mark (Excel's "CSV UTF-8") is skipped: see `open_text`.

    Raises:
        ConfigurationError: The file cannot be opened (no permission...).
    """
    try:
        return open_text(path, newline=newline)
    except OSError as exc:
        raise ConfigurationError(
            f"cannot read {str(path)!r}: {exc.strerror or exc}; check the file and its permissions"
        ) from exc


def _jsonl_rows(handle: IO[str]) -> Iterator[tuple[int, Mapping[str, Any] | Problem]]:
    for item in read_jsonl(handle):
        if item.error is not None:
            yield item.line, Problem(item.line, item.error)
        elif not isinstance(item.value, dict):
            kind = type(item.value).__name__
            yield item.line, Problem(item.line, f"a line must hold a JSON object, not {kind}")
        else:
            yield item.line, item.value


def _csv_rows(handle: IO[str]) -> Iterator[tuple[int, Mapping[str, Any] | Problem]]:
    reader = csv.DictReader(handle)
    for row in reader:
        line = reader.line_num
        if None in row:  # more cells than the header has names
            yield line, Problem(line, "more cells than the header names; quote cells with commas")
            continue
        yield line, {k: v for k, v in row.items() if v is not None}


def _typed(
    signature: type[Signature],
    line: int,
    row: Mapping[str, Any] | Problem,
    *,
    from_text: bool = False,
    unit: str = "line",
) -> dict[str, Any] | Problem:
    if isinstance(row, Problem):
        return row
    try:
        return typed_values(signature, row, from_text=from_text)
    except InvalidFieldError as exc:
        return Problem(line, str(exc), exc.field, unit)


def count_tokens(messages: Iterable[Mapping[str, Any]], tokenizer: Tokenizer) -> int:
    """Tokens of a chat as OpenAI counts them (`count_chat` with `OPENAI_FRAMING`).

    Only system messages (the same in every row) go through the tokenizer's cache; the rest
    are distinct rows, which would only push it out.
    """
    return count_chat(messages, tokenizer, OPENAI_FRAMING, cached_roles=("system",))


def write_jsonl(
    signature: SignatureLike,
    examples: Iterable[Mapping[str, Any]] | str | os.PathLike[str],
    path: str | os.PathLike[str],
    *,
    adapter: Adapter | None = None,
    demos: Iterable[Mapping[str, Any]] = (),
    skip_invalid: bool = False,
    max_tokens: int | None = None,
    model: str | None = None,
    encoding: str = DEFAULT_ENCODING,
    training_price: float | None = None,
    epochs: int = 1,
    progress: bool = False,
) -> Summary:
    """Write one ``{"messages": [...]}`` line per example, checked, atomically.

    Args:
        signature: A signature class or a string spec.
        examples: Dicts with the signature's inputs and outputs: an iterable, or the path
            of a ``.jsonl`` or ``.csv`` file.
        path: The JSONL file to write.
        adapter: The format of the prompt and of the answer, exactly as at inference: by
            default the one `Predict` would use (the configured adapter, else ChatAdapter).
        demos: Few-shot examples included in every prompt.
        skip_invalid: Write the valid rows and report the rest. Otherwise any problem means
            nothing is written and `DataError` is raised.
        max_tokens: The most tokens a row may have. By default the model's input limit
            (litellm's model info) when ``model`` is given, else the largest any model has.
        model: The model to fine-tune: its token limit and, with ``training_price`` or a
            training price in litellm's model info, the cost estimate.
        encoding: The tokenizer for counting (``o200k_base`` works offline).
        training_price: USD per million training tokens, for the cost estimate.
        epochs: Passes over the data, for the cost estimate.
        progress: Show a progress line on standard error (only on a terminal).

    Returns:
        The `Summary`: rows written and skipped, problems, token statistics, cost.

    Raises:
        DataError: Some rows have problems and ``skip_invalid`` is off (nothing written),
            or there are no examples at all.
        ConfigurationError: The examples file is missing or of an unknown kind.
        SaveError: ``path`` cannot be written (a NUL in it, no permission, a full disk...);
            a file already there is left as it was.
    """
    sig = as_signature(signature)
    target = Path(path)
    summary = Summary(path=target, model=model)
    _set_limit(summary, max_tokens)
    rows = _Rows(sig, resolve_adapter(adapter), checked_demos(sig, demos), encoding, summary)
    unit = "line" if isinstance(examples, (str, os.PathLike)) else "example"
    bar = Progress.over(examples, label="finetune", enabled=progress)

    def write(out: IO[str]) -> None:
        for line, values in read_examples(examples, sig):
            result = rows.encode(line, values, unit)
            if isinstance(result, Problem):
                summary.add_problem(result)
                summary.skipped += 1
            else:
                out.write(result + "\n")
                summary.written += 1
            bar.advance(failed=isinstance(result, Problem))
        _estimate_cost(summary, training_price, epochs)
        if summary.rows == 0:
            raise DataError(f"no examples in {_describe(examples)}", summary=summary)
        if summary.problem_count and not skip_invalid:
            summary.written = 0
            raise DataError(
                nothing_written(summary, target, "skip_invalid=True"),
                problems=summary.problems,
                summary=summary,
            )

    try:
        # Nothing reaches `target` unless every row was read: a problem or Ctrl-C leaves the
        # old file as it was.
        atomic_write(target, write, what="the finetune file")
    finally:
        bar.close()
        rows.close()
    return summary


def nothing_written(summary: Summary, path: str | os.PathLike[str], skip_option: str) -> str:
    """Why `write_jsonl` wrote nothing: the problems, and what to do.

    Args:
        summary: The summary of the rows read (with problems).
        path: The file that was not written.
        skip_option: How the caller names ``skip_invalid`` (``skip_invalid=True``, or the
            command's ``--skip-invalid``).
    """
    good = summary.valid
    if good == 0:
        advice = "no example is valid: fix them"
    else:
        rows = "row" if good == 1 else "rows"
        advice = f"fix them, or pass {skip_option} to write the {good:,} good {rows}"
    return (
        f"{summary.problem_count:,} of {summary.rows:,} examples have problems, so nothing "
        f"was written to {str(path)!r}; {advice}. First: {summary.problems[0]}"
    )


class _Rows:
    """Turns examples into checked JSONL text, counting into a `Summary`."""

    def __init__(
        self,
        sig: type[Signature],
        adapter: Adapter,
        demos: list[dict[str, Any]],
        encoding: str,
        summary: Summary,
    ) -> None:
        self.sig = sig
        self.adapter = adapter
        self.demos = demos
        self.tokenizer = get_tokenizer(encoding)
        self.summary = summary
        self.seen = SeenTexts()

    def close(self) -> None:
        self.seen.close()

    def encode(self, line: int, values: dict[str, Any] | Problem, unit: str) -> str | Problem:
        """The row's JSONL text, or its problem."""
        self.summary.rows += 1
        if isinstance(values, Problem):
            return values
        try:
            record = self._record(values)
        except _RowError as exc:
            return Problem(line, str(exc), exc.field, unit)
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        problem = _tally(
            line, unit, record["messages"], text, self.tokenizer, self.summary, self.seen
        )
        return text if problem is None else problem

    def _record(self, values: Mapping[str, Any]) -> dict[str, Any]:
        sig = self.sig
        inputs = {k: v for k, v in values.items() if k in sig.input_fields and v is not None}
        outputs = {k: v for k, v in values.items() if k in sig.output_fields and v is not None}
        try:
            record = self.adapter.format_finetune_data(sig, self.demos, inputs, outputs)
        except FormatError as exc:
            raise _RowError(str(exc)) from None
        answer = record["messages"][-1]["content"]
        try:
            read_back = self.adapter.parse(sig, answer)
        except ParseError as exc:
            raise _RowError(f"the answer written does not read back: {exc}") from None
        for name, value in outputs.items():
            if read_back.get(name) != value:
                raise _RowError(
                    f"output `{name}` does not read back as written ({value!r} reads as "
                    f"{read_back.get(name)!r}); give it a value of the field's type",
                    name,
                )
        return dict(record)


class _RowError(Exception):
    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def validate(
    path: str | os.PathLike[str],
    *,
    signature: SignatureLike | None = None,
    adapter: Adapter | None = None,
    max_tokens: int | None = None,
    model: str | None = None,
    encoding: str = DEFAULT_ENCODING,
    progress: bool = False,
) -> Summary:
    """Check a finetune JSONL file; the summary lists each problem by line.

    Checks: valid JSON per line; a ``messages`` key and no other, or a preference pair
    (OpenAI's ``input``, ``preferred_output``, ``non_preferred_output``; TRL's ``prompt``,
    ``chosen``, ``rejected``), each answer checked after its prompt; each message a dict of
    ``role``, non-empty string ``content`` (and optionally ``name``, ``weight``); roles in
    order (an optional system message first, then user and assistant turns alternating,
    ending with assistant); tokens per row against ``max_tokens`` (or the model's limit);
    duplicate rows; and, with a ``signature``, that each row is in the adapter's format
    (by default the configured adapter, else `ChatAdapter`, as `Predict` chooses): its
    system message is the one the adapter renders for the signature, and its final answer
    reads with the adapter's own reader (a JSON answer is not `ChatAdapter`'s, even though
    it reads one), so a file written for another adapter is caught at its first line.
    With a ``model`` that litellm's map gives no token limit, a warning is logged (logger
    ``"structio"``): no limit is checked.

    Raises:
        ConfigurationError: The file does not exist or cannot be opened.
        DataError: The file holds no rows (it is empty, or only blank lines).
    """
    file = Path(path)
    if not file.is_file():
        raise ConfigurationError(f"no such file: {str(file)!r}")
    sig = as_signature(signature) if signature is not None else None
    chosen = resolve_adapter(adapter)
    summary = Summary(path=file, model=model, checked_only=True)
    _set_limit(summary, max_tokens)
    tokenizer = get_tokenizer(encoding)
    seen = SeenTexts()
    shape = _Shape(sig, chosen) if sig is not None else None
    bar = Progress.over(file, label="validate", enabled=progress)
    try:
        with _opened(file, newline=None) as handle:
            for item in read_jsonl(handle):
                summary.rows += 1
                problem = _check_line(item, shape, tokenizer, summary, seen)
                if problem is not None:
                    summary.add_problem(problem)
                    summary.skipped += 1
                bar.advance(failed=problem is not None)
    finally:
        bar.close()
        seen.close()
    if summary.rows == 0:  # as `write_jsonl` with no examples: nothing to fine-tune on
        raise DataError(
            f"no rows in {str(file)!r}: a finetune file holds one JSON object per line",
            summary=summary,
        )
    return summary


class _Shape:
    """What a row written by ``adapter`` for ``sig`` looks like.

    Its system message, and the reader that finds the adapter's own answers (``sections``
    for `ChatAdapter`, ``JSON`` for `JSONAdapter`).
    """

    def __init__(self, sig: type[Signature], adapter: Adapter) -> None:
        self.sig = sig
        self.adapter = adapter
        self.name = type(adapter).__name__
        self.system = adapter.format_system_message(sig)
        self._own_reader: str | None = None

    def own_reader(self, values: Mapping[str, Any]) -> str:
        """How the adapter's answers read: found once, by reading one it writes."""
        if self._own_reader is None:
            written = self.adapter.format_assistant_message_content(self.sig, dict(values))
            self._own_reader = self.adapter.read(self.sig, written).reader
        return self._own_reader

    def problem(self, messages: list[dict[str, Any]]) -> str | None:
        """What is not in the adapter's format in a well-formed row, or ``None``."""
        hint = "is the file in another format? check --adapter (adapter=)"
        first = messages[0]
        if first.get("role") != "system":
            return f"no system message, but {self.name}'s prompts begin with one; {hint}"
        if first["content"] != self.system:
            at = _first_difference(first["content"], self.system)
            return (
                f"the system message is not the one {self.name} writes for "
                f"{self.sig.__name__} (it differs at character {at:,}); {hint}"
            )
        try:
            reading = self.adapter.read(self.sig, messages[-1]["content"])
        except ParseError as exc:
            return f"the final answer does not read as {self.sig.__name__}: {exc}"
        own = self.own_reader(reading.values)
        if reading.reader != own:
            return (
                f"the final answer is written as {reading.reader}, not as {self.name} writes "
                f"answers ({own}); {hint}"
            )
        return None


def _first_difference(text: str, expected: str) -> int:
    """The position (from 1) of the first character where ``text`` leaves ``expected``."""
    for index, (got, want) in enumerate(zip(text, expected, strict=False)):
        if got != want:
            return index + 1
    return min(len(text), len(expected)) + 1


def _check_line(
    item: JSONLine,
    shape: _Shape | None,
    tokenizer: Tokenizer,
    summary: Summary,
    seen: SeenTexts,
) -> Problem | None:
    line, record = item.line, item.value
    if item.error is not None:
        return Problem(line, item.error)
    if isinstance(record, dict) and frozenset(record) in PAIR_KEYS:
        pair = _pair_messages(record)
        if isinstance(pair, str):
            return Problem(line, f"{PAIR_KEYS[frozenset(record)]} pair: {pair}")
        messages = pair[0]
    else:
        if not isinstance(record, dict) or "messages" not in record:
            return Problem(line, 'a row must be a JSON object with "messages" (or a pair)')
        unknown = sorted(set(record) - {"messages"})
        if unknown:
            return Problem(line, f'unknown key(s) {unknown}; a row holds only "messages"')
        messages = record["messages"]
        problem = _check_messages(messages)
        if problem is not None:
            return Problem(line, problem)
    if shape is not None:
        wrong = shape.problem(messages)
        if wrong is not None:
            return Problem(line, wrong)
    text = json.dumps(record, sort_keys=True, ensure_ascii=False)  # a pair: both answers
    return _tally(line, "line", messages, text, tokenizer, summary, seen)


# A preference pair's keys: OpenAI's preference fine-tuning, TRL's DPO (conversational).
PAIR_KEYS = {
    frozenset(("input", "preferred_output", "non_preferred_output")): "OpenAI preference",
    frozenset(("prompt", "chosen", "rejected")): "TRL DPO",
}


def _pair_messages(record: dict[str, Any]) -> tuple[list[Any], list[Any]] | str:
    """A pair's (prompt + chosen, prompt + rejected) conversations, checked; else why not."""
    if "input" in record:
        given = record["input"]
        if not isinstance(given, dict) or not isinstance(given.get("messages"), list):
            return '"input" must be an object with "messages"'
        prompt = given["messages"]
        chosen, rejected = record["preferred_output"], record["non_preferred_output"]
    else:
        prompt, chosen, rejected = record["prompt"], record["chosen"], record["rejected"]
    if not all(isinstance(part, list) for part in (prompt, chosen, rejected)):
        return "the prompt and both answers must be lists of messages"
    if chosen == rejected:
        return "the chosen and rejected answers are the same; a pair must differ"
    for what, answer in (("chosen", chosen), ("rejected", rejected)):
        problem = _check_messages(prompt + answer)
        if problem is not None:
            return f"with the {what} answer, {problem}"
    return prompt + chosen, prompt + rejected


def _tally(
    line: int,
    unit: str,
    messages: list[dict[str, Any]],
    text: str,
    tokenizer: Tokenizer,
    summary: Summary,
    seen: SeenTexts,
) -> Problem | None:
    """Check a well-formed row's tokens and whether ``text`` came before; count it if fine."""
    tokens = count_tokens(messages, tokenizer)
    limit = summary.token_limit
    if limit is not None and tokens > limit:
        return Problem(
            line,
            f"{tokens:,} tokens, over the limit of {limit:,}; shorten the example or "
            "raise --max-tokens",
            unit=unit,
        )
    first = seen.first_line(text, line)
    if first is not None:
        return Problem(line, f"duplicate of {unit} {first}; remove one", unit=unit)
    summary.token_counts[tokens] += 1
    return None


def _check_messages(messages: Any) -> str | None:
    """What is wrong with a ``messages`` list, or ``None``."""
    if not isinstance(messages, list) or not messages:
        return '"messages" must be a non-empty list'
    expected = "user"
    for index, message in enumerate(messages):
        where = f"message {index}"
        if not isinstance(message, dict):
            return f"{where} must be an object with role and content"
        unknown = sorted(set(message) - MESSAGE_KEYS)
        if unknown:
            return f"{where} has unknown key(s) {unknown}; use role, content (name, weight)"
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            return f"{where} has role {role!r}; use system, user or assistant"
        if role == "user" and isinstance(content, list):
            problem = _check_parts(content, where)
            if problem is not None:
                return problem
        elif not isinstance(content, str) or not content.strip():
            return f"{where} ({role}) must have non-empty text content"
        if role == "system":
            if index != 0:
                return f"{where}: a system message may only come first"
            continue
        if role != expected:
            return f"{where} is {role}, but {expected} comes next (user and assistant alternate)"
        expected = "assistant" if role == "user" else "user"
    if messages[-1].get("role") != "assistant":
        return "the last message must be the assistant's answer"
    return None


def _check_parts(parts: list[Any], where: str) -> str | None:
    """What is wrong with a user message's content parts for vision fine-tuning, or ``None``.

    OpenAI's vision fine-tuning takes text parts and images (an https URL or a base64
    data URI); audio and files cannot be trained on.
    """
    if not parts:
        return f"{where} has an empty list of content parts"
    for number, part in enumerate(parts):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            if not isinstance(part.get("text"), str):
                return f"{where}, part {number}: a text part needs a string 'text'"
        elif kind == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else None
            if not isinstance(url, str) or not url.startswith(
                ("https://", "http://", "data:image/")
            ):
                return (
                    f"{where}, part {number}: an image part needs an image_url.url that is an "
                    "http(s) URL or a data:image/... URI"
                )
        elif kind in ("input_audio", "file"):
            return (
                f"{where}, part {number}: fine-tuning data may hold images but not "
                f"{'audio' if kind == 'input_audio' else 'files'}"
            )
        else:
            return f"{where}, part {number}: unknown content part type {kind!r}"
    return None


def _describe(source: Any) -> str:
    return repr(str(source)) if isinstance(source, (str, os.PathLike)) else "the iterable"


def _set_limit(summary: Summary, max_tokens: int | None) -> None:
    """The limit rows are checked against: ``max_tokens``, the model's, else the largest known."""
    if max_tokens is not None or (model := summary.model) is None:
        largest = models.largest_context_window() if max_tokens is None else None
        summary.token_limit = max_tokens if largest is None else largest[0]
        summary.largest_known = largest
        return
    info = models.model_info(model)  # litellm's model map, read without importing litellm
    summary.token_limit = info.max_input_tokens if info else None
    if summary.token_limit is None:  # said out loud: naming a model reads as "checked"
        logger().warning(
            "litellm's model map has no token limit for model %r, so no row is checked "
            "against one; pass max_tokens= (--max-tokens) to check a limit",
            model,
        )


def _estimate_cost(summary: Summary, training_price: float | None, epochs: int) -> None:
    total = summary.tokens["total"] * max(epochs, 1)
    if training_price is not None:
        summary.cost = total * training_price / 1_000_000
        summary.cost_note = f"{total:,} tokens x ${training_price}/M"
        return
    if summary.model is None:
        return
    if (price := models.training_price(summary.model)) is not None:
        summary.cost = total * price
        summary.cost_note = f"{total:,} tokens at litellm's training price for {summary.model}"
        return
    summary.cost_note = (
        f"litellm has no training price for {summary.model}; pass --training-price "
        "(USD per million tokens)"
    )
