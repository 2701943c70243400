"""The real local model, once per adapter (opt-in: ``pytest -m real_model``).

Qwen2.5-Coder-1.5B-Instruct on llama-cpp-python's server (``bash
benchmarks/real_model_setup.sh``), addressed by ``STRUCTIO_REAL_MODEL`` (its API base,
e.g. ``http://127.0.0.1:8765/v1``). Without it these tests are skipped with that reason:
each call costs seconds to minutes of CPU, so CI never runs them. `benchmarks/real_model.py`
measures the same model over 60 inputs.
"""

from __future__ import annotations

import os
import urllib.request
from typing import Literal

import pytest

import structio as sio

pytestmark = pytest.mark.real_model

BASE = os.environ.get("STRUCTIO_REAL_MODEL", "")


def _absent() -> str | None:
    if not BASE:
        return (
            "no real model: run `bash benchmarks/real_model_setup.sh`, then set "
            "STRUCTIO_REAL_MODEL=http://127.0.0.1:8765/v1"
        )
    try:
        with urllib.request.urlopen(BASE.rstrip("/") + "/models", timeout=5):  # noqa: S310
            return None
    except OSError as error:
        return f"the real model at {BASE} does not answer: {error}"


class Sentiment(sio.Signature):
    """Classify the sentiment of a product review."""

    review: str = sio.InputField()
    sentiment: Literal["positive", "negative"] = sio.OutputField()


@pytest.mark.skipif(_absent() is not None, reason=str(_absent()))
@pytest.mark.parametrize(
    "adapter",
    [sio.ChatAdapter(), sio.JSONAdapter(), sio.XMLAdapter(), sio.CompactAdapter()],
    ids=lambda a: type(a).__name__,
)
def test_the_real_model_answers_through_each_adapter(adapter: sio.Adapter) -> None:
    lm = sio.LM(
        "openai/qwen2.5-coder-1.5b-instruct",
        api_base=BASE,
        api_key="unused",
        server="llamacpp",
        temperature=0,
        max_tokens=200,
        cache=False,
        timeout=900,
    )
    predict = sio.Predict(Sentiment, lm=lm, adapter=adapter)
    pred = predict(review="It broke after two days and the seller never answered.")
    assert pred.sentiment == "negative"
    assert len(lm.history) == 1  # one request: no re-ask, no fallback
    sent = lm.history[-1].params
    constrained = adapter.request_params(Sentiment, {}, lm)
    for key, value in constrained.items():  # what the adapter constrains with was sent
        assert sent[key] == value
