"""`structio run` waits out a provider outage (5xx, 429) and stops at once on a mistake.

Against the loopback server (tests/conftest.py). The waits run on `_control.CLOCK`: the
tests that are about what the run does, not how long it takes, put a clock there whose
`sleep` only moves its hands; one test keeps real time, as the issue's proof (a server that
fails for 30 s).
"""

from __future__ import annotations

import io
import itertools
import json
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

import structio as sio
from structio._util import progress as _progress
from structio.cli import main
from structio.exceptions import (
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    LMConnectionError,
    LMError,
    LMTimeoutError,
    RateLimitError,
    ServerError,
)
from structio.lm import lm as lm_module
from structio.run import _control, errors_path, run_file
from structio.testing import FakeLM
from tests.wire.server import OpenAIServer, Reply, Request

SIG = "question -> answer: int"
ANSWER = Reply(content="[[ ## answer ## ]]\n4")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class FakeClock(_control.Clock):
    """A clock whose `sleep` moves its hands at once; it counts what was slept."""

    def __init__(self) -> None:
        self.time = 1000.0
        self.slept = 0.0
        self.sleeps = 0

    def now(self) -> float:
        return self.time

    def sleep(self, seconds: float) -> None:
        self.time += seconds
        self.slept += seconds
        self.sleeps += 1


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(_control, "CLOCK", fake)
    return fake


@pytest.fixture
def records(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger="structio")
    return caplog


def number(request: Request) -> int:
    """The row a request is for: ``q7`` is row 7."""
    return int(request.messages[-1]["content"].split("\n")[1][1:])


def write_rows(path: Path, count: int) -> Path:
    path.write_text("".join(f'{{"question": "q{n}"}}\n' for n in range(1, count + 1)), "utf-8")
    return path


def fails_first(count: int, failure: Reply) -> Callable[[Request], Reply]:
    """A server that answers its first ``count`` requests with ``failure``, then answers."""
    sent = itertools.count(1)
    return lambda request: failure if next(sent) <= count else ANSWER


def written(out: Path) -> list[int]:
    """The data line of every row of the output, as often as each was written."""
    if not out.exists():
        return []
    return sorted(json.loads(line)["line"] for line in out.read_text("utf-8").splitlines())


def lm(server: OpenAIServer, **options: Any) -> sio.LM:
    # Few and short retries of the LM's own: the outage is the run's to wait out.
    options = {"num_retries": 0, **options}
    return sio.LM("openai/m", api_base=server.base_url, api_key="k", cache=False, **options)


def messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "structio"]


def waits(caplog: pytest.LogCaptureFixture) -> list[float]:
    """The seconds of each wait of the run, as the log says them."""
    found = [r for r in caplog.records if r.getMessage().startswith("structio run: wait")]
    return [float(cast("tuple[float, ...]", r.args)[0]) for r in found]


