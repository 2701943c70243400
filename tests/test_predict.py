"""Predict and Prediction without a network: FakeLM does the talking."""

from __future__ import annotations

import io

import pytest

import structio as sio
from structio._util.progress import Progress

QA = sio.Signature("question -> answer: int")


def test_prediction_access() -> None:
    pred = sio.Predict(QA, lm=sio.FakeLM([{"answer": 4}]))(question="2+2?")
    assert pred.answer == 4
    assert pred["answer"] == 4
    assert dict(pred) == {"answer": 4}
    assert pred == {"answer": 4}
    assert pred.to_dict() == {"answer": 4}
    assert repr(pred) == "Prediction(answer=4)"
    assert pred.completions == [{"answer": 4}]
    with pytest.raises(AttributeError, match="no field 'answr'; its fields: answer"):
        _ = pred.answr
    with pytest.raises(AttributeError, match="read-only"):
        pred.answer = 5


def test_demos_and_lm_kwargs_reach_the_model() -> None:
    lm = sio.FakeLM([{"answer": 4}])
    demos = [{"question": "1+1?", "answer": 2}]
    sio.Predict(QA, lm=lm, demos=demos, temperature=0.3)(question="2+2?")
    call = lm.calls[0]
    assert call.params == {"temperature": 0.3}
    assert [m["role"] for m in call.messages] == ["system", "user", "assistant", "user"]
    assert call.messages[2]["content"].startswith("[[ ## answer ## ]]\n2")


def test_inputs_are_checked() -> None:
    predict = sio.Predict(QA, lm=sio.FakeLM([]))
    with pytest.raises(sio.FormatError, match="`questoin` is not an input"):
        predict(questoin="x")


def test_input_names_that_clash_with_call_options() -> None:
    with pytest.raises(sio.ConfigurationError, match="config"):
        sio.Predict("config -> answer")


def test_batch_validates_its_arguments() -> None:
    predict = sio.Predict(QA, lm=sio.FakeLM([]))
    with pytest.raises(sio.ConfigurationError, match="max_concurrency"):
        predict.batch([{"question": "q"}], max_concurrency=0)
    with pytest.raises(sio.ConfigurationError, match="batch item 0 must be a dict"):
        predict.batch(["q"])  # type: ignore[list-item]


def test_batch_of_nothing() -> None:
    assert sio.Predict(QA, lm=sio.FakeLM([])).batch([]) == []


def test_progress_bar_only_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    bar = Progress(4, label="QA", stream=screen)
    for failed in (False, True, False, False):
        bar.advance(failed=failed)
    bar.close()
    assert "QA 4/4 [########################]" in screen.getvalue()
    assert "1 failed" in screen.getvalue()
    log = io.StringIO()
    quiet = Progress(4, stream=log)
    quiet.advance()
    quiet.close()
    assert log.getvalue() == ""


def test_adapter_result_cost_and_usage() -> None:
    first = sio.LMResponse((sio.Completion("x"),), "m", sio.Usage(3, 1, 0), cost=0.25)
    second = sio.LMResponse((sio.Completion("y"),), "m", sio.Usage(2, 2, 1), cost=0.5)
    result = sio.AdapterResult([{"a": 1}], "json_request", [first, second])
    assert result.usage == sio.Usage(5, 3, 1)
    assert result.cost == 0.75
    unknown = sio.AdapterResult([{"a": 1}], "chat", [sio.LMResponse((), "m", cost=None)])
    assert unknown.cost is None
