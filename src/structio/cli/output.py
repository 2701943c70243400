"""What the ``structio`` command shows besides its results: progress, the log, JSON summaries.

The conventions, the same for every command: results and summaries on standard output;
progress and diagnostics (notes, warnings, errors) on standard error. ``-v`` shows the
``structio`` logger's records (retries, re-asks, fallback requests) on standard error,
``-vv`` its debugging records too; ``-q`` shows no progress and no notes (warnings and
errors still); ``--json`` prints the command's summary as one JSON object.

Without ``-v``, a retry, a re-ask or a fallback request still shows: as a note on the
progress line (``retry 2/3 after HTTP 500``), for a few seconds, with no traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from structio._util import progress
from structio._util.data import jsonable

if TYPE_CHECKING:
    from structio.finetune import Summary
    from structio.run import RunSummary

__all__ = [
    "PLAIN_EVERY",
    "completion_script",
    "finetune_json",
    "print_json",
    "run_json",
    "shown",
]

#: Seconds between two progress lines when standard error is not a terminal.
PLAIN_EVERY = 10.0

#: The failed rows a run's JSON summary lists (all are in its errors file).
JSON_FAILURES = 100


@contextlib.contextmanager
def shown(args: argparse.Namespace, *, retries: list[int | None]) -> Iterator[None]:
    """Show what a command does as ``-v``/``-q`` ask, while it runs.

    Args:
        args: The command's arguments (``verbose``, ``quiet``).
        retries: Holds the retries a request gets (``LM.num_retries``), once a command
            knows its model: notes then say ``retry 2/3``.
    """
    from structio._util.log import logger

    log = logger()
    handlers: list[logging.Handler] = [_RetryNotes(retries)]
    verbose = getattr(args, "verbose", 0) or 0
    if verbose:
        handlers.append(_Verbose(logging.DEBUG if verbose > 1 else logging.INFO))
    level = log.level
    # INFO at least: re-asks are logged at INFO, and the notes show them.
    log.setLevel(logging.DEBUG if verbose > 1 else logging.INFO)
    for handler in handlers:
        log.addHandler(handler)
    try:
        if getattr(args, "quiet", False):
            yield
        else:
            with progress.plain_lines(PLAIN_EVERY):
                yield
    finally:
        for handler in handlers:
            log.removeHandler(handler)
        log.setLevel(level)


class _RetryNotes(logging.Handler):
    """Puts a retry, a re-ask or a fallback request on the progress line, as a short note."""

    def __init__(self, retries: list[int | None]) -> None:
        super().__init__()
        self.retries = retries

    def emit(self, record: logging.LogRecord) -> None:
        bar = progress.active()
        if bar is None:
            return
        text, hold = self.note(record)
        if text is not None:
            bar.note(text, hold=hold)

    def note(self, record: logging.LogRecord) -> tuple[str | None, float]:
        """The note a record gives, and how long it stays (``None``: a record of no note)."""
        args = record.args if isinstance(record.args, tuple) else ()
        if record.funcName == "_delay" and len(args) == 5:
            _, kind, error, attempt, wait = args
            status = getattr(error, "status_code", None)
            cause = f"HTTP {status}" if status else str(kind)
            total = self.retries[0] if self.retries else None
            count = f"{attempt}/{total}" if total else f"{attempt}"
            # Shown through the wait and a little after: the retry's own answer may be slow.
            seconds = float(wait) if isinstance(wait, (int, float)) else 0.0
            return f"retry {count} after {cause}", seconds + 2.0
        if record.funcName == "_reask" and len(args) >= 2:
            return f"re-ask {args[1]}: the answer could not be used", progress.NOTE_HOLD
        if record.funcName == "_fallback":
            return "fallback: asking again with another adapter", progress.NOTE_HOLD
        return None, 0.0


class _Verbose(logging.Handler):
    """``-v``: each record as a line on standard error (above the progress line)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = f"structio: {record.levelname.lower()}: {record.getMessage()}"
            if record.exc_info and record.exc_info[1] is not None:
                error = record.exc_info[1]
                text += f" ({type(error).__name__}: {error})"
            bar = progress.active()
            if bar is not None and bar.terminal:
                bar.say(text)
            else:
                print(text, file=sys.stderr, flush=True)
        except Exception:  # a log line never ends the command
            self.handleError(record)


def print_json(data: Any) -> None:
    """Print ``data`` as JSON on standard output (flushed, so a closed pipe shows here)."""
    print(json.dumps(jsonable(data), indent=2, ensure_ascii=False))
    sys.stdout.flush()


def run_json(summary: RunSummary) -> dict[str, Any]:
    """``structio run --json``: the run's summary as one JSON object."""
    from structio.run import errors_path

    return {
        "command": "run",
        "output": str(summary.output),
        "predicted": summary.done,
        "already_done": summary.already_done,
        "failed": len(summary.failed),
        "errors_file": str(errors_path(summary.output)) if summary.failed else None,
        "failures": [
            {"line": line, "error": error} for line, error in sorted(summary.failed)[:JSON_FAILURES]
        ],
        "cost": summary.cost_line,
        "stopped": summary.stopped,
        "interrupted": summary.interrupted,
    }


def finetune_json(summary: Summary) -> dict[str, Any]:
    """``structio finetune --json`` and ``validate --json``: the summary as one JSON object."""
    return {
        "command": "validate" if summary.checked_only else "finetune",
        "path": str(summary.path) if summary.path is not None else None,
        "rows": summary.rows,
        "written": summary.written,
        "valid": summary.valid,
        "skipped": summary.skipped,
        "problem_count": summary.problem_count,
        "problems": [
            {"line": p.line, "unit": p.unit, "field": p.field, "message": p.message}
            for p in summary.problems
        ],
        "tokens": summary.tokens,
        "token_limit": summary.token_limit,
        "model": summary.model,
        "cost": summary.cost,
        "cost_note": summary.cost_note or None,
    }


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script of ``parser`` for ``shell``, generated by shtab."""
    import shtab

    return shtab.complete(parser, shell=shell)
