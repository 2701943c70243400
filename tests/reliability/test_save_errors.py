"""A file structio writes for you that cannot be written is a `SaveError`, never half a file.

Every writer of a path the user gives (`Predict.save`, `save_prompt`, `finetune.write_jsonl`,
`structio run`'s output and errors file, a batch state file, and `write_json` /
`atomic_write` under them) says which file (``repr``: a NUL shows), why and what to do, with
the system's error as the cause. A full disk is tested for real: a child process under a
file size limit (`tests.reliability.file_size_limit`).
"""

from __future__ import annotations

import errno
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from structio._util.files import write_json
from structio.finetune import write_jsonl
from structio.run import run_batch, run_file
from tests.reliability.file_size_limit import needs_rlimit, run_limited
from tests.wire.server import OpenAIServer

SIG = "question -> answer"


def predict() -> sio.Predict:
    return sio.Predict(SIG, lm=sio.FakeLM(lambda messages: {"answer": "a"}))


# Each writer, writing to the path it is given.
WRITERS: dict[str, Callable[[Path], object]] = {
    "Predict.save": lambda path: predict().save(path),
    "write_json": lambda path: write_json(path, {"a": 1}, what="the file"),
    "finetune.write_jsonl": lambda path: write_jsonl(SIG, [{"question": "q", "answer": "a"}], path),
    "run_file": lambda path: run_file(predict(), [{"question": "q"}], path, progress=False),
    "run_batch": lambda path: run_batch(predict(), [{"question": "q"}], path, progress=False),
}


def left_in(folder: Path) -> set[str]:
    """Every file and folder under ``folder``, relative to it (temporary files included)."""
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_nul_in_the_path_is_a_save_error_that_shows_it(tmp_path: Path, writer: str) -> None:
    path = tmp_path / "pre\x00dictions.jsonl"
    with pytest.raises(sio.SaveError) as info:
        WRITERS[writer](path)
    error = info.value
    message = str(error)
    assert "'pre\\x00dictions.jsonl'" in message.replace(str(tmp_path) + "/", "")  # repr'd
    assert "NUL character" in message
    assert "take it out of the path" in message  # what to do
    assert isinstance(error, OSError)  # `except OSError` code keeps working
    assert isinstance(error.__cause__, ValueError)  # what Python said
    assert (error.path, error.filename, error.errno) == (str(path), str(path), None)
    assert left_in(tmp_path) == set()  # nothing written, no temporary file


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_folder_where_the_file_should_be(tmp_path: Path, writer: str) -> None:
    folder = tmp_path / "out.jsonl"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(sio.SaveError) as info:
        WRITERS[writer](folder)
    assert info.value.errno == errno.EISDIR
    assert "it is a folder; give the path of a file" in str(info.value)
    assert isinstance(info.value.__cause__, IsADirectoryError)
    assert left_in(tmp_path) == {"out.jsonl", "out.jsonl/keep.txt"}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_file_where_a_folder_should_be(tmp_path: Path, writer: str) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("mine", encoding="utf-8")
    with pytest.raises(sio.SaveError) as info:
        WRITERS[writer](plain / "out.jsonl")
    assert "a part of its path is a file, not a folder" in str(info.value)
    assert repr(str(plain / "out.jsonl")) in str(info.value)
    assert isinstance(info.value.__cause__, OSError)
    assert left_in(tmp_path) == {"plain.txt"}
    assert plain.read_text(encoding="utf-8") == "mine"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_a_folder_that_cannot_be_made_names_the_system_reason() -> None:
    with pytest.raises(sio.SaveError) as info:
        predict().save("/proc/structio-nope/prompt.json")
    assert info.value.errno == errno.ENOENT
    assert str(info.value).startswith(
        "cannot write the prompt '/proc/structio-nope/prompt.json': No such file or directory; "
        "check the path, its folder and the permissions. Nothing was written"
    )


