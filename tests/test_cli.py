"""The structio command: outputs, exit codes (0 ok, 1 data, 2 usage) and one-line errors."""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest

import structio as sio
from structio import finetune
from structio._loading import load_signature
from structio.cli import main

ROOT = Path(__file__).resolve().parents[1]
TRIAGE = f"{ROOT / 'examples' / 'quickstart.py'}:Triage"
TICKETS = ROOT / "examples" / "data" / "tickets.jsonl"


def run(capsys: pytest.CaptureFixture[str], *argv: str, stdin: str = "") -> tuple[int, str, str]:
    old = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        code = main(list(argv))
    finally:
        sys.stdin = old
    out, err = capsys.readouterr()
    return code, out, err


def test_format_prints_the_messages(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "format", "question -> answer: int", "--inputs", '{"question": "2+2?"}'
    )
    assert code == 0
    assert json.loads(out) == sio.ChatAdapter().format(
        "question -> answer: int", inputs={"question": "2+2?"}
    )
    code, out, _ = run(capsys, "format", TRIAGE, "--inputs", '{"ticket": "x"}', "--adapter", "json")
    assert code == 0
    assert "Outputs will be a JSON object" in json.loads(out)[0]["content"]


def test_format_with_demos_and_an_inputs_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    demos = tmp_path / "demos.jsonl"
    demos.write_text('{"question": "1+1?", "answer": 2}\n', encoding="utf-8")
    inputs = tmp_path / "inputs.json"
    inputs.write_text('{"question": "2+2?"}', encoding="utf-8")
    code, out, _ = run(
        capsys, "format", "question -> answer: int", "--inputs", f"@{inputs}", "--demos", str(demos)
    )
    assert code == 0
    messages = json.loads(out)
    assert messages[1] == {"role": "user", "content": "[[ ## question ## ]]\n1+1?"}
    assert len(messages) == 4


def test_parse_prints_values_or_the_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "parse", "question -> answer: int", stdin="[[ ## answer ## ]]\n4\n")
    assert (code, json.loads(out)) == (0, {"answer": 4})
    code, out, _ = run(
        capsys,
        "parse",
        "q -> when: datetime.date",
        "--adapter",
        "json",
        stdin='{"when": "2026-01-02"}',
    )
    assert (code, json.loads(out)) == (0, {"when": "2026-01-02"})
    code, out, err = run(capsys, "parse", "question -> answer: int", stdin="four")
    assert code == 1
    assert out == ""
    assert err.startswith("structio: error: ChatAdapter could not parse the completion")
    assert "field `answer`" in err


def test_finetune_writes_and_validate_checks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out_path = tmp_path / "train.jsonl"
    code, out, _ = run(capsys, "finetune", TRIAGE, str(TICKETS), "-o", str(out_path))
    assert code == 0
    assert out.startswith(f"20 rows read, 20 written, 0 skipped -> {out_path}\ntokens per row:")
    assert len(out_path.read_text(encoding="utf-8").splitlines()) == 20
    code, out, _ = run(capsys, "validate", str(out_path), "--sig", TRIAGE)
    assert code == 0
    assert out.startswith(f"20 rows checked in {out_path}: 20 valid, 0 with problems")
    code, out, _ = run(capsys, "validate", str(out_path), "--max-tokens", "100")
    assert code == 1
    assert "20 with problems" in out


def test_finetune_data_problems_exit_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text(
        '{"ticket": "a", "category": "billing", "urgency": 2}\n'
        '{"ticket": "b", "category": "sales", "urgency": 2}\n',
        encoding="utf-8",
    )
    out_path = tmp_path / "train.jsonl"
    code, out, err = run(capsys, "finetune", TRIAGE, str(data), "-o", str(out_path))
    assert code == 1
    assert not out_path.exists()
    first, *detail = err.splitlines()
    assert first.startswith("structio: error: 1 of 2 examples have problems, so nothing was")
    assert any(
        line.startswith("  line 2: field `category`: 'sales' is not a valid value")
        for line in detail
    )
    code, out, err = run(
        capsys, "finetune", TRIAGE, str(data), "-o", str(out_path), "--skip-invalid"
    )
    assert code == 1
    assert out.startswith("2 rows read, 1 written, 1 skipped")
    assert len(out_path.read_text(encoding="utf-8").splitlines()) == 1


