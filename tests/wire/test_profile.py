"""`LM(..., profile=...)` decides what goes on the wire for a model no map knows.

An OpenAI-compatible server behind an unknown model name (the loopback server's
``openai/test``): the profile given to the LM, not a guess, says whether JSONAdapter sends a
strict schema, a plain schema, JSON object mode or nothing, and whether tools travel
natively. Both transports.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, Literal

import pytest

import structio as sio
from structio.lm.profile import ModelProfile
from tests.wire.server import OpenAIServer, Reply

MakeLM = Callable[..., sio.LM]


@pytest.fixture(autouse=True)
def no_mcp(monkeypatch: pytest.MonkeyPatch) -> None:
    # As on a plain install: litellm's MCP gateway is not importable.
    for name in ("mcp", "mcp_types"):
        monkeypatch.setitem(sys.modules, name, None)


class Triage(sio.Signature):
    """Route a support ticket."""

    ticket: str = sio.InputField()
    category: Literal["billing", "bug", "other"] = sio.OutputField()
    urgency: int = sio.OutputField()


class Assist(sio.Signature):
    """Answer the user, calling tools when needed."""

    question: str = sio.InputField()
    tools: list[sio.Tool] = sio.InputField()
    calls: sio.ToolCalls = sio.OutputField()
    answer: str = sio.OutputField()


def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return f"sunny in {city}"


ANSWER = '{"category": "bug", "urgency": 2}'


def sent_response_format(server: OpenAIServer, lm: sio.LM) -> Any:
    server.reply(Reply(content=ANSWER))
    pred = sio.Predict(Triage, lm=lm, adapter=sio.JSONAdapter())(ticket="crash on start")
    assert (pred.category, pred.urgency) == ("bug", 2)
    return server.requests[-1].body.get("response_format")


def test_the_profile_chooses_the_response_format(server: OpenAIServer, make_lm: MakeLM) -> None:
    # The map does not know the model; the transport's rule: JSON object mode.
    assert sent_response_format(server, make_lm()) == {"type": "json_object"}
    strict = sent_response_format(server, make_lm(profile={"json_schema": True}))
    assert strict["type"] == "json_schema"
    assert strict["json_schema"]["strict"] is True
    assert strict["json_schema"]["schema"]["additionalProperties"] is False
    plain = sent_response_format(
        server, make_lm(profile={"json_schema": True, "schema_dialect": "json-schema"})
    )
    assert plain["type"] == "json_schema"
    assert plain["json_schema"]["strict"] is False
    assert "additionalProperties" not in plain["json_schema"]["schema"]
    assert plain["json_schema"]["schema"]["required"] == ["category", "urgency"]
    # A whole profile replaces the derived one: this server takes plain prompts only.
    assert sent_response_format(server, make_lm(profile=ModelProfile())) is None
    assert sent_response_format(server, make_lm(profile={"json_object": False})) is None


@pytest.mark.parametrize("tools", [True, False])
def test_the_profile_chooses_whether_tools_travel_natively(
    server: OpenAIServer, make_lm: MakeLM, tools: bool
) -> None:
    if tools:
        call = {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": "Rome"})},
        }
        server.reply(Reply(content=None, finish_reason="tool_calls", tool_calls=[call]))
    else:
        text = (
            '[[ ## calls ## ]]\n{"tool_calls": [{"name": "get_weather", "args": {"city": "Rome"}}]}'
        )
        server.reply(Reply(f"{text}\n\n[[ ## answer ## ]]\n-\n\n[[ ## completed ## ]]"))
    lm = make_lm(profile={"tools": tools})
    pred = sio.Predict(Assist, lm=lm)(question="Weather in Rome?", tools=[get_weather])
    assert [(c.name, c.args) for c in pred.calls] == [("get_weather", {"city": "Rome"})]
    body = server.requests[-1].body
    if tools:
        assert body["tools"] == [sio.Tool(get_weather).to_openai()]
    else:
        assert "tools" not in body
        assert "get_weather" in body["messages"][-1]["content"] + body["messages"][0]["content"]


def test_a_saved_lm_keeps_its_profile(
    server: OpenAIServer, make_lm: MakeLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")  # a saved LM holds no key
    lm = make_lm(profile={"json_schema": True})
    loaded = sio.LM.from_dict(lm.to_dict(), trust_endpoint=True)
    assert loaded.profile == lm.profile
    assert sent_response_format(server, loaded)["type"] == "json_schema"


@pytest.mark.parametrize("stream_usage", [True, False])
def test_the_profile_says_whether_a_stream_asks_for_usage(
    server: OpenAIServer, make_lm: MakeLM, stream_usage: bool
) -> None:
    server.reply(Reply(content="hello there"))
    lm = make_lm(profile={"stream_usage": stream_usage})
    with lm.stream([{"role": "user", "content": "hi"}]) as stream:
        items = list(stream)
    assert "".join(i for i in items if isinstance(i, str)) == "hello there"
    body = server.requests[-1].body
    if stream_usage:
        assert body["stream_options"] == {"include_usage": True}
        assert items[-1].usage.prompt_tokens == 11
    else:
        assert "stream_options" not in body


def test_prices_the_profile_sets_price_every_response(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(content="hello"))
    unknown = make_lm()([{"role": "user", "content": "hi"}])
    assert unknown.cost is None  # no map knows the model's prices
    server.reply(Reply(content="hello"))
    lm = make_lm(profile={"input_cost": 1e-6, "output_cost": 3e-6, "cached_input_cost": 5e-7})
    response = lm([{"role": "user", "content": "hi again"}])
    # 11 prompt tokens (4 of them cached) and 3 completion tokens.
    assert response.cost == pytest.approx(7 * 1e-6 + 4 * 5e-7 + 3 * 3e-6)
    server.reply(Reply(content="hello"))
    with lm.stream([{"role": "user", "content": "and again"}]) as stream:
        streamed = list(stream)[-1]
    assert streamed.cost == pytest.approx(7 * 1e-6 + 4 * 5e-7 + 3 * 3e-6)
