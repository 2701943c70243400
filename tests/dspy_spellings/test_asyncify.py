"""DSPy's ``dspy.asyncify``, written as DSPy's documentation writes it."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

import structio as dspy
from tests.dspy_spellings.overlap import Overlap


def test_asyncify_a_program_as_dspys_cheatsheet() -> None:
    lm = dspy.FakeLM([{"reasoning": "a framework", "answer": "A framework"}])
    dspy.configure(lm=lm)
    dspy_program = dspy.ChainOfThought("question -> answer")
    dspy_program = dspy.asyncify(dspy_program)

    result = asyncio.run(dspy_program(question="What is DSPy"))
    assert result.answer == "A framework"
    assert len(lm.calls) == 1


def test_the_callers_context_and_usage_trackers_reach_the_thread() -> None:
    seen: list[Any] = []

    def program(x: int) -> int:
        seen.append((threading.current_thread().name, dspy.settings.lm, dspy.settings.num_threads))
        return x * 2

    inner = dspy.FakeLM([])
    run = dspy.asyncify(program)

    async def main() -> int:
        with dspy.context(lm=inner, num_threads=3):
            return await run(21)

    assert asyncio.run(main()) == 42
    thread, lm, threads = seen[0]
    assert thread != threading.current_thread().name  # it ran in a worker thread
    assert (lm, threads) == (inner, 3)

    qa = dspy.asyncify(dspy.Predict("question -> answer"))

    async def tracked() -> dspy.lm.UsageTracker:
        with dspy.track_usage() as usage, dspy.context(lm=dspy.FakeLM([{"answer": "4"}])):
            await qa(question="2+2?")
        return usage

    assert asyncio.run(tracked()).calls == 1


def test_async_max_workers_bounds_the_programs_running_at_once() -> None:
    overlap = Overlap(pairs=True)  # two at a time run together, in pairs

    def program(i: int) -> int:
        overlap()
        return i

    dspy.configure(async_max_workers=2)
    run = dspy.asyncify(program)

    async def main() -> list[int]:
        return list(await asyncio.gather(*(run(i) for i in range(6))))

    assert asyncio.run(main()) == list(range(6))
    assert overlap.most == 2


def test_an_error_of_the_program_is_raised_to_the_awaiter() -> None:
    def program() -> None:
        raise dspy.ConfigurationError("no model")

    with pytest.raises(dspy.ConfigurationError, match="no model"):
        asyncio.run(dspy.asyncify(program)())
