"""Predict.stream / astream and prompt functions' .stream, with FakeLM streaming its replies."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import structio as sio
from structio.lm.types import StreamItem
from tests.parsing.test_stream import COMPLETIONS, EXAMPLES, check


class QA(sio.Signature):
    """Answer the question."""

    question: str = sio.InputField()
    reasoning: str = sio.OutputField()
    answer: int = sio.OutputField()


REPLY = {"reasoning": "Two and two make four.", "answer": 4}


class Answer(BaseModel):
    reasoning: str
    answer: int


def events_of(items: list[Any]) -> list[sio.StreamEvent]:
    return [item for item in items if isinstance(item, sio.StreamEvent)]


def test_stream_yields_events_then_the_prediction() -> None:
    lm = sio.FakeLM([REPLY], chunk_size=3)
    qa = sio.Predict(QA, lm=lm)
    stream = qa.stream(question="2+2?")
    assert isinstance(stream, sio.Stream)
    items = list(stream)
    prediction = items[-1]
    assert isinstance(prediction, sio.Prediction)
    assert prediction == REPLY
    assert stream.result is prediction
    assert prediction.route == "chat"
    events = events_of(items[:-1])
    assert len(events) == len(items) - 1
    deltas = [e for e in events if isinstance(e, sio.FieldDelta)]
    assert len(deltas) > 3  # streamed in pieces, not at once
    assert "".join(d.delta for d in deltas) == REPLY["reasoning"]
    assert [e for e in events if isinstance(e, sio.FieldValue)] == [
        sio.FieldValue("reasoning", REPLY["reasoning"]),
        sio.FieldValue("answer", 4),
    ]
    check(events, dict(prediction), QA)
    assert lm.call_count == 1
    assert len(lm.history) == 1  # recorded like any call


def test_stream_equals_a_call_on_the_same_reply() -> None:
    qa = sio.Predict(QA, lm=sio.FakeLM([REPLY, REPLY]))
    assert qa.stream(question="q").collect() == qa(question="q")


def test_an_unreadable_reply_is_asked_again_and_said_with_a_reread() -> None:
    # Sections the ChatAdapter cannot read (answer is not an int), then a JSON answer.
    first = "[[ ## reasoning ## ]]\nHmm.\n\n[[ ## answer ## ]]\nfour\n\n[[ ## completed ## ]]"
    lm = sio.FakeLM([first, '{"reasoning": "Sum.", "answer": 4}'], chunk_size=5)
    items = list(sio.Predict(QA, lm=lm).stream(question="q"))
    prediction = items[-1]
    assert prediction == {"reasoning": "Sum.", "answer": 4}
    assert prediction.route == "json_request"
    assert len(prediction.responses) == 2
    events = events_of(items)
    rereads = [i for i, e in enumerate(events) if isinstance(e, sio.Reread)]
    assert len(rereads) == 1
    assert "answer" in events[rereads[0]].reason
    assert "JSONAdapter" in events[rereads[0]].reason
    assert sio.FieldValue("reasoning", "Hmm.") in events[: rereads[0]]
    check(events, dict(prediction), QA)


def test_no_reread_when_nothing_was_said_before_the_fallback() -> None:
    lm = sio.FakeLM(["no sections at all", '{"reasoning": "r", "answer": 1}'])
    items = list(sio.Predict(QA, lm=lm).stream(question="q"))
    assert not any(isinstance(e, sio.Reread) for e in items)
    assert items[-1].route == "json_request"


def test_a_json_answer_to_the_chat_adapter_is_given_at_the_end() -> None:
    items = list(
        sio.Predict(QA, lm=sio.FakeLM(['{"reasoning": "r", "answer": 1}'])).stream(question="q")
    )
    assert items[-1].route == "json_reparse"
    assert events_of(items) == [
        sio.FieldDelta("reasoning", "r"),
        sio.FieldValue("reasoning", "r"),
        sio.FieldValue("answer", 1),
    ]


def test_json_adapter_streams_too() -> None:
    lm = sio.FakeLM([REPLY], chunk_size=2)
    items = list(sio.Predict(QA, lm=lm, adapter=sio.JSONAdapter()).stream(question="q"))
    assert items[-1] == REPLY
    assert items[-1].route == "json"
    events = events_of(items)
    assert len([e for e in events if isinstance(e, sio.FieldDelta)]) > 3
    check(events, REPLY, QA)
    # The values arrive while the text does, not at the end.
    assert isinstance(items[-2], sio.FieldValue)


def test_a_cut_off_answer_raises_as_a_call_does() -> None:
    cut = sio.Completion("[[ ## reasoning ## ]]\nTwo and", finish_reason="length")
    stream = sio.Predict(QA, lm=sio.FakeLM([cut])).stream(question="q")
    with pytest.raises(sio.ParseError) as error:
        list(stream)
    assert error.value.truncated


def test_field_gives_one_outputs_events() -> None:
    stream = sio.Predict(QA, lm=sio.FakeLM([REPLY], chunk_size=4)).stream(question="q")
    events = list(stream.field("reasoning"))
    assert {type(e) for e in events} == {sio.FieldDelta, sio.FieldValue}
    assert all(e.field == "reasoning" for e in events)
    assert "".join(e.delta for e in events if isinstance(e, sio.FieldDelta)) == REPLY["reasoning"]
    assert stream.result == REPLY  # the rest was read through
    with pytest.raises(sio.UsageError, match=r"'answr' is not an output.*reasoning, answer"):
        next(sio.Predict(QA, lm=sio.FakeLM([REPLY])).stream(question="q").field("answr"))


def test_result_before_the_end_says_what_to_do() -> None:
    stream = sio.Predict(QA, lm=sio.FakeLM([REPLY])).stream(question="q")
    next(stream)
    with pytest.raises(sio.UsageError, match=r"iterate it to its end first, or call \.collect"):
        _ = stream.result
    assert stream.collect() == REPLY


def test_inputs_are_checked_when_the_stream_is_made() -> None:
    lm = sio.FakeLM([REPLY])
    with pytest.raises(sio.FormatError):
        sio.Predict(QA, lm=lm).stream(questoin="q")
    assert lm.call_count == 0


def test_leaving_the_loop_ends_the_stream_unrecorded() -> None:
    lm = sio.FakeLM([REPLY], chunk_size=2)
    with sio.Predict(QA, lm=lm).stream(question="q") as stream:
        for _ in stream:
            break
    assert lm.call_count == 1
    assert len(lm.history) == 0  # a stream left early is not a finished call
    with pytest.raises(StopIteration):
        next(stream)


def test_n_choices_stream_the_first_and_predict_all() -> None:
    lm = sio.FakeLM([[REPLY, {"reasoning": "other", "answer": 5}]])
    items = list(sio.Predict(QA, lm=lm, n=2).stream(question="q"))
    prediction = items[-1]
    assert prediction.completions == [REPLY, {"reasoning": "other", "answer": 5}]
    check(events_of(items), REPLY, QA)


class Windowed(sio.BaseLM):
    """Refuses a prompt over its window, as a provider does, before any text."""

    def __init__(self) -> None:
        super().__init__("windowed")
        self.prompts: list[int] = []

    @property
    def max_input_tokens(self) -> int:
        return 500

    def _complete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> sio.LMResponse:
        size = sum(len(str(m["content"])) for m in messages)
        self.prompts.append(size)
        if size > 2500:
            raise sio.ContextWindowExceededError("too long", model=self.model)
        text = "[[ ## reasoning ## ]]\nok\n\n[[ ## answer ## ]]\n1\n\n[[ ## completed ## ]]"
        return sio.LMResponse((sio.Completion(text, "stop"),), self.model)


def test_a_prompt_over_the_window_is_cut_and_streamed_again() -> None:
    class Chat(sio.Signature):
        """Answer."""

        history: sio.History = sio.InputField()
        question: str = sio.InputField()
        reasoning: str = sio.OutputField()
        answer: int = sio.OutputField()

    turns = [{"question": "word " * 60, "reasoning": "r", "answer": 1} for _ in range(8)]
    lm = Windowed()
    stream = sio.Predict(Chat, lm=lm).stream(history=sio.History(messages=turns), question="q")
    prediction = stream.collect()
    assert prediction == {"reasoning": "ok", "answer": 1}
    assert prediction.truncation is not None
    assert prediction.truncation.reason == "context_window"
    assert len(lm.prompts) == 2


def test_a_custom_lm_without_streaming_streams_its_whole_answer() -> None:
    items = list(sio.Predict(QA, lm=Windowed()).stream(question="q"))
    assert items[-1] == {"reasoning": "ok", "answer": 1}
    check(events_of(items), {"reasoning": "ok", "answer": 1}, QA)


def test_astream() -> None:
    lm = sio.FakeLM([REPLY], chunk_size=3)

    async def main() -> tuple[list[Any], sio.AsyncStream[sio.Prediction]]:
        stream = sio.Predict(QA, lm=lm).astream(question="q")
        return [item async for item in stream], stream

    items, stream = asyncio.run(main())
    assert isinstance(stream, sio.AsyncStream)
    assert items[-1] == REPLY
    assert stream.result == REPLY
    check(events_of(items), REPLY, QA)
    assert len(lm.history) == 1


def test_astream_field_collect_and_fallback() -> None:
    first = "[[ ## reasoning ## ]]\nHmm.\n\n[[ ## answer ## ]]\nfour\n\n[[ ## completed ## ]]"
    lm = sio.FakeLM([first, '{"reasoning": "Sum.", "answer": 4}', REPLY])

    async def main() -> tuple[list[Any], Any]:
        async with sio.Predict(QA, lm=lm).astream(question="q") as stream:
            events = [e async for e in stream.field("answer")]
        again = sio.Predict(QA, lm=lm).astream(question="q")
        return events, (stream.result, await again.collect())

    events, (result, collected) = asyncio.run(main())
    assert isinstance(events[0], sio.Reread)
    assert events[1:] == [sio.FieldValue("answer", 4)]
    assert result.route == "json_request"
    assert collected == REPLY


def test_fake_lm_streams_in_chunks_with_a_delay() -> None:
    lm = sio.FakeLM(["abcdefghij"], chunk_size=4, chunk_delay=0.001)
    items: list[StreamItem] = list(lm.stream([{"role": "user", "content": "x"}]))
    assert items[:-1] == ["abcd", "efgh", "ij"]
    assert isinstance(items[-1], sio.LMResponse)
    assert items[-1].text == "abcdefghij"
    with pytest.raises(sio.ConfigurationError, match="chunk_size"):
        sio.FakeLM(["x"], chunk_size=0)


def test_lm_stream_checks_messages_at_once() -> None:
    with pytest.raises(TypeError, match="list of messages"):
        sio.FakeLM(["x"]).stream("hello")  # type: ignore[arg-type]


# -- the final prediction is what a call reads, whatever the completion and its pieces ------------


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    COMPLETIONS,
    st.sampled_from(["chat", "json"]),
    st.integers(min_value=1, max_value=9),
)
def test_streaming_reads_what_calling_reads(text: str, adapter: str, size: int) -> None:
    fallback = '{"reasoning": "fallback", "answer": 7, "tags": []}'
    chosen = sio.ChatAdapter() if adapter == "chat" else sio.JSONAdapter()

    def run(call: Any) -> Any:
        try:
            return call()
        except sio.ParseError as error:
            return ("ParseError", error.missing, sorted(error.invalid))

    streamed_lm = sio.FakeLM([text, fallback], chunk_size=size)
    called_lm = sio.FakeLM([text, fallback])
    streamed_items: list[Any] = []

    def streamed() -> Any:
        for item in sio.Predict(QA, lm=streamed_lm, adapter=chosen).stream(question="q"):
            streamed_items.append(item)
        return streamed_items[-1]

    got = run(streamed)
    want = run(lambda: sio.Predict(QA, lm=called_lm, adapter=chosen)(question="q"))
    assert got == want
    if isinstance(got, sio.Prediction):
        assert got.route == want.route
        check(events_of(streamed_items), dict(got), QA)


# -- prompt functions ------------------------------------------------------------------------


def test_a_str_prompt_function_streams_text() -> None:
    lm = sio.FakeLM(["Hello, Bob! Nice day."], chunk_size=5)

    @sio.prompt("Say hi to {name}", lm=lm)
    def hi(name: str) -> str: ...

    stream = hi.stream("Bob")
    assert isinstance(stream, sio.TextStream)
    pieces = list(stream)
    assert pieces == ["Hello", ", Bob", "! Nic", "e day", "."]
    assert stream.result == "Hello, Bob! Nice day."
    assert lm.calls[0].prompt == "Say hi to Bob"


def test_a_str_prompt_function_stream_as_a_string() -> None:
    lm = sio.FakeLM(["Hello!"], chunk_size=2)

    @sio.chatprompt(sio.SystemMessage("Be kind."), sio.UserMessage("Hi {name}"), lm=lm)
    def hi(name: str) -> str: ...

    assert str(hi.stream("Ann")) == "Hello!"
    assert lm.calls[0].messages[0] == {"role": "system", "content": "Be kind."}


def test_a_typed_prompt_function_streams_field_events_then_its_value() -> None:
    lm = sio.FakeLM([REPLY], chunk_size=3)

    @sio.prompt("What is {a} + {b}?", lm=lm)
    def add(a: int, b: int) -> Answer: ...

    stream = add.stream(2, 2)
    assert isinstance(stream, sio.Stream)
    items = list(stream)
    assert items[-1] == Answer(reasoning=REPLY["reasoning"], answer=4)
    assert stream.result == items[-1]
    assert sio.FieldValue("answer", 4) in items
    assert stream.fields == ("reasoning", "answer")


def test_prompt_function_astream() -> None:
    lm = sio.FakeLM(["one two", {"answer": 3}, "three"], chunk_size=3)

    @sio.prompt("Count {n}", lm=lm)
    def count(n: int) -> str: ...

    @sio.prompt("Number {n}", lm=lm)
    def number(n: int) -> int: ...

    @sio.chatprompt(sio.UserMessage("Say {n}"), lm=lm)
    def say(n: int) -> str: ...

    async def main() -> tuple[list[str], Any, str]:
        pieces = [piece async for piece in count.astream(2)]
        typed = await number.astream(3).collect()
        said = await say.astream(3).collect()
        return pieces, typed, said

    pieces, typed, said = asyncio.run(main())
    assert pieces == ["one", " tw", "o"]
    assert typed == 3
    assert said == "three"
