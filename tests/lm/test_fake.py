"""FakeLM: scripted replies for users' own tests."""

from __future__ import annotations

import asyncio

import pytest

import structio as sio
from structio.testing import DEFAULT_RECORD

QA = sio.Signature("question -> answer: int")


def test_scripted_strings_are_used_in_order_and_calls_recorded() -> None:
    lm = sio.FakeLM(["first", "second"])
    assert lm([{"role": "user", "content": "a"}]).text == "first"
    assert lm([{"role": "user", "content": "b"}], temperature=0).text == "second"
    assert [call.prompt for call in lm.calls] == ["a", "b"]
    assert lm.calls[1].params == {"temperature": 0}


def test_running_out_of_replies_is_a_clear_error() -> None:
    lm = sio.FakeLM(["only one"])
    lm([{"role": "user", "content": "a"}])
    with pytest.raises(sio.ConfigurationError, match="ran out of scripted replies: it was given 1"):
        lm([{"role": "user", "content": "b"}])


def test_dict_replies_follow_the_adapter_format() -> None:
    lm = sio.FakeLM([{"answer": 4}, {"answer": 5}])
    predict = sio.Predict(QA, lm=lm)
    assert predict(question="2+2?").answer == 4
    pred = predict(question="2+3?", adapter=sio.JSONAdapter())
    assert (pred.answer, pred.path) == (5, "json")
    assert (
        lm.calls[1].messages[-1]["content"].endswith("(must be formatted as a valid Python int).")
    )


def test_function_of_the_messages() -> None:
    def reply(messages: list[dict[str, str]]) -> str:
        question = messages[-1]["content"].split("\n")[1]
        return f"[[ ## answer ## ]]\n{len(question)}"

    predict = sio.Predict(QA, lm=sio.FakeLM(reply))
    assert predict(question="four").answer == 4
    assert predict(question="seven!").answer == 6


def test_choices_and_completions() -> None:
    lm = sio.FakeLM([["[[ ## answer ## ]]\n1", "[[ ## answer ## ]]\n2"], "[[ ## answer ## ]]\n3"])
    pred = sio.Predict(QA, lm=lm)(question="q", config={"n": 2})
    assert [c["answer"] for c in pred.completions] == [1, 2]
    repeated = sio.Predict(QA, lm=lm)(question="q", config={"n": 2})
    assert [c["answer"] for c in repeated.completions] == [3, 3]


def test_scripted_completion_with_finish_reason() -> None:
    lm = sio.FakeLM([sio.Completion("[[ ## answer ## ]]\n4", finish_reason="length")])
    response = lm([{"role": "user", "content": "q"}])
    assert response[0].truncated


def test_async_and_history() -> None:
    lm = sio.FakeLM(["x", "y"])
    assert asyncio.run(lm.acall([{"role": "user", "content": "q"}])).text == "x"
    lm([{"role": "user", "content": "r"}])
    assert [entry.response.text for entry in lm.history] == ["x", "y"]
    assert lm.history[0].response.usage == sio.Usage()


def test_the_record_of_calls_is_bounded() -> None:
    lm = sio.FakeLM(lambda messages: "ok", record=3)
    for i in range(5):
        lm([{"role": "user", "content": str(i)}])
    assert [call.prompt for call in lm.calls] == ["2", "3", "4"]
    assert (lm.calls[0].prompt, lm.calls[-1].prompt) == ("2", "4")
    assert lm.call_count == 5
    assert repr(lm) == "FakeLM(function, calls=5)"


def test_the_default_record_keeps_the_latest_thousand_calls() -> None:
    lm = sio.FakeLM(lambda messages: "ok")
    for i in range(1005):
        lm([{"role": "user", "content": str(i)}])
    assert DEFAULT_RECORD == 1000
    assert len(lm.calls) == 1000
    assert lm.calls[0].prompt == "5"


def test_record_none_keeps_every_call_and_zero_none() -> None:
    every = sio.FakeLM(lambda messages: "ok", record=None)
    nothing = sio.FakeLM(lambda messages: "ok", record=0)
    for i in range(1500):
        every([{"role": "user", "content": str(i)}])
        nothing([{"role": "user", "content": str(i)}])
    assert len(every.calls) == 1500
    assert (len(nothing.calls), nothing.call_count) == (0, 1500)


def test_record_is_checked() -> None:
    for bad in (-1, 1.5, True, "10"):
        with pytest.raises(sio.ConfigurationError, match="record must be a non-negative int"):
            sio.FakeLM([], record=bad)  # type: ignore[arg-type]


def test_running_out_counts_every_call_not_the_record() -> None:
    lm = sio.FakeLM(["a", "b"], record=1)
    lm([{"role": "user", "content": "1"}])
    lm([{"role": "user", "content": "2"}])
    with pytest.raises(sio.ConfigurationError, match="this is call 3;"):
        lm([{"role": "user", "content": "3"}])
