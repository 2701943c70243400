"""The ``"gemini"`` transport over a loopback Gemini API: requests, answers, streams, errors."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import structio as sio
from structio.lm import _gemini
from tests.wire.providers.gemini_server import (
    GeminiReply,
    GeminiServer,
    calls_response,
    check_request,
    error_body,
    serve,
    text_response,
)

MakeLM = Callable[..., sio.LM]


@pytest.fixture
def gemini() -> Iterator[GeminiServer]:
    yield from serve()


@pytest.fixture
def make_lm(gemini: GeminiServer) -> MakeLM:
    def make(model: str = "gemini/gemini-2.5-flash", **kwargs: Any) -> sio.LM:
        options: dict[str, Any] = {
            "api_base": gemini.base_url,
            "api_key": "test-key",
            "cache": False,
            "backoff": 0.01,
        }
        options.update(kwargs)
        return sio.LM(model, **options)

    return make


def test_gemini_models_go_to_the_gemini_transport_unless_told_otherwise() -> None:
    assert sio.LM("gemini/gemini-2.5-flash", cache=False).resolved_transport == "gemini"
    forced = sio.LM("gemini/gemini-2.5-flash", transport="litellm", cache=False)
    assert forced.resolved_transport == "litellm"
    # A litellm-only option keeps the model on litellm; Vertex AI is litellm's.
    assert sio.LM("gemini/gemini-2.5-flash", mock_response="x").resolved_transport == "litellm"
    assert sio.LM("vertex_ai/gemini-2.5-flash", cache=False).resolved_transport == "litellm"
    with pytest.raises(sio.ConfigurationError, match="serves Gemini API models"):
        sio.LM("anthropic/claude-sonnet-4-5", transport="gemini")
    with pytest.raises(sio.ConfigurationError, match="mock_response is a litellm option"):
        sio.LM("gemini/gemini-2.5-flash", transport="gemini", mock_response="x")


def test_the_profile_is_geminis() -> None:
    profile = sio.LM("gemini/gemini-2.5-flash", cache=False).profile
    assert profile.schema_dialect == "gemini"
    assert (profile.tools, profile.parallel_tool_calls, profile.reasoning) == (True, True, True)
    assert profile.logprobs is False
    assert profile.input_cost is not None
    assert profile.output_cost is not None


def test_a_plain_answer_and_what_was_sent(gemini: GeminiServer, make_lm: MakeLM) -> None:
    gemini.reply(GeminiReply(text_response("Paris.")))
    lm = make_lm(temperature=0.2, max_tokens=50, stop=["\n\n"], top_p=0.9, seed=7)
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of France?"},
    ]
    response = lm(messages)
    assert response.text == "Paris."
    assert response.completions[0].finish_reason == "stop"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (12, 5)
    assert response.cost == pytest.approx(12 * 3e-07 + 5 * 2.5e-06)
    request = gemini.requests[0]
    assert request.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert request.query == ""  # the key travels in a header, never in the address
    assert request.headers["x-goog-api-key"] == "test-key"
    check_request(request.body)
    assert request.body == {
        "contents": [{"role": "user", "parts": [{"text": "Capital of France?"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "generationConfig": {
            "temperature": 0.2,
            "topP": 0.9,
            "maxOutputTokens": 50,
            "seed": 7,
            "stopSequences": ["\n\n"],
        },
    }


def test_n_candidates(gemini: GeminiServer, make_lm: MakeLM) -> None:
    gemini.reply(GeminiReply(text_response("a", "b")))
    response = make_lm(n=2)([{"role": "user", "content": "x"}])
    assert [c.text for c in response] == ["a", "b"]
    assert gemini.requests[0].body["generationConfig"] == {"candidateCount": 2}


@pytest.mark.parametrize("way", ["sync", "async"])
def test_a_streamed_answer(gemini: GeminiServer, make_lm: MakeLM, way: str) -> None:
    gemini.reply(GeminiReply(text_response("The capital is Paris.", thought="France...")))
    lm = make_lm()
    messages = [{"role": "user", "content": "Capital?"}]
    if way == "sync":
        items = list(lm.stream(messages))
    else:

        async def collect() -> list[Any]:
            return [item async for item in lm.astream(messages)]

        items = asyncio.run(collect())
    pieces = [item for item in items if isinstance(item, str)]
    assert len(pieces) > 2
    assert "".join(pieces) == "The capital is Paris."
    response = items[-1]
    assert isinstance(response, sio.LMResponse)
    assert response.text == "The capital is Paris."
    assert response.completions[0].reasoning == "France..."
    assert response.usage.total_tokens == 17
    request = gemini.requests[0]
    assert request.path.endswith(":streamGenerateContent")
    assert request.query == "alt=sse"
    assert "stream_options" not in str(request.body)
    check_request(request.body)


def test_async_answer(gemini: GeminiServer, make_lm: MakeLM) -> None:
    gemini.reply(GeminiReply(text_response("hi")))
    response = asyncio.run(make_lm().acall([{"role": "user", "content": "x"}]))
    assert response.text == "hi"


def test_a_stream_cut_short_is_a_connection_error(gemini: GeminiServer, make_lm: MakeLM) -> None:
    gemini.reply(GeminiReply(text_response("a long answer"), cut_after=2))
    with pytest.raises(sio.LMConnectionError, match="no finish reason"):
        list(make_lm(num_retries=0).stream([{"role": "user", "content": "x"}]))


def test_a_missing_key_is_refused_before_any_request(
    gemini: GeminiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (*_gemini.KEY_ENV, "GEMINI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    lm = sio.LM("gemini/gemini-2.5-flash", cache=False)
    with pytest.raises(sio.AuthenticationError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        lm("hello")
    # The environment's key and base are read.
    monkeypatch.setenv("GOOGLE_API_KEY", "env-key")
    monkeypatch.setenv("GEMINI_API_BASE", gemini.base_url)
    assert lm("hello") == ["ok"]
    assert gemini.requests[0].headers["x-goog-api-key"] == "env-key"


@pytest.mark.parametrize(
    ("status", "body", "error", "words"),
    [
        (
            400,
            error_body(400, "INVALID_ARGUMENT", "Invalid JSON payload received."),
            sio.BadRequestError,
            "Invalid JSON payload received. [INVALID_ARGUMENT]",
        ),
        (
            400,
            error_body(
                400,
                "INVALID_ARGUMENT",
                "API key not valid. Please pass a valid API key.",
                details=[
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "API_KEY_INVALID",
                    }
                ],
            ),
            sio.AuthenticationError,
            "API key not valid",
        ),
        (
            401,
            error_body(401, "UNAUTHENTICATED", "Request had invalid authentication credentials."),
            sio.AuthenticationError,
            "invalid authentication credentials",
        ),
        (
            403,
            error_body(403, "PERMISSION_DENIED", "The caller does not have permission"),
            sio.AuthenticationError,
            "does not have permission",
        ),
        (
            400,
            error_body(
                400,
                "INVALID_ARGUMENT",
                "The input token count (1200000) exceeds the maximum number of tokens allowed "
                "(1048576).",
            ),
            sio.ContextWindowExceededError,
            "exceeds the maximum",
        ),
    ],
)
def test_errors_that_are_not_retried(
    gemini: GeminiServer,
    make_lm: MakeLM,
    status: int,
    body: dict[str, Any],
    error: type[Exception],
    words: str,
) -> None:
    gemini.reply(GeminiReply(body, status=status))
    with pytest.raises(error, match=re.escape(words)) as caught:
        make_lm(num_retries=3)("hello")
    assert len(gemini.requests) == 1
    assert "test-key" not in str(caught.value)


def test_a_429_is_retried_after_googles_retry_delay(
    gemini: GeminiServer, make_lm: MakeLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits: list[float] = []
    monkeypatch.setattr("structio.lm.lm._sleep", waits.append)
    quota = error_body(
        429,
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota.",
        details=[{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}],
    )
    gemini.reply(
        GeminiReply(quota, status=429),
        GeminiReply(quota, status=429, headers={"Retry-After": "1"}),
        GeminiReply(error_body(503, "UNAVAILABLE", "The model is overloaded."), status=503),
        GeminiReply(text_response("finally")),
    )
    assert make_lm(num_retries=3, max_backoff=60)("hello") == ["finally"]
    assert len(gemini.requests) == 4
    assert waits[:2] == [2.0, 1.0]  # RetryInfo, then the Retry-After header


def test_429_after_the_retries_says_what_google_said(gemini: GeminiServer, make_lm: MakeLM) -> None:
    gemini.default = GeminiReply(
        error_body(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted."),
        status=429,
        headers={"Retry-After": "0"},
    )
    with pytest.raises(
        sio.RateLimitError, match=r"Resource has been exhausted\. \[RESOURCE_EXHAUSTED\]"
    ):
        make_lm(num_retries=1)("hello")
    assert len(gemini.requests) == 2


def test_an_error_in_a_stream(gemini: GeminiServer, make_lm: MakeLM) -> None:
    gemini.reply(GeminiReply(error_body(400, "INVALID_ARGUMENT", "bad part"), status=400))
    with pytest.raises(sio.BadRequestError, match="bad part"):
        list(make_lm().stream([{"role": "user", "content": "x"}]))


@pytest.mark.parametrize("stream", [False, True])
def test_a_blocked_prompt_is_a_bad_request_never_retried(
    gemini: GeminiServer, make_lm: MakeLM, stream: bool
) -> None:
    blocked = {
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 8},
    }
    gemini.default = GeminiReply(blocked)
    lm = make_lm(num_retries=3)
    messages = [{"role": "user", "content": "x"}]
    with pytest.raises(sio.BadRequestError, match="blockReason PROHIBITED_CONTENT"):
        list(lm.stream(messages)) if stream else lm(messages)
    assert len(gemini.requests) == 1


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"logprobs": True}, "logprobs=True is not supported"),
        ({"top_logprobs": 3}, "top_logprobs=3 is not supported"),
        ({"logit_bias": {"1": 2}}, "logit_bias="),
        ({"user": "me"}, "user='me' is not supported"),
        ({"parallel_tool_calls": False}, "parallel_tool_calls=False"),
        ({"reasoning_effort": "extreme"}, "reasoning_effort='extreme'"),
        ({"response_format": {"type": "xml"}}, "response_format="),
    ],
)
def test_what_gemini_does_not_take_is_refused_before_sending(
    gemini: GeminiServer, make_lm: MakeLM, params: dict[str, Any], words: str
) -> None:
    with pytest.raises(sio.ConfigurationError, match=re.escape(words)) as caught:
        make_lm(**params)("hello")
    assert "gemini/gemini-2.5-flash" in str(caught.value)
    assert gemini.requests == []


def test_calls_without_ids_get_stable_ones_and_results_go_back_by_them(
    gemini: GeminiServer, make_lm: MakeLM
) -> None:
    gemini.reply(
        GeminiReply(calls_response(("weather", {"city": "Rome"}), ("weather", {"city": "Oslo"}))),
        GeminiReply(text_response("Both sunny.")),
    )
    tools = [
        {
            "type": "function",
            "function": {
                "name": "weather",
                "description": "Weather of a city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    lm = make_lm(tools=tools, tool_choice="auto")
    question = [{"role": "user", "content": "Rome and Oslo?"}]
    first = lm(question)
    calls = first.completions[0].tool_calls
    assert first.completions[0].finish_reason == "tool_calls"
    assert [call["id"] for call in calls or ()] == ["call_0", "call_1"]
    replay = [
        *question,
        {"role": "assistant", "content": None, "tool_calls": list(calls or ())},
        {"role": "tool", "tool_call_id": "call_0", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"sky": "clear"}'},
    ]
    assert lm(replay).text == "Both sunny."
    first_body, second = gemini.requests[0].body, gemini.requests[1].body
    check_request(first_body)
    check_request(second)
    assert first_body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "weather",
                    "description": "Weather of a city.",
                    "parametersJsonSchema": tools[0]["function"]["parameters"],
                }
            ]
        }
    ]
    assert first_body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
    assert second["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {"functionCall": {"name": "weather", "args": {"city": "Rome"}, "id": "call_0"}},
                {"functionCall": {"name": "weather", "args": {"city": "Oslo"}, "id": "call_1"}},
            ],
        },
        {
            "role": "user",  # the two results, one turn
            "parts": [
                {
                    "functionResponse": {
                        "name": "weather",
                        "response": {"result": "sunny"},
                        "id": "call_0",
                    }
                },
                {
                    "functionResponse": {
                        "name": "weather",
                        "response": {"sky": "clear"},
                        "id": "call_1",
                    }
                },
            ],
        },
    ]
