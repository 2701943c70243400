"""Every call option through every caller and every verb: one flow, the same behaviour.

Callers: `Predict`, `@prompt`, `@chatprompt` (their own options, given at construction or
decoration), `Predict.batch` / `abatch`, `structio run` and provider batches (which prepare
the request as the online call does). Verbs: call, async call, stream, async stream.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from structio.call import CallOptions, prepare
from structio.run import run_file

GOOD = "[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]"
BAD = "[[ ## answer ## ]]\nfour-ish\n\n[[ ## completed ## ]]"
JSON_GOOD = '{"answer": 4}'

CALLERS = ("predict", "prompt", "chatprompt")
VERBS = ("call", "acall", "stream", "astream")


def make(caller: str, lm: sio.FakeLM, **options: Any) -> Callable[..., Any]:
    """A caller of "question -> answer: int" with ``options``, as users write each one."""
    if caller == "predict":
        return sio.Predict("question -> answer: int", lm=lm, **options)
    if caller == "prompt":

        @sio.prompt("Q: {question}", lm=lm, **options)
        def answer(question: str) -> int: ...

        return answer

    @sio.chatprompt(sio.UserMessage("Q: {question}"), lm=lm, **options)
    def chat_answer(question: str) -> int: ...

    return chat_answer


def run(function: Any, verb: str) -> int:
    """The answer of one call with ``verb``; a Predict's `Prediction` read as its answer."""
    args: tuple[Any, ...] = () if isinstance(function, sio.Predict) else ("2+2?",)
    kwargs = {"question": "2+2?"} if isinstance(function, sio.Predict) else {}
    if verb == "call":
        out = function(*args, **kwargs)
    elif verb == "acall":
        out = asyncio.run(function.acall(*args, **kwargs))
    elif verb == "stream":
        with function.stream(*args, **kwargs) as stream:
            items = list(stream)
        out = items[-1]
    else:

        async def consume() -> Any:
            items = [item async for item in function.astream(*args, **kwargs)]
            return items[-1]

        out = asyncio.run(consume())
    return out.answer if isinstance(out, sio.Prediction) else out


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("caller", CALLERS)
def test_max_retries_re_asks_with_what_was_wrong(caller: str, verb: str) -> None:
    lm = sio.FakeLM([BAD, GOOD])
    assert run(make(caller, lm, max_retries=1), verb) == 4
    assert len(lm.calls) == 2
    first, second = lm.calls[0].messages, lm.calls[1].messages
    assert second[: len(first)] == first  # the same conversation, continued
    assert second[len(first)] == {"role": "assistant", "content": BAD}
    assert "`answer`" in second[-1]["content"]


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("caller", CALLERS)
def test_without_re_asks_the_fallback_asks_again_in_json(caller: str, verb: str) -> None:
    lm = sio.FakeLM([BAD, JSON_GOOD])
    assert run(make(caller, lm), verb) == 4
    assert len(lm.calls) == 2
    assert "JSON" in lm.calls[1].messages[0]["content"]
    assert {"role": "assistant", "content": BAD} not in lm.calls[1].messages  # no re-ask


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("caller", CALLERS)
def test_re_asks_run_out_and_raise_with_every_attempt(caller: str, verb: str) -> None:
    lm = sio.FakeLM([BAD, BAD, BAD])
    with pytest.raises(sio.ParseError) as raised:
        run(make(caller, lm, max_retries=2), verb)
    assert len(lm.calls) == 3
    assert len(raised.value.attempts) == 2


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("caller", CALLERS)
def test_max_prompt_tokens_is_the_budget_of_every_request(caller: str, verb: str) -> None:
    lm = sio.FakeLM([GOOD])
    with pytest.raises(sio.TruncationError):  # the parts that cannot be cut exceed it
        run(make(caller, lm, max_prompt_tokens=5), verb)
    assert not lm.calls
    assert run(make(caller, lm, max_prompt_tokens=5_000), verb) == 4


@pytest.mark.parametrize("verb", VERBS)
def test_predict_cuts_its_history_to_the_budget_in_every_verb(verb: str) -> None:
    sig = sio.Signature("history: History, question -> answer: int")
    turns = [{"question": f"old question {i} " * 20, "answer": i} for i in range(20)]
    lm = sio.FakeLM([GOOD])
    predict = sio.Predict(sig, lm=lm, max_prompt_tokens=400)
    inputs = {"history": sio.History(messages=turns), "question": "2+2?"}
    if verb == "call":
        pred = predict(**inputs)
    elif verb == "acall":
        pred = asyncio.run(predict.acall(**inputs))
    elif verb == "stream":
        pred = list(predict.stream(**inputs))[-1]
    else:

        async def consume() -> Any:
            return [item async for item in predict.astream(**inputs)][-1]

        pred = asyncio.run(consume())
    assert pred.answer == 4
    assert pred.truncation is not None
    assert pred.truncation.reason == "max_prompt_tokens"
    assert pred.truncation.tokens_after <= 400


@pytest.mark.parametrize("verb", VERBS)
def test_predict_checks_inputs_unless_told_not_to_in_every_verb(verb: str) -> None:
    sig = sio.Signature("question: str, count: int -> answer: int")
    with pytest.raises(sio.FormatError, match="count"):
        run_predict(sio.Predict(sig, lm=sio.FakeLM([GOOD])), verb, count="many")
    lm = sio.FakeLM([GOOD])
    assert run_predict(sio.Predict(sig, lm=lm, check_inputs=False), verb, count="many") == 4
    assert "many" in lm.calls[0].messages[-1]["content"]


