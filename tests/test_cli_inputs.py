"""The structio command and the files it is given: inputs never overwritten, text that is
not UTF-8, signatures that are neither a spec nor a class, empty files, every adapter, and
messages in the command's words."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import structio as sio
from structio._loading import load_signature
from structio.cli import _first_non_utf8, main
from structio.cli.parser import ADAPTERS
from tests.test_cli import run

ROOT = Path(__file__).resolve().parents[1]
TRIAGE = f"{ROOT / 'examples' / 'quickstart.py'}:Triage"
TICKETS = ROOT / "examples" / "data" / "tickets.jsonl"
OFFLINE_RUN = ["--model", "openai/m", "--api-base", "http://127.0.0.1:9/v1"]


# -- an output that is an input ---------------------------------------------------------------


@pytest.mark.parametrize("command", ["finetune", "run"])
@pytest.mark.parametrize("how", ["data", "link", "demos"])
def test_an_output_that_is_an_input_is_refused_and_the_input_kept(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, how: str
) -> None:
    data = tmp_path / "tk.jsonl"
    data.write_bytes(TICKETS.read_bytes())
    demos = tmp_path / "demos.jsonl"
    demos.write_text(TICKETS.read_text(encoding="utf-8").splitlines()[0] + "\n", "utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(data)
    out = {"data": data, "link": link, "demos": demos}[how]
    kept = {path: path.read_bytes() for path in (data, demos)}
    argv = [command, TRIAGE, str(data), "-o", str(out), "--demos", str(demos)]
    code, stdout, err = run(capsys, *argv, *(OFFLINE_RUN if command == "run" else []))
    assert (code, stdout) == (2, "")
    what = "the demos file (--demos" if how == "demos" else "the data file (DATA"
    given = demos if how == "demos" else data
    assert err == (
        f"structio: error: the output {str(out)!r} is {what} {str(given)!r}): writing it "
        "would destroy the input; give another -o\n"
    )
    assert {path: path.read_bytes() for path in (data, demos)} == kept


# -- text that is not UTF-8 -------------------------------------------------------------------

BAD = b'{"ticket": "caf\xe9"}\n'  # Latin-1: byte 0xe9 at offset 15


@pytest.mark.parametrize("command", ["finetune", "validate", "run", "demos", "inputs"])
def test_a_file_that_is_not_utf8_is_named_with_its_first_bad_byte(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(BAD)
    out = str(tmp_path / "o.jsonl")
    argv = {
        "finetune": ["finetune", TRIAGE, str(bad), "-o", out],
        "validate": ["validate", str(bad)],
        "run": ["run", TRIAGE, str(bad), "-o", out, *OFFLINE_RUN],
        "demos": ["format", TRIAGE, "--inputs", '{"ticket": "x"}', "--demos", str(bad)],
        "inputs": ["format", TRIAGE, "--inputs", f"@{bad}"],
    }[command]
    code, stdout, err = run(capsys, *argv)
    assert (code, stdout) == (2, "")
    assert err == (
        f"structio: error: {str(bad)!r} is not UTF-8 text (byte 0xe9 at offset 15); save it "
        "as UTF-8\n"
    )


def test_standard_input_that_is_not_utf8_has_the_same_words() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "structio", "parse", "q -> a"],
        input=b"\xd5x",
        capture_output=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr == (
        b"structio: error: standard input is not UTF-8 text (byte 0xd5 at offset 0); save it "
        b"as UTF-8\n"
    )


def test_the_first_bad_byte_is_found_across_the_pieces_a_file_is_read_in(
    tmp_path: Path,
) -> None:
    piece = 1 << 20
    path = tmp_path / "big.txt"
    # "é" (two bytes) cut by the end of the first piece, then a bad byte.
    path.write_bytes(b"a" * (piece - 1) + "é".encode() + b"\xff")
    assert _first_non_utf8(str(path)) == (0xFF, piece + 1)
    path.write_bytes(b"ok\xc3")  # a character cut off by the end of the file
    assert _first_non_utf8(str(path)) == (0xC3, 2)
    path.write_bytes("all text é\n".encode())
    assert _first_non_utf8(str(path)) is None


# -- a signature that is neither a spec nor a class -------------------------------------------


@pytest.mark.parametrize(
    ("sig", "message"),
    [
        (
            "question answer",
            "StringSignature: invalid signature spec 'question answer': it must contain "
            "exactly one '->' between inputs and outputs (found 0), e.g. 'question -> answer: "
            "int'; or name a signature class: path/to/file.py:ClassName or "
            "package.module:ClassName",
        ),
        ("question: str", "it must contain exactly one '->'"),
        ("app/sigs.py", "'app/sigs.py' names a Python file but no class in it: give app/sigs.py:"),
    ],
)
def test_a_signature_that_is_not_a_spec_says_what_a_spec_needs(
    capsys: pytest.CaptureFixture[str], sig: str, message: str
) -> None:
    code, out, err = run(capsys, "format", sig, "--inputs", '{"question": "x"}')
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert message in line
    with pytest.raises(sio.SignatureError) as info:  # the same from Python
        load_signature(sig)
    assert message in str(info.value)


# -- empty files --------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "\n\n"])
def test_validate_of_a_file_without_rows_is_an_error_as_finetune_of_no_examples(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text(text, encoding="utf-8")
    code, out, err = run(capsys, "validate", str(empty))
    assert (code, out) == (1, "")
    first, *detail = err.splitlines()
    assert first == (
        f"structio: error: no rows in {str(empty)!r}: a finetune file holds one JSON object "
        "per line"
    )
    assert detail == [f"0 rows checked in {empty}: 0 valid, 0 with problems", "no valid rows"]
    code, _, err = run(capsys, "finetune", TRIAGE, str(empty), "-o", str(tmp_path / "o.jsonl"))
    assert code == 1
    assert err.startswith(f"structio: error: no examples in {str(empty)!r}\n")


# -- every adapter --------------------------------------------------------------------------

OUTPUTS = {"category": "billing", "urgency": 3}


@pytest.mark.parametrize("name", ["chat", "json", "xml", "compact", "tool"])
def test_format_and_parse_take_every_adapter(capsys: pytest.CaptureFixture[str], name: str) -> None:
    adapter = ADAPTERS[name]()
    sig = load_signature(TRIAGE)
    code, out, _ = run(capsys, "format", TRIAGE, "--inputs", '{"ticket": "x"}', "--adapter", name)
    assert code == 0
    assert json.loads(out) == adapter.format(sig, [], {"ticket": "x"})
    # With tool, the completion is the tool call's arguments.
    answer = adapter.format_assistant_message_content(sig, OUTPUTS)
    code, out, _ = run(capsys, "parse", TRIAGE, "--adapter", name, stdin=answer)
    assert (code, json.loads(out)) == (0, OUTPUTS)


@pytest.mark.parametrize("name", ["json", "xml", "compact"])
def test_finetune_and_validate_take_every_adapter_of_text_answers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    out = tmp_path / f"{name}.jsonl"
    code, _, _ = run(capsys, "finetune", TRIAGE, str(TICKETS), "-o", str(out), "--adapter", name)
    assert code == 0
    code, report, _ = run(capsys, "validate", str(out), "--sig", TRIAGE, "--adapter", name)
    assert (code, report.splitlines()[0].endswith("20 valid, 0 with problems")) == (0, True)
    other = "chat" if name != "chat" else "json"
    code, report, _ = run(capsys, "validate", str(out), "--sig", TRIAGE, "--adapter", other)
    assert code == 1
    assert "20 with problems" in report
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    row = json.loads(TICKETS.read_text(encoding="utf-8").splitlines()[0])
    inputs = {"ticket": row.pop("ticket")}
    expected = ADAPTERS[name]().format_finetune_data(load_signature(TRIAGE), [], inputs, row)
    assert first == expected


@pytest.mark.parametrize("command", ["finetune", "validate"])
def test_finetune_data_of_tool_calls_is_refused_with_the_reason(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    out = tmp_path / "t.jsonl"
    argv = {
        "finetune": ["finetune", TRIAGE, str(TICKETS), "-o", str(out)],
        "validate": ["validate", str(TICKETS), "--sig", TRIAGE],
    }[command]
    code, stdout, err = run(capsys, *argv, "--adapter", "tool")
    assert (code, stdout) == (2, "")
    assert err.startswith(
        "structio: error: --adapter tool has the model answer by calling a tool the request "
        "carries, and finetune rows of chat messages hold no tools nor tool calls"
    )
    assert err.endswith("use --adapter json (the same outputs, answered as a JSON object)\n")
    assert not out.exists()


# -- the command's words --------------------------------------------------------------------


def test_nothing_written_names_the_flag_and_counts_rows_in_words(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    good = '{"ticket": "a", "category": "bug", "urgency": 2}\n'
    bad = '{"ticket": "b", "category": "sales", "urgency": 2}\n'
    data, out = tmp_path / "rows.jsonl", tmp_path / "train.jsonl"
    data.write_text(good + bad, encoding="utf-8")
    code, _, err = run(capsys, "finetune", TRIAGE, str(data), "-o", str(out))
    assert code == 1
    assert (
        f"nothing was written to {str(out)!r}; fix them, or pass --skip-invalid to write the "
        "1 good row. First: line 2: "
    ) in err
    assert "skip_invalid" not in err

    data.write_text(bad, encoding="utf-8")
    code, _, err = run(capsys, "finetune", TRIAGE, str(data), "-o", str(out))
    assert code == 1
    assert f"nothing was written to {str(out)!r}; no example is valid: fix them. First:" in err
    assert "--skip-invalid" not in err
    # Every row skipped: the summary has no token statistics of no rows.
    code, report, _ = run(capsys, "finetune", TRIAGE, str(data), "-o", str(out), "--skip-invalid")
    assert code == 1
    assert report.splitlines()[:2] == ["1 row read, 0 written, 1 skipped", "no rows written"]


def test_the_library_keeps_its_own_words(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text(
        '{"ticket": "a", "category": "bug", "urgency": 2}\n'
        '{"ticket": "b", "category": "bug", "urgency": 2}\n'
        '{"ticket": "c", "category": "sales", "urgency": 2}\n',
        encoding="utf-8",
    )
    with pytest.raises(sio.DataError, match="pass skip_invalid=True to write the 2 good rows"):
        sio.finetune.write_jsonl(load_signature(TRIAGE), data, tmp_path / "o.jsonl")


def test_an_empty_model_names_the_flag(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for argv in (
        ["run", TRIAGE, str(TICKETS), "-o", str(tmp_path / "p.jsonl"), "--model", ""],
        ["finetune", TRIAGE, str(TICKETS), "-o", str(tmp_path / "t.jsonl"), "--model", " "],
    ):
        with pytest.raises(SystemExit) as caught:
            main(argv)
        assert caught.value.code == 2
        err = capsys.readouterr().err
        assert "argument --model: needs a model string such as openai/gpt-4o-mini" in err
        assert "LM(model)" not in err


def test_an_unreadable_completion_says_what_to_do_in_the_commands_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "parse", "question -> answer: int", "--adapter", "json", stdin="x")
    assert code == 1
    assert ".completion" not in err
    assert err.splitlines()[-1] == (
        "  what to do: give a completion in the format --adapter reads (structio format shows "
        "the prompt that asks for it)"
    )


def test_the_files_the_help_examples_name_exist() -> None:
    for command in ([], ["run"]):
        shown = subprocess.run(
            [sys.executable, "-m", "structio", *command, "--help"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        block = shown.split("examples:\n", 1)[1]
        named = [
            word.split(":")[0]
            for word in block.split()
            if word.startswith("examples/") and "." in word
        ]
        assert "examples/data/tickets.csv" in named or command == ["run"]
        for path in named:
            assert (ROOT / path).is_file(), path
