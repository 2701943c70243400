"""Callbacks: the events of a call, in order; a callback that raises never breaks the call."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

import structio as sio
from structio.call import CallResult
from structio.lm.base import BaseLM
from structio.lm.types import Completion, LMResponse, Usage
from structio.observe import (
    Callback,
    CallEndEvent,
    CallScope,
    CallStartEvent,
    ParseErrorEvent,
    RetryEvent,
    call_started,
    dispatch,
)
from structio.rendering.prompt import Part, Prompt
from structio.settings import CALLBACK_HOOKS, current_settings
from tests.observe.recording import Recorder

QA = sio.Signature("question -> answer", name="QA")
ADAPTER = sio.ChatAdapter()


class Broken(Callback):
    """Raises in every hook."""

    def on_call_start(self, event: CallStartEvent) -> None:
        raise RuntimeError("broken start")

    def on_call_end(self, event: CallEndEvent) -> None:
        raise RuntimeError("broken end")

    def on_parse_error(self, event: ParseErrorEvent) -> None:
        raise RuntimeError("broken parse error")

    def on_retry(self, event: RetryEvent) -> None:
        raise RuntimeError("broken retry")


@dataclasses.dataclass
class Outcome:
    outputs: list[dict[str, Any]]
    route: str
    responses: list[LMResponse]


def response(text: str = "[[ ## answer ## ]]\n4", *, cost: float | None = 0.25) -> LMResponse:
    return LMResponse((Completion(text, "stop"),), "fake", Usage(10, 2), cost=cost)


def start(
    lm: BaseLM | None = None,
    inputs: Mapping[str, Any] | None = None,
    messages: Sequence[Mapping[str, Any]] | Prompt | None = None,
    params: Mapping[str, Any] | None = None,
) -> CallScope:
    """Start a call's scope as the call layer does."""
    inputs = {"question": "2+2?"} if inputs is None else inputs
    if messages is None:
        messages = ADAPTER.format(QA, inputs=inputs)
    return call_started(
        ADAPTER, lm or sio.FakeLM([]), QA, inputs, messages, {"temperature": 0.0, **(params or {})}
    )


def one_call() -> None:
    """A whole call that makes no request."""
    with start():
        pass


def parse_error() -> sio.ParseError:
    return sio.ParseError(adapter="ChatAdapter", signature=QA, completion="no", missing=["answer"])


def test_no_callback_means_nothing_is_built() -> None:
    class Untouchable(sio.FakeLM):
        def request_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
            raise AssertionError("an unobserved call must not build events")

    first = start(Untouchable([]))
    second = start(Untouchable([]))
    assert first is second  # one shared scope that drops everything
    assert first.call_id is None
    with first as scope:
        scope.responded(response())
        scope.parse_failed(parse_error())
        scope.retried("again")
        scope.ended(Outcome([{"answer": "4"}], "chat", [response()]))


def test_a_call_tells_start_then_end() -> None:
    recorder = Recorder()
    sio.configure(callbacks=[recorder])
    answer = response()
    with start() as scope:
        scope.responded(answer)
        scope.ended(Outcome([{"answer": "4"}], "chat", [answer]))
    assert recorder.hooks == ["start", "end"]
    began, ended = recorder.last("start"), recorder.last("end")
    assert isinstance(began, CallStartEvent)
    assert isinstance(ended, CallEndEvent)
    assert len(began.call_id) == 32
    assert int(began.call_id, 16) >= 0
    assert ended.call_id == began.call_id == scope.call_id
    assert (began.adapter, began.signature, began.model) == ("ChatAdapter", "QA", "fake")
    assert began.inputs == {"question": "2+2?"}
    assert began.messages == ADAPTER.format(QA, inputs={"question": "2+2?"})
    assert began.params == {"temperature": 0.0}
    assert ended.outputs == [{"answer": "4"}]
    assert ended.route == "chat"
    assert ended.responses == (answer,)
    assert ended.usage == Usage(10, 2)
    assert ended.cost == 0.25
    assert ended.error is None
    assert ended.latency > 0  # measured; never bounded: the machine may be loaded
    # The end event carries what the start said, too.
    assert (ended.adapter, ended.signature, ended.inputs) == ("ChatAdapter", "QA", began.inputs)


