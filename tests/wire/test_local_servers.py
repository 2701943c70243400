"""Local servers over the wire: each is sent the structured-output parameter it takes.

A loopback server stands in for each local server (vLLM, SGLang, llama.cpp and
llama-cpp-python, Ollama, LM Studio): the tests read the request bodies structio sent, and
answer as llama-cpp-python 0.2.62 answers a form it does not take (its message recorded
from the real server: an HTTP 500 naming ``response_format``).
"""

from __future__ import annotations

from typing import Any, Literal

import pydantic
import pytest

import structio as sio
from structio.exceptions import ServerError, StructuredOutputRefusedError
from tests.wire.server import OpenAIServer, Reply

# What llama-cpp-python 0.2.62's server answered (HTTP 500) to a {"type": "json_schema"}
# response format, recorded from the real server (../shared/realmodel/), paths shortened.
LLAMA_CPP_PYTHON_REFUSAL = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"llama_cpp/server/app.py\", "
    "line 337, in create_chat_completion\n    POST /v1/chat/completions"
)
# ...and to a grammar it could not parse.
LLAMA_CPP_GRAMMAR_REFUSAL = "from_string: error parsing grammar file: parsed_grammar.rules is empty"


class Company(pydantic.BaseModel):
    name: str
    city: str


class Extract(sio.Signature):
    """Extract the company."""

    text: str = sio.InputField()
    company: Company = sio.OutputField()
    label: Literal["a", "b"] = sio.OutputField()


ANSWER = '{"company": {"name": "Acme", "city": "Oslo"}, "label": "a"}'


def _lm(srv: OpenAIServer, model: str = "openai/qwen", **kwargs: Any) -> sio.LM:
    return sio.LM(model, api_base=srv.base_url, api_key="k", cache=False, backoff=0.001, **kwargs)


@pytest.mark.parametrize(
    "adapter", [sio.JSONAdapter(constrain=True), sio.CompactAdapter(constrain=True)]
)
def test_llamacpp_gets_the_schema_beside_json_object_mode(
    server: OpenAIServer, adapter: sio.Adapter
) -> None:
    server.reply(Reply(ANSWER))
    pred = sio.Predict(Extract, lm=_lm(server, server="llamacpp"), adapter=adapter)(text="t")
    assert pred.company == Company(name="Acme", city="Oslo")
    sent = server.requests[-1].body["response_format"]
    assert sent["type"] == "json_object"
    assert sent["schema"]["required"] == ["company", "label"]
    assert sent["schema"]["properties"]["label"]["enum"] == ["a", "b"]


@pytest.mark.parametrize(
    ("model", "server_name"),
    [
        ("hosted_vllm/qwen", None),
        ("openai/qwen", "vllm"),
        ("openai/qwen", "sglang"),
        ("ollama/qwen", None),
        ("lm_studio/qwen", None),
    ],
)
def test_openai_form_servers_get_a_json_schema_response_format_the_sdk_accepts(
    server: OpenAIServer, model: str, server_name: str | None
) -> None:
    from openai.types.shared_params import ResponseFormatJSONSchema

    server.reply(Reply(ANSWER))
    settings = {"server": server_name} if server_name else {}
    lm = _lm(server, model, **settings)
    pred = sio.Predict(Extract, lm=lm, adapter=sio.JSONAdapter(constrain=True))(text="t")
    assert pred.label == "a"
    sent = server.requests[-1].body["response_format"]
    pydantic.TypeAdapter(ResponseFormatJSONSchema).validate_python(sent, strict=True)
    assert sent["json_schema"]["strict"] is False
    assert sent["json_schema"]["schema"]["properties"]["label"]["enum"] == ["a", "b"]
    assert "server" not in server.requests[-1].body


def test_unconstrained_json_asks_for_nothing(server: OpenAIServer) -> None:
    # Not even JSON object mode: a generic JSON grammar costs a local server CPU and
    # changed no answer of the real model.
    server.reply(Reply(ANSWER), Reply(ANSWER))
    adapter = sio.JSONAdapter(constrain=False)
    sio.Predict(Extract, lm=_lm(server, server="llamacpp"), adapter=adapter)(text="t")
    assert "response_format" not in server.requests[-1].body
    sio.Predict(Extract, lm=_lm(server, "lm_studio/qwen"), adapter=adapter)(text="t")
    assert "response_format" not in server.requests[-1].body


