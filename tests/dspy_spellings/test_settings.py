"""DSPy's settings spellings, written as DSPy's documentation writes them.

Each program imports structio as ``dspy``: what works must do what DSPy's does, and what
structio does not take must stop at once with an error that says what to write instead.
"""

from __future__ import annotations

from typing import Any

import pytest

import structio as dspy
from structio.lm import MockTransport
from structio.lm.mock import MockRequest
from structio.settings import IGNORED, REFUSED
from tests.dspy_spellings.overlap import Overlap

# DSPy 3.4.1's `DEFAULT_CONFIG` (dspy/dsp/utils/settings.py), and `experimental`, which its
# documentation passes to `dspy.context`.
DSPY_KEYS = {
    "lm": None,
    "adapter": None,
    "rm": None,
    "branch_idx": 0,
    "trace": [],
    "callbacks": [],
    "async_max_workers": 8,
    "send_stream": None,
    "disable_history": False,
    "track_usage": False,
    "usage_tracker": None,
    "caller_predict": None,
    "caller_modules": None,
    "stream_listeners": [],
    "provide_traceback": False,
    "num_threads": 8,
    "max_errors": 10,
    "allow_tool_async_sync_conversion": False,
    "max_history_size": 10000,
    "max_trace_size": 10000,
    "warn_on_type_mismatch": True,
    "interpreter_factory": None,
    "experimental": False,
}

HONOURED = set(dspy.settings._CURRENT)  # read back as `dspy.settings.<name>`


ANSWER = "[[ ## reasoning ## ]]\n2 and 2\n\n[[ ## answer ## ]]\n4"


