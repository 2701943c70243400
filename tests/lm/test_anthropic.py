"""Anthropic's Messages API written and read (`structio.lm._anthropic`), without a socket.

Each body is checked against the anthropic SDK's own request types, strict about keys
(`tests.wire.providers.anthropic_server.check_request`).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structio as sio
from structio.lm import _anthropic
from structio.lm._anthropic import messages_body, place_breakpoints, to_response, usage_of
from structio.lm.models import cost_of, direct_profile
from structio.lm.profile import ModelProfile
from structio.lm.types import Usage
from tests.wire.providers.anthropic_server import CacheSimulator, check_request, recorded

MODEL = "anthropic/claude-sonnet-4-5"


def body(messages: list[dict[str, Any]], **params: Any) -> dict[str, Any]:
    client = {"prompt_cache": params.pop("prompt_cache", True)}
    out = messages_body(MODEL, "claude-sonnet-4-5", messages, params, client, stream=False)
    check_request(out)
    return out


def test_the_sdk_check_refuses_a_misspelt_key() -> None:
    good = body([{"role": "user", "content": "hi"}], max_tokens=10)
    wrong = json.loads(json.dumps(good))
    wrong["messages"][0]["content"][0]["cache_contol"] = {"type": "ephemeral"}
    with pytest.raises(ValueError, match="cache_contol"):
        check_request(wrong)
    with pytest.raises(ValueError, match="output_format"):
        check_request({**good, "output_format": {"type": "json_schema", "schema": {}}})


def test_system_messages_become_system_blocks_and_same_roles_merge() -> None:
    out = body(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "a"},
            {"role": "user", "content": [{"type": "text", "text": "b"}]},
            {"role": "assistant", "content": "c"},
            {"role": "system", "content": [{"type": "text", "text": "Later."}]},
            {"role": "user", "content": "d"},
        ],
        prompt_cache=False,
    )
    assert out["system"] == [
        {"type": "text", "text": "Be brief."},
        {"type": "text", "text": "Later."},
    ]
    assert [turn["role"] for turn in out["messages"]] == ["user", "assistant", "user"]
    assert [block["text"] for block in out["messages"][0]["content"]] == ["a", "b"]


def test_parameters_in_anthropics_names() -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "f",
            "description": "F.",
            "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}},
            "strict": True,
        },
    }
    out = body(
        [{"role": "user", "content": "hi"}],
        max_tokens=100,
        temperature=0.2,
        top_p=0.9,
        stop="END",
        tools=[tool],
        tool_choice="required",
        parallel_tool_calls=False,
        user="u1",
        prompt_cache=False,
    )
    assert out["max_tokens"] == 100
    assert out["stop_sequences"] == ["END"]
    assert out["tools"] == [
        {
            "name": "f",
            "description": "F.",
            "input_schema": tool["function"]["parameters"],
            "strict": True,
        }
    ]
    assert out["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    assert out["metadata"] == {"user_id": "u1"}
    named = {"type": "function", "function": {"name": "f"}}
    assert body([{"role": "user", "content": "x"}], tools=[tool], tool_choice=named)[
        "tool_choice"
    ] == {"type": "tool", "name": "f"}
    assert body([{"role": "user", "content": "x"}], tools=[tool], tool_choice="none")[
        "tool_choice"
    ] == {"type": "none"}


def test_max_tokens_comes_from_the_call_the_map_or_the_default() -> None:
    assert body([{"role": "user", "content": "x"}])["max_tokens"] == 64000
    unknown = messages_body(
        "anthropic/claude-unknown",
        "claude-unknown",
        [{"role": "user", "content": "x"}],
        {},
        {},
        stream=False,
    )
    assert unknown["max_tokens"] == _anthropic.DEFAULT_MAX_TOKENS


def test_json_object_mode_is_asked_for_in_the_system_prompt() -> None:
    out = body([{"role": "user", "content": "x"}], response_format={"type": "json_object"})
    assert out["system"][-1]["text"] == "Answer with one JSON object and nothing else."
    assert "output_config" not in out


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"n": 3}, "n=3"),
        ({"logprobs": True}, "logprobs=True"),
        ({"top_logprobs": 2}, "top_logprobs=2"),
        ({"presence_penalty": 1.0}, "presence_penalty"),
        ({"seed": 7}, "seed=7"),
        ({"reasoning_effort": "extreme"}, "reasoning_effort='extreme'"),
        ({"reasoning_effort": "high", "max_tokens": 2000}, "thinking budget"),
        ({"reasoning_effort": "low", "temperature": 0}, "temperature"),
        (
            {
                "reasoning_effort": "low",
                "tools": [
                    {
                        "type": "function",
                        "function": {"name": "f", "parameters": {"type": "object"}},
                    }
                ],
                "tool_choice": "required",
            },
            "forced tool call",
        ),
        ({"response_format": {"type": "xml"}}, "response_format"),
    ],
)
def test_what_anthropic_does_not_take_is_a_configuration_error(
    params: dict[str, Any], words: str
) -> None:
    with pytest.raises(sio.ConfigurationError, match=rf"^{MODEL}: .*{words}"):
        body([{"role": "user", "content": "x"}], **params)


def test_content_it_cannot_read_is_a_configuration_error() -> None:
    audio = {"type": "input_audio", "input_audio": {"data": "AAA", "format": "wav"}}
    with pytest.raises(sio.ConfigurationError, match="input_audio"):
        body([{"role": "user", "content": [audio]}])
    word = {"type": "file", "file": {"file_data": "data:application/msword;base64,AAA"}}
    with pytest.raises(sio.ConfigurationError, match="a document is a PDF"):
        body([{"role": "user", "content": [word]}])


def test_breakpoints_end_the_stable_prefix_at_most_four() -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    turns: list[dict[str, Any]] = [{"role": "system", "content": "S"}]
    for i in range(4):
        turns += [{"role": "user", "content": f"u{i}"}, {"role": "assistant", "content": f"a{i}"}]
    turns.append({"role": "user", "content": "now"})
    out = body(turns, tools=[tool])
    marked = [json.dumps(b) for b in _all_blocks(out) if "cache_control" in b]
    assert len(marked) == _anthropic.MAX_BREAKPOINTS
    assert "cache_control" in out["tools"][-1]
    assert "cache_control" in out["system"][-1]
    messages = out["messages"]
    assert [m["content"][0]["text"] for m in messages if "cache_control" in m["content"][-1]] == [
        "a2",
        "a3",
    ]


def _all_blocks(out: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = [*out.get("tools", []), *out.get("system", [])]
    for message in out["messages"]:
        blocks.extend(message["content"])
    return blocks


def test_a_thinking_block_never_carries_a_breakpoint() -> None:
    thinking = {"type": "thinking", "thinking": "t", "signature": "sig"}
    out = body(
        [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "", "reasoning_items": [thinking], "tool_calls": []},
            {"role": "user", "content": "next"},
        ]
    )
    assert out["messages"][1]["content"] == [thinking]  # nothing else to mark


roles = st.lists(st.sampled_from(["system", "user", "assistant", "tool"]), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(roles)
def test_any_conversation_alternates_roles_and_keeps_four_breakpoints(sequence: list[str]) -> None:
    messages: list[dict[str, Any]] = []
    for i, role in enumerate(sequence):
        if role == "tool":
            messages.append({"role": "tool", "tool_call_id": f"t{i}", "content": "r"})
        else:
            messages.append({"role": role, "content": f"m{i}"})
    out = messages_body(MODEL, "claude-sonnet-4-5", messages, {}, {}, stream=False)
    kinds = [turn["role"] for turn in out["messages"]]
    assert all(a != b for a, b in itertools.pairwise(kinds))
    marked = [b for b in _all_blocks(out) if "cache_control" in b]
    assert len(marked) <= _anthropic.MAX_BREAKPOINTS
    if out["messages"]:  # the newest turn changes every call: never part of the prefix
        assert "cache_control" not in out["messages"][-1]["content"][-1]


def test_a_body_without_stream_serves_a_batch_and_with_it_a_stream() -> None:
    turns = [{"role": "user", "content": "hi"}]
    assert "stream" not in body(turns)
    streamed = messages_body(MODEL, "claude-sonnet-4-5", turns, {}, {}, stream=True)
    check_request(streamed)
    assert streamed["stream"] is True


# -- the answer ----------------------------------------------------------------------------------


def test_usage_counts_every_input_token_and_the_cache_apart() -> None:
    raw = recorded("cache_write_and_read.json")["usage"]
    assert usage_of(raw) == Usage(
        prompt_tokens=1532, completion_tokens=33, cached_tokens=1111, cache_write_tokens=418
    )


def test_cache_writes_cost_more_and_reads_less() -> None:
    usage = Usage(
        prompt_tokens=1000, completion_tokens=10, cached_tokens=600, cache_write_tokens=300
    )
    expected = 100 * 3e-06 + 600 * 3e-07 + 300 * 3.75e-06 + 10 * 1.5e-05
    assert cost_of(MODEL, usage) == pytest.approx(expected)
    plain = Usage(prompt_tokens=1000, completion_tokens=10)
    assert cost_of(MODEL, plain) == pytest.approx(1000 * 3e-06 + 10 * 1.5e-05)
    # Written at 1.25x the input price, read at 0.1x: the map's Anthropic prices.
    profile = direct_profile(MODEL)
    assert profile.cache_write_cost == pytest.approx(1.25 * 3e-06)
    assert profile.cached_input_cost == pytest.approx(0.1 * 3e-06)
    assert ModelProfile(input_cost=1.0, output_cost=0.0, cache_write_cost=2.0).cost(
        Usage(prompt_tokens=10, cache_write_tokens=4)
    ) == pytest.approx(6 + 8)


def test_old_usage_entries_still_load_and_new_ones_round_trip() -> None:
    assert Usage.from_dict({"prompt_tokens": 3}).cache_write_tokens == 0
    usage = Usage(prompt_tokens=5, cache_write_tokens=2)
    assert Usage.from_dict(usage.__dict__) == usage
    assert (usage + usage).cache_write_tokens == 4
    assert usage.as_openai()["cache_creation_input_tokens"] == 2
    assert "cache_creation_input_tokens" not in Usage(prompt_tokens=5).as_openai()


@pytest.mark.parametrize(
    ("reason", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_calls"),
        ("refusal", "content_filter"),
    ],
)
def test_stop_reasons_in_openais_words(reason: str, finish: str) -> None:
    data = {**recorded("native_output.json"), "stop_reason": reason}
    assert to_response(data, MODEL, "anthropic", 0.0, 1).completions[0].finish_reason == finish


def test_the_profile_of_a_claude_model_on_its_own_transport() -> None:
    lm = sio.LM(MODEL, api_key="k")
    assert lm.resolved_transport == "anthropic"
    profile = lm.profile
    assert profile.schema_dialect == "anthropic"
    assert (profile.tools, profile.parallel_tool_calls, profile.reasoning) == (True, True, True)
    assert (profile.json_object, profile.logprobs, profile.stream_usage) == (False, False, True)
    assert sio.LM(MODEL, api_key="k", transport="litellm").resolved_transport == "litellm"


def test_the_address_and_its_secrets() -> None:
    point = _anthropic.endpoint(
        MODEL, {"api_key": "k", "api_base": "https://user:pw@proxy.example/v1/"}
    )
    assert point.url == "https://user:pw@proxy.example/v1/messages"
    assert point.base == "https://user:pw@proxy.example"
    assert "user:pw" in point.secrets
    assert point.headers["x-api-key"] == "k"


def test_the_simulated_cache_reads_what_an_earlier_request_wrote() -> None:
    cache = CacheSimulator(minimum=10)
    long = "word " * 200
    first = body([{"role": "system", "content": long}, {"role": "user", "content": "a"}])
    second = body([{"role": "system", "content": long}, {"role": "user", "content": "b"}])
    written = cache.usage(first)
    assert written["cache_creation_input_tokens"] > 0
    assert written["cache_read_input_tokens"] == 0
    read = cache.usage(second)
    assert read["cache_read_input_tokens"] == written["cache_creation_input_tokens"]
    place_breakpoints(second)  # placing twice changes nothing
    assert cache.usage(second)["cache_read_input_tokens"] == read["cache_read_input_tokens"]
