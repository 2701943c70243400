"""DSPy's API-reference spellings: predictor state and config, tools, adapters, names."""

from __future__ import annotations

import pytest

import structio as dspy
from structio.exceptions import ConfigurationError, UsageError
from structio.testing import FakeLM


def weather(city: str, unit: str = "C") -> str:
    """Get the weather.

    Args:
        city: The city to look up.
    """
    return f"{city} {unit}"


def test_predict_config_is_its_params() -> None:
    predict = dspy.Predict("question -> answer", temperature=0.5)
    assert predict.config == predict.get_config() == {"temperature": 0.5}
    predict.update_config(max_tokens=10)
    assert predict.params == {"temperature": 0.5, "max_tokens": 10}
    predict.config["temperature"] = 1.0  # a copy: config changes through update_config
    assert predict.params["temperature"] == 0.5


def test_predict_reset_forgets_demos_and_lm() -> None:
    predict = dspy.Predict("question -> answer", lm=FakeLM(["x"]))
    predict.demos = [{"question": "q", "answer": "a"}]
    predict.reset()
    assert predict.demos == []
    assert predict.lm is None


def test_dump_state_and_load_state_round_trip() -> None:
    predict = dspy.ChainOfThought("question -> answer", temperature=0.3)
    predict.demos = [{"question": "q", "answer": "a", "reasoning": "r"}]
    state = predict.dump_state()
    assert state == predict.to_dict()
    fresh = dspy.ChainOfThought("question -> answer")
    assert fresh.load_state(state) is fresh
    assert fresh == predict
    with pytest.raises(ConfigurationError, match="the state holds a prompt for"):
        dspy.Predict("text -> label").load_state(state)


def test_tool_dspy_attributes() -> None:
    tool = dspy.Tool(weather)
    assert tool.arg_types == {"city": str, "unit": str}
    assert tool.arg_desc == {"city": "The city to look up."}
    assert tool.has_kwargs is False
    assert tool.format_as_litellm_function_call() == tool.to_openai()
    with pytest.raises(UsageError, match="docstring's Args"):
        dspy.Tool(weather, arg_desc={"city": "x"})


def test_tool_calls_dspy_spellings() -> None:
    calls = dspy.ToolCalls.from_dict_list([{"name": "weather", "args": {"city": "Oslo"}}])
    assert calls.tool_calls[0] == dspy.ToolCalls.ToolCall(name="weather", args={"city": "Oslo"})
    assert calls.execute([weather]) == ["Oslo C"]
    assert dspy.ToolCalls.description().startswith("Tool calls must be a JSON object")


@pytest.mark.parametrize("adapter", [dspy.ChatAdapter, dspy.JSONAdapter, dspy.XMLAdapter])
def test_adapters_take_no_callbacks_of_their_own(adapter: type) -> None:
    assert adapter(callbacks=None) == adapter(callbacks=[]) == adapter()
    with pytest.raises(ConfigurationError, match=r"structio.configure\(callbacks="):
        adapter(callbacks=[object()])


def test_use_json_adapter_fallback_is_fallback() -> None:
    assert dspy.ChatAdapter(use_json_adapter_fallback=False).fallback is None
    assert dspy.ChatAdapter(use_json_adapter_fallback=True).fallback == "json"


def test_dspy_names_alias_or_say_what_to_write() -> None:
    assert dspy.AdapterParseError is dspy.ParseError
    assert dspy.LMRateLimitError is dspy.RateLimitError
    assert dspy.Completions is dspy.predict.Completions
    for name, hint in [
        ("load", "Predict.load"),
        ("TwoStepAdapter", "JSONAdapter"),
        ("Code", "str"),
    ]:
        with pytest.raises(AttributeError, match=hint):
            getattr(dspy, name)
    assert not hasattr(dspy, "TwoStepAdapter")
    assert "AdapterParseError" not in dspy.__all__


def test_lm_copy_changes_settings_and_keeps_the_rest() -> None:
    lm = dspy.LM("openai/gpt-4o-mini", temperature=0, api_base="http://127.0.0.1:9/v1")
    lm.history.append(object())  # type: ignore[arg-type]
    copied = lm.copy(temperature=1.0, rollout_id=2, num_retries=0)
    assert type(copied) is dspy.LM
    assert copied.params == {"temperature": 1.0, "rollout_id": 2}
    assert copied.num_retries == 0
    assert copied.client == lm.client
    assert copied.cache is lm.cache
    assert len(copied.history) == 0
    assert len(lm.history) == 1
    assert lm.params == {"temperature": 0}  # the original is as it was
    other = lm.copy(model="openai/gpt-4o", temperature=None)  # None removes a setting
    assert other.model == "openai/gpt-4o"
    assert other.params == {}
    with pytest.raises(ConfigurationError, match="did you mean `temperature`"):
        lm.copy(temprature=1.0)


