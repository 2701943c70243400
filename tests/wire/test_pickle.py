"""A pickled Predict on the real wire: the same requests, keys from the worker's environment.

The loopback server stands in for the provider. An unpickled Predict must send what the
original sends; a key read from the environment is read again where the LM runs and is
never in the pickle; spawned workers sharing one cache directory send each request once.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cloudpickle
import pytest

import structio as sio
from structio.lm.cache import ResponseCache
from tests.wire.server import OpenAIServer, Reply, Request

PICKLERS = [pytest.param(pickle, id="pickle"), pytest.param(cloudpickle, id="cloudpickle")]
ENV_KEY = "sk-env-key-for-the-wire-31337"
WORKER_KEY = "sk-the-workers-own-key-2718"
QUESTIONS = [f"question {number}" for number in range(24)]
WORKERS = 4


def fresh_answers(request: Request) -> Reply:
    """Every request gets an answer no other request gets."""
    return Reply(content=f"[[ ## answer ## ]]\n{uuid.uuid4().hex}\n\n[[ ## completed ## ]]")


def bearer(request: Request) -> str | None:
    found = {name.lower(): value for name, value in request.headers.items()}
    return found.get("authorization")


@pytest.mark.parametrize("module", PICKLERS)
def test_an_unpickled_predict_sends_the_same_request(
    module: Any, server: OpenAIServer, make_lm: Callable[..., sio.LM]
) -> None:
    server.handler = fresh_answers
    predict = sio.Predict(
        "question, context: list[str] -> answer",
        lm=make_lm(temperature=0.1),
        demos=[{"question": "2+2?", "context": [], "answer": "4"}],
        max_retries=1,
        seed=3,
    )
    copied = module.loads(module.dumps(predict))
    predict(question="Why?", context=["sky"])
    copied(question="Why?", context=["sky"])
    original, again = server.requests[-2:]
    assert again.body == original.body
    assert again.path == original.path
    assert bearer(again) == bearer(original) == "Bearer test-key"


@pytest.mark.parametrize("module", PICKLERS)
def test_a_key_from_the_environment_is_read_where_the_lm_runs(
    module: Any, server: OpenAIServer, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.handler = fresh_answers
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    lm = sio.LM("openai/test", api_base=server.base_url, cache=False, transport=transport)
    predict = sio.Predict("question -> answer", lm=lm)
    predict(question="first")  # used: clients and all are warm
    assert bearer(server.requests[-1]) == f"Bearer {ENV_KEY}"
    payload = module.dumps(predict)
    assert ENV_KEY.encode() not in payload
    # The worker has its own environment, and its own key.
    monkeypatch.setenv("OPENAI_API_KEY", WORKER_KEY)
    module.loads(payload)(question="second")
    assert bearer(server.requests[-1]) == f"Bearer {WORKER_KEY}"


def ask(job: tuple[Any, list[str]]) -> list[tuple[str, str, bool]]:
    """In a worker: the shipped Predict on each question."""
    shipped, questions = job
    predict = cloudpickle.loads(shipped) if isinstance(shipped, bytes) else shipped
    rows = []
    for question in questions:
        prediction = predict(question=question)
        rows.append((question, prediction.answer, prediction.responses[-1].cached))
    return rows


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    # Spawned workers take the parent's environment: the key they use is there, and only
    # there; the pickle does not carry it.
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    with multiprocessing.get_context("spawn").Pool(WORKERS) as workers:
        yield workers
        workers.close()
        workers.join()


@pytest.mark.parametrize("shipping", ["pickle", "cloudpickle"])
def test_spawned_workers_share_one_cache_over_http(
    pool: Any, server: OpenAIServer, tmp_path: Path, shipping: str
) -> None:
    server.handler = fresh_answers
    cache = ResponseCache(tmp_path / "shared-cache")
    lm = sio.LM("openai/test", api_base=server.base_url, cache=cache, backoff=0.01)
    predict = sio.Predict("question -> answer", lm=lm)
    payload = cloudpickle.dumps(predict) if shipping == "cloudpickle" else pickle.dumps(predict)
    assert ENV_KEY.encode() not in payload
    shipped: Any = payload if shipping == "cloudpickle" else predict

    chunks = [QUESTIONS[index::WORKERS] for index in range(WORKERS)]
    first = [row for rows in pool.map(ask, [(shipped, c) for c in chunks], 1) for row in rows]
    answers = {question: answer for question, answer, _ in first}
    assert sorted(answers) == sorted(QUESTIONS)
    assert not any(cached for _, _, cached in first)
    assert len(server.requests) == len(QUESTIONS)  # one request per distinct question
    assert {bearer(request) for request in server.requests} == {f"Bearer {ENV_KEY}"}

    everyone = [(shipped, QUESTIONS[index:] + QUESTIONS[:index]) for index in range(WORKERS)]
    second = [row for rows in pool.map(ask, everyone, 1) for row in rows]
    assert len(second) == WORKERS * len(QUESTIONS)
    assert all(cached and answer == answers[question] for question, answer, cached in second)
    assert len(server.requests) == len(QUESTIONS)  # the cache answered every one
    assert os.listdir(cache.directory)  # and it is the directory the parent named
    cache.close()
