"""The ``structio`` command: format, parse, finetune, validate, run and eval from a shell.

Exit codes: 0 when all went well, 1 when the data has problems (invalid examples, a
completion that cannot be read, failed rows) or the disk does (full, a file size limit),
2 for usage errors (bad arguments, a
signature or file that cannot be found, read or written; a run stopped by the same error
on row after row), 130 when interrupted (Ctrl-C). Errors print as one line, ``structio:
error: ...``, with any detail on the lines after it (indented); warnings as ``structio:
warning: ...``. No input makes the command print a Python traceback: an error the command
did not foresee (a bug) prints as one line too, says it is a bug to report, and exits 1.

Results and summaries go to standard output, progress and diagnostics to standard error,
for every command; ``-v``, ``-q`` and ``--json`` are read by `structio.cli.output`.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import errno
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from structio._demos import checked_demos
from structio._loading import load_signature
from structio._util.files import read_jsonl, read_text
from structio.adapters import Adapter
from structio.cli.output import completion_script, finetune_json, print_json, run_json, shown
from structio.cli.parser import ADAPTERS, build_parser
from structio.exceptions import (
    DataError,
    FormatError,
    ParseError,
    SaveError,
    StructioError,
    UsageError,
)
from structio.lm.lm import LM
from structio.predict import Predict

__all__ = ["main"]


class _CommandLineError(Exception):
    """A command-line usage error found after argparse (exit code 2)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``structio`` command; returns the exit code."""
    args: argparse.Namespace | None = None
    try:
        args = build_parser(_COMMANDS).parse_args(argv)
        if args.verbose and args.quiet:
            raise _CommandLineError("-v shows more and -q less: give one of them")
        handler: Callable[[argparse.Namespace], int] = args.handler
        args.retries = [None]  # the model's retries, once the command knows its model
        with shown(args, retries=args.retries):
            return handler(args)
    except DataError as exc:
        if args is not None and args.json and exc.summary is not None:
            print_json(finetune_json(exc.summary))  # the summary, where --json expects it
            _error(str(exc))
        else:
            _error(str(exc), exc.summary.report() if exc.summary is not None else None)
        return 1
    except ParseError as exc:
        first, *detail = str(exc).splitlines()
        _error(first, "\n".join(_command_line_words(detail)) or None)
        return 1
    except (UsageError, _CommandLineError) as exc:
        _error(str(exc))
        return 2
    except SaveError as exc:
        # A path that cannot be written is a usage error; a full disk is not.
        _error(_one_line(str(exc), clip=False))
        return 1 if exc.errno in _DEVICE_ERRORS else 2
    except StructioError as exc:
        _error(f"{type(exc).__name__}: {exc}")
        return 1
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    # The command boundary: whatever escapes the commands ends as one line, never a
    # traceback. Data that Python itself cannot hold comes first: it is the input's fault.
    except RecursionError:
        _error("the input is nested too deeply to read (brackets inside brackets)")
        return 1
    except BrokenPipeError:
        # The reader of standard output went away (`structio ... | head`): say nothing more
        # on it, and keep Python from complaining about the unflushed rest at exit.
        _silence_stdout()
        return 1
    except OSError as exc:
        # A path the user gave that cannot be opened, made or written is a usage error;
        # a failure of the device itself (no path named) is not.
        _error(_os_error_text(exc))
        return 2 if exc.filename is not None else 1
    except UnicodeDecodeError as exc:
        # A file the user gave that is not text is an input error, as one that is missing.
        undecodable = _undecodable_input(args)
        if undecodable is None:
            return _bug(exc)
        _error(undecodable)
        return 2
    except Exception as exc:
        return _bug(exc)


# A file that could not be written for these reasons was given rightly: the device failed.
_DEVICE_ERRORS = frozenset(
    getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EFBIG", "EIO") if hasattr(errno, name)
)


def _bug(exc: Exception) -> int:
    """Report an error the command did not foresee, as one line; the exit code (1)."""
    _error(
        f"unexpected {type(exc).__name__}: {_one_line(str(exc))} (this is a bug: "
        "please report it, with the command that caused it)"
    )
    return 1


def _command_line_words(detail: list[str]) -> list[str]:
    """A `ParseError`'s detail lines with its advice to Python callers put for the command."""
    return [
        "  what to do: give a completion in the format --adapter reads (structio format "
        "shows the prompt that asks for it)"
        if line.startswith("  what to do:")
        else line
        for line in detail
    ]


