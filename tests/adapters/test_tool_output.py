"""ToolOutputAdapter: the answer as the arguments of one forced tool call."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

import structio as sio
from structio.adapters.tool_output import ToolOutputAdapter, answer_tool
from structio.lm.profile import ModelProfile
from structio.lm.types import Completion
from structio.parsing.stream import FieldValue
from tests.wire.server import OpenAIServer, Reply


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
Your output fields are:
1. `category` (Literal['billing', 'bug']): \n\
2. `urgency` (int): 1 is lowest
Constraints: greater than or equal to: 1, less than or equal to: 5
3. `contact` (Union[Contact, NoneType]):
All interactions will be structured in the following way, with the appropriate values filled in.

Inputs will have the following structure:

[[ ## ticket ## ]]
{ticket}

Outputs will be the arguments of a call to the `final_answer` tool: a JSON object with the \
output fields.
In adhering to this structure, your objective is: \n        Triage the ticket."""

USER = """\
[[ ## ticket ## ]]
My card was charged twice.

Respond by calling the `final_answer` tool with the arguments `category`, then `urgency`, \
then `contact`."""

ANSWER = {"category": "billing", "urgency": 4, "contact": {"name": "Ann", "phone": None}}


def call(arguments: Any, name: str = "final_answer", call_id: str = "c1") -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def called(*calls: dict[str, Any]) -> Completion:
    return Completion("", "tool_calls", calls)


@dataclass
class Capabilities:
    supports_response_schema: bool = False
    supports_json_mode: bool = True
    supports_function_calling: bool = True
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


# -- the prompt and the request --------------------------------------------------------------


def test_prompt_of_a_small_signature() -> None:
    messages = ToolOutputAdapter().format(Triage, inputs={"ticket": "My card was charged twice."})
    assert messages == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": USER},
    ]


def test_request_params_send_one_strict_tool_and_force_it() -> None:
    params = ToolOutputAdapter().request_params(
        Triage, {"temperature": 0}, Capabilities(supports_response_schema=True)
    )
    assert params["temperature"] == 0
    assert params["tool_choice"] == {"type": "function", "function": {"name": "final_answer"}}
    assert "response_format" not in params
    [tool] = params["tools"]
    assert tool["type"] == "function"
    function = tool["function"]
    assert function["name"] == "final_answer"
    assert function["description"] == "Triage the ticket."
    assert function["strict"] is True
    assert (
        function["parameters"]
        == sio.JSONAdapter().request_params(
            Triage, {}, Capabilities(supports_response_schema=True)
        )["response_format"]["json_schema"]["schema"]
    )
    assert function["parameters"]["required"] == ["category", "urgency", "contact"]
    assert function["parameters"]["additionalProperties"] is False


def test_without_strict_schema_support_the_tool_carries_pydantics_schema() -> None:
    [tool] = ToolOutputAdapter().request_params(Triage, {}, Capabilities())["tools"]
    function = tool["function"]
    assert "strict" not in function
    schema = function["parameters"]
    assert schema["required"] == ["category", "urgency", "contact"]
    assert schema["properties"]["urgency"] == {"type": "integer", "description": "1 is lowest"}
    assert schema["properties"]["category"] == {"enum": ["billing", "bug"], "type": "string"}
    assert "Contact" in schema["$defs"]


def test_an_open_dict_output_is_sent_without_strict_mode() -> None:
    sig = sio.Signature("text -> counts: dict[str, int]")
    capable = Capabilities(supports_response_schema=True)
    [tool] = ToolOutputAdapter().request_params(sig, {}, capable)["tools"]
    assert "strict" not in tool["function"]
    assert tool["function"]["parameters"]["properties"]["counts"]["type"] == "object"
    with pytest.raises(sio.ConfigurationError, match="open dict"):
        ToolOutputAdapter(strict=True).request_params(sig, {}, capable)


def test_strict_can_be_chosen() -> None:
    [forced] = ToolOutputAdapter(strict=True).request_params(Triage, {}, Capabilities())["tools"]
    assert forced["function"]["strict"] is True
    capable = Capabilities(supports_response_schema=True)
    [never] = ToolOutputAdapter(strict=False).request_params(Triage, {}, capable)["tools"]
    assert "strict" not in never["function"]


def test_the_tool_schema_is_a_copy_the_caller_may_change() -> None:
    first = answer_tool(Triage, "final_answer", strict=False)
    first["function"]["parameters"]["properties"].clear()
    again = answer_tool(Triage, "final_answer", strict=False)
    assert again["function"]["parameters"]["properties"]


def test_empty_instructions_give_no_description() -> None:
    sig = sio.Signature("q -> a").with_instructions("  ")
    assert "description" not in answer_tool(sig, "final_answer", strict=False)["function"]


