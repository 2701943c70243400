"""The ``structio`` command: format, parse, finetune, validate and run from a shell.

Exit codes: 0 when all went well, 1 when the data has problems (invalid examples, a
completion that cannot be read, failed rows), 2 for usage errors (bad arguments, a
signature or file that cannot be found, read or written; a run stopped by the same error
on row after row), 130 when interrupted (Ctrl-C). Errors print as one line, ``structio:
error: ...``, with any detail on the lines after it (indented); warnings as ``structio:
warning: ...``. No input makes the command print a Python traceback: an error the command
did not foresee (a bug) prints as one line too, says it is a bug to report, and exits 1.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from structio import __version__
from structio._demos import checked_demos
from structio._loading import load_signature
from structio._util.data import jsonable
from structio._util.files import read_jsonl
from structio.adapters import (
    Adapter,
    ChatAdapter,
    CompactAdapter,
    JSONAdapter,
    ToolOutputAdapter,
    XMLAdapter,
)
from structio.exceptions import (
    DataError,
    FormatError,
    ParseError,
    StructioError,
    UsageError,
)
from structio.lm.lm import LM
from structio.predict import Predict

__all__ = ["main"]

SIG_HELP = (
    "the signature: path/to/file.py:ClassName, package.module:ClassName, or a spec in "
    "quotes such as 'question -> answer: int'"
)

MAIN_EXAMPLES = """\
examples:
  structio format 'question -> answer: int' --inputs '{"question": "2+2?"}'
  printf '[[ ## answer ## ]]\\n4\\n' | structio parse 'question -> answer: int'
  structio finetune examples/quickstart.py:Triage examples/data/tickets.jsonl -o train.jsonl
  structio validate train.jsonl
  structio run examples/quickstart.py:Triage examples/data/tickets.csv -o preds.jsonl \\
      --model openai/gpt-4o-mini

Run 'structio COMMAND --help' for a command's options.
"""

FORMAT_EXAMPLES = """\
examples:
  structio format 'question -> answer: int' --inputs '{"question": "2+2?"}'
  structio format app/sigs.py:Triage --inputs '{"ticket": "charged twice"}' --adapter json
  structio format app.sigs:Triage --inputs @inputs.json --demos demos.jsonl
"""

PARSE_EXAMPLES = """\
examples:
  structio parse 'question -> answer: int' < completion.txt
  printf '{"answer": 4}' | structio parse 'question -> answer: int' --adapter json
"""

FINETUNE_EXAMPLES = """\
examples:
  structio finetune examples/quickstart.py:Triage examples/data/tickets.jsonl -o train.jsonl
  structio finetune app.sigs:Triage labelled.csv -o train.jsonl --adapter json --skip-invalid
  structio finetune app.sigs:Triage data.jsonl -o train.jsonl --model gpt-4o-mini \\
      --training-price 3.00 --epochs 3

Each example (a JSON line or a CSV row) holds the signature's inputs and outputs. Without
--skip-invalid, any problem means nothing is written.
"""

VALIDATE_EXAMPLES = """\
examples:
  structio validate train.jsonl
  structio validate train.jsonl --sig examples/quickstart.py:Triage --max-tokens 4096

With --sig, each row must be in the format of --adapter (chat by default): its system
message the one the adapter renders for the signature, its answer in the adapter's format.
"""

RUN_EXAMPLES = """\
examples:
  structio run examples/quickstart.py:Triage examples/data/tickets.jsonl -o preds.jsonl \\
      --model openai/gpt-4o-mini
  structio run app.sigs:Triage rows.csv -o preds.jsonl --model openai/llama3.2 \\
      --api-base http://localhost:11434/v1 --concurrency 4
  structio run app.sigs:Triage rows.csv -o preds.jsonl --model openai/my-model \\
      --api-base https://llm.example.com/v1 --api-key-env MY_SERVER_KEY

  structio run app.sigs:Triage rows.jsonl -o preds.jsonl --model openai/gpt-4o-mini --batch

Rerunning after an interruption skips the rows already in the output (rows are written
as they finish, each with its DATA line). A rerun refuses (exit 2, before any call) an
output that is not its own: not a run's output, or of another signature, --model or
--adapter, or rows whose DATA line has changed since; give another -o, or delete the file
to start over. Failed rows are listed in PREDICTIONS.errors.jsonl and retried by the next
run. When the same error fails
5 rows in a row (a wrong model name, a server that is down, a rejected key), the run stops
with that error (exit 2): fix it and rerun. Ctrl-C stops cleanly (exit 130): the calls in
flight finish and are kept (Ctrl-C again leaves them).

The API key comes from --api-key, from the variable --api-key-env names, or from the
provider's environment variable (OPENAI_API_KEY...). A server given by --api-base gets no
key unless one is given or set: local servers (Ollama, vLLM, llama.cpp) need none.

