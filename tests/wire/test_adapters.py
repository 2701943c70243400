"""Every adapter over the real wire: what the server receives, and what is read from its reply.

One nested signature, one model whose map entry takes strict JSON schemas
(``openai/gpt-4o-mini`` pointed at the loopback server), and each adapter's own answer: the
request must hold exactly the adapter's messages and its request parameters (none,
``response_format`` or ``tools``), and the typed values must come back the same for all five.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

import structio as sio
from tests.wire.server import OpenAIServer, Reply


class Address(BaseModel):
    street: str
    zip: str | None = None


class Customer(BaseModel):
    name: str = Field(description="as written in the ticket")
    country: Literal["US", "UK", "FR"]
    addresses: list[Address]


class Extract(sio.Signature):
    """Extract the customer from the ticket."""

    ticket: str = sio.InputField()
    customer: Customer = sio.OutputField()
    urgency: int = sio.OutputField(ge=1, le=5)


VALUES: dict[str, Any] = {
    "customer": {"name": "Ann", "country": "UK", "addresses": [{"street": "1 Lane", "zip": None}]},
    "urgency": 4,
}
EXPECTED = {"customer": Customer.model_validate(VALUES["customer"]), "urgency": 4}
JSON_ANSWER = json.dumps(VALUES)


@pytest.fixture
def lm(server: OpenAIServer, transport: str) -> sio.LM:
    """A model the map says takes strict JSON schemas and tools, at the loopback server."""
    return sio.LM(
        "openai/gpt-4o-mini",
        api_base=server.base_url,
        api_key="test-key",
        cache=False,
        transport=transport,
    )


def _reply(name: str) -> Reply:
    if name == "chat":
        return Reply(
            f"[[ ## customer ## ]]\n{json.dumps(VALUES['customer'])}\n\n"
            "[[ ## urgency ## ]]\n4\n\n[[ ## completed ## ]]"
        )
    if name == "xml":
        return Reply(
            "<customer><name>Ann</name><country>UK</country><addresses><item><street>1 Lane"
            "</street><zip>null</zip></item></addresses></customer>\n<urgency>4</urgency>"
        )
    if name == "tool_output":
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "final_answer", "arguments": JSON_ANSWER},
        }
        return Reply(content=None, finish_reason="tool_calls", tool_calls=[call])
    return Reply(JSON_ANSWER)  # json, compact


ADAPTERS: dict[str, Callable[[], sio.Adapter]] = {
    "chat": sio.ChatAdapter,
    "json": sio.JSONAdapter,
    "xml": sio.XMLAdapter,
    "compact": sio.CompactAdapter,
    "tool_output": sio.ToolOutputAdapter,
}


@pytest.mark.parametrize("name", list(ADAPTERS))
def test_each_adapter_sends_its_format_and_reads_the_reply(
    server: OpenAIServer, lm: sio.LM, name: str
) -> None:
    adapter = ADAPTERS[name]()
    server.reply(_reply(name))

    pred = sio.Predict(Extract, lm=lm, adapter=adapter)(ticket="Ann (UK) at 1 Lane: urgent")

    assert {key: pred[key] for key in EXPECTED} == EXPECTED
    assert pred.route == {"chat": "chat", "xml": "xml"}.get(name, "json")
    [request] = server.requests
    body = request.body
    assert body["messages"] == adapter.format(
        Extract, inputs={"ticket": "Ann (UK) at 1 Lane: urgent"}
    )
    sent = {key for key in ("response_format", "tools", "tool_choice") if key in body}
    if name in ("chat", "xml"):
        assert sent == set()
    elif name == "json":
        assert sent == {"response_format"}
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["strict"] is True
    elif name == "compact":
        assert sent == {"response_format"}
        assert body["response_format"] == {"type": "json_object"}
        assert 'country: "US" | "UK" | "FR"' in body["messages"][0]["content"]
    else:
        assert sent == {"tools", "tool_choice"}
        [tool] = body["tools"]
        assert tool["function"]["name"] == "final_answer"
        assert tool["function"]["strict"] is True
        assert body["tool_choice"] == {"type": "function", "function": {"name": "final_answer"}}


@pytest.mark.parametrize("name", ["xml", "compact", "tool_output"])
def test_a_value_that_breaks_a_constraint_is_re_asked_in_each_new_format(
    server: OpenAIServer, lm: sio.LM, name: str
) -> None:
    bad = {**VALUES, "urgency": 9}
    if name == "xml":
        first = Reply(_reply("xml").content.replace("<urgency>4<", "<urgency>9<"))  # type: ignore[union-attr]
    elif name == "tool_output":
        first = _reply("tool_output")
        first.tool_calls[0]["function"]["arguments"] = json.dumps(bad)  # type: ignore[index]
    else:
        first = Reply(json.dumps(bad))
    server.reply(first, _reply(name))

    pred = sio.Predict(Extract, lm=lm, adapter=ADAPTERS[name]())(ticket="t", max_retries=1)

    assert pred.urgency == 4
    assert len(server.requests) == 2
    feedback = server.requests[1].messages[-1]
    assert feedback["role"] == "user"
    assert "`urgency`" in feedback["content"]
    assert "less than or equal to 5" in feedback["content"]
