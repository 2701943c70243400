"""One atomic writer and one JSON Lines reader, used by every part that writes or reads files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO

import pytest

import structio as sio
from structio import finetune
from structio._util import files
from structio._util.files import JSONLine, atomic_write, read_jsonl


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("old\n", encoding="utf-8")

    def half(handle: IO[str]) -> None:
        handle.write("new, but only in part")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, half)
    assert path.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    atomic_write(path, lambda handle: print("new", file=handle))
    assert path.read_text(encoding="utf-8") == "new\n"


def test_the_reader_keeps_line_numbers_and_reasons() -> None:
    lines = ['{"a": 1}\n', "\n", "{oops\n", "[1, 2]\n", '{"cut": ']
    assert list(read_jsonl(lines)) == [
        JSONLine(1, {"a": 1}),
        JSONLine(
            3, None, "not valid JSON (Expecting property name enclosed in double quotes, column 2)"
        ),
        JSONLine(4, [1, 2]),
        JSONLine(5, None, "not valid JSON (Expecting value, column 9)", complete=False),
    ]
    assert [item.value for item in read_jsonl([b'{"b": 2}\n'])] == [{"b": 2}]


def test_saved_prompts_and_finetune_files_are_written_by_the_one_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*_: object) -> None:
        raise OSError("disk full")

    saved = tmp_path / "qa.json"
    saved.write_text("old", encoding="utf-8")
    data = tmp_path / "finetune.jsonl"
    data.write_text("old", encoding="utf-8")
    monkeypatch.setattr(files.os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        sio.Predict("question -> answer").save(saved)
    with pytest.raises(OSError, match="disk full"):
        finetune.write_jsonl("question -> answer", [{"question": "q", "answer": "a"}], data)
    assert saved.read_text(encoding="utf-8") == "old"
    assert data.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["finetune.jsonl", "qa.json"]


def test_every_jsonl_reader_names_the_bad_line(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"question": "q", "answer": "a"}\n{bad\n', encoding="utf-8")
    examples = list(finetune.read_examples(rows, sio.Signature("question -> answer")))
    problem = examples[1][1]
    assert isinstance(problem, finetune.Problem)
    assert (problem.line, problem.message) == (
        2,
        "not valid JSON (Expecting property name enclosed in double quotes, column 2)",
    )
    record = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}
    checked = tmp_path / "checked.jsonl"
    checked.write_text(json.dumps(record) + "\n\n{bad\n", encoding="utf-8")
    summary = finetune.validate(checked)
    assert [(p.line, p.message) for p in summary.problems] == [
        (3, "not valid JSON (Expecting property name enclosed in double quotes, column 2)")
    ]


def test_the_reader_reports_json_python_cannot_hold() -> None:
    lines = ["[" * 100_000 + "\n", '{"n": ' + "9" * 5000 + "}\n", '{"ok": 1}\n']
    [deep, long, ok] = list(read_jsonl(lines))
    assert deep == JSONLine(1, None, "not readable (nested too deeply)")
    assert long.line == 2
    assert long.error is not None
    # Python 3.10 words it "(4300) for integer string conversion", 3.11+ "(4300 digits)".
    assert long.error.startswith("not readable (Exceeds the limit (4300")
    assert ok == JSONLine(3, {"ok": 1})
