"""What `structio run` shows while it works: the client loading, rows counted right, latency."""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from structio._util import progress as _progress
from structio.lm import _exchange, _litellm
from structio.lm import lm as lm_module
from structio.run import run_file
from tests.wire.server import OpenAIServer, Reply

SIG = "question -> answer: int"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def server(server: OpenAIServer) -> OpenAIServer:
    """The loopback server (tests/conftest.py), answering every call by default."""
    server.default = Reply(content="[[ ## answer ## ]]\n4")
    return server


def test_a_terminal_is_told_the_client_loads_and_the_bar_counts_data_rows(
    server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    screen = Terminal()
    monkeypatch.setattr(_progress.sys, "stderr", screen)
    loaded: list[str] = []
    real_load = _exchange.load

    def load(params: Any) -> None:
        loaded.append(screen.getvalue())  # what the terminal showed while it loaded
        real_load(params)

    monkeypatch.setattr(_exchange, "load", load)
    data = tmp_path / "rows.csv"
    data.write_text("question\n" + "".join(f"q{n}\n" for n in range(30)), encoding="utf-8")
    lm = sio.LM("openai/m", api_base=server.base_url, api_key="k", cache=False)
    summary = run_file(sio.Predict(SIG, lm=lm), data, tmp_path / "p.jsonl", concurrency=4)
    assert summary.done == 30
    assert loaded[0] == "structio: loading the model client...\n"
    last = screen.getvalue().rstrip("\n").split("\r")[-1]
    # The header is no row: 30 of 30, not 30 of 31.
    assert last.startswith(f"StringSignature 30/30 [{'#' * 24}] 100.0% "), last


def test_nothing_is_said_when_standard_error_is_not_a_terminal(
    server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = io.StringIO()
    monkeypatch.setattr(_progress.sys, "stderr", log)
    data = tmp_path / "rows.jsonl"
    data.write_text('{"question": "q"}\n', encoding="utf-8")
    lm = sio.LM("openai/m", api_base=server.base_url, api_key="k", cache=False)
    assert run_file(sio.Predict(SIG, lm=lm), data, tmp_path / "p.jsonl").done == 1
    assert log.getvalue() == ""


class Clock:
    """`time` with a `perf_counter` that moves only when told (and a little per reading)."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 0.001
        return self.now

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


@pytest.mark.parametrize("transport", ["direct", "litellm"])
def test_loading_the_client_is_no_part_of_the_first_calls_latency(
    server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    clock = Clock()
    for module in (lm_module, _exchange, _litellm):
        monkeypatch.setattr(module, "time", clock)
    # Loading takes 100 s on this clock: litellm's import, as slow as it gets.
    real_load, real_litellm = _exchange.load, _litellm.get_litellm

    loads: list[str] = []

    # Slow the first time only: as an import, then cached.
    def slow_load(params: Any) -> None:
        if not loads:
            clock.now += 100.0
        loads.append("http")
        real_load(params)

    def slow_litellm() -> Any:
        if not loads:
            clock.now += 100.0
        loads.append("litellm")
        return real_litellm()

    monkeypatch.setattr(_exchange, "load", slow_load)
    monkeypatch.setattr(_litellm, "get_litellm", slow_litellm)
    lm = sio.LM("openai/m", api_base=server.base_url, api_key="k", cache=False, transport=transport)
    response = lm([{"role": "user", "content": "hi"}])
    assert clock.now > 100.0  # the client was loaded during the call
    assert response.latency < 1.0
    shown = io.StringIO()
    sio.inspect_history(1, file=shown)
    assert "100." not in shown.getvalue()
    assert loads[0] == ("http" if transport == "direct" else "litellm")
