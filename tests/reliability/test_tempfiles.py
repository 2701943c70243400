"""No temporary file is left behind: SIGTERM removes it, the next write sweeps what kill -9 left.

Each writer runs in a real process whose ``write`` callback blocks on its standard input
after telling the test it is ready, so a signal always lands in the middle of a write.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from structio._util import files
from structio._util.files import STALE_TEMPORARY_AGE, atomic_write, remove_stale_temporaries

# Generous: only there so that a broken build fails instead of hanging.
TIMEOUT = 120.0

ATOMIC_WRITER = """
import sys
from pathlib import Path
from structio._util.files import atomic_write

def write(handle):
    handle.write("partial\\n" * 10_000)
    handle.flush()
    print("ready", flush=True)
    sys.stdin.readline()  # blocks until the test says go (or kills us)
    handle.write("finished\\n")

atomic_write(Path(sys.argv[1]), write)
print("done", flush=True)
"""

FINETUNE_WRITER = """
import sys
from structio.finetune import write_jsonl

def examples():
    for number in range(500):
        yield {"question": f"q{number}", "answer": f"a{number}"}
    print("ready", flush=True)
    sys.stdin.readline()
    yield {"question": "last", "answer": "one"}

write_jsonl("question -> answer", examples(), sys.argv[1])
print("done", flush=True)
"""

# A program with a SIGTERM handler of its own: it raises (the usual "exit cleanly" handler)
# or only takes note and lets the work finish (a graceful shutdown).
OWN_HANDLER_WRITER = """
import signal
import sys
from pathlib import Path
from structio._util.files import atomic_write

noted = []
if sys.argv[2] == "raise":
    def handler(signum, frame):
        raise SystemExit(3)
else:
    def handler(signum, frame):
        noted.append(signum)
signal.signal(signal.SIGTERM, handler)

def write(handle):
    handle.write("partial\\n")
    handle.flush()
    print("ready", flush=True)
    sys.stdin.readline()
    handle.write("finished\\n")

