"""Outputs read back as themselves, whatever their names; how the call went is `pred.meta`."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

import structio as sio
from tests.wire.server import OpenAIServer, Reply

# Every name a prediction used for call metadata, and the Mapping methods.
COLLIDING = [
    "route",
    "path",
    "usage",
    "cost",
    "responses",
    "completions",
    "attempts",
    "truncation",
    "max_tokens_reached",
    "lm_reasoning",
    "items",
    "keys",
    "values",
    "get",
    "to_dict",
    "toDict",
    "get_lm_usage",
    "meta",
]


class PricedLM(sio.BaseLM):
    """A model that answers from a script and reports tokens and a price, as a provider does."""

    def __init__(self, texts: list[str], *, cost: float = 0.25) -> None:
        super().__init__("priced/model")
        self.texts = iter(texts)
        self.price = cost

    def _complete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> sio.LMResponse:
        return sio.LMResponse(
            completions=(sio.Completion(next(self.texts), finish_reason="stop"),),
            model=self.model,
            usage=sio.Usage(prompt_tokens=10, completion_tokens=5, cached_tokens=2),
            cost=self.price,
        )


def chat(**values: Any) -> str:
    return "\n\n".join(f"[[ ## {k} ## ]]\n{v}" for k, v in values.items()) + (
        "\n\n[[ ## completed ## ]]"
    )


def test_outputs_named_like_the_metadata_read_back_as_outputs(server: OpenAIServer) -> None:
    # A priced model over real HTTP: the call has a cost, a route and a usage of its own.
    server.reply(Reply(content=chat(cost=3.5, path="a/b", usage="daily")))
    lm = sio.LM("openai/gpt-4o-mini", api_base=server.base_url, api_key="k", cache=False)
    pred = sio.Predict("item -> cost: float, path: str, usage: str", lm=lm)(item="pen")
    assert (pred.cost, pred.path, pred.usage) == (3.5, "a/b", "daily")
    assert (pred["cost"], pred["path"], pred["usage"]) == (3.5, "a/b", "daily")
    # The call's own metadata is under meta, whatever the outputs are called.
    assert pred.meta.route == "chat"
    assert pred.meta.usage == sio.Usage(prompt_tokens=11, completion_tokens=3, cached_tokens=4)
    assert pred.meta.cost is not None
    assert pred.meta.cost > 0
    assert pred.meta.cost != 3.5


@pytest.mark.parametrize("name", COLLIDING)
def test_any_output_name_reads_back_as_the_output(name: str) -> None:
    lm = PricedLM([chat(**{name: "the output"})])
    pred = sio.Predict(f"item -> {name}: str", lm=lm)(item="pen")
    assert getattr(pred, name) == "the output"
    assert pred[name] == "the output"
    assert pred == {name: "the output"}
    # The class still reaches every method and the metadata.
    assert sio.Prediction.to_dict(pred) == {name: "the output"}
    assert sio.Prediction.meta_of(pred).cost == 0.25
    if name != "meta":
        assert pred.meta.cost == 0.25


def test_the_former_names_are_read_only_fallbacks_to_meta() -> None:
    pred = sio.Predict("item -> answer: int", lm=PricedLM([chat(answer=4)]))(item="pen")
    meta = pred.meta
    assert isinstance(meta, sio.PredictionMeta)
    assert (pred.route, pred.path, pred.usage, pred.cost) == (
        meta.route,
        meta.route,
        meta.usage,
        meta.cost,
    )
    assert pred.responses == list(meta.responses)
    assert len(pred.responses) == 1
    assert pred.attempts == []
    assert meta.attempts == ()
    assert (pred.truncation, pred.max_tokens_reached) == (None, False)
    with pytest.raises(AttributeError, match="read-only"):
        pred.cost = 1.0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        meta.cost = 1.0  # type: ignore[misc]


def test_mapping_methods_work_when_no_output_has_their_name() -> None:
    pred = sio.Predict("item -> answer: int", lm=PricedLM([chat(answer=4)]))(item="pen")
    assert list(pred.keys()) == ["answer"]
    assert list(pred.items()) == [("answer", 4)]
    assert pred.get("missing", "default") == "default"
    assert dict(pred) == {"answer": 4}
    with pytest.raises(AttributeError, match="no field 'answr'; its fields: answer"):
        _ = pred.answr


def test_get_lm_usage_is_dspy_shaped_per_model() -> None:
    pred = sio.Predict("item -> answer: int", lm=PricedLM([chat(answer=4)]))(item="pen")
    assert pred.get_lm_usage() == {
        "priced/model": {
            "prompt_tokens": 10,
            "completion_tokens": 5,
            "total_tokens": 15,
            "prompt_tokens_details": {"cached_tokens": 2},
            "completion_tokens_details": {"reasoning_tokens": 0},
        }
    }


def test_get_lm_usage_adds_up_every_request_and_leaves_cache_hits_out() -> None:
    # A bad answer, re-asked once: two requests, both billed.
    lm = PricedLM(["no sections here", chat(answer=4)])
    pred = sio.Predict("item -> answer: int", lm=lm, max_retries=1)(item="pen")
    assert len(pred.meta.attempts) == 1
    assert pred.get_lm_usage()["priced/model"]["prompt_tokens"] == 20
    assert pred.meta.cost == 0.5
    hit = sio.LMResponse(
        completions=(sio.Completion("x"),), model="m", usage=sio.Usage(), cost=0.0, cached=True
    )
    assert sio.PredictionMeta(responses=(hit,)).lm_usage() == {}


def test_keyword_construction_as_dspy() -> None:
    pred = sio.Prediction(answer="4", cost="high", route="north")
    assert (pred.answer, pred.cost, pred.route) == ("4", "high", "north")
    assert pred.meta == sio.PredictionMeta()
    assert sio.Prediction({"a": 1}, b=2) == {"a": 1, "b": 2}
    assert pred.toDict() == {"answer": "4", "cost": "high", "route": "north"}
    assert repr(sio.Prediction(answer=4)) == "Prediction(answer=4)"


def test_to_dict_in_dspy_spelling_turns_models_into_dicts() -> None:
    from pydantic import BaseModel

    class Point(BaseModel):
        x: int

    pred = sio.Prediction(point=Point(x=1), points=[Point(x=2)])
    assert pred.toDict() == {"point": {"x": 1}, "points": [{"x": 2}]}
    assert pred.to_dict()["point"] == Point(x=1)  # the structio spelling keeps values


def test_completions_by_field_and_by_index() -> None:
    lm = sio.FakeLM([[{"answer": 1}, {"answer": 2}, {"answer": 3}]])
    pred = sio.Predict("q -> answer: int", lm=lm, n=3)(q="x")
    assert pred.completions.answer == [1, 2, 3]
    assert pred.completions[1].answer == 2
    assert pred.completions[1]["answer"] == 2
    assert [c["answer"] for c in pred.completions] == [1, 2, 3]
    assert pred.completions == [{"answer": 1}, {"answer": 2}, {"answer": 3}]
    assert len(pred.completions) == 3
    assert pred.completions[-1] == {"answer": 3}
    assert [p.answer for p in pred.completions[:2]] == [1, 2]
    with pytest.raises(AttributeError, match="no field 'answr'"):
        _ = pred.completions.answr


def test_completions_field_named_like_a_sequence_method() -> None:
    lm = sio.FakeLM([[{"count": 1, "index": 7}, {"count": 2, "index": 8}]])
    pred = sio.Predict("q -> count: int, index: int", lm=lm, n=2)(q="x")
    assert pred.completions.count == [1, 2]
    assert pred.completions.index == [7, 8]


@pytest.mark.parametrize("copier", [pickle.loads, copy.deepcopy])
def test_predictions_pickle_and_copy_with_their_metadata(copier: Any) -> None:
    lm = PricedLM([chat(answer=4, cost=2.0)])
    pred = sio.Predict("q -> answer: int, cost: float", lm=lm)(q="x")
    data = pickle.dumps(pred) if copier is pickle.loads else pred
    again = copier(data)
    assert again == pred
    assert (again.answer, again.cost) == (4, 2.0)
    assert again.meta == pred.meta
    assert again.get_lm_usage() == pred.get_lm_usage()


def test_a_prediction_with_reasking_attempts_pickles() -> None:
    lm = PricedLM(["no sections here", chat(answer=4)])
    pred = sio.Predict("item -> answer: int", lm=lm, max_retries=1)(item="pen")
    again = pickle.loads(pickle.dumps(pred))  # noqa: S301 - our own bytes
    assert again.meta.attempts[0].feedback == pred.meta.attempts[0].feedback
    assert str(again.meta.attempts[0].error) == str(pred.meta.attempts[0].error)


def test_reasoning_is_the_output_else_the_models_own() -> None:
    scripted = sio.Completion(chat(answer=4), reasoning="I added.")
    pred = sio.Predict("q -> answer: int", lm=sio.FakeLM([scripted]))(q="x")
    assert pred.reasoning == pred.lm_reasoning == "I added."
    both = sio.Completion(chat(reasoning="my steps", answer=4), reasoning="I added.")
    named = sio.Predict("q -> reasoning, answer: int", lm=sio.FakeLM([both]))(q="x")
    assert (named.reasoning, named.lm_reasoning) == ("my steps", "I added.")
