"""`asyncify`: a program made awaitable by running it in a worker thread, as DSPy's is.

The settings in effect where the awaitable is awaited (an open `structio.context`, the
`track_usage` blocks) are the ones the program sees in its thread: the call runs in a copy of
the caller's `contextvars` context. At most ``async_max_workers`` programs (a setting of
`structio.configure`, 8 by default) run at once in the whole process, whatever the event
loop; the others wait their turn. For a `Predict`, ``await predict.acall(...)`` is the native
way (no thread); `asyncify` is for any program, as DSPy's is.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from structio.settings import current_settings

__all__ = ["asyncify"]

R = TypeVar("R")

# One pool for every asyncified program, sized by the setting: DSPy's limit is one for the
# whole process too. Replaced (the old one left to finish its work) when the setting changes.
_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def _workers() -> concurrent.futures.ThreadPoolExecutor:
    """The pool of worker threads, as large as ``async_max_workers`` says now."""
    global _pool, _pool_size
    size = current_settings().async_max_workers
    with _pool_lock:
        if _pool is None or _pool_size != size:
            if _pool is not None:
                _pool.shutdown(wait=False)  # its running programs finish; it takes no more
            _pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=size, thread_name_prefix="structio-asyncify"
            )
            _pool_size = size
        return _pool


def asyncify(program: Callable[..., R]) -> Callable[..., Awaitable[R]]:
    """An async function that runs ``program`` in a worker thread: DSPy's ``dspy.asyncify``.

    Each call of the returned function runs ``program(*args, **kwargs)`` in a thread of a
    pool shared by every asyncified program, with the caller's settings and usage trackers
    (a copy of its `contextvars` context), and returns what the program returns or raises
    what it raises. Cancelling the await abandons the result; the thread runs the program
    to its end, as DSPy's does.

    Args:
        program: Any callable: a `Predict`, a prompt function, a function of your own.

    Returns:
        ``async def`` taking the program's arguments.

    Example:
        >>> import asyncio, structio as sio
        >>> qa = sio.asyncify(sio.Predict("question -> answer"))
        >>> with sio.context(lm=sio.FakeLM([{"answer": "4"}])):
        ...     asyncio.run(qa(question="2+2?")).answer
        '4'
    """

    async def run(*args: Any, **kwargs: Any) -> R:
        work = functools.partial(contextvars.copy_context().run, program, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(_workers(), work)

    return run
