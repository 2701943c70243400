"""`structio.lm.servers`: the local servers as data, chosen by prefix or by ``server=``."""

from __future__ import annotations

import pickle

import pytest

import structio as sio
from structio.exceptions import BadRequestError, ConfigurationError, ServerError
from structio.lm.profile import ModelProfile
from structio.lm.servers import SERVERS, refused_structure, server_for


@pytest.mark.parametrize(
    ("model", "server", "expected"),
    [
        ("hosted_vllm/Qwen/Qwen2.5-7B", None, "vllm"),
        ("ollama/llama3.2", None, "ollama"),
        ("ollama_chat/llama3.2", None, "ollama"),
        ("lm_studio/qwen", None, "lmstudio"),
        ("openai/qwen", "llamacpp", "llamacpp"),
        ("openai/qwen", "sglang", "sglang"),
        ("hosted_vllm/qwen", "llamacpp", "llamacpp"),  # the setting wins over the prefix
        ("openai/gpt-4o-mini", None, None),
        ("gpt-4o-mini", None, None),
    ],
)
def test_the_server_comes_from_the_setting_or_the_prefix(
    model: str, server: str | None, expected: str | None
) -> None:
    found = server_for(model, server)
    assert (found.name if found else None) == expected


def test_the_profile_knows_the_same_servers() -> None:
    from structio.lm.profile import SERVER_NAMES

    assert tuple(SERVERS) == SERVER_NAMES


def test_an_unknown_server_is_refused_when_the_lm_is_made() -> None:
    with pytest.raises(ConfigurationError, match=r"'llama\.cpp'.*'llamacpp'"):
        sio.LM("openai/qwen", api_base="http://127.0.0.1:1/v1", server="llama.cpp")
    with pytest.raises(ConfigurationError, match=r"ModelProfile\.server must be one of vllm"):
        ModelProfile(server="tgi")


def test_each_server_is_asked_in_its_own_words() -> None:
    schema = {"type": "object"}
    assert SERVERS["llamacpp"].grammar_params("g") == {"grammar": "g"}
    assert SERVERS["vllm"].grammar_params("g") == {"structured_outputs": {"grammar": "g"}}
    assert SERVERS["sglang"].grammar_params("g") == {"ebnf": "g"}
    for name in ("ollama", "lmstudio"):
        with pytest.raises(ConfigurationError, match="takes no grammar"):
            SERVERS[name].grammar_params("g")
    assert SERVERS["llamacpp"].schema_params("S", schema) == {
        "response_format": {"type": "json_object", "schema": schema}
    }
    assert SERVERS["vllm"].schema_params("S", schema)["response_format"]["type"] == "json_schema"


def test_the_profile_says_which_server_and_what_it_takes() -> None:
    lm = sio.LM("openai/qwen", api_base="http://127.0.0.1:1/v1", api_key="k", server="llamacpp")
    profile = lm.profile
    assert profile.server == "llamacpp"
    assert profile.json_schema
    assert profile.schema_dialect == "json-schema"
    assert profile.json_object
    assert profile.logprobs  # its legacy shape is read
    assert not sio.LM("ollama/q").profile.logprobs
    assert sio.LM("lm_studio/qwen").profile.json_object is False
    assert sio.LM("openai/gpt-4o-mini").profile.server is None
    # A profile= override still has the last word; the setting travels with the LM.
    assert sio.LM("ollama/q", profile={"server": None}).profile.server is None
    again = pickle.loads(pickle.dumps(lm))  # noqa: S301 - our own bytes
    assert again.profile.server == "llamacpp"
    assert sio.LM.from_dict(lm.to_dict(), trust_endpoint=True).profile.server == "llamacpp"
    assert ModelProfile.from_dict(profile.to_dict()) == profile


def test_the_server_setting_is_never_a_request_parameter() -> None:
    lm = sio.LM("openai/qwen", api_base="http://127.0.0.1:1/v1", server="vllm")
    assert "server" not in lm.params
    assert lm.client["server"] == "vllm"


def _error(cls: type, status: int, text: str) -> BadRequestError | ServerError:
    error: BadRequestError | ServerError = cls(text, model="m", status_code=status)
    return error


@pytest.mark.parametrize(
    ("error", "params", "refused"),
    [
        (_error(ServerError, 500, "bad grammar"), {"grammar": "x"}, True),
        (_error(BadRequestError, 422, "response_format: bad"), {"response_format": {}}, True),
        (_error(BadRequestError, 400, "unknown field ebnf"), {"ebnf": "x"}, True),
        # Nothing structured was sent, or the message names none of it, or not a refusal.
        (_error(ServerError, 500, "bad grammar"), {"temperature": 0}, False),
        (_error(ServerError, 500, "out of memory"), {"response_format": {}}, False),
        (_error(ServerError, 503, "response_format"), {"response_format": {}}, False),
    ],
)
def test_a_refusal_is_told_apart_from_other_failures(
    error: BadRequestError | ServerError, params: dict[str, object], refused: bool
) -> None:
    result = refused_structure(error, params)
    assert (type(result).__name__ == "StructuredOutputRefusedError") is refused
    if not refused:
        assert result is error
