"""What the command shows besides its results: progress, -v/-q/--json, completion, help.

Results and summaries go to standard output, progress and diagnostics to standard error,
for every command.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from structio.cli import _COMMANDS, main
from structio.cli import output as _output
from structio.cli.parser import HelpFormatter, build_parser
from tests._util.test_progress_terminal import Pty, Screen
from tests.wire.server import OpenAIServer, Reply

SIG = "question -> answer: int"
ROOT = Path(__file__).resolve().parents[1]
TRIAGE = str(ROOT / "examples" / "quickstart.py") + ":Triage"
TICKETS = ROOT / "examples" / "data" / "tickets.jsonl"


@pytest.fixture
def server(server: OpenAIServer) -> OpenAIServer:
    """The loopback server (tests/conftest.py), answering every call by default."""
    server.default = Reply(content="[[ ## answer ## ]]\n4")
    return server


def rows(tmp_path: Path, count: int) -> Path:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(f'{{"question": "q{n}"}}\n' for n in range(count)), encoding="utf-8")
    return data


def run_args(server: OpenAIServer, data: Path, out: Path, *extra: str) -> list[str]:
    return [
        "run",
        SIG,
        str(data),
        "-o",
        str(out),
        "--model",
        "openai/m",
        "--api-base",
        server.base_url,
        "--api-key",
        "k",
        "--no-cache",
        *extra,
    ]


def call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_run_on_a_60_column_terminal_redraws_in_place_and_shows_the_retry(
    server: OpenAIServer, tmp_path: Path
) -> None:
    server.reply(Reply(status=500, error_message="the server broke"))  # the first request
    server.default = Reply(content="[[ ## answer ## ]]\n4", delay=0.01)
    terminal = Pty(60)
    argv = run_args(server, rows(tmp_path, 40), tmp_path / "p.jsonl", "--concurrency", "1")
    done = subprocess.run(
        [sys.executable, "-m", "structio", *argv],
        stdout=subprocess.PIPE,
        stderr=terminal.slave,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        timeout=120,
        check=False,
    )
    text = terminal.output(until="40/40")
    terminal.close()
    assert done.returncode == 0, text
    assert done.stdout.startswith("40 rows predicted, 0 already in")  # the summary: stdout
    screen = Screen(60)
    screen.feed(text)
    assert "\r" in text
    assert screen.widest < 60  # no redraw wraps on a 60-column terminal
    assert "retry 1/3 after HTTP 500" in text  # the retry, on the line
    assert "after HTTP 500" in text
    assert "Traceback" not in text
    shown = [line for line in screen.shown() if line]
    assert shown[0] == "structio: loading the model client..."
    assert re.fullmatch(r"StringSignature 40/40 \[#+\] 100\.0% [0-9.]+/s", shown[-1]), shown


@pytest.fixture
def paced(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> OpenAIServer:
    """The server answering in 20 ms, and a plain progress line every 50 ms off a terminal."""
    monkeypatch.setattr(_output, "PLAIN_EVERY", 0.05)
    server.default = Reply(content="[[ ## answer ## ]]\n4", delay=0.02)
    return server


def test_redirected_a_run_writes_plain_lines_and_the_summary_on_stdout(
    paced: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = paced
    code, out, err = call(capsys, *run_args(server, rows(tmp_path, 30), tmp_path / "p.jsonl"))
    assert code == 0
    assert out.startswith("30 rows predicted, 0 already in")
    lines = err.splitlines()
    assert lines, "no progress line off a terminal"
    assert "\r" not in err
    pattern = r"structio: StringSignature [0-9,]+/30 rows \([0-9.]+%\), [0-9.]+/s(, ETA \w+)?"
    for line in lines:
        assert re.fullmatch(pattern, line), line
    assert lines[-1].startswith("structio: StringSignature 30/30 rows (100.0%)")


def test_json_prints_one_object_on_stdout_for_every_command(
    server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_path = tmp_path / "p.jsonl"
    code, out, _ = call(capsys, *run_args(server, rows(tmp_path, 3), out_path, "--json"))
    assert code == 0
    summary = json.loads(out)
    assert (summary["command"], summary["predicted"], summary["failed"]) == ("run", 3, 0)
    assert summary["output"] == str(out_path)
    # Before the command too; and a rerun has nothing left to do.
    code, out, _ = call(capsys, "--json", *run_args(server, rows(tmp_path, 3), out_path))
    assert (code, json.loads(out)["already_done"]) == (0, 3)

    train = tmp_path / "train.jsonl"
    code, out, _ = call(capsys, "finetune", TRIAGE, str(TICKETS), "-o", str(train), "--json")
    summary = json.loads(out)
    assert (code, summary["command"], summary["written"]) == (0, "finetune", 20)
    assert summary["tokens"]["total"] > 0
    code, out, _ = call(capsys, "validate", str(train), "--max-tokens", "100", "--json")
    summary = json.loads(out)
    assert (code, summary["command"], summary["problem_count"]) == (1, "validate", 20)
    assert summary["problems"][0]["line"] == 1
    code, out, _ = call(capsys, "--json", "format", SIG, "--inputs", '{"question": "2+2?"}')
    assert code == 0
    assert json.loads(out)[-1]["role"] == "user"


def test_json_gives_the_summary_of_finetune_data_with_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text('{"ticket": "b", "category": "sales", "urgency": 2}\n', encoding="utf-8")
    out_path = tmp_path / "train.jsonl"
    code, out, err = call(capsys, "finetune", TRIAGE, str(data), "-o", str(out_path), "--json")
    assert code == 1
    assert json.loads(out)["problem_count"] == 1
    assert err.startswith("structio: error: 1 of 1 examples have problems")


def test_quiet_shows_nothing_on_stderr_when_all_goes_well(
    paced: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = call(capsys, *run_args(paced, rows(tmp_path, 10), tmp_path / "p.jsonl"), "-q")
    assert (code, err) == (0, "")
    assert out.startswith("10 rows predicted")
    train = tmp_path / "train.jsonl"
    code, out, err = call(capsys, "-q", "finetune", TRIAGE, str(TICKETS), "-o", str(train))
    assert (code, err) == (0, "")
    assert out.startswith("20 rows read, 20 written")
    # Errors still show.
    code, out, err = call(capsys, "-q", "validate", str(tmp_path / "nope.jsonl"))
    assert code == 2
    assert err.startswith("structio: error: ")


def test_verbose_shows_the_retries_and_quiet_does_not(
    server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.reply(Reply(status=500, error_message="the server broke"))
    code, _, err = call(capsys, *run_args(server, rows(tmp_path, 1), tmp_path / "p.jsonl"), "-v")
    assert code == 0
    (line,) = [line for line in err.splitlines() if "retry 1 in" in line]
    assert line.startswith("structio: warning: openai/m: ServerError: ")
    assert "Traceback" not in err
    server.reply(Reply(status=500, error_message="the server broke"))
    code, _, err = call(capsys, *run_args(server, rows(tmp_path, 2), tmp_path / "q.jsonl"), "-q")
    assert (code, err) == (0, "")


def test_verbose_and_quiet_together_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = call(capsys, "-v", "validate", "x.jsonl", "-q")
    assert (code, out) == (2, "")
    assert err == "structio: error: -v shows more and -q less: give one of them\n"


def test_the_retry_note_names_the_retry_and_its_cause() -> None:
    import logging

    notes = _output._RetryNotes([3])
    error = type("ServerError", (Exception,), {"status_code": 503})("down")
    record = logging.LogRecord(
        "structio", logging.WARNING, "lm.py", 1, "%s %s %s %d %.2f", ("m", "E", error, 2, 1.5), None
    )
    record.funcName = "_delay"
    assert notes.note(record) == ("retry 2/3 after HTTP 503", 3.5)
    record.funcName = "_reask"
    record.args = ("Triage", 1, "ChatAdapter", "why")
    assert notes.note(record)[0] == "re-ask 1: the answer could not be used"
    record.funcName = "something_else"
    assert notes.note(record) == (None, 0.0)


def test_the_bash_completion_is_valid_and_names_the_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, script, _ = call(capsys, "completion", "bash")
    assert code == 0
    path = tmp_path / "structio.bash"
    path.write_text(script, encoding="utf-8")
    bash = shutil.which("bash")
    assert bash is not None, "the test checks the script with bash -n"
    checked = subprocess.run([bash, "-n", str(path)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    for word in ("format", "parse", "finetune", "validate", "run", "eval", "completion"):
        assert re.search(rf"\b{word}\b", script), word
    for option in ("--concurrency", "--api-base", "--json", "--quiet", "--verbose", "--adapter"):
        assert option in script
    code, zsh, _ = call(capsys, "completion", "zsh")
    assert code == 0
    assert "--concurrency" in zsh
    code, tcsh, _ = call(capsys, "completion", "tcsh")
    assert code == 0
    assert "n/completion/(bash zsh tcsh)/" in tcsh


def parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parser and each subcommand's."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found.extend(parsers(sub))
    return found


def test_every_option_with_a_default_shows_it_in_its_help() -> None:
    checked = 0
    for parser in parsers(build_parser(_COMMANDS)):
        assert parser.formatter_class is HelpFormatter
        text = " ".join(parser.format_help().split())
        for action in parser._actions:
            default = action.default
            if not action.option_strings or default in (None, False, [], argparse.SUPPRESS):
                continue
            if isinstance(action, (argparse._VersionAction, argparse._CountAction)):
                continue  # --version; -v, whose 0 means "not given"
            assert action.help, action.option_strings
            assert f"(default: {default})" in text, (parser.prog, action.option_strings)
            checked += 1
    assert checked >= 8  # --concurrency, --transport, --epochs, --tolerance, --adapter...


def test_the_temperature_has_a_help() -> None:
    (run,) = [p for p in parsers(build_parser(_COMMANDS)) if p.prog == "structio run"]
    (action,) = [a for a in run._actions if "--temperature" in a.option_strings]
    assert action.help is not None
    assert "sampling temperature" in action.help
