"""Reasoning, reasoning tokens, tool calls and capabilities at the provider boundary (offline).

The same behaviour over a real server, both transports, is in
tests/wire/test_lm_tools_reasoning.py.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import io
import json
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from structio.lm import _http, _litellm, _litellm_mcp
from structio.lm._stream import StreamAssembler, reasoning_of, usage_of
from structio.lm.cache import cache_key
from structio.lm.models import cost_of, model_info

MESSAGES = [{"role": "user", "content": "hi"}]
CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
}
TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {}}}


# -- the types ------------------------------------------------------------------------------


def test_new_fields_come_last_so_positional_completions_keep_their_meaning() -> None:
    assert [f.name for f in dataclasses.fields(sio.Completion)] == [
        "text",
        "finish_reason",
        "tool_calls",
        "reasoning",
        "logprobs",
        "reasoning_items",
    ]
    old_style = sio.Completion("4", "stop", (CALL,))
    assert (old_style.text, old_style.finish_reason, old_style.tool_calls) == ("4", "stop", (CALL,))
    assert old_style.reasoning is None
    assert sio.Completion("4", "stop", None, "because").reasoning == "because"
    assert old_style.logprobs is None
    assert old_style.reasoning_items is None


def test_reasoning_tokens_are_summed_and_inside_completion_tokens() -> None:
    one = sio.Usage(prompt_tokens=10, completion_tokens=30, cached_tokens=2, reasoning_tokens=20)
    two = sio.Usage(prompt_tokens=1, completion_tokens=5, reasoning_tokens=4)
    assert one + two == sio.Usage(11, 35, 2, 24)
    assert (one + two).total_tokens == 46  # prompt + completion: reasoning not added again
    assert sio.Usage(1, 2, 3) == sio.Usage(1, 2, 3, 0)  # positional constructions unchanged
    # OpenAI bills reasoning as completion tokens: the price does not change with the split.
    plain = sio.Usage(prompt_tokens=1000, completion_tokens=200)
    thinking = sio.Usage(prompt_tokens=1000, completion_tokens=200, reasoning_tokens=150)
    assert cost_of("gpt-4o-mini", thinking) == cost_of("gpt-4o-mini", plain) is not None


def test_usage_of_reads_reasoning_tokens() -> None:
    raw = {
        "prompt_tokens": 7,
        "completion_tokens": 40,
        "prompt_tokens_details": {"cached_tokens": 3},
        "completion_tokens_details": {"reasoning_tokens": 32, "audio_tokens": 0},
    }
    assert usage_of(raw) == sio.Usage(7, 40, 3, 32)
    assert usage_of({"prompt_tokens": 7, "completion_tokens_details": None}) == sio.Usage(7)
    assert usage_of(None) == sio.Usage()


def test_reasoning_of_reads_either_spelling_once() -> None:
    assert reasoning_of({"reasoning_content": "a"}) == "a"
    assert reasoning_of({"reasoning": "b"}) == "b"
    assert reasoning_of({"reasoning_content": "a", "reasoning": "a"}) == "a"
    assert reasoning_of({"reasoning_content": None, "reasoning": "b"}) == "b"
    assert reasoning_of({"reasoning_content": "", "content": "x"}) is None
    assert reasoning_of({"reasoning": {"effort": "low"}}) is None  # not text: not reasoning


# -- the cache ------------------------------------------------------------------------------


def full_response() -> sio.LMResponse:
    return sio.LMResponse(
        completions=(
            sio.Completion(
                "",
                "tool_calls",
                (CALL,),
                "I need the weather.",
                reasoning_items=({"type": "thinking", "thinking": "w", "signature": "s"},),
            ),
        ),
        model="m",
        usage=sio.Usage(5, 30, 0, 25),
        cost=0.1,
    )


def test_the_cache_keeps_reasoning_tool_calls_and_reasoning_tokens(tmp_path: Path) -> None:
    response = full_response()
    assert sio.LMResponse.from_dict(json.loads(json.dumps(response.to_dict()))) == response
    cache = sio.ResponseCache(tmp_path / "c")
    cache.set("k", response)
    cache.close()
    assert sio.ResponseCache(tmp_path / "c").get("k") == response


def test_entries_cached_before_reasoning_still_load(tmp_path: Path) -> None:
    old = {  # what to_dict wrote before reasoning and reasoning_tokens existed
        "completions": [{"text": "hi", "finish_reason": "stop", "tool_calls": None}],
        "model": "m",
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "cached_tokens": 0},
        "cost": 0.5,
        "cached": False,
        "latency": 0.2,
    }
    loaded = sio.LMResponse.from_dict(old)
    assert loaded[0] == sio.Completion("hi", "stop")
    assert loaded[0].reasoning is None
    assert loaded.usage == sio.Usage(3, 1, 0, 0)
    cache = sio.ResponseCache(tmp_path / "c")
    cache.set("k", full_response())
    cache._disk_cache().set("old", json.dumps(old))
    fresh = sio.ResponseCache(tmp_path / "c")
    assert fresh.get("old") == loaded


def test_tools_media_and_reasoning_params_are_part_of_the_key() -> None:
    base = cache_key("m", MESSAGES, {"tools": [TOOL]})
    assert base == cache_key("m", MESSAGES, {"tools": [TOOL]})
    other_tool = {"type": "function", "function": {"name": "get_time", "parameters": {}}}
    variants: list[tuple[list[dict[str, Any]], dict[str, Any]]] = [
        (MESSAGES, {}),
        (MESSAGES, {"tools": [other_tool]}),
        (MESSAGES, {"tools": [TOOL], "tool_choice": "required"}),
        (MESSAGES, {"tools": [TOOL], "tool_choice": "auto"}),
        (MESSAGES, {"tools": [TOOL], "parallel_tool_calls": False}),
        (MESSAGES, {"tools": [TOOL], "reasoning_effort": "high"}),
        ([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], {"tools": [TOOL]}),
        (
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "hi"},
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
                    ],
                }
            ],
            {"tools": [TOOL]},
        ),
        (
            [
                *MESSAGES,
                {"role": "assistant", "content": None, "tool_calls": [CALL]},
                {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
            ],
            {"tools": [TOOL]},
        ),
        (
            [
                *MESSAGES,
                {"role": "assistant", "content": None, "tool_calls": [CALL]},
                {"role": "tool", "tool_call_id": "call_1", "content": "rainy"},
            ],
            {"tools": [TOOL]},
        ),
    ]
    keys = {cache_key("m", messages, params) for messages, params in variants}
    assert len(keys) == len(variants)
    assert base not in keys


# -- streams put back together --------------------------------------------------------------


def chunk(delta: dict[str, Any], index: int = 0, finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": index, "delta": delta, "finish_reason": finish}]}


def test_the_assembler_keeps_reasoning_apart_from_the_text() -> None:
    assembler = StreamAssembler("m", "openai")
    given = [
        assembler.feed_chunk(chunk({"role": "assistant", "content": None})),
        assembler.feed_chunk(chunk({"reasoning_content": "First, "})),
        assembler.feed_chunk(chunk({"reasoning_content": "think.", "reasoning": "think."})),
        assembler.feed_chunk(chunk({"reasoning": " Then answer."})),
        assembler.feed_chunk(chunk({"content": "4"})),
        assembler.feed_chunk(chunk({}, finish="stop")),
    ]
    assembler.feed_chunk(
        {
            "choices": [],
            "usage": {
                "prompt_tokens": 5,
                "completion_tokens": 20,
                "completion_tokens_details": {"reasoning_tokens": 12},
            },
        }
    )
    assert given == ["", "", "", "", "4", ""]
    response = assembler.response(0.1, 1)
    assert response[0] == sio.Completion("4", "stop", None, "First, think. Then answer.")
    assert response.usage == sio.Usage(5, 20, 0, 12)


def test_the_assembler_merges_tool_call_deltas_by_index() -> None:
    assembler = StreamAssembler("m", "openai")
    second = {"id": "call_2", "type": "function", "function": {"name": "t", "arguments": "{}"}}
    for delta in (
        {"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather"}},
        {"index": 1, **second},
        {"index": 0, "function": {"arguments": '{"city": '}},
        {"index": 0, "function": {"arguments": '"Paris"}'}},
    ):
        assert assembler.feed_chunk(chunk({"content": None, "tool_calls": [delta]})) == ""
    assembler.feed_chunk(chunk({}, finish="tool_calls"))
    (completion,) = assembler.response(0.0, 1)
    assert completion.text == ""
    assert completion.tool_calls == (CALL, second)


def test_the_assembler_reads_whole_calls_sent_without_an_index() -> None:
    assembler = StreamAssembler("m", "openai")
    second = {"id": "call_2", "type": "function", "function": {"name": "t", "arguments": "{}"}}
    assembler.feed_chunk(chunk({"tool_calls": [CALL, second]}))
    assembler.feed_chunk(chunk({}, finish="tool_calls"))
    assert assembler.response(0.0, 1)[0].tool_calls == (CALL, second)


# -- the transports' readers ----------------------------------------------------------------


def test_the_direct_reader_of_a_tool_call_reply() -> None:
    data = {
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [CALL],
                    "reasoning_content": "Weather needs a tool.",
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 9, "completion_tokens_details": None},
    }
    response = _http.to_response(data, "openai/test", "openai", 0.1, 1)
    assert response[0] == sio.Completion("", "tool_calls", (CALL,), "Weather needs a tool.")
    assert response.usage == sio.Usage(3, 9)


def litellm_response(message: dict[str, Any], usage: dict[str, Any] | None = None) -> Any:
    litellm = _litellm.get_litellm()
    return litellm.ModelResponse(
        choices=[{"index": 0, "message": message, "finish_reason": "stop"}],
        usage=usage or {"prompt_tokens": 4, "completion_tokens": 30, "total_tokens": 34},
    )


def test_the_litellm_reader_joins_thinking_blocks_without_reasoning_content() -> None:
    blocks = [
        {"type": "thinking", "thinking": "Step one.", "signature": "s1"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "thinking", "thinking": "Step two.", "signature": "s2"},
    ]
    raw = litellm_response({"role": "assistant", "content": "4", "thinking_blocks": blocks})
    raw.choices[0].message.reasoning_content = None  # as Anthropic's reply may leave it
    assert _litellm.to_response(raw, "anthropic/x", 0.1)[0].reasoning == "Step one.\n\nStep two."
    # The blocks themselves, signatures and redacted data included, to be replayed.
    items = _litellm.to_response(raw, "anthropic/x", 0.1)[0].reasoning_items
    assert [dict(item) for item in items or ()] == blocks
    both = litellm_response(
        {
            "role": "assistant",
            "content": "4",
            "reasoning_content": "Step one. Step two.",
            "thinking_blocks": blocks,
        }
    )
    assert _litellm.to_response(both, "anthropic/x", 0.1)[0].reasoning == "Step one. Step two."


def test_the_litellm_reader_of_reasoning_tokens_and_null_content() -> None:
    usage = {
        "prompt_tokens": 4,
        "completion_tokens": 30,
        "total_tokens": 34,
        "completion_tokens_details": {"reasoning_tokens": 26},
    }
    raw = litellm_response({"role": "assistant", "content": None, "tool_calls": [CALL]}, usage)
    response = _litellm.to_response(raw, "openai/test", 0.1)
    assert response.text == ""
    assert [dict(call) for call in response[0].tool_calls or ()] == [CALL]
    assert response.usage == sio.Usage(4, 30, 0, 26)
    assert response[0].reasoning is None


# -- litellm's MCP gateway ------------------------------------------------------------------


def test_the_skip_flag_is_detected_from_litellms_own_code() -> None:
    litellm = _litellm.get_litellm()
    source = inspect.getsource(inspect.unwrap(litellm.completion))
    reads_it = '"_skip_mcp_handler"' in source
    assert reads_it == _litellm._SKIPS_MCP


def test_the_gateway_is_skipped_only_for_requests_without_mcp_tools(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _litellm.get_litellm()
    monkeypatch.setattr(_litellm, "_SKIPS_MCP", True)

    def args(**params: Any) -> dict[str, Any]:
        return _litellm.completion_args("openai/test", MESSAGES, params, 10.0)

    assert args(tools=[TOOL])["_skip_mcp_handler"] is True
    assert "_skip_mcp_handler" not in args()
    assert "_skip_mcp_handler" not in args(tools=[])
    mcp_tool = {"type": "mcp", "server_url": "litellm_proxy/mcp/github", "server_label": "gh"}
    assert "_skip_mcp_handler" not in args(tools=[TOOL, mcp_tool])
    monkeypatch.setattr(_litellm, "_SKIPS_MCP", False)  # a litellm that does not read it
    assert "_skip_mcp_handler" not in args(tools=[TOOL])


def test_a_missing_mcp_is_found_however_litellm_wrapped_it() -> None:
    missing = ModuleNotFoundError("No module named 'mcp'", name="mcp")
    wrapped = RuntimeError("Connection error.")  # as litellm's acompletion wraps it
    wrapped.__cause__ = missing
    assert _litellm_mcp.missing_mcp(wrapped) is missing
    context = RuntimeError("Connection error.")
    context.__context__ = missing
    assert _litellm_mcp.missing_mcp(context) is missing
    submodule = ModuleNotFoundError("No module named 'mcp_types.version'", name="mcp_types")
    assert _litellm_mcp.missing_mcp(submodule) is submodule
    assert _litellm_mcp.missing_mcp(ModuleNotFoundError("x", name="mcpx")) is None
    assert _litellm_mcp.missing_mcp(ValueError("mcp")) is None
    error = _litellm_mcp.mcp_error({"tools": [{"type": "mcp"}]}, missing)
    assert isinstance(error, sio.ConfigurationError)
    assert "tools of type 'mcp' go through litellm's MCP gateway" in str(error)


# -- capabilities ---------------------------------------------------------------------------


def test_base_lm_claims_no_tools_and_no_reasoning() -> None:
    lm = sio.FakeLM(["x"])
    assert (lm.profile.tools, lm.profile.reasoning) == (False, False)
    assert (lm.supports_function_calling, lm.supports_reasoning) == (False, False)
    scripted = sio.FakeLM(["x"], supports_function_calling=True, supports_reasoning=True)
    assert (scripted.supports_function_calling, scripted.supports_reasoning) == (True, True)


@pytest.mark.parametrize(
    ("model", "tools", "reasoning"),
    [
        ("gpt-4o-mini", True, False),
        ("openai/o3-mini", True, True),
        ("deepseek/deepseek-reasoner", False, True),
        ("openai/gpt-3.5-turbo-instruct", False, False),
        ("openai/not-a-model-anyone-ships", False, False),
    ],
)
def test_lm_capabilities_come_from_the_model_map(model: str, tools: bool, reasoning: bool) -> None:
    info = model_info(model)
    if info is not None:
        assert (info.supports_function_calling, info.supports_reasoning) == (tools, reasoning)
    direct = sio.LM(model, api_base="http://127.0.0.1:1/v1", cache=False)
    assert direct.resolved_transport == "direct"
    assert (direct.supports_function_calling, direct.supports_reasoning) == (tools, reasoning)


@pytest.mark.parametrize("model", ["gpt-4o-mini", "openai/o3-mini", "deepseek/deepseek-reasoner"])
def test_litellm_route_capabilities_are_litellms(model: str) -> None:
    litellm = _litellm.get_litellm()
    lm = sio.LM(model, transport="litellm", cache=False)
    assert lm.supports_function_calling == litellm.supports_function_calling(model=model)
    assert lm.supports_reasoning == litellm.supports_reasoning(model=model)
    info = model_info(model)
    assert info is not None
    assert (info.supports_function_calling, info.supports_reasoning) == (
        lm.supports_function_calling,
        lm.supports_reasoning,
    )


# -- FakeLM and the history -----------------------------------------------------------------


def test_fake_lm_returns_a_scripted_completion_as_given() -> None:
    scripted = sio.Completion("", "tool_calls", (CALL,), "I need the weather.")
    lm = sio.FakeLM([scripted, scripted, scripted])
    assert lm(MESSAGES)[0] is scripted
    items = list(lm.stream(MESSAGES))
    assert len(items) == 1  # no text: the stream is the response alone
    assert isinstance(items[0], sio.LMResponse)
    assert items[0][0] is scripted

    async def astream() -> list[Any]:
        return [item async for item in lm.astream(MESSAGES)]

    (last,) = asyncio.run(astream())
    assert isinstance(last, sio.LMResponse)
    assert last[0] is scripted


def test_fake_lm_streams_the_text_only() -> None:
    scripted = sio.Completion("The answer is 4.", "stop", reasoning="2+2 is 4.")
    items = list(sio.FakeLM([scripted], chunk_size=5).stream(MESSAGES))
    assert "".join(item for item in items if isinstance(item, str)) == "The answer is 4."
    assert isinstance(items[-1], sio.LMResponse)
    assert items[-1][0].reasoning == "2+2 is 4."


def test_history_redacts_and_shows_the_reasoning_apart() -> None:
    scripted = sio.Completion(
        "The answer is 4.", "stop", ({**CALL, "id": "sk-secret-42"},), "I saw sk-secret-42.\nFine."
    )
    lm = sio.FakeLM([scripted])
    response = lm(MESSAGES, api_key="sk-secret-42")
    assert response[0] is scripted  # the caller gets what came back
    recorded = lm.history[-1].response[0]
    assert recorded.reasoning == "I saw [redacted].\nFine."
    assert recorded.tool_calls is not None
    assert recorded.tool_calls[0]["id"] == "[redacted]"
    printed = io.StringIO()
    sio.inspect_history(1, file=printed)
    shown = printed.getvalue()
    assert "sk-secret-42" not in shown
    reasoning = shown.index("reasoning:\n  I saw [redacted].\n  Fine.\n")
    assert shown.index("Response (finish reason: stop):") < reasoning
    assert reasoning < shown.index("The answer is 4.") < shown.index("tool calls:")


def test_history_without_secrets_keeps_the_completion() -> None:
    scripted = sio.Completion("4", "stop", reasoning="thinking")
    lm = sio.FakeLM([scripted])
    lm(MESSAGES)
    assert lm.history[-1].response[0] is scripted
