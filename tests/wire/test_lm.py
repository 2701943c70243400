"""LM over the real wire: litellm talking HTTP to a loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import io
import logging
import socket
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

import structio as sio
from structio.lm import lm as lm_module
from tests.conftest import InternetAccessError
from tests.wire.server import OpenAIServer, Reply

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi?"}]
MakeLM = Callable[..., sio.LM]


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record the backoff waits instead of sleeping them."""
    recorded: list[float] = []
    monkeypatch.setattr(lm_module, "_sleep", recorded.append)
    return recorded


def test_sync_call(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content="Hello!"))
    lm = make_lm(temperature=0.2, max_tokens=50)
    response = lm(MESSAGES)
    assert response.text == "Hello!"
    assert response[0].finish_reason == "stop"
    assert response.usage == sio.Usage(prompt_tokens=11, completion_tokens=3, cached_tokens=4)
    assert response.cost is None  # litellm has no price for "test"
    assert not response.cached
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.messages == MESSAGES
    assert request.body["model"] == "test"
    assert request.body["temperature"] == 0.2
    assert request.body["max_tokens"] == 50
    assert request.headers["Authorization"] == "Bearer test-key"
    for private in ("num_retries", "caching", "cache", "backoff"):
        assert private not in request.body


def test_per_call_overrides(server: OpenAIServer, make_lm: MakeLM) -> None:
    make_lm(temperature=0.2)(MESSAGES, temperature=0.9, stop=["\n"])
    assert server.requests[0].body["temperature"] == 0.9
    assert server.requests[0].body["stop"] == ["\n"]


def test_async_call(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content="async hello"))
    response = asyncio.run(make_lm().acall(MESSAGES))
    assert response.text == "async hello"
    assert len(server.requests) == 1


def test_n_choices(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content=["one", "two", "three"], finish_reason="length"))
    response = make_lm()(MESSAGES, n=3)
    assert [c.text for c in response] == ["one", "two", "three"]
    assert all(c.truncated for c in response)
    assert server.requests[0].body["n"] == 3


def test_rate_limit_is_retried_honouring_retry_after(
    server: OpenAIServer, make_lm: MakeLM, sleeps: list[float]
) -> None:
    server.reply(Reply(status=429, headers={"Retry-After": "2.5"}), Reply(content="finally"))
    assert make_lm()(MESSAGES).text == "finally"
    assert len(server.requests) == 2
    assert sleeps == [2.5]


def test_each_retry_is_logged_with_its_wait_and_no_secret(
    server: OpenAIServer,
    make_lm: MakeLM,
    sleeps: list[float],
    caplog: pytest.LogCaptureFixture,
) -> None:
    server.reply(
        Reply(status=429, headers={"Retry-After": "2.5"}, error_message="slow down, test-key"),
        Reply(content="finally"),
    )
    with caplog.at_level(logging.DEBUG, logger="structio"):
        assert make_lm()(MESSAGES).text == "finally"
    # The retry's warning; the model's first use may also log, once, that its price is unknown.
    [record] = [r for r in caplog.records if r.name == "structio" and r.levelno >= logging.WARNING]
    assert record.levelno == logging.WARNING
    message = record.getMessage()
    assert message.startswith("openai/test: RateLimitError: ")
    assert message.endswith("; retry 1 in 2.50 s")
    assert "slow down" in message
    assert "test-key" not in message  # the request's key, redacted as in the error


def test_rate_limit_gives_up_after_num_retries(
    server: OpenAIServer, make_lm: MakeLM, sleeps: list[float]
) -> None:
    server.default = Reply(status=429, error_message="slow down")
    with pytest.raises(sio.RateLimitError) as info:
        make_lm(num_retries=2)(MESSAGES)
    assert len(server.requests) == 3
    assert info.value.attempts == 3
    assert info.value.status_code == 429
    assert "openai/test (provider openai): rate limited after 3 attempts: slow down" in str(
        info.value
    )
    assert len(sleeps) == 2
    assert sleeps[1] > sleeps[0]  # exponential backoff without Retry-After


def test_server_error_is_retried_then_raised(
    server: OpenAIServer, make_lm: MakeLM, sleeps: list[float]
) -> None:
    server.reply(Reply(status=500), Reply(status=502), Reply(content="recovered"))
    assert make_lm(num_retries=2)(MESSAGES).text == "recovered"
    server.default = Reply(status=503, error_message="overloaded")
    with pytest.raises(sio.ServerError, match="overloaded"):
        make_lm(num_retries=1)(MESSAGES)
    assert len(server.requests) == 5


