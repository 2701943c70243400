"""The anthropic transport over the real wire: a loopback server answering as Anthropic does.

Every request the server receives is checked against the anthropic SDK's own request types
(unknown keys refused): a body the SDK refuses is answered 400, so a test that passes sent
valid bodies. Answers are replayed from real recorded Anthropic responses
(``recorded/anthropic/SOURCES.md``) or built as the API builds them; streams are the events
Anthropic sends.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable, Iterator
from typing import Any, Literal

import pytest

import structio as sio
from tests.wire.providers.anthropic_server import AnthropicServer, Reply, message, recorded

MODEL = "anthropic/claude-sonnet-4-5"
# claude-sonnet-4-5's prices in litellm's map (USD per token).
INPUT, OUTPUT, READ, WRITE = 3e-06, 1.5e-05, 3e-07, 3.75e-06
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"

Mode = Literal["call", "acall", "stream", "astream"]
MakeLM = Callable[..., sio.LM]


@pytest.fixture
def anthropic() -> Iterator[AnthropicServer]:
    server = AnthropicServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def make_lm(anthropic: AnthropicServer) -> MakeLM:
    def make(**kwargs: Any) -> sio.LM:
        options: dict[str, Any] = {
            "api_base": anthropic.base_url,
            "api_key": "test-key",
            "cache": False,
            "backoff": 0.01,
        }
        options.update(kwargs)
        return sio.LM(MODEL, **options)

    return make


class QA(sio.Signature):
    """Answer the question."""

    question: str = sio.InputField()
    answer: str = sio.OutputField()


class Amount(sio.Signature):
    """Read the amount."""

    text: str = sio.InputField()
    amount: float = sio.OutputField()


class Chat(sio.Signature):
    """Talk with the user."""

    question: str = sio.InputField()
    history: sio.History = sio.InputField()
    answer: str = sio.OutputField()


def retrieve_entity_info(name: str) -> str:
    """Get the knowledge about the given entity."""
    return f"{name} is a member of the family"


class Family(sio.Signature):
    """Answer, calling tools when needed."""

    question: str = sio.InputField()
    tools: list[sio.Tool] = sio.InputField()
    history: sio.History = sio.InputField()
    calls: sio.ToolCalls = sio.OutputField()
    answer: str = sio.OutputField()


def run(predict: sio.Predict, mode: Mode, **inputs: Any) -> sio.Prediction:
    """A prediction made the way ``mode`` says: sync, async, streamed, async streamed."""
    if mode == "call":
        return predict(**inputs)
    if mode == "acall":
        return asyncio.run(predict.acall(**inputs))
    if mode == "stream":
        stream = predict.stream(**inputs)
        for _ in stream:
            pass
        return stream.result

    async def consume() -> sio.Prediction:
        stream = predict.astream(**inputs)
        async for _ in stream:
            pass
        return stream.result

    return asyncio.run(consume())


MODES: list[Mode] = ["call", "acall", "stream", "astream"]


def bodies(server: AnthropicServer) -> list[dict[str, Any]]:
    for request in server.requests:
        assert request.invalid is None, request.invalid
    return [request.body for request in server.requests]


# -- the request -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_chat_adapter_over_every_mode(
    anthropic: AnthropicServer, make_lm: MakeLM, mode: Mode
) -> None:
    anthropic.reply(Reply(message=message("[[ ## answer ## ]]\nParis\n\n[[ ## completed ## ]]")))
    pred = run(sio.Predict(QA, lm=make_lm(), adapter=sio.ChatAdapter()), mode, question="Capital?")
    assert pred.answer == "Paris"
    (body,) = bodies(anthropic)
    request = anthropic.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "test-key"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert body["model"] == "claude-sonnet-4-5"
    assert body["max_tokens"] == 64000  # the map's output limit for the model
    assert body.get("stream", False) is mode.endswith("stream")
    assert "Answer the question." in body["system"][0]["text"]
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert pred.meta.usage.prompt_tokens == 20
    assert pred.meta.cost == pytest.approx(20 * INPUT + 5 * OUTPUT)


@pytest.mark.parametrize("mode", MODES)
def test_json_adapter_asks_for_anthropics_native_structured_output(
    anthropic: AnthropicServer, make_lm: MakeLM, mode: Mode
) -> None:
    anthropic.reply(Reply(message=recorded("native_output.json")))
    pred = run(sio.Predict(Amount, lm=make_lm(), adapter=sio.JSONAdapter()), mode, text="$12.34")
    assert pred.amount == 12.34
    (body,) = bodies(anthropic)
    output = body["output_config"]["format"]
    assert output["type"] == "json_schema"
    assert output["schema"]["properties"]["amount"]["type"] == "number"
    assert output["schema"]["additionalProperties"] is False
    assert "response_format" not in body


@pytest.mark.parametrize("mode", MODES)
def test_tool_output_adapter_forces_its_tool(
    anthropic: AnthropicServer, make_lm: MakeLM, mode: Mode
) -> None:
    use = {"id": "toolu_1", "name": "final_answer", "input": {"answer": "Paris"}}
    anthropic.reply(Reply(message=message("", stop_reason="tool_use", tool_uses=[use])))
    adapter = sio.ToolOutputAdapter()
    pred = run(sio.Predict(QA, lm=make_lm(), adapter=adapter), mode, question="Capital?")
    assert pred.answer == "Paris"
    (body,) = bodies(anthropic)
    assert body["tool_choice"] == {"type": "tool", "name": "final_answer"}
    (tool,) = body["tools"]
    assert tool["name"] == "final_answer"
    assert tool["input_schema"]["properties"]["answer"]["type"] == "string"
    assert tool["cache_control"] == {"type": "ephemeral"}


@pytest.mark.parametrize("mode", ["call", "stream"])
def test_parallel_native_tool_calls_and_their_results_in_the_next_turn(
    anthropic: AnthropicServer, make_lm: MakeLM, mode: Mode
) -> None:
    anthropic.reply(
        Reply(message=recorded("parallel_tool_calls.json")),
        Reply(message=message("[[ ## answer ## ]]\nDaisy\n\n[[ ## completed ## ]]")),
    )
    family = sio.Predict(Family, lm=make_lm(), adapter=sio.ChatAdapter(native_tools=True))
    tools = [retrieve_entity_info]
    first = run(family, mode, question="Who is youngest?", tools=tools, history=sio.History())
    assert [call.args["name"] for call in first.calls] == ["Alice", "Bob", "Charlie", "Daisy"]
    first.calls.execute()
    history = sio.History([{"question": "Who is youngest?", "calls": first.calls}])
    second = run(family, mode, question="Who is youngest?", tools=tools, history=history)
    assert second.answer == "Daisy"
    ids = [use["id"] for use in recorded("parallel_tool_calls.json")["content"][1:]]
    turns = bodies(anthropic)[1]["messages"]
    assert [turn["role"] for turn in turns] == ["user", "assistant", "user"]
    uses = [block for block in turns[1]["content"] if block["type"] == "tool_use"]
    assert [use["id"] for use in uses] == ids
    assert uses[0]["input"] == {"name": "Alice"}
    results = [block for block in turns[2]["content"] if block["type"] == "tool_result"]
    assert [result["tool_use_id"] for result in results] == ids
    assert results[3]["content"] == "Daisy is a member of the family"
    # The results come first in their user turn, the new question after them.
    assert turns[2]["content"][: len(results)] == results


def test_thinking_is_kept_and_replayed_first_with_its_signature(
    anthropic: AnthropicServer, make_lm: MakeLM
) -> None:
    recording = recorded("thinking.json")
    anthropic.reply(Reply(message=recording), Reply(message=message("Sure.")))
    lm = make_lm()
    question = [{"role": "user", "content": "How do I cross the street?"}]
    first = lm(question, reasoning_effort="low").completions[0]
    assert first.reasoning == recording["content"][0]["thinking"]
    assert first.reasoning_items == (recording["content"][0],)
    assert first.text == recording["content"][1]["text"]
    again = [
        *question,
        {
            "role": "assistant",
            "content": first.text,
            "reasoning_items": list(first.reasoning_items),
        },
        {"role": "user", "content": "And at night?"},
    ]
    lm(again, reasoning_effort="low")
    body = bodies(anthropic)[1]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    replayed = body["messages"][1]["content"]
    assert replayed[0] == recording["content"][0]  # unchanged, signature and all
    assert replayed[1]["text"] == first.text


def test_a_streamed_thinking_answer_keeps_its_signature(
    anthropic: AnthropicServer, make_lm: MakeLM
) -> None:
    anthropic.reply(Reply(sse=recorded("thinking_stream.sse")))
    pieces = list(make_lm().stream([{"role": "user", "content": "Cross?"}]))
    response = pieces[-1]
    assert isinstance(response, sio.LMResponse)
    (item,) = response.completions[0].reasoning_items or ()
    signatures = [
        json.loads(line[5:])["delta"]["signature"]
        for line in recorded("thinking_stream.sse").splitlines()
        if "signature_delta" in line
    ]
    assert item["signature"] == "".join(signatures)
    assert signatures[0]
    assert item["thinking"] == response.completions[0].reasoning
    assert "".join(p for p in pieces if isinstance(p, str)) == response.text
    assert response.text.startswith("Here are the basic steps for safely crossing the street")
    assert response.usage.completion_tokens == 282  # message_delta's count, not message_start's


def test_a_redacted_thinking_block_is_kept_for_the_next_turn(
    anthropic: AnthropicServer, make_lm: MakeLM
) -> None:
    recording = recorded("redacted_thinking.json")
    anthropic.reply(Reply(message=recording))
    completion = make_lm()([{"role": "user", "content": "Hi"}]).completions[0]
    assert completion.reasoning is None
    assert completion.reasoning_items == (recording["content"][0],)


def test_a_recorded_stream_with_a_server_tool_keeps_only_the_client_tool_call(
    anthropic: AnthropicServer, make_lm: MakeLM
) -> None:
    anthropic.reply(Reply(sse=recorded("tool_use_stream.sse")))
    response = make_lm().stream([{"role": "user", "content": "USD to EUR?"}])
    items = list(response)
    completion = items[-1].completions[0]
    assert completion.finish_reason == "tool_calls"
    assert completion.tool_calls == (
        {
            "id": "toolu_01EFn5wTNBYA8Reni8rbmnHT",
            "type": "function",
            "function": {
                "name": "get_exchange_rate",
                "arguments": '{"from_currency": "USD", "to_currency": "EUR"}',
            },
        },
    )


class Look(sio.Signature):
    """Describe the image and the document."""

    image: sio.Image = sio.InputField()
    document: sio.File = sio.InputField()
    url_image: sio.Image = sio.InputField()
    description: str = sio.OutputField()


def test_images_and_a_pdf_arrive_as_image_and_document_blocks(
    anthropic: AnthropicServer, make_lm: MakeLM
) -> None:
    anthropic.reply(
        Reply(message=message("[[ ## description ## ]]\nA dot.\n\n[[ ## completed ## ]]"))
    )
    pred = sio.Predict(Look, lm=make_lm())(
        image=sio.Image.from_bytes(PNG),
        document=sio.File.from_bytes(PDF, mime_type="application/pdf"),
        url_image=sio.Image("https://example.com/cat.png"),
    )
    assert pred.description == "A dot."
    blocks = bodies(anthropic)[0]["messages"][0]["content"]
    sources = [block["source"] for block in blocks if block["type"] in ("image", "document")]
    assert sources[0] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(PNG).decode(),
    }
    assert sources[1] == {
        "type": "base64",
        "media_type": "application/pdf",
        "data": base64.b64encode(PDF).decode(),
    }
    assert sources[2] == {"type": "url", "url": "https://example.com/cat.png"}
    assert [block["type"] for block in blocks].count("document") == 1


# -- usage and cost ------------------------------------------------------------------------------


def test_cache_writes_and_reads_are_priced_at_their_rates(
    anthropic: AnthropicServer, make_lm: MakeLM
) -> None:
    recording = recorded("cache_write_and_read.json")
    recording["content"][0]["text"] = "[[ ## answer ## ]]\nPython.\n\n[[ ## completed ## ]]"
    anthropic.reply(Reply(message=recording))
    pred = sio.Predict(QA, lm=make_lm())(question="What is Python?")
    usage = pred.meta.usage
    # The recording: 3 plain input tokens, 418 written to the cache, 1111 read from it.
    assert (usage.prompt_tokens, usage.cached_tokens, usage.cache_write_tokens) == (1532, 1111, 418)
    assert usage.completion_tokens == 33
    assert pred.meta.cost == pytest.approx(3 * INPUT + 418 * WRITE + 1111 * READ + 33 * OUTPUT)
    assert pred.meta.cost == pytest.approx(0.0024048)


def test_prompt_cache_marks_the_stable_prefix_of_a_conversation_with_demos(
    anthropic: AnthropicServer, make_lm: MakeLM
) -> None:
    anthropic.default = Reply(message=message("[[ ## answer ## ]]\nok\n\n[[ ## completed ## ]]"))
    demos = [
        sio.Example(question="2+2?", history=sio.History(), answer="4").with_inputs(
            "question", "history"
        )
    ]
    history = sio.History([{"question": f"q{i}", "answer": f"a{i}"} for i in range(3)])
    for setting in ({}, {"prompt_cache": False}):
        chat = sio.Predict(Chat, lm=make_lm(**setting), demos=demos)
        chat(question="q3", history=history)
    cached, plain = bodies(anthropic)
    marked = [
        (where, index)
        for where, blocks in [("system", cached["system"])]
        + [(m["role"], m["content"]) for m in cached["messages"]]
        for index, block in enumerate(blocks)
        if "cache_control" in block
    ]
    assert len(marked) <= 4
    turns = cached["messages"]
    assert "cache_control" in cached["system"][-1]
    assert "cache_control" in turns[-2]["content"][-1]  # the turn before the final user turn
    assert "cache_control" in turns[-4]["content"][-1]  # the turn before the previous one
    assert "cache_control" not in turns[-1]["content"][-1]
    assert "cache_control" not in json.dumps(plain)


# -- errors --------------------------------------------------------------------------------------


def test_a_bad_request_says_anthropics_message(anthropic: AnthropicServer, make_lm: MakeLM) -> None:
    anthropic.reply(
        Reply(status=400, error_message="messages: text content blocks must be non-empty")
    )
    with pytest.raises(sio.BadRequestError, match="text content blocks must be non-empty") as info:
        make_lm()([{"role": "user", "content": "hi"}])
    assert info.value.status_code == 400
    assert len(anthropic.requests) == 1  # never retried


def test_a_rejected_key_is_an_authentication_error(
    anthropic: AnthropicServer, make_lm: MakeLM
) -> None:
    anthropic.reply(
        Reply(status=401, error_type="authentication_error", error_message="invalid x-api-key")
    )
    with pytest.raises(sio.AuthenticationError, match="invalid x-api-key"):
        make_lm()([{"role": "user", "content": "hi"}])


def test_a_missing_key_is_refused_before_anything_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(sio.AuthenticationError, match="ANTHROPIC_API_KEY"):
        sio.LM(MODEL, cache=False)([{"role": "user", "content": "hi"}])


def test_a_rate_limit_is_retried_after_the_time_it_asks(
    anthropic: AnthropicServer, make_lm: MakeLM
) -> None:
    limited = Reply(
        status=429,
        error_type="rate_limit_error",
        error_message="slow down",
        headers={"retry-after": "0"},
    )
    anthropic.reply(limited, Reply(message=message("fine")))
    assert make_lm()([{"role": "user", "content": "hi"}]).text == "fine"
    anthropic.reply(
        Reply(
            status=429,
            error_type="rate_limit_error",
            error_message="slow down",
            headers={"retry-after": "7"},
        )
    )
    with pytest.raises(sio.RateLimitError, match="slow down") as info:
        make_lm(num_retries=0)([{"role": "user", "content": "hi"}])
    assert info.value.retry_after == 7.0


@pytest.mark.parametrize("stream", [False, True])
def test_overloaded_is_a_server_error_and_retried(
    anthropic: AnthropicServer, make_lm: MakeLM, stream: bool
) -> None:
    overloaded = Reply(status=529, error_type="overloaded_error", error_message="Overloaded")
    anthropic.reply(overloaded, Reply(message=message("after")))
    lm = make_lm()
    messages = [{"role": "user", "content": "hi"}]
    response = list(lm.stream(messages))[-1] if stream else lm(messages)
    assert isinstance(response, sio.LMResponse)
    assert response.text == "after"
    assert len(anthropic.requests) == 2
    anthropic.reply(overloaded)
    with pytest.raises(sio.ServerError, match="Overloaded"):
        make_lm(num_retries=0)(messages)


def test_an_error_event_mid_stream_is_a_server_error(
    anthropic: AnthropicServer, make_lm: MakeLM
) -> None:
    anthropic.reply(
        Reply(
            message=message("a long answer"),
            error_after=5,
            error_type="overloaded_error",
            error_message="Overloaded",
        )
    )
    with pytest.raises(sio.ServerError, match="overloaded_error: Overloaded"):
        list(make_lm(num_retries=0).stream([{"role": "user", "content": "hi"}]))


def test_a_stream_cut_before_message_stop_is_a_connection_error(
    anthropic: AnthropicServer, make_lm: MakeLM
) -> None:
    # Everything but message_stop: the stop reason came, the end did not.
    reply = Reply(message=message("an answer"))
    from tests.wire.providers.anthropic_server import events

    reply.cut_after = len(events(message("an answer"))) - 1
    anthropic.reply(reply)
    with pytest.raises(sio.LMConnectionError, match="before message_stop"):
        list(make_lm(num_retries=0).stream([{"role": "user", "content": "hi"}]))


def test_an_option_anthropic_does_not_take_is_refused_before_sending(
    anthropic: AnthropicServer, make_lm: MakeLM
) -> None:
    for option, words in [
        ({"n": 2}, "n=2"),
        ({"logprobs": True}, "logprobs=True"),
        ({"top_logprobs": 3}, "top_logprobs=3"),
        ({"seed": 1}, "seed=1"),
        ({"frequency_penalty": 0.5}, "frequency_penalty"),
    ]:
        with pytest.raises(sio.ConfigurationError, match=f"anthropic/claude-sonnet-4-5: .*{words}"):
            make_lm()([{"role": "user", "content": "hi"}], **option)
    assert anthropic.requests == []


@pytest.mark.parametrize("name", ["thinking_stream.sse", "tool_use_stream.sse"])
def test_recorded_streams_hand_out_thinking_and_tool_input_as_they_come(
    anthropic: AnthropicServer, make_lm: MakeLM, name: str
) -> None:
    from structio.lm import ReasoningPiece, ToolCallPiece
    from tests.wire.pieces import check_pieces

    anthropic.reply(Reply(sse=recorded(name)))
    items = list(make_lm().stream([{"role": "user", "content": "?"}], pieces=True))
    first = check_pieces(items).completions[0]
    streamed = [item for item in items if isinstance(item, (ReasoningPiece, ToolCallPiece))]
    events = [json.loads(line[5:]) for line in recorded(name).splitlines() if line[:5] == "data:"]
    # Blocks of the client's tools (not a server tool's, whose input is no call of ours).
    calls = {e["index"] for e in events if e["type"] == "content_block_start"} - {
        e["index"]
        for e in events
        if e["type"] == "content_block_start" and e["content_block"]["type"] != "tool_use"
    }
    deltas = [e for e in events if e["type"] == "content_block_delta"]
    expected = [
        e
        for e in deltas
        if e["delta"].get("thinking") or (e["delta"].get("partial_json") and e["index"] in calls)
    ]
    # One piece per non-empty delta of the recording: nothing held back to the end.
    assert len(streamed) == len(expected) > 0
    assert first.reasoning or first.tool_calls
