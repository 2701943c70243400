"""`structio run` stops on a systematic error, keeps what it wrote, and lists failures in order."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

import structio as sio
from structio.cli import main
from structio.run import run_file
from tests.wire.server import OpenAIServer, Reply, Request

SIG = "question -> answer: int"


def write_rows(path: Path, count: int) -> None:
    path.write_text("".join(f'{{"question": "q{n}"}}\n' for n in range(1, count + 1)), "utf-8")


def question(request: Request) -> str:
    return str(request.messages[-1]["content"].split("\n")[1])


def read_lines(path: Path) -> list[int]:
    return sorted(json.loads(line)["line"] for line in path.read_text("utf-8").splitlines())


def test_an_unknown_model_stops_the_run_which_a_rerun_finishes(
    server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answered = {"q1", "q2"}

    def unknown_model_after_two(request: Request) -> Reply:
        if question(request) in answered:
            return Reply(content="[[ ## answer ## ]]\n1")
        return Reply(
            status=404,
            error_message="The model `llama9` does not exist",
            error_code="model_not_found",
        )

    server.handler = unknown_model_after_two
    data, out = tmp_path / "rows.jsonl", tmp_path / "preds.jsonl"
    write_rows(data, 30)
    argv = ["run", SIG, str(data), "-o", str(out), "--model", "openai/llama9", "--no-cache"]
    argv += ["--api-base", server.base_url, "--api-key", "k", "--concurrency", "1"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert len(server.requests) in (
        3,
        4,
    )  # 2 answered, 1 failed (the model is every row's), 1 queued?
    assert read_lines(out) == [1, 2]  # what was written is kept
    assert captured.out.startswith("2 rows predicted, 0 already in")
    (error,) = captured.err.splitlines()
    assert error.startswith(
        "structio: error: stopped at the first failed row: its error is in the settings every "
        "row uses: BadRequestError: openai/llama9 (provider openai): "
    )
    assert "The model `llama9` does not exist" in error

    # The model is fixed (the server knows it now): the same command does the rest.
    server.handler = lambda request: Reply(content="[[ ## answer ## ]]\n1")
    assert main(argv) == 0
    assert read_lines(out) == list(range(1, 31))
    assert not out.with_name("preds.errors.jsonl").exists()
    assert capsys.readouterr().out.startswith("28 rows predicted, 2 already in")


def test_errors_of_single_rows_never_stop_the_run(server: OpenAIServer, tmp_path: Path) -> None:
    def by_row(request: Request) -> Reply:
        number = int(question(request)[1:])
        if number % 2:  # odd rows: an answer that never reads as an int
            return Reply(content="[[ ## answer ## ]]\nfour")
        return Reply(status=500, error_message="overloaded")  # even rows: a server error

    server.handler = by_row
    data = tmp_path / "rows.jsonl"
    write_rows(data, 24)
    lm = sio.LM("openai/m", api_base=server.base_url, api_key="k", cache=False, num_retries=0)
    summary = run_file(
        sio.Predict(SIG, lm=lm),
        data,
        tmp_path / "preds.jsonl",
        concurrency=1,
        progress=False,
        max_outage=0,  # server errors fail their rows, as any error (not waited out)
    )
    # Never five of one kind in a row: parse errors break every streak of server errors.
    assert summary.stopped is None
    assert [line for line, _ in sorted(summary.failed)] == list(range(1, 25))


def test_the_limit_is_a_parameter_and_none_never_stops(
    server: OpenAIServer, tmp_path: Path
) -> None:
    server.default = Reply(status=503, error_message="down")
    data = tmp_path / "rows.jsonl"
    write_rows(data, 12)
    lm = sio.LM("openai/m", api_base=server.base_url, api_key="k", cache=False, num_retries=0)
    predict = sio.Predict(SIG, lm=lm)
    summary = run_file(
        predict,
        data,
        tmp_path / "a.jsonl",
        concurrency=1,
        progress=False,
        max_consecutive_errors=2,
        max_outage=0,  # a server that is down counts as any error
    )
    assert summary.stopped is not None
    assert summary.stopped_by == "ServerError"
    assert len(summary.failed) in (2, 3)
    summary = run_file(
        predict,
        data,
        tmp_path / "b.jsonl",
        concurrency=1,
        progress=False,
        max_consecutive_errors=None,
        max_outage=0,
    )
    assert (summary.stopped, len(summary.failed)) == (None, 12)


def test_failures_are_listed_in_input_order(
    server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Rows 1 to 4 wait until row 4 has failed: they finish in the reverse order.
    released = {n: threading.Event() for n in range(1, 5)}

    def in_reverse(request: Request) -> Reply:
        number = int(question(request)[1:])
        if number < 4:
            released[number + 1].wait(timeout=30)
        reply = Reply(content=f"[[ ## answer ## ]]\nnot a number {number}")
        released[number].set()
        return reply

    server.handler = in_reverse
    data, out = tmp_path / "rows.jsonl", tmp_path / "preds.jsonl"
    write_rows(data, 4)
    argv = ["run", SIG, str(data), "-o", str(out), "--model", "openai/m", "--no-cache"]
    argv += ["--api-base", server.base_url, "--api-key", "k", "--concurrency", "4"]
    assert main(argv) == 1
    report = capsys.readouterr().out.splitlines()
    listed = [line.split(":")[0].strip() for line in report if line.startswith("  line ")]
    assert listed == ["line 1", "line 2", "line 3", "line 4"]


def test_a_configuration_error_stops_the_run_at_the_first_row(
    server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A model name without its provider: litellm cannot choose one, for any row.
    data, out = tmp_path / "rows.jsonl", tmp_path / "preds.jsonl"
    write_rows(data, 30)
    argv = ["run", SIG, str(data), "-o", str(out), "--model", "llama9", "--no-cache"]
    argv += ["--api-base", server.base_url, "--api-key", "k", "--concurrency", "1"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert server.requests == []  # nothing could be sent
    (error,) = captured.err.splitlines()
    assert error.startswith(
        "structio: error: stopped at the first failed row: its error is in the settings every "
        "row uses: ConfigurationError: "
    )
    assert "openai/llama9" in error  # the fix for an OpenAI-compatible --api-base