def pauses(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [m for m in messages(caplog) if "the run pauses" in m]


def test_a_server_failing_with_500s_for_30_seconds_loses_no_row(
    server: OpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    records: pytest.LogCaptureFixture,
) -> None:
    # The proof, in real time: HTTP 500 for 30 s from the first request, then answers.
    screen = Terminal()
    monkeypatch.setattr(_progress.sys, "stderr", screen)
    lock = threading.Lock()
    began: list[float] = []
    refused: set[int] = set()

    def down_for_30_seconds(request: Request) -> Reply:
        with lock:
            began.append(began[0] if began else time.monotonic())
            if time.monotonic() - began[0] < 30.0:
                refused.add(number(request))
                return Reply(status=500, error_message="upstream overloaded")
        return ANSWER

    server.handler = down_for_30_seconds
    data, out = write_rows(tmp_path / "rows.jsonl", 50), tmp_path / "preds.jsonl"
    predict = sio.Predict(SIG, lm=lm(server, num_retries=1, backoff=0.05))
    summary = run_file(predict, data, out, concurrency=8)
    assert (summary.done, summary.failed, summary.stopped) == (50, [], None)
    assert written(out) == list(range(1, 51))  # every row, each once
    assert not errors_path(out).exists()
    # Paused: no row beyond those sent before the first failure (two per worker at most)
    # reached the server while it was down.
    assert refused
    assert max(refused) <= 16
    shown = screen.getvalue()
    assert "provider unavailable (HTTP 500): waiting " in shown
    assert "; outage 0:0" in shown
    assert "provider unavailable (HTTP 500): sending a row again; outage 0:" in shown
    assert shown.rstrip("\n").split("\r")[-1].startswith("StringSignature 50/50 ")
    assert len(pauses(records)) == 1
    assert any("the provider answers again after 0:" in m for m in messages(records))
    slept = waits(records)
    assert len(slept) >= 3
    assert all(later > earlier for earlier, later in itertools.pairwise(slept))


def test_waits_grow_and_every_row_is_sent_again(
    server: OpenAIServer, tmp_path: Path, clock: FakeClock, records: pytest.LogCaptureFixture
) -> None:
    server.handler = fails_first(12, Reply(status=503, error_message="down"))
    data, out = write_rows(tmp_path / "rows.jsonl", 20), tmp_path / "preds.jsonl"
    summary = run_file(sio.Predict(SIG, lm=lm(server)), data, out, concurrency=2, progress=False)
    assert (summary.done, summary.failed, summary.stopped) == (20, [], None)
    assert written(out) == list(range(1, 21))
    slept = waits(records)
    # Doubling from 2 s (a quarter at most added to spread runs out), up to a minute.
    assert len(slept) >= 7
    for n, wait in enumerate(slept):
        assert min(2.0 * 2**n, 60.0) <= wait <= min(2.5 * 2**n, 60.0)
    assert clock.slept == pytest.approx(sum(slept))
    assert len(pauses(records)) >= 1


def test_an_outage_longer_than_the_budget_stops_the_run_with_what_to_do(
    server: OpenAIServer,
    tmp_path: Path,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    records: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(lm_module.LM, "_delay", lambda self, error, attempt: 0.0)
    server.default = Reply(status=502, error_message="bad gateway")
    data, out = write_rows(tmp_path / "rows.jsonl", 30), tmp_path / "preds.jsonl"
    argv = ["run", SIG, str(data), "-o", str(out), "--model", "openai/m", "--no-cache"]
    argv += ["--api-base", server.base_url, "--api-key", "k", "--concurrency", "2"]
    assert main([*argv, "--max-outage", "45"]) == 2
    captured = capsys.readouterr()
    error = captured.err.splitlines()[-1]
    assert error.startswith("structio: error: stopped: the provider has been unavailable for 0:4")
    assert "longer than the 0:45 a run waits (--max-outage, max_outage=): ServerError: " in error
    assert "bad gateway" in error
    assert error.endswith(
        "rerun the same command to continue (the rows done are kept, the rest are sent)"
    )
    assert 45 <= clock.slept <= 46
    assert written(out) == []
    # The rows that waited are in the errors file; those never sent are not. They are the
    # first rows: those in flight when the outage began (4 at most: 2 calls, 2 queued),
    # and at most one new row per wait, as a probe once every waiting row had failed one.
    failed = [json.loads(line)["line"] for line in errors_path(out).read_text().splitlines()]
    assert failed == list(range(1, len(failed) + 1))
    assert len(failed) <= 4 + len(waits(records))
    assert captured.out.startswith(f"0 rows predicted, 0 already in {out}, {len(failed)} failed")
    # The provider is back: the same command does every row.
    server.default = ANSWER
    assert main([*argv, "--max-outage", "45"]) == 0
    assert written(out) == list(range(1, 31))
    assert not errors_path(out).exists()


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (401, "Missing bearer token", "AuthenticationError"),
        (404, "The model `m` does not exist", "BadRequestError"),
    ],
)
def test_a_refused_key_or_an_unknown_model_stops_at_the_first_row_without_a_pause(
    server: OpenAIServer,
    tmp_path: Path,
    clock: FakeClock,
    records: pytest.LogCaptureFixture,
    status: int,
    message: str,
    kind: str,
) -> None:
    server.default = Reply(status=status, error_message=message)
    data, out = write_rows(tmp_path / "rows.jsonl", 40), tmp_path / "preds.jsonl"
    predict = sio.Predict(SIG, lm=lm(server, num_retries=3))
    summary = run_file(predict, data, out, concurrency=1, progress=False)
    assert summary.stopped is not None
    # The key and the model are every row's: the first row's error stops the run.
    assert summary.stopped.startswith("stopped at the first failed row")
    assert summary.stopped_by == kind
    assert len(server.requests) in (1, 2)  # never retried, never waited out
    assert (clock.sleeps, pauses(records)) == (0, [])