def test_each_call_gets_its_own_id() -> None:
    recorder = Recorder()
    sio.configure(callbacks=[recorder])
    for _ in range(3):
        with start():
            pass
    ids = {event.call_id for _, event in recorder.events}
    assert len(ids) == 3


def test_parse_errors_and_retries_are_told_in_order_with_attempt_numbers() -> None:
    recorder = Recorder()
    sio.configure(callbacks=[recorder])
    first, second, third = response("??"), response("still ??", cost=None), response()
    errors = [parse_error(), parse_error()]
    with start() as scope:
        scope.responded(first)
        scope.parse_failed(errors[0])
        scope.retried("answer: missing; write it")
        scope.responded(second)
        scope.parse_failed(errors[1])
        scope.retried("asking again with JSONAdapter")
        scope.responded(third)
        scope.ended(Outcome([{"answer": "4"}], "json_request", [first, second, third]))
    assert recorder.hooks == ["start", "parse_error", "retry", "parse_error", "retry", "end"]
    parse_errors = [e for hook, e in recorder.events if hook == "parse_error"]
    retries = [e for hook, e in recorder.events if hook == "retry"]
    assert [(e.error, e.attempt) for e in parse_errors] == [(errors[0], 1), (errors[1], 2)]
    assert [(e.attempt, e.feedback) for e in retries] == [
        (2, "answer: missing; write it"),
        (3, "asking again with JSONAdapter"),
    ]
    ended = recorder.last("end")
    assert ended.usage == Usage(30, 6)
    assert ended.cost is None  # one response had no price
    assert ended.route == "json_request"


def test_attempt_numbers_can_be_given() -> None:
    recorder = Recorder()
    sio.configure(callbacks=[recorder])
    with start() as scope:
        scope.retried("again", attempt=5)
        scope.parse_failed(parse_error())
        scope.parse_failed(parse_error(), attempt=2)
    assert [e.attempt for _, e in recorder.events[1:3]] == [5, 5]
    assert recorder.events[3][1].attempt == 2  # type: ignore[attr-defined]


def test_a_failed_call_ends_with_its_error_and_the_usage_it_spent() -> None:
    recorder = Recorder()
    sio.configure(callbacks=[recorder])
    error = parse_error()
    spent = response("??")

    def failing_call() -> None:
        with start() as scope:
            scope.responded(spent)
            raise error

    with pytest.raises(sio.ParseError) as raised:
        failing_call()
    assert raised.value is error  # the scope never swallows the exception
    ended = recorder.last("end")
    assert ended.error is error
    assert (ended.outputs, ended.route) == ([], None)
    assert ended.responses == (spent,)
    assert ended.usage == Usage(10, 2)
    assert ended.cost == 0.25


def test_a_call_that_failed_before_any_response_has_no_cost() -> None:
    recorder = Recorder()
    sio.configure(callbacks=[recorder])
    with pytest.raises(sio.RateLimitError), start():
        raise sio.RateLimitError("slow down")
    ended = recorder.last("end")
    assert isinstance(ended.error, sio.RateLimitError)
    assert (ended.responses, ended.usage, ended.cost) == ((), Usage(), None)


def test_responses_can_be_given_at_the_end() -> None:
    recorder = Recorder()
    sio.configure(callbacks=[recorder])
    with start() as scope:
        scope.responded(response())
        scope.ended(error=ValueError("x"), responses=[response(), response()])
    assert recorder.last("end").usage == Usage(20, 4)


def test_only_the_first_end_is_told() -> None:
    recorder = Recorder()
    sio.configure(callbacks=[recorder])

    def ends_twice_then_raises() -> None:
        with start() as scope:
            scope.ended(Outcome([{"answer": "4"}], "chat", [response()]))
            scope.ended(error=ValueError("second"))
            raise KeyError("after the end")  # a stream closed after its result, say

    with pytest.raises(KeyError):
        ends_twice_then_raises()
    assert recorder.hooks == ["start", "end"]
    assert recorder.last("end").error is None


def test_leaving_the_scope_without_an_end_still_ends_the_call() -> None:
    recorder = Recorder()
    sio.configure(callbacks=[recorder])
    with start():
        pass
    assert recorder.hooks == ["start", "end"]
    assert recorder.last("end").error is None