def test_json_adapter_and_csv(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_path = tmp_path / "train.jsonl"
    csv_data = TICKETS.with_suffix(".csv")
    code, _, _ = run(
        capsys, "finetune", TRIAGE, str(csv_data), "-o", str(out_path), "--adapter", "json"
    )
    assert code == 0
    summary = finetune.validate(
        out_path, signature=load_signature(TRIAGE), adapter=sio.JSONAdapter()
    )
    assert summary.problem_count == 0
    assert json.loads(out_path.read_text(encoding="utf-8").splitlines()[0])["messages"][-1][
        "content"
    ].startswith("{")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["finetune", "nope.py:X", "d.jsonl", "-o", "o.jsonl"], "no such file: 'nope.py'"),
        (["finetune", "no_such_pkg_xyz:X", "d.jsonl", "-o", "o"], "cannot import module"),
        (
            ["finetune", f"{ROOT / 'examples' / 'quickstart.py'}:Nope", "d.jsonl", "-o", "o"],
            "has no 'Nope'",
        ),
        (
            ["finetune", f"{ROOT / 'examples' / 'quickstart.py'}:show", "d.jsonl", "-o", "o"],
            "not a Signature class",
        ),
        (["finetune", "just words", "d.jsonl", "-o", "o"], "exactly one '->'"),
        (["finetune", TRIAGE, "missing.jsonl", "-o", "o"], "no such file: 'missing.jsonl'"),
        (["finetune", TRIAGE, "rows.txt", "-o", "o"], r"use a .jsonl file"),
        (["format", "q -> a", "--inputs", "{bad"], "--inputs is not valid JSON"),
        (["format", "q -> a", "--inputs", "[1]"], "--inputs must be a JSON object"),
        (["format", "q -> a", "--inputs", "{}", "--demos", "missing.jsonl"], "cannot read demos"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.startswith("structio: error: ")
    assert message in err.splitlines()[0]


def test_argparse_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["finetune", "q -> a"])
    assert caught.value.code == 2
    assert "required: DATA, -o/--output" in capsys.readouterr().err


def test_help_shows_examples() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "structio", "finetune", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "examples:\n  structio finetune examples/quickstart.py:Triage" in done.stdout
    top = subprocess.run(
        [sys.executable, "-m", "structio", "--help"], capture_output=True, text=True, check=True
    )
    for command in ("format", "parse", "finetune", "validate", "run"):
        assert f"    {command} " in top.stdout


def test_a_signature_from_a_module(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "format", "tests.test_finetune:Triage", "--inputs", '{"ticket": "hi"}'
    )
    assert code == 0
    assert json.loads(out)[-1]["content"].startswith("[[ ## ticket ## ]]\nhi\n\nRespond with")


