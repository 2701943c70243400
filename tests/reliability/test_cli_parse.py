"""`structio parse` answers any input with its output or one error line, never a traceback.

Every case runs the real command in a new process (``python -m structio parse``), the way
a shell script would, and checks what the script would see: the exit code, one
``structio: error:`` line on standard error (a parse error's detail follows it, indented),
and nothing on standard output.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

import pytest

from structio import cli

# Generous: only there so that a hang fails the test instead of the suite.
TIMEOUT = 120.0
SIG = "question -> answer: int"
ERROR = "structio: error: "

NESTED_INPUTS = {
    "2,000 [": "[" * 2000,
    "2,000 {": "{" * 2000,
    "100,000 [": "[" * 100_000,
    "an answer then 330 [": '{"answer": ' + "[" * 330,
    "an answer nested 5,000 deep and closed": '{"answer": ' + "[" * 5000 + "1" + "]" * 5000 + "}",
    "a chat field then 3,000 [": "[[ ## answer ## ]]\n" + "[" * 3000,
    "a 5,000-digit number in JSON": '{"answer": ' + "9" * 5000 + "}",
    "a 5,000-digit number in a chat field": "[[ ## answer ## ]]\n" + "9" * 5000,
    "2 MB of text": "[[ ## answer ## ]]\n" + "x" * 2_000_000,
    "control characters": "\x00\x01\x02\x1b[31m\x7f" * 1000,
    "nothing": "",
}


def parse(stdin: bytes, *args: str, sig: str = SIG) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "structio", "parse", sig, *args],
        input=stdin.decode("latin-1"),  # text mode would re-encode; latin-1 keeps every byte
        capture_output=True,
        text=True,
        encoding="latin-1",
        timeout=TIMEOUT,
        check=False,
    )


def assert_one_error(done: subprocess.CompletedProcess[str], code: int) -> str:
    """The command failed with ``code`` and one error line; returns that line."""
    lines = done.stderr.splitlines()
    assert "Traceback" not in done.stderr, done.stderr
    assert (done.returncode, done.stdout) == (code, ""), done.stderr
    assert lines, "nothing on standard error"
    assert lines[0].startswith(ERROR), done.stderr
    # Detail, if any, is indented below the one error line: no second message, no trace.
    assert all(line.startswith("  ") for line in lines[1:]), done.stderr
    return lines[0]


@pytest.mark.parametrize("adapter", ["chat", "json"])
@pytest.mark.parametrize("text", NESTED_INPUTS.values(), ids=NESTED_INPUTS.keys())
def test_deep_huge_and_odd_completions_give_one_error_line(text: str, adapter: str) -> None:
    done = parse(text.encode("utf-8"), "--adapter", adapter)
    if done.returncode == 0:  # a reading with one meaning is fine, if it is the declared type
        assert isinstance(json.loads(done.stdout)["answer"], int)
        assert done.stderr == ""
    else:
        assert_one_error(done, 1)


@pytest.mark.parametrize(
    "data",
    [
        bytes(range(256)) * 10,
        b"[[ ## answer ## ]]\n4\xff\n",
        b"\xc3(" * 5000,
        b"\x80" + b"[" * 2000,
    ],
    ids=["every byte", "one bad byte", "broken sequences", "bad byte then brackets"],
)
def test_input_that_is_not_utf8_is_one_line(data: bytes) -> None:
    done = parse(data)
    line = assert_one_error(done, 1)
    assert done.stderr == line + "\n"
    assert line.startswith(f"{ERROR}standard input is not UTF-8 text (byte 0x")


def test_a_good_completion_still_parses_with_windows_newlines() -> None:
    done = parse(b"[[ ## answer ## ]]\r\n4\r\n")
    assert (done.returncode, json.loads(done.stdout), done.stderr) == (0, {"answer": 4}, "")


# A signature whose output type runs code of our choosing while the completion is read:
# how the command meets an error nobody foresaw, whatever the parser does with brackets.
SIGNATURES = """
from typing import Annotated

from pydantic import AfterValidator

import structio as sio


def _unforeseen(value: int) -> int:
    raise RuntimeError("a surprise\\non two lines")


def _deep(value: int) -> int:
    raise RecursionError("maximum recursion depth exceeded")


class Unforeseen(sio.Signature):
    question: str = sio.InputField()
    answer: Annotated[int, AfterValidator(_unforeseen)] = sio.OutputField()


class Deep(sio.Signature):
    question: str = sio.InputField()
    answer: Annotated[int, AfterValidator(_deep)] = sio.OutputField()