def _not_utf8(what: str, byte: int, offset: int) -> str:
    """The one wording for input that is not UTF-8 text: what, and its first bad byte."""
    return f"{what} is not UTF-8 text (byte {byte:#04x} at offset {offset:,}); save it as UTF-8"


def _undecodable_input(args: argparse.Namespace | None) -> str | None:
    """The error for the first file the command was given that is not UTF-8, if one is."""
    if args is None:
        return None
    paths = [getattr(args, name, None) for name in ("data", "file", "demos")]
    inputs = getattr(args, "inputs", None)
    if isinstance(inputs, str) and inputs.startswith("@"):
        paths.append(inputs[1:])
    for path in paths:
        if isinstance(path, str):
            found = _first_non_utf8(path)
            if found is not None:
                return _not_utf8(repr(path), *found)
    return None


def _first_non_utf8(path: str) -> tuple[int, int] | None:
    """The first byte of a file that is not UTF-8 text, and its offset; ``None`` if none is.

    Read in pieces, so a large file is never held whole.
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    try:
        with open(path, "rb") as handle:
            while True:
                chunk = handle.read(1 << 20)
                pending = decoder.getstate()[0]  # the start of a character cut by the piece
                try:
                    decoder.decode(chunk, final=not chunk)
                except UnicodeDecodeError as exc:
                    data = pending + chunk
                    return data[exc.start], offset - len(pending) + exc.start
                if not chunk:
                    return None
                offset += len(chunk)
    except OSError:
        return None


# How much of an unforeseen error's text the one line carries.
_ONE_LINE_LIMIT = 300


def _one_line(text: str, *, clip: bool = True) -> str:
    """``text`` on one line, clipped: its lines joined, at most `_ONE_LINE_LIMIT` characters.

    ``clip=False`` keeps it whole: a message of structio's own, long only by the path it
    names, whose advice comes last.
    """
    joined = " ".join(part.strip() for part in text.splitlines() if part.strip())
    if clip and len(joined) > _ONE_LINE_LIMIT:
        joined = joined[: _ONE_LINE_LIMIT - 3] + "..."
    return joined


def _os_error_text(exc: OSError) -> str:
    """One line for an `OSError`: what failed on which path, and what to check."""
    if exc.filename is None:
        return _one_line(str(exc)) or type(exc).__name__
    where = repr(os.fsdecode(exc.filename))
    if exc.filename2 is not None:
        where += f" -> {os.fsdecode(exc.filename2)!r}"
    reason = exc.strerror or type(exc).__name__
    return _one_line(f"{where}: {reason}; check the path, its folder and the permissions")


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor behind sys.stdout
        pass


def _error(message: str, detail: str | None = None) -> None:
    print(f"structio: error: {message}", file=sys.stderr)
    if detail:
        print(detail, file=sys.stderr)


def _warn(message: str) -> None:
    """The one way the command warns: one line on standard error (above a progress line)."""
    from structio._util.progress import active

    text = f"structio: warning: {_one_line(message)}"
    bar = active()
    if bar is not None and bar.enabled:
        bar.say(text)
    else:
        print(text, file=sys.stderr)


@contextlib.contextmanager
def _library_warnings(args: argparse.Namespace) -> Iterator[None]:
    """Show the warnings structio logs (logger ``"structio"``) as the command's own.

    Only for commands that log a handful (finetune, validate): a run's per-row messages
    would bury its progress line. With ``-v`` every record shows already.
    """
    import logging

    if args.verbose:
        yield
        return

    from structio._util.log import logger

    class ToWarn(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            _warn(record.getMessage())

    handler = ToWarn(logging.WARNING)
    log = logger()
    log.addHandler(handler)
    try:
        yield
    finally:
        log.removeHandler(handler)


def _adapter(name: str | None) -> Adapter:
    return ADAPTERS[name or "chat"]()


def _finetune_adapter(name: str | None) -> Adapter:
    """The adapter of --adapter for finetune data (written or checked).

    Raises:
        _CommandLineError: ``tool``: its answers are tool calls, which rows of chat messages
            cannot hold.
    """
    if name == "tool":
        raise _CommandLineError(
            "--adapter tool has the model answer by calling a tool the request carries, and "
            "finetune rows of chat messages hold no tools nor tool calls: a model trained on "
            "them would not learn to answer so; use --adapter json (the same outputs, "
            "answered as a JSON object)"
        )
    return _adapter(name)


def _signature(ref: str) -> Any:
    # `package.module:Class` resolves from the current folder, as under `python -m
    # structio`; the `structio` script alone would search only installed packages. Last
    # on the path, so that a local file never shadows an installed module.
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.append(here)
    return load_signature(ref)


def _checked_demos(sig: Any, path: str | None) -> list[dict[str, Any]]:
    """The demos of ``--demos``, checked against the signature as `Predict` checks them.

    Raises:
        _CommandLineError: A demo does not fit the signature; the message names its line.
    """
    demos = _demos(path)
    checked: list[dict[str, Any]] = []
    for demo, where in zip(demos, _demo_places(path, len(demos)), strict=True):
        try:
            checked.extend(checked_demos(sig, [demo]))
        except FormatError as exc:
            reason = str(exc).removeprefix("demo 0: ")
            raise _CommandLineError(f"demos {path!r}, {where}: {reason}") from None
    return checked


def _demo_places(path: str | None, count: int) -> list[str]:
    """Where each demo is in its file: ``line N`` (JSON Lines) or ``item N`` (a JSON list)."""
    if path is None:
        return []
    if Path(path).suffix.lower() == ".json":
        return [f"item {n}" for n in range(1, count + 1)]
    lines = read_text(path).splitlines()
    return [f"line {n}" for n, text in enumerate(lines, 1) if text.strip()][:count]


def _demos(path: str | None) -> list[dict[str, Any]]:
    if path is None:
        return []
    file = Path(path)
    try:
        text = read_text(file)
    except OSError as exc:
        raise _CommandLineError(f"cannot read demos {path!r}: {exc.strerror or exc}") from None
    if file.suffix.lower() == ".json":
        try:
            demos = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _CommandLineError(
                f"demos {path!r} are not valid JSON (line {exc.lineno}): {exc.msg}"
            ) from None
    else:
        demos = []
        for item in read_jsonl(text.splitlines(keepends=True)):
            if item.error is not None:
                raise _CommandLineError(f"demos {path!r}, line {item.line}: {item.error}")
            demos.append(item.value)
    if not isinstance(demos, list) or not all(isinstance(d, dict) for d in demos):
        raise _CommandLineError(f"demos {path!r} must be a list of JSON objects")
    return demos


def _json_argument(text: str, what: str) -> Any:
    if text.startswith("@"):
        try:
            text = read_text(text[1:])
        except OSError as exc:
            raise _CommandLineError(f"cannot read {what} {text[1:]!r}: {exc.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _CommandLineError(
            f"{what} is not valid JSON: {exc.msg} (column {exc.colno})"
        ) from None


def _format(args: argparse.Namespace) -> int:
    sig = _signature(args.sig)
    inputs = _json_argument(args.inputs, "--inputs")
    if not isinstance(inputs, dict):
        raise _CommandLineError("--inputs must be a JSON object of input name to value")
    print_json(_adapter(args.adapter).format(sig, _checked_demos(sig, args.demos), inputs))
    return 0


def _parse(args: argparse.Namespace) -> int:
    sig = _signature(args.sig)
    completion = _read_standard_input()
    try:
        values = _adapter(args.adapter).parse(sig, completion)
    except StructioError:
        raise  # ParseError and the rest are reported by `main`, as for every command
    except RecursionError:
        raise DataError(
            "the completion cannot be read: its brackets are nested too deeply"
        ) from None
    except ValueError as exc:  # a reading the parser let through, e.g. a 5,000-digit number
        raise DataError(f"the completion cannot be read: {_one_line(str(exc))}") from None
    print_json(values)
    return 0


def _read_standard_input() -> str:
    """Standard input as text: UTF-8, strictly, with universal newlines.

    Strict rather than the locale's encoding with replacement characters: bytes that are
    not text are an error to report, not something to parse into a wrong value.

    Raises:
        DataError: The input is not UTF-8.
    """
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream put in place of sys.stdin (tests, embedding)
        return str(sys.stdin.read())
    data = bytes(buffer.read())
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(_not_utf8("standard input", data[exc.start], exc.start)) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _print_report(text: str) -> None:
    print(text)
    sys.stdout.flush()  # here, so that a closed pipe is reported by `main`


def _check_output(path: str, **inputs: str | None) -> None:
    """Refuse an output path that cannot be written, before any work is done.

    Args:
        path: The output (-o).
        inputs: The files the command reads, by what they are (``data``, ``demos``).

    Raises:
        _CommandLineError: ``path`` is a folder, lies under a file rather than a folder, or
            is one of the ``inputs`` (the same file, through a link or not).
    """
    target = Path(path)
    if target.is_dir():
        raise _CommandLineError(f"the output {path!r} is a folder; give a file name")
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                raise _CommandLineError(
                    f"the output {path!r} cannot be written: {str(parent)!r} is a file, "
                    "not a folder"
                )
            break
    for what, given in inputs.items():
        if given is not None and _same_file(target, Path(given)):
            option = "--demos" if what == "demos" else "DATA"
            raise _CommandLineError(
                f"the output {path!r} is the {what} file ({option} {given!r}): writing it "
                "would destroy the input; give another -o"
            )


def _same_file(one: Path, other: Path) -> bool:
    """Whether two paths name one file (links resolved); ``False`` if either is missing."""
    try:
        return one.samefile(other)
    except OSError:
        return False


def _finetune(args: argparse.Namespace) -> int:
    from structio.finetune import nothing_written, write_jsonl

    sig = _signature(args.sig)
    adapter = _finetune_adapter(args.adapter)
    _check_output(args.output, data=args.data, demos=args.demos)
    with _library_warnings(args):
        try:
            summary = write_jsonl(
                sig,
                args.data,
                args.output,
                adapter=adapter,
                demos=_checked_demos(sig, args.demos),
                skip_invalid=args.skip_invalid,
                max_tokens=args.max_tokens,
                model=args.model,
                training_price=args.training_price,
                epochs=args.epochs,
                progress=not args.quiet,
            )
        except DataError as exc:
            if exc.summary is None or not exc.summary.problem_count:
                raise
            # The same error in the command's words: its flag, not write_jsonl's argument.
            message = nothing_written(exc.summary, args.output, "--skip-invalid")
            raise DataError(message, problems=exc.problems, summary=exc.summary) from None
    _print_summary(args, summary)
    return 1 if summary.problem_count else 0


def _print_summary(args: argparse.Namespace, summary: Any) -> None:
    """A finetune or validate summary on standard output: as JSON with ``--json``."""
    if args.json:
        print_json(finetune_json(summary))
    else:
        _print_report(summary.report())


def _validate(args: argparse.Namespace) -> int:
    from structio.finetune import validate

    if args.adapter is not None and not args.sig:
        raise _CommandLineError(
            "--adapter checks each row against a signature's format: pass --sig too"
        )
    adapter = _finetune_adapter(args.adapter)
    with _library_warnings(args):
        summary = validate(
            args.file,
            signature=_signature(args.sig) if args.sig else None,
            adapter=adapter,
            max_tokens=args.max_tokens,
            model=args.model,
            progress=not args.quiet,
        )
    _print_summary(args, summary)
    return 1 if summary.problem_count else 0


# Sent as the key to an --api-base server when none is given: litellm's OpenAI client
# refuses to send a request without one, and a server that asks for none ignores it.
NO_KEY = "no-key"


def _api_key(args: argparse.Namespace) -> str | None:
    """The key of ``--api-key`` or of the variable ``--api-key-env`` names, if given.

    Raises:
        _CommandLineError: The variable named is not set (or empty).
    """
    if args.api_key_env is None:
        return str(args.api_key) if args.api_key else None
    key = os.environ.get(args.api_key_env)
    if not key:
        raise _CommandLineError(
            f"--api-key-env names the environment variable {args.api_key_env}, which is not "
            f"set; export {args.api_key_env}=... first (or pass --api-key)"
        )
    return key


def _lm_options(args: argparse.Namespace) -> dict[str, Any]:
    """The LM's settings from the command line (the key included, when one is needed)."""
    from structio.lm.transport import key_variables, transport_for

    options: dict[str, Any] = {"cache": not args.no_cache, "transport": args.transport}
    if args.api_base:
        options["api_base"] = args.api_base
    if args.temperature is not None:
        options["temperature"] = args.temperature
    if getattr(args, "server", None):
        options["server"] = args.server
    key = _api_key(args)
    if key is not None:
        options["api_key"] = key
    elif args.api_base and transport_for(args.model, args.transport, options).name == "litellm":
        # The direct transport sends no key to a server of --api-base when none is set;
        # litellm demands one. A key in the provider's variable is still litellm's to send.
        variables = key_variables(args.model)
        if variables is not None and not any(os.environ.get(name) for name in variables):
            options["api_key"] = NO_KEY
    return options