def test_a_400_may_be_a_rows_own_and_stops_only_five_rows_in_a_row(
    server: OpenAIServer, tmp_path: Path, clock: FakeClock, records: pytest.LogCaptureFixture
) -> None:
    server.default = Reply(status=400, error_message="the content filter refused this")
    data, out = write_rows(tmp_path / "rows.jsonl", 40), tmp_path / "preds.jsonl"
    predict = sio.Predict(SIG, lm=lm(server, num_retries=3))
    summary = run_file(predict, data, out, concurrency=1, progress=False)
    assert summary.stopped is not None
    assert summary.stopped.startswith("stopped after 5 rows in a row failed with the same error")
    assert len(server.requests) in (5, 6)
    assert (clock.sleeps, pauses(records)) == (0, [])


def test_a_configuration_error_stops_at_the_first_row_without_a_pause(
    tmp_path: Path, clock: FakeClock, records: pytest.LogCaptureFixture
) -> None:
    def unusable(messages: object) -> str:
        raise ConfigurationError("the model names no provider")

    data, out = write_rows(tmp_path / "rows.jsonl", 10), tmp_path / "preds.jsonl"
    fake = FakeLM(unusable)
    summary = run_file(sio.Predict(SIG, lm=fake), data, out, concurrency=1, progress=False)
    assert summary.stopped_by == "ConfigurationError"
    assert summary.stopped is not None
    assert summary.stopped.startswith("stopped at the first failed row")
    # The first row's error stops the run (the one queued behind it may have failed too).
    assert [line for line, _ in summary.failed] in ([1], [1, 2])
    assert fake.call_count == len(summary.failed)
    assert (clock.sleeps, pauses(records)) == (0, [])


def test_429s_pause_the_run_for_as_long_as_retry_after_asks(
    server: OpenAIServer, tmp_path: Path, clock: FakeClock, records: pytest.LogCaptureFixture
) -> None:
    slow_down = Reply(status=429, error_message="slow down", headers={"Retry-After": "20"})
    server.handler = fails_first(3, slow_down)
    data, out = write_rows(tmp_path / "rows.jsonl", 12), tmp_path / "preds.jsonl"
    summary = run_file(sio.Predict(SIG, lm=lm(server)), data, out, concurrency=1, progress=False)
    assert (summary.done, summary.failed, summary.stopped) == (12, [], None)
    assert written(out) == list(range(1, 13))
    (pause,) = pauses(records)
    assert "RateLimitError" in pause
    slept = waits(records)
    assert slept
    assert all(wait == 20.0 for wait in slept)  # not 2 s: the server said 20


