"""track_usage: tokens and cost of every model call inside a block, per model."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import structio as sio
from structio.lm.base import BaseLM
from structio.lm.types import Completion, LMResponse, Usage
from structio.lm.usage import UsageTracker, record_usage, track_usage

QA = sio.Signature("question -> answer")
MESSAGES = [{"role": "user", "content": "Hi?"}]
TEN_AND_TWO = Usage(10, 2, 4, 1)


class PricedLM(BaseLM):
    """Answers in ChatAdapter's format with fixed token counts and a fixed price per call."""

    def __init__(
        self,
        model: str = "priced/a",
        *,
        usage: Usage = TEN_AND_TWO,
        cost: float | None = 0.5,
        cached: bool = False,
    ) -> None:
        super().__init__(model)
        self.usage = usage
        self.cost = cost
        self.cached = cached

    def _complete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> LMResponse:
        response = LMResponse(
            completions=(Completion("[[ ## answer ## ]]\nok", "stop"),),
            model=self.model,
            usage=self.usage,
            cost=self.cost,
        )
        return response.as_cache_hit(0.001) if self.cached else response


def test_every_call_inside_is_added_per_model() -> None:
    first, second = PricedLM("priced/a"), PricedLM("priced/b", usage=Usage(7, 3), cost=0.25)
    with track_usage() as usage:
        first(MESSAGES)
        first(MESSAGES)
        second(MESSAGES)
    assert usage.by_model == {"priced/a": Usage(20, 4, 8, 2), "priced/b": Usage(7, 3)}
    assert usage.total == Usage(27, 7, 8, 2)
    assert usage.total.total_tokens == 34
    assert usage.cost == pytest.approx(1.25)
    assert usage.cost_by_model == {"priced/a": pytest.approx(1.0), "priced/b": 0.25}
    assert usage.calls == 3
    assert usage.calls_by_model == {"priced/a": 2, "priced/b": 1}
    assert usage.cached_calls == 0


def test_calls_outside_the_block_are_not_added() -> None:
    lm = PricedLM()
    lm(MESSAGES)
    with track_usage() as usage:
        lm(MESSAGES)
    lm(MESSAGES)
    assert usage.calls == 1
    assert usage.total == Usage(10, 2, 4, 1)


def test_no_call_costs_nothing() -> None:
    with track_usage() as usage:
        pass
    assert (usage.calls, usage.total, usage.cost, usage.by_model) == (0, Usage(), 0.0, {})


def test_one_unpriced_call_makes_the_cost_unknown() -> None:
    with track_usage() as usage:
        PricedLM("priced/a")(MESSAGES)
        PricedLM("priced/b", cost=None)(MESSAGES)
        PricedLM("priced/b")(MESSAGES)  # a price after an unknown one does not make it known
    assert usage.cost is None
    assert usage.cost_by_model == {"priced/a": 0.5, "priced/b": None}
    assert usage.total == Usage(30, 6, 12, 3)


def test_a_fake_lm_has_no_price() -> None:
    with track_usage() as usage:
        sio.FakeLM(["a", "b"])(MESSAGES)
    assert usage.calls == 1
    assert usage.cost is None
    assert usage.by_model == {"fake": Usage()}


def test_cache_hits_count_as_calls_with_no_tokens_and_no_cost() -> None:
    with track_usage() as usage:
        PricedLM(cached=True)(MESSAGES)
        PricedLM()(MESSAGES)
    assert usage.calls == 2
    assert usage.cached_calls == 1
    assert usage.total == Usage(10, 2, 4, 1)
    assert usage.cost == 0.5


def test_nested_trackers_each_see_the_calls_inside_them() -> None:
    lm = PricedLM()
    with track_usage() as outer:
        lm(MESSAGES)
        with track_usage() as inner:
            lm(MESSAGES)
            with track_usage() as innermost:
                lm(MESSAGES)
        lm(MESSAGES)
    assert (outer.calls, inner.calls, innermost.calls) == (4, 2, 1)
    assert inner.total == Usage(20, 4, 8, 2)


def test_the_totals_are_final_once_the_block_ends() -> None:
    lm = PricedLM()
    captured: list[contextvars.Context] = []
    with track_usage() as usage:
        captured.append(contextvars.copy_context())  # a thread started inside, ending later
    captured[0].run(lm, MESSAGES)
    assert usage.calls == 0


def test_streams_count_once_they_end_and_not_when_left_early() -> None:
    lm = PricedLM()
    with track_usage() as usage:
        pieces = list(lm.stream(MESSAGES))
        assert usage.calls == 1
        with lm.stream(MESSAGES) as stream:
            assert next(stream) == "[[ ## answer ## ]]\nok"  # the text, not the response yet
    assert isinstance(pieces[-1], LMResponse)
    assert usage.calls == 1
    assert usage.total == Usage(10, 2, 4, 1)


def test_async_calls_and_streams_are_counted() -> None:
    lm = PricedLM()

    async def main() -> UsageTracker:
        with track_usage() as usage:
            await lm.acall(MESSAGES)
            async with lm.astream(MESSAGES) as stream:
                async for _ in stream:
                    pass
        return usage

    usage = asyncio.run(main())
    assert usage.calls == 2
    assert usage.total == Usage(20, 4, 8, 2)