atomic_write(Path(sys.argv[1]), write)
assert signal.getsignal(signal.SIGTERM) is handler
print("done", noted, flush=True)
"""


def ours(target: Path) -> list[Path]:
    """The temporary files beside ``target`` with exactly the name atomic_write gives."""
    pattern = re.compile(re.escape(f".{target.name}.") + r"[a-z0-9_]{8}\.tmp")
    return sorted(p for p in target.parent.iterdir() if pattern.fullmatch(p.name))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "out"
    path.mkdir()
    return path


class Writer:
    """A writer process, blocked in the middle of its write once `ready` returns."""

    def __init__(self, script: str, *args: str) -> None:
        # The tests are about a process whose signals have their default handlers; one
        # started under nohup (or a CI runner that ignores SIGHUP) inherits SIG_IGN, and a
        # signal ignored is left ignored by structio, rightly.
        defaults = (
            "import signal\n"
            "for s in (signal.SIGTERM, signal.SIGHUP):\n"
            "    signal.signal(s, signal.SIG_DFL)\n"
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", defaults + script, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def line(self) -> str:
        assert self.process.stdout is not None
        readable, _, _ = select.select([self.process.stdout], [], [], TIMEOUT)
        assert readable, "the writer printed nothing in time"
        return self.process.stdout.readline().strip()

    def ready(self) -> None:
        line = self.line()
        assert line == "ready", self.finish()

    def go(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def kill(self, signum: int) -> int:
        self.process.send_signal(signum)
        return self.process.wait(TIMEOUT)

    def finish(self) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=TIMEOUT)
        return self.process.returncode, out, err

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate(timeout=TIMEOUT)


@pytest.fixture
def writers() -> Iterator[list[Writer]]:
    started: list[Writer] = []
    yield started
    for writer in started:
        writer.close()


def start(writers: list[Writer], script: str, *args: str) -> Writer:
    writer = Writer(script, *args)
    writers.append(writer)
    writer.ready()
    return writer


def age(path: Path, seconds: float) -> None:
    """Make ``path`` look last written ``seconds`` ago."""
    then = time.time() - seconds
    os.utime(path, (then, then), follow_symlinks=False)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_terminating_signal_removes_the_temporary_file_and_still_ends_the_process(
    folder: Path, writers: list[Writer], signum: signal.Signals
) -> None:
    target = folder / "data.txt"
    target.write_text("old\n", encoding="utf-8")
    writer = start(writers, ATOMIC_WRITER, str(target))
    [temporary] = ours(target)
    assert temporary.stat().st_size >= len("partial\n") * 10_000
    # The process dies of the signal, as it would have without the handler.
    assert writer.kill(signum) == -signum
    assert sorted(p.name for p in folder.iterdir()) == ["data.txt"]
    assert target.read_text(encoding="utf-8") == "old\n"


def test_sigterm_during_write_jsonl_leaves_nothing(folder: Path, writers: list[Writer]) -> None:
    target = folder / "train.jsonl"
    writer = start(writers, FINETUNE_WRITER, str(target))
    assert len(ours(target)) == 1
    assert writer.kill(signal.SIGTERM) == -signal.SIGTERM
    assert list(folder.iterdir()) == []


def test_a_write_that_is_let_finish_replaces_the_target(
    folder: Path, writers: list[Writer]
) -> None:
    target = folder / "data.txt"
    writer = start(writers, ATOMIC_WRITER, str(target))
    writer.go()
    assert writer.finish()[:2] == (0, "done\n")
    assert target.read_text(encoding="utf-8").endswith("partial\nfinished\n")
    assert ours(target) == []


def test_a_handler_that_raises_is_the_programs_and_the_file_is_still_removed(
    folder: Path, writers: list[Writer]
) -> None:
    target = folder / "data.txt"
    writer = start(writers, OWN_HANDLER_WRITER, str(target), "raise")
    assert writer.kill(signal.SIGTERM) == 3
    assert list(folder.iterdir()) == []


def test_a_handler_that_lets_the_work_finish_is_left_to_decide(
    folder: Path, writers: list[Writer]
) -> None:
    target = folder / "data.txt"
    writer = start(writers, OWN_HANDLER_WRITER, str(target), "note")
    writer.process.send_signal(signal.SIGTERM)
    writer.go()
    code, out, err = writer.finish()
    assert (code, out) == (0, "done [15]\n"), err
    assert target.read_text(encoding="utf-8") == "partial\nfinished\n"
    assert ours(target) == []


def test_after_kill_9_the_next_write_removes_only_our_old_leftover(
    folder: Path, writers: list[Writer]
) -> None:
    target = folder / "data.txt"
    target.write_text("old\n", encoding="utf-8")
    writer = start(writers, ATOMIC_WRITER, str(target))
    assert writer.kill(signal.SIGKILL) == -signal.SIGKILL
    [leftover] = ours(target)  # nothing can clean up after kill -9

    # Files that must survive every sweep, all made to look two hours old.
    unrelated = {
        "data.txt.bak": "a backup",
        ".data.txt.abcdefgh.tmp.keep": "not our suffix",
        ".data.txt.abc.tmp": "random part too short",
        ".data.txt.ABCDEFGH.tmp": "not mkstemp's alphabet",
        ".data.txt.abcdefghi.tmp": "random part too long",
        ".other.txt.abcdefgh.tmp": "another target's",
        ".data.txt.x.abcdefgh.tmp": "the temporary file of target data.txt.x",
        "data.txt.abcdefgh.tmp": "no leading dot",
    }
    for name, text in unrelated.items():
        (folder / name).write_text(text, encoding="utf-8")
        age(folder / name, 2 * STALE_TEMPORARY_AGE)
    directory = folder / ".data.txt.dirdirdi.tmp"
    directory.mkdir()
    age(directory, 2 * STALE_TEMPORARY_AGE)
    kept_target = folder / "kept.txt"
    kept_target.write_text("kept", encoding="utf-8")
    link = folder / ".data.txt.linklink.tmp"
    link.symlink_to(kept_target)
    age(link, 2 * STALE_TEMPORARY_AGE)

    # Just killed: as young as a live writer's file, so the next write keeps it.
    atomic_write(target, lambda handle: handle.write("second\n"))
    assert leftover.exists()

    # Another writer's file, fresh (a writer between two flushes, say): kept too.
    fresh = folder / ".data.txt.fresh123.tmp"
    fresh.write_text("another writer", encoding="utf-8")
    age(leftover, STALE_TEMPORARY_AGE + 60)
    atomic_write(target, lambda handle: handle.write("third\n"))
    assert not leftover.exists()
    assert fresh.read_text(encoding="utf-8") == "another writer"
    for name, text in unrelated.items():
        assert (folder / name).read_text(encoding="utf-8") == text
    assert directory.is_dir()
    assert link.is_symlink()
    assert kept_target.read_text(encoding="utf-8") == "kept"
    assert target.read_text(encoding="utf-8") == "third\n"
    assert ours(target) == sorted([fresh, directory, link])


def test_a_live_writers_file_is_kept_however_old_it_looks(
    folder: Path, writers: list[Writer]
) -> None:
    target = folder / "data.txt"
    writer = start(writers, ATOMIC_WRITER, str(target))
    [live] = ours(target)
    age(live, 10 * STALE_TEMPORARY_AGE)  # stalled for ten hours, but its lock is held
    assert remove_stale_temporaries(target) == []
    atomic_write(target, lambda handle: handle.write("meanwhile\n"))
    assert live.exists()
    writer.go()
    assert writer.finish()[:2] == (0, "done\n")
    assert target.read_text(encoding="utf-8").endswith("finished\n")
    assert ours(target) == []


def test_the_sweep_reports_what_it_removed_and_honours_its_age(folder: Path) -> None:
    target = folder / "data.txt"
    old = folder / ".data.txt.oldoldol.tmp"
    old.write_text("", encoding="utf-8")
    age(old, 120)
    assert remove_stale_temporaries(target) == []
    assert remove_stale_temporaries(target, older_than=60) == [old]
    assert not old.exists()
    # A time in the future (a skewed network clock) is not old.
    future = folder / ".data.txt.futurefu.tmp"
    future.write_text("", encoding="utf-8")
    age(future, -10 * STALE_TEMPORARY_AGE)
    assert remove_stale_temporaries(target, older_than=0) == []


@pytest.fixture
def default_sigterm() -> Iterator[None]:
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGTERM, previous)


@pytest.mark.usefixtures("default_sigterm")
def test_the_handler_is_there_only_during_a_write(folder: Path) -> None:
    during: list[object] = []

    def write(handle: IO[str]) -> None:
        during.append(signal.getsignal(signal.SIGTERM))
        handle.write("x")

    atomic_write(folder / "a.txt", write)
    assert during == [files._on_termination]
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    with pytest.raises(KeyboardInterrupt):
        atomic_write(folder / "b.txt", lambda handle: (_ for _ in ()).throw(KeyboardInterrupt))
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    assert sorted(p.name for p in folder.iterdir()) == ["a.txt"]


@pytest.mark.usefixtures("default_sigterm")
def test_writes_from_other_threads_work_and_leave_the_handlers_alone(folder: Path) -> None:
    seen: list[object] = []
    errors: list[BaseException] = []

    def write(handle: IO[str]) -> None:
        seen.append(signal.getsignal(signal.SIGTERM))
        handle.write("from a thread\n")

    def worker(number: int) -> None:
        try:
            atomic_write(folder / f"t{number}.txt", write)
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert errors == []
    assert seen == [signal.SIG_DFL] * 4
    assert sorted(p.name for p in folder.iterdir()) == [f"t{n}.txt" for n in range(4)]
