"""Processes sharing one response cache see each other's changes within ``memory_ttl``.

Each worker is a real process with its own `ResponseCache` on one directory, driven line
by line from the test (``["get", key]``, ``["set", key, text]``, ``["clear"]``), so the
order of every read and write across processes is the test's, not the scheduler's.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from structio.lm.cache import DEFAULT_MEMORY_TTL, ResponseCache

# Generous: only there so that a stuck worker fails the test instead of hanging it.
TIMEOUT = 120.0

WORKER = """
import json
import sys

from structio.lm.cache import ResponseCache
from structio.lm.types import Completion, LMResponse

ttl = None if sys.argv[2] == "none" else float(sys.argv[2])
cache = ResponseCache(sys.argv[1], memory_ttl=ttl)
print(json.dumps("ready"), flush=True)
for line in sys.stdin:
    op, *args = json.loads(line)
    if op == "set":
        key, text = args
        cache.set(key, LMResponse(completions=(Completion(text, "stop"),), model="m"))
        reply = "ok"
    elif op == "get":
        hit = cache.get(args[0])
        reply = None if hit is None else hit.text
    else:
        cache.clear()
        reply = "ok"
    print(json.dumps(reply), flush=True)
"""


class Worker:
    """One process with its own ResponseCache on the shared directory."""

    def __init__(self, directory: Path, memory_ttl: float | None) -> None:
        ttl = "none" if memory_ttl is None else repr(memory_ttl)
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(directory), ttl],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def reply(self) -> Any:
        assert self.process.stdout is not None
        readable, _, _ = select.select([self.process.stdout], [], [], TIMEOUT)
        assert readable, "the worker did not answer in time"
        line = self.process.stdout.readline()
        assert line, self.process.communicate(timeout=TIMEOUT)[1]
        return json.loads(line)

    def ask(self, *command: str) -> Any:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        return self.reply()

    def get(self, key: str) -> str | None:
        reply = self.ask("get", key)
        assert reply is None or isinstance(reply, str)
        return reply

    def set(self, key: str, text: str) -> None:
        assert self.ask("set", key, text) == "ok"

    def clear(self) -> None:
        assert self.ask("clear") == "ok"

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate(timeout=TIMEOUT)


Start = Callable[[float | None], Worker]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    directory = tmp_path / "shared-cache"
    started: list[Worker] = []

    def new(memory_ttl: float | None) -> Worker:
        worker = Worker(directory, memory_ttl)
        started.append(worker)
        assert worker.reply() == "ready"
        return worker

    yield new
    for worker in started:
        worker.close()


def test_eight_processes_with_memory_ttl_0_never_serve_a_replaced_value(start: Start) -> None:
    workers = [start(0) for _ in range(8)]
    for round_ in range(3):
        for number, writer in enumerate(workers):
            value = f"round {round_}, written by {number}"
            writer.set("k", value)
            # Every process has the previous value in memory: none may serve it.
            assert [worker.get("k") for worker in workers] == [value] * 8
    workers[3].clear()
    assert [worker.get("k") for worker in workers] == [None] * 8


def test_a_memory_copy_is_served_for_memory_ttl_seconds_at_most(start: Start) -> None:
    writer = start(0)
    patient = start(3600)  # an hour: within this test its memory copy is always young
    prompt = start(0.3)
    writer.set("k", "first")
    assert (patient.get("k"), prompt.get("k")) == ("first", "first")

    writer.set("k", "second")
    # The rule, both ways: a young copy is served from memory (no disk read)...
    assert patient.get("k") == "first"
    # ...and once memory_ttl has passed, the disk is read again.
    time.sleep(0.4)
    assert prompt.get("k") == "second"

    writer.clear()
    time.sleep(0.4)
    assert prompt.get("k") is None  # cleared elsewhere: the old copy is dropped, a miss
    assert patient.get("k") == "first"
    # What another process writes is seen too, not just what it removes.
    writer.set("k", "third")
    time.sleep(0.4)
    assert prompt.get("k") == "third"


def test_processes_writing_different_keys_see_all_of_them(start: Start) -> None:
    workers = [start(DEFAULT_MEMORY_TTL) for _ in range(4)]
    for number, worker in enumerate(workers):
        worker.set(f"key {number}", f"value {number}")
    for worker in workers:
        assert [worker.get(f"key {n}") for n in range(4)] == [f"value {n}" for n in range(4)]


def test_the_default_bounds_staleness(tmp_path: Path) -> None:
    assert ResponseCache(tmp_path / "c").memory_ttl == DEFAULT_MEMORY_TTL
    assert 0 < DEFAULT_MEMORY_TTL <= 300
