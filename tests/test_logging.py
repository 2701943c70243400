"""The ``structio`` logger: re-asks, the fallback request, truncation and unknown models are
logged; a program that configures no logging sees nothing of it."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

import structio as sio
from structio.lm import models

ANSWER_AS_WORDS = "[[ ## answer ## ]]\nfour\n\n[[ ## completed ## ]]"


class QA(sio.Signature):
    """Answer the question."""

    question: str = sio.InputField()
    answer: int = sio.OutputField()


class Chat(sio.Signature):
    """Answer."""

    history: sio.History = sio.InputField()
    question: str = sio.InputField()
    answer: int = sio.OutputField()


TURNS = [{"question": f"turn {i}: " + "word " * 60, "answer": i} for i in range(8)]


def structio_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "structio"]


@pytest.fixture
def log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    with caplog.at_level(logging.DEBUG, logger="structio"):
        yield caplog


def test_a_reask_is_logged_with_the_field_errors(log: pytest.LogCaptureFixture) -> None:
    lm = sio.FakeLM([ANSWER_AS_WORDS, {"answer": 4}])
    assert sio.Predict(QA, lm=lm, max_retries=1)(question="2+2?").answer == 4
    [reask] = [r for r in structio_records(log) if "re-ask" in r.getMessage()]
    assert reask.levelno == logging.INFO
    message = reask.getMessage()
    assert message.startswith("QA: re-ask 1 with ChatAdapter: the answer could not be used")
    assert "answer: " in message  # the field, then why it is invalid


def test_the_fallback_request_is_a_warning(log: pytest.LogCaptureFixture) -> None:
    lm = sio.FakeLM([ANSWER_AS_WORDS, {"answer": 4}])
    prediction = sio.Predict(QA, lm=lm)(question="2+2?")
    assert prediction.route == "json_request"
    [warning] = [r for r in structio_records(log) if r.levelno == logging.WARNING]
    message = warning.getMessage()
    assert message.startswith("QA: the completion could not be read as ChatAdapter output")
    assert "asking again with JSONAdapter (a second request)" in message
    assert lm.call_count == 2


def test_a_successful_call_logs_nothing(log: pytest.LogCaptureFixture) -> None:
    sio.Predict(QA, lm=sio.FakeLM([{"answer": 4}]))(question="2+2?")
    assert structio_records(log) == []


def test_truncation_to_max_prompt_tokens_says_what_was_cut(
    log: pytest.LogCaptureFixture,
) -> None:
    predict = sio.Predict(Chat, lm=sio.FakeLM([{"answer": 1}]), max_prompt_tokens=600)
    prediction = predict(history=sio.History(messages=TURNS), question="q")
    truncation = prediction.truncation
    assert truncation is not None
    [record] = [r for r in structio_records(log) if "prompt cut" in r.getMessage()]
    assert record.levelno == logging.INFO
    assert record.getMessage() == (
        f"Chat: prompt cut from {truncation.tokens_before} to {truncation.tokens_after} tokens "
        f"to fit max_prompt_tokens=600: dropped {', '.join(truncation.dropped)}"
    )
    assert "history_1_user" in truncation.dropped


class Windowed(sio.BaseLM):
    """Refuses a prompt over its window, as a provider does."""

    def __init__(self) -> None:
        super().__init__("windowed")

    @property
    def max_input_tokens(self) -> int:
        return 500

    def _complete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> sio.LMResponse:
        if sum(len(str(m["content"])) for m in messages) > 2500:
            raise sio.ContextWindowExceededError("too long", model=self.model)
        text = "[[ ## answer ## ]]\n1\n\n[[ ## completed ## ]]"
        return sio.LMResponse((sio.Completion(text, "stop"),), self.model)


def test_truncation_to_the_context_window_is_a_warning(log: pytest.LogCaptureFixture) -> None:
    prediction = sio.Predict(Chat, lm=Windowed())(history=sio.History(messages=TURNS), question="q")
    assert prediction.truncation is not None
    [record] = [r for r in structio_records(log) if "prompt cut" in r.getMessage()]
    assert record.levelno == logging.WARNING
    assert "to fit the model's context window (a budget of 450 tokens)" in record.getMessage()


@pytest.fixture
def fresh_models(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Model lookups and 'already logged' forgotten, before and after."""
    monkeypatch.setattr(models, "_LOGGED", set())
    models.model_info.cache_clear()
    yield
    models.model_info.cache_clear()


