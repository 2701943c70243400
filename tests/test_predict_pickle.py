"""A Predict that travels: Predict, adapters and LMs through pickle and cloudpickle.

Ray, Spark and multiprocessing ship these objects to workers. What travels is their
configuration; what belongs to a process (locks, history, a cache's memory, clients) is
made anew where they land, and an API key travels only when it was given explicitly.
"""

from __future__ import annotations

import copy
import os
import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import cloudpickle
import pydantic
import pytest

import structio as sio
from structio.lm.cache import ResponseCache, default_cache
from structio.lm.types import Completion, LMResponse
from structio.signatures.signature import Signature

PICKLERS = [pytest.param(pickle, id="pickle"), pytest.param(cloudpickle, id="cloudpickle")]
ENV_KEY = "sk-env-key-that-must-stay-home-4242"
EXPLICIT_KEY = "sk-explicit-key-that-travels-7777"


def round_trip(module: Any, value: Any) -> Any:
    return module.loads(module.dumps(value))


class Ticket(pydantic.BaseModel):
    title: str
    severity: int


class Classify(sio.Signature):
    """Classify the ticket."""

    ticket: Ticket = sio.InputField()
    label: Literal["bug", "question"] = sio.OutputField()
    confidence: float = sio.OutputField(ge=0, le=1)


class Polite(sio.ChatAdapter):
    """A user's adapter: an option of its own and a hook that uses it."""

    def __init__(self, greeting: str = "Hello", *, fallback: Any = "json") -> None:
        super().__init__(fallback=fallback)
        self.greeting = greeting

    def format_user_message_content(
        self,
        signature: type[Signature],
        inputs: Mapping[str, Any],
        *,
        prefix: str = "",
        main_request: bool = False,
    ) -> str:
        base = super().format_user_message_content(
            signature, inputs, prefix=prefix, main_request=main_request
        )
        return f"{self.greeting}!\n{base}"


class Listed(sio.JSONAdapter):
    """An adapter whose option cannot be hashed: its plans live with the instance."""

    def __init__(self, tags: list[str] | None = None) -> None:
        super().__init__()
        self.tags = list(tags or [])

    def format_task_description(self, signature: type[Signature]) -> str:
        return super().format_task_description(signature) + f"\nTags: {', '.join(self.tags)}"


ADAPTERS = [
    pytest.param(lambda: sio.ChatAdapter(), id="chat"),
    pytest.param(lambda: sio.ChatAdapter(fallback=None, native_tools=False), id="chat-options"),
    pytest.param(lambda: sio.JSONAdapter(native_reasoning=False), id="json"),
    pytest.param(lambda: sio.XMLAdapter(), id="xml"),
    pytest.param(lambda: sio.CompactAdapter(), id="compact"),
    pytest.param(lambda: sio.ToolOutputAdapter(tool_name="answer_now", strict=False), id="tool"),
    pytest.param(lambda: Polite("Good morning", fallback=None), id="user-subclass"),
    pytest.param(lambda: Listed(["a", "b"]), id="unhashable-option"),
]
INPUTS = {"ticket": Ticket(title="It crashes", severity=3)}


@pytest.mark.parametrize("module", PICKLERS)
@pytest.mark.parametrize("make", ADAPTERS)
def test_adapters_round_trip_with_their_options(module: Any, make: Any) -> None:
    adapter = make()
    fresh = round_trip(module, adapter)  # never used
    assert type(fresh) is type(adapter)
    assert fresh == adapter
    assert fresh.to_dict() == adapter.to_dict()
    # Used, it holds the key of its memoised plans: a detail of this process.
    messages = adapter.format(Classify, inputs=INPUTS)
    used = round_trip(module, adapter)
    assert "_structio_plan_key" not in vars(used)
    assert used == adapter
    assert used.format(Classify, inputs=INPUTS) == messages
    assert fresh.format(Classify, inputs=INPUTS) == messages


def make_predict(lm: sio.BaseLM | None) -> sio.Predict:
    return sio.Predict(
        "ticket: str, history: list[str] -> label: Literal['bug', 'question'], score: int",
        lm=lm,
        adapter=sio.JSONAdapter(native_tools=False),
        demos=[{"ticket": "Where is the manual?", "history": [], "label": "question"}],
        name="triage",
        max_prompt_tokens=5000,
        truncation_step=2,
        max_retries=2,
        temperature=0.3,
        seed=7,
    )