def test_save_prompt_into_a_folder_that_is_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "prompts").write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("STRUCTIO_HOME", str(home))
    named = sio.Predict(SIG, name="qa")
    with pytest.raises(sio.SaveError) as info:
        sio.save_prompt(named)
    assert repr(str(home / "prompts" / "qa.json")) in str(info.value)
    assert "a part of its path is a file, not a folder" in str(info.value)
    assert left_in(home) == {"prompts"}


def test_an_error_of_the_writers_own_passes_unchanged(tmp_path: Path) -> None:
    # A problem of the examples (not of the file) is the DataError it was, nothing written.
    target = tmp_path / "train.jsonl"
    with pytest.raises(sio.DataError):
        write_jsonl(SIG, [{"question": "q", "answer": "a", "extra": 1}], target)
    assert left_in(tmp_path) == set()


def test_a_save_error_pickles_and_prints_its_message() -> None:
    error = sio.SaveError("cannot write x", path="x", errno=errno.ENOSPC, strerror="full")
    again = pickle.loads(pickle.dumps(error))  # noqa: S301 - our own bytes
    assert str(again) == str(error) == "cannot write x"  # not OSError's "[Errno 28] ..."
    assert (again.path, again.errno, again.strerror, again.filename) == (
        "x",
        errno.ENOSPC,
        "full",
        "x",
    )
    assert isinstance(again, sio.StructioError)
    assert not isinstance(again, sio.UsageError)  # freeing space and retrying can help


# -- reading what was (or was not) saved ---------------------------------------------------------


def test_loading_from_a_path_no_file_can_have_is_a_configuration_error(tmp_path: Path) -> None:
    for load in (sio.Predict.load, predict().load):
        with pytest.raises(sio.ConfigurationError, match=r"'a\\x00b.json'") as info:
            load("a\x00b.json")
        assert isinstance(info.value.__cause__, ValueError)
    binary = tmp_path / "prompt.json"
    binary.write_bytes(b"\xff\xfe{}")
    with pytest.raises(sio.ConfigurationError, match="not UTF-8 text") as info:
        sio.Predict.load(binary)
    assert isinstance(info.value.__cause__, UnicodeDecodeError)


def test_templates_and_signature_files_at_such_a_path_are_refused_by_their_error() -> None:
    from structio._loading import load_signature

    with pytest.raises(sio.TemplateError, match=r"'a\\x00b.yaml'") as template:
        sio.Template.from_file("a\x00b.yaml")
    assert isinstance(template.value.__cause__, ValueError)
    with pytest.raises(sio.SignatureError, match=r"'a\\x00b.py'") as signature:
        load_signature("a\x00b.py:QA")
    assert isinstance(signature.value.__cause__, ValueError)


# -- batch state files -------------------------------------------------------------------------


@pytest.fixture
def batch_lm(server: OpenAIServer) -> sio.LM:
    from tests.wire.test_batch import answer

    server.handler = answer
    return sio.LM(
        "openai/test", api_base=server.base_url, api_key="k", cache=False, transport="direct"
    )


def test_a_state_file_that_cannot_be_written_stops_before_any_batch(
    server: OpenAIServer, batch_lm: sio.LM, tmp_path: Path
) -> None:
    state = tmp_path / "job\x00.batch.json"
    with pytest.raises(sio.SaveError, match=r"batch state file '.*job\\x00\.batch\.json'"):
        sio.Predict("ticket -> category", lm=batch_lm).submit_batch(
            [{"ticket": "a"}], state=state, progress=False
        )
    assert server.count("POST", "/v1/batches") == 0  # nothing created, nothing billed
    assert left_in(tmp_path) == set()


