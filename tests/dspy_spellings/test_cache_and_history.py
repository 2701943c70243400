"""DSPy's ``dspy.configure_cache``, ``LM(..., cache=False)`` and history spellings."""

from __future__ import annotations

import io
import math
from pathlib import Path

import pytest

import structio as dspy
from structio.lm import MockTransport
from structio.lm.cache import DATABASE_NAME
from structio.lm.mock import MockRequest

MESSAGES = [{"role": "user", "content": "Capital of France?"}]


def counting_lm(**settings: object) -> tuple[dspy.LM, list[str]]:
    """An LM over a mock transport, and the list of requests it received."""
    received: list[str] = []

    def answer(request: MockRequest) -> str:
        received.append(request.text)
        return "Paris"

    return dspy.LM("openai/test", transport=MockTransport(answer), **settings), received


def test_configure_cache_both_off_makes_every_call_a_request(isolated: Path) -> None:
    dspy.configure_cache(
        enable_disk_cache=False,
        enable_memory_cache=False,
    )
    lm, received = counting_lm()
    lm(MESSAGES)
    lm(MESSAGES)
    assert len(received) == 2
    assert not isolated.exists()  # nothing written to the default cache directory


def test_memory_only_answers_again_from_memory_and_writes_nothing(isolated: Path) -> None:
    lm, received = counting_lm()  # made before: it follows the configured cache too
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=True)
    assert lm(MESSAGES).text == "Paris"
    assert lm(MESSAGES).cached
    assert len(received) == 1
    assert not isolated.exists()


def test_a_disk_cache_in_the_given_directory_shared_by_new_lms(tmp_path: Path) -> None:
    directory = tmp_path / "my-cache"
    dspy.configure_cache(
        enable_disk_cache=True,
        enable_memory_cache=False,
        disk_cache_dir=str(directory),
        memory_max_entries=math.inf,
    )
    first, received = counting_lm()
    first(MESSAGES)
    assert (directory / DATABASE_NAME).is_file()
    second, received_again = counting_lm()
    assert second(MESSAGES).cached  # read from the disk: no memory copy is kept
    assert (len(received), len(received_again)) == (1, 0)


def test_configure_cache_with_no_arguments_restores_the_default(isolated: Path) -> None:
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    dspy.configure_cache()
    lm, received = counting_lm()
    lm(MESSAGES)
    assert lm(MESSAGES).cached
    assert len(received) == 1
    assert (isolated / "responses" / DATABASE_NAME).is_file()


def test_pickle_options_are_accepted_and_a_size_limit_refused() -> None:
    dspy.configure_cache(restrict_pickle=True, safe_types=[dict])  # nothing is unpickled
    with pytest.raises(dspy.ConfigurationError, match="no size limit"):
        dspy.configure_cache(enable_disk_cache=True, disk_size_limit_bytes=10**9)
    with pytest.raises(dspy.ConfigurationError, match="memory_max_entries"):
        dspy.configure_cache(memory_max_entries=-1)


def test_an_lm_with_cache_false_always_asks() -> None:
    lm, received = counting_lm(cache=False)
    lm(MESSAGES)
    assert not lm(MESSAGES).cached
    assert len(received) == 2


def test_inspect_history_and_history_entries_as_dspys() -> None:
    lm = dspy.FakeLM([{"answer": "Paris"}])
    dspy.configure(lm=lm)
    dspy.Predict("question -> answer")(question="Capital of France?")
    buffer = io.StringIO()
    dspy.inspect_history(n=1, file=buffer)
    shown = buffer.getvalue()
    assert "Capital of France?" in shown
    assert "Paris" in shown
    entry = lm.history[-1]
    for key in ("prompt", "messages", "kwargs", "response", "outputs", "usage", "cost"):
        assert key in entry, key
    for key in ("timestamp", "uuid", "model", "response_model", "model_type"):
        assert key in entry, key
    assert entry["messages"][-1]["content"].count("Capital of France?") == 1
    assert "Paris" in entry["outputs"][0]