@pytest.mark.parametrize("module", PICKLERS)
def test_a_predict_round_trips_and_asks_the_same(module: Any) -> None:
    replies = [{"label": "bug", "score": 3}] * 2
    predict = make_predict(sio.FakeLM(replies))
    copied = round_trip(module, predict)
    assert copied == predict
    assert copied.signature == predict.signature
    assert copied.signature.instructions == predict.signature.instructions
    assert copied.demos == predict.demos
    assert copied.adapter == predict.adapter
    assert (copied.params, copied.max_retries) == ({"temperature": 0.3, "seed": 7}, 2)
    assert (copied.name, copied.max_prompt_tokens, copied.truncation_step) == ("triage", 5000, 2)
    inputs = {"ticket": "The app crashes", "history": ["it worked yesterday"]}
    assert copied(**inputs) == predict(**inputs) == {"label": "bug", "score": 3}
    assert isinstance(copied.lm, sio.FakeLM)
    assert isinstance(predict.lm, sio.FakeLM)
    assert copied.lm is not predict.lm
    sent, original = copied.lm.calls[-1], predict.lm.calls[-1]
    assert sent.messages == original.messages
    assert sent.params == original.params


@pytest.mark.parametrize("module", PICKLERS)
def test_a_predict_of_a_class_signature_travels_by_reference(module: Any) -> None:
    predict = sio.Predict(Classify, adapter=Polite("Hi"), lm=sio.FakeLM([]))
    copied = round_trip(module, predict)
    assert copied.signature is Classify
    assert copied == predict


@pytest.mark.parametrize("module", PICKLERS)
def test_a_predict_without_lm_uses_the_configured_one_where_it_runs(module: Any) -> None:
    copied = round_trip(module, sio.Predict("q -> a"))
    assert copied.lm is None
    assert copied.adapter is None
    lm = sio.FakeLM([{"a": "yes"}])
    with sio.context(lm=lm):
        assert copied(q="?").a == "yes"
    assert lm.call_count == 1


def test_copying_a_predict_keeps_its_signature() -> None:
    predict = make_predict(sio.FakeLM([]))
    for copied in (copy.copy(predict), copy.deepcopy(predict)):
        assert copied.signature is predict.signature
        assert copied == predict


# -- LMs --------------------------------------------------------------------------------------


@pytest.mark.parametrize("module", PICKLERS)
def test_an_lm_round_trips_its_settings(module: Any) -> None:
    lm = sio.LM(
        "openai/gpt-4o-mini",
        temperature=0.2,
        max_tokens=300,
        num_retries=5,
        timeout=30.0,
        cache=False,
        backoff=0.1,
        max_backoff=2.0,
        context_window=8000,
        top_p=0.9,
    )
    assert lm.max_input_tokens == 8000
    copied = round_trip(module, lm)
    assert type(copied) is sio.LM
    assert copied.to_dict() == lm.to_dict()
    assert repr(copied) == repr(lm)
    assert copied.resolved_transport == lm.resolved_transport == "direct"
    assert copied.cache is False
    assert copied.max_input_tokens == 8000
    # The transport is chosen again where it lands.
    assert not {"_transport", "_route", "_capabilities", "history"} & set(lm.__getstate__())
    assert copied._transport is lm._transport
    # Anthropic's models go to their own transport (issue 32); litellm when named.
    claude = round_trip(module, sio.LM("anthropic/claude-3-5-haiku-latest", cache=False))
    assert claude.resolved_transport == "anthropic"
    litellm = round_trip(
        module, sio.LM("anthropic/claude-3-5-haiku-latest", cache=False, transport="litellm")
    )
    assert litellm.resolved_transport == "litellm"


@pytest.mark.parametrize("module", PICKLERS)
def test_an_lm_leaves_its_history_behind(module: Any) -> None:
    lm = sio.FakeLM(["one", "two", "three"], record=5)
    lm.history = type(lm.history)(maxlen=7)
    lm([{"role": "user", "content": "first"}])
    assert len(lm.history) == 1
    assert len(lm.calls) == 1
    copied = round_trip(module, lm)
    assert list(copied.history) == []
    assert copied.history.maxlen == 7
    assert list(copied.calls) == []
    assert copied.calls.maxlen == 5
    assert copied.call_count == 0
    # The script goes on where it was; each copy on its own.
    assert copied([{"role": "user", "content": "again"}]).text == "two"
    assert lm([{"role": "user", "content": "again"}]).text == "two"
    assert len(copied.calls) == 1
    assert len(copied.history) == 1


def test_a_fake_lm_with_a_function_travels_with_cloudpickle() -> None:
    lm = sio.FakeLM(lambda messages: f"echo: {messages[-1]['content']}")
    copied = round_trip(cloudpickle, lm)
    assert copied([{"role": "user", "content": "hi"}]).text == "echo: hi"
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(lm)  # a lambda has no name to import