With --batch the rows go through the provider's batch API: the estimated cost is printed
first, the provider's counts while it works, the cost at the end. The batches are recorded
in PREDICTIONS.batch.json as soon as they exist: after Ctrl-C or a crash, the same command
picks them up rather than paying twice. Failed rows (and rows of an expired batch) go to
PREDICTIONS.errors.jsonl: rerun with or without --batch to retry them.
"""


class _CommandLineError(Exception):
    """A command-line usage error found after argparse (exit code 2)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``structio`` command; returns the exit code."""
    args: argparse.Namespace | None = None
    try:
        args = _parser().parse_args(argv)
        handler: Callable[[argparse.Namespace], int] = args.handler
        return handler(args)
    except DataError as exc:
        _error(str(exc), exc.summary.report() if exc.summary is not None else None)
        return 1
    except ParseError as exc:
        first, *detail = str(exc).splitlines()
        _error(first, "\n".join(_command_line_words(detail)) or None)
        return 1
    except (UsageError, _CommandLineError) as exc:
        _error(str(exc))
        return 2
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


def _one_line(text: str) -> str:
    """``text`` on one line, clipped: its lines joined, at most `_ONE_LINE_LIMIT` characters."""
    joined = " ".join(part.strip() for part in text.splitlines() if part.strip())
    if len(joined) > _ONE_LINE_LIMIT:
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
    """The one way the command warns: one line on standard error."""
    print(f"structio: warning: {_one_line(message)}", file=sys.stderr)


@contextlib.contextmanager
def _library_warnings() -> Iterator[None]:
    """Show the warnings structio logs (logger ``"structio"``) as the command's own.

    Only for commands that log a handful (finetune, validate): a run's per-row messages
    would bury its progress line.
    """
    import logging

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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="structio",
        description="Structured prompts for language models: format, parse, finetune data.",
        epilog=MAIN_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"structio {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help_text: str, examples: str) -> argparse.ArgumentParser:
        return commands.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=examples,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    fmt = command("format", "print the chat messages for some inputs", FORMAT_EXAMPLES)
    fmt.add_argument("sig", metavar="SIG", help=SIG_HELP)
    fmt.add_argument(
        "--inputs", required=True, help="the inputs as a JSON object, or @FILE holding one"
    )
    _adapter_and_demos(fmt)
    fmt.set_defaults(handler=_format)

    parse = command("parse", "read a completion (standard input) as the outputs", PARSE_EXAMPLES)
    parse.add_argument("sig", metavar="SIG", help=SIG_HELP)
    _adapter_option(parse)
    parse.set_defaults(handler=_parse)

    ft = command("finetune", "write finetune JSONL from labelled examples", FINETUNE_EXAMPLES)
    ft.add_argument("sig", metavar="SIG", help=SIG_HELP)
    ft.add_argument("data", metavar="DATA", help="examples: a .jsonl or .csv file")
    ft.add_argument("-o", "--output", required=True, metavar="OUT", help="the JSONL to write")
    _adapter_and_demos(ft)
    ft.add_argument(
        "--skip-invalid", action="store_true", help="write the good rows, report the rest"
    )
    _limit_options(ft)
    ft.add_argument(
        "--training-price", type=float, metavar="USD", help="price per million training tokens"
    )
    ft.add_argument("--epochs", type=int, default=1, help="passes over the data (for the cost)")
    ft.set_defaults(handler=_finetune)

    val = command("validate", "check a finetune JSONL file", VALIDATE_EXAMPLES)
    val.add_argument("file", metavar="FILE", help="the JSONL file to check")
    val.add_argument(
        "--sig",
        help="also check each row is in the format --adapter gives this signature: its "
        "system message and its answer",
    )
    val.add_argument(
        "--adapter",
        choices=tuple(ADAPTERS),
        help="the wire format the rows must be in (with --sig; default chat): " + ADAPTER_NAMES,
    )
    _limit_options(val)
    val.set_defaults(handler=_validate)

    run = command("run", "predict every row of a data file with a model", RUN_EXAMPLES)
    run.add_argument("sig", metavar="SIG", help=SIG_HELP)
    run.add_argument("data", metavar="DATA", help="rows of inputs: a .jsonl or .csv file")
    run.add_argument("-o", "--output", required=True, metavar="PREDICTIONS", help="JSONL out")
    run.add_argument(
        "--model",
        required=True,
        type=_model_string,
        help="a model string, e.g. openai/gpt-4o-mini",
    )
    run.add_argument("--concurrency", type=_positive, default=8, help="calls in flight")
    run.add_argument("--api-base", help="the server's URL (local OpenAI-compatible servers)")
    keys = run.add_mutually_exclusive_group()
    keys.add_argument(
        "--api-key",
        metavar="KEY",
        help="the API key (visible to other users in the process list: prefer --api-key-env)",
    )
    keys.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="read the API key from the environment variable NAME",
    )
    run.add_argument(
        "--transport",
        choices=("auto", "direct", "litellm"),
        default="auto",
        help="direct: httpx to an OpenAI-compatible API; litellm: any other provider; "
        "auto (default): direct for openai/, azure/, groq/... and litellm for the rest",
    )
    run.add_argument("--temperature", type=float)
    run.add_argument("--no-cache", action="store_true", help="do not use the response cache")
    run.add_argument(
        "--batch",
        action="store_true",
        help="send the rows through the provider's batch API (OpenAI: half price, answered "
        "within 24h); rerun the same command to pick up batches after a stop",
    )
    run.add_argument(
        "--poll-interval",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="with --batch: seconds between two status polls (default 30)",
    )
    run.add_argument(
        "--batch-size",
        type=_positive,
        default=50_000,
        metavar="N",
        help="with --batch: requests per batch (default 50,000, OpenAI's limit)",
    )
    _adapter_and_demos(run)
    run.set_defaults(handler=_run)
    return parser


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def _model_string(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("needs a model string such as openai/gpt-4o-mini")
    return text


#: The wire formats --adapter names: structio's adapters.
ADAPTERS: dict[str, type[Adapter]] = {
    "chat": ChatAdapter,
    "json": JSONAdapter,
    "xml": XMLAdapter,
    "compact": CompactAdapter,
    "tool": ToolOutputAdapter,
}
ADAPTER_NAMES = (
    "chat ([[ ## field ## ]] sections), json, xml, compact (JSON, its type in a short "
    "notation) or tool (the answer as the arguments of a forced tool call)"
)


def _adapter_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--adapter",
        choices=tuple(ADAPTERS),
        default="chat",
        help=f"the wire format (default chat): {ADAPTER_NAMES}",
    )


def _adapter_and_demos(parser: argparse.ArgumentParser) -> None:
    _adapter_option(parser)
    parser.add_argument("--demos", metavar="FILE", help="few-shot examples: .jsonl or .json list")


def _limit_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-tokens", type=_positive, help="the most tokens a row may have")
    parser.add_argument(
        "--model",
        type=_model_string,
        help="the model to fine-tune: its token limit and price (litellm)",
    )


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
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [f"line {n}" for n, text in enumerate(lines, 1) if text.strip()][:count]


def _demos(path: str | None) -> list[dict[str, Any]]:
    if path is None:
        return []
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
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
            text = Path(text[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise _CommandLineError(f"cannot read {what} {text[1:]!r}: {exc.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _CommandLineError(
            f"{what} is not valid JSON: {exc.msg} (column {exc.colno})"
        ) from None


def _print_json(data: Any) -> None:
    print(json.dumps(jsonable(data), indent=2, ensure_ascii=False))
    # Flushed here, inside `main`, so that a closed pipe is reported there, not by Python
    # at exit.
    sys.stdout.flush()


def _format(args: argparse.Namespace) -> int:
    sig = _signature(args.sig)
    inputs = _json_argument(args.inputs, "--inputs")
    if not isinstance(inputs, dict):
        raise _CommandLineError("--inputs must be a JSON object of input name to value")
    _print_json(_adapter(args.adapter).format(sig, _checked_demos(sig, args.demos), inputs))
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
    _print_json(values)
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
    with _library_warnings():
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
                progress=True,
            )
        except DataError as exc:
            if exc.summary is None or not exc.summary.problem_count:
                raise
            # The same error in the command's words: its flag, not write_jsonl's argument.
            message = nothing_written(exc.summary, args.output, "--skip-invalid")
            raise DataError(message, problems=exc.problems, summary=exc.summary) from None
    _print_report(summary.report())
    return 1 if summary.problem_count else 0


def _validate(args: argparse.Namespace) -> int:
    from structio.finetune import validate

    if args.adapter is not None and not args.sig:
        raise _CommandLineError(
            "--adapter checks each row against a signature's format: pass --sig too"
        )
    adapter = _finetune_adapter(args.adapter)
    with _library_warnings():
        summary = validate(
            args.file,
            signature=_signature(args.sig) if args.sig else None,
            adapter=adapter,
            max_tokens=args.max_tokens,
            model=args.model,
            progress=True,
        )
    _print_report(summary.report())
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
    from structio.lm import _http

    options: dict[str, Any] = {"cache": not args.no_cache, "transport": args.transport}
    if args.api_base:
        options["api_base"] = args.api_base
    if args.temperature is not None:
        options["temperature"] = args.temperature
    key = _api_key(args)
    if key is not None:
        options["api_key"] = key
    elif args.api_base and _http.choose_transport(args.model, args.transport, options) == (
        "litellm"
    ):
        # The direct transport sends no key to a server of --api-base when none is set;
        # litellm demands one. A key in the provider's variable is still litellm's to send.
        variables = _http.key_variables(args.model)
        if variables is not None and not any(os.environ.get(name) for name in variables):
            options["api_key"] = NO_KEY
    return options


def _run(args: argparse.Namespace) -> int:
    from structio.run import run_batch, run_file

    sig = _signature(args.sig)
    _check_output(args.output, data=args.data, demos=args.demos)
    predict = Predict(
        sig,
        lm=LM(args.model, **_lm_options(args)),
        adapter=_adapter(args.adapter),
        demos=_checked_demos(sig, args.demos),
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
        )
    else:
        summary = run_file(predict, args.data, args.output, concurrency=args.concurrency)
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