def test_a_bad_demos_line_is_named_by_the_shared_reader(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    demos = tmp_path / "demos.jsonl"
    demos.write_text('{"q": "1", "a": "2"}\n\n{nope\n', encoding="utf-8")
    code, _, err = run(capsys, "format", "q -> a", "--inputs", "{}", "--demos", str(demos))
    assert code == 2
    assert f"demos {str(demos)!r}, line 3: not valid JSON (" in err


# -- the examples of --help run as written --------------------------------------------------

APP_SIGS = """\
from typing import Literal

import structio as sio


class Triage(sio.Signature):
    \"\"\"Route a support ticket to the right team.\"\"\"

    ticket: str = sio.InputField()
    category: Literal["billing", "bug", "other"] = sio.OutputField()
    urgency: int = sio.OutputField(desc="1 (low) to 5 (high)", ge=1, le=5)
"""


BASH = shutil.which("bash") or "/bin/bash"


def example_commands(help_text: str) -> list[str]:
    """The shell commands of a help text's ``examples:`` block, continuation lines joined."""
    block = help_text.split("examples:\n", 1)[1]
    commands: list[str] = []
    pending = ""
    for line in block.splitlines():
        if not line.startswith("  ") and not pending:
            if commands and not line.strip():
                continue
            if commands:
                break
            continue
        text = pending + line.strip()
        if text.endswith("\\"):
            pending = text[:-1]
            continue
        pending = ""
        commands.append(text)
    return commands


def example_folder(folder: Path) -> Path:
    """A folder holding every file the examples name."""
    folder.mkdir()
    (folder / "examples").symlink_to(ROOT / "examples")
    (folder / "app").mkdir()
    (folder / "app" / "__init__.py").write_text("", encoding="utf-8")
    (folder / "app" / "sigs.py").write_text(APP_SIGS, encoding="utf-8")
    (folder / "inputs.json").write_text('{"ticket": "charged twice"}', encoding="utf-8")
    first = TICKETS.read_text(encoding="utf-8").splitlines()[0]
    (folder / "demos.jsonl").write_text(first + "\n", encoding="utf-8")
    (folder / "completion.txt").write_text("[[ ## answer ## ]]\n4\n", encoding="utf-8")
    (folder / "labelled.csv").write_bytes(TICKETS.with_suffix(".csv").read_bytes())
    (folder / "data.jsonl").write_bytes(TICKETS.read_bytes())
    finetune.write_jsonl(load_signature(TRIAGE), TICKETS, folder / "train.jsonl")
    return folder


def test_every_example_in_the_help_that_runs_offline_runs(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # The `structio` script, as a user's shell finds it.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    ran = []
    for command in ("", "format", "parse", "finetune", "validate", "run"):
        shown = subprocess.run(
            [sys.executable, "-m", "structio", *([command] if command else []), "--help"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        folder = example_folder(tmp_path / (command or "main"))
        for example in example_commands(shown):
            if example.startswith("structio run "):
                continue  # needs a model to answer
            done = subprocess.run(
                [BASH, "-c", example],
                cwd=folder,
                capture_output=True,
                text=True,
                env=env,
                timeout=120,
                check=False,
            )
            assert done.returncode == 0, (example, done.stdout, done.stderr)
            if "| structio parse 'question -> answer: int'" in example:
                assert json.loads(done.stdout) == {"answer": 4}
            ran.append(example)
    assert "printf '[[ ## answer ## ]]\\n4\\n' | structio parse 'question -> answer: int'" in ran
    assert len(ran) >= 12


# -- files that cannot be written ------------------------------------------------------------


@pytest.mark.parametrize("command", ["finetune", "run"])
@pytest.mark.parametrize("where", ["under-a-file", "a-folder", "missing-under-proc"])
def test_an_output_that_cannot_be_written_is_one_line_and_exit_2(
    tmp_path: Path, command: str, where: str
) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("x", encoding="utf-8")
    output = {
        "under-a-file": str(plain / "out.jsonl"),
        "a-folder": str(tmp_path),
        "missing-under-proc": "/proc/structio-nope/out.jsonl",
    }[where]
    argv = [command, TRIAGE, str(TICKETS), "-o", output]
    if command == "run":
        argv += ["--model", "openai/m", "--api-base", "http://127.0.0.1:9/v1"]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [sys.executable, "-m", "structio", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("structio: error: ")
    assert {
        "under-a-file": "is a file, not a folder",
        "a-folder": "is a folder; give a file name",
        "missing-under-proc": "No such file or directory; check the path, its folder and the",
    }[where] in line


def test_an_os_error_names_the_path_and_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = str(tmp_path / "out.jsonl")

    def refuse(*args: object, **kwargs: object) -> NoReturn:
        raise PermissionError(13, "Permission denied", target)

    monkeypatch.setattr(finetune, "write_jsonl", refuse)
    code, out, err = run(capsys, "finetune", TRIAGE, str(TICKETS), "-o", target)
    assert (code, out) == (2, "")
    assert err == (
        f"structio: error: {target!r}: Permission denied; check the path, its folder and "
        "the permissions\n"
    )


@pytest.mark.parametrize(
    ("number", "code"), [(errno.ENOSPC, 1), (errno.EFBIG, 1), (errno.EISDIR, 2), (None, 2)]
)
def test_a_save_error_is_one_line_exit_1_for_a_full_disk_else_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    number: int | None,
    code: int,
) -> None:
    # A path that cannot be written is the command's usage; a full disk is not.
    target = str(tmp_path / "out.jsonl")

    def refuse(*args: object, **kwargs: object) -> NoReturn:
        raise sio.SaveError(
            f"cannot write the finetune file {target!r}: why", path=target, errno=number
        )

    monkeypatch.setattr(finetune, "write_jsonl", refuse)
    assert run(capsys, "finetune", TRIAGE, str(TICKETS), "-o", target) == (
        code,
        "",
        f"structio: error: cannot write the finetune file {target!r}: why\n",
    )


# -- demos, validate, warnings ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("demo", "reason"),
    [
        ('{"ticket": "a", "category": "sales", "urgency": 2}', "field `category`: 'sales'"),
        ('{"ticket": "a", "topic": "x"}', "`topic`"),
        ('{"ticket": "a", "category": "bug", "urgency": 9}', "field `urgency`: 9"),
    ],
)
def test_format_checks_demos_as_predict_and_finetune_do(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, demo: str, reason: str
) -> None:
    demos = tmp_path / "demos.jsonl"
    good = TICKETS.read_text(encoding="utf-8").splitlines()[0]
    demos.write_text(f"{good}\n\n{demo}\n", encoding="utf-8")
    with pytest.raises(sio.FormatError):
        sio.Predict(load_signature(TRIAGE), demos=[json.loads(good), json.loads(demo)])
    for argv in (
        ["format", TRIAGE, "--inputs", '{"ticket": "x"}'],
        ["finetune", TRIAGE, str(TICKETS), "-o", str(tmp_path / "t.jsonl")],
    ):
        code, out, err = run(capsys, *argv, "--demos", str(demos))
        assert (code, out) == (2, "")
        assert err.startswith(f"structio: error: demos {str(demos)!r}, line 3: ")
        assert reason in err
    assert not (tmp_path / "t.jsonl").exists()


def test_validate_refuses_a_file_of_the_other_adapter(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    files = {}
    for adapter in ("chat", "json"):
        files[adapter] = tmp_path / f"{adapter}.jsonl"
        code, _, _ = run(
            capsys,
            "finetune",
            TRIAGE,
            str(TICKETS),
            "-o",
            str(files[adapter]),
            "--adapter",
            adapter,
        )
        assert code == 0
    for adapter, other in (("chat", "json"), ("json", "chat")):
        code, out, _ = run(
            capsys, "validate", str(files[adapter]), "--sig", TRIAGE, "--adapter", adapter
        )
        assert (code, out.splitlines()[0].endswith("20 valid, 0 with problems")) == (0, True)
        code, out, _ = run(
            capsys, "validate", str(files[adapter]), "--sig", TRIAGE, "--adapter", other
        )
        assert code == 1
        assert "20 with problems" in out
        name = "ChatAdapter" if other == "chat" else "JSONAdapter"
        assert f"line 1: the system message is not the one {name} writes for Triage" in out


def test_validate_refuses_an_answer_in_another_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    chat = tmp_path / "chat.jsonl"
    assert run(capsys, "finetune", TRIAGE, str(TICKETS), "-o", str(chat))[0] == 0
    rows = [json.loads(line) for line in chat.read_text(encoding="utf-8").splitlines()]
    # Row 2's answer written as JSON, under the chat system message: ChatAdapter reads it,
    # but a model trained on it would learn the wrong format.
    rows[1]["messages"][-1]["content"] = '{"category": "bug", "urgency": 5}'
    chat.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out, _ = run(capsys, "validate", str(chat), "--sig", TRIAGE)
    assert code == 1
    assert "1 with problems" in out.splitlines()[0]
    assert (
        "line 2: the final answer is written as JSON, not as ChatAdapter writes answers "
        "(sections); is the file in another format? check --adapter (adapter=)"
    ) in out


def test_validate_adapter_needs_a_signature(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "validate", str(TICKETS), "--adapter", "json")
    assert (code, out) == (2, "")
    assert err == (
        "structio: error: --adapter checks each row against a signature's format: pass --sig too\n"
    )


def test_finetune_warns_when_the_model_has_no_known_limit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out_path = tmp_path / "train.jsonl"
    argv = ["finetune", TRIAGE, str(TICKETS), "-o", str(out_path)]
    code, _, err = run(capsys, *argv, "--model", "acme/unheard-of-7b")
    assert code == 0
    assert err == (
        "structio: warning: litellm's model map has no token limit for model "
        "'acme/unheard-of-7b', so no row is checked against one; pass max_tokens= "
        "(--max-tokens) to check a limit\n"
    )
    code, _, err = run(capsys, *argv, "--model", "gpt-4o-mini")  # known: its limit applies
    assert (code, err) == (0, "")
    code, _, err = run(capsys, "validate", str(out_path), "--model", "acme/unheard-of-7b")
    assert code == 0
    assert err.startswith("structio: warning: litellm's model map has no token limit")
    code, _, err = run(capsys, *argv, "--model", "acme/unheard-of-7b", "--max-tokens", "9000")
    assert (code, err) == (0, "")  # a limit given: nothing is left unchecked
