"""A signature's calls sent through a provider's batch API: submit, poll, read, resume.

Each row becomes one request whose body is exactly what the online call sends (the call
layer prepares it: `structio.call.prepare`), with the row's line number as its
``custom_id``. Rows answered in the response cache are read from it and never sent. The
rest are split into batches within the provider's limits (`BatchLimits`), each uploaded as
a JSON Lines file and created as a batch (Anthropic takes the requests inline with the
create: its "file" stays here, named by its digest; `structio.lm._batch_anthropic`).
When a batch ends, every answer is read as the online call reads it
(`structio.call.read_response`: the same never-invent rules, ChatAdapter's JSON re-read of
the same text) but no second request is made: a row whose answer cannot be read is a
failed row, as is a row of a batch that expired, failed or was cancelled.

With a state file, the ids are written as soon as they exist (the file id after the upload,
the batch id after the create), atomically: a run stopped by Ctrl-C or a crash is picked up
by the next one with the same state file, which polls the same batches (and creates the
batch of a file uploaded just before the stop) instead of paying twice. The state file is
removed once every batch in it has been read.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Generic, TextIO, TypeVar, Union

from structio._util.files import atomic_write, save_error
from structio.adapters.base import Adapter
from structio.call import CallOptions, CallResult, PreparedCall, prepare, read_response
from structio.exceptions import (
    BadRequestError,
    ConfigurationError,
    LMError,
    SaveError,
    ServerError,
)
from structio.lm.base import BaseLM
from structio.lm.batches import (
    OPENAI_LIMITS,
    BatchAPI,
    BatchInfo,
    BatchLimits,
    BatchPrice,
    batch_api,
    batch_price,
    cache_entry,
)
from structio.lm.errors import lm_error
from structio.lm.types import LMResponse, Usage
from structio.signatures.signature import Signature

__all__ = [
    "BatchCall",
    "BatchJob",
    "BatchLimits",
    "BatchStatus",
    "CostEstimate",
    "Outcome",
    "state_path",
    "submit",
]

R = TypeVar("R")

Outcome = Union[CallResult, BaseException]  # noqa: UP007 - a runtime alias on 3.10
"""What one row came to: the call's result, or why it failed."""

_STATE_VERSION = 1


def state_path(output: Path) -> Path:
    """Where a batch run records its batches: ``preds.jsonl`` -> ``preds.batch.json``."""
    return output.with_name(f"{output.stem}.batch.json")


@dataclass(frozen=True)
class BatchCall:
    """What every row's call is made of: the adapter, the model, the signature and the rest."""

    adapter: Adapter
    lm: BaseLM
    signature: type[Signature]
    demos: list[dict[str, Any]] = field(default_factory=list)
    params: Mapping[str, Any] = field(default_factory=dict)
    #: The call options of the online call (a batch makes one request per row: no re-ask).
    options: CallOptions = field(default_factory=CallOptions)

    def prepare(self, inputs: Mapping[str, Any]) -> PreparedCall:
        """The request the online call with ``inputs`` would send first."""
        return prepare(
            self.adapter,
            self.lm,
            self.signature,
            self.demos,
            inputs,
            self.params,
            options=self.options,
        )


@dataclass(frozen=True)
class CostEstimate:
    """What submitting is expected to cost, before any request.

    Attributes:
        requests: Requests to submit.
        prompt_tokens: Their prompt tokens (structio's count, o200k_base with OpenAI's
            framing), or None when they could not be counted.
        prompt_cost: USD for those prompt tokens at the batch price, or None when unknown.
        price: The batch price used.
    """

    requests: int
    prompt_tokens: int | None
    prompt_cost: float | None
    price: BatchPrice

    def report(self) -> str:
        """One line: requests, tokens, and the cost or why it is unknown."""
        tokens = "?" if self.prompt_tokens is None else f"{self.prompt_tokens:,}"
        head = f"{self.requests:,} requests to submit, {tokens} prompt tokens"
        if self.prompt_cost is None:
            return f"{head}; estimated cost unknown ({self.price.note})"
        return (
            f"{head}; estimated cost ${self.prompt_cost:.6f} for the prompts ({self.price.note})"
            ", plus the answers' tokens"
        )


