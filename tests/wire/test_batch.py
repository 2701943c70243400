"""Provider batches against the loopback server: submit, poll, read, resume, split, cache.

The batch HTTP path is the direct transport's (OpenAI's files and batches API over httpx),
so these tests run over it alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from structio._util.files import Appender
from structio.batch import state_path
from structio.cli import main
from structio.lm import batches
from structio.lm.batches import batch_price
from structio.lm.cache import ResponseCache
from structio.run import run_batch, run_file
from tests.wire.server import BatchPlan, OpenAIServer, Reply, Request

SIG = "ticket -> category: str, urgency: int"


def answer(request: Request) -> Reply:
    """Answer from the ticket: 'boom' gets a 400, 'garbage' an unreadable text, 'json' JSON."""
    ticket = request.messages[-1]["content"].split("\n")[1]
    if "boom" in ticket:
        return Reply(status=400, error_message="bad ticket")
    if "garbage" in ticket:
        return Reply(content="I would rather not say.")
    if "json" in ticket:
        return Reply(content=json.dumps({"category": ticket, "urgency": 7}))
    return Reply(content=f"[[ ## category ## ]]\n{ticket}\n\n[[ ## urgency ## ]]\n{len(ticket)}")


@pytest.fixture
def make_lm(server: OpenAIServer) -> Callable[..., sio.LM]:
    server.handler = answer

    def make(model: str = "openai/test", **kwargs: Any) -> sio.LM:
        options: dict[str, Any] = {
            "api_base": server.base_url,
            "api_key": "test-key",
            "cache": False,
            "backoff": 0.01,
            "transport": "direct",
        }
        options.update(kwargs)
        return sio.LM(model, **options)

    return make


def rows_of(*tickets: str) -> list[dict[str, str]]:
    return [{"ticket": t} for t in tickets]


def uploaded_ids(server: OpenAIServer) -> list[list[str]]:
    """The custom ids of each uploaded request file, in upload order."""
    found = []
    for file_id, data in server.files.items():
        if file_id.startswith("file-") and not file_id.startswith(("file-out", "file-err")):
            found.append([json.loads(line)["custom_id"] for line in data.splitlines()])
    return found


def write_rows(path: Path, tickets: list[str]) -> None:
    path.write_text("".join(json.dumps({"ticket": t}) + "\n" for t in tickets), encoding="utf-8")


def read_out(path: Path) -> dict[int, dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {row["line"]: row for row in rows}


def read_errors(out: Path) -> dict[int, str]:
    path = out.with_name(f"{out.stem}.errors.jsonl")
    if not path.exists():
        return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {row["line"]: row["error"] for row in rows}


# -- the Python API ----------------------------------------------------------------------------


def test_submit_poll_and_results(
    server: OpenAIServer, make_lm: Callable[..., sio.LM], capsys: pytest.CaptureFixture[str]
) -> None:
    lm = make_lm("openai/gpt-4o-mini")  # a model with a known batch price
    predict = sio.Predict(SIG, lm=lm, temperature=0.5)
    job = predict.submit_batch(rows_of("aa", "bbb", "c"))
    assert isinstance(job, sio.BatchJob)
    assert job.batch_ids == ["batch-2"]
    assert not job.done
    assert server.count("POST", "/v1/files") == 1
    assert server.count("POST", "/v1/batches") == 1
    assert server.count("POST", "/v1/chat/completions") == 0

    status = job.status()
    assert status.batches[0].status == "in_progress"
    assert (status.total, status.completed) == (3, 1)  # the server's halfway count

    job.wait(poll_interval=0)
    assert job.done
    results = job.results()
    assert [r.to_dict() for r in results] == [  # type: ignore[union-attr]
        {"category": "aa", "urgency": 2},
        {"category": "bbb", "urgency": 3},
        {"category": "c", "urgency": 1},
    ]
    assert all(isinstance(r, sio.Prediction) for r in results)
    # Priced at the batch price of the model map; each reply reports 11 + 3 tokens.
    price = batch_price("openai/gpt-4o-mini")
    assert price.input is not None
    assert price.output is not None
    assert job.cost == pytest.approx(3 * (11 * price.input + 3 * price.output))
    assert job.usage.prompt_tokens == 33

    err = capsys.readouterr().err
    assert "3 requests to submit" in err
    assert "estimated cost $" in err
    assert "batch batch-2: completed, 3/3 done, 0 failed" in err
    assert "3 rows answered, 0 failed; 33 prompt + 9 completion tokens; cost $" in err


def test_each_request_is_the_online_request(
    server: OpenAIServer, make_lm: Callable[..., sio.LM]
) -> None:
    predict = sio.Predict(SIG, lm=make_lm(), adapter=sio.JSONAdapter(), temperature=0.2)
    predict(ticket="aa")
    online = server.requests[-1].body
    job = predict.submit_batch(rows_of("aa"), progress=False)
    [line] = [json.loads(raw) for raw in server.files["file-1"].splitlines()]
    assert line["custom_id"] == "1"
    assert line["method"] == "POST"
    assert line["url"] == "/v1/chat/completions"
    assert line["body"] == online
    assert job.wait(poll_interval=0).results()[0] == {"category": "aa", "urgency": 2}


def test_failures_are_rows_and_no_fallback_request_is_made(
    server: OpenAIServer, make_lm: Callable[..., sio.LM]
) -> None:
    predict = sio.Predict(SIG, lm=make_lm())
    job = predict.submit_batch(rows_of("aa", "boom", "garbage", "json"), progress=False)
    ok, bad, unreadable, reread = job.wait(poll_interval=0).results()
    assert ok == {"category": "aa", "urgency": 2}
    assert isinstance(bad, sio.BadRequestError)
    assert "bad ticket" in str(bad)
    assert isinstance(unreadable, sio.ParseError)
    # ChatAdapter's JSON re-read of the same text applies, without a request.
    assert isinstance(reread, sio.Prediction)
    assert reread.route == "json_reparse"
    assert reread == {"category": "json", "urgency": 7}
    assert server.count("POST", "/v1/chat/completions") == 0
    assert len(server.batch_requests) == 4


def test_an_expired_batch_lists_its_unanswered_rows(
    server: OpenAIServer, make_lm: Callable[..., sio.LM]
) -> None:
    server.batch_plans.append(BatchPlan(("validating", "in_progress", "expired"), answered=1))
    predict = sio.Predict(SIG, lm=make_lm())
    job = predict.submit_batch(rows_of("aa", "bb", "cc"), progress=False)
    results = job.wait(poll_interval=0).results()
    assert results[0] == {"category": "aa", "urgency": 2}
    for failed in results[1:]:
        assert isinstance(failed, sio.LMError)
        assert "could not be executed before the completion window expired" in str(failed)


def test_a_failed_batch_fails_every_row_with_its_reason(
    server: OpenAIServer, make_lm: Callable[..., sio.LM]
) -> None:
    server.batch_plans.append(BatchPlan(("validating", "failed"), errors=("quota exceeded",)))
    predict = sio.Predict(SIG, lm=make_lm())
    results = (
        predict.submit_batch(rows_of("aa", "bb"), progress=False).wait(poll_interval=0).results()
    )
    assert all(isinstance(r, sio.BadRequestError) for r in results)
    assert "quota exceeded" in str(results[0])
    assert server.batch_requests == []


def test_rows_are_split_within_the_limits(
    server: OpenAIServer, make_lm: Callable[..., sio.LM]
) -> None:
    predict = sio.Predict(SIG, lm=make_lm())
    tickets = ["a", "bb", "ccc", "dddd", "eeeee"]
    job = predict.submit_batch(rows_of(*tickets), max_requests=2, progress=False)
    assert uploaded_ids(server) == [["1", "2"], ["3", "4"], ["5"]]
    assert len(job.batch_ids) == 3
    results = job.wait(poll_interval=0).results()
    assert [r["category"] for r in results] == tickets  # type: ignore[index]

    # A byte limit that holds two requests of these rows at most, and one row too long.
    server.files.clear()
    one = len(server.batch_requests[0].body["messages"][-1]["content"])
    sizes = [len(json.dumps({"body": r.body})) for r in server.batch_requests]
    limit = 2 * max(sizes) + 200
    job = predict.submit_batch(
        rows_of(*tickets, "x" * (limit + one)), max_bytes=limit, progress=False
    )
    files = uploaded_ids(server)
    assert all(len(ids) <= 2 for ids in files)
    assert sorted(i for ids in files for i in ids) == ["1", "2", "3", "4", "5"]
    last = job.wait(poll_interval=0).results()[-1]
    assert isinstance(last, sio.BadRequestError)
    assert "more than a batch file may hold" in str(last)


def test_cache_hits_are_not_submitted_and_answers_are_cached(
    server: OpenAIServer, make_lm: Callable[..., sio.LM], tmp_path: Path
) -> None:
    cache = ResponseCache(tmp_path / "cache")
    predict = sio.Predict(SIG, lm=make_lm(cache=cache))
    assert predict(ticket="bb") == {"category": "bb", "urgency": 2}  # now in the cache
    job = predict.submit_batch(rows_of("aa", "bb", "cc"), progress=False)
    assert uploaded_ids(server) == [["1", "3"]]
    results = job.wait(poll_interval=0).results()
    assert [r["category"] for r in results] == ["aa", "bb", "cc"]  # type: ignore[index]
    # The batch's answers went into the cache under the online call's key.
    chats = server.count("POST", "/v1/chat/completions")
    assert predict(ticket="cc") == {"category": "cc", "urgency": 2}
    assert server.count("POST", "/v1/chat/completions") == chats


def test_a_job_resumes_from_its_state_file(
    server: OpenAIServer, make_lm: Callable[..., sio.LM], tmp_path: Path
) -> None:
    state = tmp_path / "job.batch.json"
    predict = sio.Predict(SIG, lm=make_lm())
    first = predict.submit_batch(rows_of("aa", "bb"), state=state, progress=False)
    recorded = json.loads(state.read_text())
    assert [b["batch_id"] for b in recorded["batches"]] == first.batch_ids
    again = predict.submit_batch(rows_of("aa", "bb"), state=state, progress=False)
    assert again.batch_ids == first.batch_ids
    assert server.count("POST", "/v1/batches") == 1
    assert again.wait(poll_interval=0).results()[1] == {"category": "bb", "urgency": 2}
    assert not state.exists()  # every batch read: nothing left to pick up

    other = sio.Predict("ticket -> label", lm=make_lm())
    predict.submit_batch(rows_of("aa"), state=state, progress=False)
    with pytest.raises(sio.ConfigurationError, match="holds batches of openai/test for"):
        other.submit_batch(rows_of("aa"), state=state, progress=False)


def test_a_fake_lm_has_no_batch_api() -> None:
    predict = sio.Predict(SIG, lm=sio.FakeLM(["x"]))
    with pytest.raises(sio.ConfigurationError, match="needs an LM of a provider"):
        predict.submit_batch(rows_of("aa"), progress=False)


# -- structio run --batch ------------------------------------------------------------------------


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("STRUCTIO_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.usefixtures("env")
def test_structio_run_batch_end_to_end(
    server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.handler = answer
    data = tmp_path / "rows.jsonl"
    write_rows(data, ["aa", "boom", "cccc", "d"])
    out = tmp_path / "preds.jsonl"
    argv = ["run", SIG, str(data), "-o", str(out), "--model", "openai/test"]
    argv += ["--api-base", server.base_url]
    batch = ["--batch", "--poll-interval", "0", "--batch-size", "2"]

    assert main([*argv, *batch]) == 1  # one row failed
    rows = read_out(out)
    assert sorted(rows) == [1, 3, 4]
    # What structio eval reads of how it was made (the tokens, one request) comes too.
    assert {k: v for k, v in rows[3].items() if not k.startswith("_")} == {
        "line": 3,
        "inputs": {"ticket": "cccc"},
        "outputs": {"category": "cccc", "urgency": 4},
        "model": "openai/test",
        "adapter": "ChatAdapter",
    }
    assert rows[3]["_requests"] == 1
    assert rows[3]["_usage"]["completion_tokens"] > 0
    assert list(read_errors(out)) == [2]
    assert "BadRequestError" in read_errors(out)[2]
    assert not state_path(out).exists()
    captured = capsys.readouterr()
    assert captured.out.startswith("3 rows predicted, 0 already in")
    assert "cost unknown" in captured.out
    [cost_line] = [line for line in captured.out.splitlines() if "cost unknown" in line]
    assert cost_line not in captured.err  # the summary once, on standard output
    assert "4 requests to submit" in captured.err
    assert uploaded_ids(server) == [["1", "2"], ["3", "4"]]  # two batches of two
    assert "batch batch-2: completed, 1/2 done, 1 failed" in captured.err
    assert "batch batch-4: completed, 2/2 done, 0 failed" in captured.err

    # The failed row, fixed in the data, is redone online: the same files serve both runs.
    write_rows(data, ["aa", "bb", "cccc", "d"])
    assert main(argv) == 0
    assert sorted(read_out(out)) == [1, 2, 3, 4]
    assert read_errors(out) == {}
    assert server.count("POST", "/v1/chat/completions") == 1
    assert server.count("POST", "/v1/batches") == 2


@pytest.mark.usefixtures("env")
def test_a_second_batch_run_resubmits_only_the_failed_rows(
    server: OpenAIServer, make_lm: Callable[..., sio.LM], tmp_path: Path
) -> None:
    server.batch_plans.append(BatchPlan(("validating", "in_progress", "expired"), answered=2))
    data = tmp_path / "rows.jsonl"
    write_rows(data, ["a", "bb", "ccc", "dddd"])
    out = tmp_path / "preds.jsonl"
    predict = sio.Predict(SIG, lm=make_lm())
    summary = run_batch(predict, data, out, poll_interval=0, progress=False)
    assert summary.done == 2
    assert sorted(read_errors(out)) == [3, 4]
    assert "expired" in read_errors(out)[3]

    summary = run_batch(predict, data, out, poll_interval=0, progress=False)
    assert (summary.done, summary.already_done, summary.failed) == (2, 2, [])
    assert uploaded_ids(server) == [["1", "2", "3", "4"], ["3", "4"]]
    assert sorted(read_out(out)) == [1, 2, 3, 4]
    assert read_errors(out) == {}


@pytest.mark.usefixtures("env")
def test_a_stop_between_upload_and_create_reuses_the_file(
    server: OpenAIServer,
    make_lm: Callable[..., sio.LM],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = tmp_path / "rows.jsonl"
    write_rows(data, ["aa", "bb"])
    out = tmp_path / "preds.jsonl"
    predict = sio.Predict(SIG, lm=make_lm())
    create = batches.DirectBatches.create

    def crash(self: batches.DirectBatches, *args: Any) -> batches.BatchInfo:
        raise KeyboardInterrupt

    monkeypatch.setattr(batches.DirectBatches, "create", crash)
    with pytest.raises(KeyboardInterrupt):
        run_batch(predict, data, out, poll_interval=0, progress=False)
    [entry] = json.loads(state_path(out).read_text())["batches"]
    assert entry["file_id"] == "file-1"
    assert entry["batch_id"] is None

    monkeypatch.setattr(batches.DirectBatches, "create", create)
    summary = run_batch(predict, data, out, poll_interval=0, progress=False)
    assert summary.done == 2
    assert server.count("POST", "/v1/files") == 1
    assert server.count("POST", "/v1/batches") == 1
    assert server.requests[[r.path for r in server.requests].index("/v1/batches")].body[
        "input_file_id"
    ] == ("file-1")

    # Had the rows changed meanwhile, the file would not be reused.
    out.unlink()
    monkeypatch.setattr(batches.DirectBatches, "create", crash)
    with pytest.raises(KeyboardInterrupt):
        run_batch(predict, data, out, poll_interval=0, progress=False)
    write_rows(data, ["aa", "bb changed"])
    monkeypatch.setattr(batches.DirectBatches, "create", create)
    run_batch(predict, data, out, poll_interval=0, progress=False)
    assert server.count("POST", "/v1/files") == 3
    assert read_out(out)[2]["outputs"] == {"category": "bb changed", "urgency": 10}


@pytest.mark.usefixtures("env")
def test_a_stop_while_polling_picks_up_the_same_batch(
    server: OpenAIServer,
    make_lm: Callable[..., sio.LM],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = tmp_path / "rows.jsonl"
    write_rows(data, ["aa", "bb", "cc"])
    out = tmp_path / "preds.jsonl"
    predict = sio.Predict(SIG, lm=make_lm())
    retrieve = batches.DirectBatches.retrieve

    def stop(self: batches.DirectBatches, batch_id: str) -> batches.BatchInfo:
        raise KeyboardInterrupt

    monkeypatch.setattr(batches.DirectBatches, "retrieve", stop)
    with pytest.raises(KeyboardInterrupt):
        run_batch(predict, data, out, poll_interval=0)
    assert "run the same command again to pick them up" in capsys.readouterr().err
    [entry] = json.loads(state_path(out).read_text())["batches"]
    assert entry["batch_id"] == "batch-2"

    monkeypatch.setattr(batches.DirectBatches, "retrieve", retrieve)
    summary = run_batch(predict, data, out, poll_interval=0, progress=False)
    assert summary.done == 3
    assert server.count("POST", "/v1/files") == 1
    assert server.count("POST", "/v1/batches") == 1
    assert server.count("GET", "/v1/batches/batch-2") >= 3
    assert not state_path(out).exists()


@pytest.mark.usefixtures("env")
def test_a_stop_after_some_rows_were_written_writes_no_row_twice(
    server: OpenAIServer, make_lm: Callable[..., sio.LM], tmp_path: Path
) -> None:
    data = tmp_path / "rows.jsonl"
    write_rows(data, ["aa", "bb", "cc"])
    out = tmp_path / "preds.jsonl"
    predict = sio.Predict(SIG, lm=make_lm())
    written: list[str] = []
    real_write = Appender.write

    # A stop right after the second row is written: the batch is read but not marked so.
    class CrashError(Exception):
        pass

    def stop_after_two(self: Appender, text: str) -> None:
        real_write(self, text)
        if self.path == out:
            written.append(text)
            if len(written) == 2:
                raise CrashError

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Appender, "write", stop_after_two)
        with pytest.raises(CrashError):
            run_batch(predict, data, out, poll_interval=0, progress=False)
    assert sorted(read_out(out)) == [1, 2]
    summary = run_batch(predict, data, out, poll_interval=0, progress=False)
    assert (summary.done, summary.already_done) == (1, 2)
    lines = [json.loads(x)["line"] for x in out.read_text().splitlines()]
    assert sorted(lines) == [1, 2, 3]
    assert server.count("POST", "/v1/batches") == 1


def test_run_file_and_run_batch_write_the_same_records(
    server: OpenAIServer, make_lm: Callable[..., sio.LM], tmp_path: Path
) -> None:
    data = tmp_path / "rows.jsonl"
    write_rows(data, ["aa", "json", "c"])
    predict = sio.Predict(SIG, lm=make_lm())
    online, batched = tmp_path / "online.jsonl", tmp_path / "batched.jsonl"
    run_file(predict, data, online, progress=False)
    run_batch(predict, data, batched, poll_interval=0, progress=False)
    assert read_out(online) == read_out(batched)
