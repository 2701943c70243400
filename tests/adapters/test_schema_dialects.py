"""The schema dialect of a model's profile on the wire: response formats, answer tools, tools.

A discriminated-union output is sent as ``anyOf`` (OpenAI's strict mode refuses ``oneOf``),
and the answer is still read into the right member of the union.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

import pydantic
import pytest
from pydantic import BaseModel, Field, conint

import structio as sio
from structio.adapters.json_adapter import dialect_output_schema, strict_output_schema
from structio.adapters.native import tool_entry
from structio.adapters.tool_output import ToolOutputAdapter
from structio.lm.profile import ModelProfile
from structio.lm.types import Completion


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: conint(ge=1, le=9)  # type: ignore[valid-type]


class Dog(BaseModel):
    kind: Literal["dog"]
    name: str


Pet = Annotated[Union[Cat, Dog], Field(discriminator="kind")]  # noqa: UP007


class Adopt(sio.Signature):
    """Pick a pet for the family."""

    family: str = sio.InputField()
    pet: Pet = sio.OutputField()


class Node(BaseModel):
    label: str
    children: list[Node] = []


class Outline(sio.Signature):
    """Outline the text."""

    text: str = sio.InputField()
    outline: Node = sio.OutputField()


@dataclass
class Model:
    """What an adapter asks of a model: its profile."""

    profile: ModelProfile


def schema_model(dialect: str | None = None) -> Model:
    return Model(ModelProfile(json_schema=True, json_object=True, schema_dialect=dialect))


def response_format(sig: type[sio.Signature], dialect: str | None = None) -> dict[str, Any]:
    params = sio.JSONAdapter().request_params(sig, {}, schema_model(dialect))
    found: dict[str, Any] = params["response_format"]
    return found


# -- JSONAdapter ------------------------------------------------------------------------------


def test_a_discriminated_union_output_is_sent_without_one_of_and_read_as_its_member() -> None:
    sent = response_format(Adopt)
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["strict"] is True
    schema = sent["json_schema"]["schema"]
    text = json.dumps(schema)
    assert "oneOf" not in text
    assert "discriminator" not in text
    assert schema["properties"]["pet"] == {
        "anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]
    }
    assert schema["$defs"]["Dog"]["additionalProperties"] is False
    read = sio.JSONAdapter().parse(Adopt, '{"pet": {"kind": "dog", "name": "Rex"}}')
    assert read["pet"] == Dog(kind="dog", name="Rex")
    read = sio.JSONAdapter().parse(Adopt, '{"pet": {"kind": "cat", "lives": 9}}')
    assert isinstance(read["pet"], Cat)


def test_a_whole_call_sends_the_schema_and_reads_the_member() -> None:
    lm = sio.FakeLM([{"pet": {"kind": "cat", "lives": 3}}], profile={"json_schema": True})
    pred = sio.Predict(Adopt, lm=lm, adapter=sio.JSONAdapter())(family="quiet")
    assert pred.pet == Cat(kind="cat", lives=3)
    sent = lm.calls[-1].params["response_format"]
    assert "oneOf" not in json.dumps(sent)
    assert sent == response_format(Adopt)


def test_the_openai_sdk_takes_the_request_as_its_own_types() -> None:
    openai = pytest.importorskip("openai")
    from openai.types.chat import ChatCompletionFunctionToolParam
    from openai.types.shared_params import ResponseFormatJSONSchema
    from openai.types.shared_params.response_format_json_schema import JSONSchema

    def fits(kind: Any, value: dict[str, Any]) -> None:
        pydantic.TypeAdapter(kind).validate_python(value)
        assert set(value) <= kind.__required_keys__ | kind.__optional_keys__
        assert set(value) >= kind.__required_keys__

    sent = response_format(Adopt)
    fits(ResponseFormatJSONSchema, sent)
    fits(JSONSchema, sent["json_schema"])
    [tool] = ToolOutputAdapter().request_params(Adopt, {}, schema_model())["tools"]
    fits(ChatCompletionFunctionToolParam, tool)
    fits(openai.types.shared_params.FunctionDefinition, tool["function"])


@pytest.mark.parametrize(
    ("dialect", "strict"),
    [("openai-strict", True), ("anthropic", True), ("gemini", False), ("json-schema", False)],
)
def test_each_dialect_is_sent_as_its_provider_asks(dialect: str, strict: bool) -> None:
    sent = response_format(Adopt, dialect)
    assert sent["json_schema"]["strict"] is strict
    schema = sent["json_schema"]["schema"]
    assert schema == dialect_output_schema(Adopt, dialect)
    assert "oneOf" not in json.dumps(schema)
    lives = schema["$defs"]["Cat"]["properties"]["lives"]
    if dialect == "anthropic":  # no numeric bounds: said in the description
        assert "minimum" not in lives
        assert lives["description"] == "must be ≥ 1; must be ≤ 9"
    else:
        assert (lives["minimum"], lives["maximum"]) == (1, 9)


def test_what_a_dialect_cannot_express_falls_back_to_json_mode() -> None:
    assert response_format(Outline, "anthropic") == {"type": "json_object"}  # recursion
    assert response_format(Outline)["type"] == "json_schema"
    counts = sio.Signature("text -> counts: dict[str, int]")
    assert response_format(counts) == {"type": "json_object"}
    assert response_format(counts, "gemini")["type"] == "json_schema"


def test_strict_output_schema_is_the_openai_dialect() -> None:
    assert strict_output_schema(Adopt) is dialect_output_schema(Adopt, "openai-strict")


# -- ToolOutputAdapter and native tools -------------------------------------------------------


def test_the_answer_tool_follows_the_dialect() -> None:
    [tool] = ToolOutputAdapter().request_params(Adopt, {}, schema_model("anthropic"))["tools"]
    assert tool["function"]["strict"] is True
    assert tool["function"]["parameters"] == dialect_output_schema(Adopt, "anthropic")
    # Gemini has no strict mode: its own rules, not strict.
    [tool] = ToolOutputAdapter().request_params(Adopt, {}, schema_model("gemini"))["tools"]
    assert "strict" not in tool["function"]
    kind = tool["function"]["parameters"]["$defs"]["Cat"]["properties"]["kind"]
    assert kind["enum"] == ["cat"]
    assert "const" not in kind
    # Strict asked of a Gemini model: closed as OpenAI's, written in Gemini's terms.
    [tool] = ToolOutputAdapter(strict=True).request_params(Adopt, {}, schema_model("gemini"))[
        "tools"
    ]
    cat = tool["function"]["parameters"]["$defs"]["Cat"]
    assert cat["additionalProperties"] is False
    assert cat["properties"]["kind"] == {"title": "Kind", "type": "string", "enum": ["cat"]}
    # Recursion Anthropic refuses: not strict, and no oneOf either way.
    [tool] = ToolOutputAdapter().request_params(Outline, {}, schema_model("anthropic"))["tools"]
    assert "strict" not in tool["function"]
    with pytest.raises(sio.ConfigurationError, match="recursive type the anthropic"):
        ToolOutputAdapter(strict=True).request_params(Outline, {}, schema_model("anthropic"))


def test_a_loose_answer_tool_has_no_one_of() -> None:
    [tool] = ToolOutputAdapter(strict=False).request_params(Adopt, {}, schema_model())["tools"]
    text = json.dumps(tool["function"]["parameters"])
    assert "oneOf" not in text
    assert "discriminator" not in text


def adopt(pet: Pet, note: str = "") -> str:
    """Adopt a pet."""
    return note


def test_native_tools_parameters_are_written_in_the_dialect() -> None:
    tool = sio.Tool(adopt)
    assert "oneOf" in json.dumps(tool.to_openai())  # the tool's own schema, as DSPy's
    plain = tool_entry(tool, None)["function"]["parameters"]
    assert "oneOf" not in json.dumps(plain)
    assert plain["properties"]["note"] == {"type": "string", "default": ""}
    gemini = tool_entry(tool, "gemini")["function"]["parameters"]
    assert "const" not in json.dumps(gemini)
    assert "default" not in json.dumps(gemini)
    weather = sio.Tool(lambda city, unit="C": city, name="weather")
    assert tool_entry(weather, "openai-strict") == weather.to_openai()  # most tools: unchanged


class Pick(sio.Signature):
    """Pick a pet, with tools."""

    question: str = sio.InputField()
    tools: list[sio.Tool] = sio.InputField()
    calls: sio.ToolCalls = sio.OutputField()


def test_a_call_with_native_tools_sends_them_in_the_models_dialect() -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "adopt", "arguments": '{"pet": {"kind": "dog", "name": "Rex"}}'},
    }
    lm = sio.FakeLM(
        [Completion("", "tool_calls", (call,))],
        profile={"tools": True, "json_schema": True, "schema_dialect": "gemini"},
    )
    pred = sio.Predict(Pick, lm=lm)(question="which?", tools=[sio.Tool(adopt)])
    assert pred.calls.tool_calls[0].args == {"pet": Dog(kind="dog", name="Rex")}
    [sent] = lm.calls[-1].params["tools"]
    assert sent == tool_entry(sio.Tool(adopt), "gemini")
    assert "const" not in json.dumps(sent)