def test_any_lm_copies_with_its_own_history() -> None:
    lm = FakeLM(["a", "b"])
    lm("hi")
    copied = lm.copy(model="other")
    assert copied.model == "other"
    assert len(copied.history) == 0
    assert len(lm.history) == 1
    with pytest.raises(ConfigurationError, match=r"FakeLM\.copy\(temperature=\.\.\.\)"):
        lm.copy(temperature=1.0)


def test_prediction_from_completions_takes_either_form() -> None:
    listed = dspy.Prediction.from_completions([{"answer": "4"}, {"answer": "four"}])
    assert listed.answer == "4"
    assert listed.completions.answer == ["4", "four"]
    assert listed.completions[1].answer == "four"
    by_field = dspy.Prediction.from_completions({"answer": ["4", "four"], "n": [1, 2]})
    assert dict(by_field) == {"answer": "4", "n": 1}
    assert by_field.completions.n == [1, 2]
    with pytest.raises(dspy.SignatureError, match="differ in length"):
        dspy.Prediction.from_completions({"a": [1], "b": [1, 2]})
    with pytest.raises(dspy.SignatureError, match="one choice at least"):
        dspy.Prediction.from_completions([])


@pytest.mark.parametrize("adapter_class", [dspy.ChatAdapter, dspy.JSONAdapter, dspy.XMLAdapter])
def test_native_response_types_is_native_reasoning(adapter_class: type[dspy.ChatAdapter]) -> None:
    default = adapter_class(native_response_types=[dspy.Reasoning])
    assert repr(default) == repr(adapter_class())
    assert adapter_class(native_response_types=[]).native_reasoning is False
    with pytest.raises(ConfigurationError, match=r"only Reasoning .* not str"):
        adapter_class(native_response_types=[dspy.Reasoning, str])
    with pytest.raises(ConfigurationError, match="not both"):
        adapter_class(native_reasoning=True, native_response_types=[])


def test_settings_files_and_lm_state_say_structios_way() -> None:
    with pytest.raises(AttributeError, match=r"LM\.from_dict\(data\).*program\.save\(path\)"):
        dspy.load_settings("settings.pkl")  # type: ignore[attr-defined]
    lm = dspy.LM("openai/gpt-4o-mini", temperature=0.5, api_key="sk-secret")
    assert lm.dump_state() == lm.to_dict()
    assert "sk-secret" not in repr(lm.dump_state())


def test_prediction_copy_and_without_as_dspys() -> None:
    lm = FakeLM(["[[ ## reasoning ## ]]\nadd\n[[ ## answer ## ]]\n4"])
    pred = dspy.ChainOfThought("question -> answer", lm=lm)(question="2+2?")
    changed = pred.copy(answer="four")
    assert dict(changed) == {"reasoning": "add", "answer": "four"}
    assert pred.answer == "4"  # the original is as it was
    assert dspy.Prediction.meta_of(changed) is dspy.Prediction.meta_of(pred)
    assert pred.copy() == pred
    assert dict(pred.without("reasoning")) == {"answer": "4"}
    with pytest.raises(dspy.SignatureError, match="keys"):
        pred.copy(keys=1)
    # An output named `copy` reads back as itself; the method is the class's.
    odd = dspy.Prediction(copy="c", without="w")
    assert (odd.copy, odd.without) == ("c", "w")
    assert dict(dspy.Prediction.without(odd, "copy")) == {"without": "w"}


class Described(dspy.Signature):
    """Answer."""

    question: str = dspy.InputField(desc="a question")
    answer: str = dspy.OutputField()


def test_signature_state_is_dspys() -> None:
    state = Described.dump_state()
    # What DSPy 3.4.1's Signature.dump_state() gives for the same class.
    assert state == {
        "instructions": "Answer.",
        "fields": [
            {"prefix": "Question:", "description": "a question"},
            {"prefix": "Answer:", "description": "${answer}"},
        ],
    }
    assert Described.load_state(state) == Described
    assert Described.load_state(state).fields["answer"].desc is None
    state["instructions"] = "Answer in one word."
    state["fields"][1]["description"] = "one word"
    loaded = Described.load_state(state)
    assert loaded.instructions == "Answer in one word."
    assert loaded.fields["answer"].desc == "one word"
    assert Described.instructions == "Answer."  # a copy: the class is as it was
    with pytest.raises(dspy.SignatureError, match=r"as Signature\.dump_state"):
        Described.load_state({"fields": []})