@pytest.mark.parametrize("module", PICKLERS)
def test_a_key_from_the_environment_stays_home(
    module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    lm = sio.LM("openai/gpt-4o-mini", cache=False)
    predict = sio.Predict("q -> a", lm=lm)
    for payload in (module.dumps(lm), module.dumps(predict)):
        assert ENV_KEY.encode() not in payload
    copied = round_trip(module, lm)
    assert "api_key" not in copied.client


@pytest.mark.parametrize("module", PICKLERS)
def test_an_explicit_key_travels(module: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    lm = sio.LM("openai/gpt-4o-mini", api_key=EXPLICIT_KEY, cache=False)
    payload = module.dumps(sio.Predict("q -> a", lm=lm))
    assert ENV_KEY.encode() not in payload
    copied = module.loads(payload).lm
    assert copied.client["api_key"] == EXPLICIT_KEY
    assert EXPLICIT_KEY not in repr(copied)


# -- the response cache -----------------------------------------------------------------------


def response(text: str) -> LMResponse:
    return LMResponse(completions=(Completion(text, "stop"),), model="m")


@pytest.mark.parametrize("module", PICKLERS)
def test_a_cache_travels_as_its_directory(module: Any, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "shared", memory_size=10, memory_ttl=5.0)
    cache.set("k", response("from the parent"))
    lm = sio.LM("openai/gpt-4o-mini", cache=cache)
    copied = round_trip(module, lm).cache
    try:
        assert isinstance(copied, ResponseCache)
        assert copied is not cache
        assert copied.directory == cache.directory
        assert (copied.memory_size, copied.memory_ttl) == (10, 5.0)
        assert copied._memory == {}  # its memory stayed with the parent...
        hit = copied.get("k")  # ...and the disk they share answers
        assert hit is not None
        assert hit.text == "from the parent"
        copied.set("k2", response("from the worker"))
        found = cache.get("k2")
        assert found is not None
        assert found.text == "from the worker"
        # Every LM unpickled here on that directory shares one cache: one memory, one
        # connection (a Ray worker unpickles the Predict for every task).
        assert round_trip(module, lm).cache is copied
        other = round_trip(module, sio.LM("m", cache=ResponseCache(cache.directory)))
        assert other.cache is not copied  # other options: its own
    finally:
        copied.close()
        cache.close()


def test_a_relative_cache_directory_travels_as_an_absolute_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cache = ResponseCache("relative-cache")
    copied = round_trip(pickle, cache)
    assert copied.directory == tmp_path / "relative-cache"
    assert copied.directory.is_absolute()


def test_a_memory_cache_travels_empty() -> None:
    cache = ResponseCache(None, memory_size=3)
    cache.set("k", response("here only"))
    copied = round_trip(pickle, cache)
    assert copied is not cache
    assert copied.directory is None
    assert copied.memory_size == 3
    assert copied.get("k") is None
    assert round_trip(pickle, cache) is not copied  # nothing to share: each its own


@pytest.mark.parametrize("module", PICKLERS)
def test_cache_true_and_false_keep_their_meaning(
    module: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert round_trip(module, sio.LM("openai/gpt-4o-mini", cache=False)).cache is False
    default = round_trip(module, sio.LM("openai/gpt-4o-mini"))
    assert default.cache is True
    # True is the default cache of the process it runs in: $STRUCTIO_CACHE_DIR there.
    monkeypatch.setenv("STRUCTIO_CACHE_DIR", str(tmp_path / "worker-cache"))
    resolved = default._cache_for({})
    assert resolved is default_cache()
    assert resolved is not None
    assert resolved.directory == tmp_path / "worker-cache" / "responses"
    assert os.fspath(tmp_path) not in repr(module.dumps(default))


@pytest.mark.parametrize("module", PICKLERS)
def test_predictions_and_examples_travel_back_from_workers(module: Any) -> None:
    # What a worker sends back: predictions (with their call's metadata) and examples.
    lm = sio.FakeLM([[{"label": "bug", "score": 3}, {"label": "other", "score": 1}]])
    pred = sio.Predict("ticket -> label, score: int", lm=lm, n=2)(ticket="crash")
    copied = round_trip(module, pred)
    assert copied == pred
    assert copied.completions.label == ["bug", "other"]
    assert copied.meta == pred.meta
    example = sio.Example(ticket="crash", label="bug").with_inputs("ticket")
    assert round_trip(module, example).inputs() == {"ticket": "crash"}


@pytest.mark.parametrize("module", PICKLERS)
def test_a_chain_of_thought_round_trips(module: Any) -> None:
    cot = sio.ChainOfThought("question -> answer: int", temperature=0.1)
    copied = round_trip(module, cot)
    assert type(copied) is sio.ChainOfThought
    assert copied == cot
    assert list(copied.signature.output_fields) == ["reasoning", "answer"]
