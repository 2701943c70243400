"""The two transports, direct (httpx) and litellm, over the real wire: the same behaviour.

Every test here that takes ``make_lm`` or ``transport`` runs once per transport.
"""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import structio as sio
from structio.lm import _pool
from tests.wire.providers.responses_server import ResponsesReply, ResponsesServer, text_response
from tests.wire.server import OpenAIServer, Reply

MESSAGES = [{"role": "user", "content": "Hi?"}]
MakeLM = Callable[..., sio.LM]
TOOL_CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "lookup", "arguments": '{"city": "Paris", "days": 3}'},
}


@pytest.fixture
def other_server() -> Iterator[OpenAIServer]:
    srv = OpenAIServer().start()
    yield srv
    srv.stop()


def test_a_model_without_a_provider_is_one_clear_error_not_retried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from structio.lm import lm as lm_module

    sleeps: list[float] = []
    monkeypatch.setattr(lm_module, "_sleep", sleeps.append)
    with pytest.raises(sio.ConfigurationError) as info:
        sio.LM("gpt4", api_key="k", cache=False)(MESSAGES)
    message = str(info.value)
    assert message == (
        "LM('gpt4'): the model string names no provider litellm knows; write it as "
        "provider/name, e.g. 'openai/gpt-4o-mini' or 'anthropic/claude-sonnet-4-5'"
    )
    assert sleeps == []
    with pytest.raises(sio.ConfigurationError, match=r"write LM\('openai/gpt4', api_base=\.\.\.\)"):
        sio.LM("gpt4", api_base="http://127.0.0.1:1/v1", api_key="k", cache=False)(MESSAGES)
    # A bare name litellm knows is routed as before (mock_response: no request is made).
    known = sio.LM("claude-sonnet-4-5", api_key="k", cache=False, mock_response="hi")
    assert known(MESSAGES).text == "hi"


# -- which transport ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "options", "route"),
    [
        ("openai/gpt-4o-mini", {}, "direct"),
        ("gpt-4o-mini", {}, "direct"),
        ("openai/my-local-model", {"api_base": "http://127.0.0.1:1/v1"}, "direct"),
        ("azure/my-deployment", {}, "direct"),
        ("groq/llama-3.1-8b-instant", {}, "direct"),
        ("openrouter/anthropic/claude-3.5-sonnet", {}, "direct"),
        ("hosted_vllm/qwen", {"api_base": "http://127.0.0.1:1/v1"}, "direct"),
        ("anthropic/claude-3-5-sonnet-latest", {}, "anthropic"),
        ("anthropic/claude-3-5-sonnet-latest", {"transport": "litellm"}, "litellm"),
        ("anthropic/claude-3-5-sonnet-latest", {"drop_params": True}, "litellm"),
        ("bedrock/anthropic.claude-3-haiku", {}, "litellm"),
        ("vertex_ai/gemini-1.5-pro", {}, "litellm"),
        ("gemini/gemini-2.5-flash", {}, "gemini"),
        ("gemini/gemini-2.5-flash", {"transport": "litellm"}, "litellm"),
        ("ollama_chat/llama3.2", {}, "direct"),
        ("ollama/llama3.2", {}, "direct"),
        ("ollama/llama3.2", {"transport": "litellm"}, "litellm"),
        ("claude-3-5-sonnet-latest", {}, "litellm"),
        ("openai/gpt-4o-mini", {"transport": "litellm"}, "litellm"),
        ("openai/gpt-4o-mini", {"mock_response": "hi"}, "litellm"),
        ("my-model", {"transport": "direct", "api_base": "http://127.0.0.1:1/v1"}, "direct"),
    ],
)
def test_the_route_is_chosen_by_provider_and_can_be_forced(
    model: str, options: dict[str, object], route: str
) -> None:
    assert sio.LM(model, cache=False, **options).resolved_transport == route


def test_direct_refuses_what_it_cannot_serve() -> None:
    with pytest.raises(sio.ConfigurationError, match="transport='direct' needs"):
        sio.LM("anthropic/claude-3-5-sonnet-latest", transport="direct")
    with pytest.raises(sio.ConfigurationError, match="mock_response is a litellm option"):
        sio.LM("openai/gpt-4o-mini", transport="direct", mock_response="x")
    with pytest.raises(
        sio.ConfigurationError, match="'auto', 'direct', 'litellm', 'anthropic' or 'gemini'"
    ):
        sio.LM("openai/gpt-4o-mini", transport="http")