def test_a_stream_closed_early_ends_with_generator_exit() -> None:
    recorder = Recorder()
    sio.configure(callbacks=[recorder])

    def streamed() -> Any:
        with start():
            yield "event"
            yield "more"

    source = streamed()
    assert next(source) == "event"
    source.close()
    assert recorder.hooks == ["start", "end"]
    assert isinstance(recorder.last("end").error, GeneratorExit)


def test_a_call_result_is_an_outcome() -> None:
    recorder = Recorder()
    sio.configure(callbacks=[recorder])
    first, second = response("??"), response()
    result = CallResult([{"answer": "4"}], "json_request", [first, second])
    with start() as scope:
        scope.ended(result)
    ended = recorder.last("end")
    assert (ended.route, ended.responses, ended.usage) == (
        "json_request",
        (first, second),
        Usage(20, 4),
    )
    assert ended.cost == result.cost == 0.5


def test_a_callback_that_raises_is_logged_and_the_others_are_still_told(
    caplog: pytest.LogCaptureFixture,
) -> None:
    recorder = Recorder()
    sio.configure(callbacks=[Broken(), recorder])
    with caplog.at_level(logging.WARNING, logger="structio"), start() as scope:
        scope.parse_failed(parse_error())
        scope.retried("again")
        scope.ended(Outcome([{"answer": "4"}], "chat", [response()]))
    assert recorder.hooks == ["start", "parse_error", "retry", "end"]
    records = [r for r in caplog.records if r.name == "structio"]
    assert len(records) == 4
    assert all(r.levelno == logging.WARNING and r.exc_info for r in records)
    assert [str(r.exc_info[1]) for r in records if r.exc_info] == [
        "broken start",
        "broken parse error",
        "broken retry",
        "broken end",
    ]
    assert "on_call_start" in records[0].getMessage()
    assert scope.call_id is not None
    assert scope.call_id in records[0].getMessage()


def test_a_callback_that_raises_does_not_change_the_error_of_a_failed_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sio.configure(callbacks=[Broken()])
    with (
        caplog.at_level(logging.WARNING, logger="structio"),
        pytest.raises(sio.RateLimitError, match="slow"),
        start(),
    ):
        raise sio.RateLimitError("slow")
    assert len(caplog.records) == 2


def test_keyboard_interrupt_in_a_callback_is_not_swallowed() -> None:
    class Interrupting(Callback):
        def on_call_start(self, event: CallStartEvent) -> None:
            raise KeyboardInterrupt

    sio.configure(callbacks=[Interrupting()])
    with pytest.raises(KeyboardInterrupt):
        start()


def test_a_duck_typed_callback_with_some_hooks_is_told_of_those() -> None:
    ends: list[CallEndEvent] = []

    class OnlyEnd:
        def on_call_end(self, event: CallEndEvent) -> None:
            ends.append(event)

    sio.configure(callbacks=[OnlyEnd()])
    with start() as scope:
        scope.parse_failed(parse_error())
        scope.retried("again")
    assert len(ends) == 1


def test_the_base_callback_does_nothing_in_every_hook() -> None:
    sio.configure(callbacks=[Callback()])
    with start() as scope:
        scope.parse_failed(parse_error())
        scope.retried("again")
        scope.ended(Outcome([], "chat", []))
    assert {name for name in vars(Callback) if name.startswith("on_")} == set(CALLBACK_HOOKS)


def test_credentials_never_reach_a_callback() -> None:
    recorder = Recorder()
    sio.configure(callbacks=[recorder])
    lm = sio.LM("openai/gpt-4o-mini", api_key="sk-secret-value-123", temperature=0.5)
    messages = [{"role": "user", "content": "my key is sk-secret-value-123"}]
    with start(lm, messages=messages, params={"max_tokens": 5}):
        pass
    began = recorder.last("start")
    assert "api_key" not in began.params
    assert began.params == {"temperature": 0.0, "max_tokens": 5}  # the call's wins
    assert began.messages == [{"role": "user", "content": "my key is [redacted]"}]
    assert messages[0]["content"] == "my key is sk-secret-value-123"  # the request is as it was


