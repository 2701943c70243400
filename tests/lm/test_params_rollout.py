"""DSPy's ``rollout_id``: a key of the response cache, never a field of the request."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import structio as dspy
from structio.lm.cache import ResponseCache
from tests.wire.server import OpenAIServer, Reply


def _lm(server: OpenAIServer, tmp_path: Path, **params: object) -> dspy.LM:
    cache = ResponseCache(tmp_path / "cache")
    return dspy.LM(
        "openai/gpt-4o-mini", api_base=server.base_url, api_key="k", cache=cache, **params
    )


def test_rollout_id_is_never_sent(server: OpenAIServer, tmp_path: Path) -> None:
    server.default = Reply(content="hi")
    lm = _lm(server, tmp_path, rollout_id=1, temperature=1.0)
    lm("q")
    lm("q", rollout_id=2)
    assert len(server.requests) == 2
    for request in server.requests:
        assert "rollout_id" not in request.body
        assert request.body["temperature"] == 1.0


def test_each_rollout_id_is_its_own_cache_entry(server: OpenAIServer, tmp_path: Path) -> None:
    server.default = Reply(content="hi")
    lm = _lm(server, tmp_path, temperature=1.0)
    lm("q", rollout_id=1)
    lm("q", rollout_id=1)
    assert len(server.requests) == 1  # the same id: the cached answer
    lm("q", rollout_id=2)
    assert len(server.requests) == 2  # another id: another request
    lm("q")
    assert len(server.requests) == 3  # no id is an entry of its own too
    lm("q", rollout_id=None)
    assert len(server.requests) == 3  # None is no id, as in DSPy


def test_rollout_id_in_a_predict_config(server: OpenAIServer, tmp_path: Path) -> None:
    """As DSPy's docs write it: ``predict(..., config={"rollout_id": 5, ...})``."""
    server.default = Reply(content="[[ ## answer ## ]]\n53\n\n[[ ## completed ## ]]")
    dspy.configure(lm=_lm(server, tmp_path))
    predict = dspy.Predict("question -> answer")
    first = predict(question="What is 1 + 52?", config={"rollout_id": 5, "temperature": 1.0})
    predict(question="What is 1 + 52?", config={"rollout_id": 5, "temperature": 1.0})
    predict(question="What is 1 + 52?", config={"rollout_id": 6, "temperature": 1.0})
    assert first.answer == "53"
    assert len(server.requests) == 2
    assert all("rollout_id" not in request.body for request in server.requests)


def test_rollout_id_at_temperature_zero_is_noted_once(
    server: OpenAIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server.default = Reply(content="hi")
    lm = _lm(server, tmp_path, temperature=0)
    with caplog.at_level(logging.WARNING, logger="structio"):
        lm("q", rollout_id=1)
        lm("q", rollout_id=2)
    noted = [r for r in caplog.records if "rollout_id" in r.getMessage()]
    assert len(noted) == 1
    assert "temperature=0" in noted[0].getMessage()