def test_model_type_is_never_sent_to_the_server(
    server: OpenAIServer, make_lm: MakeLM, transport: str
) -> None:
    # DSPy's `model_type` chooses an API; sent as a request field, OpenAI answers 400.
    server.reply(Reply("hi"))
    assert make_lm(model_type="chat")("hello") == ["hi"]
    assert "model_type" not in server.requests[0].body
    with pytest.raises(sio.ConfigurationError, match=r"api='completions'"):
        make_lm(model_type="completions")
    assert len(server.requests) == 1
    # model_type="responses" speaks OpenAI's Responses API, on the direct transport.
    responses = ResponsesServer().start()
    try:
        if transport == "litellm":
            with pytest.raises(sio.ConfigurationError, match=r"api='responses'"):
                make_lm(model_type="responses", api_base=responses.base_url)
        else:
            responses.reply(ResponsesReply(body=text_response("hi there")))
            lm = make_lm(model_type="responses", api_base=responses.base_url)
            assert lm("hello") == ["hi there"]
    finally:
        responses.stop()
    assert len(server.requests) == 1
    if transport != "litellm":
        (request,) = responses.requests
        assert request.path == "/v1/responses"
        assert request.body["input"] == [{"role": "user", "content": "hello"}]
        assert not {"model_type", "api", "messages"} & set(request.body)
        assert responses.invalid == []


def test_the_transport_is_saved_and_loaded(make_lm: MakeLM, transport: str) -> None:
    lm = make_lm()
    again = sio.LM.from_dict(lm.to_dict(), trust_endpoint=True)
    assert (again.transport, again.resolved_transport) == (transport, transport)


def test_a_provider_without_an_address_says_how_to_give_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("AZURE_API_BASE", "AZURE_OPENAI_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(sio.ConfigurationError, match="pass api_base= to LM or set AZURE_API_BASE"):
        sio.LM("azure/my-deployment", api_key="k", cache=False)(MESSAGES)


# -- the same answers -----------------------------------------------------------------------


def test_a_streamed_completion_is_read_whole(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content="Hello, streaming world!", chunk_size=4))
    response = make_lm()(MESSAGES, stream=True, stream_options={"include_usage": True})
    assert response.text == "Hello, streaming world!"
    assert response[0].finish_reason == "stop"
    assert response.usage.prompt_tokens == 11
    assert response.usage.completion_tokens == 3
    (request,) = server.requests
    assert request.body["stream"] is True


def test_a_streamed_completion_with_several_choices(
    server: OpenAIServer, make_lm: MakeLM, transport: str
) -> None:
    server.reply(Reply(content=["first answer", "second"], finish_reason="length"))
    response = make_lm()(MESSAGES, stream=True, n=2)
    assert [c.text for c in response] == ["first answer", "second"]
    reasons = [c.finish_reason for c in response]
    # litellm's stream wrapper drops the finish reason of every choice after the first.
    assert reasons == (["length", "length"] if transport == "direct" else ["length", None])


def test_an_async_streamed_completion(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content="async stream"))
    response = asyncio.run(make_lm().acall(MESSAGES, stream=True))
    assert response.text == "async stream"


def test_a_stream_cut_off_mid_way_is_an_error_and_nothing_is_cached(
    server: OpenAIServer, make_lm: MakeLM, tmp_path: Path
) -> None:
    # litellm ends a cut stream with a "stop" of its own: structio sees through it.
    server.default = Reply(content="a long answer that never ends", cut_after=3)
    lm = make_lm(cache=sio.ResponseCache(tmp_path / "cache"))
    with pytest.raises(sio.LMConnectionError, match="the stream ended before the completion"):
        lm(MESSAGES, stream=True, num_retries=1)
    assert len(server.requests) == 2
    server.default = Reply(content="complete")
    assert lm(MESSAGES, stream=True).text == "complete"  # not a cached fragment


@pytest.mark.parametrize("stream", [False, True])
def test_tool_calls_come_back_as_openai_dicts(
    server: OpenAIServer, make_lm: MakeLM, stream: bool
) -> None:
    server.reply(Reply(content="", tool_calls=[TOOL_CALL], finish_reason="tool_calls"))
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
    response = make_lm()(MESSAGES, tools=tools, stream=stream)
    (completion,) = response
    assert completion.finish_reason == "tool_calls"
    assert completion.tool_calls is not None
    (call,) = completion.tool_calls
    assert call["id"] == "call_1"
    assert call["function"]["name"] == "lookup"
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris", "days": 3}
    assert server.requests[0].body["tools"] == tools


def test_custom_headers_and_extra_body_are_sent(server: OpenAIServer, make_lm: MakeLM) -> None:
    lm = make_lm(extra_headers={"X-Team": "search"}, extra_body={"top_k": 5})
    lm(MESSAGES, response_format={"type": "json_object"})
    (request,) = server.requests
    assert request.headers["X-Team"] == "search"
    assert request.body["top_k"] == 5
    assert request.body["response_format"] == {"type": "json_object"}
    for setting in ("extra_headers", "extra_body", "api_base", "api_key", "transport"):
        assert setting not in request.body


