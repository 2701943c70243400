"""A `Predict` takes an `Example` (or a dict) as its inputs: only marked inputs are sent."""

from __future__ import annotations

import asyncio

import pytest

import structio as sio

QA = sio.Signature("question -> answer: int")
ANSWER = "[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]"


def sent_inputs(lm: sio.FakeLM) -> list[str]:
    return [str(call.messages[-1]["content"]) for call in lm.calls]


def test_a_marked_example_sends_only_its_inputs() -> None:
    lm = sio.FakeLM(lambda _m: ANSWER)
    ex = sio.Example(question="2+2?", answer="4", source="web").with_inputs("question")
    pred = sio.Predict(QA, lm=lm)(ex)
    assert pred.answer == 4
    (prompt,) = sent_inputs(lm)
    assert "[[ ## question ## ]]\n2+2?" in prompt
    assert "web" not in prompt


def test_an_unmarked_example_with_labels_says_to_mark_its_inputs() -> None:
    lm = sio.FakeLM([])
    ex = sio.Example(question="2+2?", answer="4")
    with pytest.raises(sio.FormatError, match=r"'answer'.*example\.with_inputs\('question'\)"):
        sio.Predict(QA, lm=lm)(ex)
    assert lm.call_count == 0


def test_an_unmarked_example_of_inputs_only_is_sent_whole() -> None:
    lm = sio.FakeLM(lambda _m: ANSWER)
    assert sio.Predict(QA, lm=lm)(sio.Example(question="2+2?")).answer == 4


def test_a_dict_and_keywords_together() -> None:
    lm = sio.FakeLM(lambda _m: ANSWER)
    two = sio.Predict("question, context -> answer: int", lm=lm)
    assert two({"question": "q"}, context="c").answer == 4
    with pytest.raises(sio.FormatError, match="'question' given both in the example"):
        two({"question": "q"}, question="again", context="c")


def test_a_missing_input_is_still_an_error() -> None:
    ex = sio.Example(context="c", answer="4").with_inputs("context")
    with pytest.raises(sio.FormatError, match="question"):
        sio.Predict("question, context -> answer: int", lm=sio.FakeLM([]))(ex)


def test_anything_else_by_position_is_refused() -> None:
    with pytest.raises(sio.FormatError, match="as keywords, or as one Example or dict, not str"):
        sio.Predict(QA, lm=sio.FakeLM([]))("2+2?")  # type: ignore[arg-type]


def test_batch_and_abatch_take_examples() -> None:
    devset = [
        sio.Example(question=f"{i}+{i}?", gold=f"gold-{i}").with_inputs("question")
        for i in range(3)
    ]
    lm = sio.FakeLM(lambda _m: ANSWER)
    predict = sio.Predict(QA, lm=lm)
    results = predict.batch(devset, num_threads=2, progress=False)
    assert all(isinstance(r, sio.Prediction) and r.answer == 4 for r in results)
    again = asyncio.run(predict.abatch(devset, progress=False))
    assert all(isinstance(r, sio.Prediction) for r in again)
    prompts = sent_inputs(lm)
    assert len(prompts) == 6
    assert not any("gold" in prompt for prompt in prompts)


def test_a_batch_item_with_labels_fails_in_its_place() -> None:
    items = [sio.Example(question="q", answer="4"), sio.Example(question="q")]
    results = sio.Predict(QA, lm=sio.FakeLM(lambda _m: ANSWER)).batch(items, progress=False)
    assert isinstance(results[0], sio.FormatError)
    assert isinstance(results[1], sio.Prediction)


def test_stream_takes_an_example() -> None:
    ex = sio.Example(question="2+2?", answer="4").with_inputs("question")
    with sio.Predict(QA, lm=sio.FakeLM([ANSWER])).stream(ex) as stream:
        events = list(stream)
    assert stream.result.answer == 4
    assert events[-1] == stream.result


def test_acall_takes_an_example() -> None:
    ex = sio.Example(question="2+2?", answer="4").with_inputs("question")
    pred = asyncio.run(sio.Predict(QA, lm=sio.FakeLM([ANSWER])).acall(ex))
    assert pred.answer == 4


def test_submit_batch_refuses_labels_before_anything_is_sent() -> None:
    predict = sio.Predict(QA, lm=sio.LM("openai/gpt-4o-mini", api_base="http://127.0.0.1:9"))
    with pytest.raises(sio.FormatError, match="with_inputs"):
        predict.submit_batch([sio.Example(question="q", answer="4")], progress=False)
