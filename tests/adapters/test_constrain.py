"""The adapters' ``constrain`` option: what each asks a local server, and a hosted model."""

from __future__ import annotations

from typing import Any, Literal

import pytest

import structio as sio
from structio.exceptions import ConfigurationError
from structio.lm.profile import ModelProfile


class Label(sio.Signature):
    """Label the text."""

    text: str = sio.InputField()
    label: Literal["a", "b"] = sio.OutputField()


class Model:
    """A stand-in with nothing but a profile (`ModelCapabilities`)."""

    def __init__(self, **fields: Any) -> None:
        self.profile = ModelProfile(**fields)
        self.model = "test/model"


LLAMACPP = Model(
    server="llamacpp", json_schema=True, schema_dialect="json-schema", json_object=True
)
OLLAMA = Model(server="ollama", json_schema=True, schema_dialect="json-schema", json_object=True)
HOSTED = Model(json_schema=True, json_object=True)
PLAIN = Model()


@pytest.mark.parametrize(
    "cls", [sio.ChatAdapter, sio.JSONAdapter, sio.XMLAdapter, sio.CompactAdapter]
)
def test_the_option_is_checked_saved_and_compared(cls: type[sio.Adapter]) -> None:
    with pytest.raises(ValueError, match="constrain must be True, False or None"):
        cls(constrain="yes")  # type: ignore[call-arg]
    adapter = cls(constrain=False)  # type: ignore[call-arg]
    assert adapter.to_dict()["constrain"] is False
    assert sio.Adapter.from_dict(adapter.to_dict()) == adapter
    assert adapter != cls()
    assert "constrain" not in cls().to_dict()  # a default saves as before


def test_a_hosted_model_is_never_sent_a_grammar() -> None:
    assert sio.ChatAdapter().request_params(Label, {}, HOSTED) == {}
    assert sio.XMLAdapter(constrain=False).request_params(Label, {}, HOSTED) == {}
    with pytest.raises(ConfigurationError, match=r"ChatAdapter\(constrain=True\): a hosted model"):
        sio.ChatAdapter(constrain=True).request_params(Label, {}, HOSTED)
    with pytest.raises(ConfigurationError, match="Ollama takes no grammar"):
        sio.XMLAdapter(constrain=True).request_params(Label, {}, OLLAMA)
    # Ollama without a grammar: the text adapters ask nothing by default.
    assert sio.ChatAdapter().request_params(Label, {}, OLLAMA) == {}


def test_json_on_a_hosted_model_keeps_its_rules_and_obeys_the_option() -> None:
    schema_form = sio.JSONAdapter().request_params(Label, {}, HOSTED)["response_format"]
    assert schema_form["type"] == "json_schema"
    assert schema_form["json_schema"]["strict"] is True
    assert sio.JSONAdapter(constrain=False).request_params(Label, {}, HOSTED) == {
        "response_format": {"type": "json_object"}
    }
    assert sio.CompactAdapter().request_params(Label, {}, HOSTED) == {
        "response_format": {"type": "json_object"}
    }
    compact = sio.CompactAdapter(constrain=True).request_params(Label, {}, HOSTED)
    assert compact["response_format"]["type"] == "json_schema"
    assert sio.JSONAdapter().request_params(Label, {}, PLAIN) == {}
    with pytest.raises(ConfigurationError, match="takes no JSON schema"):
        sio.JSONAdapter(constrain=True).request_params(Label, {}, PLAIN)


def test_json_on_a_local_server_sends_the_schema_in_its_form() -> None:
    sent = sio.JSONAdapter(constrain=True).request_params(Label, {}, LLAMACPP)["response_format"]
    assert sent == {
        "type": "json_object",
        "schema": {
            "type": "object",
            "properties": {"label": {"type": "string", "enum": ["a", "b"]}},
            "required": ["label"],
        },
    }
    assert sio.JSONAdapter(constrain=False).request_params(Label, {}, LLAMACPP) == {}
    own = {"grammar": 'root ::= "{}"'}
    assert sio.JSONAdapter(constrain=True).request_params(Label, own, LLAMACPP) == own


@pytest.mark.parametrize(
    "cls", [sio.ChatAdapter, sio.JSONAdapter, sio.XMLAdapter, sio.CompactAdapter]
)
def test_the_default_follows_the_class_and_the_option_overrides_it(
    cls: type[sio.Adapter],
) -> None:
    constrained = bool(cls().request_params(Label, {}, LLAMACPP))
    assert constrained is cls.constrain_default
    assert bool(cls(constrain=True).request_params(Label, {}, LLAMACPP))  # type: ignore[call-arg]
    assert not cls(constrain=False).request_params(Label, {}, LLAMACPP)  # type: ignore[call-arg]
