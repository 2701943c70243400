"""The Gemini API's request and answer, without a socket (`structio.lm._gemini`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import structio as sio
from structio.lm._gemini import SIGNATURE_SEPARATOR, GeminiAssembler, request_body, to_response
from structio.lm._gemini_request import contents
from tests.wire.providers.gemini_server import check_request, stream_chunks, text_response

MODEL = "gemini/gemini-2.5-flash"


def test_the_sdk_check_can_fail() -> None:
    # The check that every request body passes must refuse a wrong one.
    good = request_body(MODEL, [{"role": "user", "content": "hi"}], {"max_tokens": 5})
    check_request(good)
    wrong: list[dict[str, Any]] = [
        {**good, "generationConfig": {"max_tokens": 5}},  # OpenAI's name, not Gemini's
        {**good, "messages": []},  # not a field of the request
        {"contents": [{"role": "user", "parts": [{"txt": "hi"}]}]},  # a misspelt part
        {
            "contents": [
                {"role": "model", "parts": [{"text": "x", "thoughtSignature": "not base64!"}]}
            ]
        },
    ]
    for body in wrong:
        with pytest.raises(AssertionError):
            check_request(body)


def test_system_user_assistant_and_media() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": "Really."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Read these."},
                {
                    "type": "file",
                    "file": {
                        "file_data": "data:application/pdf;base64,JVBERg==",
                        "filename": "a.pdf",
                    },
                },
                {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            ],
        },
        {"role": "assistant", "content": "Done."},
    ]
    system, turns = contents(MODEL, messages)
    assert system == [{"text": "Be brief."}, {"text": "Really."}]
    assert turns == [
        {
            "role": "user",
            "parts": [
                {"text": "Read these."},
                {"inlineData": {"mimeType": "application/pdf", "data": "JVBERg=="}},
                {"inlineData": {"mimeType": "audio/wav", "data": "UklGRg=="}},
            ],
        },
        {"role": "model", "parts": [{"text": "Done."}]},
    ]
    check_request(request_body(MODEL, messages, {}))


@pytest.mark.parametrize(
    ("params", "config"),
    [
        ({"response_format": {"type": "json_object"}}, {"responseMimeType": "application/json"}),
        (
            {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "o", "schema": {"type": "object"}},
                }
            },
            {"responseMimeType": "application/json", "responseJsonSchema": {"type": "object"}},
        ),
        ({"reasoning_effort": "none"}, {"thinkingConfig": {"thinkingBudget": 0}}),
        (
            {"thinking": {"type": "enabled", "budget_tokens": 2048}},
            {"thinkingConfig": {"thinkingBudget": 2048, "includeThoughts": True}},
        ),
        (
            {"stop": "END", "n": 1, "stream_options": {"include_usage": True}},
            {"stopSequences": ["END"]},
        ),
    ],
)
def test_generation_config(params: dict[str, Any], config: dict[str, Any]) -> None:
    body = request_body(MODEL, [{"role": "user", "content": "x"}], params)
    assert body["generationConfig"] == config
    check_request(body)


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        ("none", {"mode": "NONE"}),
        ("required", {"mode": "ANY"}),
        (
            {"type": "function", "function": {"name": "f"}},
            {"mode": "ANY", "allowedFunctionNames": ["f"]},
        ),
    ],
)
def test_tool_choice(choice: Any, config: dict[str, Any]) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    body = request_body(
        MODEL, [{"role": "user", "content": "x"}], {"tools": tools, "tool_choice": choice}
    )
    assert body["toolConfig"] == {"functionCallingConfig": config}
    check_request(body)


def test_gemini_3_calls_without_a_signature_get_googles_stand_in() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "1"},
    ]
    gemini_3 = request_body("gemini/gemini-3-pro-preview", messages, {})
    assert (
        gemini_3["contents"][1]["parts"][0]["thoughtSignature"]
        == "skip_thought_signature_validator"
    )
    check_request(gemini_3)
    assert "thoughtSignature" not in request_body(MODEL, messages, {})["contents"][1]["parts"][0]
    # The tool's name comes from the call its result answers.
    assert gemini_3["contents"][2]["parts"][0]["functionResponse"]["name"] == "f"


def test_a_tool_result_without_a_name_is_refused() -> None:
    with pytest.raises(sio.ConfigurationError, match="needs the name of the function"):
        request_body(MODEL, [{"role": "tool", "tool_call_id": "nowhere", "content": "1"}], {})


def test_unknown_content_and_roles_are_refused() -> None:
    with pytest.raises(sio.ConfigurationError, match="'video_url' cannot be sent"):
        request_body(MODEL, [{"role": "user", "content": [{"type": "video_url"}]}], {})
    with pytest.raises(sio.ConfigurationError, match="not 'function'"):
        request_body(MODEL, [{"role": "function", "content": "x"}], {})


@pytest.mark.parametrize(
    ("reason", "finish"),
    [
        ("STOP", "stop"),
        ("MAX_TOKENS", "length"),
        ("SAFETY", "content_filter"),
        ("RECITATION", "content_filter"),
        ("OTHER", "other"),
    ],
)
def test_finish_reasons(reason: str, finish: str) -> None:
    response = to_response(text_response("x", finish=reason), MODEL, 0.0, 1)
    assert response.completions[0].finish_reason == finish


def test_no_candidates_is_a_server_error_retried() -> None:
    with pytest.raises(sio.ServerError, match="no choices"):
        to_response({"usageMetadata": {"promptTokenCount": 3}}, MODEL, 0.0, 1)


text_parts = st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=5)


@given(
    answer=text_parts,
    thought=st.one_of(st.none(), st.text(min_size=1, max_size=30)),
    piece=st.integers(1, 7),
)
def test_a_streamed_answer_reads_as_the_whole_one(
    answer: list[str], thought: str | None, piece: int
) -> None:
    whole = text_response("".join(answer), thought=thought)
    assembler = GeminiAssembler(MODEL, "gemini")
    pieces = "".join(
        assembler.feed_line("data: " + json.dumps(chunk)) for chunk in stream_chunks(whole, piece)
    )
    streamed = assembler.response(0.0, 1)
    assert pieces == "".join(answer)
    assert streamed.completions == to_response(whole, MODEL, 0.0, 1).completions
    assert streamed.usage == to_response(whole, MODEL, 0.0, 1).usage


@given(
    call_id=st.from_regex(r"[A-Za-z0-9_]{1,20}", fullmatch=True).filter(
        lambda s: SIGNATURE_SEPARATOR not in s
    ),
    signature=st.binary(min_size=1, max_size=64),
)
def test_a_signature_in_a_call_id_goes_back_where_it_came_from(
    call_id: str, signature: bytes
) -> None:
    import base64

    encoded = base64.b64encode(signature).decode()
    part = {
        "functionCall": {"id": call_id, "name": "f", "args": {"a": 1}},
        "thoughtSignature": encoded,
    }
    data = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}]}
    (call,) = to_response(data, MODEL, 0.0, 1).completions[0].tool_calls or ()
    messages = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "{}"},
    ]
    body = request_body(MODEL, messages, {})
    assert body["contents"][1]["parts"] == [part]
    assert body["contents"][2]["parts"][0]["functionResponse"]["id"] == call_id
    check_request(body)