def test_asyncio_tasks_started_inside_are_counted() -> None:
    lm = PricedLM()

    async def main() -> tuple[UsageTracker, UsageTracker]:
        with track_usage() as outer:

            async def one() -> None:
                await lm.acall(MESSAGES)

            async def scoped() -> UsageTracker:
                # A tracker opened in one task is not seen by its sibling tasks.
                with track_usage() as mine:
                    await asyncio.sleep(0.01)
                    await lm.acall(MESSAGES)
                return mine

            results = await asyncio.gather(one(), one(), scoped(), one())
        mine = results[2]
        assert isinstance(mine, UsageTracker)
        return outer, mine

    outer, mine = asyncio.run(main())
    assert outer.calls == 4
    assert mine.calls == 1


def test_threads_with_a_copied_context_are_counted() -> None:
    lm = PricedLM()
    with track_usage() as usage, ThreadPoolExecutor(max_workers=8) as pool:
        futures = [pool.submit(contextvars.copy_context().run, lm, MESSAGES) for _ in range(40)]
        for future in futures:
            future.result()
    assert usage.calls == 40
    assert usage.total == Usage(400, 80, 160, 40)
    assert usage.cost == pytest.approx(20.0)


def test_a_plain_thread_does_not_see_the_block() -> None:
    # Context variables do not flow into a thread started without a copy of the context:
    # the documented reason to use contextvars.copy_context().run.
    lm = PricedLM()
    with track_usage() as usage:
        worker = threading.Thread(target=lm, args=(MESSAGES,))
        worker.start()
        worker.join()
    assert usage.calls == 0


def test_predict_batch_threads_are_counted() -> None:
    predict = sio.Predict(QA, lm=PricedLM())
    with track_usage() as usage:
        results = predict.batch([{"question": str(i)} for i in range(12)], progress=False)
    assert [r.answer for r in results] == ["ok"] * 12  # type: ignore[union-attr]
    assert usage.calls == 12
    assert usage.by_model == {"priced/a": Usage(120, 24, 48, 12)}


def test_predict_abatch_is_counted() -> None:
    predict = sio.Predict(QA, lm=PricedLM())

    async def main() -> UsageTracker:
        with track_usage() as usage:
            await predict.abatch([{"question": str(i)} for i in range(5)], progress=False)
        return usage

    assert asyncio.run(main()).calls == 5


def test_concurrent_adds_are_not_lost() -> None:
    tracker = UsageTracker()
    response = LMResponse((Completion("x"),), "m", Usage(1, 1), cost=0.001)

    def add_many() -> None:
        for _ in range(2000):
            tracker.add(response)

    workers = [threading.Thread(target=add_many) for _ in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert tracker.calls == 16000
    assert tracker.total == Usage(16000, 16000)
    assert tracker.cost == pytest.approx(16.0)


def test_a_response_is_added_under_the_model_given_else_its_own() -> None:
    tracker = UsageTracker()
    tracker.add(LMResponse((Completion("x"),), "own", Usage(1, 0)))
    tracker.add(LMResponse((Completion("x"),), "own", Usage(1, 0)), model="given")
    assert tracker.calls_by_model == {"own": 1, "given": 1}


def test_record_usage_without_a_tracker_does_nothing() -> None:
    record_usage("m", LMResponse((Completion("x"),), "m", Usage(1, 1)))  # no error, no state
    with track_usage() as usage:
        record_usage("m", LMResponse((Completion("x"),), "m", Usage(1, 1)))
    assert usage.calls == 1


def test_a_response_with_no_choices_is_not_counted() -> None:
    class Empty(BaseLM):
        def _complete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> LMResponse:
            return LMResponse((), self.model, Usage(5, 0))

    with track_usage() as usage, pytest.raises(sio.ServerError):
        Empty("empty")(MESSAGES)
    assert usage.calls == 0


def test_to_dict_and_repr() -> None:
    with track_usage() as usage:
        PricedLM()(MESSAGES)
        PricedLM(cached=True)(MESSAGES)
    assert usage.to_dict() == {
        "calls": 2,
        "cached_calls": 1,
        "cost": 0.5,
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "cached_tokens": 4,
        "reasoning_tokens": 1,
        "total_tokens": 12,
        "models": {
            "priced/a": {
                "calls": 2,
                "cost": 0.5,
                "prompt_tokens": 10,
                "completion_tokens": 2,
                "cached_tokens": 4,
                "reasoning_tokens": 1,
                "total_tokens": 12,
            }
        },
    }
    assert repr(usage) == (
        "UsageTracker(calls=2, prompt_tokens=10, completion_tokens=2, cost=$0.500000)"
    )
    with track_usage() as unknown:
        PricedLM(cost=None)(MESSAGES)
    assert "cost=unknown" in repr(unknown)
    assert unknown.to_dict()["cost"] is None


def test_the_by_model_dict_is_a_copy() -> None:
    with track_usage() as usage:
        PricedLM()(MESSAGES)
    usage.by_model.clear()
    assert usage.calls == 1
    assert usage.by_model != {}
