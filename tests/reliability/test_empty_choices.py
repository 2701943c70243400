"""A response with no choices is a provider failure: retried, then raised; never an answer.

The loopback server answers ``{"choices": []}``; before, that became a successful, empty
`Prediction`.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Callable

import pytest

import structio as sio
from structio.lm import lm as lm_module
from structio.lm.cache import ResponseCache, cache_key
from tests.wire.conftest import make_lm  # noqa: F401 - the loopback fixture
from tests.wire.server import OpenAIServer, Reply

MakeLM = Callable[..., sio.LM]
MESSAGES = [{"role": "user", "content": "Hi?"}]
NO_CHOICES = Reply(content=[])  # the server sends "choices": []
ANSWER = "[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]"


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record the backoff waits instead of sleeping them."""
    recorded: list[float] = []
    monkeypatch.setattr(lm_module, "_sleep", recorded.append)
    return recorded


def test_the_server_really_sends_an_empty_choices_list(server: OpenAIServer) -> None:
    server.reply(NO_CHOICES)
    request = urllib.request.Request(  # noqa: S310 - http://127.0.0.1 only
        f"{server.base_url}/chat/completions",
        data=json.dumps({"model": "test", "messages": MESSAGES}).encode(),
        headers={"Content-Type": "application/json"},
    )
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with direct.open(request) as answer:
        assert json.loads(answer.read())["choices"] == []


def test_no_choices_is_retried_then_raised_as_a_server_error(
    server: OpenAIServer,
    make_lm: MakeLM,  # noqa: F811
    sleeps: list[float],
) -> None:
    server.default = NO_CHOICES
    lm = make_lm(num_retries=2)
    with pytest.raises(sio.ServerError) as info:
        lm(MESSAGES)
    assert len(server.requests) == 3  # the first request and two retries
    assert len(sleeps) == 2  # with backoff between them
    error = info.value
    assert error.attempts == 3
    assert error.model == "openai/test"
    assert "openai/test" in str(error)
    assert "returned no choices after 3 attempts" in str(error)
    assert not lm.history  # a failure is not a call in the history


def test_a_retry_that_brings_a_choice_succeeds(
    server: OpenAIServer,
    make_lm: MakeLM,  # noqa: F811
    sleeps: list[float],
) -> None:
    server.reply(NO_CHOICES, Reply(content="finally"))
    assert make_lm()(MESSAGES).text == "finally"
    assert len(server.requests) == 2
    assert len(sleeps) == 1


def test_the_async_path_retries_and_raises_too(
    server: OpenAIServer,
    make_lm: MakeLM,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def no_wait(seconds: float) -> None:
        return None

    monkeypatch.setattr(asyncio, "sleep", no_wait)
    server.default = NO_CHOICES
    with pytest.raises(sio.ServerError, match="no choices after 2 attempts"):
        asyncio.run(make_lm(num_retries=1).acall(MESSAGES))
    assert len(server.requests) == 2


def test_num_retries_zero_raises_at_once(server: OpenAIServer, make_lm: MakeLM) -> None:  # noqa: F811
    server.default = NO_CHOICES
    with pytest.raises(sio.ServerError, match="returned no choices") as info:
        make_lm(num_retries=0)(MESSAGES)
    assert info.value.attempts == 1
    assert len(server.requests) == 1


def test_an_empty_response_in_the_cache_is_not_an_answer(
    server: OpenAIServer,
    make_lm: MakeLM,  # noqa: F811
) -> None:
    cache = ResponseCache(None)
    lm = make_lm(cache=cache)
    cache.set(
        cache_key(lm.model, MESSAGES, lm.request_params({})),
        sio.LMResponse(completions=(), model=lm.model),
    )
    server.reply(Reply(content="fresh"))
    assert lm(MESSAGES).text == "fresh"
    assert len(server.requests) == 1


def test_predict_never_returns_an_empty_prediction(
    server: OpenAIServer,
    make_lm: MakeLM,  # noqa: F811
    sleeps: list[float],
) -> None:
    server.default = NO_CHOICES
    predict = sio.Predict("question -> answer: int", lm=make_lm(num_retries=1))
    with pytest.raises(sio.ServerError, match="no choices"):
        predict(question="2+2?")
    assert len(server.requests) == 2
    with pytest.raises(sio.BatchError) as info:
        predict.batch(
            [{"question": "a"}, {"question": "b"}], progress=False, return_exceptions=False
        )
    assert [type(r) for r in info.value.results] == [sio.ServerError, sio.ServerError]
    results = predict.batch([{"question": "a"}], progress=False)
    assert isinstance(results[0], sio.ServerError)


def test_a_fake_lm_scripted_with_no_choices_raises_the_same_error() -> None:
    lm = sio.FakeLM([[], ANSWER], model="scripted")
    with pytest.raises(sio.ServerError, match="scripted: the provider returned no choices"):
        lm(MESSAGES)
    assert not lm.history
    assert lm(MESSAGES).text == ANSWER  # the next scripted reply is still there
    predict = sio.Predict("question -> answer: int", lm=sio.FakeLM([[]]))
    with pytest.raises(sio.ServerError):
        predict(question="2+2?")
    with pytest.raises(sio.ServerError):
        asyncio.run(sio.FakeLM([[]]).acall(MESSAGES))
