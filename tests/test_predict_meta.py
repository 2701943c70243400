"""Outputs read back as themselves, whatever their names; how the call went is `pred.meta`."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from tests.wire.server import OpenAIServer, Reply

# Every name a prediction used for call metadata, and the Mapping methods (but `keys`, which
# no output may have: see test_an_output_named_keys_is_refused_where_it_is_declared).
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


# -- the mapping protocol, whatever the outputs are named ------------------------------------------

# What CPython, the standard library and structio call on a mapping, and DSPy's names.
MAPPING_NAMES = ["items", "values", "get", "to_dict", "toDict", "model_dump", "copy", "update"]


@pytest.mark.parametrize("name", [*MAPPING_NAMES, "count", "index"])
def test_dict_star_star_and_copies_work_whatever_the_outputs_are_named(name: str) -> None:
    lm = sio.FakeLM([[{name: ["a", "b"], "other": 1}, {name: ["c"], "other": 2}]])
    pred = sio.Predict(f"text -> {name}: list[str], other: int", lm=lm, n=2)(text="t")
    outputs = {name: ["a", "b"], "other": 1}
    assert getattr(pred, name) == ["a", "b"]  # the output, not the method
    assert dict(pred) == {**pred} == outputs
    assert (lambda **given: given)(**pred) == outputs
    merged: dict[str, Any] = {"before": 0}
    merged.update(pred)
    assert merged == {"before": 0, **outputs}
    # The methods, from the class.
    assert list(sio.Prediction.items(pred)) == list(outputs.items())
    assert list(sio.Prediction.values(pred)) == [["a", "b"], 1]
    assert sio.Prediction.get(pred, name) == ["a", "b"]
    assert sio.Prediction.get(pred, "missing", "default") == "default"
    assert sio.Prediction.to_dict(pred) == sio.Prediction.toDict(pred) == outputs
    assert json.loads(json.dumps(dict(pred))) == outputs
    for again in (pickle.loads(pickle.dumps(pred)), copy.copy(pred), copy.deepcopy(pred)):  # noqa: S301
        assert again == pred
        assert getattr(again, name) == ["a", "b"]
    # structio's own uses of a mapping: an Example, a demo, a nested value, the choices.
    assert sio.Example(pred).toDict() == outputs
    plain = sio.Example(row=pred).toDict()["row"]
    assert type(plain) is dict  # not the prediction itself
    assert plain == outputs
    demo = sio.Predict(f"text -> {name}: list[str], other: int", demos=[pred]).demos[0]
    assert demo == outputs
    assert [dict(choice) for choice in pred.completions] == [outputs, {name: ["c"], "other": 2}]
    assert getattr(pred.completions, name) == [["a", "b"], ["c"]]
    checked = sio.Predict("given: dict -> answer", lm=sio.FakeLM([{"answer": "ok"}]))
    assert checked(given=pred).answer == "ok"  # checked as a dict without pred.items()


@pytest.mark.parametrize("name", MAPPING_NAMES)
def test_a_run_writes_outputs_named_like_methods(name: str, tmp_path: Path) -> None:
    from structio.run import run_file

    lm = sio.FakeLM(lambda messages: {name: ["x"]})
    out = tmp_path / "out.jsonl"
    summary = run_file(
        sio.Predict(f"text -> {name}: list[str]", lm=lm), [{"text": "t"}], out, progress=False
    )
    assert (summary.done, summary.failed) == (1, [])
    assert json.loads(out.read_text(encoding="utf-8"))["outputs"] == {name: ["x"]}


def test_the_models_reasoning_is_not_an_output_named_lm_reasoning() -> None:
    scripted = sio.Completion(chat(lm_reasoning="an output"), reasoning="I thought.")
    pred = sio.Predict("q -> lm_reasoning", lm=sio.FakeLM([scripted]))(q="x")
    assert pred.lm_reasoning == "an output"
    assert pred.reasoning == "I thought."  # no output named reasoning: the model's own


@pytest.mark.parametrize(
    "declare",
    [
        lambda: sio.Predict("text -> keys: list[str]"),
        lambda: sio.Predict("text -> answer, keys"),
        lambda: sio.ChainOfThought("text -> keys: list[str]"),
        lambda: sio.Predict(sio.Signature("text -> answer").append("keys", sio.OutputField())),
        lambda: sio.Prediction(keys=["a"]),
        lambda: sio.Prediction({"keys": ["a"]}),
    ],
)
def test_an_output_named_keys_is_refused_where_it_is_declared(
    declare: Callable[[], object],
) -> None:
    with pytest.raises(sio.SignatureError) as info:
        declare()
    message = str(info.value)
    assert "an output named 'keys', which a Prediction cannot hold" in message
    assert "dict(pred) and {**pred} call pred.keys()" in message  # why
    assert "Rename it (e.g. key_list or keys_found" in message  # what to do


def test_keys_is_refused_before_any_request_and_only_as_an_output(tmp_path: Path) -> None:
    lm = sio.FakeLM([{"answer": "a"}])
    with pytest.raises(sio.SignatureError, match="QA, the signature of this Predict,"):
        sio.Predict(sio.Signature("text -> keys", name="QA"), lm=lm)
    assert len(lm.calls) == 0
    # A signature may still declare it (adapters and finetune files return plain dicts).
    assert sio.ChatAdapter().parse("text -> keys", "[[ ## keys ## ]]\nk") == {"keys": "k"}
    # An input named keys is no output: the prediction holds outputs only.
    pred = sio.Predict("keys: list[str] -> answer", lm=lm)(keys=["k"])
    assert dict(pred) == {"answer": "a"}
    # A saved prompt with such an output is refused as it loads.
    saved = tmp_path / "qa.json"
    data = sio.Predict("text -> answer").to_dict()
    data["signature"]["fields"][1]["name"] = "keys"
    saved.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(sio.SignatureError, match="an output named 'keys'"):
        sio.Predict.load(saved)


def test_an_example_keeps_its_methods_whatever_its_values_are_named() -> None:
    # An Example reads a value as an attribute only when no method has that name (as DSPy).
    ex = sio.Example(keys=["k"], items=["i"], values=["v"], get="g").with_inputs("keys")
    assert dict(ex) == {**ex} == {"keys": ["k"], "items": ["i"], "values": ["v"], "get": "g"}
    assert (ex["keys"], ex["items"], ex.get("get")) == (["k"], ["i"], "g")
    assert ex.inputs().toDict() == {"keys": ["k"]}
    assert ex.labels().keys() == ["items", "values", "get"]
