"""OpenAI's Responses API over the real wire: `structio.Predict` against a loopback server.

The server (`tests.wire.providers.responses_server`) answers as ``POST /v1/responses``
does, from recorded Responses API responses (recorded/openai_responses/SOURCES.md) or
responses built in their shape, streamed as the API streams them; every request body it
receives is checked against the openai SDK's request type (none may fail).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import structio as sio
from structio.lm import lm as lm_module
from structio.lm.base import origin_key
from tests.wire.providers.responses_server import (
    ResponsesReply,
    ResponsesServer,
    call_item,
    message_item,
    reasoning_item,
    recorded,
    response,
    text_response,
    usage,
)
from tests.wire.server import OpenAIServer, Reply

MakeLM = Callable[..., sio.LM]
MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture
def responses() -> Iterator[ResponsesServer]:
    """The loopback Responses API server; every request it got must be a valid one."""
    server = ResponsesServer().start()
    yield server
    server.stop()
    assert server.invalid == [], server.invalid[0]


@pytest.fixture
def make_lm(responses: ResponsesServer) -> MakeLM:
    def make(model: str = "openai/gpt-4.1-mini", **kwargs: Any) -> sio.LM:
        options: dict[str, Any] = {
            "api_base": responses.base_url,
            "api_key": "test-key",
            "cache": False,
            "backoff": 0.01,
            "api": "responses",
        }
        options.update(kwargs)
        return sio.LM(model, **options)

    return make


class QA(sio.Signature):
    """Answer the question."""

    question: str = sio.InputField()
    answer: str = sio.OutputField()


class City(sio.Signature):
    """Where is it?"""

    place: str = sio.InputField()
    city: str = sio.OutputField()
    country: str = sio.OutputField()


def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return f"sunny in {city}"


class Assist(sio.Signature):
    """Answer, calling tools when needed."""

    question: str = sio.InputField()
    tools: list[sio.Tool] = sio.InputField()
    history: sio.History = sio.InputField()
    calls: sio.ToolCalls = sio.OutputField()
    answer: str = sio.OutputField()


MODES = ["sync", "async", "stream", "astream"]


def run(predict: sio.Predict, mode: str, **inputs: Any) -> sio.Prediction:
    """One prediction, made the way ``mode`` says."""
    if mode == "sync":
        return predict(**inputs)
    if mode == "async":
        return asyncio.run(predict.acall(**inputs))
    if mode == "stream":
        with predict.stream(**inputs) as events:
            return events.collect()

    async def streamed() -> sio.Prediction:
        async with predict.astream(**inputs) as events:
            return await events.collect()

    return asyncio.run(streamed())


# -- Predict, each adapter, each way of calling ------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_chat_adapter(responses: ResponsesServer, make_lm: MakeLM, mode: str) -> None:
    responses.reply(
        ResponsesReply(body=text_response("[[ ## answer ## ]]\nParis\n\n[[ ## completed ## ]]"))
    )
    pred = run(sio.Predict(QA, lm=make_lm(), adapter=sio.ChatAdapter()), mode, question="Capital?")
    assert pred.answer == "Paris"
    assert pred.usage.prompt_tokens == 20
    (request,) = responses.requests
    assert request.path == "/v1/responses"
    assert request.headers["Authorization"] == "Bearer test-key"
    assert request.body["model"] == "gpt-4.1-mini"
    assert request.body.get("stream", False) is (mode in ("stream", "astream"))
    roles = [item["role"] for item in request.body["input"]]
    assert roles == ["developer", "user"]
    assert "Capital?" in request.body["input"][1]["content"]


@pytest.mark.parametrize("mode", MODES)
def test_json_adapter_sends_its_schema_as_the_text_format(
    responses: ResponsesServer, make_lm: MakeLM, mode: str
) -> None:
    # The answer is OpenAI's own, recorded for a schema of the same two fields.
    responses.reply(ResponsesReply(body=recorded("native_output.json")))
    predict = sio.Predict(City, lm=make_lm(), adapter=sio.JSONAdapter())
    pred = run(predict, mode, place="the largest city of Mexico")
    assert (pred.city, pred.country) == ("Mexico City", "Mexico")
    text_format = responses.last["text"]["format"]
    assert text_format["type"] == "json_schema"
    assert text_format["strict"] is True
    assert set(text_format["schema"]["properties"]) == {"city", "country"}


@pytest.mark.parametrize("mode", MODES)
def test_parallel_native_tool_calls_and_their_results_next_turn(
    responses: ResponsesServer, make_lm: MakeLM, mode: str
) -> None:
    responses.reply(
        ResponsesReply(
            body=response(
                call_item("call_a", "get_weather", {"city": "Rome"}),
                call_item("call_b", "get_weather", {"city": "Oslo"}),
            )
        ),
        ResponsesReply(
            body=text_response("[[ ## answer ## ]]\nSunny in both.\n\n[[ ## completed ## ]]")
        ),
    )
    assist = sio.Predict(Assist, lm=make_lm(), adapter=sio.ChatAdapter(native_tools=True))
    first = run(assist, mode, question="Rome and Oslo?", tools=[get_weather], history=sio.History())
    assert [(c.id, c.name, c.args) for c in first.calls] == [
        ("call_a", "get_weather", {"city": "Rome"}),
        ("call_b", "get_weather", {"city": "Oslo"}),
    ]
    assert first.calls.execute() == ["sunny in Rome", "sunny in Oslo"]
    tools = responses.requests[0].body["tools"]
    assert [(t["type"], t["name"]) for t in tools] == [("function", "get_weather")]
    history = sio.History([{"question": "Rome and Oslo?", "calls": first.calls}])
    second = run(assist, mode, question="Rome and Oslo?", tools=[get_weather], history=history)
    assert second.answer == "Sunny in both."
    replayed = responses.requests[1].body["input"]
    calls = [i for i in replayed if i.get("type") == "function_call"]
    outputs = [i for i in replayed if i.get("type") == "function_call_output"]
    assert [(c["call_id"], json.loads(c["arguments"])) for c in calls] == [
        ("call_a", {"city": "Rome"}),
        ("call_b", {"city": "Oslo"}),
    ]
    assert outputs == [
        {"type": "function_call_output", "call_id": "call_a", "output": "sunny in Rome"},
        {"type": "function_call_output", "call_id": "call_b", "output": "sunny in Oslo"},
    ]


def test_a_recorded_tool_call_conversation(responses: ResponsesServer, make_lm: MakeLM) -> None:
    # Both answers are OpenAI's, recorded in one conversation (a call, then the answer).
    responses.reply(
        ResponsesReply(body=recorded("tool_call.json")),
        ResponsesReply(body=recorded("tool_call_answer.json")),
    )
    lm = make_lm("openai/gpt-4o")
    tool = {
        "type": "function",
        "function": {
            "name": "get_capital",
            "parameters": {
                "type": "object",
                "properties": {"country": {"type": "string"}},
                "required": ["country"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    }
    question = {"role": "user", "content": "What is the capital of PotatoLand?"}
    first = lm([question], tools=[tool])
    (call,) = first.completions[0].tool_calls or ()
    assert call["id"] == "call_YfwRsW8sUxDKipwyhWTzOXCA"
    turn = [
        question,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": call["id"],
            "name": "get_capital",
            "content": "Potato City",
        },
    ]
    second = lm(turn, tools=[tool])
    assert "Potato City" in second.text
    assert responses.requests[1].body["input"][1:] == [
        {
            "type": "function_call",
            "call_id": "call_YfwRsW8sUxDKipwyhWTzOXCA",
            "name": "get_capital",
            "arguments": '{"country":"PotatoLand"}',
        },
        {
            "type": "function_call_output",
            "call_id": "call_YfwRsW8sUxDKipwyhWTzOXCA",
            "output": "Potato City",
        },
    ]


# -- reasoning, logprobs --------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_reasoning_items_are_kept_and_replayed_with_their_encrypted_content(
    responses: ResponsesServer, make_lm: MakeLM, stream: bool
) -> None:
    thought = reasoning_item(["Seven days a week."], encrypted="gAAAA-opaque-123")
    responses.reply(
        ResponsesReply(
            body=response(thought, message_item("21"), used=usage(20, 30, reasoning=25))
        ),
        ResponsesReply(body=text_response("28")),
    )
    lm = make_lm("openai/gpt-5-mini")
    first = lm(MESSAGES, reasoning_effort="low", stream=stream)
    (completion,) = first.completions
    assert completion.text == "21"
    assert completion.reasoning == "Seven days a week."
    assert completion.reasoning_items == (thought,)
    assert first.usage.reasoning_tokens == 25
    asked = responses.requests[0].body
    assert asked["reasoning"] == {"effort": "low"}
    assert asked["include"] == ["reasoning.encrypted_content"]
    assert asked["store"] is False
    turn = [
        *MESSAGES,
        {"role": "assistant", "content": "21", "reasoning_items": list(completion.reasoning_items)},
        {"role": "user", "content": "And four weeks?"},
    ]
    assert lm(turn, reasoning_effort="low").text == "28"
    replayed = responses.requests[1].body["input"]
    assert replayed[1] == thought  # unchanged, encrypted content and all, before its answer
    assert replayed[2] == {"role": "assistant", "content": "21"}


@pytest.mark.parametrize("stream", [False, True])
def test_logprobs_are_asked_for_and_kept(
    responses: ResponsesServer, make_lm: MakeLM, stream: bool
) -> None:
    data = recorded("logprobs.json")
    responses.reply(ResponsesReply(body=data))
    answer = make_lm("openai/gpt-4o-mini")(MESSAGES, logprobs=True, top_logprobs=2, stream=stream)
    assert responses.last["include"] == ["message.output_text.logprobs"]
    assert responses.last["top_logprobs"] == 2
    logprobs = answer.completions[0].logprobs
    assert logprobs is not None
    assert list(logprobs) == data["output"][0]["content"][0]["logprobs"]


def test_recorded_streams_replayed_over_the_wire(
    responses: ResponsesServer, make_lm: MakeLM
) -> None:
    responses.reply(
        ResponsesReply(sse=recorded("stream_text.sse")),
        ResponsesReply(sse=recorded("stream_reasoning.sse")),
    )
    lm = make_lm("openai/gpt-4o")
    items = list(lm.stream(MESSAGES))
    assert items[:-1] == ["The", " capital", " of", " France", " is", " Paris", "."]
    assert items[-1].text == "The capital of France is Paris."
    reasoned = lm(MESSAGES, stream=True)
    assert reasoned.completions[0].reasoning_items is not None
    assert reasoned.usage.reasoning_tokens == 1408


# -- errors -------------------------------------------------------------------------------------


def test_a_400_says_the_providers_message(responses: ResponsesServer, make_lm: MakeLM) -> None:
    responses.reply(ResponsesReply(status=400, error_body=recorded("error_400.json")))
    with pytest.raises(sio.BadRequestError, match="Invalid 'temperature'") as caught:
        make_lm(num_retries=3)(MESSAGES, temperature=-1)
    assert caught.value.status_code == 400
    assert len(responses.requests) == 1  # a bad request is not retried


def test_a_401_is_an_authentication_error(responses: ResponsesServer, make_lm: MakeLM) -> None:
    responses.reply(ResponsesReply(status=401, error_message="Incorrect API key provided"))
    with pytest.raises(sio.AuthenticationError, match="Incorrect API key"):
        make_lm()(MESSAGES)


def test_a_429_waits_as_retry_after_says(
    responses: ResponsesServer, make_lm: MakeLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits: list[float] = []
    monkeypatch.setattr(lm_module, "_sleep", waits.append)
    responses.reply(
        ResponsesReply(status=429, headers={"Retry-After": "2"}, error_message="Rate limit"),
        ResponsesReply(status=500, error_message="boom"),
        ResponsesReply(body=text_response("fine")),
    )
    assert make_lm(num_retries=3)(MESSAGES).text == "fine"
    assert len(responses.requests) == 3
    assert waits[0] == pytest.approx(2.0, abs=0.5)


def test_a_500_without_retries_left_is_a_server_error(
    responses: ResponsesServer, make_lm: MakeLM
) -> None:
    responses.reply(ResponsesReply(status=500, error_message="The server had an error"))
    with pytest.raises(sio.ServerError, match="The server had an error"):
        make_lm(num_retries=0)(MESSAGES)


def test_a_failed_response_mid_stream(responses: ResponsesServer, make_lm: MakeLM) -> None:
    responses.reply(
        ResponsesReply(body=text_response("Hello there, world"), fail_after=5, chunk_size=3)
    )
    received: list[Any] = []
    with pytest.raises(sio.ServerError, match="The model failed to generate"):
        received.extend(make_lm(num_retries=0).stream(MESSAGES))
    assert received == ["Hel", "lo "]  # what came before the failure stays


def test_a_stream_cut_short_is_a_connection_error(
    responses: ResponsesServer, make_lm: MakeLM
) -> None:
    responses.reply(ResponsesReply(body=text_response("Hello there"), cut_after=5))

    async def read() -> list[Any]:
        return [item async for item in make_lm(num_retries=0).astream(MESSAGES)]

    with pytest.raises(sio.LMConnectionError, match=r"no response\.completed"):
        asyncio.run(read())


def test_chat_only_options_are_refused_before_anything_is_sent(
    responses: ResponsesServer, make_lm: MakeLM
) -> None:
    lm = make_lm("openai/gpt-5-mini")
    for option, value in (("seed", 7), ("stop", ["END"]), ("n", 3)):
        with pytest.raises(sio.ConfigurationError, match=rf"gpt-5-mini: {option}"):
            lm(MESSAGES, **{option: value})
    assert responses.requests == []


def test_a_streamed_call_asks_for_no_chat_stream_options(
    responses: ResponsesServer, make_lm: MakeLM
) -> None:
    assert list(make_lm().stream(MESSAGES))[-1].text == "ok"
    assert responses.last["stream"] is True
    assert "stream_options" not in responses.last


# -- the prompt cache key -----------------------------------------------------------------------


class Other(sio.Signature):
    """Say it again."""

    question: str = sio.InputField()
    reply: str = sio.OutputField()


def test_prompt_cache_key_per_signature_and_adapter(
    responses: ResponsesServer, make_lm: MakeLM
) -> None:
    responses.default = ResponsesReply(
        body=text_response("[[ ## answer ## ]]\na\n\n[[ ## reply ## ]]\nb\n\n[[ ## completed ## ]]")
    )
    lm = make_lm(prompt_cache=True)
    sio.Predict(QA, lm=lm)(question="one")
    sio.Predict(QA, lm=lm)(question="two")
    asyncio.run(sio.Predict(Other, lm=lm).acall(question="one"))
    with sio.Predict(QA, lm=lm).stream(question="three") as events:
        events.collect()
    keys = [r.body.get("prompt_cache_key") for r in responses.requests]
    assert keys[0] is not None
    assert keys[0].startswith("structio-")
    assert keys[1] == keys[0] == keys[3]  # the same signature and adapter, called each way
    assert keys[2] not in (None, keys[0])
    # A caller's own key wins; without prompt_cache=True none is sent.
    sio.Predict(QA, lm=lm)(question="x", config={"prompt_cache_key": "mine"})
    assert responses.last["prompt_cache_key"] == "mine"
    sio.Predict(QA, lm=make_lm())(question="y")
    assert "prompt_cache_key" not in responses.last


def test_prompt_cache_key_on_chat_completions(server: OpenAIServer) -> None:
    server.default = Reply("[[ ## answer ## ]]\na\n\n[[ ## reply ## ]]\nb\n\n[[ ## completed ## ]]")
    lm = sio.LM(
        "openai/gpt-4.1-mini",
        api_base=server.base_url,
        api_key="k",
        cache=False,
        prompt_cache=True,
    )
    sio.Predict(QA, lm=lm)(question="one")
    with sio.Predict(QA, lm=lm).stream(question="two") as events:
        events.collect()
    asyncio.run(sio.Predict(Other, lm=lm).acall(question="one"))
    sio.Predict(QA, lm=lm)(question="x", config={"prompt_cache_key": "mine"})
    keys = [r.body.get("prompt_cache_key") for r in server.requests]
    assert keys == [
        origin_key((sio.ChatAdapter(), QA)),
        origin_key((sio.ChatAdapter(), QA)),
        origin_key((sio.ChatAdapter(), Other)),
        "mine",
    ]
    assert keys[0] != keys[2]
    assert not any("prompt_cache" in r.body for r in server.requests)


@pytest.mark.parametrize("mode", ["sync", "astream"])
def test_a_tool_turns_reasoning_is_replayed_through_the_history(
    responses: ResponsesServer, make_lm: MakeLM, mode: str
) -> None:
    # A reasoning model's calls carry its reasoning item; the next turn sends it back,
    # encrypted content and all, before the calls, as the Responses API requires.
    thought = reasoning_item(["Look it up."], encrypted="gAAAA-turn-1")
    responses.reply(
        ResponsesReply(
            body=response(thought, call_item("call_r", "get_weather", {"city": "Rome"}))
        ),
        ResponsesReply(body=text_response("[[ ## answer ## ]]\nSunny.\n\n[[ ## completed ## ]]")),
    )
    assist = sio.Predict(
        Assist, lm=make_lm("openai/gpt-5-mini"), adapter=sio.ChatAdapter(native_tools=True)
    )
    first = run(assist, mode, question="Rome?", tools=[get_weather], history=sio.History())
    first.calls.execute()
    history = sio.History([{"question": "Rome?", "calls": first.calls}])
    second = run(assist, mode, question="Rome?", tools=[get_weather], history=history)
    assert second.answer == "Sunny."
    replayed = responses.requests[1].body["input"]
    kinds = [item.get("type") or item["role"] for item in replayed]
    assert kinds[kinds.index("reasoning") :][:3] == [
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert replayed[kinds.index("reasoning")] == thought


@pytest.mark.parametrize("name", ["stream_reasoning.sse", "stream_tool_call.sse"])
def test_recorded_streams_hand_out_summaries_and_arguments_as_they_come(
    responses: ResponsesServer, make_lm: MakeLM, name: str
) -> None:
    from structio.lm import ReasoningPiece, ToolCallPiece
    from tests.wire.pieces import check_pieces

    responses.reply(ResponsesReply(sse=recorded(name)))
    items = list(make_lm("openai/gpt-4o").stream(MESSAGES, pieces=True))
    first = check_pieces(items).completions[0]
    streamed = [item for item in items if isinstance(item, (ReasoningPiece, ToolCallPiece))]
    kinds = ("reasoning_summary_text.delta", "function_call_arguments.delta")
    recorded_deltas = [
        line
        for line in recorded(name).splitlines()
        if line.startswith("data:") and any(kind in line for kind in kinds)
    ]
    assert len(streamed) == len(recorded_deltas) > 0
    assert first.reasoning or first.tool_calls