def test_context_window_exceeded_is_mapped_and_not_retried(
    server: OpenAIServer, make_lm: MakeLM, transport: str
) -> None:
    server.default = Reply(
        status=400,
        error_message="This model's maximum context length is 10 tokens",
        error_code="context_length_exceeded",
    )
    with pytest.raises(sio.ContextWindowExceededError) as info:
        make_lm()(MESSAGES)
    assert len(server.requests) == 1
    error = info.value
    assert isinstance(error, sio.BadRequestError)
    assert isinstance(error, ValueError)
    assert error.model == "openai/test"
    assert error.provider == "openai"
    assert "maximum context length is 10 tokens" in str(error)
    # The cause is the transport's own exception, with the provider's text as it came.
    cause_module = "litellm" if transport == "litellm" else "structio.lm._exchange"
    assert type(error.__cause__).__module__.startswith(cause_module)


@pytest.mark.parametrize("status", [400, 404, 422])
def test_bad_requests_are_never_retried(server: OpenAIServer, make_lm: MakeLM, status: int) -> None:
    server.default = Reply(status=status, error_message="nope")
    with pytest.raises(sio.BadRequestError):
        make_lm()(MESSAGES)
    assert len(server.requests) == 1


def test_rejected_key_is_an_authentication_error(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.default = Reply(status=401, error_message="bad key")
    with pytest.raises(sio.AuthenticationError) as info:
        make_lm()(MESSAGES)
    assert isinstance(info.value, PermissionError)
    assert len(server.requests) == 1


@pytest.mark.parametrize("transport", ["direct", "litellm"])
def test_missing_key_names_the_environment_variable(
    transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(sio.AuthenticationError) as info:
        sio.LM("openai/gpt-4o-mini", cache=False, transport=transport)(MESSAGES)
    assert "set the environment variable OPENAI_API_KEY" in str(info.value)
    assert info.value.attempts == 1


def test_slow_response_times_out(
    server: OpenAIServer, make_lm: MakeLM, sleeps: list[float]
) -> None:
    server.default = Reply(delay=1.5)
    with pytest.raises(sio.LMTimeoutError) as info:
        make_lm(timeout=0.3, num_retries=1)(MESSAGES)
    assert isinstance(info.value, TimeoutError)
    assert info.value.attempts == 2
    assert "raise timeout=" in str(info.value)


def test_malformed_body_is_a_server_error(
    server: OpenAIServer, make_lm: MakeLM, sleeps: list[float]
) -> None:
    server.default = Reply(raw_body=b"this is not json")
    with pytest.raises(sio.ServerError):
        make_lm(num_retries=1)(MESSAGES)
    assert len(server.requests) == 2


def test_unreachable_server_is_a_connection_error(sleeps: list[float]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound but not listening: connections are refused
        lm = sio.LM(
            "openai/test",
            api_base=f"http://127.0.0.1:{port}/v1",
            api_key="k",
            cache=False,
            num_retries=1,
            backoff=0.01,
        )
        with pytest.raises(sio.LMConnectionError) as info:
            lm(MESSAGES)
    assert isinstance(info.value, ConnectionError)
    assert len(sleeps) == 1


def test_a_connection_error_names_the_url_tried_without_credentials(
    sleeps: list[float], transport: str
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        lm = sio.LM(
            "openai/test",
            api_base=f"http://user:hunter2-pw@127.0.0.1:{port}/v1",
            api_key="sk-not-shown",
            cache=False,
            num_retries=0,
            transport=transport,
        )
        with pytest.raises(sio.LMConnectionError) as info:
            lm(MESSAGES)
    message = str(info.value)
    assert f"(url: http://127.0.0.1:{port}/v1/chat/completions)" in message
    assert "hunter2-pw" not in message
    assert "sk-not-shown" not in message


def test_an_api_base_without_a_scheme_is_refused_at_construction(
    sleeps: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = (
        "api_base must start with http:// or https://, e.g. http://127.0.0.1:8765/v1; "
        "got '127.0.0.1:8765/v1'"
    )
    with pytest.raises(sio.ConfigurationError) as info:
        sio.LM("openai/x", api_base="127.0.0.1:8765/v1", api_key="k")
    assert str(info.value) == expected
    with pytest.raises(sio.ConfigurationError, match="base_url must start with http://"):
        sio.LM("anthropic/x", base_url="localhost:8080")
    # One from the environment is refused at the request, before anything is sent or retried.
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "localhost:1/v1")
    lm = sio.LM("openai/x", api_key="k", cache=False)
    with pytest.raises(
        sio.ConfigurationError,
        match="the environment variable OPENAI_BASE_URL must start with http:// or https://",
    ):
        lm(MESSAGES)
    assert sleeps == []
    assert sio.LM("openai/x", api_base="HTTPS://example.test/v1").client["api_base"]


def test_the_suite_cannot_reach_the_internet() -> None:
    with (
        pytest.raises(InternetAccessError),
        socket.create_connection(("93.184.216.34", 80), timeout=1),
    ):
        pass


# -- cache ----------------------------------------------------------------------------------


def test_cache_hit_makes_no_request_and_costs_nothing(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    lm = make_lm(cache=True)
    first = lm(MESSAGES)
    second = lm(MESSAGES)
    assert len(server.requests) == 1
    assert second.text == first.text
    assert second.cached
    assert second.cost == 0.0
    assert second.usage == sio.Usage()
    assert not first.cached


def test_cache_key_ignores_the_api_key_but_not_the_parameters(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    make_lm(cache=True, api_key="key-one")(MESSAGES)
    make_lm(cache=True, api_key="key-two")(MESSAGES)
    assert len(server.requests) == 1
    make_lm(cache=True)(MESSAGES, temperature=0.5)
    make_lm(cache=True)([*MESSAGES, {"role": "user", "content": "more"}])
    assert len(server.requests) == 3


def test_cache_can_be_turned_off_per_call(server: OpenAIServer, make_lm: MakeLM) -> None:
    lm = make_lm(cache=True)
    lm(MESSAGES)
    lm(MESSAGES, cache=False)
    assert len(server.requests) == 2
    assert "cache" not in server.requests[1].body


def test_cache_is_on_disk_and_never_stores_the_key(
    server: OpenAIServer, make_lm: MakeLM, isolated: Path
) -> None:
    make_lm(cache=True, api_key="secret-key-123")(MESSAGES)
    files = [p for p in isolated.rglob("*") if p.is_file()]
    assert files
    assert not any(b"secret-key-123" in p.read_bytes() for p in files)


def test_cache_is_shared_with_another_process(
    server: OpenAIServer, make_lm: MakeLM, isolated: Path
) -> None:
    server.reply(Reply(content="from the first process"))
    make_lm(cache=True)(MESSAGES)
    script = textwrap.dedent(
        f"""
        import structio as sio
        lm = sio.LM("openai/test", api_base={server.base_url!r}, api_key="other", num_retries=0)
        response = lm({MESSAGES!r})
        print(response.text, response.cached)
        """
    )
    env = {"STRUCTIO_CACHE_DIR": str(isolated), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PATH": ""}
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    assert result.stdout.strip() == "from the first process True"
    assert len(server.requests) == 1


def test_memory_only_cache(server: OpenAIServer, make_lm: MakeLM, isolated: Path) -> None:
    lm = make_lm(cache=sio.ResponseCache(None))
    lm(MESSAGES)
    lm(MESSAGES)
    assert len(server.requests) == 1
    assert not isolated.exists()


# -- history --------------------------------------------------------------------------------


def test_history_and_inspect_history(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content="first answer"), Reply(content="second answer"))
    lm = make_lm(temperature=0.0)
    lm(MESSAGES)
    lm([{"role": "user", "content": "again"}])
    assert len(lm.history) == 2
    entry = lm.history[-1]
    assert entry.messages == [{"role": "user", "content": "again"}]
    assert entry.params == {"api_base": server.base_url, "temperature": 0.0}  # no api_key
    assert entry.response.text == "second answer"
    out = io.StringIO()
    assert sio.inspect_history(2, file=out) is None  # printed only: a REPL shows it once
    text = out.getvalue()
    assert "openai/test" in text
    assert "System message:\n\nBe brief." in text
    assert "User message:\n\nagain" in text
    assert "Response (finish reason: stop):\n\nsecond answer" in text
    assert text.index("first answer") < text.index("second answer")
    assert "test-key" not in text


def test_lm_rejects_bad_settings() -> None:
    with pytest.raises(sio.ConfigurationError, match="model string"):
        sio.LM("")
    with pytest.raises(sio.ConfigurationError, match="num_retries"):
        sio.LM("openai/x", num_retries=-1)
    with pytest.raises(TypeError, match="list of messages"):
        sio.FakeLM(["x"])(42)  # type: ignore[call-overload]  # lm("text") is DSPy's form


def test_repr_hides_the_key(make_lm: MakeLM) -> None:
    text = repr(make_lm(api_key="sk-secret", temperature=0))
    assert "sk-secret" not in text
    assert "temperature=0" in text


def test_cost_is_reported_when_litellm_knows_the_price(server: OpenAIServer) -> None:
    lm = sio.LM("openai/gpt-4o-mini", api_base=server.base_url, api_key="k", cache=True)
    response = lm(MESSAGES)
    assert response.cost is not None
    assert response.cost > 0
    assert lm(MESSAGES).cost == 0.0  # the cache hit


def test_litellm_is_imported_offline_on_first_use() -> None:
    script = (
        "import os, sys, structio as sio\n"
        "assert 'litellm' not in sys.modules\n"
        "assert 'LITELLM_LOCAL_MODEL_COST_MAP' not in os.environ\n"
        "from structio.lm._litellm import get_litellm\n"
        "get_litellm()\n"
        "print(os.environ['LITELLM_LOCAL_MODEL_COST_MAP'], 'litellm' in sys.modules)\n"
    )
    env = {"PATH": "", "STRUCTIO_CACHE_DIR": "/nonexistent"}
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    assert result.stdout.split() == ["True", "True"]
