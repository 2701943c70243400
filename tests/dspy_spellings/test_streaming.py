"""DSPy's ``dspy.streamify`` and ``dspy.streaming``, written as DSPy's documentation writes them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import structio as dspy
from structio.streaming import StatusMessage, StatusMessageProvider, StreamResponse


def scripted(*replies: dict[str, Any]) -> dspy.FakeLM:
    return dspy.FakeLM(list(replies), chunk_size=3)


def run(stream: Any) -> list[Any]:
    async def collect() -> list[Any]:
        return [value async for value in stream]

    return asyncio.run(collect())


def test_stream_listeners_give_chunks_then_the_prediction() -> None:
    dspy.configure(lm=scripted({"answer": "Paris is the capital", "reasoning": "France"}))
    predict = dspy.Predict("question->answer, reasoning")
    stream_listeners = [
        dspy.streaming.StreamListener(signature_field_name="answer"),
        dspy.streaming.StreamListener(signature_field_name="reasoning"),
    ]
    stream_predict = dspy.streamify(predict, stream_listeners=stream_listeners)

    values = run(stream_predict(question="why did a chicken cross the kitchen?"))
    assert isinstance(values[-1], dspy.Prediction)
    assert values[-1].answer == "Paris is the capital"
    chunks = values[:-1]
    assert all(isinstance(chunk, dspy.streaming.StreamResponse) for chunk in chunks)
    answer = [c for c in chunks if c.signature_field_name == "answer"]
    assert len(answer) > 2  # it came in pieces, as written
    assert "".join(c.chunk for c in answer) == "Paris is the capital"
    assert [c.is_last_chunk for c in answer] == [False] * (len(answer) - 1) + [True]
    assert {c.predict_name for c in chunks} == {"self"}
    reasoning = "".join(c.chunk for c in chunks if c.signature_field_name == "reasoning")
    assert reasoning == "France"
    assert stream_listeners[0].predict is predict


def test_the_final_prediction_can_be_left_out() -> None:
    dspy.configure(lm=scripted({"answer": "42"}))
    stream = dspy.streamify(
        dspy.Predict("question -> answer"),
        stream_listeners=[dspy.streaming.StreamListener(signature_field_name="answer")],
        include_final_prediction_in_output_stream=False,
    )
    values = run(stream(question="?"))
    assert values
    assert not any(isinstance(v, dspy.Prediction) for v in values)
    assert "".join(v.chunk for v in values) == "42"


def test_sync_streaming_and_a_chain_of_thought() -> None:
    dspy.configure(lm=scripted({"reasoning": "two twos", "answer": "4"}))
    stream = dspy.streamify(
        dspy.ChainOfThought("question -> answer"),
        stream_listeners=[dspy.streaming.StreamListener(signature_field_name="reasoning")],
        async_streaming=False,
    )
    values = list(stream(question="2+2?"))
    assert values[-1].answer == "4"
    assert "".join(v.chunk for v in values[:-1]) == "two twos"
    assert {v.predict_name for v in values[:-1]} == {"predict"}  # DSPy's name for it


def test_an_output_that_is_not_text_comes_as_one_last_chunk() -> None:
    dspy.configure(lm=scripted({"n": 12, "tags": ["a", "b"]}))
    stream = dspy.streamify(
        dspy.Predict("question -> n: int, tags: list[str]"),
        stream_listeners=[
            dspy.streaming.StreamListener(signature_field_name="n"),
            dspy.streaming.StreamListener(signature_field_name="tags"),
        ],
    )
    values = run(stream(question="?"))
    assert values[:-1] == [
        StreamResponse("self", "n", "12", True),
        StreamResponse("self", "tags", '["a", "b"]', True),
    ]


def test_without_listeners_the_stream_gives_structios_events() -> None:
    dspy.configure(lm=scripted({"a": "chicken"}))
    program = dspy.streamify(dspy.Predict("q->a"))
    values = run(program(q="Why did a chicken cross the kitchen?"))
    assert isinstance(values[-1], dspy.Prediction)
    deltas = [v.delta for v in values if isinstance(v, dspy.FieldDelta)]
    assert "".join(deltas) == "chicken"


def test_a_program_of_your_own_runs_whole() -> None:
    dspy.configure(lm=scripted({"answer": "x"}))
    predict = dspy.Predict("question -> answer")

    def program(question: str) -> dspy.Prediction:
        return predict(question=question)

    values = run(dspy.streamify(program)(question="?"))
    assert [v.answer for v in values] == ["x"]

    async def aprogram(question: str) -> str:
        return question.upper()

    assert list(dspy.streamify(aprogram, async_streaming=False)(question="hi")) == ["HI"]
    assert run(dspy.streamify(aprogram, is_async_program=True)(question="yo")) == ["YO"]


def test_listeners_that_cannot_be_served_stop_at_once() -> None:
    with pytest.raises(dspy.UsageError, match="'answr' is not an output"):
        dspy.streamify(
            dspy.Predict("question -> answer"),
            stream_listeners=[dspy.streaming.StreamListener(signature_field_name="answr")],
        )
    with pytest.raises(dspy.UsageError, match="astream"):
        dspy.streamify(
            lambda question: question,
            stream_listeners=[dspy.streaming.StreamListener(signature_field_name="answer")],
        )
    twice = TwoSteps()
    twice.predict2 = dspy.Predict("question -> answer")
    with pytest.raises(dspy.UsageError, match="several predictors"):
        dspy.streamify(
            twice,
            stream_listeners=[dspy.streaming.StreamListener(signature_field_name="answer")],
        )


class TwoSteps:
    """A program of two predictors, shaped as DSPy's modules are (``named_predictors``)."""

    def __init__(self) -> None:
        self.predict1 = dspy.Predict("question->answer")
        self.predict2: dspy.Predict = dspy.Predict("answer->simplified_answer")

    def named_predictors(self) -> list[tuple[str, dspy.Predict]]:
        return [("predict1", self.predict1), ("predict2", self.predict2)]

    def __call__(self, question: str, **kwargs: Any) -> dspy.Prediction:
        answer = self.predict1(question=question).answer
        return self.predict2(answer=answer)