def test_a_callback_that_changes_the_messages_does_not_change_the_request() -> None:
    class Meddler(Callback):
        def on_call_start(self, event: CallStartEvent) -> None:
            event.messages[0]["content"] = "changed"  # type: ignore[index]
            event.inputs["question"] = "changed"  # type: ignore[index]

    sio.configure(callbacks=[Meddler()])
    messages = [{"role": "user", "content": "original"}]
    inputs = {"question": "original"}
    start(inputs=inputs, messages=messages)
    assert messages == [{"role": "user", "content": "original"}]
    assert inputs == {"question": "original"}


def test_a_prompt_is_turned_into_messages_only_when_observed() -> None:
    recorder = Recorder()
    prompt = Prompt([Part("system", "system", "Be brief."), Part("user", "user", "Hi?")])
    assert start(messages=prompt).call_id is None
    sio.configure(callbacks=[recorder])
    start(messages=prompt)
    assert recorder.last("start").messages == prompt.messages


def test_events_are_frozen() -> None:
    recorder = Recorder()
    sio.configure(callbacks=[recorder])
    start()
    with pytest.raises(dataclasses.FrozenInstanceError):
        recorder.last("start").model = "other"


# -- settings ---------------------------------------------------------------------------------


def test_configure_keeps_the_callbacks_in_order_and_none_clears_them() -> None:
    first, second = Recorder(), Recorder()
    sio.configure(callbacks=[first, second])
    assert current_settings().callbacks == (first, second)
    sio.configure(lm=sio.FakeLM([]))  # other settings leave the callbacks as they are
    assert current_settings().callbacks == (first, second)
    sio.configure(callbacks=None)
    assert current_settings().callbacks == ()
    sio.configure(callbacks=(first,))
    assert current_settings().callbacks == (first,)
    sio.configure(callbacks=[])
    assert current_settings().callbacks == ()


@pytest.mark.parametrize(
    ("callbacks", "message"),
    [
        (Recorder(), r"must be a list of callback objects .*not Recorder"),
        ("on_call_end", r"must be a list of callback objects .*not str"),
        ([Recorder], r"callbacks\[0\] is the class Recorder.*pass an instance, Recorder\(\)"),
        ([Recorder(), print], r"callbacks\[1\] \(builtin_function_or_method\) is not a callback"),
        ([object()], r"none of the methods on_call_start, on_call_end.*subclass structio"),
    ],
)
def test_configure_refuses_what_is_not_a_list_of_callbacks(callbacks: Any, message: str) -> None:
    with pytest.raises(sio.ConfigurationError, match=message):
        sio.configure(callbacks=callbacks)
    with pytest.raises(sio.ConfigurationError, match=message), sio.context(callbacks=callbacks):
        pass
    assert current_settings().callbacks == ()


def test_a_context_replaces_the_callbacks_and_restores_them() -> None:
    global_one, scoped = Recorder(), Recorder()
    sio.configure(callbacks=[global_one])
    with sio.context(callbacks=[scoped]):
        one_call()
        with sio.context(callbacks=[]):
            one_call()  # silenced
        with sio.context(lm=sio.FakeLM([])):
            one_call()  # other settings keep the scoped callbacks
    one_call()
    assert global_one.hooks == ["start", "end"]
    assert scoped.hooks == ["start", "end", "start", "end"]


def test_to_add_a_callback_in_a_context_pass_the_ones_in_effect_too() -> None:
    global_one, extra = Recorder(), Recorder()
    sio.configure(callbacks=[global_one])
    with sio.context(callbacks=[*current_settings().callbacks, extra]):
        one_call()
    assert (global_one.hooks, extra.hooks) == (["start", "end"], ["start", "end"])


def test_a_context_is_not_seen_by_other_threads_but_by_tasks_it_starts() -> None:
    scoped = Recorder()
    inside, release = threading.Event(), threading.Event()
    seen: list[bool] = []

    def other_thread() -> None:
        inside.wait(5)
        seen.append(start().call_id is not None)
        release.set()

    worker = threading.Thread(target=other_thread)
    worker.start()
    with sio.context(callbacks=[scoped]):
        inside.set()
        release.wait(5)

        async def main() -> None:
            async def task() -> None:
                one_call()

            await asyncio.gather(task(), task())

        asyncio.run(main())
    worker.join()
    assert seen == [False]
    assert scoped.hooks == ["start", "end", "start", "end"]


def test_the_silent_scope_is_shared() -> None:
    assert start() is dispatch._UNOBSERVED
