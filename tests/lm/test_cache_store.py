"""The response cache's disk tier: an SQLite file of JSON text, private, closed, fork-safe."""

from __future__ import annotations

import json
import sqlite3
import stat
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

import pytest

import structio as sio
from structio.lm.cache import DATABASE_NAME, ResponseCache

SUFFIXES = ("", "-shm", "-wal")


def response(text: str) -> sio.LMResponse:
    return sio.LMResponse(completions=(sio.Completion(text, "stop"),), model="m", cost=0.5)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_row_is_json_text(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c")
    cache.set("k", response("héllo"))
    cache.close()
    with closing(sqlite3.connect(tmp_path / "c" / DATABASE_NAME)) as db:
        rows = db.execute("SELECT key, value, typeof(value) FROM responses").fetchall()
    assert [(key, kind) for key, _, kind in rows] == [("k", "text")]
    stored = json.loads(rows[0][1])
    assert stored["completions"][0]["text"] == "héllo"
    assert sio.LMResponse.from_dict(stored) == response("héllo")


def test_directory_is_0700_and_files_0600(tmp_path: Path) -> None:
    directory = tmp_path / "new" / "cache"
    cache = ResponseCache(directory)
    cache.set("k", response("hello"))
    # While a connection is open, WAL mode keeps its -wal and -shm files beside the database.
    assert cache.get("k") == response("hello")
    assert mode(directory) == 0o700
    files = sorted(path.name for path in directory.iterdir())
    assert files == [DATABASE_NAME + suffix for suffix in SUFFIXES]
    assert {path.name: mode(path) for path in directory.iterdir()} == dict.fromkeys(files, 0o600)
    cache.close()


def test_looser_files_of_an_older_run_are_tightened(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    first = ResponseCache(directory)
    first.set("k", response("hello"))
    first.close()
    database = directory / DATABASE_NAME
    database.chmod(0o644)
    again = ResponseCache(directory)
    assert again.get("k") == response("hello")
    assert mode(database) == 0o600
    assert all(mode(path) == 0o600 for path in directory.iterdir())
    again.close()


def test_a_file_that_is_not_a_database_says_where_and_what_to_do(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    directory.mkdir()
    (directory / DATABASE_NAME).write_bytes(b"this is not an SQLite database, just text" * 50)
    cache = ResponseCache(directory)
    with pytest.raises(sio.ConfigurationError) as info:
        cache.get("k")
    message = str(info.value)
    assert str(directory / DATABASE_NAME) in message
    assert "delete it" in message
    assert "cache=False" in message


def test_threads_share_one_store(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c", memory_size=1)  # nearly every get reads the disk
    errors: list[BaseException] = []

    def work(number: int) -> None:
        try:
            for step in range(50):
                key = f"{number}-{step}"
                cache.set(key, response(key))
                assert cache.get(key) == response(key)
                assert cache.get(f"{(number + 1) % 8}-0") in (
                    None,
                    response(f"{(number + 1) % 8}-0"),
                )
        except BaseException as exc:  # reported to the test below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(number,)) for number in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    reopened = ResponseCache(tmp_path / "c")
    assert all(reopened.get(f"{n}-49") == response(f"{n}-49") for n in range(8))
    cache.close()
    reopened.close()


CHILD = """
import sys, threading
from structio.lm.cache import ResponseCache
from structio.lm.types import Completion, LMResponse

cache = ResponseCache(sys.argv[1], memory_ttl=0)

def work(n):
    cache.set(f"k{n}", LMResponse(completions=(Completion(f"v{n}", "stop"),), model="m"))
    assert cache.get(f"k{n}").text == f"v{n}"

threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
for t in threads: t.start()
for t in threads: t.join()
other = ResponseCache(sys.argv[1])  # a second store, never closed by hand
assert other.get("k3").text == "v3"
del other
import gc; gc.collect()
print("done")
"""


def test_no_resource_warning_in_dev_mode(tmp_path: Path) -> None:
    # Python 3.13 warns of every SQLite connection left for the garbage collector to close;
    # -X dev shows ResourceWarning and -W error makes it fail the process.
    result = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "error", "-c", CHILD, str(tmp_path / "c")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "done\n", "")


FORK = """
import os, sys
from structio.lm.cache import ResponseCache
from structio.lm.types import Completion, LMResponse

def response(text):
    return LMResponse(completions=(Completion(text, "stop"),), model="m")

cache = ResponseCache(sys.argv[1], memory_ttl=0)
cache.set("from parent", response("parent"))  # the parent's connection is open
pid = os.fork()
if pid == 0:
    try:
        assert cache.get("from parent").text == "parent"  # the same store, in the child
        cache.set("from child", response("child"))
        cache.close()
    except BaseException as exc:
        print("child:", repr(exc), flush=True)
        os._exit(1)
    os._exit(0)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0
assert cache.get("from child").text == "child"  # the parent reopened, and sees it
print("done")
"""


def test_a_forked_child_uses_the_cache_it_inherited(tmp_path: Path) -> None:
    # A fresh interpreter forks (one thread: no warning about forking threads), in dev mode.
    result = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "error", "-c", FORK, str(tmp_path / "c")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "done\n", "")


def test_a_directory_that_cannot_be_made_says_what_to_do(tmp_path: Path) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("not a directory", encoding="utf-8")
    cache = ResponseCache(blocker / "cache")
    with pytest.raises(sio.ConfigurationError, match="could not be created") as info:
        cache.set("k", response("hello"))
    assert str(blocker / "cache" / DATABASE_NAME) in str(info.value)
    assert "STRUCTIO_CACHE_DIR" in str(info.value)


STAMPEDE = """
import os, sys, time
from structio.lm.cache import ResponseCache
from structio.lm.types import Completion, LMResponse

def child(directory, index, start):
    time.sleep(max(0.0, start - time.time()))  # all open the new file at once
    cache = ResponseCache(directory, memory_ttl=0)
    text = f"child {index}"
    cache.set(text, LMResponse(completions=(Completion(text, "stop"),), model="m"))
    assert cache.get(text).text == text
    cache.close()

for round in range(int(sys.argv[2])):
    directory, start, children = os.path.join(sys.argv[1], str(round)), time.time() + 0.2, []
    for index in range(8):
        pid = os.fork()
        if pid == 0:
            try:
                child(directory, index, start)
            except BaseException as exc:
                print(f"round {round}, child {index}:", repr(exc), flush=True)
                os._exit(1)
            os._exit(0)
        children.append(pid)
    codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]
    assert codes == [0] * 8, codes
print("done")
"""


def test_processes_opening_a_new_cache_together_all_get_in(tmp_path: Path) -> None:
    # Processes creating one cache at the same instant race for the switch to WAL mode,
    # which SQLite refuses at once ("database is locked") without waiting its busy timeout;
    # without a retry this failed in about one round in five on a two-core machine.
    result = subprocess.run(
        [sys.executable, "-c", STAMPEDE, str(tmp_path), "12"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "done\n", "")