@pytest.mark.parametrize("key", ["tools", "tool_choice"])
def test_the_callers_own_tools_are_refused(key: str) -> None:
    with pytest.raises(sio.ConfigurationError, match="uses the tool channel for the answer"):
        ToolOutputAdapter().request_params(Triage, {key: []}, Capabilities())
    lm = sio.FakeLM([ANSWER])
    with pytest.raises(sio.ConfigurationError, match="this call sets"):
        sio.Predict(Triage, lm=lm, adapter=ToolOutputAdapter())(ticket="x", config={key: []})
    assert lm.call_count == 0


def test_tools_set_on_the_lm_are_refused() -> None:
    lm = sio.LM("openai/test", api_key="k", tools=[{"type": "function"}])
    with pytest.raises(sio.ConfigurationError, match="the LM sets tools"):
        ToolOutputAdapter().request_params(Triage, {}, lm)


def test_a_signature_that_offers_tools_is_refused() -> None:
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "sunny"

    sig = sio.Signature(
        "question, tools: list[Tool] -> calls: ToolCalls, answer",
        custom_types={"Tool": sio.Tool, "ToolCalls": sio.ToolCalls},
    )
    adapter = ToolOutputAdapter()
    with pytest.raises(sio.ConfigurationError, match="cannot be combined") as caught:
        adapter.format(sig, inputs={"question": "q", "tools": [get_weather]})
    assert "input `tools`" in str(caught.value)
    assert "output `calls`" in str(caught.value)
    lm = sio.FakeLM([ANSWER])
    with pytest.raises(sio.ConfigurationError, match="cannot be combined"):
        sio.Predict(sig, lm=lm, adapter=adapter)(question="q", tools=[get_weather])
    with pytest.raises(sio.ConfigurationError, match="cannot be combined"):
        adapter.request_params(sig, {}, Capabilities())
    assert lm.call_count == 0


def test_options_are_checked_saved_and_loaded() -> None:
    assert ToolOutputAdapter().to_dict() == {
        "type": "ToolOutputAdapter",
        "tool_name": "final_answer",
    }
    adapter = ToolOutputAdapter(tool_name="submit", strict=False)
    data = adapter.to_dict()
    assert data == {"type": "ToolOutputAdapter", "tool_name": "submit", "strict": False}
    assert sio.Adapter.from_dict(data) == adapter
    assert adapter != ToolOutputAdapter(tool_name="submit")
    for bad in ("", "has space", "x" * 65, 3):
        with pytest.raises(ValueError, match="tool_name"):
            ToolOutputAdapter(tool_name=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="strict"):
        ToolOutputAdapter(strict="yes")  # type: ignore[arg-type]


def test_a_custom_tool_name_is_used_everywhere() -> None:
    adapter = ToolOutputAdapter(tool_name="submit")
    messages = adapter.format(Triage, inputs={"ticket": "x"})
    assert "a call to the `submit` tool" in messages[0]["content"]
    assert "calling the `submit` tool" in messages[1]["content"]
    params = adapter.request_params(Triage, {}, Capabilities())
    assert params["tools"][0]["function"]["name"] == "submit"
    assert params["tool_choice"]["function"]["name"] == "submit"
    assert adapter.answer_text("", [call({"a": 1}, "final_answer"), call({"a": 2}, "submit")]) == (
        '{"a": 2}'
    )


def test_demos_and_history_answers_are_json_text() -> None:
    sig = sio.Signature("question, history: History -> answer: int")
    history = sio.History(messages=[{"question": "2+2?", "answer": 4}])
    messages = ToolOutputAdapter().format(
        sig, [{"question": "1+1?", "answer": 2}], {"question": "3+3?", "history": history}
    )
    assistants = [m for m in messages if m["role"] == "assistant"]
    assert [json.loads(m["content"]) for m in assistants] == [{"answer": 2}, {"answer": 4}]
    assert all("tool_calls" not in m for m in assistants)
    assert not [m for m in messages if m["role"] == "tool"]


# -- reading the answer ----------------------------------------------------------------------


def test_answer_text_takes_the_first_call_to_the_answer_tool() -> None:
    adapter = ToolOutputAdapter()
    assert adapter.answer_text("", [call({"a": 1})]) == '{"a": 1}'
    assert adapter.answer_text("text", [call({"a": 1}, "other"), call({"a": 2})]) == '{"a": 2}'
    assert adapter.answer_text("", [call({"a": 1}), call({"a": 2})]) == '{"a": 1}'
    decoded = {"function": {"name": "final_answer", "arguments": {"a": 3}}}
    assert adapter.answer_text("", [decoded]) == '{"a": 3}'


def test_answer_text_without_the_call_is_the_text() -> None:
    adapter = ToolOutputAdapter()
    assert adapter.answer_text('{"a": 1}') == '{"a": 1}'
    assert adapter.answer_text('{"a": 1}', []) == '{"a": 1}'
    assert adapter.answer_text("plain", [call({"a": 1}, "other")]) == "plain"
    assert adapter.answer_text("x", [{"function": {"name": "final_answer"}}]) == "x"


