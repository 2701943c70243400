"""``structio eval``: prediction files scored against their labels, side by side.

Prints the terminal table (or, with ``--json``, the figures as JSON), writes the HTML
report with ``--html`` and preference pairs with ``--pairs``. Imported when the command
runs, so the other commands never load the evaluation package.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import IO, cast

from structio._util.files import atomic_write
from structio._util.refs import ImportPolicy, import_ref
from structio.adapters import Adapter
from structio.evaluate.files import evaluate_files
from structio.evaluate.metrics import UserMetric
from structio.evaluate.preference import PairFormat, write_pairs
from structio.evaluate.report import html_report
from structio.evaluate.table import table
from structio.exceptions import ConfigurationError
from structio.run import errors_path
from structio.signatures import Signature

__all__ = ["evaluation_command"]


def _metrics(specs: list[str]) -> dict[str, UserMetric]:
    """``--metric FIELD=module:function`` options as field -> function.

    Raises:
        ConfigurationError: An option is not of that form, or names no function (a usage
            error: exit code 2).
    """
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.append(here)  # as --sig: a module of the current folder
    metrics: dict[str, UserMetric] = {}
    for spec in specs:
        field, _, ref = spec.partition("=")
        if not field or ":" not in ref:
            raise ConfigurationError(
                f"--metric {spec!r}: use FIELD=module:function, e.g. answer=mymetrics:close"
            )
        try:
            function = import_ref(ref, policy=ImportPolicy(trust=True))
        except ImportError as exc:
            raise ConfigurationError(f"--metric {spec!r}: cannot import {ref!r}: {exc}") from None
        if not callable(function):
            raise ConfigurationError(f"--metric {spec!r}: {ref!r} is not a function")
        metrics[field] = cast(UserMetric, function)
    return metrics


def evaluation_command(
    args: argparse.Namespace, sig: type[Signature] | None, adapter: Adapter
) -> int:
    """Run ``structio eval``; the exit code (0: scored, whatever the scores).

    Args:
        args: The command's arguments.
        sig: The signature of ``--sig``, loaded, if one was given.
        adapter: The adapter of ``--adapter`` (the pairs' wire format).
    """
    if args.pairs is not None and (args.sig is None or len(args.predictions) != 1):
        raise ConfigurationError(
            "--pairs writes the prompts a signature gives: pass --sig and one PREDICTIONS file"
        )
    metrics = _metrics(args.metric)
    files = [Path(path) for path in args.predictions]
    results = evaluate_files(
        args.data,
        files,
        errors=[errors_path(path) for path in files],
        names=_names(files),
        signature=sig,
        metrics=metrics,
        tolerance=args.tolerance,
        progress=not args.quiet,
    )
    summaries = [result.summary() for result in results]
    if args.json:
        _print(json.dumps(summaries if len(summaries) > 1 else summaries[0], indent=2))
    else:
        _print(table(summaries))
    if args.html is not None:
        page = html_report(summaries, title=f"Evaluation of {Path(args.data).name}")

        def write(handle: IO[str]) -> None:
            handle.write(page)

        atomic_write(Path(args.html), write, what="the report")
        if not args.quiet:  # a note: the figures are on standard output
            print(f"report written to {args.html}", file=sys.stderr)
    if args.pairs is not None and sig is not None:
        summary = write_pairs(
            sig,
            args.data,
            files[0],
            args.pairs,
            format=cast(PairFormat, args.pairs_format),
            adapter=adapter,
            metrics=metrics,
            tolerance=args.tolerance,
        )
        # A summary, on standard output after the table; with --json, standard output
        # holds the one JSON document, and this goes with the diagnostics.
        print(summary.report(), file=sys.stderr if args.json else sys.stdout)
        sys.stdout.flush()
    return 0


def _print(text: str) -> None:
    print(text)
    sys.stdout.flush()  # here, so that a closed pipe is reported by `main`


def _names(files: list[Path]) -> list[str]:
    """Each system's name: its file's name, or its path where two names are the same."""
    names = [path.name for path in files]
    if len(set(names)) == len(names):
        return names
    return [str(path) for path in files]