@pytest.mark.usefixtures("fresh_models")
def test_an_unknown_model_is_logged_once(log: pytest.LogCaptureFixture) -> None:
    model = "openai/a-model-no-map-knows"
    assert models.model_info(model) is None
    models.model_info.cache_clear()  # once per model, not once per cached lookup
    assert models.cost_of(model, sio.Usage(prompt_tokens=10)) is None
    assert sio.LM(model, api_base="http://127.0.0.1:9/v1").max_input_tokens is None
    [record] = structio_records(log)
    assert record.levelno == logging.INFO
    assert record.getMessage().startswith(
        "model 'openai/a-model-no-map-knows' is not in litellm's model map: its context "
        "window and prices are unknown"
    )
    assert "context_window=N" in record.getMessage()  # what to do about the window
    assert models.model_info("gpt-4o-mini") is not None
    assert len(structio_records(log)) == 1  # a known model is not logged


@pytest.mark.usefixtures("fresh_models")
def test_a_model_without_prices_is_logged_once(
    log: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(models, "_MAP", {"priceless": {"max_input_tokens": 1000}})
    assert models.model_info("priceless") is not None
    for _ in range(2):
        assert models.cost_of("priceless", sio.Usage(prompt_tokens=10)) is None
    [record] = structio_records(log)
    assert record.getMessage() == (
        "litellm's model map has no price for model 'priceless': its cost is None"
    )


# A call that logs at every level: the fallback request (WARNING), a truncation (INFO),
# an unknown model (INFO).
CALL = textwrap.dedent(
    """
    import sys
    import structio as sio
    from structio.lm.models import cost_of

    if sys.argv[1:] == ["configured"]:
        import logging
        logging.basicConfig(level=logging.INFO)

    class QA(sio.Signature):
        '''Answer the question.'''
        history: sio.History = sio.InputField()
        question: str = sio.InputField()
        answer: int = sio.OutputField()

    turns = [{"question": "word " * 60, "answer": i} for i in range(8)]
    lm = sio.FakeLM([ANSWER, {"answer": 4}])
    prediction = sio.Predict(QA, lm=lm, max_prompt_tokens=600)(
        history=sio.History(messages=turns), question="2+2?"
    )
    cost_of("openai/a-model-no-map-knows", sio.Usage())
    print(prediction.answer, prediction.route, prediction.truncation is not None)
    """
).replace("ANSWER", repr(ANSWER_AS_WORDS))


def run_call(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CALL, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "PATH": ""},
    )


def test_nothing_is_printed_without_a_logging_configuration() -> None:
    done = run_call()
    assert done.stdout == "4 json_request True\n"
    assert done.stderr == ""


def test_a_configured_program_sees_each_line() -> None:
    # The same call as above: what the quiet run would have printed without the NullHandler.
    done = run_call("configured")
    assert done.stdout == "4 json_request True\n"
    lines = done.stderr.splitlines()
    assert any(line.startswith("WARNING:structio:QA: the completion could not") for line in lines)
    assert any(line.startswith("INFO:structio:QA: prompt cut from") for line in lines)
    assert any("a-model-no-map-knows" in line for line in lines)


def test_dspys_disable_and_enable_logging(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("structio")
    try:
        sio.disable_logging()
        with caplog.at_level(logging.INFO, logger="structio"):
            log.warning("hidden")
        assert "hidden" not in caplog.text
    finally:
        sio.enable_logging()
    with caplog.at_level(logging.INFO, logger="structio"):
        log.warning("shown")
    assert "shown" in caplog.text
    with pytest.raises(AttributeError, match=r"getLogger\('LiteLLM'\)"):
        sio.enable_litellm_logging()  # type: ignore[attr-defined]