def test_predict_reads_the_tool_calls_arguments() -> None:
    lm = sio.FakeLM([called(call(ANSWER))])
    result = sio.Predict(Triage, lm=lm, adapter=ToolOutputAdapter())(ticket="Charged twice")
    assert result.category == "billing"
    assert result.urgency == 4
    assert result.contact == Contact(name="Ann")
    assert result.route == "json"
    params = lm.calls[0].params
    assert params["tool_choice"] == {"type": "function", "function": {"name": "final_answer"}}
    assert [tool["function"]["name"] for tool in params["tools"]] == ["final_answer"]


def test_a_plain_text_answer_is_read_as_json_instead() -> None:
    lm = sio.FakeLM(['Here it is: {"category": "bug", "urgency": 2, "contact": null}'])
    result = sio.Predict(Triage, lm=lm, adapter=ToolOutputAdapter())(ticket="It crashes")
    assert (result.category, result.urgency, result.contact) == ("bug", 2, None)


def test_a_dict_reply_of_the_fake_lm_is_read() -> None:
    lm = sio.FakeLM([ANSWER])
    result = sio.Predict(Triage, lm=lm, adapter=ToolOutputAdapter())(ticket="x")
    assert result.urgency == 4


def test_arguments_that_break_a_constraint_are_a_parse_error() -> None:
    lm = sio.FakeLM([called(call({**ANSWER, "urgency": 9}))])
    with pytest.raises(sio.ParseError) as caught:
        sio.Predict(Triage, lm=lm, adapter=ToolOutputAdapter())(ticket="x")
    assert "urgency" in caught.value.invalid


def test_a_call_to_another_tool_and_no_text_is_a_parse_error() -> None:
    lm = sio.FakeLM([called(call(ANSWER, "something_else"))])
    with pytest.raises(sio.ParseError):
        sio.Predict(Triage, lm=lm, adapter=ToolOutputAdapter())(ticket="x")


def test_a_re_ask_shows_the_model_its_arguments() -> None:
    lm = sio.FakeLM([called(call({**ANSWER, "urgency": 9})), called(call(ANSWER))])
    predict = sio.Predict(Triage, lm=lm, adapter=ToolOutputAdapter(), max_retries=1)
    result = predict(ticket="x")
    assert result.urgency == 4
    retry = lm.calls[1].messages
    assert json.loads(retry[-2]["content"])["urgency"] == 9
    assert retry[-2]["role"] == "assistant"
    assert "`urgency`" in retry[-1]["content"]
    assert "calling the `final_answer` tool" in retry[-1]["content"]


def test_a_streamed_call_gives_the_values_at_the_end() -> None:
    lm = sio.FakeLM([called(call(ANSWER))])
    stream = sio.Predict(Triage, lm=lm, adapter=ToolOutputAdapter()).stream(ticket="x")
    items = list(stream)
    values = {item.field: item.value for item in items if isinstance(item, FieldValue)}
    assert values == {"category": "billing", "urgency": 4, "contact": Contact(name="Ann")}
    assert items[-1] == stream.result
    assert stream.result.urgency == 4


@settings(max_examples=60, deadline=None)
@given(
    st.fixed_dictionaries(
        {
            "category": st.sampled_from(["billing", "bug"]),
            "urgency": st.integers(min_value=1, max_value=5),
            "contact": st.none() | st.builds(Contact, name=st.text(), phone=st.none() | st.text()),
        }
    )
)
def test_arguments_written_by_the_adapter_read_back(values: dict[str, Any]) -> None:
    adapter = ToolOutputAdapter()
    arguments = adapter.format_assistant_message_content(Triage, values)
    text = adapter.answer_text("", [call(arguments)])
    assert adapter.parse(Triage, text) == values


# -- over the wire ---------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["direct", "litellm"])
def test_over_the_wire_the_tool_goes_out_and_the_arguments_come_back(
    server: OpenAIServer, transport: str
) -> None:
    server.reply(Reply(content=None, finish_reason="tool_calls", tool_calls=[call(ANSWER)]))
    lm = sio.LM(
        "openai/test", api_base=server.base_url, api_key="k", cache=False, transport=transport
    )
    result = sio.Predict(Triage, lm=lm, adapter=ToolOutputAdapter())(ticket="Charged twice")
    assert (result.category, result.urgency, result.contact) == ("billing", 4, Contact(name="Ann"))
    [request] = server.requests
    body = request.body
    assert body["tool_choice"] == {"type": "function", "function": {"name": "final_answer"}}
    [tool] = body["tools"]
    assert tool["function"]["name"] == "final_answer"
    assert tool["function"]["parameters"]["required"] == ["category", "urgency", "contact"]
    assert "response_format" not in body
    assert body["messages"][-1]["content"].endswith(
        "Respond by calling the `final_answer` tool with the arguments `category`, then "
        "`urgency`, then `contact`."
    )
