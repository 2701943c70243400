"""The structio command: outputs, exit codes (0 ok, 1 data, 2 usage) and one-line errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

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
        (["finetune", "just words", "d.jsonl", "-o", "o"], "cannot find signature"),
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
