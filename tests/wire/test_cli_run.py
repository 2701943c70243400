"""`structio run` against the loopback server: predictions, failures kept, resumption."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from structio.cli import main
from structio.run import done_lines
from tests.wire.server import OpenAIServer, Reply, Request

SIG = "ticket -> category: str, urgency: int"


def answer(request: Request) -> Reply:
    """Answer from the ticket text; 'boom' tickets get a 400 (not retried)."""
    ticket = request.messages[-1]["content"].split("\n")[1]
    if "boom" in ticket:
        return Reply(status=400, error_message="bad ticket")
    return Reply(content=f"[[ ## category ## ]]\n{ticket}\n\n[[ ## urgency ## ]]\n{len(ticket)}")


def write_rows(path: Path, tickets: list[str]) -> None:
    path.write_text("".join(json.dumps({"ticket": t}) + "\n" for t in tickets), encoding="utf-8")


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("STRUCTIO_CACHE_DIR", str(tmp_path / "cache"))


def read(path: Path) -> dict[int, dict[str, object]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {row["line"]: row for row in rows}


@pytest.mark.usefixtures("env")
def test_run_predicts_keeps_failures_and_resumes(
    server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], transport: str
) -> None:
    server.handler = answer
    data = tmp_path / "rows.jsonl"
    write_rows(data, ["aa", "boom", "cccc", "d"])
    out = tmp_path / "preds.jsonl"
    argv = ["run", SIG, str(data), "-o", str(out), "--model", "openai/test"]
    argv += ["--api-base", server.base_url, "--concurrency", "2", "--transport", transport]

    assert main(argv) == 1  # one row failed
    rows = read(out)
    assert sorted(rows) == [1, 3, 4]
    assert rows[3] == {
        "line": 3,
        "inputs": {"ticket": "cccc"},
        "outputs": {"category": "cccc", "urgency": 4},
    }
    errors = [
        json.loads(line) for line in (tmp_path / "preds.errors.jsonl").read_text().splitlines()
    ]
    assert [e["line"] for e in errors] == [2]
    assert "BadRequestError" in errors[0]["error"]
    report = capsys.readouterr().out
    assert report.startswith("3 rows predicted, 0 already in")
    assert "line 2: BadRequestError" in report

    # The failed row is fixed in the data; a rerun does only it.
    write_rows(data, ["aa", "bb", "cccc", "d"])
    calls = len(server.requests)
    assert main(argv) == 0
    assert len(server.requests) == calls + 1
    assert sorted(read(out)) == [1, 2, 3, 4]
    assert not (tmp_path / "preds.errors.jsonl").exists()
    assert capsys.readouterr().out.startswith("1 rows predicted, 3 already in")


@pytest.mark.usefixtures("env")
def test_a_line_cut_off_by_a_crash_is_redone(server: OpenAIServer, tmp_path: Path) -> None:
    server.handler = answer
    data = tmp_path / "rows.csv"
    data.write_text("ticket\nxx\nyyy\n", encoding="utf-8")
    out = tmp_path / "preds.jsonl"
    out.write_text(
        json.dumps({"line": 2, "inputs": {"ticket": "xx"}, "outputs": {}}) + '\n{"line": 3, "inp',
        encoding="utf-8",
    )
    assert done_lines(out) == {2}
    assert out.read_text(encoding="utf-8").endswith("}\n")  # the partial line is gone
    argv = ["run", SIG, str(data), "-o", str(out), "--model", "openai/test"]
    assert main([*argv, "--api-base", server.base_url]) == 0
    assert sorted(read(out)) == [2, 3]
    assert len(server.requests) == 1


@pytest.mark.usefixtures("env")
def test_run_goes_through_the_cache(server: OpenAIServer, tmp_path: Path) -> None:
    server.handler = answer
    data = tmp_path / "rows.jsonl"
    write_rows(data, ["aa", "bb"])
    base = ["run", SIG, str(data), "--model", "openai/test", "--api-base", server.base_url]
    assert main([*base, "-o", str(tmp_path / "one.jsonl")]) == 0
    assert main([*base, "-o", str(tmp_path / "two.jsonl")]) == 0
    assert len(server.requests) == 2  # the second run was answered from the cache
    assert read(tmp_path / "one.jsonl") == read(tmp_path / "two.jsonl")


@pytest.mark.usefixtures("env")
def test_a_row_answered_with_no_choices_is_a_failure_to_retry_not_done(
    server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def empty_for_b(request: Request) -> Reply:
        ticket = request.messages[-1]["content"].split("\n")[1]
        if ticket == "b":
            return Reply(content=[])  # "choices": [] every time
        return Reply(content=f"[[ ## category ## ]]\n{ticket}\n\n[[ ## urgency ## ]]\n1")

    server.handler = empty_for_b
    data = tmp_path / "rows.jsonl"
    write_rows(data, ["a", "b"])
    out = tmp_path / "preds.jsonl"
    argv = ["run", SIG, str(data), "-o", str(out), "--model", "openai/test"]
    argv += ["--api-base", server.base_url, "--concurrency", "1"]
    assert main(argv) == 1
    assert sorted(read(out)) == [1]  # never written as {"outputs": {}}
    assert done_lines(out) == {1}  # so a rerun tries line 2 again
    (error,) = [json.loads(x) for x in (tmp_path / "preds.errors.jsonl").read_text().splitlines()]
    assert error["line"] == 2
    assert "no choices" in error["error"]
