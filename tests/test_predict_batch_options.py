"""`batch` and `abatch` keywords: DSPy's ``num_threads``, and no unknown keyword let through."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

import structio as sio

QA = sio.Signature("question -> answer: int")


class Gate(sio.BaseLM):
    """A model that holds each call until ``width`` calls are in flight together."""

    def __init__(self, width: int) -> None:
        super().__init__("gate")
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0
        # Passes only once `width` calls wait at once: a batch running fewer breaks it.
        self.barrier = threading.Barrier(width, timeout=10)

    def _complete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> sio.LMResponse:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            self.barrier.wait()
        finally:
            with self.lock:
                self.running -= 1
        return sio.LMResponse((sio.Completion("[[ ## answer ## ]]\n4"),), model=self.model)


def run(predict: sio.Predict, method: str, items: list[Any], **options: Any) -> object:
    """``predict.batch(...)``, or ``abatch`` run to its end."""
    if method == "abatch":
        return asyncio.run(predict.abatch(items, **options))
    return predict.batch(items, **options)


def test_num_threads_is_max_concurrency() -> None:
    gate = Gate(3)
    predict = sio.Predict(QA, lm=gate)
    results = predict.batch([{"question": str(i)} for i in range(6)], num_threads=3)
    assert [r.answer for r in results if isinstance(r, sio.Prediction)] == [4] * 6
    assert gate.most == 3


def test_num_threads_in_abatch() -> None:
    predict = sio.Predict(QA, lm=sio.FakeLM(lambda _m: "[[ ## answer ## ]]\n4"))
    results = asyncio.run(predict.abatch([{"question": "a"}, {"question": "b"}], num_threads=2))
    assert [r.answer for r in results if isinstance(r, sio.Prediction)] == [4, 4]


@pytest.mark.parametrize("method", ["batch", "abatch"])
def test_both_names_at_once_is_an_error(method: str) -> None:
    predict = sio.Predict(QA, lm=sio.FakeLM([]))
    with pytest.raises(sio.UsageError, match="both max_concurrency and num_threads"):
        run(predict, method, [{"question": "q"}], max_concurrency=2, num_threads=2)


@pytest.mark.parametrize("method", ["batch", "abatch"])
def test_an_unknown_keyword_is_refused_before_any_call(method: str) -> None:
    lm = sio.FakeLM([])
    predict = sio.Predict(QA, lm=lm)
    with pytest.raises(sio.UsageError, match=r"unexpected keyword argument 'num_thread'"):
        run(predict, method, [{"question": "q"}], num_thread=2)
    assert lm.call_count == 0


def test_an_unknown_keyword_names_what_to_do() -> None:
    predict = sio.Predict(QA, lm=sio.FakeLM([]))
    with pytest.raises(sio.UsageError, match="use progress=False"):
        predict.batch([{"question": "q"}], disable_progress_bar=True)
    with pytest.raises(sio.UsageError, match="`question` is an input: put it in each item"):
        predict.batch([{}], question="shared")


def test_call_options_still_reach_every_call() -> None:
    lm = sio.FakeLM(lambda _m: '{"answer": 4}')
    predict = sio.Predict(QA, lm=lm)
    results = predict.batch(
        [{"question": "a"}, {"question": "b"}],
        adapter=sio.JSONAdapter(),
        config={"temperature": 0.5},
        max_retries=1,
        progress=False,
    )
    assert all(isinstance(r, sio.Prediction) and r.meta.route == "json" for r in results)
    assert [call.params for call in lm.calls] == [{"temperature": 0.5}] * 2