def test_the_predictors_inside_a_program_stream_as_dspys_tutorial() -> None:
    lm = scripted(
        {"answer": "It wanted the other side"},
        {"simplified_answer": "Other side"},
    )
    dspy.configure(lm=lm)
    stream_listeners = [
        dspy.streaming.StreamListener(signature_field_name="answer"),
        dspy.streaming.StreamListener(signature_field_name="simplified_answer"),
    ]
    stream_predict = dspy.streamify(TwoSteps(), stream_listeners=stream_listeners)

    values = run(stream_predict(question="why did a chicken cross the kitchen?"))
    assert values[-1].simplified_answer == "Other side"
    chunks = values[:-1]
    by_field: dict[tuple[str, str], str] = {}
    for chunk in chunks:
        key = (chunk.predict_name, chunk.signature_field_name)
        by_field[key] = by_field.get(key, "") + chunk.chunk
    assert by_field == {
        ("predict1", "answer"): "It wanted the other side",
        ("predict2", "simplified_answer"): "Other side",
    }
    # In the order written: the first predictor's text, all of it, before the second's.
    assert [c.predict_name for c in chunks] == sorted(c.predict_name for c in chunks)
    assert sum(c.is_last_chunk for c in chunks) == 2

    # Outside the stream nothing listens: the program's calls are plain calls again.
    assert dspy.settings.listener_of(stream_listeners[0].predict.signature) is None
    sync = dspy.streamify(TwoSteps(), stream_listeners=stream_listeners, async_streaming=False)
    dspy.configure(lm=scripted({"answer": "a"}, {"simplified_answer": "b"}))
    values = list(sync(question="?"))
    assert [(v.signature_field_name, v.chunk) for v in values[:-1]] == [
        ("answer", "a"),
        ("answer", ""),
        ("simplified_answer", "b"),
        ("simplified_answer", ""),
    ]


def test_status_messages_around_the_program() -> None:
    class MyStatusMessageProvider(StatusMessageProvider):
        def module_start_status_message(self, instance: Any, inputs: dict[str, Any]) -> str:
            return "Predicting..."

        def module_end_status_message(self, outputs: Any) -> str:
            return f"Done: {outputs.a}"

    dspy.configure(lm=scripted({"a": "ok"}))
    program = dspy.streamify(
        dspy.Predict("q->a"),
        status_message_provider=MyStatusMessageProvider(),
        stream_listeners=[dspy.streaming.StreamListener(signature_field_name="a")],
    )
    values = run(program(q="?"))
    assert values[0] == StatusMessage("Predicting...")
    assert values[-2] == StatusMessage("Done: ok")
    assert isinstance(values[-1], dspy.Prediction)


def test_streaming_response_and_apply_sync_streaming() -> None:
    dspy.configure(lm=scripted({"answer": "yes"}, {"answer": "no"}))
    stream = dspy.streamify(
        dspy.Predict("question -> answer"),
        stream_listeners=[dspy.streaming.StreamListener(signature_field_name="answer")],
    )

    async def events() -> list[str]:
        return [e async for e in dspy.streaming.streaming_response(stream(question="?"))]

    lines = asyncio.run(events())
    assert lines[-1] == "data: [DONE]\n\n"
    payloads = [json.loads(line.removeprefix("data: ")) for line in lines[:-1]]
    assert payloads[-1] == {"prediction": {"answer": "yes"}}
    assert "".join(p["chunk"]["chunk"] for p in payloads[:-1]) == "yes"

    values = list(dspy.streaming.apply_sync_streaming(stream(question="?")))
    assert values[-1].answer == "no"


def test_an_async_program_streams_its_predictors_too() -> None:
    class AsyncSteps(TwoSteps):
        async def acall(self, question: str) -> dspy.Prediction:
            answer = (await self.predict1.acall(question=question)).answer
            return await self.predict2.acall(answer=answer)

    dspy.configure(lm=scripted({"answer": "forty two"}, {"simplified_answer": "42"}))
    stream = dspy.streamify(
        AsyncSteps(),
        stream_listeners=[dspy.streaming.StreamListener(signature_field_name="answer")],
        is_async_program=True,
    )
    values = run(stream(question="?"))
    assert values[-1].simplified_answer == "42"
    assert "".join(v.chunk for v in values[:-1]) == "forty two"
    assert {v.predict_name for v in values[:-1]} == {"predict1"}
