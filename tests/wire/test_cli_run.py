"""`structio run` against the loopback server: predictions, failures kept, resumption."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from structio.cli import main
from structio.run import done_lines
from structio.signatures.signature import make_signature
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
        "model": "openai/test",
        "adapter": "ChatAdapter",
        # What structio eval reads: tokens and requests (no price known, no confidence).
        "_usage": {"prompt_tokens": 11, "completion_tokens": 3},
        "_requests": 1,
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
    assert capsys.readouterr().out.startswith("1 row predicted, 3 already in")


@pytest.mark.usefixtures("env")
def test_a_line_cut_off_by_a_crash_is_redone(server: OpenAIServer, tmp_path: Path) -> None:
    server.handler = answer
    data = tmp_path / "rows.csv"
    data.write_text("ticket\nxx\nyyy\n", encoding="utf-8")
    out = tmp_path / "preds.jsonl"
    # A row written before rows recorded their model and adapter: still continued.
    row = {"line": 2, "inputs": {"ticket": "xx"}, "outputs": {"category": "xx", "urgency": 2}}
    out.write_text(json.dumps(row) + '\n{"line": 3, "inp', encoding="utf-8")
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
    one, two = read(tmp_path / "one.jsonl"), read(tmp_path / "two.jsonl")

    def predictions(rows: dict[int, dict[str, object]]) -> dict[int, dict[str, object]]:
        return {
            n: {k: v for k, v in row.items() if not k.startswith("_")} for n, row in rows.items()
        }

    assert predictions(one) == predictions(two)
    # A cache hit bills nothing: what eval counts of cost says so.
    assert two[1]["_usage"] == {"prompt_tokens": 0, "completion_tokens": 0}
    assert two[1]["_cost"] == 0.0


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


# -- what a rerun continues, and what it refuses ---------------------------------------------


def run_argv(data: Path, out: Path, server: OpenAIServer, *extra: str, sig: str = SIG) -> list[str]:
    argv = ["run", sig, str(data), "-o", str(out), "--model", "openai/test"]
    return [*argv, "--api-base", server.base_url, *extra]


def refused(
    argv: list[str], capsys: pytest.CaptureFixture[str], server: OpenAIServer, out: Path
) -> str:
    """Run ``argv``, which must be refused before any request, ``out`` left as it was."""
    before, calls = out.read_bytes(), len(server.requests)
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("structio: error: ")
    assert out.read_bytes() == before
    assert len(server.requests) == calls
    return line


@pytest.mark.usefixtures("env")
def test_a_rerun_refuses_the_output_of_another_signature_model_adapter_or_data(
    server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.handler = answer
    data, out = tmp_path / "five.jsonl", tmp_path / "p.jsonl"
    write_rows(data, ["a", "bb", "ccc", "dddd", "eeeee"])
    assert main(run_argv(data, out, server)) == 0
    capsys.readouterr()
    name = repr(str(out))

    line = refused(run_argv(data, out, server, sig="ticket -> summary"), capsys, server, out)
    assert (
        f"{name} line 1 is not this run's: it holds predictions of the outputs category, " in line
    )
    assert "not of StringSignature's (summary)" in line
    assert line.endswith(f"write to another file (-o), or delete {name} to start over")

    argv = run_argv(data, out, server)
    line = refused([*argv[:5], "--model", "openai/other", *argv[7:]], capsys, server, out)
    assert "predicted by the model 'openai/test', not 'openai/other'" in line
    line = refused([*argv, "--adapter", "json"], capsys, server, out)
    assert "predicted through ChatAdapter, not JSONAdapter" in line

    # A data row edited since it was predicted: its prediction no longer answers it.
    write_rows(data, ["a", "bb", "CHANGED", "dddd", "eeeee"])
    line = refused(argv, capsys, server, out)
    written = [json.loads(x)["line"] for x in out.read_text(encoding="utf-8").splitlines()]
    at = written.index(3) + 1  # rows are in the order they finished
    assert f"{name} line {at} answers line 3 of {str(data)!r} as it was, but that row has " in line
    assert line.endswith("or delete that line of it to predict the row again")
    # A row no longer in the data at all.
    write_rows(data, ["a", "bb", "ccc", "dddd"])
    line = refused(argv, capsys, server, out)
    assert f"answers line 5 of {str(data)!r}, which is no longer there" in line

    # The honest rerun (the same command, the same data) is continued.
    write_rows(data, ["a", "bb", "ccc", "dddd", "eeeee"])
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("0 rows predicted, 5 already in")


@pytest.mark.usefixtures("env")
def test_rows_written_out_of_order_are_continued_by_their_line(
    server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.handler = answer
    data, out = tmp_path / "rows.jsonl", tmp_path / "p.jsonl"
    write_rows(data, ["aa", "bb", "cc", "dd"])
    rows = [
        {"line": n, "inputs": {"ticket": t}, "outputs": {"category": t, "urgency": 2}}
        for n, t in ((4, "dd"), (1, "aa"))  # finished in this order
    ]
    out.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert main(run_argv(data, out, server)) == 0
    assert capsys.readouterr().out.startswith("2 rows predicted, 2 already in")
    assert len(server.requests) == 2
    assert sorted(read(out)) == [1, 2, 3, 4]


@pytest.mark.parametrize("kind", ["finetune", "text", "csv", "data"])
@pytest.mark.usefixtures("env")
def test_an_output_that_is_not_a_runs_is_refused_and_left_as_it_was(
    server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    server.handler = answer
    data = tmp_path / "rows.jsonl"
    write_rows(data, ["aa", "bb"])
    out = tmp_path / f"{kind}.out"
    if kind == "finetune":  # a finetune file: JSON lines, but not predictions
        labelled = tmp_path / "labelled.jsonl"
        labelled.write_text('{"ticket": "aa", "category": "x", "urgency": 1}\n', "utf-8")
        assert main(["finetune", SIG, str(labelled), "-o", str(out)]) == 0
        capsys.readouterr()
        expected = "line 1: it is not a row structio run writes"
    elif kind == "text":  # one line, no newline: never taken for a row cut off by a crash
        out.write_text("notes to keep", encoding="utf-8")
        expected = "line 1: it is not a row structio run writes"
    elif kind == "csv":
        out.write_text("ticket\naa\n", encoding="utf-8")
        expected = "line 1: it is not valid JSON"
    else:  # another run's data file, given as the output of this one
        write_rows(out, ["cc"])
        expected = "line 1: it is not a row structio run writes"
    line = refused(run_argv(data, out, server), capsys, server, out)
    assert f"{str(out)!r} {expected}" in line
    assert line.endswith(
        "so the file is not the output of a structio run to continue; write the predictions "
        "to another file (-o)"
    )


@pytest.mark.usefixtures("env")
def test_the_data_file_as_the_output_is_refused(
    server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "rows.jsonl"
    write_rows(data, ["aa"])
    link = tmp_path / "link.jsonl"
    link.symlink_to(data)
    for out in (data, link):
        line = refused(run_argv(data, out, server), capsys, server, data)
        assert line == (
            f"structio: error: the output {str(out)!r} is the data file (DATA {str(data)!r}): "
            "writing it would destroy the input; give another -o"
        )


# -- every adapter ----------------------------------------------------------------------------

VALUES = {"category": "billing", "urgency": 3}


@pytest.mark.parametrize("name", ["json", "xml", "compact", "tool"])
@pytest.mark.usefixtures("env")
def test_run_with_each_adapter(
    server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    from structio.cli.parser import ADAPTERS

    adapter = ADAPTERS[name]()
    sig = make_signature(SIG)
    if name == "tool":
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "final_answer", "arguments": json.dumps(VALUES)},
        }
        reply = Reply(content=None, finish_reason="tool_calls", tool_calls=[call])
    else:
        reply = Reply(content=adapter.format_assistant_message_content(sig, VALUES))
    server.handler = lambda request: reply
    data, out = tmp_path / "rows.jsonl", tmp_path / "p.jsonl"
    write_rows(data, ["aa", "bb"])
    assert main(run_argv(data, out, server, "--adapter", name, "--concurrency", "1")) == 0
    rows = read(out)
    assert [rows[n]["outputs"] for n in (1, 2)] == [VALUES, VALUES]
    assert {rows[n]["adapter"] for n in (1, 2)} == {type(adapter).__name__}
    sent = server.requests[0].body
    assert sent["messages"] == adapter.format(sig, [], {"ticket": "aa"})
    assert ("tools" in sent) == (name == "tool")


@pytest.mark.usefixtures("env")
def test_run_with_confidence_writes_what_eval_calibrates(
    server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.wire.test_confidence import chat_tokens, text_of

    # Every answer says "bug" (at 0.6, "billing" 0.2); the labels say bug, bug, billing.
    tokens = chat_tokens(0.6, 0.2, (0.5, 0.5))
    server.handler = lambda request: Reply(content=text_of(tokens), logprobs=[tokens])
    sig = "ticket -> category: Literal['bug', 'billing'], summary"
    data = tmp_path / "rows.jsonl"
    rows = [
        {"ticket": "a", "category": "bug"},
        {"ticket": "b", "category": "bug"},
        {"ticket": "c", "category": "billing"},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "preds.jsonl"
    argv = ["run", sig, str(data), "-o", str(out), "--model", "openai/test"]
    argv += ["--api-base", server.base_url, "--transport", "direct", "--confidence"]
    assert main(argv) == 0
    written = read(out)
    assert written[1]["_confidence"] == {"category": pytest.approx(0.75), "summary": 0.5}
    assert all(server.requests[i].body["logprobs"] is True for i in range(3))
    capsys.readouterr()
    assert main(["eval", str(data), str(out), "--sig", sig, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    calibration = report["calibration"]["category"]
    # All three rows said 0.75 and two were right: one bin, 0.75 against 2/3.
    assert calibration["ece"] == pytest.approx(0.75 - 2 / 3)
    (full,) = [b for b in calibration["bins"] if b["rows"]]
    assert (full["rows"], full["confidence"]) == (3, pytest.approx(0.75))
    assert report["rows"]["scored"] == 3


@pytest.mark.usefixtures("env")
def test_run_server_says_what_the_local_server_returns(
    server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Ollama returns no log probabilities: --server ollama makes --confidence refuse at once.
    server.handler = answer
    data = tmp_path / "rows.jsonl"
    write_rows(data, ["aa"])
    argv = ["run", SIG, str(data), "-o", str(tmp_path / "p.jsonl"), "--model", "openai/test"]
    argv += ["--api-base", server.base_url, "--confidence"]
    assert main([*argv, "--server", "ollama"]) == 2
    assert "log probabilities" in capsys.readouterr().err
    assert server.requests == []
    assert main([*argv, "--server", "vllm"]) == 0
    assert server.requests[0].body["logprobs"] is True