def test_a_state_file_failing_after_a_create_names_the_batch(
    server: OpenAIServer, batch_lm: sio.LM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from structio import batch as batch_module

    saves: list[Path] = []
    real = batch_module.atomic_write

    def full_after_the_first(path: Path, *args: Any, **kwargs: Any) -> None:
        saves.append(path)
        if len(saves) > 1:  # the disk fills up between the upload and the create
            raise sio.SaveError("cannot write it: the disk is full", path=str(path), errno=28)
        real(path, *args, **kwargs)

    monkeypatch.setattr(batch_module, "atomic_write", full_after_the_first)
    with pytest.raises(sio.SaveError) as info:
        sio.Predict("ticket -> category", lm=batch_lm).submit_batch(
            [{"ticket": "a"}], state=tmp_path / "job.batch.json", progress=False
        )
    assert server.count("POST", "/v1/batches") == 1
    assert "batch batch-2 was created and runs at the provider, but is not recorded" in str(
        info.value
    )
    assert info.value.errno == errno.ENOSPC


# -- a full disk, for real ----------------------------------------------------------------------

FULL_DISK = r"""
import json, os, sys
import structio as sio
from structio.finetune import write_jsonl
from structio.run import run_file

folder = sys.argv[1]
found = {}
LIMIT = 64 * 1024


def failure(call):
    try:
        call()
    except sio.SaveError as exc:
        return {"errno": exc.errno, "cause": type(exc.__cause__).__name__, "message": str(exc)}
    return None


answer = sio.FakeLM(lambda messages: {"answer": "a"})
prompt = os.path.join(folder, "prompt.json")
sio.Predict("question -> answer").save(prompt)  # the old prompt, small
old = open(prompt, encoding="utf-8").read()
big = sio.Predict(sio.Signature("question -> answer", instructions="x" * 2 * LIMIT), lm=answer)

limit_file_size(LIMIT)
found["save"] = failure(lambda: big.save(prompt))
found["kept"] = open(prompt, encoding="utf-8").read() == old
train = os.path.join(folder, "train.jsonl")
examples = [{"question": f"{i} " + "y" * 30_000, "answer": "a"} for i in range(3)]
found["finetune"] = failure(lambda: write_jsonl("question -> answer", examples, train))
out = os.path.join(folder, "out.jsonl")
rows = [{"question": f"q{i} " + "z" * 5000} for i in range(30)]
small = sio.Predict("question -> answer", lm=answer)
found["run"] = failure(lambda: run_file(small, rows, out, progress=False, concurrency=1))
with open(out, "rb") as handle:
    data = handle.read()
found["run_size"] = len(data)
found["run_whole"] = data.endswith(b"\n") and all(json.loads(l) for l in data.splitlines())
found["run_rows"] = len(data.splitlines())

lift_file_size_limit()  # space is free again: the same run does the rest
summary = run_file(small, rows, out, progress=False)
found["rerun"] = [summary.done, summary.already_done, len(summary.failed)]
with open(out, encoding="utf-8") as handle:
    found["lines"] = sorted(json.loads(line)["line"] for line in handle)
found["files"] = sorted(os.listdir(folder))
print(json.dumps(found))
"""


@needs_rlimit
def test_a_full_disk_is_a_save_error_and_leaves_no_part_of_a_file(tmp_path: Path) -> None:
    found = run_limited(FULL_DISK, str(tmp_path))
    for writer, what in (("save", "the prompt"), ("finetune", "the finetune file")):
        failed = found[writer]
        assert failed is not None, writer
        assert failed["errno"] == errno.EFBIG
        assert failed["cause"] == "OSError"
        assert failed["message"].startswith(f"cannot write {what} ")
        assert (
            "the file would pass the largest size allowed (a file size limit)"
            in (failed["message"])
        )
        assert "Nothing was written" in failed["message"]
    assert found["kept"]  # the prompt saved before is as it was
    run = found["run"]
    assert run is not None
    assert run["errno"] == errno.EFBIG
    assert run["message"].endswith(
        "This row was not written; the rows before it are kept, and a rerun does the rest"
    )
    # The row that did not fit was taken back: only whole rows, up to the limit.
    assert found["run_whole"]
    assert 0 < found["run_rows"] < 30
    assert found["run_size"] <= 64 * 1024
    assert found["rerun"] == [30 - found["run_rows"], found["run_rows"], 0]
    assert found["lines"] == list(range(1, 31))
    # No temporary file, no finetune file, no errors file: only what was written whole.
    assert found["files"] == ["out.jsonl", "prompt.json"]
