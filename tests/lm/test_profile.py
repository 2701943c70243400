"""`ModelProfile`: derived from litellm's model map, overridden per LM, saved and pickled."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import structio as sio
from structio.lm import models
from structio.lm.models import direct_profile, map_profile, model_entry
from structio.lm.profile import TEXT_ONLY, ModelProfile, profile_from_entry

LOCAL = "http://127.0.0.1:9/v1"


def roundtrip(value: Any) -> Any:
    """``value`` pickled and unpickled here: the data is this test's own."""
    return pickle.loads(pickle.dumps(value))  # noqa: S301


# -- the value --------------------------------------------------------------------------------


def test_the_default_profile_supports_nothing_beyond_text() -> None:
    assert ModelProfile() == TEXT_ONLY
    assert not any(
        [
            TEXT_ONLY.json_schema,
            TEXT_ONLY.json_object,
            TEXT_ONLY.tools,
            TEXT_ONLY.parallel_tool_calls,
            TEXT_ONLY.reasoning,
            TEXT_ONLY.stream_usage,
            TEXT_ONLY.logprobs,
        ]
    )
    assert (TEXT_ONLY.schema_dialect, TEXT_ONLY.context_window, TEXT_ONLY.input_cost) == (
        None,
        None,
        None,
    )


def test_a_schema_taking_profile_has_a_dialect_and_only_it_does() -> None:
    assert ModelProfile(json_schema=True).schema_dialect == "openai-strict"
    assert ModelProfile(json_schema=True, schema_dialect="json-schema").schema_dialect == (
        "json-schema"
    )
    assert ModelProfile(schema_dialect="json-schema").schema_dialect is None
    plain = ModelProfile(json_schema=True, schema_dialect="json-schema")
    assert plain.replace(json_schema=False).schema_dialect is None
    assert plain.replace(tools=True).schema_dialect == "json-schema"  # untouched


@pytest.mark.parametrize("dialect", ["openai-strict", "json-schema", "anthropic", "gemini"])
def test_every_schema_dialect_is_a_profile_value(dialect: str) -> None:
    profile = ModelProfile(json_schema=True, schema_dialect=dialect)  # type: ignore[arg-type]
    assert profile.schema_dialect == dialect
    assert ModelProfile.from_dict(profile.to_dict()) == profile


def test_a_dialect_stays_while_schemas_stay_on() -> None:
    claude = ModelProfile(json_schema=True, schema_dialect="anthropic")
    # What the litellm transport does with the map's profile: json_schema said again.
    assert claude.replace(json_schema=True, tools=True).schema_dialect == "anthropic"
    assert claude.replace(json_schema=False).schema_dialect is None
    assert claude.replace(json_schema=False).replace(json_schema=True).schema_dialect == (
        "openai-strict"
    )
    assert TEXT_ONLY.replace(json_schema=True).schema_dialect == "openai-strict"


@pytest.mark.parametrize(
    ("provider", "dialect"),
    [
        ("openai", "openai-strict"),
        ("anthropic", "anthropic"),
        ("vertex_ai-anthropic_models", "anthropic"),
        ("gemini", "gemini"),
        ("vertex_ai-language-models", "gemini"),
        ("bedrock_converse", "openai-strict"),
    ],
)
def test_a_map_entry_chooses_its_providers_dialect(provider: str, dialect: str) -> None:
    entry = {"litellm_provider": provider, "supports_response_schema": True}
    assert profile_from_entry(entry).schema_dialect == dialect
    entry["supports_response_schema"] = False
    assert profile_from_entry(entry).schema_dialect is None


@pytest.mark.parametrize(
    ("model", "dialect"),
    [
        ("anthropic/claude-sonnet-4-5", "anthropic"),
        ("gemini/gemini-2.5-flash", "gemini"),
        ("gpt-4o-mini", "openai-strict"),
    ],
)
def test_the_map_profile_has_the_providers_dialect(model: str, dialect: str) -> None:
    assert model_entry(model) is not None, f"{model} is not in litellm's map any more"
    assert map_profile(model).schema_dialect == dialect
    assert direct_profile(model).schema_dialect == dialect


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"tools": 1}, "ModelProfile.tools must be True or False"),
        ({"context_window": 0}, "ModelProfile.context_window must be a positive int"),
        ({"max_output_tokens": True}, "max_output_tokens must be a positive int"),
        ({"input_cost": -1.0}, "ModelProfile.input_cost must be a non-negative number"),
        ({"schema_dialect": "xml"}, "schema_dialect must be one of openai-strict, json-schema"),
        ({"json_shema": True}, "'json_shema': not a field of ModelProfile; its fields are"),
    ],
)
def test_a_wrong_field_says_what_is_wrong(changes: dict[str, Any], words: str) -> None:
    with pytest.raises(sio.ConfigurationError, match=words.replace("(", r"\(")):
        TEXT_ONLY.replace(**changes)
    with pytest.raises(sio.ConfigurationError):
        sio.LM("openai/x", api_base=LOCAL, profile=changes)


