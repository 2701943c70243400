"""Transports as a seam: the registry, a transport added from outside, client settings apart."""

from __future__ import annotations

import pickle
from collections.abc import AsyncGenerator, Generator, Iterator, Mapping, Sequence
from typing import Any

import pytest

import structio as sio
from structio.exceptions import LMError
from structio.lm import ClientSettings, MockRequest, MockTransport, ResponseCache
from structio.lm._stream import StreamAssembler
from structio.lm.transport import (
    Transport,
    register_transport,
    registered_transports,
    transport_for,
    unregister_transport,
)
from structio.lm.types import Completion, LMResponse

MESSAGES = [{"role": "user", "content": "Hi?"}]


class FixedTransport:
    """A whole transport in a few lines: every request is answered with one reply."""

    name = "fixed"

    def __init__(self, reply: str = "[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]") -> None:
        self.reply = reply
        self.seen: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []

    def load(self, client: Mapping[str, Any]) -> None:
        pass

    def send(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        timeout: float,
        start: float,
        attempt: int,
    ) -> LMResponse:
        self.seen.append((dict(params), dict(client)))
        return LMResponse((Completion(self.reply, "stop"),), model=model)

    async def asend(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        timeout: float,
        start: float,
        attempt: int,
    ) -> LMResponse:
        return self.send(model, messages, params, client, timeout, start, attempt)

    def stream(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        timeout: float,
        attempt: int,
    ) -> Generator[str | StreamAssembler, None, None]:
        assembler = StreamAssembler(model, self.name)
        assembler.feed_chunk({"choices": [{"index": 0, "delta": {"content": self.reply}}]})
        assembler.feed_chunk({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        yield self.reply
        yield assembler

    async def astream(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        timeout: float,
        attempt: int,
    ) -> AsyncGenerator[str | StreamAssembler, None]:
        for item in self.stream(model, messages, params, client, timeout, attempt):
            yield item

    def translate_error(
        self,
        exc: BaseException,
        model: str,
        attempt: int,
        *,
        secrets: Sequence[str] = (),
        key_given: bool = False,
    ) -> LMError | None:
        return None


@pytest.fixture
def fixed() -> Iterator[FixedTransport]:
    transport = FixedTransport()
    register_transport("fixed", transport, matches=lambda model, client: model.startswith("fx/"))
    try:
        yield transport
    finally:
        unregister_transport("fixed")


# -- the registry ---------------------------------------------------------------------------


def test_the_built_in_transports_are_registered() -> None:
    assert registered_transports()[:2] == ("direct", "litellm")
    assert "gemini" in registered_transports()
    # Gemini's models go to its API directly (issue 32), unless litellm is named.
    assert transport_for("gemini/gemini-2.5-flash").name == "gemini"
    assert transport_for("gemini/gemini-2.5-flash", "litellm").name == "litellm"
    assert isinstance(transport_for("openai/gpt-4o-mini"), Transport)
    assert transport_for("openai/gpt-4o-mini").name == "direct"
    # Anthropic's models go to its Messages API directly (issue 32), unless litellm is named.
    assert transport_for("anthropic/claude-3-5-sonnet-latest").name == "anthropic"
    assert transport_for("anthropic/claude-3-5-sonnet-latest", "litellm").name == "litellm"
    assert transport_for("openai/x", "auto", {"mock_response": "hi"}).name == "litellm"
    assert transport_for("openai/x", "litellm").name == "litellm"


def test_a_transport_registered_from_outside_serves_an_lm(fixed: FixedTransport) -> None:
    lm = sio.LM("openai/x", transport="fixed", cache=False, temperature=0, api_key="k")
    assert lm.resolved_transport == "fixed"
    assert lm(MESSAGES).text.startswith("[[ ## answer ## ]]")
    params, client = fixed.seen[-1]
    assert params == {"temperature": 0}
    assert client == {"api_key": "k"}
    # "auto" asks its matcher: a model it claims goes to it, others as before.
    assert sio.LM("fx/any", cache=False).resolved_transport == "fixed"
    assert sio.LM("openai/x", cache=False).resolved_transport == "direct"
    # A name pickles; the transport is found again by it.
    copied = pickle.loads(pickle.dumps(lm))  # noqa: S301
    assert copied.resolved_transport == "fixed"
    assert copied(MESSAGES).text == lm(MESSAGES).text
    assert "".join(p for p in lm.stream(MESSAGES) if isinstance(p, str)) == fixed.reply


def test_a_registered_transport_serves_predict(fixed: FixedTransport) -> None:
    lm = sio.LM("openai/x", transport="fixed", cache=False)
    predict = sio.Predict("question -> answer: int", lm=lm, adapter=sio.ChatAdapter())
    assert predict(question="2+2?").answer == 4


def test_unregistering_forgets_the_name() -> None:
    register_transport("fixed", FixedTransport)  # a factory: built on first use
    try:
        assert "fixed" in registered_transports()
        assert sio.LM("openai/x", transport="fixed", cache=False).resolved_transport == "fixed"
    finally:
        unregister_transport("fixed")
    assert "fixed" not in registered_transports()
    names = r"'auto', 'direct', 'litellm', 'anthropic' or 'gemini', not 'fixed'"
    with pytest.raises(sio.ConfigurationError, match=names):
        sio.LM("openai/x", transport="fixed")
    with pytest.raises(sio.ConfigurationError, match="no transport named 'fixed'"):
        unregister_transport("fixed")


def test_first_puts_a_matcher_before_the_built_in_ones() -> None:
    register_transport("fixed", FixedTransport(), matches=lambda model, client: True, first=True)
    try:
        assert registered_transports()[0] == "fixed"
        assert sio.LM("openai/x", cache=False).resolved_transport == "fixed"
    finally:
        unregister_transport("fixed")
    assert sio.LM("openai/x", cache=False).resolved_transport == "direct"


def test_the_registry_refuses_what_is_no_transport(fixed: FixedTransport) -> None:
    with pytest.raises(sio.ConfigurationError, match="registered already"):
        register_transport("fixed", FixedTransport())
    with pytest.raises(sio.ConfigurationError, match="named 'fixed'"):
        register_transport("other", FixedTransport())
    with pytest.raises(sio.ConfigurationError, match="a non-empty string"):
        register_transport("auto", FixedTransport())
    with pytest.raises(sio.ConfigurationError, match="takes a Transport"):
        register_transport("other", 3)  # type: ignore[arg-type]
    with pytest.raises(sio.ConfigurationError, match="or a Transport, not a int"):
        sio.LM("openai/x", transport=3)  # type: ignore[arg-type]


def test_an_lm_holding_a_transport_object_saves_its_name() -> None:
    lm = sio.LM("openai/x", transport=MockTransport(lambda request: "hi"), cache=False)
    assert lm.resolved_transport == "mock"
    assert lm.to_dict()["transport"] == "mock"


# -- client settings apart from request parameters --------------------------------------------


def test_client_settings_are_sorted_at_the_door() -> None:
    lm = sio.LM(
        "openai/x",
        api_base="http://127.0.0.1:1/v1",
        api_key="sk-secret",
        extra_headers={"X-Trace": "1", "Authorization": "Bearer sk-secret"},
        temperature=0,
        top_p=0.5,
        cache=False,
    )
    assert lm.params == {"top_p": 0.5, "temperature": 0}
    assert lm.kwargs is lm.params
    assert isinstance(lm.client, ClientSettings)
    assert dict(lm.client) == {
        "api_base": "http://127.0.0.1:1/v1",
        "api_key": "sk-secret",
        "extra_headers": {"X-Trace": "1", "Authorization": "Bearer sk-secret"},
    }
    assert lm.client.api_base == "http://127.0.0.1:1/v1"
    with pytest.raises(TypeError):
        lm.client["api_base"] = "http://elsewhere/v1"  # type: ignore[index]
    for shown in (repr(lm), repr(lm.client), str(lm.to_dict())):
        assert "sk-secret" not in shown
        assert "127.0.0.1:1" in shown
    saved = lm.to_dict()
    assert saved["params"] == {"top_p": 0.5, "temperature": 0}
    assert saved["client"] == {
        "api_base": "http://127.0.0.1:1/v1",
        "extra_headers": {"X-Trace": "1"},
    }
    again = sio.LM.from_dict(saved, trust_endpoint=True)
    assert (again.params, dict(again.client)) == (lm.params, saved["client"])
    with pytest.raises(sio.ConfigurationError, match="trust_endpoint=True"):
        sio.LM.from_dict(saved)


def test_a_file_of_the_former_format_loads() -> None:
    former = {
        "model": "openai/x",
        "num_retries": 2,
        "transport": "auto",
        "cache": False,
        "kwargs": {"temperature": 0.2, "api_base": "http://127.0.0.1:9/v1", "max_retries": 3},
    }
    lm = sio.LM.from_dict(former, trust_endpoint=True)
    assert lm.params == {"temperature": 0.2}
    assert dict(lm.client) == {"api_base": "http://127.0.0.1:9/v1"}
    assert lm.num_retries == 2
    with pytest.raises(sio.ConfigurationError, match=r"api_base='http://127\.0\.0\.1:9/v1'"):
        sio.LM.from_dict(former)


def test_max_retries_on_an_lm_says_which_setting_is_meant() -> None:
    with pytest.raises(sio.ConfigurationError) as info:
        sio.LM("openai/x", max_retries=3)
    message = str(info.value)
    assert "num_retries=" in message
    assert "max_retries= to Predict" in message


def test_the_cache_key_tells_servers_apart_and_never_holds_a_key(tmp_path: Any) -> None:
    answers = iter(["first", "second", "third"])
    mock = MockTransport(lambda request: next(answers))
    cache = ResponseCache(tmp_path)

    def make(base: str, key: str) -> sio.LM:
        return sio.LM("openai/x", transport=mock, cache=cache, api_base=base, api_key=key)

    assert make("http://a.test/v1", "k1")(MESSAGES).text == "first"
    # Another key, the same server: the same answer, from the cache.
    assert make("http://a.test/v1", "k2")(MESSAGES).text == "first"
    assert make("http://b.test/v1", "k1")(MESSAGES).text == "second"
    # A call's own api_base is a client setting too: another server, another answer.
    assert make("http://a.test/v1", "k1")(MESSAGES, api_base="http://c.test/v1").text == "third"
    assert [dict(r.client)["api_base"] for r in mock.requests] == [
        "http://a.test/v1",
        "http://b.test/v1",
        "http://c.test/v1",
    ]
    assert all("api_base" not in r.params for r in mock.requests)


def test_a_calls_client_settings_reach_the_transport_not_the_body(
    fixed: FixedTransport,
) -> None:
    lm = sio.LM("openai/x", transport="fixed", cache=False, api_key="k")
    lm(MESSAGES, api_key="call-key", top_p=0.1, max_retries=2)
    params, client = fixed.seen[-1]
    assert client == {"api_key": "call-key"}
    assert params == {"top_p": 0.1, "max_retries": 2}
    entry = lm.history[-1]
    assert "call-key" not in str(entry.params)


def test_a_client_settings_value_pickles() -> None:
    settings = ClientSettings({"api_base": "http://x.test/v1", "api_key": "k"})
    copied = pickle.loads(pickle.dumps(settings))  # noqa: S301
    assert dict(copied) == dict(settings)
    assert settings.updated({}) is settings
    assert dict(settings.updated({"api_key": "j"})) == {
        "api_base": "http://x.test/v1",
        "api_key": "j",
    }


def test_a_mock_request_reads_the_last_message() -> None:
    request = MockRequest("m", tuple(MESSAGES), {}, ClientSettings(), 1, False)
    assert request.text == "Hi?"


def test_a_model_without_a_direct_transport_is_told_which_one_it_gets(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from structio.lm import transport as registry

    registry._TOLD.discard("bedrock")
    with caplog.at_level("INFO", logger="structio"):
        chosen = registry.transport_for("bedrock/anthropic.claude-3-haiku")
        registry.transport_for("bedrock/another-model")
    assert chosen.name == "litellm"
    told = [r.getMessage() for r in caplog.records if "bedrock" in r.getMessage()]
    assert told == [
        "bedrock/anthropic.claude-3-haiku: no direct transport serves the 'bedrock' provider "
        "(or these settings), so its requests go through the 'litellm' transport; "
        "LM(..., transport=...) names another"
    ]


def test_the_key_variables_of_each_direct_provider() -> None:
    from structio.lm.transport import key_variables

    assert key_variables("openai/gpt-4o-mini") == ("OPENAI_API_KEY",)
    assert key_variables("anthropic/claude-sonnet-4-5") == ("ANTHROPIC_API_KEY",)
    assert key_variables("gemini/gemini-2.5-flash") == ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    assert key_variables("bedrock/anthropic.claude-3-haiku") is None
