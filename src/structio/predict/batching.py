"""Many calls of one `Predict`: in threads (`batch`) or tasks (`abatch`), in input order."""

from __future__ import annotations

import contextvars
from collections.abc import (
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from typing import Any, Protocol

from structio._util.progress import Progress
from structio.exceptions import (
    BatchError,
    ConfigurationError,
    UsageError,
)
from structio.predict.inputs import CALL_OPTIONS, not_a_dict
from structio.predict.prediction import Prediction
from structio.settings import current_settings
from structio.signatures.signature import (
    Signature,
)


class Caller(Protocol):
    """What a batch calls (`Predict`, without importing it: it imports this)."""

    signature: type[Signature]

    def __call__(self, example: Mapping[str, Any] | None = None, /, **kwargs: Any) -> Prediction:
        """One call."""

    async def acall(self, example: Mapping[str, Any] | None = None, /, **kwargs: Any) -> Prediction:
        """One async call."""


__all__ = ["arun_batch", "run_batch"]


_PENDING: Any = object()
# How many items `Predict.batch` reads ahead of their results, per call allowed at once:
# the second one waits in the pool's queue, so a worker never idles while the next item
# is read.
_AHEAD_PER_CALL = 2


def _check_batch(inputs: Iterable[Mapping[str, Any]], max_concurrency: int) -> int | None:
    """Check what can be checked before any call; the number of items, if known.

    A list or tuple is checked item by item here (it costs no copy); other iterables are
    checked as they are read, by `_checked`.
    """
    if (
        isinstance(max_concurrency, bool)
        or not isinstance(max_concurrency, int)
        or max_concurrency < 1
    ):
        raise ConfigurationError(f"max_concurrency must be a positive int, not {max_concurrency!r}")
    if isinstance(inputs, Mapping):
        raise ConfigurationError(
            "batch takes one dict of inputs per call (a list of dicts), not a single dict"
        )
    if isinstance(inputs, Sequence):
        for index, item in enumerate(inputs):
            if not isinstance(item, Mapping):
                raise not_a_dict(index, item)
    try:
        return len(inputs)  # type: ignore[arg-type]
    except TypeError:
        return None


def _checked(
    inputs: Iterable[Mapping[str, Any]],
) -> Iterator[Mapping[str, Any] | ConfigurationError]:
    """The items of ``inputs``, read lazily; one that is not a dict as the error it is."""
    for index, item in enumerate(inputs):
        yield item if isinstance(item, Mapping) else not_a_dict(index, item)


def _finish_batch(
    results: list[Prediction | BaseException], return_exceptions: bool
) -> list[Prediction | BaseException]:
    if not return_exceptions and any(isinstance(r, BaseException) for r in results):
        raise BatchError(results)
    return results


# DSPy's keywords of `Module.batch` that have no counterpart of the same name here.
_DSPY_BATCH_KEYWORDS = {
    "disable_progress_bar": "use progress=False",
    "max_errors": (
        "every item runs; a failed one holds its exception in its place "
        "(return_exceptions=False raises a BatchError at the end instead)"
    ),
    "return_failed_examples": "a failed item holds its exception in its place in the results",
    "provide_traceback": "a failed item holds its exception, traceback included",
    "timeout": "set timeout= on the LM",
}


def _concurrency(max_concurrency: int | None, num_threads: int | None) -> int:
    """How many calls at once: either name of the setting, else the configured `num_threads`.

    ``num_threads`` is DSPy's setting, set with `configure` or `context` (8 by default).
    """
    if max_concurrency is not None and num_threads is not None:
        raise UsageError(
            "batch got both max_concurrency and num_threads, which are one setting (num_threads "
            "is DSPy's name); pass only one"
        )
    chosen = max_concurrency if max_concurrency is not None else num_threads
    return current_settings().num_threads if chosen is None else chosen


def _check_call_options(signature: type[Signature], options: Mapping[str, Any], what: str) -> None:
    """Refuse, before any call, a keyword that is not a call option.

    Anything else would reach every call as an input and fail each item the same way.
    """
    for name in options:
        if name in CALL_OPTIONS:
            continue
        if name in signature.input_fields:
            hint = f"`{name}` is an input: put it in each item's dict"
        else:
            hint = _DSPY_BATCH_KEYWORDS.get(name, "")
        accepted = ", ".join(
            ["max_concurrency", "num_threads", "progress", "return_exceptions", *CALL_OPTIONS]
        )
        raise UsageError(
            f"Predict.{what}() got an unexpected keyword argument {name!r}"
            f"{f' ({hint})' if hint else ''}; it takes {accepted}"
        )


def run_batch(
    predict: Caller,
    inputs: Iterable[Mapping[str, Any]],
    max_concurrency: int | None,
    num_threads: int | None,
    progress: bool,
    return_exceptions: bool,
    call_options: Mapping[str, Any],
) -> list[Prediction | BaseException]:
    """`Predict.batch` (see it)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    max_concurrency = _concurrency(max_concurrency, num_threads)
    _check_call_options(predict.signature, call_options, "batch")
    total = _check_batch(inputs, max_concurrency)
    bar = Progress(total, label=predict.signature.__name__, enabled=progress)
    results: list[Prediction | BaseException] = []
    # A slot is taken before an item is read and given back once its result is stored:
    # this bounds the items read ahead, and keeps the pool's queue short, without
    # holding a future per item.
    slots = threading.Semaphore(_AHEAD_PER_CALL * max_concurrency)
    fatal: list[BaseException] = []

    def run(index: int, item: Mapping[str, Any] | ConfigurationError) -> None:
        try:
            if isinstance(item, ConfigurationError):
                raise item
            results[index] = predict(item, **call_options)
            bar.advance()
        except Exception as exc:
            results[index] = exc
            bar.advance(failed=True)
        except BaseException as exc:  # SystemExit and the like from user code end the batch
            fatal.append(exc)
        finally:
            slots.release()

    workers = min(max_concurrency, total) if total else max_concurrency
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        items = enumerate(_checked(inputs))
        while True:
            slots.acquire()
            if fatal:
                raise fatal[0]
            try:
                index, item = next(items)
            except StopIteration:
                break
            results.append(_PENDING)
            # Each call runs in a copy of the caller's context, so structio.context()
            # settings apply inside the worker threads too.
            pool.submit(contextvars.copy_context().run, run, index, item)
    except BaseException:
        # Items read but not started are dropped: the batch is ending with an error.
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)
        bar.close()
    if fatal:  # the last calls ended it
        raise fatal[0]
    return _finish_batch(results, return_exceptions)


async def arun_batch(
    predict: Caller,
    inputs: Iterable[Mapping[str, Any]],
    max_concurrency: int | None,
    num_threads: int | None,
    progress: bool,
    return_exceptions: bool,
    call_options: Mapping[str, Any],
) -> list[Prediction | BaseException]:
    """`Predict.abatch` (see it)."""
    import asyncio

    max_concurrency = _concurrency(max_concurrency, num_threads)
    _check_call_options(predict.signature, call_options, "abatch")
    total = _check_batch(inputs, max_concurrency)
    bar = Progress(total, label=predict.signature.__name__, enabled=progress)
    results: list[Prediction | BaseException] = []
    items = enumerate(_checked(inputs))

    # A fixed set of workers, each reading the next item when its call is done: no task
    # per item, and never more than max_concurrency items read ahead.
    async def worker() -> None:
        for index, item in items:
            # Reading and appending happen with no await between them, so the item's
            # place is its index.
            results.append(_PENDING)
            try:
                if isinstance(item, ConfigurationError):
                    raise item
                # A task of its own gives each call its own copy of the context, as
                # `batch` does.
                results[index] = await asyncio.ensure_future(predict.acall(item, **call_options))
            except Exception as exc:
                results[index] = exc
                bar.advance(failed=True)
            else:
                bar.advance()

    count = min(max_concurrency, total) if total else max_concurrency
    tasks = [asyncio.ensure_future(worker()) for _ in range(count)]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        # gather leaves the other workers running when one raises: stop them too.
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        bar.close()
    return _finish_batch(results, return_exceptions)