def test_a_reasoning_model_gets_max_completion_tokens(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    lm = sio.LM(
        "openai/o3-mini",
        api_base=server.base_url,
        api_key="k",
        cache=False,
        max_tokens=100,
        transport=make_lm().transport,
    )
    lm(MESSAGES)
    body = server.requests[0].body
    assert body["max_completion_tokens"] == 100
    assert "max_tokens" not in body


def test_azure_deployments_use_azure_urls_and_the_api_key_header(
    server: OpenAIServer, transport: str
) -> None:
    root = server.base_url.removesuffix("/v1")
    lm = sio.LM(
        "azure/my-deployment",
        api_base=root,
        api_key="azure-key",
        api_version="2024-10-21",
        cache=False,
        transport=transport,
    )
    assert lm(MESSAGES).text == "ok"
    (request,) = server.requests
    assert (
        request.path == "/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21"
    )
    assert request.headers["api-key"] == "azure-key"


def test_the_direct_transport_goes_through_a_proxy(
    server: OpenAIServer, other_server: OpenAIServer
) -> None:
    proxy = other_server.base_url.removesuffix("/v1")
    other_server.reply(Reply(content="via the proxy"))
    lm = sio.LM("openai/test", api_base=server.base_url, api_key="k", cache=False, proxy=proxy)
    assert lm(MESSAGES).text == "via the proxy"
    assert server.requests == []
    (request,) = other_server.requests
    # A forward proxy is asked for the whole URL.
    assert request.path == f"{server.base_url}/chat/completions"


@pytest.mark.parametrize(
    "reply",
    [
        Reply(status=429, error_message="slow down"),
        Reply(status=401, error_message="Incorrect API key provided"),
        Reply(status=500, error_message="boom"),
        Reply(status=400, error_message="bad request"),
        Reply(status=404, error_message="no such model"),
        Reply(status=422, error_message="unprocessable"),
        Reply(
            status=400,
            error_message="This model's maximum context length is 10 tokens",
            error_code="context_length_exceeded",
        ),
        Reply(status=503, raw_body=b"<html>down</html>"),
    ],
    ids=["429", "401", "500", "400", "404", "422", "context", "503-html"],
)
def test_both_transports_raise_the_same_error_with_the_same_message(
    server: OpenAIServer, reply: Reply
) -> None:
    errors = []
    for transport in ("direct", "litellm"):
        server.default = reply
        lm = sio.LM(
            "openai/test",
            api_base=server.base_url,
            api_key="k",
            cache=False,
            num_retries=0,
            transport=transport,
        )
        with pytest.raises(sio.LMError) as info:
            lm(MESSAGES)
        errors.append(info.value)
    direct, litellm = errors
    assert type(direct) is type(litellm)
    assert str(direct) == str(litellm)
    assert (direct.status_code, direct.provider, direct.model) == (
        litellm.status_code,
        litellm.provider,
        litellm.model,
    )


def test_cost_on_the_direct_path_equals_litellms_price(server: OpenAIServer) -> None:
    costs = []
    for transport in ("direct", "litellm"):
        lm = sio.LM(
            "openai/gpt-4o-mini",
            api_base=server.base_url,
            api_key="k",
            cache=False,
            transport=transport,
        )
        costs.append(lm(MESSAGES).cost)
    direct, litellm = costs
    assert direct is not None
    assert litellm is not None
    # 11 prompt tokens (4 of them cached) and 3 completion tokens at gpt-4o-mini's prices.
    assert direct == pytest.approx(litellm, rel=1e-9)
    assert direct == pytest.approx(7 * 0.15e-6 + 4 * 0.075e-6 + 3 * 0.6e-6, rel=1e-9)


def test_model_metadata_comes_from_the_map_without_litellm(server: OpenAIServer) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        import structio as sio
        lm = sio.LM("openai/gpt-4o-mini", api_base={server.base_url!r}, api_key="k", cache=False)
        print(lm.max_input_tokens, lm.supports_response_schema, lm.supports_json_mode)
        print(lm([{{"role": "user", "content": "hi"}}]).text)
        print("litellm" in sys.modules)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.split("\n")[:3] == ["128000 True True", "ok", "False"]


def test_import_structio_loads_neither_litellm_nor_httpx() -> None:
    script = "import sys, structio\nprint('litellm' in sys.modules, 'httpx' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.split() == ["False", "False"]


def test_async_clients_close_with_their_event_loop(server: OpenAIServer) -> None:
    lm = sio.LM("openai/test", api_base=server.base_url, api_key="k", cache=False)

    async def two_calls() -> list[str]:
        return [(await lm.acall(MESSAGES)).text for _ in range(2)]

    # Earlier tests' garbage (litellm's own event loops and aiohttp sessions, which litellm
    # leaves to the collector) is not this test's: collected here, its complaints unheard.
    hook = sys.unraisablehook
    sys.unraisablehook = lambda _unraisable: None
    try:
        gc.collect()
    finally:
        sys.unraisablehook = hook
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unclosed connection would warn when collected
        assert asyncio.run(two_calls()) == ["ok", "ok"]
        assert asyncio.run(two_calls()) == ["ok", "ok"]
        gc.collect()
    # Each loop got its own client; none outlives its loop.
    assert len(_pool._ASYNC_CLIENTS) == 0
