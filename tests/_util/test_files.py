"""One atomic writer and one JSON Lines reader, used by every part that writes or reads files."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import IO

import pytest
from hypothesis import given
from hypothesis import strategies as st

import structio as sio
from structio import finetune
from structio._util import files
from structio._util.files import (
    Appender,
    JSONLine,
    atomic_write,
    open_text,
    read_jsonl,
    read_text,
)


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


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(st.lists(_JSON, min_size=1, max_size=5))
def test_a_byte_order_mark_before_the_first_line_is_skipped(values: list[object]) -> None:
    lines = [json.dumps(value) + "\n" for value in values]
    plain = list(read_jsonl(lines))
    assert [item.value for item in plain] == values
    marked = ["\ufeff" + lines[0], *lines[1:]]
    assert list(read_jsonl(marked)) == plain
    assert list(read_jsonl(line.encode("utf-8") for line in marked)) == plain


def test_only_the_first_line_loses_a_byte_order_mark() -> None:
    # A mark anywhere else is a character of the data, not a mark of the file: reported.
    (first, second) = read_jsonl(['{"a": 1}\n', '\ufeff{"b": 2}\n'])
    assert first == JSONLine(1, {"a": 1})
    assert second.line == 2
    assert second.error is not None


@pytest.mark.parametrize("write", ["mark", "utf-8-sig", "plain"])
def test_users_text_files_are_read_without_their_byte_order_mark(
    tmp_path: Path, write: str
) -> None:
    path = tmp_path / "rows.csv"
    text = "ticket,urgency\r\nx,1\r\n"
    if write == "utf-8-sig":
        path.write_text(text, encoding="utf-8-sig", newline="")
    else:
        path.write_bytes((("\ufeff" if write == "mark" else "") + text).encode("utf-8"))
    assert path.read_bytes().startswith(b"\xef\xbb\xbf") == (write != "plain")
    with open_text(path) as handle:
        assert handle.read() == text  # newlines as written, for CSV
    assert read_text(path) == text.replace("\r\n", "\n")


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


def _write(path: Path, text: str) -> None:
    def write(handle: IO[str]) -> None:
        handle.write(text)

    atomic_write(path, write)


def test_a_rewritten_file_keeps_its_permission_bits(tmp_path: Path) -> None:
    path = tmp_path / "shared.jsonl"
    path.write_text("old\n", encoding="utf-8")
    for mode in (0o644, 0o640, 0o664):
        path.chmod(mode)
        _write(path, "new\n")
        assert stat.S_IMODE(path.stat().st_mode) == mode
    assert path.read_text(encoding="utf-8") == "new\n"


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_a_new_file_gets_what_open_would_give_it(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        _write(tmp_path / "new.jsonl", "x\n")
        with open(tmp_path / "plain.txt", "w", encoding="utf-8") as handle:
            handle.write("x\n")
    finally:
        os.umask(old)
    expected = stat.S_IMODE((tmp_path / "plain.txt").stat().st_mode)
    assert expected == 0o666 & ~umask
    assert stat.S_IMODE((tmp_path / "new.jsonl").stat().st_mode) == expected


def test_a_link_given_as_the_target_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "data" / "train.jsonl"
    real.parent.mkdir()
    real.write_text("old\n", encoding="utf-8")
    real.chmod(0o644)
    link = tmp_path / "train.jsonl"
    link.symlink_to(real)
    _write(link, "new\n")
    assert link.is_symlink()
    assert os.readlink(link) == str(real)
    assert real.read_text(encoding="utf-8") == "new\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o644
    # No temporary file was left beside either.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "train.jsonl"]
    assert [p.name for p in real.parent.iterdir()] == ["train.jsonl"]
    # A dangling link: the file it names is created.
    ghost = tmp_path / "ghost.jsonl"
    ghost.symlink_to(tmp_path / "data" / "later.jsonl")
    _write(ghost, "made\n")
    assert ghost.is_symlink()
    assert (tmp_path / "data" / "later.jsonl").read_text(encoding="utf-8") == "made\n"


def test_the_data_is_synced_before_the_rename_and_the_folder_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        info = os.fstat(fd)
        # What is synced: the folder, or a file and how many bytes it holds then.
        events.append(("fsync", "folder" if stat.S_ISDIR(info.st_mode) else str(info.st_size)))
        real_fsync(fd)

    def replace(source: str, target: str | Path) -> None:
        events.append(("replace", Path(target).name))
        real_replace(source, target)

    monkeypatch.setattr(files.os, "fsync", fsync)
    monkeypatch.setattr(files.os, "replace", replace)
    path = tmp_path / "out.jsonl"
    _write(path, "data\n")
    # The file with all its data, then the rename, then the folder's entry.
    assert events == [("fsync", "5"), ("replace", "out.jsonl"), ("fsync", "folder")]


def test_an_error_of_the_callback_itself_passes_unchanged(tmp_path: Path) -> None:
    # Reading another file fails inside ``write``: that is not the target failing.
    path = tmp_path / "out.txt"
    path.write_text("old\n", encoding="utf-8")

    def reads_a_missing_file(handle: IO[str]) -> None:
        handle.write("partial")
        (tmp_path / "missing.csv").read_text(encoding="utf-8")

    with pytest.raises(FileNotFoundError) as info:
        atomic_write(path, reads_a_missing_file)
    assert not isinstance(info.value, sio.SaveError)
    assert path.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_failure_after_the_callback_is_a_save_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fails(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(files.os, "fsync", fails)
    path = tmp_path / "out.txt"
    with pytest.raises(sio.SaveError) as info:
        atomic_write(path, lambda handle: print("data", file=handle), what="the thing")
    assert info.value.errno == errno.EIO
    assert str(info.value) == (
        f"cannot write the thing {str(path)!r}: Input/output error; check the path, its "
        "folder and the permissions. Nothing was written (a file already there is as it was)"
    )
    assert list(tmp_path.iterdir()) == []


def test_the_appender_takes_back_the_part_of_a_record_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rows.jsonl"
    real_write = os.write
    room = [12]  # bytes left on the "disk" after the first record

    def short_then_full(fd: int, data: bytes) -> int:
        if room[0] <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        written = real_write(fd, bytes(data[: room[0]]))
        room[0] -= written
        return written

    with Appender(path, what="the rows") as rows:
        rows.write('{"line": 1}\n')
        monkeypatch.setattr(files.os, "write", short_then_full)
        with pytest.raises(sio.SaveError) as info:
            rows.write('{"line": 2, "much": "more than twelve bytes"}\n')
        monkeypatch.undo()
        rows.write('{"line": 3}\n')  # room again: appended after the last whole record
    assert info.value.errno == errno.ENOSPC
    assert "the disk is full; free some space, or write to another disk" in str(info.value)
    assert path.read_text(encoding="utf-8") == '{"line": 1}\n{"line": 3}\n'


def test_a_failure_the_system_words_with_the_temporary_file_names_the_users_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Some file systems (FUSE, network mounts) give errors with no strerror: the message
    # would be the system's words, which name the temporary file the user never saw.
    target = tmp_path / "out.json"

    def refuse(source: str, destination: object) -> None:
        raise OSError(f"rename of {source} refused by the server")

    monkeypatch.setattr(files.os, "replace", refuse)
    with pytest.raises(sio.SaveError) as caught:
        files.write_json(target, {"a": 1}, what="the output")
    assert str(caught.value) == (
        f"cannot write the output {str(target)!r}: rename of {target} refused by the "
        "server; check the path, its folder and the permissions. Nothing was written (a "
        "file already there is as it was)"
    )
    assert list(tmp_path.iterdir()) == []
