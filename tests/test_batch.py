"""Provider batches without a server: the call layer's prepare/read, prices, state, limits."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import structio as sio
from structio.batch import BatchCall, BatchStatus, CostEstimate, state_path, submit
from structio.call import prepare, read_response
from structio.cli import main
from structio.lm._batch_anthropic import BATCH_DISCOUNT
from structio.lm._batch_anthropic import batch_info as anthropic_batch_info
from structio.lm._batch_anthropic import serves as anthropic_serves
from structio.lm.batches import BatchInfo, BatchLimits, batch_api, batch_price
from structio.lm.models import cost_of, model_entry
from structio.lm.types import Completion, LMResponse, Usage

SIG = "ticket -> category: str, urgency: int"


def response(text: str) -> LMResponse:
    return LMResponse(completions=(Completion(text=text),), model="fake")


def test_prepare_is_the_request_call_sends() -> None:
    lm = sio.FakeLM([{"category": "a", "urgency": 1}])
    adapter = sio.JSONAdapter()
    sio.Predict(SIG, lm=lm, adapter=adapter, temperature=0.3)(ticket="t")
    prepared = prepare(adapter, lm, SIG, (), {"ticket": "t"}, {"temperature": 0.3})
    [sent] = lm.calls
    assert prepared.messages == sent.messages
    assert prepared.params == sent.params


def test_read_response_rereads_but_never_asks_again() -> None:
    lm = sio.FakeLM(["unused"])
    prepared = prepare(sio.ChatAdapter(), lm, SIG, (), {"ticket": "t"})
    result = read_response(prepared, response('{"category": "a", "urgency": 3}'))
    assert result.outputs == [{"category": "a", "urgency": 3}]
    assert result.route == "json_reparse"
    with pytest.raises(sio.ParseError):
        read_response(prepared, response("no idea"))
    assert len(lm.calls) == 0


def test_batch_prices_come_from_the_model_map() -> None:
    found = model_entry("openai/gpt-4o-mini")
    assert found is not None
    entry = found[1]
    price = batch_price("openai/gpt-4o-mini")
    assert price.input == entry["input_cost_per_token_batches"]
    assert price.output == entry["output_cost_per_token_batches"]
    assert price.cost(Usage(10, 2)) == pytest.approx(10 * price.input + 2 * price.output)  # type: ignore[operator]
    unknown = batch_price("openai/no-such-model")
    assert unknown.cost(Usage(10, 2)) is None
    assert "no price known" in unknown.note


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_model_without_batch_prices_gets_half_price_at_openai_and_anthropic(
    monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    entry = {"litellm_provider": provider, "input_cost_per_token": 2e-6}
    entry["output_cost_per_token"] = 8e-6
    monkeypatch.setattr("structio.lm._batch_base.model_entry", lambda model: ("m", entry))
    monkeypatch.setattr(
        "structio.lm._batch_base.cost_of",
        lambda model, usage: usage.prompt_tokens * 2e-6 + usage.completion_tokens * 8e-6,
    )
    price = batch_price(f"{provider}/m")
    assert (price.input, price.output) == (1e-6, 4e-6)
    assert price.note == "50% batch discount"
    entry["litellm_provider"] = "groq"
    assert batch_price("groq/m").input == 2e-6
    assert "no batch discount known" in batch_price("groq/m").note


def test_the_full_price_reference_is_the_map() -> None:
    # The discount is taken off the map's own price, not a number of ours.
    full = cost_of("openai/gpt-4o-mini", Usage(1000, 0))
    batch = batch_price("openai/gpt-4o-mini").cost(Usage(1000, 0))
    assert full is not None
    assert batch is not None
    assert batch < full


def test_batch_info_reads_openai_batch_objects() -> None:
    info = BatchInfo.from_data(
        {
            "id": "batch_1",
            "status": "failed",
            "request_counts": {"total": 4, "completed": 1, "failed": 3},
            "errors": {"data": [{"code": "x", "message": "bad line"}]},
            "output_file_id": None,
        }
    )
    assert (info.total, info.completed, info.failed, info.errors) == (4, 1, 3, ("bad line",))
    assert info.done
    assert not BatchInfo("b", "in_progress").done
    status = BatchStatus((info, BatchInfo("b", "finalizing", total=2, completed=2)))
    assert (status.total, status.completed, status.failed, status.done) == (6, 3, 3, False)
    assert status.report() == "batch_1 failed, b finalizing: 3/6 done, 3 failed"


def test_the_estimate_says_when_the_cost_is_unknown() -> None:
    estimate = CostEstimate(3, 120, None, batch_price("openai/no-such-model"))
    assert estimate.report() == (
        "3 requests to submit, 120 prompt tokens; estimated cost unknown "
        "(no price known for openai/no-such-model)"
    )
    known = CostEstimate(3, 120, 0.5, batch_price("openai/gpt-4o-mini"))
    assert "estimated cost $0.500000 for the prompts (batch price)" in known.report()


def test_only_providers_with_a_batch_api_are_accepted() -> None:
    with pytest.raises(sio.ConfigurationError, match="not FakeLM"):
        batch_api(sio.FakeLM(["x"]))
    with pytest.raises(sio.ConfigurationError, match="'groq' has no batch API") as info:
        batch_api(sio.LM("groq/llama-3.1-8b-instant", api_key="k", transport="litellm"))
    assert "batches work for openai (and OpenAI-compatible servers), anthropic" in str(info.value)
    with pytest.raises(sio.ConfigurationError, match="Azure batches go through litellm"):
        batch_api(sio.LM("azure/gpt", api_base="https://example.invalid", api_key="k"))


def test_a_broken_state_file_is_refused_without_a_request(tmp_path: Path) -> None:
    state = tmp_path / "preds.batch.json"
    state.write_text("{not json", encoding="utf-8")
    lm = sio.LM("openai/test", api_base="http://127.0.0.1:9/v1", api_key="k", cache=False)
    call = BatchCall(sio.ChatAdapter(), lm, sio.make_signature(SIG))
    with pytest.raises(sio.ConfigurationError, match="cannot be read"):
        submit(call, {1: {"ticket": "a"}}, wrap=lambda r: r, state=state, progress=False)
    with pytest.raises(sio.ConfigurationError, match="batch limits must be 1 or more"):
        submit(call, {}, wrap=lambda r: r, limits=BatchLimits(0, 10), progress=False)


def test_nothing_to_submit_makes_no_request(tmp_path: Path) -> None:
    lm = sio.LM("openai/test", api_base="http://127.0.0.1:9/v1", api_key="k", cache=False)
    call = BatchCall(sio.ChatAdapter(), lm, sio.make_signature(SIG))
    stream = io.StringIO()
    # A row that cannot be prepared (an unknown input) fails in its place.
    job = submit(call, {1: {"nope": "a"}}, wrap=lambda r: r, stream=stream)
    assert job.batch_ids == []
    [failed] = job.wait(poll_interval=0).results()
    assert isinstance(failed, sio.FormatError)
    assert "0 rows answered, 1 failed" in stream.getvalue()


def test_state_path_sits_beside_the_output() -> None:
    assert state_path(Path("out/preds.jsonl")) == Path("out/preds.batch.json")


def test_the_command_refuses_a_negative_poll_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"ticket": "a"}) + "\n", encoding="utf-8")
    argv = ["run", SIG, str(data), "-o", str(tmp_path / "o.jsonl"), "--model", "openai/test"]
    assert main([*argv, "--batch", "--poll-interval", "-1"]) == 2
    assert "--poll-interval must be 0 or more" in capsys.readouterr().err


# -- Anthropic's Message Batches ------------------------------------------------------------------


def test_anthropic_batch_objects_are_read_into_batch_info() -> None:
    counts = {"processing": 2, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
    running = anthropic_batch_info(
        {"id": "msgbatch_1", "processing_status": "in_progress", "request_counts": counts}
    )
    assert (running.status, running.total, running.done, running.output_file_id) == (
        "in_progress",
        2,
        False,
        None,
    )
    counts = {"processing": 0, "succeeded": 3, "errored": 1, "canceled": 1, "expired": 2}
    ended = anthropic_batch_info(
        {"id": "msgbatch_1", "processing_status": "ended", "request_counts": counts}
    )
    assert (ended.total, ended.completed, ended.failed) == (7, 3, 4)
    assert ended.done
    assert ended.output_file_id == "msgbatch_1"  # its results are read by the batch's id


def test_the_map_s_anthropic_batch_prices_are_half_price() -> None:
    # What the Anthropic batch path charges (half the Messages API's price) is the map's.
    price = batch_price("anthropic/claude-haiku-4-5")
    full = cost_of("anthropic/claude-haiku-4-5", Usage(1000, 100))
    assert full is not None
    assert price.cost(Usage(1000, 100)) == pytest.approx(full * BATCH_DISCOUNT)


def test_anthropic_models_are_told_apart() -> None:
    def lm(model: str) -> sio.LM:
        return sio.LM(model, api_key="k")

    assert anthropic_serves(lm("anthropic/claude-haiku-4-5"))
    assert anthropic_serves(lm("claude-haiku-4-5"))
    assert not anthropic_serves(lm("openai/claude-haiku-4-5"))
    assert not anthropic_serves(lm("gpt-4o-mini"))
