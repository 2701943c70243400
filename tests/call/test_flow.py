"""The call flow on its own: steps out, responses in, no model and no I/O.

Driven by hand as a driver drives it, so the policy (re-asks, fallback, the context cut)
is tested without any LM being called: the LM given is only read.
"""

from __future__ import annotations

from typing import Any

import pytest

import structio as sio
from structio.call import CallOptions, CallResult, Restart, Send, call_flow
from structio.call.request import begin
from structio.lm.types import Completion, LMResponse
from structio.observe.dispatch import call_started

GOOD = "[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]"
BAD = "[[ ## answer ## ]]\nfour-ish\n\n[[ ## completed ## ]]"


class Untouchable(sio.FakeLM):
    """An LM the flow may read but must never call."""

    def __init__(self, window: int | None = None) -> None:
        super().__init__([])
        self.window = window

    @property
    def max_input_tokens(self) -> int | None:
        return self.window

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the flow called the model")


def reply(text: str) -> LMResponse:
    return LMResponse(completions=(Completion(text, "stop"),), model="m")


def start(options: CallOptions, lm: sio.FakeLM | None = None, **inputs: Any) -> Any:
    lm = lm or Untouchable()
    sig = sio.Signature("history: History, question -> answer: int")
    values = {"history": sio.History(messages=[]), "question": "2+2?", **inputs}
    request = begin(sio.ChatAdapter(), lm, sig, (), values, None, options, None)
    scope = call_started(request.adapter, lm, request.original, values, request.sent, {})
    return request, call_flow(request, lm, options, scope)


def finish(flow: Any, value: Any) -> CallResult:
    with pytest.raises(StopIteration) as done:
        flow.send(value)
    result: CallResult = done.value.value
    return result


def test_a_readable_answer_ends_the_flow_after_one_request() -> None:
    request, flow = start(CallOptions())
    step = next(flow)
    assert isinstance(step, Send)
    assert step.request is request
    result = finish(flow, reply(GOOD))
    assert result.outputs == [{"answer": 4}]
    assert (result.route, result.fallback, result.attempts) == ("chat", None, ())


def test_a_re_ask_restarts_then_sends_the_conversation_with_feedback() -> None:
    request, flow = start(CallOptions(max_retries=1))
    next(flow)
    restart = flow.send(reply(BAD))
    assert isinstance(restart, Restart)
    assert "could not be used" in restart.reason
    again = flow.send(None)
    assert isinstance(again, Send)
    sent = again.request.messages
    assert sent[: len(request.messages)] == request.messages
    assert sent[len(request.messages)] == {"role": "assistant", "content": BAD}
    assert "`answer`" in sent[-1]["content"]
    result = finish(flow, reply(GOOD))
    assert result.outputs == [{"answer": 4}]
    assert len(result.attempts) == 1
    assert len(result.responses) == 2


def test_without_re_asks_the_fallback_adapter_makes_the_next_request() -> None:
    _, flow = start(CallOptions())
    next(flow)
    assert isinstance(flow.send(reply(BAD)), Restart)
    second = flow.send(None)
    assert isinstance(second, Send)
    assert type(second.request.adapter) is sio.JSONAdapter
    result = finish(flow, reply('{"answer": 4}'))
    assert (result.route, result.fallback) == ("json_request", "request")
    assert len(result.responses) == 2


def test_a_fallback_that_fails_too_raises_the_first_adapters_error() -> None:
    _, flow = start(CallOptions())
    next(flow)
    flow.send(reply(BAD))
    flow.send(None)
    with pytest.raises(sio.ParseError) as raised:
        flow.send(reply("no answer at all"))
    assert raised.value.adapter == "ChatAdapter"
    assert "neither could the fallback, JSONAdapter" in str(raised.value)


def long_history() -> sio.History:
    return sio.History(messages=[{"question": f"turn {i} " * 30, "answer": i} for i in range(30)])


def test_a_context_error_cuts_the_prompt_to_the_window_and_sends_it_again() -> None:
    lm = Untouchable(window=600)
    request, flow = start(CallOptions(), lm, history=long_history())
    next(flow)
    step = flow.throw(sio.ContextWindowExceededError("too long", model="m"))
    assert isinstance(step, Send)
    assert len(step.request.messages) < len(request.messages)
    assert step.request.truncation is not None
    assert step.request.truncation.reason == "context_window"
    assert step.request.truncation.tokens_after <= 600
    result = finish(flow, reply(GOOD))
    assert result.truncation == step.request.truncation


def test_a_context_error_is_final_when_nothing_can_be_cut_or_no_window_is_known() -> None:
    _, flow = start(CallOptions(), Untouchable(window=None), history=long_history())
    next(flow)
    with pytest.raises(sio.ContextWindowExceededError):
        flow.throw(sio.ContextWindowExceededError("too long", model="m"))


def test_a_context_error_after_a_re_ask_is_final() -> None:
    _, flow = start(CallOptions(max_retries=1), Untouchable(window=600), history=long_history())
    next(flow)
    flow.send(reply(BAD))
    flow.send(None)
    with pytest.raises(sio.ContextWindowExceededError):
        flow.throw(sio.ContextWindowExceededError("too long", model="m"))


def test_any_other_provider_error_goes_through_the_flow_unchanged() -> None:
    _, flow = start(CallOptions(max_retries=3))
    next(flow)
    error = sio.RateLimitError("slow down", model="m")
    with pytest.raises(sio.RateLimitError) as raised:
        flow.throw(error)
    assert raised.value is error
