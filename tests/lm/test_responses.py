"""OpenAI's Responses API as structio writes its requests and reads its answers (no server).

Every body written here is checked against the openai SDK's own request type
(`tests.wire.providers.responses_server.check_body`); the answers read are recorded
Responses API responses (tests/wire/providers/recorded/openai_responses/SOURCES.md) or
built in their shape.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structio as sio
from structio.lm._http import CHAT, endpoint
from structio.lm._responses import RESPONSES, ResponsesAssembler, input_items
from structio.lm.base import origin_key, reset_origin, set_origin
from structio.lm.transport import transport_for
from tests.wire.providers.responses_server import (
    check_body,
    events_of,
    message_item,
    reasoning_item,
    recorded,
    response,
    sse,
    text_response,
)

CLIENT = {"api_key": "k", "api_base": "http://127.0.0.1:9/v1"}
POINT = endpoint("openai/gpt-5-mini", CLIENT)
PDF = "data:application/pdf;base64,JVBERi0xLjQK"
PNG = "data:image/png;base64,iVBORw0KGgo="


def body(
    messages: list[dict[str, Any]],
    stream: bool = False,
    model: str = "openai/gpt-4.1",
    **params: Any,
) -> dict[str, Any]:
    point = endpoint(model, CLIENT)
    written = RESPONSES.body(point, messages, params, CLIENT, stream=stream)
    problem = check_body(written)
    assert problem is None, problem
    return written


USER = [{"role": "user", "content": "hi"}]


def test_the_sdk_check_refuses_a_wrong_body() -> None:
    # The check the other tests lean on can fail: a chat-shaped body, a misspelled key.
    assert check_body({"model": "m", "input": "x"}) is None
    assert check_body({"model": "m", "messages": USER}) is not None
    assert check_body({"model": "m", "input": "x", "max_tokens": 5}) is not None
    wrong_part = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert check_body({"model": "m", "input": wrong_part}) is not None
    assert check_body({"model": "m", "input": "x", "stream_options": {"include_usage": True}})


def test_the_direct_transport_speaks_responses_when_asked() -> None:
    transport = transport_for("openai/gpt-5-mini", "direct", {})
    assert transport.wire("openai/gpt-5-mini", {"api": "responses"}) is RESPONSES  # type: ignore[attr-defined]
    assert transport.wire("openai/gpt-5-mini", {}) is CHAT  # type: ignore[attr-defined]
    with pytest.raises(sio.ConfigurationError, match="no API named 'completions'"):
        transport.wire("openai/gpt-5-mini", {"api": "completions"})  # type: ignore[attr-defined]
    point = RESPONSES.endpoint("openai/gpt-5-mini", CLIENT, stream=True)
    assert point.url == "http://127.0.0.1:9/v1/responses"
    assert point.headers["Authorization"] == "Bearer k"
    azure = RESPONSES.endpoint(
        "azure/deploy", {"api_key": "k", "api_base": "https://x.openai.azure.com"}, stream=False
    )
    assert azure.url == "https://x.openai.azure.com/openai/v1/responses"
    assert azure.headers["api-key"] == "k"


def test_every_kind_of_message_becomes_its_input_item() -> None:
    reasoning = reasoning_item(["thought"], encrypted="enc-1")
    messages = [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": PNG}},
                {"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "low"}},
                {"type": "file", "file": {"file_data": PDF, "filename": "a.pdf"}},
            ],
        },
        {
            "role": "assistant",
            "content": "calling",
            "reasoning_items": [reasoning],
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "call_2", "type": "function", "function": {"name": "g", "arguments": "[]"}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "name": "f", "content": "one"},
        {
            "role": "tool",
            "tool_call_id": "call_2",
            "name": "g",
            "content": [{"type": "text", "text": "two"}],
        },
        {"role": "assistant", "content": None},
    ]
    items = body(messages)["input"]
    assert items == [
        {"role": "developer", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "look"},
                {"type": "input_image", "image_url": PNG, "detail": "auto"},
                {"type": "input_image", "image_url": "https://x/y.png", "detail": "low"},
                {"type": "input_file", "file_data": PDF, "filename": "a.pdf"},
            ],
        },
        reasoning,  # replayed unchanged, encrypted content and all, before the turn's output
        {"role": "assistant", "content": "calling"},
        {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "call_2", "name": "g", "arguments": "[]"},
        {"type": "function_call_output", "call_id": "call_1", "output": "one"},
        {"type": "function_call_output", "call_id": "call_2", "output": "two"},
    ]
    assert "reasoning_items" not in json.dumps(items)


def test_a_message_of_an_unknown_role_is_refused() -> None:
    with pytest.raises(sio.ConfigurationError, match="role 'function'"):
        input_items([{"role": "function", "content": "x"}], "gpt-4.1")


def test_chat_parameters_are_translated() -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            "strict": True,
        },
    }
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    written = body(
        USER,
        max_tokens=50,
        temperature=0.2,
        top_p=0.9,
        tools=[tool],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        parallel_tool_calls=True,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "Out", "schema": schema, "strict": True},
        },
        logprobs=True,
        top_logprobs=3,
        num_retries=2,
        api_key="never-sent",
    )
    assert written["max_output_tokens"] == 50
    assert (written["temperature"], written["top_p"], written["top_logprobs"]) == (0.2, 0.9, 3)
    assert written["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Weather.",
            "parameters": tool["function"]["parameters"],  # type: ignore[index]
            "strict": True,
        }
    ]
    assert written["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert written["parallel_tool_calls"] is True
    assert written["text"] == {
        "format": {"type": "json_schema", "name": "Out", "schema": schema, "strict": True}
    }
    assert written["include"] == ["message.output_text.logprobs"]
    assert written["store"] is False
    for name in ("max_tokens", "logprobs", "num_retries", "api_key", "response_format", "messages"):
        assert name not in written
    assert body(USER, response_format={"type": "json_object"})["text"] == {
        "format": {"type": "json_object"}
    }
    assert body(USER, max_completion_tokens=9, tool_choice="required")["max_output_tokens"] == 9


def test_reasoning_asks_for_the_encrypted_items_and_stores_nothing() -> None:
    written = body(USER, model="openai/gpt-4.1", reasoning_effort="low")
    assert written["reasoning"] == {"effort": "low"}
    assert written["include"] == ["reasoning.encrypted_content"]
    assert written["store"] is False
    # A reasoning model reasons without being asked: its items come back too.
    assert body(USER, model="openai/gpt-5-mini")["include"] == ["reasoning.encrypted_content"]
    assert "include" not in body(USER, model="openai/gpt-4.1")
    assert "include" not in body(USER, model="openai/gpt-5-mini", reasoning_effort="none")
    # A caller's own Responses settings are kept: a summary asked for, storage on.
    mine = body(USER, reasoning_effort="high", reasoning={"summary": "auto"}, store=True)
    assert mine["reasoning"] == {"summary": "auto", "effort": "high"}
    assert mine["store"] is True
    assert "include" not in mine


def test_a_stream_drops_chats_usage_option() -> None:
    written = body(USER, stream=True, stream_options={"include_usage": True})
    assert written["stream"] is True
    assert "stream_options" not in written


@pytest.mark.parametrize(
    ("option", "value", "named"),
    [
        ("seed", 1, "seed"),
        ("stop", ["\n"], "stop"),
        ("n", 2, "n=2"),
        ("logit_bias", {"1": 2}, "logit_bias"),
        ("functions", [{"name": "f"}], "functions"),
        ("audio", {"voice": "x"}, "audio"),
    ],
)
def test_a_chat_only_option_is_refused_naming_the_model(
    option: str, value: Any, named: str
) -> None:
    with pytest.raises(sio.ConfigurationError, match=rf"gpt-4\.1: {named} is not supported"):
        RESPONSES.body(POINT._replace(model="gpt-4.1"), USER, {option: value}, CLIENT, stream=False)


def test_n_of_one_is_the_only_answer_and_is_not_sent() -> None:
    assert "n" not in body(USER, n=1)


# -- reading the answer -------------------------------------------------------------------------


def read(data: dict[str, Any], model: str = "openai/gpt-4o") -> sio.LMResponse:
    return RESPONSES.response(data, model, "openai", 0.1, 1)


def test_a_recorded_tool_call_reads_as_an_openai_tool_call() -> None:
    answer = read(recorded("tool_call.json"))
    (completion,) = answer.completions
    assert completion.finish_reason == "tool_calls"
    assert completion.tool_calls == (
        {
            "id": "call_YfwRsW8sUxDKipwyhWTzOXCA",
            "type": "function",
            "function": {"name": "get_capital", "arguments": '{"country":"PotatoLand"}'},
        },
    )
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (40, 18)
    assert answer.cost is not None
    assert answer.cost > 0


def test_a_recorded_reasoning_answer_keeps_its_summary_and_items() -> None:
    data = recorded("reasoning_summary.json")
    answer = read(data, "openai/gpt-5.2")
    (completion,) = answer.completions
    assert completion.text.startswith("```python\ndef factorial")
    assert completion.reasoning is not None
    assert completion.reasoning.startswith("**Generating factorial function**")
    assert completion.reasoning_items == (data["output"][0],)
    assert completion.reasoning_items[0]["encrypted_content"].startswith("gAAAA")
    assert completion.logprobs is None  # an empty list: none were asked for
    assert (answer.usage.reasoning_tokens, answer.usage.completion_tokens) == (59, 226)


def test_recorded_logprobs_are_kept_in_chats_shape() -> None:
    data = recorded("logprobs.json")
    (completion,) = read(data, "openai/gpt-4o-mini").completions
    assert completion.text == "The capital of Minas Gerais is Belo Horizonte."
    assert completion.logprobs is not None
    assert "".join(entry["token"] for entry in completion.logprobs) == completion.text
    assert set(completion.logprobs[0]) == {"token", "logprob", "bytes", "top_logprobs"}


def test_a_recorded_structured_answer_is_its_json_text() -> None:
    (completion,) = read(recorded("native_output.json")).completions
    assert json.loads(completion.text) == {"city": "Mexico City", "country": "Mexico"}
    assert completion.finish_reason == "stop"


def test_an_incomplete_answer_is_cut_at_its_length() -> None:
    data = response(message_item("half"), status="incomplete", incomplete="max_output_tokens")
    assert read(data).completions[0].finish_reason == "length"
    filtered = response(message_item(""), status="incomplete", incomplete="content_filter")
    assert read(filtered).completions[0].finish_reason == "content_filter"


def test_a_refusal_is_the_text_and_says_so() -> None:
    item = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "refusal", "refusal": "I can't help with that."}],
    }
    (completion,) = read(response(item)).completions
    assert (completion.text, completion.finish_reason) == (
        "I can't help with that.",
        "content_filter",
    )


def test_a_failed_or_empty_response_is_a_provider_error() -> None:
    failed = {**text_response("x"), "status": "failed", "output": []}
    failed["error"] = {"code": "server_error", "message": "boom"}
    with pytest.raises(sio.ServerError, match="boom"):
        read(failed)
    limited = {**failed, "error": {"code": "rate_limit_exceeded", "message": "slow down"}}
    with pytest.raises(sio.RateLimitError, match="slow down"):
        read(limited)
    with pytest.raises(sio.ServerError, match="no choices"):
        read(response())


# -- streams ------------------------------------------------------------------------------------


def assemble(text: str, model: str = "openai/gpt-4o") -> tuple[list[str], sio.LMResponse]:
    assembler = RESPONSES.assembler(model, "openai")
    pieces = [new for line in text.splitlines() if (new := assembler.feed_line(line))]
    return pieces, assembler.response(0.1, 1)


def test_a_recorded_stream_of_text_is_read_piece_by_piece() -> None:
    pieces, answer = assemble(recorded("stream_text.sse"))
    assert pieces == ["The", " capital", " of", " France", " is", " Paris", "."]
    assert answer.text == "The capital of France is Paris."
    assert answer.completions[0].finish_reason == "stop"
    assert answer.usage.prompt_tokens > 0


def test_a_recorded_stream_of_a_tool_call_reads_the_call() -> None:
    pieces, answer = assemble(recorded("stream_tool_call.sse"))
    assert pieces == []
    (completion,) = answer.completions
    assert completion.finish_reason == "tool_calls"
    assert completion.tool_calls == (
        {
            "id": "call_kL0PCQV7M2WMoVX8V8OtYSAL",
            "type": "function",
            "function": {"name": "get_capital", "arguments": '{"country":"France"}'},
        },
    )


def test_a_recorded_stream_keeps_logprobs() -> None:
    _, answer = assemble(recorded("stream_logprobs.sse"), "openai/gpt-4o-mini")
    (completion,) = answer.completions
    assert completion.logprobs is not None
    assert "".join(e["token"] for e in completion.logprobs) == completion.text


def test_a_recorded_reasoning_stream_keeps_the_summary_and_encrypted_item() -> None:
    text = recorded("stream_reasoning.sse")
    _, answer = assemble(text, "openai/o3-mini")
    (completion,) = answer.completions
    final = json.loads(text.strip().splitlines()[-1][5:])["response"]
    (item, message) = final["output"]
    assert completion.text == message["content"][0]["text"]
    assert completion.reasoning == "\n\n".join(part["text"] for part in item["summary"])
    (kept,) = completion.reasoning_items or ()
    assert kept["id"] == item["id"]
    assert kept["encrypted_content"].startswith("gAAAA")
    assert answer.usage.reasoning_tokens == 1408


def test_a_built_stream_reads_as_the_response_it_was_built_from() -> None:
    data = response(
        reasoning_item(["a", "b"]),
        message_item("Hello there, world"),
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "c1",
            "name": "f",
            "arguments": '{"x": 1}',
            "status": "completed",
        },
    )
    pieces, streamed = assemble(sse(events_of(data, 5)))
    assert "".join(pieces) == "Hello there, world"
    assert streamed.completions == read(data).completions


def test_a_stream_cut_before_its_end_is_a_connection_error() -> None:
    events = events_of(text_response("Hello there"), 3)
    assembler = ResponsesAssembler("openai/gpt-4o", "openai")
    for line in sse(events[:-1]).splitlines():
        assembler.feed_line(line)
    with pytest.raises(sio.LMConnectionError, match=r"no response\.completed"):
        assembler.response(0.1, 1)
    with pytest.raises(sio.LMConnectionError):
        ResponsesAssembler("openai/gpt-4o", "openai").response(0.1, 1)


def test_a_failed_stream_and_an_error_event_are_provider_errors() -> None:
    assembler = ResponsesAssembler("openai/gpt-4o", "openai")
    failed = {"status": "failed", "error": {"code": "server_error", "message": "overloaded"}}
    with pytest.raises(sio.ServerError, match="overloaded"):
        assembler.feed_line("data: " + json.dumps({"type": "response.failed", "response": failed}))
    error = {"type": "error", "code": "rate_limit_exceeded", "message": "too many"}
    with pytest.raises(sio.RateLimitError, match="too many"):
        assembler.feed_line("data: " + json.dumps(error))
    with pytest.raises(sio.ServerError, match="not JSON"):
        assembler.feed_line("data: {oops")


# -- the prompt cache key -----------------------------------------------------------------------


class Ask(sio.Signature):
    """Answer."""

    question: str = sio.InputField()
    answer: str = sio.OutputField()


class Other(sio.Signature):
    """Answer."""

    question: str = sio.InputField()
    reply: str = sio.OutputField()


def test_the_origin_key_is_short_stable_and_tells_signatures_and_adapters_apart() -> None:
    chat, json_adapter = sio.ChatAdapter(), sio.JSONAdapter()
    key = origin_key((chat, Ask))
    assert key is not None
    assert key.startswith("structio-")
    assert len(key) <= 64
    assert origin_key((sio.ChatAdapter(), Ask)) == key  # another instance, the same key
    assert origin_key((json_adapter, Ask)) != key
    assert origin_key((chat, Other)) != key
    assert origin_key() is None
    token = set_origin(chat, Ask)
    try:
        assert origin_key() == key
    finally:
        reset_origin(token)
    # The same in another process (no per-process hash seed in it).
    code = (
        "import structio as sio\nfrom structio.lm.base import origin_key\n"
        "class Ask(sio.Signature):\n    '''Answer.'''\n"
        "    question: str = sio.InputField()\n    answer: str = sio.OutputField()\n"
        "print(origin_key((sio.ChatAdapter(), Ask)))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert other == key


def test_the_key_is_sent_only_when_asked_and_never_over_the_callers() -> None:
    token = set_origin(sio.ChatAdapter(), Ask)
    try:
        asked = {**CLIENT, "prompt_cache": True}
        expected = origin_key()
        for api in (RESPONSES, CHAT):
            written = api.body(POINT, USER, {}, asked, stream=False)
            assert written["prompt_cache_key"] == expected
            assert "prompt_cache" not in written
            mine = api.body(POINT, USER, {"prompt_cache_key": "mine"}, asked, stream=False)
            assert mine["prompt_cache_key"] == "mine"
            assert "prompt_cache_key" not in api.body(POINT, USER, {}, CLIENT, stream=False)
        assert check_body(RESPONSES.body(POINT, USER, {}, asked, stream=False)) is None
    finally:
        reset_origin(token)


# -- a property: whatever chat messages an adapter writes, the body is a valid request --------

_text = st.text(min_size=1, max_size=20)
_call_id = st.from_regex(r"call_[a-z0-9]{1,8}", fullmatch=True)
_part = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _text),
    st.just({"type": "image_url", "image_url": {"url": PNG}}),
    st.just({"type": "file", "file": {"file_data": PDF, "filename": "doc.pdf"}}),
)
_user = st.builds(
    lambda c: {"role": "user", "content": c},
    st.one_of(_text, st.lists(_part, min_size=1, max_size=3)),
)
_system = st.builds(lambda t: {"role": "system", "content": t}, _text)
_assistant = st.builds(
    lambda text, ids, reasoning: {
        "role": "assistant",
        "content": text,
        **(
            {
                "tool_calls": [
                    {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}}
                    for i in ids
                ]
            }
            if ids
            else {}
        ),
        **({"reasoning_items": [reasoning_item(["r"])]} if reasoning else {}),
    },
    st.one_of(st.none(), _text),
    st.lists(_call_id, max_size=2, unique=True),
    st.booleans(),
)
_tool = st.builds(
    lambda i, t: {"role": "tool", "tool_call_id": i, "name": "f", "content": t}, _call_id, _text
)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.one_of(_system, _user, _assistant, _tool), min_size=1, max_size=6),
    st.sampled_from([None, "low", "high"]),
    st.booleans(),
)
def test_any_chat_conversation_is_a_valid_responses_request(
    messages: list[dict[str, Any]], effort: str | None, stream: bool
) -> None:
    params: dict[str, Any] = {"max_tokens": 10, "temperature": 0.5}
    if effort:
        params["reasoning_effort"] = effort
    written = RESPONSES.body(POINT, messages, params, CLIENT, stream=stream)
    assert check_body(written) is None
    calls = sum(len(m.get("tool_calls") or ()) for m in messages)
    assert sum(1 for i in written["input"] if i.get("type") == "function_call") == calls
