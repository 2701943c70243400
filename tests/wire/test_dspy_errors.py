"""DSPy's error classes catch what they caught in DSPy: the loopback server's failures."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import structio as dspy
from tests.wire.server import OpenAIServer, Reply

MakeLM = Callable[..., dspy.LM]


@pytest.mark.parametrize(
    ("status", "name", "retryable"),
    [
        (401, "LMAuthError", False),
        (403, "LMAuthError", False),
        (402, "LMBillingError", False),
        (404, "LMUnsupportedModelError", False),
        (400, "LMInvalidRequestError", False),
        (429, "LMRateLimitError", True),
        (500, "LMServerError", True),
        (503, "LMServerError", True),
    ],
)
def test_a_failure_is_caught_by_dspys_class(
    server: OpenAIServer, make_lm: MakeLM, status: int, name: str, retryable: bool
) -> None:
    server.default = Reply(status=status, error_message="nope")
    lm = make_lm(num_retries=0)
    with pytest.raises(getattr(dspy, name)) as caught:
        lm("hi")
    assert isinstance(caught.value, (dspy.LMProviderError, dspy.DSPyError))
    assert dspy.is_retryable_lm_error(caught.value) is retryable


def test_a_refused_connection_is_a_transport_error(make_lm: MakeLM) -> None:
    lm = make_lm(api_base="http://127.0.0.1:9/v1", num_retries=0)
    with pytest.raises(dspy.LMTransportError) as caught:
        lm("hi")
    assert dspy.is_retryable_lm_error(caught.value)


def test_no_lm_configured_is_dspys_not_configured_error() -> None:
    with pytest.raises(dspy.LMNotConfiguredError, match="no LM to call"):
        dspy.Predict("question -> answer")(question="hi")
