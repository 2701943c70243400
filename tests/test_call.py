"""The call layer: one path for every model call through an adapter, and its names."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import structio as sio
from structio import call
from structio.lm.types import Completion

JSON_SENTENCE = "Outputs will be a JSON object with the following fields."


class QA(sio.Signature):
    """Answer the question."""

    question: str = sio.InputField()
    answer: int = sio.OutputField()


class Tricky(sio.Signature):
    """Answer the question. Outputs will be a JSON object with the following fields."""

    question: str = sio.InputField()
    answer: int = sio.OutputField()


def test_call_reads_the_adapters_format_and_reports_the_route() -> None:
    lm = sio.FakeLM([{"answer": 4}])
    result = call.call(sio.JSONAdapter(), lm, QA, inputs={"question": "2+2?"}, params={"n": 1})
    assert (result.outputs, result.route, result.path) == ([{"answer": 4}], "json", "json")
    assert lm.calls[0].params == {"n": 1}


def test_an_unreadable_completion_is_reread_then_asked_again_in_json() -> None:
    lm = sio.FakeLM(["no idea", {"answer": 5}])
    result = call.call(sio.ChatAdapter(), lm, QA, inputs={"question": "q"})
    assert (result.outputs, result.route, len(result.responses)) == (
        [{"answer": 5}],
        "json_request",
        2,
    )
    assert JSON_SENTENCE in lm.calls[1].messages[0]["content"]
    with pytest.raises(sio.ParseError):
        call.call(
            sio.ChatAdapter(fallback=None), sio.FakeLM(["no idea"]), QA, inputs={"question": "q"}
        )


def test_a_cut_off_completion_is_reported_as_cut_off() -> None:
    lm = sio.FakeLM([Completion(text="[[ ## answer ## ]]\nabout", finish_reason="length")])
    with pytest.raises(sio.ParseError) as error:
        call.call(sio.ChatAdapter(), lm, QA, inputs={"question": "q"})
    assert error.value.truncated


def _check_both_failures_are_said(error: sio.ParseError) -> None:
    message = str(error)
    # The adapter the user chose, and why it could not read the answer, per field...
    assert error.adapter == "ChatAdapter"
    assert message.startswith("ChatAdapter could not parse the completion")
    assert "field `answer`: expected int" in message
    assert error.completion == "The answer is four."
    # ...and that the JSON fallback request could not either, and why.
    assert "neither could the fallback, JSONAdapter" in message
    assert "nor the answer to a second request" in message
    assert "invalid: answer: expected int" in message
    assert error.attempts == []  # no re-asks were made
    cause = error.__cause__
    assert isinstance(cause, sio.ParseError)
    assert cause.adapter == "JSONAdapter"


def test_a_failed_fallback_is_reported_as_the_callers_adapter_saying_both() -> None:
    replies = ["The answer is four."] * 3
    lm = sio.FakeLM(replies)
    with pytest.raises(sio.ParseError) as error:
        sio.Predict("question -> answer: int", lm=lm)(question="q")
    assert len(lm.calls) == 2
    _check_both_failures_are_said(error.value)
    with pytest.raises(sio.ParseError) as again:
        asyncio.run(sio.Predict(QA, lm=sio.FakeLM(replies)).acall(question="q"))
    _check_both_failures_are_said(again.value)
    with pytest.raises(sio.ParseError) as streamed:
        list(sio.Predict(QA, lm=sio.FakeLM(replies)).stream(question="q"))
    _check_both_failures_are_said(streamed.value)

    async def astreamed() -> None:
        async for _ in sio.Predict(QA, lm=sio.FakeLM(replies)).astream(question="q"):
            pass

    with pytest.raises(sio.ParseError) as async_streamed:
        asyncio.run(astreamed())
    _check_both_failures_are_said(async_streamed.value)


def test_fake_replies_follow_the_adapter_that_asked_not_the_prompt_text() -> None:
    # The docstring holds JSONAdapter's sentence; the request is still ChatAdapter's.
    lm = sio.FakeLM([{"answer": 4}])
    pred = sio.Predict(Tricky, lm=lm)(question="q")
    assert (pred.answer, pred.route) == (4, "chat")
    assert lm.history[0].response.text.startswith("[[ ## answer ## ]]")
    # Told an adapter, a FakeLM writes every dict reply with it.
    forced = sio.FakeLM([{"answer": 4}], adapter=sio.JSONAdapter())
    assert sio.Predict(QA, lm=forced)(question="q").route == "json_reparse"
    # Outside a call, dict replies are written by ChatAdapter.
    assert sio.FakeLM([{"a": 1}])([{"role": "user", "content": "x"}]).text.startswith(
        "[[ ## a ## ]]"
    )


def test_request_parameters_are_params_everywhere_with_the_old_names_kept() -> None:
    lm = sio.FakeLM([{"answer": 1}] * 3)
    predict = sio.Predict(QA, lm=lm, temperature=0.5)
    assert predict.params == {"temperature": 0.5}
    assert predict.lm_kwargs is predict.params
    predict(question="q", params={"n": 1})
    predict(question="q", config={"seed": 3})  # DSPy's name
    predict(question="q", config={"seed": 3}, params={"seed": 4})  # params wins
    assert [c.params for c in lm.calls] == [
        {"temperature": 0.5, "n": 1},
        {"temperature": 0.5, "seed": 3},
        {"temperature": 0.5, "seed": 4},
    ]
    real = sio.LM("openai/gpt-4o-mini", temperature=0, cache=False)
    assert real.params == {"temperature": 0}
    assert real.kwargs is real.params
    with pytest.raises(sio.ConfigurationError, match="params"):
        sio.Predict("params -> answer")


def test_prediction_route_and_its_former_name() -> None:
    pred = sio.Prediction.from_result(sio.CallResult([{"a": 1}], "json_reparse"))
    assert pred.meta.route == pred.route == pred.path == "json_reparse"
    assert sio.AdapterResult is sio.CallResult


def test_both_kinds_of_prompt_function_fall_back_through_the_call_layer() -> None:
    @sio.chatprompt(
        sio.SystemMessage("You count."),
        sio.UserMessage("How many legs has a {animal}?"),
        lm=sio.FakeLM(["many", {"answer": 8}]),
    )
    def legs(animal: str) -> int: ...

    assert legs("spider") == 8
    assert isinstance(legs.lm, sio.FakeLM)
    _, second = legs.lm.calls
    assert JSON_SENTENCE in second.messages[0]["content"]
    assert second.messages[-1]["content"].startswith("[[ ## prompt ## ]]\nHow many legs")

    @sio.prompt("How many legs has a {animal}?", lm=sio.FakeLM(["many", {"answer": 6}]))
    def legs_again(animal: str) -> int: ...

    assert asyncio.run(legs_again.acall("ant")) == 6


def test_a_chatprompt_over_the_context_window_says_so() -> None:
    def refuse(messages: Any) -> Any:
        raise sio.ContextWindowExceededError("too long", model="fake")

    @sio.chatprompt(sio.UserMessage("{text}"), lm=sio.FakeLM(refuse))
    def summary(text: str) -> int: ...

    with pytest.raises(sio.ContextWindowExceededError):
        summary("x")


def test_one_resolver_chooses_the_adapter_and_the_lm() -> None:
    from structio.settings import resolve_adapter, resolve_lm

    json_adapter = sio.JSONAdapter()
    assert isinstance(resolve_adapter(), sio.ChatAdapter)
    with sio.context(adapter=json_adapter):
        assert resolve_adapter() is json_adapter
        assert resolve_adapter(None, sio.ChatAdapter()) == sio.ChatAdapter()
    with pytest.raises(sio.ConfigurationError, match="no LM to call for Predict"):
        sio.Predict(QA)(question="q")
    lm = sio.FakeLM([])
    with sio.context(lm=lm):
        assert resolve_lm(None) is lm