@dataclass(frozen=True)
class BatchStatus:
    """Where a job's batches stand, as the provider last reported them.

    Attributes:
        batches: Each batch of the job, as the provider last described it.
    """

    batches: tuple[BatchInfo, ...]

    @property
    def total(self) -> int:
        """Requests in all the batches."""
        return sum(info.total for info in self.batches)

    @property
    def completed(self) -> int:
        """Requests answered so far."""
        return sum(info.completed for info in self.batches)

    @property
    def failed(self) -> int:
        """Requests failed so far."""
        return sum(info.failed for info in self.batches)

    @property
    def done(self) -> bool:
        """Whether every batch has ended."""
        return all(info.done for info in self.batches)

    def report(self) -> str:
        """One line: each batch's status, then the counts."""
        states = ", ".join(f"{info.id} {info.status}" for info in self.batches) or "no batches"
        return f"{states}: {self.completed:,}/{self.total:,} done, {self.failed:,} failed"


@dataclass
class _Entry:
    """One batch in the state file: its rows, its file, and its id once created."""

    lines: list[int]
    digest: str
    file_id: str
    batch_id: str | None = None
    status: str = "uploaded"
    collected: bool = False

    def to_data(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "digest": self.digest,
            "file_id": self.file_id,
            "batch_id": self.batch_id,
            "status": self.status,
            "collected": self.collected,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> _Entry:
        return cls(
            lines=[int(line) for line in data["lines"]],
            digest=str(data["digest"]),
            file_id=str(data["file_id"]),
            batch_id=data.get("batch_id"),
            status=str(data.get("status") or "uploaded"),
            collected=bool(data.get("collected")),
        )


class _State:
    """The batches of a job, written to a file (when there is one) each time one changes."""

    def __init__(self, path: Path | None, model: str, signature: str) -> None:
        self.path = path
        self.model = model
        self.signature = signature
        self.entries: list[_Entry] = []
        if path is not None and path.exists():
            self._load(path)

    def _load(self, path: Path) -> None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            entries = [_Entry.from_data(item) for item in data["batches"]]
            model, signature = data["model"], data["signature"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(
                f"the batch state file {str(path)!r} cannot be read ({type(exc).__name__}: "
                f"{exc}); it lists batches that may still be running: look at them on the "
                "provider's site, then move the file away to start afresh"
            ) from None
        if (model, signature) != (self.model, self.signature):
            raise ConfigurationError(
                f"the batch state file {str(path)!r} holds batches of {model} for {signature}, "
                f"not of {self.model} for {self.signature}: finish that run first (the same "
                "command), or move the file away if its batches are no longer wanted"
            )
        self.entries = entries

    def save(self) -> None:
        if self.path is None:
            return
        data = {
            "version": _STATE_VERSION,
            "model": self.model,
            "signature": self.signature,
            "batches": [entry.to_data() for entry in self.entries],
        }

        def write(handle: IO[str]) -> None:
            json.dump(data, handle, ensure_ascii=False)

        atomic_write(self.path, write, what="the batch state file")

    def finish(self) -> None:
        """Forget the state once every batch has been read: nothing is left to pick up.

        Raises:
            SaveError: The file cannot be removed.
        """
        if self.path is not None and all(entry.collected for entry in self.entries):
            try:
                self.path.unlink(missing_ok=True)
            except OSError as exc:
                raise save_error(
                    self.path,
                    "the batch state file",
                    exc,
                    doing="remove",
                    kept="every batch in it has been read: delete it yourself",
                ) from exc


class BatchJob(Generic[R]):
    """Rows submitted to a provider's batch API; made by `Predict.submit_batch`.

    ``status()`` asks the provider where each batch stands, ``wait()`` polls until all
    have ended and reads them, ``results()`` gives each row's prediction (or its error) in
    row order, ``cancel()`` asks the provider to stop the batches.

    Attributes:
        estimate: What submitting was expected to cost (printed before submitting); None
            when nothing was left to submit.
        usage: Tokens of the answers read so far (cache hits cost none).
        answered: Rows answered so far (cache hits included).
        failed: Rows failed so far.
    """

    def __init__(
        self,
        call: BatchCall,
        rows: Mapping[int, Mapping[str, Any]],
        *,
        wrap: Callable[[CallResult], R],
        state: Path | None,
        limits: BatchLimits,
        on_result: Callable[[int, Mapping[str, Any], Outcome], None] | None,
        keep: bool,
        progress: bool,
        stream: TextIO | None,
    ) -> None:
        self._call = call
        self._api: BatchAPI = batch_api(call.lm)
        self._model = call.lm.model
        self._rows: dict[int, Mapping[str, Any]] = dict(rows)
        self._order = sorted(self._rows)
        self._wrap = wrap
        self._limits = limits
        self._on_result = on_result
        self._keep = keep
        self._progress = progress
        self._stream = stream
        self._state = _State(state, self._model, _identity(call.signature))
        self._outcomes: dict[int, Outcome] = {}
        self._infos: dict[str, BatchInfo] = {}
        self._shown: dict[str, tuple[str, int, int]] = {}
        self.estimate: CostEstimate | None = None
        self.usage = Usage()
        self._costs: list[float | None] = []
        self.answered = 0
        self.failed = 0

    # -- what users read ----------------------------------------------------------------

    @property
    def batch_ids(self) -> list[str]:
        """The provider's id of each batch of this job, in the order they were created."""
        return [entry.batch_id for entry in self._state.entries if entry.batch_id]

    @property
    def done(self) -> bool:
        """Whether every batch has ended and been read."""
        return all(entry.collected for entry in self._state.entries)

    @property
    def cost(self) -> float | None:
        """USD of the answers read so far at the batch price; None when a price is unknown."""
        if any(cost is None for cost in self._costs):
            return None
        return float(sum(cost or 0.0 for cost in self._costs))

    def status(self) -> BatchStatus:
        """Ask the provider where each batch not yet read stands (nothing is read)."""
        for entry in self._state.entries:
            if entry.batch_id and not entry.collected:
                self._infos[entry.batch_id] = self._api.retrieve(entry.batch_id)
        return self._status()

    def wait(
        self, *, poll_interval: float = 30.0, timeout: float | None = None, report: bool = True
    ) -> BatchJob[R]:
        """Poll until every batch has ended, reading each one as it ends.

        The provider's counts are printed to standard error as they change (with
        ``progress``). Stopping here (Ctrl-C) loses nothing: the batches keep running, and
        a job made again with the same state file picks them up.

        Args:
            poll_interval: Seconds between two polls.
            timeout: Return after this many seconds even if batches are still running
                (``done`` says whether all have ended).
            report: Print `report` (rows, cost) when every batch has ended (with
                ``progress``); off for a caller that prints it in its own summary.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            for entry in self._state.entries:
                if entry.batch_id is None or entry.collected:
                    continue
                info = self._api.retrieve(entry.batch_id)
                self._infos[entry.batch_id] = info
                if info.done:
                    self._collect(entry, info)
            self._show_status()
            if self.done:
                break
            if deadline is not None and time.monotonic() >= deadline:
                return self
            time.sleep(poll_interval)
        self._state.finish()
        if report:
            self._say(self.report())
        return self

    def cancel(self) -> BatchStatus:
        """Ask the provider to stop every batch not yet read.

        The requests that have not run end unanswered: `wait` then reads each batch as it
        ends, and every row without an answer fails (cancelled), never answered otherwise.
        """
        for entry in self._state.entries:
            if entry.batch_id and not entry.collected:
                info = self._api.cancel(entry.batch_id)
                self._infos[entry.batch_id] = info
                entry.status = info.status
        return self._status()

    def results(self) -> list[R | BaseException]:
        """Each row's result in row order: its prediction, or the exception it failed with.

        Waits for the batches first (`wait` with its defaults) if they have not ended.

        Raises:
            ConfigurationError: The job writes its results elsewhere (``structio run``).
        """
        if not self._keep:
            raise ConfigurationError(
                "this batch job writes each result as it is read (structio run --batch); "
                "read them from its output file"
            )
        if not self.done:
            self.wait()
        results: list[R | BaseException] = []
        for line in self._order:
            outcome = self._outcomes.get(line)
            if outcome is None:  # pragma: no cover - every row ends with an outcome
                outcome = ServerError(f"row {line} was never answered")
            results.append(self._wrap(outcome) if isinstance(outcome, CallResult) else outcome)
        return results

    def __repr__(self) -> str:
        ids = ", ".join(self.batch_ids) or "none"
        return f"BatchJob(rows={len(self._order)}, batches=[{ids}], done={self.done})"

    # -- submitting -----------------------------------------------------------------------

    def _submit(self) -> None:
        """Send what is not yet at the provider: reuse what a stopped run left, then the rest."""
        claimed: set[int] = set()
        reusable: list[tuple[_Entry, bytes]] = []
        kept: list[_Entry] = []
        for entry in self._state.entries:
            if entry.collected:
                kept.append(entry)
                continue
            if entry.batch_id is not None:
                claimed.update(line for line in entry.lines if line in self._rows)
                kept.append(entry)
                continue
            # Uploaded, never created (stopped in between): create it from the same file,
            # if that file still holds these very requests.
            if all(line in self._rows for line in entry.lines):
                built = self._file(entry.lines)
                if built is not None and _digest(built) == entry.digest:
                    reusable.append((entry, built))
                    claimed.update(entry.lines)
                    kept.append(entry)
        if len(kept) != len(self._state.entries):
            self._state.entries = kept  # files whose rows changed are uploaded afresh
            self._state.save()
        fresh: list[tuple[int, bytes]] = []
        tokens: int | None = 0
        for line in self._order:
            if line in claimed:
                continue
            request = self._request(line)
            if request is None:
                continue
            data, count = request
            fresh.append((line, data))
            tokens = None if tokens is None or count is None else tokens + count
        for entry, _ in reusable:
            for line in entry.lines:
                count = self._count(line)
                tokens = None if tokens is None or count is None else tokens + count
        requests = len(fresh) + sum(len(entry.lines) for entry, _ in reusable)
        if requests:
            price = batch_price(self._model)
            prompt_cost = (
                None
                if tokens is None or price.input is None or not price.known
                else tokens * price.input
            )
            self.estimate = CostEstimate(requests, tokens, prompt_cost, price)
            self._say(self.estimate.report())
        for entry, built in reusable:
            self._create(entry, built)
        for lines, data in self._chunks(fresh):
            self._upload(lines, data)

    def _request(self, line: int) -> tuple[bytes, int | None] | None:
        """The request line of a row and its prompt tokens; None when the row is done now.

        A row that cannot be prepared fails here; one answered in the cache is read from it.
        """
        inputs = self._rows[line]
        try:
            prepared = self._call.prepare(inputs)
        except Exception as exc:
            self._finish(line, exc)
            return None
        lm = self._call.lm
        cache, key = cache_entry(lm, prepared.messages, prepared.params)
        if cache is not None:
            hit = cache.get(key)
            if hit is not None and hit.completions:
                self._read(line, prepared, hit.as_cache_hit(0.0))
                return None
        params = lm.request_params(prepared.params)
        data = self._api.request_line(str(line), prepared.messages, params)
        return data, _tokens(prepared.messages)

    def _count(self, line: int) -> int | None:
        try:
            return _tokens(self._call.prepare(self._rows[line]).messages)
        except Exception:
            return None

    def _file(self, lines: list[int]) -> bytes | None:
        """The request file of ``lines`` as it would be built now (None if one cannot be)."""
        parts = []
        for line in lines:
            try:
                prepared = self._call.prepare(self._rows[line])
            except Exception:
                return None
            params = self._call.lm.request_params(prepared.params)
            parts.append(self._api.request_line(str(line), prepared.messages, params))
        return b"".join(parts)

    def _chunks(self, fresh: list[tuple[int, bytes]]) -> Iterable[tuple[list[int], bytes]]:
        """The request lines split into files within the provider's limits."""
        limits = self._limits
        lines: list[int] = []
        parts: list[bytes] = []
        size = 0
        for line, data in fresh:
            if len(data) > limits.max_bytes:
                self._finish(
                    line,
                    BadRequestError(
                        f"row {line}: its request is {len(data):,} bytes, more than a batch "
                        f"file may hold ({limits.max_bytes:,}); shorten its inputs or run it "
                        "online (structio run without --batch)"
                    ),
                )
                continue
            if lines and (len(lines) >= limits.max_requests or size + len(data) > limits.max_bytes):
                yield lines, b"".join(parts)
                lines, parts, size = [], [], 0
            lines.append(line)
            parts.append(data)
            size += len(data)
        if lines:
            yield lines, b"".join(parts)

    def _upload(self, lines: list[int], data: bytes) -> None:
        name = f"structio-{self._call.signature.__name__}-{lines[0]}-{lines[-1]}.jsonl"
        file_id = self._api.upload(data, name)
        entry = _Entry(lines, _digest(data), file_id)
        self._state.entries.append(entry)
        self._state.save()  # before the create: a stop in between reuses this file
        self._create(entry, data)

    def _create(self, entry: _Entry, data: bytes) -> None:
        metadata = {
            "structio_signature": self._call.signature.__name__[:500],
            "structio_rows": f"{entry.lines[0]}-{entry.lines[-1]}",
        }
        info = self._api.create(entry.file_id, metadata, data)
        entry.batch_id = info.id
        entry.status = info.status
        self._infos[info.id] = info
        try:
            self._state.save()
        except SaveError as exc:
            # The batch runs (and bills) at the provider, but no later run can find it.
            raise SaveError(
                f"{exc}; batch {info.id} was created and runs at the provider, but is not "
                "recorded: cancel it on the provider's site, or note its id, before running "
                "again (a new run would submit its rows again)",
                path=exc.path,
                errno=exc.errno,
                strerror=exc.strerror,
            ) from exc.__cause__
        self._say(f"batch {info.id} created: {len(entry.lines):,} requests (file {entry.file_id})")

    # -- reading ------------------------------------------------------------------------

    def _collect(self, entry: _Entry, info: BatchInfo) -> None:
        """Read every answer and failure of an ended batch, then mark it read."""
        waiting = {line for line in entry.lines if line in self._rows}
        for file_id in (info.output_file_id, info.error_file_id):
            if file_id is None or not waiting:
                continue
            for raw in self._api.content(file_id).splitlines():
                if not raw.strip():
                    continue
                try:
                    data = json.loads(raw)
                except ValueError:
                    continue  # a line that is not JSON names no row; its row is missing below
                if not isinstance(data, dict):
                    continue
                result = self._api.read_line(data)
                line = _line_number(result.custom_id)
                if line is None or line not in waiting:
                    continue
                waiting.discard(line)
                if result.response is not None:
                    prepared = self._call.prepare(self._rows[line])
                    cache, key = cache_entry(self._call.lm, prepared.messages, prepared.params)
                    if cache is not None:  # what the online call would have cached
                        cache.set(key, result.response)
                    self._read(line, prepared, result.response)
                else:
                    self._finish(line, result.error or ServerError(f"row {line} failed"))
        for line in sorted(waiting):
            self._finish(line, self._unanswered(info))
        entry.collected = True
        entry.status = info.status
        self._state.save()

    def _unanswered(self, info: BatchInfo) -> LMError:
        """Why a row of an ended batch has no answer."""
        if info.status == "expired":
            why = "the batch expired (24h window) before this request ran"
        elif info.status == "cancelled":
            why = "the batch was cancelled before this request ran"
        elif info.status == "failed":
            reasons = "; ".join(info.errors) or "no reason given"
            return lm_error(
                BadRequestError,
                model=self._model,
                provider=self._api.provider,
                attempts=1,
                detail=f"batch {info.id} failed: {reasons}",
                what="the batch was rejected",
            )
        elif info.status == "ended":
            why = "the batch ended without a result for this request"
        else:
            why = f"the batch ended ({info.status}) without an answer for this request"
        return lm_error(
            ServerError,
            model=self._model,
            provider=self._api.provider,
            attempts=1,
            detail=f"batch {info.id}: {why}; run the row again (online, or in a new batch)",
            what="no answer",
        )

    def _read(self, line: int, prepared: PreparedCall, response: LMResponse) -> None:
        try:
            result = read_response(prepared, response)
        except Exception as exc:
            if not response.cached:
                self._add(response)
            self._finish(line, exc)
            return
        if not response.cached:
            self._add(response)
        self._finish(line, result)

    def _add(self, response: LMResponse) -> None:
        self.usage = self.usage + response.usage
        self._costs.append(response.cost)

    def _finish(self, line: int, outcome: Outcome) -> None:
        inputs = self._rows.pop(line)
        if isinstance(outcome, CallResult):
            self.answered += 1
        else:
            self.failed += 1
        if self._keep:
            self._outcomes[line] = outcome
        if self._on_result is not None:
            self._on_result(line, inputs, outcome)

    # -- telling the user ------------------------------------------------------------------

    def _status(self) -> BatchStatus:
        infos = []
        for entry in self._state.entries:
            if entry.batch_id is None:
                continue
            info = self._infos.get(entry.batch_id)
            infos.append(info or BatchInfo(entry.batch_id, entry.status, total=len(entry.lines)))
        return BatchStatus(tuple(infos))

    def _show_status(self) -> None:
        for info in self._status().batches:
            now = (info.status, info.completed, info.failed)
            if self._shown.get(info.id) != now:
                self._shown[info.id] = now
                self._say(
                    f"batch {info.id}: {info.status}, {info.completed:,}/{info.total:,} done, "
                    f"{info.failed:,} failed"
                )

    def report(self) -> str:
        """One line: rows answered and failed, tokens, and the cost at the batch price."""
        usage = self.usage
        cost = self.cost
        price = batch_price(self._model)
        money = f"${cost:.6f} ({price.note})" if cost is not None else f"unknown ({price.note})"
        return (
            f"{self.answered:,} rows answered, {self.failed:,} failed; "
            f"{usage.prompt_tokens:,} prompt + {usage.completion_tokens:,} completion tokens; "
            f"cost {money}"
        )

    def _say(self, text: str) -> None:
        if self._progress:
            stream = self._stream or sys.stderr
            stream.write(f"structio batch: {text}\n")
            stream.flush()


def submit(
    call: BatchCall,
    rows: Mapping[int, Mapping[str, Any]],
    *,
    wrap: Callable[[CallResult], R],
    state: str | Path | None = None,
    limits: BatchLimits | None = None,
    on_result: Callable[[int, Mapping[str, Any], Outcome], None] | None = None,
    keep: bool = True,
    progress: bool = True,
    stream: TextIO | None = None,
) -> BatchJob[R]:
    """Submit ``rows`` (line number -> inputs) as provider batches; the job that tracks them.

    Args:
        call: The adapter, model, signature, demos and parameters of every row's call.
        rows: The rows to answer, by line number (each request's ``custom_id``).
        wrap: What a row's `CallResult` becomes in `BatchJob.results` (a `Prediction`).
        state: The state file: batches recorded there are picked up, not submitted again.
        limits: Per-batch limits (default: OpenAI's, 50,000 requests and 200 MB).
        on_result: Told of each row as it ends: its line, inputs and outcome.
        keep: Keep each outcome for `BatchJob.results` (off when ``on_result`` writes them).
        progress: Print the estimate, the provider's counts and the cost to ``stream``.
        stream: Where to print (standard error by default).

    Raises:
        ConfigurationError: The LM has no batch API structio can reach, or ``state`` is
            unreadable or of another model or signature.
        LMError: The provider refused an upload or a create (the rows not yet submitted
            can be submitted again: the state file lists what was).
        SaveError: ``state`` cannot be written: after the first upload, before any batch
            is created (no request is billed), or after a create (the message names the
            batch that is not recorded).
    """
    chosen = limits or OPENAI_LIMITS
    if chosen.max_requests < 1 or chosen.max_bytes < 1:
        raise ConfigurationError(f"batch limits must be 1 or more, not {chosen}")
    job = BatchJob(
        call,
        rows,
        wrap=wrap,
        state=Path(state) if state is not None else None,
        limits=chosen,
        on_result=on_result,
        keep=keep,
        progress=progress,
        stream=stream,
    )
    job._submit()
    return job


def _identity(signature: type[Signature]) -> str:
    """A signature as the state file names it: its name and its fields."""
    inputs = ", ".join(signature.input_fields)
    outputs = ", ".join(signature.output_fields)
    return f"{signature.__name__}({inputs} -> {outputs})"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _line_number(custom_id: str) -> int | None:
    try:
        return int(custom_id)
    except ValueError:
        return None


def _tokens(messages: list[dict[str, Any]]) -> int | None:
    """Prompt tokens as OpenAI counts a chat; None when no tokenizer can be loaded."""
    from structio.exceptions import TokenizerError
    from structio.rendering.tokens import OPENAI_FRAMING, count_chat, get_tokenizer

    try:
        tokenizer = get_tokenizer()
    except TokenizerError:
        return None
    return count_chat(messages, tokenizer, OPENAI_FRAMING, cached_roles=("system",))