def run_predict(predict: sio.Predict, verb: str, **inputs: Any) -> int:
    inputs = {"question": "?", **inputs}
    if verb == "call":
        return int(predict(**inputs).answer)
    if verb == "acall":
        return int(asyncio.run(predict.acall(**inputs)).answer)
    if verb == "stream":
        return int(list(predict.stream(**inputs))[-1].answer)

    async def consume() -> Any:
        return [item async for item in predict.astream(**inputs)][-1]

    return int(asyncio.run(consume()).answer)


@pytest.mark.parametrize("verb", VERBS)
def test_a_per_call_max_retries_overrides_the_predictors(verb: str) -> None:
    lm = sio.FakeLM([BAD, GOOD])
    predict = sio.Predict("question -> answer: int", lm=lm)
    if verb == "call":
        pred = predict(question="?", max_retries=1)
    elif verb == "acall":
        pred = asyncio.run(predict.acall(question="?", max_retries=1))
    elif verb == "stream":
        pred = list(predict.stream(question="?", max_retries=1))[-1]
    else:

        async def consume() -> Any:
            return [item async for item in predict.astream(question="?", max_retries=1)][-1]

        pred = asyncio.run(consume())
    assert pred.answer == 4
    assert len(pred.attempts) == 1  # a re-ask, not the fallback
    assert predict.max_retries == 0  # the predictor's own option is unchanged


@pytest.mark.parametrize("kind", ["batch", "abatch"])
def test_batches_of_calls_re_ask_as_single_calls(kind: str) -> None:
    lm = sio.FakeLM([BAD, GOOD])
    predict = sio.Predict("question -> answer: int", lm=lm, max_retries=1)
    rows = [{"question": "2+2?"}]
    if kind == "batch":
        results = predict.batch(rows, max_concurrency=1, progress=False)
    else:
        results = asyncio.run(predict.abatch(rows, max_concurrency=1, progress=False))
    assert [r.answer for r in results if isinstance(r, sio.Prediction)] == [4]
    assert len(lm.calls) == 2


def test_structio_run_passes_the_predictors_options(tmp_path: Path) -> None:
    lm = sio.FakeLM([BAD, GOOD])
    predict = sio.Predict("question -> answer: int", lm=lm, max_retries=1)
    summary = run_file(predict, [{"question": "2+2?"}], tmp_path / "out.jsonl", progress=False)
    assert summary.done == 1
    row = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])
    assert row["outputs"] == {"answer": 4}
    assert len(lm.calls) == 2


def test_a_provider_batch_request_is_the_online_calls_first_request() -> None:
    sig = sio.Signature("history: History, question -> answer: int")
    turns = [{"question": f"old question {i} " * 20, "answer": i} for i in range(20)]
    inputs = {"history": sio.History(messages=turns), "question": "2+2?"}
    options = CallOptions(max_prompt_tokens=400)
    prepared = prepare(sio.ChatAdapter(), sio.FakeLM([]), sig, inputs=inputs, options=options)
    lm = sio.FakeLM([GOOD])
    sio.Predict(sig, lm=lm, max_prompt_tokens=400)(**inputs)
    assert prepared.messages == lm.calls[0].messages


def test_options_are_one_checked_value() -> None:
    predict = sio.Predict("question -> answer: int", max_retries=2, max_prompt_tokens=900)
    assert predict.options == CallOptions(max_prompt_tokens=900, max_retries=2)
    predict.max_retries = 1
    assert predict.options.max_retries == 1
    with pytest.raises(sio.ConfigurationError, match="max_retries"):
        predict.max_retries = -1
    with pytest.raises(sio.ConfigurationError, match="max_prompt_tokens"):
        sio.Predict("question -> answer: int", max_prompt_tokens=0)
    with pytest.raises(sio.ConfigurationError, match="max_retries"):

        @sio.prompt("{q}", max_retries="2")
        def f(q: str) -> int: ...

    with pytest.raises(sio.ConfigurationError, match="not call option"):
        CallOptions().replace(retries=2)
    assert CallOptions().replace(max_retries=3).to_dict() == {"max_retries": 3}


def test_prompt_options_are_not_sent_as_request_parameters() -> None:
    lm = sio.FakeLM([GOOD])

    @sio.prompt("Q: {question}", lm=lm, max_retries=1, temperature=0.5)
    def answer(question: str) -> int: ...

    assert answer("?") == 4
    assert answer.options.max_retries == 1
    assert answer.params == {"temperature": 0.5}
    assert lm.calls[0].params.get("max_retries") is None


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("caller", CALLERS)
def test_confidence_asks_for_logprobs_or_is_refused(caller: str, verb: str) -> None:
    lm = sio.FakeLM([GOOD], profile={"logprobs": True})
    assert run(make(caller, lm, confidence=True), verb) == 4
    assert lm.calls[0].params["logprobs"] is True
    assert lm.calls[0].params["top_logprobs"] == 5
    refused = sio.FakeLM([GOOD])  # its profile says no logprobs
    with pytest.raises(sio.ConfigurationError, match="logprobs"):
        run(make(caller, refused, confidence=True), verb)
    assert not refused.calls
    plain = sio.FakeLM([GOOD], profile={"logprobs": True})
    assert run(make(caller, plain), verb) == 4
    assert "logprobs" not in plain.calls[0].params
