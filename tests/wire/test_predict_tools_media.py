"""Predict with images, tools and reasoning over the real wire, both transports.

What a user's program does end to end: images from a URL, a file and bytes arrive as
content parts; a native tool-call reply becomes `ToolCalls` that execute; a text-mode call
is read from the sections; a conversation replays calls and results as the provider
expects; a reasoning model's reasoning and its tokens are kept. Every test runs with
``import mcp`` failing, as on a plain install (tests/wire/test_lm_tools_reasoning.py runs
the litellm transport with `mcp` importable too).
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from tests.wire.server import OpenAIServer, Reply

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PNG_URI = "data:image/png;base64," + base64.b64encode(PNG).decode()


@pytest.fixture(autouse=True)
def no_mcp(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("mcp", "mcp_types"):
        monkeypatch.setitem(sys.modules, name, None)


def get_weather(city: str, unit: str = "C") -> str:
    """Get the weather for a city."""
    return f"sunny in {city} ({unit})"


class Compare(sio.Signature):
    """Say how the images differ."""

    images: list[sio.Image] = sio.InputField()
    difference: str = sio.OutputField()


class Assist(sio.Signature):
    """Answer the user, calling tools when needed."""

    question: str = sio.InputField()
    tools: list[sio.Tool] = sio.InputField()
    history: sio.History = sio.InputField()
    calls: sio.ToolCalls = sio.OutputField()
    answer: str = sio.OutputField()


class Solve(sio.Signature):
    """Solve the problem."""

    question: str = sio.InputField()
    reasoning: sio.Reasoning = sio.OutputField()
    answer: int = sio.OutputField()


def call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def test_images_from_a_url_a_file_and_bytes_arrive_as_content_parts(
    server: OpenAIServer, make_lm: Callable[..., sio.LM], tmp_path: Path
) -> None:
    photo = tmp_path / "photo.png"
    photo.write_bytes(PNG)
    server.reply(Reply("[[ ## difference ## ]]\nNone.\n\n[[ ## completed ## ]]"))
    images = [sio.Image("https://example.com/cat.jpg"), sio.Image(photo), sio.Image(PNG)]
    pred = sio.Predict(Compare, lm=make_lm())(images=images)
    assert pred.difference == "None."
    content = server.requests[0].messages[-1]["content"]
    assert [p["type"] for p in content] == ["text", "image_url"] * 3 + ["text"]
    urls = [p["image_url"]["url"] for p in content if p["type"] == "image_url"]
    assert urls == ["https://example.com/cat.jpg", PNG_URI, PNG_URI]
    assert content[0]["text"] == '[[ ## images ## ]]\n["'


def test_a_native_tool_call_reply_is_read_checked_and_executed(
    server: OpenAIServer, make_lm: Callable[..., sio.LM]
) -> None:
    server.reply(
        Reply(
            content=None,
            finish_reason="tool_calls",
            tool_calls=[call("c1", "get_weather", {"city": "Rome"})],
        )
    )
    adapter = sio.ChatAdapter(native_tools=True)
    pred = sio.Predict(Assist, lm=make_lm(), adapter=adapter)(
        question="Weather in Rome?", tools=[get_weather], history=sio.History()
    )
    assert pred.answer is None
    assert [(c.id, c.name, c.args) for c in pred.calls] == [("c1", "get_weather", {"city": "Rome"})]
    assert pred.calls.execute() == ["sunny in Rome (C)"]
    body = server.requests[0].body
    assert body["tools"] == [sio.Tool(get_weather).to_openai()]


def test_parallel_native_calls_that_carry_their_index_are_read(
    server: OpenAIServer, make_lm: Callable[..., sio.LM]
) -> None:
    # litellm's translation of Anthropic's `tool_use`, and some OpenAI-compatible servers,
    # keep the `index` of each call in a whole (not streamed) response.
    calls = [
        call("c1", "get_weather", {"city": "Rome"}),
        call("c2", "get_weather", {"city": "Oslo"}),
    ]
    for index, one in enumerate(calls):
        one["index"] = index
    server.reply(Reply(content=None, finish_reason="tool_calls", tool_calls=calls))
    adapter = sio.ChatAdapter(native_tools=True)
    pred = sio.Predict(Assist, lm=make_lm(), adapter=adapter)(
        question="Weather in Rome and Oslo?", tools=[get_weather], history=sio.History()
    )
    assert [(c.id, c.args["city"]) for c in pred.calls] == [("c1", "Rome"), ("c2", "Oslo")]
    assert pred.calls.execute() == ["sunny in Rome (C)", "sunny in Oslo (C)"]


def test_a_multi_turn_tool_conversation_over_the_wire(
    server: OpenAIServer, make_lm: Callable[..., sio.LM]
) -> None:
    server.reply(
        Reply(
            content=None,
            finish_reason="tool_calls",
            tool_calls=[call("c1", "get_weather", {"city": "Rome"})],
        ),
        Reply("[[ ## answer ## ]]\nSunny in Rome.\n\n[[ ## completed ## ]]"),
    )
    assist = sio.Predict(Assist, lm=make_lm(), adapter=sio.ChatAdapter(native_tools=True))
    first = assist(question="Rome?", tools=[get_weather], history=sio.History())
    first.calls.execute()
    history = sio.History([{"question": "Rome?", "calls": first.calls}])
    second = assist(question="Rome?", tools=[get_weather], history=history)
    assert second.answer == "Sunny in Rome."
    assert len(second.calls) == 0
    messages = server.requests[1].messages
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "user"]
    assert messages[2]["tool_calls"] == [call("c1", "get_weather", {"city": "Rome"})]
    assert messages[3]["tool_call_id"] == "c1"
    assert messages[3]["content"] == "sunny in Rome (C)"


def test_a_text_mode_tool_call_over_the_wire(
    server: OpenAIServer, make_lm: Callable[..., sio.LM]
) -> None:
    server.reply(
        Reply(
            '[[ ## calls ## ]]\n{"tool_calls": [{"name": "get_weather", "args": {"city": "Oslo"}}]}'
            "\n\n[[ ## answer ## ]]\nChecking.\n\n[[ ## completed ## ]]"
        )
    )
    adapter = sio.ChatAdapter(native_tools=False)
    pred = sio.Predict(Assist, lm=make_lm(), adapter=adapter)(
        question="Oslo?", tools=[get_weather], history=sio.History()
    )
    assert "tools" not in server.requests[0].body
    assert "get_weather, whose description is" in server.requests[0].messages[-1]["content"]
    assert pred.calls.execute() == ["sunny in Oslo (C)"]


@pytest.mark.parametrize("stream", [False, True])
def test_native_reasoning_and_its_tokens(
    server: OpenAIServer, make_lm: Callable[..., sio.LM], stream: bool
) -> None:
    usage = {
        "prompt_tokens": 20,
        "completion_tokens": 30,
        "total_tokens": 50,
        "completion_tokens_details": {"reasoning_tokens": 25},
    }
    server.reply(
        Reply(
            "[[ ## answer ## ]]\n21\n\n[[ ## completed ## ]]",
            reasoning_content="Three weeks of seven days.",
            usage=usage,
        )
    )
    predict = sio.Predict(Solve, lm=make_lm(), adapter=sio.ChatAdapter(native_reasoning=True))
    if stream:
        with predict.stream(question="Days in 3 weeks?") as events:
            pred = events.collect()
    else:
        pred = predict(question="Days in 3 weeks?")
    assert pred.answer == 21
    assert pred.reasoning == "Three weeks of seven days."
    assert pred.usage.reasoning_tokens == 25
    assert server.requests[0].body["reasoning_effort"] == "low"
    assert pred.responses[-1].completions[0].reasoning == "Three weeks of seven days."