def test_a_response_format_the_caller_set_is_kept(server: OpenAIServer) -> None:
    server.reply(Reply(ANSWER))
    own = {"type": "json_object"}
    adapter = sio.JSONAdapter(constrain=True)
    predict = sio.Predict(Extract, lm=_lm(server, server="llamacpp"), adapter=adapter)
    predict(text="t", params={"response_format": own})
    assert server.requests[-1].body["response_format"] == own


@pytest.mark.parametrize("message", [LLAMA_CPP_PYTHON_REFUSAL, LLAMA_CPP_GRAMMAR_REFUSAL])
def test_a_refused_structured_output_form_is_not_retried(
    server: OpenAIServer, message: str
) -> None:
    server.default = Reply(status=500, error_message=message)
    lm = _lm(server, "hosted_vllm/qwen", num_retries=3)
    params = (
        {"grammar": 'root ::= "a"'}
        if "grammar" in message
        else {"response_format": {"type": "json_schema"}}
    )
    with pytest.raises(StructuredOutputRefusedError) as caught:
        lm([{"role": "user", "content": "hi"}], **params)
    assert len(server.requests) == 1
    assert caught.value.status_code == 500
    assert "server=" in str(caught.value)
    assert "constrain=False" in str(caught.value)
    assert isinstance(caught.value, ValueError)  # a BadRequestError, as users catch it


def test_a_server_error_that_names_no_structure_parameter_is_retried(
    server: OpenAIServer,
) -> None:
    server.default = Reply(status=500, error_message="out of memory")
    lm = _lm(server, server="llamacpp", num_retries=2)
    with pytest.raises(ServerError) as caught:
        lm([{"role": "user", "content": "hi"}], response_format={"type": "json_object"})
    assert not isinstance(caught.value, StructuredOutputRefusedError)
    assert len(server.requests) == 3


def test_ollama_takes_litellms_spelling_of_its_address(server: OpenAIServer) -> None:
    root = server.base_url.removesuffix("/v1")
    server.reply(Reply("hi"))
    lm = sio.LM("ollama_chat/llama3.2", api_base=root, cache=False)
    assert lm.resolved_transport == "direct"
    assert lm([{"role": "user", "content": "hi"}]).text == "hi"
    assert server.requests[-1].path == "/v1/chat/completions"
    assert server.requests[-1].body["model"] == "llama3.2"


CHAT_ANSWER = (
    '[[ ## company ## ]]\n{"name": "Acme", "city": "Oslo"}\n\n[[ ## label ## ]]\na\n\n'
    "[[ ## completed ## ]]"
)


@pytest.mark.parametrize(
    ("settings", "where"),
    [
        ({"server": "llamacpp"}, ("grammar",)),
        ({"server": "sglang"}, ("ebnf",)),
        ({"server": "vllm"}, ("structured_outputs", "grammar")),
    ],
)
@pytest.mark.parametrize(
    "adapter", [sio.ChatAdapter(constrain=True), sio.XMLAdapter(constrain=True)]
)
def test_text_adapters_send_the_grammar_of_their_text_where_the_server_reads_it(
    server: OpenAIServer, settings: dict[str, str], where: tuple[str, ...], adapter: sio.Adapter
) -> None:
    lm = _lm(server, **settings)
    text = CHAT_ANSWER
    if isinstance(adapter, sio.XMLAdapter):
        text = "<company><name>Acme</name><city>Oslo</city></company>\n<label>a</label>"
    server.reply(Reply(text))
    pred = sio.Predict(Extract, lm=lm, adapter=adapter)(text="t")
    assert pred.label == "a"
    sent: Any = server.requests[-1].body
    for key in where:
        sent = sent[key]
    assert sent == adapter.grammar(Extract).gbnf()
    assert sent.startswith("root ::= ")


def test_native_tool_calls_are_not_held_to_the_grammar_of_the_text(server: OpenAIServer) -> None:
    def lookup(city: str) -> str:
        """Look a city up."""
        return city

    class Act(sio.Signature):
        """Act."""

        question: str = sio.InputField()
        tools: list[sio.Tool] = sio.InputField()
        calls: sio.ToolCalls = sio.OutputField()
        answer: str = sio.OutputField()

    lm = _lm(server, server="llamacpp", profile={"tools": True})
    server.reply(Reply("[[ ## answer ## ]]\nok\n\n[[ ## completed ## ]]"))
    sio.Predict(Act, lm=lm, adapter=sio.ChatAdapter(constrain=True))(
        question="q", tools=[sio.Tool(lookup)]
    )
    body = server.requests[-1].body
    assert body["tools"][0]["function"]["name"] == "lookup"
    assert "grammar" not in body
