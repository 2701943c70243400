"""`structio.Predict` over the ``"gemini"`` transport: adapters, tools, images, reasoning.

What a user's program does end to end against a loopback Gemini API, each request body
checked with google-genai's own types.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import structio as sio
from tests.wire.providers.gemini_server import (
    GeminiReply,
    GeminiServer,
    calls_response,
    check_request,
    serve,
    text_response,
)
from tests.wire.test_predict_tools_media import Assist, get_weather

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


class QA(sio.Signature):
    """Answer the question."""

    question: str = sio.InputField()
    answer: str = sio.OutputField()
    confidence: float = sio.OutputField()


class Look(sio.Signature):
    """Describe the image."""

    image: sio.Image = sio.InputField()
    description: str = sio.OutputField()


class Solve(sio.Signature):
    """Solve the problem."""

    question: str = sio.InputField()
    reasoning: sio.Reasoning = sio.OutputField()
    answer: int = sio.OutputField()


CHAT_ANSWER = "[[ ## answer ## ]]\nParis\n\n[[ ## confidence ## ]]\n0.9\n\n[[ ## completed ## ]]"
JSON_ANSWER = json.dumps({"answer": "Paris", "confidence": 0.9})


@pytest.fixture
def gemini() -> Iterator[GeminiServer]:
    yield from serve()


@pytest.fixture
def make_lm(gemini: GeminiServer) -> Callable[..., sio.LM]:
    def make(model: str = "gemini/gemini-2.5-flash", **kwargs: Any) -> sio.LM:
        return sio.LM(model, api_base=gemini.base_url, api_key="k", cache=False, **kwargs)

    return make


def run(predict: sio.Predict, way: str, **inputs: Any) -> Any:
    """The prediction of one call made ``way``: sync, async, stream or astream."""
    if way == "sync":
        return predict(**inputs)
    if way == "async":
        return asyncio.run(predict.acall(**inputs))
    if way == "stream":
        with predict.stream(**inputs) as events:
            return events.collect()

    async def collect() -> Any:
        async with predict.astream(**inputs) as events:
            return await events.collect()

    return asyncio.run(collect())


WAYS = ["sync", "async", "stream", "astream"]


@pytest.mark.parametrize("way", WAYS)
def test_chat_adapter(gemini: GeminiServer, make_lm: Callable[..., sio.LM], way: str) -> None:
    gemini.default = GeminiReply(text_response(CHAT_ANSWER))
    pred = run(sio.Predict(QA, lm=make_lm(), adapter=sio.ChatAdapter()), way, question="Capital?")
    assert (pred.answer, pred.confidence) == ("Paris", 0.9)
    assert pred.meta.cost == pytest.approx(12 * 3e-07 + 5 * 2.5e-06)
    body = gemini.requests[0].body
    check_request(body)
    assert body["systemInstruction"]["parts"][0]["text"].startswith("Your input fields are")
    assert gemini.requests[0].stream == (way in ("stream", "astream"))


@pytest.mark.parametrize("way", WAYS)
def test_json_adapter_sends_the_schema_natively(
    gemini: GeminiServer, make_lm: Callable[..., sio.LM], way: str
) -> None:
    gemini.default = GeminiReply(text_response(JSON_ANSWER))
    pred = run(sio.Predict(QA, lm=make_lm(), adapter=sio.JSONAdapter()), way, question="Capital?")
    assert (pred.answer, pred.confidence) == ("Paris", 0.9)
    body = gemini.requests[0].body
    check_request(body)
    config = body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    schema = config["responseJsonSchema"]
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"answer", "confidence"}


@pytest.mark.parametrize("way", WAYS)
def test_parallel_native_calls_without_ids_then_their_results(
    gemini: GeminiServer, make_lm: Callable[..., sio.LM], way: str
) -> None:
    signature = base64.b64encode(b"signed thought").decode()
    gemini.reply(
        GeminiReply(
            calls_response(
                ("get_weather", {"city": "Rome"}),
                ("get_weather", {"city": "Oslo"}),
                signature=signature,
            )
        ),
        GeminiReply(text_response("[[ ## answer ## ]]\nSunny in both.\n\n[[ ## completed ## ]]")),
    )
    assist = sio.Predict(
        Assist,
        lm=make_lm("gemini/gemini-3-flash-preview"),
        adapter=sio.ChatAdapter(native_tools=True),
    )
    first = run(assist, way, question="Rome and Oslo?", tools=[get_weather], history=sio.History())
    assert [(c.name, c.args) for c in first.calls] == [
        ("get_weather", {"city": "Rome"}),
        ("get_weather", {"city": "Oslo"}),
    ]
    assert first.calls.execute() == ["sunny in Rome (C)", "sunny in Oslo (C)"]
    history = sio.History([{"question": "Rome and Oslo?", "calls": first.calls}])
    second = run(assist, way, question="Rome and Oslo?", tools=[get_weather], history=history)
    assert second.answer == "Sunny in both."
    first_body, body = gemini.requests[0].body, gemini.requests[1].body
    check_request(first_body)
    check_request(body)
    declaration = first_body["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "get_weather"
    assert declaration["parametersJsonSchema"]["properties"]["city"]["type"] == "string"
    roles = [turn["role"] for turn in body["contents"]]
    assert roles == ["user", "model", "user", "user"]
    model_turn, results = body["contents"][1], body["contents"][2]
    assert model_turn["parts"] == [
        {
            "functionCall": {"name": "get_weather", "args": {"city": "Rome"}, "id": "call_0"},
            "thoughtSignature": signature,  # kept in the call's id, put back here
        },
        {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}, "id": "call_1"}},
    ]
    assert results["parts"] == [
        {
            "functionResponse": {
                "name": "get_weather",
                "response": {"result": "sunny in Rome (C)"},
                "id": "call_0",
            }
        },
        {
            "functionResponse": {
                "name": "get_weather",
                "response": {"result": "sunny in Oslo (C)"},
                "id": "call_1",
            }
        },
    ]


@pytest.mark.parametrize("way", ["sync", "stream"])
def test_native_reasoning(gemini: GeminiServer, make_lm: Callable[..., sio.LM], way: str) -> None:
    usage = {"promptTokenCount": 20, "candidatesTokenCount": 10, "thoughtsTokenCount": 25}
    gemini.default = GeminiReply(
        text_response(
            "[[ ## answer ## ]]\n21\n\n[[ ## completed ## ]]",
            thought="Three weeks of seven days.",
            usage=usage,
        )
    )
    predict = sio.Predict(Solve, lm=make_lm(), adapter=sio.ChatAdapter(native_reasoning=True))
    pred = run(predict, way, question="Days in 3 weeks?")
    assert pred.answer == 21
    assert pred.reasoning == "Three weeks of seven days."
    assert pred.usage.reasoning_tokens == 25
    assert pred.usage.completion_tokens == 35
    assert pred.meta.cost == pytest.approx(20 * 3e-07 + 35 * 2.5e-06)
    body = gemini.requests[0].body
    check_request(body)
    assert body["generationConfig"]["thinkingConfig"] == {
        "thinkingBudget": 1024,
        "includeThoughts": True,
    }


def test_gemini_3_thinks_by_level(gemini: GeminiServer, make_lm: Callable[..., sio.LM]) -> None:
    gemini.default = GeminiReply(text_response("ok"))
    make_lm("gemini/gemini-3-pro-preview", reasoning_effort="high")("hi")
    body = gemini.requests[0].body
    check_request(body)
    assert body["generationConfig"]["thinkingConfig"] == {
        "thinkingLevel": "HIGH",
        "includeThoughts": True,
    }


def test_images_inline_and_by_url(gemini: GeminiServer, make_lm: Callable[..., sio.LM]) -> None:
    gemini.default = GeminiReply(
        text_response("[[ ## description ## ]]\nA dot.\n\n[[ ## completed ## ]]")
    )
    look = sio.Predict(Look, lm=make_lm())
    assert look(image=sio.Image(PNG)).description == "A dot."
    look(image=sio.Image("https://example.com/cat.jpg"))
    inline = [p for p in gemini.requests[0].body["contents"][-1]["parts"] if "inlineData" in p]
    assert inline == [
        {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(PNG).decode()}}
    ]
    by_url = [p for p in gemini.requests[1].body["contents"][-1]["parts"] if "fileData" in p]
    assert by_url == [
        {"fileData": {"fileUri": "https://example.com/cat.jpg", "mimeType": "image/jpeg"}}
    ]
    check_request(gemini.requests[0].body)
    check_request(gemini.requests[1].body)