def billed_lm(prompt_tokens: int = 11, completion_tokens: int = 3, before: Any = None) -> dspy.LM:
    """An LM over a mock transport whose answers report usage, as a provider's do.

    ``before`` is called with each request before it is answered (outside any lock).
    """

    def answer(request: MockRequest) -> dict[str, Any]:
        if before is not None:
            before(request)
        return {
            "choices": [
                {"message": {"role": "assistant", "content": ANSWER}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
        }

    return dspy.LM("openai/test", transport=MockTransport(answer), cache=False)


def test_every_dspy_key_is_honoured_ignored_or_refused() -> None:
    for name in DSPY_KEYS:
        kinds = [name in HONOURED, name in IGNORED, name in REFUSED]
        assert kinds.count(True) == 1, name
    assert set(IGNORED) | set(REFUSED) | HONOURED == set(DSPY_KEYS)


def test_configure_track_usage_and_get_lm_usage_in_dspys_shape() -> None:
    dspy.configure(lm=billed_lm(), track_usage=True)
    assert dspy.settings.track_usage is True
    result = dspy.ChainOfThought("question -> answer")(question="What is 2+2?")
    usage = result.get_lm_usage()
    assert set(usage) == {"openai/test"}
    counts = usage["openai/test"]
    assert (counts["prompt_tokens"], counts["completion_tokens"]) == (11, 3)
    assert counts["total_tokens"] == 14


def test_context_track_usage_is_scoped_as_dspys() -> None:
    dspy.configure(lm=billed_lm(5, 2))
    assert dspy.settings.track_usage is False
    with dspy.context(track_usage=True):
        assert dspy.settings.track_usage is True
        result = dspy.Predict("question -> answer")(question="2+2?")
    assert dspy.settings.track_usage is False  # restored
    assert result.get_lm_usage()["openai/test"]["total_tokens"] == 7


def test_dspy_settings_reads_and_its_configure_and_context() -> None:
    lm = dspy.FakeLM([{"answer": "4"}])
    dspy.settings.configure(lm=lm, async_max_workers=4)
    assert dspy.settings.lm is lm
    assert dspy.settings.async_max_workers == 4
    adapter = dspy.JSONAdapter()
    with dspy.settings.context(adapter=adapter, num_threads=2):
        assert (dspy.settings.adapter, dspy.settings.num_threads) == (adapter, 2)
    assert (dspy.settings.adapter, dspy.settings.num_threads) == (None, 8)


def test_warn_on_type_mismatch_false_sends_values_unchecked() -> None:
    class MathSignature(dspy.Signature):
        """Perform a mathematical operation."""

        number: int = dspy.InputField()
        result: str = dspy.OutputField()

    lm = dspy.FakeLM([{"result": "42"}, {"result": "42"}])
    dspy.configure(lm=lm)
    predictor = dspy.Predict(MathSignature)
    # structio checks inputs by default, and refuses before any request...
    with pytest.raises(dspy.FormatError, match="number"):
        predictor(number="forty-two")
    assert len(lm.calls) == 0
    # ...unless told not to, as DSPy's documentation disables its type warnings.
    dspy.configure(warn_on_type_mismatch=False)
    assert predictor(number="forty-two").result == "42"
    assert "forty-two" in str(lm.calls[-1])
    with dspy.context(warn_on_type_mismatch=True), pytest.raises(dspy.FormatError):
        predictor(number="forty-two")


def test_num_threads_is_the_batch_default() -> None:
    for num_threads in (1, 2):
        overlap = Overlap(pairs=num_threads == 2)
        dspy.configure(lm=billed_lm(before=overlap), num_threads=num_threads)
        results = dspy.Predict("question -> answer").batch(
            [{"question": str(i)} for i in range(4)], progress=False
        )
        assert [r.answer for r in results] == ["4"] * 4
        assert overlap.most == num_threads


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_refused_dspy_key_says_what_to_write(name: str) -> None:
    before = dspy.settings.current_settings()
    with pytest.raises(dspy.UnknownSettingError, match=f"DSPy's setting `{name}`: ") as info:
        dspy.configure(**{name: DSPY_KEYS[name]})
    assert REFUSED[name] in str(info.value)
    with pytest.raises(TypeError, match=name):  # noqa: SIM117
        with dspy.context(**{name: DSPY_KEYS[name]}):
            pass
    assert dspy.settings.current_settings() == before
    with pytest.raises(AttributeError, match=name):
        getattr(dspy.settings, name)


@pytest.mark.parametrize("name", sorted(IGNORED))
def test_an_ignored_dspy_key_is_kept_and_read_back(name: str) -> None:
    assert getattr(dspy.settings, name) == DSPY_KEYS[name]
    with dspy.context(**{name: 1}):
        assert getattr(dspy.settings, name) == 1
    assert getattr(dspy.settings, name) == DSPY_KEYS[name]
    dspy.configure(**{name: 2})
    assert getattr(dspy.settings, name) == 2


def test_the_context_experimental_block_of_dspys_docs_runs() -> None:
    lm = dspy.FakeLM([{"answer": "4"}])
    with dspy.context(experimental=True, lm=lm):
        assert dspy.Predict("question -> answer")(question="2+2?").answer == "4"


def test_a_misspelt_key_names_the_closest_and_its_structio_way() -> None:
    with pytest.raises(dspy.UnknownSettingError, match="did you mean `track_usage`"):
        dspy.configure(track_usge=True)
    with pytest.raises(dspy.UnknownSettingError, match="did you mean `max_history_size`") as info:
        dspy.configure(max_history=5)
    assert "history_size=N" in str(info.value)  # structio's way, for DSPy's key


@pytest.mark.parametrize(
    ("name", "value"),
    [("track_usage", "yes"), ("num_threads", 0), ("async_max_workers", True)],
)
def test_a_wrong_value_is_refused(name: str, value: Any) -> None:
    with pytest.raises(dspy.ConfigurationError, match=name):
        dspy.configure(**{name: value})


def test_track_usage_get_total_tokens_and_set_lm_usage_as_a_dspy_module_does() -> None:
    lm = billed_lm(4, 1)
    dspy.configure(lm=lm, track_usage=True)
    qa = dspy.Predict("question -> answer")
    with dspy.track_usage() as usage_tracker:
        qa(question="one")
        output = qa(question="two")
    tokens = usage_tracker.get_total_tokens()
    assert tokens["openai/test"]["total_tokens"] == 10  # both calls
    assert output.get_lm_usage()["openai/test"]["total_tokens"] == 5  # its own call
    output.set_lm_usage(tokens)
    assert output.get_lm_usage() == tokens
    assert output.meta.usage.total_tokens == 5  # the call's own usage is kept


def test_get_total_tokens_leaves_out_a_model_of_cache_hits_only() -> None:
    def answer(request: MockRequest) -> dict[str, Any]:
        return {"choices": [{"message": {"content": ANSWER}}], "usage": {"prompt_tokens": 2}}

    lm = dspy.LM("openai/cached", transport=MockTransport(answer))
    dspy.configure(lm=lm)
    dspy.Predict("question -> answer")(question="once")
    with dspy.track_usage() as usage:
        again = dspy.Predict("question -> answer")(question="once")
    assert again.meta.responses[-1].cached
    assert usage.calls == 1
    assert usage.get_total_tokens() == {}
    assert again.get_lm_usage() == {}


def test_dspy_settings_copy_and_config() -> None:
    lm = dspy.FakeLM([])
    with dspy.context(lm=lm, experimental=True):
        snapshot = dspy.settings.copy()
        assert snapshot == dspy.settings.config
    assert (snapshot["lm"], snapshot["experimental"], snapshot["num_threads"]) == (lm, True, 8)
    assert set(snapshot) == HONOURED | set(IGNORED)
    assert dspy.settings.config["lm"] is None  # a copy: the block's values are gone


@pytest.mark.parametrize("name", ["save", "load", "thread_local_overrides"])
def test_dspys_other_settings_attributes_say_what_to_use(name: str) -> None:
    with pytest.raises(AttributeError, match=f"{name}'?: "):
        getattr(dspy.settings, name)


async def async_weather(city: str) -> str:
    """Get weather information asynchronously."""
    import asyncio

    await asyncio.sleep(0)
    return f"The weather in {city} is sunny"


def test_allow_tool_async_sync_conversion_in_a_context() -> None:
    """As DSPy's tools page writes it: inside the block, ``tool(...)`` runs an async tool."""
    tool = dspy.Tool(async_weather)
    with dspy.context(allow_tool_async_sync_conversion=True):
        assert dspy.settings.allow_tool_async_sync_conversion is True
        result = tool(city="New York")
        call = dspy.ToolCalls.from_dict_list([{"name": "async_weather", "args": {"city": "Oslo"}}])
        assert call.tool_calls[0].execute([tool]) == "The weather in Oslo is sunny"
    assert result == "The weather in New York is sunny"
    assert dspy.settings.allow_tool_async_sync_conversion is False  # restored
    with pytest.raises(dspy.UsageError, match=r"await tool\.acall"):
        tool(city="New York")


def test_allow_tool_async_sync_conversion_configured_holds_in_every_thread() -> None:
    import threading

    tool = dspy.Tool(async_weather)
    dspy.configure(allow_tool_async_sync_conversion=True)
    results: list[str] = []
    worker = threading.Thread(target=lambda: results.append(tool(city="Paris")))
    worker.start()
    worker.join()
    assert results == ["The weather in Paris is sunny"]
    with dspy.context(allow_tool_async_sync_conversion=False), pytest.raises(dspy.UsageError):
        tool(city="Paris")  # a scope says otherwise for its block
    with pytest.raises(dspy.ConfigurationError, match="True or False"):
        dspy.configure(allow_tool_async_sync_conversion="yes")
