"""The ``structio`` command's arguments: the parser, its options and its examples."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping

from structio import __version__
from structio.adapters import (
    Adapter,
    ChatAdapter,
    CompactAdapter,
    JSONAdapter,
    ToolOutputAdapter,
    XMLAdapter,
)
from structio.lm.profile import SERVER_NAMES

__all__ = ["ADAPTERS", "ADAPTER_NAMES", "build_parser"]


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
run. A wrong model name or a rejected key stops the run at the first row (exit 2), and so
does the same error failing 5 rows in a row: fix it and rerun. A provider that is down
(5xx, 429, no connection, timeouts) pauses the run instead, with growing waits, until it
answers again or --max-outage has passed. Ctrl-C stops cleanly (exit 130): the calls in
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


EVAL_EXAMPLES = """\
examples:
  structio eval examples/data/tickets.jsonl preds.jsonl --sig examples/quickstart.py:Triage
  structio eval labelled.jsonl chat.jsonl json.jsonl --html report.html
  structio eval labelled.jsonl preds.jsonl --json > scores.json
  structio eval labelled.jsonl preds.jsonl --sig app.sigs:Triage --pairs pairs.jsonl \\
      --pairs-format trl

DATA is the labelled file the predictions were made from; each PREDICTIONS file is one
`structio run -o` output (its failed rows are read from PREDICTIONS.errors.jsonl), shown
side by side. Without --sig, each field is scored by its labelled JSON value's type.
"""


def build_parser(
    handlers: Mapping[str, Callable[[argparse.Namespace], int]],
) -> argparse.ArgumentParser:
    """The parser of every subcommand and its options; ``handlers`` run the subcommands."""
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
    fmt.set_defaults(handler=handlers["format"])

    parse = command("parse", "read a completion (standard input) as the outputs", PARSE_EXAMPLES)
    parse.add_argument("sig", metavar="SIG", help=SIG_HELP)
    _adapter_option(parse)
    parse.set_defaults(handler=handlers["parse"])

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
    ft.add_argument(
        "--epochs", type=_positive, default=1, help="passes over the data (for the cost)"
    )
    ft.set_defaults(handler=handlers["finetune"])

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
    val.set_defaults(handler=handlers["validate"])

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
    run.add_argument(
        "--max-outage",
        type=_seconds,
        default=900.0,
        metavar="SECONDS",
        help="wait out a provider outage (HTTP 5xx, 429, connection errors, timeouts) this "
        "long, the run paused and resumed when the provider answers; 0 stops at once "
        "(default: 900, 15 minutes)",
    )
    run.add_argument("--api-base", help="the server's URL (local OpenAI-compatible servers)")
    run.add_argument(
        "--server",
        choices=SERVER_NAMES,
        help="which local server answers at --api-base, when the model's prefix does not say: "
        "what it takes (grammars, schemas) and returns (log probabilities)",
    )
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
    run.add_argument(
        "--confidence",
        action="store_true",
        help="ask for token log probabilities and write each output's confidence in [0, 1] "
        "(_confidence in each row, read by structio eval); the model must return them",
    )
    run.add_argument("--no-cache", action="store_true", help="do not use the response cache")
    run.add_argument(
        "--batch",
        action="store_true",
        help="send the rows through the provider's batch API (OpenAI, Anthropic: half price, "
        "answered within 24h); rerun the same command to pick up batches after a stop",
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
    run.set_defaults(handler=handlers["run"])

    ev = command("eval", "score prediction files against labels", EVAL_EXAMPLES)
    _eval_command(ev)
    ev.set_defaults(handler=handlers["eval"])
    return parser


def _eval_command(ev: argparse.ArgumentParser) -> None:
    ev.add_argument("data", metavar="DATA", help="the labelled rows: a .jsonl or .csv file")
    ev.add_argument(
        "predictions", metavar="PREDICTIONS", nargs="+", help="one or more `structio run` outputs"
    )
    ev.add_argument("--sig", help="the signature: its output types choose each field's metric")
    ev.add_argument("--json", action="store_true", help="print the figures as JSON")
    ev.add_argument("--html", metavar="REPORT", help="write a self-contained HTML report here")
    ev.add_argument(
        "--tolerance", type=float, default=0.0, help="absolute tolerance of number fields"
    )
    ev.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="FIELD=module:function",
        help="score FIELD with function(labelled, predicted) -> float (repeatable)",
    )
    ev.add_argument(
        "--pairs",
        metavar="OUT",
        help="write a preference pair per wrong prediction (needs --sig; one PREDICTIONS)",
    )
    ev.add_argument(
        "--pairs-format",
        choices=("openai", "trl"),
        default="openai",
        help="openai: preference fine-tuning JSONL (default); trl: DPO, conversational",
    )
    _adapter_option(ev)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not value >= 0:  # NaN too
        raise argparse.ArgumentTypeError(f"must be 0 seconds or more, not {text}")
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
