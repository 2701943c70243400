"""FakeLM: scripted replies for users' own tests."""

from __future__ import annotations

import asyncio

import pytest

import structio as sio

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
