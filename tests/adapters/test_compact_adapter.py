"""CompactAdapter: outputs in the compact type notation, answered and read as JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

import structio as sio
from structio.adapters.compact_adapter import CompactAdapter, output_type
from structio.lm.profile import ModelProfile


class Contact(BaseModel):
    """Who to call back."""

    name: str
    phone: str | None = Field(None, description="With country code")


class Triage(sio.Signature):
    """Triage the ticket."""

    ticket: str = sio.InputField(desc="The customer's message")
    category: Literal["billing", "bug"] = sio.OutputField()
    urgency: int = sio.OutputField(ge=1, le=5, desc="1 is lowest")
    contact: Contact | None = sio.OutputField()


SYSTEM = """\
Your input fields are:
1. `ticket` (str): The customer's message
Your output fields are: `category`, `urgency`, `contact`.
All interactions will be structured in the following way, with the appropriate values filled in.

Inputs will have the following structure:

[[ ## ticket ## ]]
{ticket}

Outputs will be a JSON object of this type (`//` starts a comment, `?:` marks a field that \
may be left out):

{
  category: "billing" | "bug",
  urgency: int,  // 1 is lowest; 1 to 5
  contact: {  // Who to call back.
    name: string,
    phone?: string | null  // With country code
  } | null
}
In adhering to this structure, your objective is: \n        Triage the ticket."""

USER = """\
[[ ## ticket ## ]]
My card was charged twice.

Respond with a JSON object of the type above, its fields in this order: `category`, then \
`urgency`, then `contact`."""


@dataclass
class Capabilities:
    supports_response_schema: bool = False
    supports_json_mode: bool = False
    supports_function_calling: bool = False
    supports_reasoning: bool = False

    @property
    def profile(self) -> ModelProfile:
        """The flags as the profile adapters read."""
        return ModelProfile(
            json_schema=self.supports_response_schema,
            json_object=self.supports_json_mode,
            tools=self.supports_function_calling,
            reasoning=self.supports_reasoning,
        )


def test_prompt_of_a_small_signature() -> None:
    messages = CompactAdapter().format(Triage, inputs={"ticket": "My card was charged twice."})
    assert messages == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": USER},
    ]


def test_a_plain_signature_says_nothing_about_signs_it_does_not_use() -> None:
    system = CompactAdapter().format("question -> answer: int", inputs={"question": "q"})[0]
    assert "Outputs will be a JSON object of this type:\n\n{ answer: int }\n" in system["content"]
    assert "//" not in system["content"]


def test_the_prompt_is_shorter_than_json_adapters_and_keeps_every_constraint() -> None:
    class Line(BaseModel):
        sku: str = Field(min_length=3, max_length=12, description="Stock keeping unit")
        quantity: int = Field(gt=0)

    class Order(BaseModel):
        """An order."""

        lines: list[Line] = Field(min_length=1)
        status: Literal["open", "shipped"]

    sig = sio.Signature("text -> order: Order", "Read the order.", custom_types={"Order": Order})
    compact = CompactAdapter().format(sig, inputs={"text": "x"})[0]["content"]
    full = sio.JSONAdapter().format(sig, inputs={"text": "x"})[0]["content"]
    assert len(compact) < len(full) / 2
    for shown in ("3 to 12 chars", "Stock keeping unit", "> 0", "at least 1 item", "An order."):
        assert shown in compact


def test_a_recursive_output_model_is_named_once() -> None:
    class Node(BaseModel):
        label: str
        children: list[Node] = []

    sig = sio.Signature("text -> tree: Node", "Parse the tree.", custom_types={"Node": Node})
    system = CompactAdapter().format(sig, inputs={"text": "x"})[0]["content"]
    assert "{ tree: Node }\nNode = { label: string, children?: Node[] }\n" in system


def test_the_notation_is_computed_once_per_signature() -> None:
    assert output_type(Triage) is output_type(Triage)


@pytest.mark.parametrize(
    ("capabilities", "expected"),
    [
        (Capabilities(), None),
        (Capabilities(supports_json_mode=True), {"type": "json_object"}),
        # Never a schema, even where one is supported: it would cost the tokens saved.
        (Capabilities(supports_response_schema=True), {"type": "json_object"}),
        (
            Capabilities(supports_response_schema=True, supports_json_mode=True),
            {"type": "json_object"},
        ),
    ],
)
def test_request_params_ask_for_json_mode_never_a_schema(
    capabilities: Capabilities, expected: dict[str, Any] | None
) -> None:
    params = CompactAdapter().request_params(Triage, {"temperature": 0}, capabilities)
    assert params.get("response_format") == expected
    assert params["temperature"] == 0


def test_request_params_keep_the_callers_response_format() -> None:
    mine = {"type": "text"}
    params = CompactAdapter().request_params(
        Triage, {"response_format": mine}, Capabilities(supports_json_mode=True)
    )
    assert params == {"response_format": mine}


def test_demos_and_history_answers_are_json_objects() -> None:
    sig = sio.Signature("question, history: History -> answer: int, note")
    demo = {"question": "1+1?", "answer": 2, "note": "easy"}
    history = sio.History(messages=[{"question": "2+2?", "answer": 4, "note": "sum"}])
    messages = CompactAdapter().format(sig, [demo], {"question": "3+3?", "history": history})
    assistants = [m["content"] for m in messages if m["role"] == "assistant"]
    assert [json.loads(text) for text in assistants] == [
        {"answer": 2, "note": "easy"},
        {"answer": 4, "note": "sum"},
    ]


def test_parse_reads_json_leniently_and_never_invents() -> None:
    adapter = CompactAdapter()
    fenced = '```json\n{"category": "bug", "urgency": 3, "contact": null,}\n```'
    assert adapter.parse(Triage, fenced) == {"category": "bug", "urgency": 3, "contact": None}
    with pytest.raises(sio.ParseError) as caught:
        adapter.parse(Triage, '{"category": "bug", "urgency": 9, "contact": null}')
    assert "urgency" in str(caught.value)
    with pytest.raises(sio.ParseError):
        adapter.parse(Triage, '{"category": "bug", "urgency": ')  # cut off: nothing filled in


def test_a_call_through_predict_sends_the_notation_and_reads_the_answer() -> None:
    lm = sio.FakeLM([{"category": "billing", "urgency": 4, "contact": {"name": "Ann"}}])
    result = sio.Predict(Triage, lm=lm, adapter=CompactAdapter())(ticket="Charged twice")
    assert result.category == "billing"
    assert result.urgency == 4
    assert result.contact == Contact(name="Ann")
    assert result.route == "json"
    assert "urgency: int,  // 1 is lowest; 1 to 5" in lm.calls[0].messages[0]["content"]


def test_saved_and_loaded() -> None:
    adapter = CompactAdapter(native_reasoning=False)
    data = adapter.to_dict()
    assert data == {"type": "CompactAdapter", "native_reasoning": False}
    assert sio.Adapter.from_dict(data) == adapter