def test_a_profile_round_trips_as_json_data() -> None:
    profile = ModelProfile(json_schema=True, tools=True, context_window=8192, input_cost=1e-6)
    assert ModelProfile.from_dict(profile.to_dict()) == profile
    assert ModelProfile.from_dict({"tools": True}) == ModelProfile(tools=True)
    with pytest.raises(sio.ConfigurationError, match="not a field of ModelProfile"):
        ModelProfile.from_dict({"vision": True})


def test_a_profile_prices_a_usage() -> None:
    usage = sio.Usage(prompt_tokens=1000, completion_tokens=200, cached_tokens=300)
    priced = ModelProfile(input_cost=2e-6, output_cost=8e-6, cached_input_cost=5e-7)
    assert priced.cost(usage) == pytest.approx(700 * 2e-6 + 300 * 5e-7 + 200 * 8e-6)
    assert ModelProfile(input_cost=2e-6, output_cost=8e-6).cost(usage) == pytest.approx(
        1000 * 2e-6 + 200 * 8e-6
    )
    assert TEXT_ONLY.cost(usage) is None


# -- derived from the model map ---------------------------------------------------------------


def test_a_map_entry_becomes_a_profile() -> None:
    entry = {
        "litellm_provider": "openai",
        "max_input_tokens": 1000,
        "max_output_tokens": 100,
        "input_cost_per_token": 1e-6,
        "output_cost_per_token": 2e-6,
        "cache_read_input_token_cost": 5e-7,
        "supports_response_schema": True,
        "supports_function_calling": True,
        "supports_parallel_function_calling": True,
        "supports_reasoning": False,
    }
    assert profile_from_entry(entry) == ModelProfile(
        json_schema=True,
        tools=True,
        parallel_tool_calls=True,
        context_window=1000,
        max_output_tokens=100,
        input_cost=1e-6,
        output_cost=2e-6,
        cached_input_cost=5e-7,
    )
    # What the map says wrongly or not at all is unknown, never a failure.
    assert profile_from_entry({"max_input_tokens": "big", "input_cost_per_token": -1}) == (
        TEXT_ONLY
    )


@pytest.mark.parametrize("model", ["gpt-4o-mini", "openai/o3-mini", "deepseek/deepseek-reasoner"])
def test_the_map_profile_is_what_the_map_says(model: str) -> None:
    found = model_entry(model)
    assert found is not None, f"{model} is not in litellm's map any more: pick another"
    entry = found[1]
    profile = map_profile(model)
    assert profile.json_schema == bool(entry.get("supports_response_schema"))
    assert profile.tools == bool(entry.get("supports_function_calling"))
    assert profile.parallel_tool_calls == bool(entry.get("supports_parallel_function_calling"))
    assert profile.reasoning == bool(entry.get("supports_reasoning"))
    assert profile.context_window == entry["max_input_tokens"]
    assert profile.max_output_tokens == entry["max_output_tokens"]
    assert profile.input_cost == entry["input_cost_per_token"]
    assert profile.output_cost == entry["output_cost_per_token"]
    usage = sio.Usage(prompt_tokens=100, completion_tokens=10)
    assert profile.cost(usage) == pytest.approx(models.cost_of(model, usage))


def test_the_direct_transport_adds_json_object_and_stream_usage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(models, "_MAP", {"local-model": {"litellm_provider": "hosted_vllm"}})
    models.model_info.cache_clear()
    try:
        assert map_profile("local-model") == TEXT_ONLY
        direct = direct_profile("local-model")
        assert (direct.json_object, direct.stream_usage, direct.json_schema) == (True, True, False)
        assert direct.logprobs is False  # a provider not known to return them
        # Unknown to the map: text only, plus what every direct server does.
        unknown = direct_profile("openai/not-a-model-anyone-ships")
        assert unknown == ModelProfile(json_object=True, stream_usage=True, logprobs=True)
    finally:
        models.model_info.cache_clear()


def test_logprobs_are_claimed_for_providers_known_to_return_them() -> None:
    assert direct_profile("gpt-4o-mini").logprobs is True
    assert direct_profile("groq/openai/gpt-oss-20b").logprobs is False


def test_an_lm_reads_its_profile_from_the_map() -> None:
    lm = sio.LM("gpt-4o-mini", api_base=LOCAL, cache=False)
    assert lm.resolved_transport == "direct"
    assert lm.profile == direct_profile("gpt-4o-mini")
    assert lm.supports_response_schema is lm.profile.json_schema is True
    assert lm.supports_json_mode is lm.profile.json_object is True
    assert lm.supports_function_calling is lm.profile.tools is True
    assert lm.supports_reasoning is lm.profile.reasoning is False
    assert lm.max_input_tokens == lm.profile.context_window == 128000


