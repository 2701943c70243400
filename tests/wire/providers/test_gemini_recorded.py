"""Real recorded Gemini API responses replayed through the ``"gemini"`` transport.

The bodies and streams under ``recorded/gemini/`` are Google's own answers, recorded by
pydantic-ai's test suite (``recorded/gemini/SOURCES.md`` names each cassette and the
commit). Each is first read by google-genai's response type, then served by the loopback
server and read by structio, sync and streamed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from structio.lm._gemini import SIGNATURE_SEPARATOR
from tests.wire.providers.gemini_server import (
    GeminiReply,
    GeminiServer,
    check_request,
    check_response,
    serve,
)

RECORDED = Path(__file__).parent / "recorded" / "gemini"


def recorded(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RECORDED / name).read_text())
    return data


def events(name: str) -> list[dict[str, Any]]:
    lines = (RECORDED / name).read_text().splitlines()
    return [json.loads(line[5:]) for line in lines if line.startswith("data:")]


@pytest.fixture
def gemini() -> Iterator[GeminiServer]:
    yield from serve()


def lm_for(gemini: GeminiServer, model: str, **params: Any) -> sio.LM:
    return sio.LM(f"gemini/{model}", api_base=gemini.base_url, api_key="k", cache=False, **params)


@pytest.mark.parametrize(
    "name", sorted(p.name for p in RECORDED.glob("*.json") if p.name != "not_found.json")
)
def test_each_recorded_body_is_a_response_for_the_sdk(name: str) -> None:
    assert check_response(recorded(name)).candidates


@pytest.mark.parametrize("name", sorted(p.name for p in RECORDED.glob("*.sse")))
def test_each_recorded_event_is_a_response_for_the_sdk(name: str) -> None:
    chunks = events(name)
    assert len(chunks) >= 2
    for chunk in chunks:
        check_response(chunk)
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"


def test_a_text_answer_with_hidden_thoughts_counted(gemini: GeminiServer) -> None:
    gemini.reply(GeminiReply(raw=(RECORDED / "text.json").read_bytes()))
    response = lm_for(gemini, "gemini-2.5-flash")([{"role": "user", "content": "Hello!"}])
    assert response.text == "Hello! How can I help you today?"
    usage = response.usage
    # 9 written + 34 thought: completion tokens include the thoughts, as OpenAI's do.
    assert (usage.prompt_tokens, usage.completion_tokens, usage.reasoning_tokens) == (9, 43, 34)
    assert response.cost == pytest.approx(9 * 3e-07 + 43 * 2.5e-06)
    assert response.completions[0].reasoning_items is None  # nothing signed to replay


def test_a_recorded_stream(gemini: GeminiServer) -> None:
    gemini.reply(GeminiReply(raw=(RECORDED / "text_stream.sse").read_bytes()))
    items = list(lm_for(gemini, "gemini-2.5-flash").stream([{"role": "user", "content": "?"}]))
    assert [item for item in items if isinstance(item, str)] == [
        "The",
        " capital of France",
        " is Paris.\n",
    ]
    response = items[-1]
    assert isinstance(response, sio.LMResponse)
    assert response.text == "The capital of France is Paris.\n"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (13, 8)


@pytest.mark.parametrize("stream", [False, True])
def test_thought_parts_are_reasoning_not_text(gemini: GeminiServer, stream: bool) -> None:
    if stream:
        gemini.reply(GeminiReply(raw=(RECORDED / "thinking_stream.sse").read_bytes()))
        items = list(lm_for(gemini, "gemini-2.5-pro").stream([{"role": "user", "content": "?"}]))
        response = items[-1]
        pieces = "".join(item for item in items if isinstance(item, str))
        assert isinstance(response, sio.LMResponse)
        assert pieces == response.text
        chunks = events("thinking_stream.sse")
    else:
        gemini.reply(GeminiReply(raw=(RECORDED / "thinking.json").read_bytes()))
        response = lm_for(gemini, "gemini-3-pro-preview")([{"role": "user", "content": "?"}])
        chunks = [recorded("thinking.json")]
    parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
    thoughts = "".join(p["text"] for p in parts if p.get("thought"))
    answer = "".join(p["text"] for p in parts if not p.get("thought"))
    completion = response.completions[0]
    assert completion.reasoning == thoughts
    assert thoughts
    assert completion.text == answer
    assert answer
    thought_tokens = chunks[-1]["usageMetadata"]["thoughtsTokenCount"]
    assert response.usage.reasoning_tokens == thought_tokens


def test_gemini_3_parallel_calls_without_ids_keep_their_signature(gemini: GeminiServer) -> None:
    body = recorded("parallel_calls.json")
    signature = body["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    gemini.reply(
        GeminiReply(raw=json.dumps(body).encode()),
        GeminiReply(raw=(RECORDED / "text.json").read_bytes()),
    )
    lm = lm_for(gemini, "gemini-3-flash-preview")
    question = [{"role": "user", "content": "Tell three jokes."}]
    first = lm(question).completions[0]
    calls = list(first.tool_calls or ())
    assert [c["id"] for c in calls] == [
        f"call_0{SIGNATURE_SEPARATOR}{signature}",
        "call_1",
        "call_2",
    ]
    assert [c["function"]["name"] for c in calls] == ["generate_topic"] * 3
    assert first.finish_reason == "tool_calls"
    assert first.reasoning_items is not None
    # Replayed with only the calls (as structio's ToolCalls keep them): the signature comes
    # back on the first call, from its id.
    results = [
        {"role": "tool", "tool_call_id": c["id"], "name": "generate_topic", "content": t}
        for c, t in zip(calls, "abc", strict=False)
    ]
    lm([*question, {"role": "assistant", "content": "", "tool_calls": calls}, *results])
    model_turn = gemini.requests[1].body["contents"][1]
    assert model_turn["parts"][0] == {
        "functionCall": {"name": "generate_topic", "args": {}, "id": "call_0"},
        "thoughtSignature": signature,
    }
    assert [("thoughtSignature" in p) for p in model_turn["parts"]] == [True, False, False]
    check_request(gemini.requests[1].body)


def test_reasoning_items_replay_the_models_own_parts(gemini: GeminiServer) -> None:
    gemini.reply(
        GeminiReply(raw=(RECORDED / "signed_call.json").read_bytes()),
        GeminiReply(raw=(RECORDED / "signed_text.json").read_bytes()),
        GeminiReply(raw=(RECORDED / "text.json").read_bytes()),
    )
    lm = lm_for(gemini, "gemini-2.5-pro")
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Capital of France?"}]
    first = lm(messages).completions[0]
    calls = list(first.tool_calls or ())
    messages += [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": calls,
            "reasoning_items": list(first.reasoning_items or ()),
        },
        {"role": "tool", "tool_call_id": calls[0]["id"], "content": "Paris"},
    ]
    second = lm(messages).completions[0]
    assert second.text == "Paris"
    messages += [
        {
            "role": "assistant",
            "content": second.text,
            "reasoning_items": list(second.reasoning_items or ()),
        },
        {"role": "user", "content": "Thanks"},
    ]
    lm(messages)
    sent = gemini.requests[2].body["contents"]
    check_request(gemini.requests[2].body)
    recorded_call = recorded("signed_call.json")["candidates"][0]["content"]["parts"][0]
    recorded_text = recorded("signed_text.json")["candidates"][0]["content"]["parts"][0]
    assert sent[1] == {
        "role": "model",
        "parts": [
            {**recorded_call, "functionCall": {**recorded_call["functionCall"], "id": "call_0"}}
        ],
    }
    assert sent[2]["parts"][0]["functionResponse"] == {
        "name": "get_capital",
        "response": {"result": "Paris"},
        "id": "call_0",
    }
    assert sent[3] == {"role": "model", "parts": [recorded_text]}


def test_a_recorded_streamed_call_with_its_signature(gemini: GeminiServer) -> None:
    gemini.reply(GeminiReply(raw=(RECORDED / "signed_call_stream.sse").read_bytes()))
    items = list(lm_for(gemini, "gemini-3-pro-preview").stream([{"role": "user", "content": "?"}]))
    response = items[-1]
    assert isinstance(response, sio.LMResponse)
    signature = events("signed_call_stream.sse")[0]["candidates"][0]["content"]["parts"][0][
        "thoughtSignature"
    ]
    (call,) = response.completions[0].tool_calls or ()
    assert call["id"] == f"call_0{SIGNATURE_SEPARATOR}{signature}"
    assert call["function"] == {"name": "get_country", "arguments": "{}"}
    assert response.completions[0].finish_reason == "tool_calls"
    assert response.usage.reasoning_tokens == 202


def test_max_tokens_is_length(gemini: GeminiServer) -> None:
    gemini.reply(GeminiReply(raw=(RECORDED / "max_tokens.json").read_bytes()))
    completion = lm_for(gemini, "gemini-2.5-flash")([{"role": "user", "content": "?"}]).completions[
        0
    ]
    assert completion.text == "The capital of France is"
    assert completion.truncated


def test_a_json_answer(gemini: GeminiServer) -> None:
    gemini.reply(GeminiReply(raw=(RECORDED / "json_output.json").read_bytes()))
    response = lm_for(gemini, "gemini-2.5-flash")([{"role": "user", "content": "?"}])
    assert json.loads(response.text) == {"city": "Mexico City", "country": "Mexico"}


def test_cached_tokens_are_priced_at_the_cached_rate(gemini: GeminiServer) -> None:
    gemini.reply(GeminiReply(raw=(RECORDED / "cached.json").read_bytes()))
    response = lm_for(gemini, "gemini-2.5-flash")([{"role": "user", "content": "?"}])
    usage = response.usage
    assert (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens) == (3520, 3512, 44)
    assert response.cost == pytest.approx(8 * 3e-07 + 3512 * 3e-08 + 44 * 2.5e-06)


def test_a_recorded_404(gemini: GeminiServer) -> None:
    gemini.reply(GeminiReply(status=404, raw=(RECORDED / "not_found.json").read_bytes()))
    with pytest.raises(
        sio.BadRequestError, match=r"models/gemini-3\.6-flahs is not found .* \[NOT_FOUND\]"
    ):
        lm_for(gemini, "gemini-3.6-flahs", num_retries=2)("hello")
    assert len(gemini.requests) == 1


@pytest.mark.parametrize(
    ("name", "model"),
    [("thinking_stream.sse", "gemini-2.5-pro"), ("signed_call_stream.sse", "gemini-3-pro-preview")],
)
def test_recorded_streams_hand_out_thoughts_and_calls_as_they_come(
    gemini: GeminiServer, name: str, model: str
) -> None:
    from structio.lm import ReasoningPiece, ToolCallPiece
    from tests.wire.pieces import check_pieces

    gemini.reply(GeminiReply(raw=(RECORDED / name).read_bytes()))
    items = list(lm_for(gemini, model).stream([{"role": "user", "content": "?"}], pieces=True))
    first = check_pieces(items).completions[0]
    thoughts = [item for item in items if isinstance(item, ReasoningPiece)]
    calls = [item for item in items if isinstance(item, ToolCallPiece)]
    assert len(thoughts) == sum(
        bool(p.get("thought") and p.get("text"))
        for c in events(name)
        for p in c["candidates"][0]["content"]["parts"]
    )
    assert len(calls) == len(first.tool_calls or ())
