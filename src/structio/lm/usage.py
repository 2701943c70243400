"""Tokens and cost of every model call made inside a block: `track_usage`.

``with structio.track_usage() as usage:`` gives a `UsageTracker` that every response of
every `BaseLM` made inside the block is added to: calls in the same thread or task, in the
asyncio tasks it starts, and in the threads that run a copy of its context (as
`Predict.batch` does). Cache hits count as calls with no tokens and no cost; a stream counts
once it has ended.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator
from typing import Any

from structio.lm.types import LMResponse, Usage

__all__ = ["UsageTracker", "record_usage", "track_usage"]

# The trackers in effect here, innermost last. A tuple, not a list: a task or a thread that
# copied the context shares the trackers (they are locked) but never the sequence, so a
# tracker opened in one task is never seen by another.
_ACTIVE: contextvars.ContextVar[tuple[UsageTracker, ...]] = contextvars.ContextVar(
    "structio_usage_trackers", default=()
)


class UsageTracker:
    """Token counts and cost of model calls, per model; thread-safe.

    `track_usage` makes one and adds every model response of its block to it. The totals
    are final once the block ends: a call still running in a thread or task started inside
    the block and ending after it is not added.

    Example:
        >>> import structio as sio
        >>> with sio.track_usage() as usage:                       # doctest: +SKIP
        ...     qa(question="Why is the sky blue?")
        >>> usage.total.total_tokens, usage.cost                    # doctest: +SKIP
        (412, 0.000187)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage: dict[str, Usage] = {}
        self._cost: dict[str, float | None] = {}
        self._calls: dict[str, int] = {}
        self._billed: dict[str, int] = {}  # calls that were not cache hits, per model
        self._cached = 0
        self._open = True

    def add(self, response: LMResponse, *, model: str | None = None) -> None:
        """Add one response: its tokens and cost, under ``model`` (else the response's model).

        Ignored once the tracker's `track_usage` block has ended.
        """
        name = model or response.model
        with self._lock:
            if not self._open:
                return
            before = self._usage.get(name)
            self._usage[name] = response.usage if before is None else before + response.usage
            cost = response.cost
            if name not in self._cost:
                self._cost[name] = None if cost is None else float(cost)
            else:
                known = self._cost[name]
                # One unpriced response makes the model's total unknown, not smaller.
                self._cost[name] = None if known is None or cost is None else known + cost
            self._calls[name] = self._calls.get(name, 0) + 1
            if response.cached:
                self._cached += 1
            else:
                self._billed[name] = self._billed.get(name, 0) + 1

    def close(self) -> None:
        """Stop adding responses: the totals are final (`track_usage` does this at its end)."""
        with self._lock:
            self._open = False

    @property
    def by_model(self) -> dict[str, Usage]:
        """Token counts per model string, in the order the models were first called."""
        with self._lock:
            return dict(self._usage)

    @property
    def cost_by_model(self) -> dict[str, float | None]:
        """Cost in USD per model string; ``None`` for a model whose price is not known."""
        with self._lock:
            return dict(self._cost)

    @property
    def calls_by_model(self) -> dict[str, int]:
        """How many responses came from each model (cache hits included)."""
        with self._lock:
            return dict(self._calls)

    @property
    def total(self) -> Usage:
        """Token counts of every call, all models together."""
        return sum(self.by_model.values(), Usage())

    @property
    def cost(self) -> float | None:
        """Cost in USD of every call; ``None`` if any call's price is not known.

        ``0.0`` when no call was made, or when every call was a cache hit.
        """
        costs = self.cost_by_model.values()
        if any(cost is None for cost in costs):
            return None
        return float(sum(cost or 0.0 for cost in costs))

    @property
    def calls(self) -> int:
        """How many model responses were added (cache hits included)."""
        with self._lock:
            return sum(self._calls.values())

    @property
    def cached_calls(self) -> int:
        """How many of the calls were served from the response cache."""
        with self._lock:
            return self._cached

    def get_total_tokens(self) -> dict[str, dict[str, Any]]:
        """Tokens per model in OpenAI's usage names, as DSPy's ``get_total_tokens()``.

        The shape of ``pred.get_lm_usage()``; as DSPy's, a model whose every call was a
        cache hit is left out.
        """
        with self._lock:
            return {
                name: usage.as_openai()
                for name, usage in self._usage.items()
                if self._billed.get(name)
            }

    def to_dict(self) -> dict[str, Any]:
        """The totals as JSON-compatible data: calls, cost, tokens, and the same per model."""
        with self._lock:
            models = {
                name: {
                    "calls": self._calls[name],
                    "cost": self._cost[name],
                    **_counts(usage),
                }
                for name, usage in self._usage.items()
            }
            cached = self._cached
            costs = list(self._cost.values())
            total = sum(self._usage.values(), Usage())
        return {
            "calls": sum(m["calls"] for m in models.values()),
            "cached_calls": cached,
            "cost": None if None in costs else float(sum(c or 0.0 for c in costs)),
            **_counts(total),
            "models": models,
        }

    def __repr__(self) -> str:
        total = self.total
        cost = self.cost
        spent = "unknown" if cost is None else f"${cost:.6f}"
        return (
            f"UsageTracker(calls={self.calls}, prompt_tokens={total.prompt_tokens}, "
            f"completion_tokens={total.completion_tokens}, cost={spent})"
        )


def _counts(usage: Usage) -> dict[str, int]:
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cached_tokens": usage.cached_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "total_tokens": usage.total_tokens,
    }


@contextlib.contextmanager
def track_usage() -> Iterator[UsageTracker]:
    """Add up the tokens and cost of every model call made inside a ``with`` block.

    Counted: calls in this thread or task, in the asyncio tasks started inside the block,
    and in threads that run a copy of its context (`Predict.batch` does;
    ``contextvars.copy_context().run`` for threads of your own). Blocks nest: each tracker
    sees every call made inside it. Cache hits count as calls with no tokens and zero cost.

    Example:
        >>> import structio as sio
        >>> with sio.track_usage() as usage:                       # doctest: +SKIP
        ...     qa.batch([{"question": q} for q in questions])
        >>> usage.by_model                                          # doctest: +SKIP
        {'openai/gpt-4o-mini': Usage(prompt_tokens=4120, completion_tokens=380, ...)}
    """
    tracker = UsageTracker()
    token = _ACTIVE.set((*_ACTIVE.get(), tracker))
    try:
        yield tracker
    finally:
        _ACTIVE.reset(token)
        tracker.close()


def record_usage(model: str, response: LMResponse) -> None:
    """Add a response to every tracker in effect here (`BaseLM` calls this for each one)."""
    trackers = _ACTIVE.get()
    if trackers:  # the usual case, no tracker: one context lookup
        for tracker in trackers:
            tracker.add(response, model=model)
