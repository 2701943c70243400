"""Typos of request parameters refused before any request; unsupported ones logged once."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import structio as sio
from structio.exceptions import ConfigurationError
from structio.lm import MockRequest, MockTransport
from structio.lm.client import CLIENT_SETTINGS
from structio.lm.params import KNOWN_PARAMS, close_name

MESSAGES = [{"role": "user", "content": "Hi?"}]


def counting() -> tuple[MockTransport, list[MockRequest]]:
    """A transport that answers every request and keeps each one it received."""
    seen: list[MockRequest] = []

    def handler(request: MockRequest) -> str:
        seen.append(request)
        return "hello"

    return MockTransport(handler), seen


def make(transport: MockTransport, model: str = "openai/x", **kwargs: Any) -> sio.LM:
    return sio.LM(model, transport=transport, cache=False, num_retries=0, **kwargs)


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("temprature", "temperature"),
        ("max_token", "max_tokens"),
        ("top-p", "top_p"),
        ("Temperature", "temperature"),
        ("reasoning_efort", "reasoning_effort"),
        ("respone_format", "response_format"),
        ("num_retry", "num_retries"),
        ("api_bse", "api_base"),
    ],
)
def test_a_typo_given_to_lm_is_refused_naming_the_parameter(typo: str, meant: str) -> None:
    transport, seen = counting()
    with pytest.raises(ConfigurationError, match=f"did you mean `{meant}`") as info:
        make(transport, **{typo: 0})
    assert f"`{typo}`" in str(info.value)
    assert "extra_body" in str(info.value)
    assert seen == []


def test_a_typo_in_a_call_is_refused_before_any_request() -> None:
    transport, seen = counting()
    lm = make(transport, temperature=0)
    with pytest.raises(ConfigurationError, match="did you mean `max_tokens`"):
        lm(MESSAGES, max_token=5)
    with pytest.raises(ConfigurationError, match="did you mean `top_p`"):
        asyncio.run(lm.acall(MESSAGES, top_pp=0.5))
    with pytest.raises(ConfigurationError, match="did you mean `stop`"):
        list(lm.stream(MESSAGES, stops=["\n"]))
    assert seen == []
    lm(MESSAGES, max_tokens=5)
    assert [request.params.get("max_tokens") for request in seen] == [5]


def test_a_name_like_no_known_one_is_sent_as_given() -> None:
    # Providers add parameters: only close misspellings are refused.
    transport, seen = counting()
    lm = make(transport, my_server_flag=1)
    lm(MESSAGES, another_custom_knob="on", top_k=5, min_p=0.1, top_a=0.2)
    (request,) = seen
    assert request.params["my_server_flag"] == 1
    assert request.params["another_custom_knob"] == "on"
    assert (request.params["top_k"], request.params["min_p"]) == (5, 0.1)


def test_a_misspelt_name_can_still_be_sent_in_extra_body() -> None:
    transport, seen = counting()
    lm = make(transport, extra_body={"temprature": 0})
    lm(MESSAGES)
    assert seen[0].client["extra_body"] == {"temprature": 0}


@given(st.sampled_from(sorted(KNOWN_PARAMS | CLIENT_SETTINGS)))
def test_no_known_parameter_is_taken_for_a_typo(name: str) -> None:
    assert close_name(name) is None


@given(st.sampled_from(sorted(n for n in KNOWN_PARAMS if len(n) >= 6)), st.data())
def test_a_known_name_with_one_letter_dropped_is_a_typo(name: str, data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(name) - 1))
    typo = name[:at] + name[at + 1 :]
    if typo in KNOWN_PARAMS or typo in CLIENT_SETTINGS:
        assert close_name(typo) is None
    else:
        assert close_name(typo) is not None


def test_unsupported_parameter_is_logged_once_per_lm(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="structio")
    transport, seen = counting()
    lm = make(transport, profile={"logprobs": False}, logprobs=True)
    lm(MESSAGES)
    lm(MESSAGES, top_logprobs=3)
    lm(MESSAGES, top_logprobs=3)
    warned = [r.getMessage() for r in caplog.records if "profile says" in r.getMessage()]
    assert len(warned) == 2
    assert "logprobs=True" in warned[0]
    assert "top_logprobs=3" in warned[1]
    assert len(seen) == 3  # sent all the same: the provider has the last word


def test_reasoning_effort_to_a_mapped_model_that_does_not_reason_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="structio")
    transport, _ = counting()
    lm = make(transport, model="openai/gpt-4o-mini")
    assert not lm.profile.reasoning
    lm(MESSAGES, reasoning_effort="low")
    assert any("reasoning_effort='low'" in r.getMessage() for r in caplog.records)


def test_nothing_is_logged_where_the_profile_does_not_know(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="structio")
    transport, _ = counting()
    # A model the map does not know (a local server's): its profile's "no" is a default.
    lm = make(transport, model="openai/my-local-model", logprobs=True, reasoning_effort="low")
    lm(MESSAGES)
    assert not [r for r in caplog.records if "profile says" in r.getMessage()]
    # A flag the profile says yes to is never logged either.
    said = make(transport, profile={"logprobs": True}, logprobs=True)
    said(MESSAGES)
    assert not [r for r in caplog.records if "profile says" in r.getMessage()]


@pytest.mark.parametrize("model", ["openai/o3-mini", "openai/gpt-5", "openai/o4-mini"])
def test_temperature_to_an_openai_reasoning_model_is_logged_once(
    caplog: pytest.LogCaptureFixture, model: str
) -> None:
    caplog.set_level(logging.WARNING, logger="structio")
    transport, seen = counting()
    lm = make(transport, model=model, temperature=0.2)
    assert lm.profile.reasoning
    assert not lm.profile.sampling
    lm(MESSAGES)
    lm(MESSAGES)
    lm(MESSAGES, top_p=0.5)
    warned = [r.getMessage() for r in caplog.records if "reasoning model" in r.getMessage()]
    assert len(warned) == 2
    assert "temperature=0.2" in warned[0]
    assert "temperature=1" in warned[0]
    assert "top_p=0.5" in warned[1]
    assert len(seen) == 3  # sent all the same


def test_default_temperature_and_other_models_are_not_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="structio")
    transport, _ = counting()
    make(transport, model="openai/o3-mini", temperature=1)(MESSAGES)  # the only one it takes
    make(transport, model="openai/gpt-4o-mini", temperature=0)(MESSAGES)  # no reasoning
    make(transport, model="openai/gpt-5-chat-latest", temperature=0)(MESSAGES)  # a chat model
    make(transport, model="openai/my-local-model", temperature=0)(MESSAGES)  # unknown
    told = make(transport, model="openai/o3-mini", profile={"sampling": True}, temperature=0)
    told(MESSAGES)
    assert not [r for r in caplog.records if "reasoning model" in r.getMessage()]
