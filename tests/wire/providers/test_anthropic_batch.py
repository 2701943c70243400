"""Anthropic's Message Batches against a loopback server: submit, poll, read, cancel, resume.

The server (`tests.wire.providers.anthropic_batch_server`) answers as Anthropic's API does
and refuses a request the anthropic SDK's own types refuse; the requests are the ones the
Anthropic Messages API (`structio.lm._anthropic`) writes, and a succeeded result's Message
is read by that API (one of them a recorded Message of the real API).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pydantic
import pytest
from anthropic.types.messages import (
    MessageBatch,
    MessageBatchIndividualResponse,
    batch_create_params,
)

import structio as sio
from structio.batch import state_path
from structio.call import prepare
from structio.cli import main
from structio.lm import _batch_anthropic
from structio.lm._anthropic import ANTHROPIC
from structio.lm._batch_anthropic import AnthropicBatches
from structio.lm._exchange import WireAPI
from structio.lm.batches import batch_api, batch_price
from structio.lm.models import cost_of, model_entry
from structio.lm.types import Usage
from structio.run import run_batch
from tests.wire.providers.anthropic_batch_server import (
    KEY,
    AnthropicBatchServer,
    AnthropicPlan,
    Fault,
    error_body,
)
from tests.wire.providers.anthropic_server import message, recorded
from tests.wire.test_batch import read_errors, read_out, rows_of, write_rows

SIG = "ticket -> category: str, urgency: int"
MODEL = "anthropic/claude-haiku-4-5"  # the model map has its batch prices
BATCHES = r"/v1/messages/batches"
ONE = r"/v1/messages/batches/msgbatch_\d+"


USAGE = {"input_tokens": 11, "output_tokens": 3}


def answer(params: dict[str, Any]) -> dict[str, Any]:
    """Answer from the ticket: 'boom' is refused, 'busy' rate limited, 'garbage' unreadable."""
    [block] = params["messages"][-1]["content"]
    ticket = block["text"].split("\n")[1]
    if "boom" in ticket:
        return error_body("invalid_request_error", "bad ticket")
    if "busy" in ticket:
        return error_body("rate_limit_error", "too many requests")
    if "garbage" in ticket:
        return message("I would rather not say.", usage=USAGE)
    text = f"[[ ## category ## ]]\n{ticket}\n\n[[ ## urgency ## ]]\n{len(ticket)}"
    return message(text, usage=USAGE)


@pytest.fixture
def api() -> WireAPI:
    """The Messages API the batches speak: the anthropic transport's own."""
    found = _batch_anthropic.messages_api()
    assert found is ANTHROPIC
    return found


@pytest.fixture
def server() -> Iterator[AnthropicBatchServer]:
    srv = AnthropicBatchServer().start()
    srv.handler = answer
    yield srv
    srv.stop()


@pytest.fixture
def make_lm(server: AnthropicBatchServer, api: WireAPI) -> Callable[..., sio.LM]:
    def make(model: str = MODEL, **kwargs: Any) -> sio.LM:
        options: dict[str, Any] = {
            "api_base": server.base_url,
            "api_key": KEY,
            "cache": False,
            "backoff": 0.01,
        }
        options.update(kwargs)
        return sio.LM(model, **options)

    return make


def created_ids(server: AnthropicBatchServer) -> list[list[str]]:
    """The custom ids of each batch created, in order."""
    return [[r["custom_id"] for r in batch.requests] for batch in server.batches.values()]


# -- the Python API ----------------------------------------------------------------------------


