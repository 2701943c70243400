"""Ctrl-C during `structio run`: a clean stop, exit 130 every time, and a rerun that finishes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from structio.cli import main
from tests.wire.server import OpenAIServer, Reply, Request

SIG = "question -> answer: int"
TIMEOUT = 60.0


def start_run(server: OpenAIServer, data: Path, out: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "structio", "run", SIG, str(data), "-o", str(out)),
            *("--model", "openai/m", "--api-base", server.base_url, "--no-cache"),
            *("--concurrency", "2"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def wait_for(condition: Callable[[], bool], process: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.01)


def written(out: Path) -> list[int]:
    if not out.exists():
        return []
    text = out.read_text(encoding="utf-8")
    return [json.loads(line)["line"] for line in text.splitlines()]  # every line whole


def slow(request: Request) -> Reply:
    return Reply(content="[[ ## answer ## ]]\n4", delay=0.2)


@pytest.mark.parametrize("after", [1, 3, 6])
def test_ctrl_c_stops_cleanly_with_130_and_a_rerun_finishes(
    server: OpenAIServer, tmp_path: Path, after: int
) -> None:
    server.handler = slow
    data, out = tmp_path / "rows.jsonl", tmp_path / "preds.jsonl"
    data.write_text("".join(f'{{"question": "q{n}"}}\n' for n in range(60)), encoding="utf-8")
    process = start_run(server, data, out)
    try:
        wait_for(lambda: len(written(out)) >= after, process, f"{after} rows written")
        process.send_signal(signal.SIGINT)
        sent_at_signal = len(server.requests)
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.splitlines()[-1] == (
        f"structio: error: interrupted; rerun the same command to do the rest ({out})"
    )
    rows = written(out)
    assert stdout.startswith(f"{len(rows)} rows predicted, 0 already in")
    # No new row is sent after the signal: at most the 4 then in flight (2 calls, 2 queued
    # that a worker may have taken), some perhaps not yet received by the server. Every
    # call sent was finished and written.
    assert len(server.requests) <= sent_at_signal + 4
    assert len(rows) == len(server.requests) < 60
    server.handler = None
    server.default = Reply(content="[[ ## answer ## ]]\n4")
    rerun = ["run", SIG, str(data), "-o", str(out), "--model", "openai/m"]
    assert main([*rerun, "--api-base", server.base_url, "--no-cache"]) == 0
    assert sorted(written(out)) == list(range(1, 61))


def test_a_second_ctrl_c_leaves_the_calls_in_flight(server: OpenAIServer, tmp_path: Path) -> None:
    def stuck_after_two(request: Request) -> Reply:
        number = int(request.messages[-1]["content"].split("\n")[1][1:])
        return Reply(content="[[ ## answer ## ]]\n4", delay=0 if number < 2 else 3 * TIMEOUT)

    server.handler = stuck_after_two
    data, out = tmp_path / "rows.jsonl", tmp_path / "preds.jsonl"
    data.write_text("".join(f'{{"question": "q{n}"}}\n' for n in range(10)), encoding="utf-8")
    process = start_run(server, data, out)
    lines: list[str] = []
    assert process.stderr is not None
    stderr = process.stderr
    reader = threading.Thread(target=lambda: lines.extend(stderr), daemon=True)
    reader.start()
    try:
        wait_for(lambda: server.in_flight == 2 and len(written(out)) == 2, process, "two stuck")
        process.send_signal(signal.SIGINT)
        wait_for(lambda: any("stopping" in line for line in lines), process, "stopping")
        process.send_signal(signal.SIGINT)
        process.wait(timeout=TIMEOUT)  # not the server's 180 s: the calls were left
        reader.join(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
    assert process.returncode == 130
    text = "".join(lines)
    assert "Traceback" not in text
    assert "structio: stopping; waiting for 2 calls in flight (Ctrl-C again to leave them)" in text
    assert text.endswith(
        f"structio: error: interrupted; rerun the same command to do the rest ({out})\n"
    )
    assert sorted(written(out)) == [1, 2]  # the rows done before; the stuck ones left