def _run(args: argparse.Namespace) -> int:
    from structio.run import run_batch, run_file

    sig = _signature(args.sig)
    _check_output(args.output, data=args.data, demos=args.demos)
    lm = LM(args.model, **_lm_options(args))
    args.retries[0] = lm.num_retries  # for the progress line's notes: retry 2/3
    predict = Predict(
        sig,
        lm=lm,
        adapter=_adapter(args.adapter),
        demos=_checked_demos(sig, args.demos),
        confidence=args.confidence,
    )
    if args.batch:
        if args.poll_interval < 0:
            raise _CommandLineError(f"--poll-interval must be 0 or more, not {args.poll_interval}")
        summary = run_batch(
            predict,
            args.data,
            args.output,
            poll_interval=args.poll_interval,
            max_requests=args.batch_size,
            progress=not args.quiet,
        )
    else:
        summary = run_file(
            predict,
            args.data,
            args.output,
            concurrency=args.concurrency,
            max_outage=args.max_outage,
            progress=not args.quiet,
        )
    if args.json:
        print_json(run_json(summary))
    else:
        _print_report(summary.report())
    if summary.interrupted:
        _error(f"interrupted; rerun the same command to do the rest ({args.output})")
        return 130
    refused = summary.stopped_by == "AuthenticationError" or (
        bool(summary.failed)
        and all(error.startswith("AuthenticationError") for _, error in summary.failed)
    )
    hint = (
        "the server refused the key, or asked for one: pass --api-key KEY or --api-key-env "
        "NAME (or set the provider's variable, e.g. OPENAI_API_KEY)"
    )
    if summary.stopped:
        _error(summary.stopped, f"  {hint}" if refused else None)
        return 2
    if refused:
        _warn(hint)
    return 1 if summary.failed else 0


if __name__ == "__main__":  # python -m structio.cli
    sys.exit(main())


def _eval(args: argparse.Namespace) -> int:
    from structio.cli.evaluation import evaluation_command  # loads the evaluation package

    signature = _signature(args.sig) if args.sig else None
    with _library_warnings(args):  # unreadable data rows: a handful of lines at most
        return evaluation_command(args, signature, _adapter(args.adapter))


def _completion(args: argparse.Namespace) -> int:
    _print_report(completion_script(build_parser(_COMMANDS), args.shell).rstrip("\n"))
    return 0


_COMMANDS = {
    "format": _format,
    "parse": _parse,
    "finetune": _finetune,
    "validate": _validate,
    "run": _run,
    "eval": _eval,
    "completion": _completion,
}
