"""Single flight: identical requests in flight at once are made once (threads and tasks)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

import structio as sio
from structio.lm.cache import ResponseCache
from structio.lm.flight import Flights, flights_for
from structio.lm.mock import MockRequest, MockTransport


def until(condition: Callable[[], bool]) -> None:
    """Wait (polling an event, never a clock assertion) until ``condition`` holds."""
    pause = threading.Event()
    for _ in range(6000):
        if condition():
            return
        pause.wait(0.005)
    raise AssertionError("the condition never held")


class Held:
    """A handler that counts requests and holds each until released."""

    def __init__(self, *, fail: bool = False) -> None:
        self.count = 0
        self.lock = threading.Lock()
        self.release = threading.Event()
        self.fail = fail

    def __call__(self, request: MockRequest) -> str | BaseException:
        with self.lock:
            self.count += 1
        self.release.wait(timeout=60)
        if self.fail:
            return sio.BadRequestError("refused", model=request.model)
        return f"answer to {request.text}"


def lm_with(handler: Held, cache: ResponseCache) -> sio.LM:
    return sio.LM("openai/test", transport=MockTransport(handler), cache=cache, num_retries=0)


def ask(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_50_threads_asking_10_prompts_make_10_requests() -> None:
    handler = Held()
    cache = ResponseCache()
    lm = lm_with(handler, cache)
    answers: list[sio.LMResponse] = []
    lock = threading.Lock()

    def one(index: int) -> None:
        response = lm(ask(f"prompt {index % 10}"))
        with lock:
            answers.append(response)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(50)]
    for thread in threads:
        thread.start()
    flights = flights_for(cache)
    # Every leader is in its request, and the 40 others wait for one of them.
    until(lambda: handler.count >= 10 and sum(flights.waiting(k) for k in _keys(flights)) == 40)
    handler.release.set()
    for thread in threads:
        thread.join(timeout=60)
    assert handler.count == 10
    assert sorted(r.text for r in answers) == sorted(
        f"answer to prompt {i % 10}" for i in range(50)
    )
    # The waiters' answers are cache hits: paid for once, by the leader.
    assert sum(not r.cached for r in answers) == 10
    assert len(flights) == 0


def _keys(flights: Flights) -> list[str]:
    with flights._lock:
        return list(flights._flights)


class HeldAsync(MockTransport):
    """A transport whose async requests wait (without blocking the loop) until released."""

    def __init__(self, handler: Held) -> None:
        super().__init__(handler)
        self.release = asyncio.Event()

    async def asend(self, *args: Any) -> sio.LMResponse:
        await self.release.wait()
        return await super().asend(*args)


def test_asyncio_tasks_asking_the_same_make_one_request() -> None:
    handler = Held()
    handler.release.set()  # the transport holds the requests, in the loop
    cache = ResponseCache()

    async def main() -> list[sio.LMResponse]:
        transport = HeldAsync(handler)
        lm = sio.LM("openai/test", transport=transport, cache=cache, num_retries=0)
        tasks = [asyncio.create_task(lm.acall(ask(f"p{i % 3}"))) for i in range(30)]
        flights = flights_for(cache)
        while sum(flights.waiting(k) for k in _keys(flights)) != 27:
            await asyncio.sleep(0.005)  # the loop runs on while the tasks wait
        transport.release.set()
        return await asyncio.gather(*tasks)

    answers = asyncio.run(main())
    assert handler.count == 3
    assert sorted(r.text for r in answers) == sorted(f"answer to p{i % 3}" for i in range(30))


def test_an_error_reaches_every_waiter_each_its_own() -> None:
    handler = Held(fail=True)
    cache = ResponseCache()
    lm = lm_with(handler, cache)
    errors: list[BaseException] = []
    lock = threading.Lock()

    def one() -> None:
        try:
            lm(ask("same"))
        except sio.LMError as error:
            with lock:
                errors.append(error)

    threads = [threading.Thread(target=one) for _ in range(8)]
    for thread in threads:
        thread.start()
    flights = flights_for(cache)
    until(lambda: handler.count == 1 and sum(flights.waiting(k) for k in _keys(flights)) == 7)
    handler.release.set()
    for thread in threads:
        thread.join(timeout=60)
    assert handler.count == 1
    assert len(errors) == 8
    assert all(isinstance(e, sio.BadRequestError) for e in errors)
    assert len({id(e) for e in errors}) == 8  # no traceback shared between threads
    assert all("refused" in str(e) for e in errors)


def test_a_waiter_whose_leader_is_interrupted_leads_itself() -> None:
    flights = Flights()
    entered = threading.Event()
    stop = threading.Event()
    calls: list[str] = []

    def interrupted() -> str:
        calls.append("leader")
        entered.set()
        stop.wait(timeout=60)
        raise KeyboardInterrupt

    outcome: list[tuple[str, bool]] = []

    def leader() -> None:
        with pytest.raises(KeyboardInterrupt):
            flights.run("k", interrupted)

    def waiter() -> None:
        outcome.append(flights.run("k", lambda: calls.append("waiter") or "mine"))  # type: ignore[func-returns-value]

    first = threading.Thread(target=leader)
    first.start()
    entered.wait(timeout=60)
    second = threading.Thread(target=waiter)
    second.start()
    until(lambda: flights.waiting("k") == 1)
    stop.set()
    first.join(timeout=60)
    second.join(timeout=60)
    assert not second.is_alive()
    assert calls == ["leader", "waiter"]
    assert outcome == [("mine", True)]


def test_a_task_whose_leader_is_cancelled_does_not_hang() -> None:
    flights = Flights()

    async def main() -> tuple[str, bool]:
        started = asyncio.Event()

        async def forever() -> str:
            started.set()
            await asyncio.Event().wait()
            return "never"

        async def quick() -> str:
            return "second"

        leader = asyncio.create_task(flights.arun("k", forever))
        await started.wait()
        follower = asyncio.create_task(flights.arun("k", quick))
        while flights.waiting("k") != 1:
            await asyncio.sleep(0)
        leader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await leader
        return await follower

    assert asyncio.run(main()) == ("second", True)


def test_a_call_from_inside_its_own_leader_goes_alone() -> None:
    flights = Flights()

    def outer() -> str:
        inner, led = flights.run("k", lambda: "inner")
        assert led
        return inner + "+outer"

    assert flights.run("k", outer) == ("inner+outer", True)


def test_a_sync_call_in_the_loop_of_a_leading_task_goes_alone() -> None:
    flights = Flights()

    async def main() -> tuple[str, bool]:
        started = asyncio.Event()
        release = asyncio.Event()

        async def held() -> str:
            started.set()
            await release.wait()
            return "task"

        task = asyncio.create_task(flights.arun("k", held))
        await started.wait()
        alone = flights.run("k", lambda: "sync")  # would block the loop forever if it waited
        release.set()
        assert await task == ("task", True)
        return alone

    assert asyncio.run(main()) == ("sync", True)


def test_without_a_cache_nothing_is_merged() -> None:
    calls: list[int] = []
    lm = sio.LM(
        "openai/test",
        transport=MockTransport(lambda r: calls.append(1) or "x"),  # type: ignore[func-returns-value]
        cache=False,
    )
    for _ in range(3):
        lm(ask("same"))
    assert len(calls) == 3
