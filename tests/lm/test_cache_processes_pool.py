"""Many processes, one response cache: a Predict pickled to a pool of spawned workers.

The parent makes one `Predict` whose `LM` caches in one directory and ships it to four
worker processes (multiprocessing's own pickling, or cloudpickle bytes as Ray sends them).
The provider is a function of this module standing in for the transport: every request it
answers leaves a file in a directory and gets an answer no other request gets. So the
files count the requests that reached the provider, across processes, and an answer seen
in two places came from the cache.

What the cache promises: a request answered once is not sent again by any process sharing
the directory. Two processes that miss the same request at the very same moment may both
send it (see `ResponseCache`); the requests below are therefore distinct within a round.
"""

from __future__ import annotations

import functools
import json
import multiprocessing
import os
import pickle
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cloudpickle
import pytest

import structio as sio
from structio.lm.cache import ResponseCache
from structio.lm.mock import MockRequest, MockTransport
from structio.lm.types import Completion, LMResponse, Usage

WORKERS = 4
QUESTIONS = [f"question {number}" for number in range(40)]
TIMEOUT = 180.0


def provider(hits: str, request: MockRequest) -> LMResponse:
    """The provider: each request is a file in ``hits``, and an answer of its own."""
    answer = f"{os.getpid()}-{uuid.uuid4().hex}"
    record = {"pid": os.getpid(), "messages": list(request.messages), "answer": answer}
    Path(hits, f"{uuid.uuid4().hex}.json").write_text(json.dumps(record), encoding="utf-8")
    text = f"[[ ## answer ## ]]\n{answer}\n\n[[ ## completed ## ]]"
    return LMResponse(
        completions=(Completion(text, "stop"),),
        model=request.model,
        usage=Usage(prompt_tokens=10, completion_tokens=2),
    )


class ProviderLM(sio.LM):
    """An `LM` whose transport is `provider`: caching, retries and pickling are LM's own."""

    def __init__(self, model: str, *, hits: str, **kwargs: Any) -> None:
        self.hits = hits  # read by _bind_transport, which LM's __init__ calls
        super().__init__(model, **kwargs)

    def _bind_transport(self) -> None:
        super()._bind_transport()
        self._transport = MockTransport(functools.partial(provider, self.hits))


def ask(job: tuple[Any, list[str]]) -> list[tuple[str, str, bool, int]]:
    """In a worker: the Predict it was sent, on each question.

    A Predict arrives pickled by multiprocessing, or as cloudpickle bytes.
    """
    shipped, questions = job
    predict = cloudpickle.loads(shipped) if isinstance(shipped, bytes) else shipped
    results = []
    for question in questions:
        prediction = predict(question=question)
        cached = prediction.responses[-1].cached
        results.append((question, prediction.answer, cached, os.getpid()))
    return results


def hits(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(path.read_text(encoding="utf-8")) for path in directory.iterdir()]


@pytest.fixture
def pool() -> Iterator[Any]:
    context = multiprocessing.get_context("spawn")
    with context.Pool(WORKERS) as workers:
        yield workers
        workers.close()
        workers.join()


@pytest.mark.parametrize("shipping", ["pickle", "cloudpickle"])
@pytest.mark.parametrize("cache_kind", ["directory", "default"])
def test_workers_share_one_cache_directory(
    pool: Any, tmp_path: Path, shipping: str, cache_kind: str
) -> None:
    provider_dir = tmp_path / "hits"
    provider_dir.mkdir()
    if cache_kind == "directory":
        cache: Any = ResponseCache(tmp_path / "shared-cache")
    else:
        # cache=True: the default cache of each worker, $STRUCTIO_CACHE_DIR, which spawned
        # workers inherit from the parent (set by the suite's `isolated` fixture).
        cache = True
    lm = ProviderLM("openai/provider", hits=str(provider_dir), cache=cache, api_key="k")
    predict = sio.Predict("question -> answer", lm=lm)
    shipped: Any = cloudpickle.dumps(predict) if shipping == "cloudpickle" else predict
    if shipping == "pickle":
        pickle.dumps(predict)  # what multiprocessing does with it, checked here first

    # Round 1: each distinct question once, spread over the workers: all misses.
    chunks = [QUESTIONS[index::WORKERS] for index in range(WORKERS)]
    first = [row for rows in pool.map(ask, [(shipped, c) for c in chunks], 1) for row in rows]
    answers = {question: answer for question, answer, _, _ in first}
    assert sorted(answers) == sorted(QUESTIONS)
    assert not any(cached for _, _, cached, _ in first)
    received = hits(provider_dir)
    assert len(received) == len(QUESTIONS)  # one request per distinct question
    assert {record["answer"] for record in received} == set(answers.values())
    assert {record["pid"] for record in received} <= {pid for _, _, _, pid in first}
    assert os.getpid() not in {record["pid"] for record in received}

    # Round 2: every worker asks every question, in its own order: all from the cache,
    # including what other processes wrote, and the same answers.
    orders = [QUESTIONS[index:] + QUESTIONS[:index] for index in range(0, 40, 10)]
    second = [row for rows in pool.map(ask, [(shipped, o) for o in orders], 1) for row in rows]
    assert len(second) == WORKERS * len(QUESTIONS)
    assert all(cached for _, _, cached, _ in second)
    assert all(answer == answers[question] for question, answer, _, _ in second)
    assert len(hits(provider_dir)) == len(QUESTIONS)  # nothing more reached the provider

    # The parent, on the same directory, reads the same answers without a request.
    for question in QUESTIONS[:5]:
        prediction = predict(question=question)
        assert prediction.answer == answers[question]
        assert prediction.responses[-1].cached
    assert len(hits(provider_dir)) == len(QUESTIONS)
    if isinstance(cache, ResponseCache):
        cache.close()


def test_cache_false_workers_always_ask(pool: Any, tmp_path: Path) -> None:
    provider_dir = tmp_path / "hits"
    provider_dir.mkdir()
    lm = ProviderLM("openai/provider", hits=str(provider_dir), cache=False, api_key="k")
    predict = sio.Predict("question -> answer", lm=lm)
    jobs = [(predict, QUESTIONS[:3]) for _ in range(WORKERS)]
    rows = [row for rows in pool.map(ask, jobs, 1) for row in rows]
    assert not any(cached for _, _, cached, _ in rows)
    assert len(hits(provider_dir)) == WORKERS * 3
    assert len({answer for _, answer, _, _ in rows}) == WORKERS * 3  # every one asked anew