"""


def test_an_unforeseen_error_is_one_line_that_asks_for_a_report(tmp_path: Path) -> None:
    module = tmp_path / "sigs.py"
    module.write_text(SIGNATURES, encoding="utf-8")
    done = parse(b"[[ ## answer ## ]]\n4\n", sig=f"{module}:Unforeseen")
    line = assert_one_error(done, 1)
    assert done.stderr == line + "\n"
    assert line == (
        f"{ERROR}unexpected RuntimeError: a surprise on two lines (this is a bug: please "
        "report it, with the command that caused it)"
    )


def test_a_recursion_error_while_reading_is_one_line(tmp_path: Path) -> None:
    module = tmp_path / "sigs.py"
    module.write_text(SIGNATURES, encoding="utf-8")
    done = parse(b"[[ ## answer ## ]]\n4\n", sig=f"{module}:Deep")
    line = assert_one_error(done, 1)
    assert done.stderr == line + "\n"
    assert line == f"{ERROR}the completion cannot be read: its brackets are nested too deeply"


def test_ctrl_c_while_reading_input_is_one_line_and_exit_130(tmp_path: Path) -> None:
    marker = tmp_path / "loaded"
    module = tmp_path / "waiting.py"
    # Loading the signature happens inside the command, just before it reads standard
    # input: the marker says the command is there, so the signal cannot land in startup.
    module.write_text(
        f"from pathlib import Path\nimport structio as sio\n"
        f"Waiting = sio.Signature('question -> answer: int')\n"
        f"Path({str(marker)!r}).touch()\n",
        encoding="utf-8",
    )
    # The command runs as `python -m structio`, with SIGINT unblocked and at its default: a
    # child inherits the blocked signals and ignored ones of the thread that starts it, and
    # some libraries other tests load (Ray's) start threads that block them.
    interruptible = (
        "import runpy, signal, sys; "
        "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); "
        "signal.signal(signal.SIGINT, signal.default_int_handler); "
        "sys.argv = ['structio', *sys.argv[1:]]; "
        "runpy.run_module('structio', run_name='__main__', alter_sys=True)"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", interruptible, "parse", f"{module}:Waiting"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while not marker.exists():
            assert process.poll() is None, process.communicate(timeout=TIMEOUT)
            assert time.monotonic() < deadline, "the command never loaded the signature"
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        # Standard input stays open until the command has ended: on a loaded machine the
        # signal may be handled after an end of input, which would be read as no completion.
        process.wait(timeout=TIMEOUT)
        out, err = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=TIMEOUT)
    assert (process.returncode, out, err) == (130, "", f"{ERROR}interrupted\n")


def test_a_reader_that_goes_away_is_not_a_traceback() -> None:
    # Buffered, as standard output to a pipe normally is: the write fails at the flush.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    process = subprocess.Popen(
        [sys.executable, "-m", "structio", "parse", SIG],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stdout is not None
    process.stdout.close()  # as `structio parse ... | head -c 0` does
    _, err = process.communicate(b"[[ ## answer ## ]]\n4\n", timeout=TIMEOUT)
    assert (process.returncode, err) == (1, b"")


# In-process, the boundary itself: each kind of error the adapter may raise.
class Failing:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    def parse(self, signature: Any, completion: str) -> NoReturn:
        raise self.error


@pytest.mark.parametrize(
    ("error", "code", "message"),
    [
        (ValueError("bad\nvalue"), 1, "the completion cannot be read: bad value"),
        (
            RecursionError("deep"),
            1,
            "the completion cannot be read: its brackets are nested too deeply",
        ),
        (
            KeyError("x"),
            1,
            "unexpected KeyError: 'x' (this is a bug: please report it, with the command "
            "that caused it)",
        ),
        (KeyboardInterrupt(), 130, "interrupted"),
        (OSError(5, "Input/output error"), 1, "[Errno 5] Input/output error"),
    ],
    ids=["ValueError", "RecursionError", "KeyError", "KeyboardInterrupt", "OSError"],
)
def test_every_escape_from_parsing_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: BaseException,
    code: int,
    message: str,
) -> None:
    monkeypatch.setattr(cli, "_adapter", lambda name: Failing(error))
    monkeypatch.setattr(sys, "stdin", io.StringIO("[[ ## answer ## ]]\n4\n"))
    assert cli.main(["parse", SIG]) == code
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"{ERROR}{message}\n")


def test_a_very_long_unforeseen_message_is_clipped_to_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "_adapter", lambda name: Failing(LookupError("y\n" * 10_000)))
    monkeypatch.setattr(sys, "stdin", io.StringIO("4"))
    assert cli.main(["parse", SIG]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert len(err) < 500
    assert "..." in err


def test_usage_errors_still_come_from_argparse(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        cli.main(["parse"])
    assert caught.value.code == 2
    assert "the following arguments are required: SIG" in capsys.readouterr().err