def test_submit_poll_and_results(
    server: AnthropicBatchServer,
    make_lm: Callable[..., sio.LM],
    api: WireAPI,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lm = make_lm()
    predict = sio.Predict(SIG, lm=lm, temperature=0.5)
    job = predict.submit_batch(rows_of("aa", "bbb", "c"))
    assert job.batch_ids == ["msgbatch_0001"]
    assert server.count("POST", BATCHES) == 1
    assert server.count("POST", r"/v1/messages") == 0  # no online call, no upload either
    assert not job.done

    # Each request is {custom_id, params}: params the Messages API's body, valid for the SDK.
    [batch] = server.batches.values()
    checker = pydantic.TypeAdapter(batch_create_params.Request)
    point = api.endpoint(MODEL, lm.client, stream=False)
    for line, request in enumerate(batch.requests, start=1):
        # The SDK's type (anthropic 2.14) lacks the sampling parameters the API still takes.
        params = {k: v for k, v in request["params"].items() if k != "temperature"}
        checker.validate_python({**request, "params": params})
        assert request["custom_id"] == str(line)
        # The body of the row's online call, as the Messages API writes it.
        inputs = {"ticket": ["aa", "bbb", "c"][line - 1]}
        sent = {"temperature": 0.5}
        prepared = prepare(sio.ChatAdapter(), lm, predict.signature, [], inputs, sent)
        assert request["params"] == api.body(
            point, prepared.messages, prepared.params, lm.client, stream=False
        )
        assert request["params"]["temperature"] == 0.5
        assert "stream" not in request["params"]

    status = job.status()
    assert [info.status for info in status.batches] == ["in_progress"]
    assert (status.total, status.completed, status.done) == (3, 0, False)

    job.wait(poll_interval=0)
    assert job.done
    results = job.results()
    assert [r.to_dict() for r in results] == [  # type: ignore[union-attr]
        {"category": "aa", "urgency": 2},
        {"category": "bbb", "urgency": 3},
        {"category": "c", "urgency": 1},
    ]
    # Half price: the map's batch prices of the model, half its ordinary ones.
    price = batch_price(MODEL)
    assert price.input is not None
    assert price.output is not None
    online = cost_of(MODEL, Usage(11, 3))
    assert online is not None
    for result in results:
        assert isinstance(result, sio.Prediction)
        assert result.meta.cost == pytest.approx(11 * price.input + 3 * price.output)
        assert result.meta.cost == pytest.approx(online / 2)
    assert job.cost == pytest.approx(3 * online / 2)
    assert job.usage == Usage(33, 9)

    err = capsys.readouterr().err
    assert "3 requests to submit" in err
    assert "batch msgbatch_0001 created: 3 requests" in err
    assert "batch msgbatch_0001: ended, 3/3 done, 0 failed" in err
    assert "3 rows answered, 0 failed; 33 prompt + 9 completion tokens; cost $" in err
    assert price_note(MODEL) in err


def test_the_server_speaks_the_sdk_s_types(
    server: AnthropicBatchServer, make_lm: Callable[..., sio.LM]
) -> None:
    # The loopback answers are what the anthropic SDK reads: a test of the test server.
    job = sio.Predict(SIG, lm=make_lm()).submit_batch(rows_of("aa", "boom"), progress=False)
    [batch_id] = job.batch_ids
    [batch] = server.batches.values()
    MessageBatch.model_validate(server._object(batch))
    job.wait(poll_interval=0)
    MessageBatch.model_validate(server._object(batch))
    status, data = server._results(batch_id)
    assert status == 200
    kinds = [
        MessageBatchIndividualResponse.model_validate_json(line).result.type
        for line in data.splitlines()
    ]
    assert kinds == ["errored", "succeeded"]  # in the server's order, not the rows'


def test_each_failure_is_its_row_and_nothing_is_invented(
    server: AnthropicBatchServer, make_lm: Callable[..., sio.LM]
) -> None:
    server.plans.append(AnthropicPlan(expire_after=4))
    predict = sio.Predict(SIG, lm=make_lm())
    job = predict.submit_batch(rows_of("aa", "boom", "busy", "garbage", "late"), progress=False)
    ok, bad, busy, unreadable, late = job.wait(poll_interval=0).results()
    assert ok == {"category": "aa", "urgency": 2}
    assert isinstance(bad, sio.BadRequestError)
    assert "bad ticket" in str(bad)
    assert isinstance(busy, sio.RateLimitError)
    assert isinstance(unreadable, sio.ParseError)
    assert isinstance(late, sio.ServerError)
    assert "expired" in str(late)
    assert (job.answered, job.failed) == (1, 4)
    assert server.count("POST", r"/v1/messages") == 0  # no request made to fill a gap


def test_rows_are_split_and_results_matched_by_custom_id(
    server: AnthropicBatchServer, make_lm: Callable[..., sio.LM]
) -> None:
    predict = sio.Predict(SIG, lm=make_lm())
    tickets = ["a", "bb", "ccc", "dddd", "eeeee"]
    job = predict.submit_batch(rows_of(*tickets), max_requests=2, progress=False)
    assert created_ids(server) == [["1", "2"], ["3", "4"], ["5"]]
    results = job.wait(poll_interval=0).results()
    assert [r["category"] for r in results] == tickets  # type: ignore[index]


def test_a_cancelled_batch_fails_the_rows_that_did_not_run(
    server: AnthropicBatchServer, make_lm: Callable[..., sio.LM]
) -> None:
    server.plans.append(AnthropicPlan(("in_progress",) * 5 + ("ended",), answered=1))
    job = sio.Predict(SIG, lm=make_lm()).submit_batch(rows_of("aa", "bb", "cc"), progress=False)
    status = job.cancel()
    assert [info.status for info in status.batches] == ["canceling"]
    assert server.count("POST", ONE + "/cancel") == 1
    first, *rest = job.wait(poll_interval=0).results()
    assert first == {"category": "aa", "urgency": 2}
    for failed in rest:
        assert isinstance(failed, sio.ServerError)
        assert "cancelled before this request ran" in str(failed)


def test_the_provider_s_refusals_are_structio_errors(
    server: AnthropicBatchServer, make_lm: Callable[..., sio.LM], tmp_path: Path
) -> None:
    predict = sio.Predict(SIG, lm=make_lm())
    # A create refused: nothing recorded as created, the error says why.
    server.faults.append(
        Fault("POST", BATCHES, 400, error_body("invalid_request_error", "too many requests"))
    )
    state = tmp_path / "job.batch.json"
    with pytest.raises(sio.BadRequestError, match="too many requests"):
        predict.submit_batch(rows_of("aa"), state=state, progress=False)
    assert [b["batch_id"] for b in json.loads(state.read_text())["batches"]] == [None]
    state.unlink()
    # An overloaded poll is tried again; a wrong key is refused.
    server.faults.append(Fault("GET", ONE, 529, error_body("overloaded_error", "overloaded")))
    job = predict.submit_batch(rows_of("aa"), progress=False)
    assert job.wait(poll_interval=0).results() == [{"category": "aa", "urgency": 2}]
    wrong = sio.Predict(SIG, lm=make_lm(api_key="wrong"))
    with pytest.raises(sio.AuthenticationError, match="invalid x-api-key"):
        wrong.submit_batch(rows_of("aa"), progress=False)


def test_a_state_file_failing_after_the_create_names_the_batch(
    server: AnthropicBatchServer,
    make_lm: Callable[..., sio.LM],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from structio import batch as batch_module

    saves: list[Path] = []
    real = batch_module.atomic_write

    def full_after_the_first(path: Path, *args: Any, **kwargs: Any) -> None:
        saves.append(path)
        if len(saves) > 1:
            raise sio.SaveError("cannot write it: the disk is full", path=str(path), errno=28)
        real(path, *args, **kwargs)

    monkeypatch.setattr(batch_module, "atomic_write", full_after_the_first)
    with pytest.raises(sio.SaveError) as info:
        sio.Predict(SIG, lm=make_lm()).submit_batch(
            rows_of("aa"), state=tmp_path / "job.batch.json", progress=False
        )
    assert server.count("POST", BATCHES) == 1
    assert "batch msgbatch_0001 was created and runs at the provider, but is not recorded" in (
        str(info.value)
    )


def test_a_job_resumes_from_its_state_file(
    server: AnthropicBatchServer, make_lm: Callable[..., sio.LM], tmp_path: Path
) -> None:
    state = tmp_path / "job.batch.json"
    predict = sio.Predict(SIG, lm=make_lm())
    first = predict.submit_batch(rows_of("aa", "bb"), state=state, progress=False)
    again = predict.submit_batch(rows_of("aa", "bb"), state=state, progress=False)
    assert again.batch_ids == first.batch_ids == ["msgbatch_0001"]
    assert server.count("POST", BATCHES) == 1
    assert again.wait(poll_interval=0).results()[1] == {"category": "bb", "urgency": 2}
    assert not state.exists()


# -- structio run --batch ------------------------------------------------------------------------


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("STRUCTIO_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.usefixtures("env", "api")
def test_structio_run_batch_with_a_stop_and_a_resume(
    server: AnthropicBatchServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = tmp_path / "rows.jsonl"
    write_rows(data, ["aa", "boom", "cccc", "d"])
    out = tmp_path / "preds.jsonl"
    argv = ["run", SIG, str(data), "-o", str(out), "--model", MODEL]
    argv += ["--api-base", server.base_url, "--batch", "--poll-interval", "0"]
    argv += ["--batch-size", "2"]

    # Stopped while polling: the batches run on, recorded in the state file.
    retrieve = AnthropicBatches.retrieve

    def stop(self: AnthropicBatches, batch_id: str) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(AnthropicBatches, "retrieve", stop)
    assert main(argv) == 130
    assert "run the same command again to pick them up" in capsys.readouterr().err
    recorded = json.loads(state_path(out).read_text())["batches"]
    assert [b["batch_id"] for b in recorded] == ["msgbatch_0001", "msgbatch_0002"]
    assert created_ids(server) == [["1", "2"], ["3", "4"]]

    # The same command polls the same batches: nothing is submitted twice.
    monkeypatch.setattr(AnthropicBatches, "retrieve", retrieve)
    assert main(argv) == 1  # one row failed
    assert server.count("POST", BATCHES) == 2
    rows = read_out(out)
    assert sorted(rows) == [1, 3, 4]
    # What structio eval reads of how it was made (the tokens, one request) comes too.
    assert {k: v for k, v in rows[3].items() if not k.startswith("_")} == {
        "line": 3,
        "inputs": {"ticket": "cccc"},
        "outputs": {"category": "cccc", "urgency": 4},
        "model": MODEL,
        "adapter": "ChatAdapter",
    }
    assert rows[3]["_requests"] == 1
    assert rows[3]["_usage"]["completion_tokens"] > 0
    errors = read_errors(out)
    assert list(errors) == [2]
    assert errors[2].startswith("BadRequestError")
    assert "bad ticket" in errors[2]
    assert not state_path(out).exists()
    captured = capsys.readouterr()
    assert captured.out.startswith("3 rows predicted, 0 already in")
    assert price_note(MODEL) in captured.out
    assert "batch msgbatch_0001: ended, 1/2 done, 1 failed" in captured.err

    # The failed row, fixed, goes in a new batch of its own; the rest are not sent again.
    write_rows(data, ["aa", "bb", "cccc", "d"])
    assert main(argv) == 0
    assert created_ids(server)[-1] == ["2"]
    assert sorted(read_out(out)) == [1, 2, 3, 4]


@pytest.mark.usefixtures("env", "api")
def test_a_stop_between_building_and_creating_sends_the_batch_once(
    server: AnthropicBatchServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "rows.jsonl"
    write_rows(data, ["aa", "bb"])
    out = tmp_path / "preds.jsonl"
    lm = sio.LM(MODEL, api_base=server.base_url, cache=False)
    predict = sio.Predict(SIG, lm=lm)
    create = AnthropicBatches.create

    def crash(self: AnthropicBatches, *args: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(AnthropicBatches, "create", crash)
    with pytest.raises(KeyboardInterrupt):
        run_batch(predict, data, out, poll_interval=0, progress=False)
    [entry] = json.loads(state_path(out).read_text())["batches"]
    assert entry["file_id"].startswith("inline-")  # nothing uploaded: Anthropic has no files
    assert entry["batch_id"] is None
    assert server.count("POST", BATCHES) == 0

    monkeypatch.setattr(AnthropicBatches, "create", create)
    summary = run_batch(predict, data, out, poll_interval=0, progress=False)
    assert summary.done == 2
    assert server.count("POST", BATCHES) == 1
    assert created_ids(server) == [["1", "2"]]


def batch_rate(rates: dict[str, Any], name: str) -> float:
    """The map's batch rate of a kind of token; half its online rate where it has none."""
    batch = rates.get(f"{name}_batches")
    return float(batch) if batch is not None else float(rates[name]) / 2


def price_note(model: str) -> str:
    """How the summary names the price: the map's batch price, or the known discount.

    litellm's map gained batch prices for newer Claude models in later releases.
    """
    found = model_entry(model)
    has_batch_price = found is not None and "input_cost_per_token_batches" in found[1]
    return "(batch price)" if has_batch_price else "(50% batch discount)"


# -- which models batch -------------------------------------------------------------------------


def test_only_models_of_a_provider_with_a_batch_api_batch(api: WireAPI) -> None:
    assert isinstance(batch_api(sio.LM(MODEL, api_key="k")), AnthropicBatches)
    # An Anthropic model goes to Anthropic's batches whichever transport its calls take.
    lm = sio.LM(MODEL, api_key="k", transport="litellm")
    assert isinstance(batch_api(lm), AnthropicBatches)
    with pytest.raises(sio.ConfigurationError) as info:
        batch_api(sio.LM("cohere/command-r", api_key="k"))
    text = str(info.value)
    assert "cohere/command-r" in text
    # litellm names the provider 'cohere' or (older releases) 'cohere_chat'.
    assert re.search(r"'cohere(_chat)?' has no batch API", text)
    assert "openai" in text
    assert "anthropic" in text


def test_without_a_key_no_batch_is_made(
    server: AnthropicBatchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    # Anthropic's own address without a key: refused before anything is sent.
    with pytest.raises(sio.AuthenticationError, match="ANTHROPIC_API_KEY"):
        sio.Predict(SIG, lm=sio.LM(MODEL, cache=False)).submit_batch(rows_of("aa"))
    # A server of api_base gets no key (it may need none); this one refuses the batch.
    lm = sio.LM(MODEL, api_base=server.base_url, cache=False)
    with pytest.raises(sio.AuthenticationError, match="invalid x-api-key"):
        sio.Predict(SIG, lm=lm).submit_batch(rows_of("aa"), progress=False)
    assert "x-api-key" not in server.requests[-1].headers
    assert server.batches == {}


def test_the_batch_endpoints_sit_beside_the_messages_endpoint(api: WireAPI) -> None:
    # Made from the messages URL, so a base's query (a proxy's key) stays a query.
    lm = sio.LM(MODEL, api_key="k", api_base="https://proxy.example/anthropic?team=a")
    batches = AnthropicBatches(lm, api)
    assert batches._url("/msgbatch_1/results") == (
        "https://proxy.example/anthropic/v1/messages/batches/msgbatch_1/results?team=a"
    )
    assert batches._url("") == "https://proxy.example/anthropic/v1/messages/batches?team=a"


def test_a_recorded_message_is_read_and_priced_at_the_batch_rates(
    server: AnthropicBatchServer, make_lm: Callable[..., sio.LM]
) -> None:
    # A real Message of the API (recorded: 3 input tokens, 418 written to the prompt cache,
    # 1111 read from it, 33 output), as a batch's succeeded result.
    recorded_message = recorded("cache_write_and_read.json")
    server.handler = lambda params: recorded_message
    model = "anthropic/claude-sonnet-4-5"
    predict = sio.Predict("question -> answer", lm=make_lm(model=model))
    job = predict.submit_batch([{"question": "What is Python?"}], progress=False)
    [result] = job.wait(poll_interval=0).results()
    # Prose, not ChatAdapter's fields: the row fails with the text, nothing is made up...
    assert isinstance(result, sio.ParseError)
    assert result.completion.startswith("Python is a beginner-friendly")
    # ...and its tokens are billed all the same.
    assert job.usage == Usage(3 + 418 + 1111, 33, cached_tokens=1111, cache_write_tokens=418)
    # Every kind of token at the model map's batch rate: half of each ordinary rate.
    found = model_entry(model)
    assert found is not None
    rates = found[1]
    expected = (
        3 * batch_rate(rates, "input_cost_per_token")
        + 418 * batch_rate(rates, "cache_creation_input_token_cost")
        + 1111 * batch_rate(rates, "cache_read_input_token_cost")
        + 33 * batch_rate(rates, "output_cost_per_token")
    )
    assert job.cost == pytest.approx(expected)
