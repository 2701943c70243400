"""Single flight: identical requests in flight at once in this process are made once.

While one call (the *leader*) is making a request for a key, another call with the same key
(a *waiter*) waits for it and gets the same value, or the same failure, instead of paying
for a second request. Threads and asyncio tasks alike: a waiting task awaits a future, so
the event loop goes on; a waiting thread waits on an event.

The rules:

- A leader that fails with an `Exception` fails every waiter: each raises its own copy of
  the error (``raise copy from error``), so no two threads share one traceback.
- A leader that is stopped before it ends (``KeyboardInterrupt``, a cancelled task: any
  `BaseException` that is not an `Exception`) leaves its waiters free: each tries again,
  and one of them becomes the leader. No waiter waits for a leader that will never end.
- A call never waits for a leader that runs in its own thread (a sync call inside an event
  loop while a task of that loop leads, a call made again from inside the leader): it
  could never end, since the leader cannot go on while it waits. Such a call makes its own
  request, as it would without single flight.

`Flights` are kept per owner (`flights_for`, the LM uses one per `ResponseCache`): only a
request whose answer would be cached is merged, since its key is the cache key.
"""

from __future__ import annotations

import contextlib
import copy
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    import asyncio

__all__ = ["Flights", "flights_for"]

_T = TypeVar("_T")


class _Flight(Generic[_T]):
    """One request in flight: who leads it, and its outcome once it ends."""

    def __init__(self, task: object | None) -> None:
        self.thread = threading.get_ident()
        self.task = task  # the leading asyncio task, or None for a thread
        self.done = threading.Event()
        self.value: _T | None = None
        self.error: BaseException | None = None
        self.abandoned = False
        self.followers = 0  # calls that joined it to wait (for `Flights.waiting`)
        # Async waiters: their loop and the future to resolve there when the flight ends.
        self.waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def outcome(self) -> _T:
        """The leader's value, or a copy of its error raised."""
        error = self.error
        if error is None:
            return self.value  # type: ignore[return-value]
        try:
            twin = copy.copy(error)
        except Exception:  # an exception that does not copy: the leader's own, shared
            raise error from None
        raise twin.with_traceback(None) from error


class Flights:
    """The requests in flight by key, and the calls that wait for them (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flights: dict[str, _Flight[Any]] = {}

    def __len__(self) -> int:
        """How many keys are in flight now."""
        with self._lock:
            return len(self._flights)

    def waiting(self, key: str) -> int:
        """How many calls have joined the flight for ``key`` to wait (0 if none is in flight)."""
        with self._lock:
            flight = self._flights.get(key)
            return flight.followers if flight is not None else 0

    def _join(self, key: str, task: object | None) -> tuple[_Flight[Any] | None, bool]:
        """The flight for ``key`` and whether this call leads it (None: go alone)."""
        with self._lock:
            flight = self._flights.get(key)
            if flight is None:
                flight = self._flights[key] = _Flight(task)
                return flight, True
            mine = flight.thread == threading.get_ident()
            if mine and (task is None or flight.task is None or flight.task is task):
                return None, False  # the leader cannot end while this call waits for it
            flight.followers += 1
            return flight, False

    def _land(self, key: str, flight: _Flight[Any]) -> None:
        """End ``flight``: forget its key, then wake every waiter."""
        with self._lock:
            if self._flights.get(key) is flight:
                del self._flights[key]
            waiters, flight.waiters = flight.waiters, []
            flight.done.set()
        for loop, future in waiters:
            # A loop closed meanwhile has no one left to wake.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_resolve, future)

    @staticmethod
    def _end(flight: _Flight[Any], error: BaseException) -> None:
        if isinstance(error, Exception):
            flight.error = error
        else:  # stopped, not failed: the waiters try again
            flight.abandoned = True

    def run(self, key: str, work: Callable[[], _T]) -> tuple[_T, bool]:
        """``work()``, or the value of the call already doing it for ``key``.

        Args:
            key: What the work is for: equal keys, equal work.
            work: Makes the request; run by the leader only.

        Returns:
            The value of ``work``, and whether this call ran it (``False``: the value is
            another call's).
        """
        while True:
            flight, leader = self._join(key, None)
            if flight is None:
                return work(), True
            if leader:
                try:
                    value = work()
                except BaseException as error:
                    self._end(flight, error)
                    raise
                else:
                    flight.value = value
                    return value, True
                finally:
                    self._land(key, flight)
            flight.done.wait()
            if not flight.abandoned:
                return flight.outcome(), False

    async def arun(self, key: str, work: Callable[[], Awaitable[_T]]) -> tuple[_T, bool]:
        """Async form of `run`: a waiting task awaits, never blocking its event loop."""
        import asyncio

        task = asyncio.current_task()
        while True:
            flight, leader = self._join(key, task)
            if flight is None:
                return await work(), True
            if leader:
                try:
                    value = await work()
                except BaseException as error:
                    self._end(flight, error)
                    raise
                else:
                    flight.value = value
                    return value, True
                finally:
                    self._land(key, flight)
            loop = asyncio.get_running_loop()
            future: asyncio.Future[None] = loop.create_future()
            with self._lock:
                ended = flight.done.is_set()
                if not ended:
                    flight.waiters.append((loop, future))
            if not ended:
                await future
            if not flight.abandoned:
                return flight.outcome(), False


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():  # a waiter cancelled meanwhile has its own outcome
        future.set_result(None)


_OWNED: weakref.WeakKeyDictionary[Any, Flights] = weakref.WeakKeyDictionary()
_OWNED_LOCK = threading.Lock()


def flights_for(owner: object) -> Flights:
    """The `Flights` of ``owner`` (made on first use, forgotten with it)."""
    with _OWNED_LOCK:
        flights = _OWNED.get(owner)
        if flights is None:
            flights = _OWNED[owner] = Flights()
        return flights