def test_the_litellm_transport_asks_litellm() -> None:
    lm = sio.LM("gpt-4o-mini", transport="litellm", cache=False)
    profile = lm.profile
    assert (profile.json_schema, profile.json_object, profile.stream_usage) == (True, True, True)
    assert (profile.tools, profile.parallel_tool_calls, profile.logprobs) == (True, True, True)
    assert profile.context_window == 128000
    assert profile.input_cost == map_profile("gpt-4o-mini").input_cost


# -- overridden per LM ----------------------------------------------------------------------


def test_a_dict_changes_only_the_fields_it_names() -> None:
    lm = sio.LM("gpt-4o-mini", api_base=LOCAL, profile={"tools": False, "reasoning": True})
    assert (lm.profile.tools, lm.profile.reasoning) == (False, True)
    assert lm.profile.json_schema is True  # from the map
    assert lm.profile.context_window == 128000
    assert (lm.supports_function_calling, lm.supports_reasoning) == (False, True)


def test_a_profile_replaces_the_derived_one_whole() -> None:
    mine = ModelProfile(json_schema=True, context_window=4096)
    lm = sio.LM("openai/my-model", api_base=LOCAL, profile=mine)
    assert lm.profile == mine
    assert lm.supports_json_mode is False  # not the direct transport's rule: the profile's


def test_context_window_overrides_the_window_of_the_profile() -> None:
    lm = sio.LM("gpt-4o-mini", api_base=LOCAL, context_window=8000, profile={"tools": False})
    assert lm.profile.context_window == lm.max_input_tokens == 8000
    assert lm.profile.tools is False
    local = sio.LM("openai/my-model", api_base=LOCAL, profile={"context_window": 2048})
    assert local.max_input_tokens == 2048


def test_the_capability_properties_are_read_only() -> None:
    lm = sio.LM("gpt-4o-mini", api_base=LOCAL)
    with pytest.raises(AttributeError):
        lm.supports_function_calling = False  # type: ignore[misc]


def test_a_pickled_lm_keeps_its_override_and_derives_the_rest_again() -> None:
    lm = sio.LM("gpt-4o-mini", api_base=LOCAL, profile={"tools": False})
    assert lm.profile.tools is False  # derived here, so cached on the instance
    state = lm.__getstate__()
    assert "_derived_profile" not in state
    copied = roundtrip(lm)
    assert copied.profile == lm.profile
    whole = sio.LM("openai/x", api_base=LOCAL, profile=ModelProfile(tools=True))
    assert roundtrip(whole).profile == ModelProfile(tools=True)


def test_to_dict_saves_the_override_and_from_dict_loads_it() -> None:
    plain = sio.LM("gpt-4o-mini", api_base=LOCAL)
    assert "profile" not in plain.to_dict()
    partial = sio.LM("gpt-4o-mini", api_base=LOCAL, profile={"json_schema": False})
    assert partial.to_dict()["profile"] == {"json_schema": False}
    loaded = sio.LM.from_dict(partial.to_dict(), trust_endpoint=True)
    assert loaded.profile == partial.profile
    assert loaded.profile.tools is True  # the rest still from the map
    mine = ModelProfile(json_schema=True, schema_dialect="json-schema", context_window=4096)
    whole = sio.LM("openai/my-model", api_base=LOCAL, profile=mine)
    data = whole.to_dict()
    assert data["profile"] == mine.to_dict()
    assert sio.LM.from_dict(data, trust_endpoint=True).profile == mine


# -- other models ---------------------------------------------------------------------------


class Local(sio.BaseLM):
    def _complete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> sio.LMResponse:
        return sio.LMResponse((sio.Completion("ok", "stop"),), self.model)


class Knowing(Local):
    @property
    def profile(self) -> ModelProfile:
        return ModelProfile(json_object=True, context_window=100)


def test_a_base_lm_supports_text_unless_told() -> None:
    assert Local("m").profile == TEXT_ONLY
    assert Local("m").max_input_tokens is None
    told = Local("m", profile={"tools": True})
    assert told.profile == ModelProfile(tools=True)
    assert told.supports_function_calling is True
    knowing = Knowing("m")
    assert (knowing.supports_json_mode, knowing.max_input_tokens) == (True, 100)
    with pytest.raises(sio.ConfigurationError, match="profile= takes a ModelProfile"):
        Local("m", profile="json")  # type: ignore[arg-type]


def test_fake_lm_takes_a_profile_and_its_shortcuts() -> None:
    assert sio.FakeLM([]).profile == TEXT_ONLY
    assert sio.FakeLM([], profile={"json_schema": True}).supports_response_schema is True
    shortcuts = sio.FakeLM([], supports_function_calling=True, supports_reasoning=True)
    assert shortcuts.profile == ModelProfile(tools=True, reasoning=True)
    both = sio.FakeLM([], profile=ModelProfile(json_object=True), supports_reasoning=True)
    assert both.profile == ModelProfile(json_object=True, reasoning=True)
    assert roundtrip(both).profile == both.profile