def test_ctrl_c_during_a_pause_stops_at_once(
    server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class InterruptedClock(FakeClock):
        def sleep(self, seconds: float) -> None:
            super().sleep(seconds)
            if self.sleeps == 1:
                sent.append(len(server.requests))
                os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C

    sent: list[int] = []
    clock = InterruptedClock()
    monkeypatch.setattr(_control, "CLOCK", clock)
    server.default = Reply(status=500, error_message="down")
    data, out = write_rows(tmp_path / "rows.jsonl", 20), tmp_path / "preds.jsonl"
    summary = run_file(sio.Predict(SIG, lm=lm(server)), data, out, concurrency=2, progress=False)
    assert summary.interrupted
    assert clock.sleeps == 1  # the wait ended with the signal
    assert len(server.requests) == sent[0]  # and nothing was sent after it
    assert (written(out), summary.failed) == ([], [])  # the waiting rows: for the next run


def test_max_outage_0_fails_the_rows_as_before(
    server: OpenAIServer, tmp_path: Path, clock: FakeClock, records: pytest.LogCaptureFixture
) -> None:
    server.default = Reply(status=500, error_message="down")
    data, out = write_rows(tmp_path / "rows.jsonl", 20), tmp_path / "preds.jsonl"
    predict = sio.Predict(SIG, lm=lm(server))
    summary = run_file(predict, data, out, concurrency=1, progress=False, max_outage=0)
    assert summary.stopped_by == "ServerError"
    assert summary.stopped is not None
    assert summary.stopped.startswith("stopped after 5 rows")
    assert (clock.sleeps, pauses(records)) == (0, [])
    with pytest.raises(ConfigurationError, match="max_outage must be 0 seconds or more"):
        run_file(predict, data, out, max_outage=-1)


@pytest.mark.parametrize(
    ("error", "waited"),
    [
        (ServerError("x", status_code=500), True),
        (ServerError("no choices"), True),
        (RateLimitError("x", status_code=429), True),
        (LMTimeoutError("x"), True),
        (LMConnectionError("x"), True),
        (LMError("x", status_code=503), True),
        (LMError("x", status_code=429), True),
        (LMError("x", status_code=418), False),
        (LMError("x"), False),
        (AuthenticationError("x", status_code=401), False),
        (BadRequestError("x", status_code=404), False),
        (BadRequestError("x", status_code=500), False),
        (ConfigurationError("x"), False),
        (ValueError("x"), False),
        (RuntimeError("x"), False),
    ],
)
def test_which_errors_are_an_outage(error: BaseException, waited: bool) -> None:
    assert _control.transient(error) is waited


def test_the_progress_status_is_drawn_after_the_counts_and_cleared() -> None:
    screen = Terminal()
    bar = _progress.Progress(10, label="S", stream=screen)
    bar.advance()
    status = "provider unavailable (HTTP 500): waiting 2 s; outage 0:00 of 15:00"
    bar.status(status)
    line = bar.line()
    assert line.startswith("S 1/10 ")
    assert line.endswith(status)
    bar.status(None)
    assert bar.line().startswith("S 1/10 ")
    assert "provider unavailable" not in bar.line()
    bar.close()


def test_an_endless_budget_says_so(
    server: OpenAIServer, tmp_path: Path, clock: FakeClock, records: pytest.LogCaptureFixture
) -> None:
    server.handler = fails_first(4, Reply(status=500, error_message="down"))
    data, out = write_rows(tmp_path / "rows.jsonl", 6), tmp_path / "preds.jsonl"
    predict = sio.Predict(SIG, lm=lm(server))
    summary = run_file(predict, data, out, concurrency=1, progress=False, max_outage=float("inf"))
    assert (summary.done, summary.failed) == (6, [])
    (pause,) = pauses(records)
    assert "waits for it, no limit;" in pause
    assert any(m.endswith("(outage 0:00, no limit)") for m in messages(records))


def test_a_row_the_server_fails_alone_is_a_failed_row_and_holds_no_one_up(
    server: OpenAIServer, tmp_path: Path, clock: FakeClock, records: pytest.LogCaptureFixture
) -> None:
    def row_3_crashes_the_server(request: Request) -> Reply:
        return Reply(status=500, error_message="worker died") if number(request) == 3 else ANSWER

    server.handler = row_3_crashes_the_server
    data, out = write_rows(tmp_path / "rows.jsonl", 12), tmp_path / "preds.jsonl"
    summary = run_file(sio.Predict(SIG, lm=lm(server)), data, out, concurrency=1, progress=False)
    assert summary.stopped is None
    assert [line for line, _ in summary.failed] == [3]
    assert "worker died" in summary.failed[0][1]
    assert written(out) == [n for n in range(1, 13) if n != 3]
    # It failed in three outages: the first two paused the run until another row's answer
    # ended them, the third is its own failure (no pause).
    assert len(pauses(records)) == 2
    assert clock.slept < 60
