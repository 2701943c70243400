"""Predict over the real wire: adapters per call, structured output, fallback, batch."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Literal

import pytest

import structio as sio
from tests.wire.server import OpenAIServer, Reply, Request

MakeLM = Callable[..., sio.LM]


class Triage(sio.Signature):
    """Route a support ticket."""

    ticket: str = sio.InputField()
    category: Literal["billing", "bug", "other"] = sio.OutputField()
    urgency: int = sio.OutputField(ge=1, le=5)


CHAT_ANSWER = "[[ ## category ## ]]\nbilling\n\n[[ ## urgency ## ]]\n4\n\n[[ ## completed ## ]]"
JSON_ANSWER = '{"category": "bug", "urgency": 2}'


def test_predict_with_the_chat_adapter(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content=CHAT_ANSWER))
    pred = sio.Predict(Triage, lm=make_lm())(ticket="charged twice")
    assert (pred.category, pred.urgency) == ("billing", 4)
    assert pred.path == "chat"
    assert pred.usage.prompt_tokens == 11
    (request,) = server.requests
    assert request.messages == sio.ChatAdapter().format(Triage, inputs={"ticket": "charged twice"})
    assert "response_format" not in request.body


def test_adapter_swapped_per_call_sends_the_json_prompt_and_response_format(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(content=JSON_ANSWER))
    triage = sio.Predict(Triage, lm=make_lm())
    pred = triage(ticket="crash on start", adapter=sio.JSONAdapter())
    assert (pred.category, pred.urgency, pred.path) == ("bug", 2, "json")
    (request,) = server.requests
    assert request.messages == sio.JSONAdapter().format(Triage, inputs={"ticket": "crash on start"})
    assert "Outputs will be a JSON object" in request.messages[0]["content"]
    # litellm lists response_format for this OpenAI-compatible model but no schema support.
    assert request.body["response_format"] == {"type": "json_object"}


def test_strict_json_schema_when_the_model_supports_it(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    lm = make_lm(profile={"json_schema": True})
    server.reply(Reply(content=JSON_ANSWER))
    sio.Predict(Triage, lm=lm, adapter=sio.JSONAdapter())(ticket="x")
    response_format = server.requests[0].body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["strict"] is True
    schema = response_format["json_schema"]["schema"]
    assert schema["required"] == ["category", "urgency"]
    assert schema["additionalProperties"] is False
    # An open dict output cannot be strict: JSON mode, never a schema that forces {}.
    open_dict = sio.Signature("q -> data: dict[str, int]")
    server.reply(Reply(content='{"data": {"a": 1}}'))
    pred = sio.Predict(open_dict, lm=lm, adapter=sio.JSONAdapter())(q="x")
    assert pred.data == {"a": 1}
    assert server.requests[1].body["response_format"] == {"type": "json_object"}


def test_a_callers_response_format_wins(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content=JSON_ANSWER))
    chosen = {"type": "text"}
    sio.Predict(Triage, lm=make_lm(), adapter=sio.JSONAdapter())(
        ticket="x", config={"response_format": chosen}
    )
    assert server.requests[0].body["response_format"] == chosen


def test_fallback_rereads_the_same_completion_as_json(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(content=f"Sure!\n```json\n{JSON_ANSWER}\n```"))
    pred = sio.Predict(Triage, lm=make_lm())(ticket="x")
    assert (pred.category, pred.urgency) == ("bug", 2)
    assert pred.path == "json_reparse"
    assert len(server.requests) == 1


def test_fallback_makes_one_json_request_when_rereading_fails(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(content="I think it is a billing problem."), Reply(content=JSON_ANSWER))
    pred = sio.Predict(Triage, lm=make_lm())(ticket="x")
    assert (pred.category, pred.urgency, pred.path) == ("bug", 2, "json_request")
    assert len(server.requests) == 2
    assert "response_format" not in server.requests[0].body
    assert server.requests[1].body["response_format"] == {"type": "json_object"}
    assert "Respond with a JSON object" in server.requests[1].messages[-1]["content"]
    assert len(pred.responses) == 2
    assert pred.usage.prompt_tokens == 22  # both requests counted


def test_fallback_failure_raises_the_chat_error_with_the_json_error_as_cause(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.default = Reply(content="no idea")
    with pytest.raises(sio.ParseError) as info:
        sio.Predict(Triage, lm=make_lm())(ticket="x")
    # The adapter the call was made with; the fallback's failure is said, and is the cause.
    assert info.value.adapter == "ChatAdapter"
    assert str(info.value).startswith("ChatAdapter could not parse")
    assert "neither could the fallback, JSONAdapter" in str(info.value)
    assert isinstance(info.value.__cause__, sio.ParseError)
    assert info.value.__cause__.adapter == "JSONAdapter"
    assert len(server.requests) == 2


def test_fallback_can_be_disabled(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.default = Reply(content="I would say billing, fairly urgent.")
    with pytest.raises(sio.ParseError) as info:
        sio.Predict(Triage, lm=make_lm(), adapter=sio.ChatAdapter(fallback=None))(ticket="x")
    assert info.value.adapter == "ChatAdapter"
    assert len(server.requests) == 1


def test_lm_errors_never_trigger_the_fallback(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.default = Reply(status=400, error_message="bad request")
    with pytest.raises(sio.BadRequestError):
        sio.Predict(Triage, lm=make_lm())(ticket="x")
    assert len(server.requests) == 1


def test_truncated_completion_says_so(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(
        Reply(content="[[ ## category ## ]]\nbilling\n\n[[ ## urg", finish_reason="length")
    )
    with pytest.raises(sio.ParseError) as info:
        sio.Predict(Triage, lm=make_lm(max_tokens=12))(ticket="x")
    assert info.value.truncated
    assert "cut off by the token limit" in str(info.value)
    assert "raise max_tokens" in str(info.value)
    assert len(server.requests) == 1  # a truncated answer is not retried as JSON


def test_n_completions(server: OpenAIServer, make_lm: MakeLM) -> None:
    other = CHAT_ANSWER.replace("billing", "other")
    server.reply(Reply(content=[CHAT_ANSWER, other]))
    pred = sio.Predict(Triage, lm=make_lm(), n=2)(ticket="x")
    assert pred.category == "billing"
    assert [c["category"] for c in pred.completions] == ["billing", "other"]
    assert server.requests[0].body["n"] == 2


def test_async_predict(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content=CHAT_ANSWER))
    pred = asyncio.run(sio.Predict(Triage, lm=make_lm()).acall(ticket="x"))
    assert pred.category == "billing"


def test_async_fallback_request(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content="hmm"), Reply(content=JSON_ANSWER))
    pred = asyncio.run(sio.Predict(Triage, lm=make_lm()).acall(ticket="x"))
    assert pred.path == "json_request"
    assert len(server.requests) == 2


def _answer_by_ticket(request: Request) -> Reply:
    ticket = request.messages[-1]["content"].split("\n")[1]
    if ticket == "poison":
        return Reply(status=400, error_message="rejected", delay=0.2)
    return Reply(content=CHAT_ANSWER.replace("4", ticket[-1]), delay=0.3)


def test_batch_runs_in_parallel_keeps_order_and_survives_a_failure(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.handler = _answer_by_ticket
    items = [{"ticket": f"ticket {i}"} for i in range(1, 6)]
    items.insert(2, {"ticket": "poison"})
    results = sio.Predict(Triage, lm=make_lm()).batch(items, max_concurrency=4)
    assert len(results) == 6
    assert isinstance(results[2], sio.BadRequestError)
    good = [r for i, r in enumerate(results) if i != 2]
    assert [r.urgency for r in good if isinstance(r, sio.Prediction)] == [1, 2, 3, 4, 5]
    assert server.max_in_flight == 4  # parallel, and never more than asked
    assert len(server.requests) == 6


def test_batch_without_return_exceptions_raises_with_every_result(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.handler = _answer_by_ticket
    items = [{"ticket": "ticket 1"}, {"ticket": "poison"}, {"ticket": "ticket 3"}]
    with pytest.raises(sio.BatchError) as info:
        sio.Predict(Triage, lm=make_lm()).batch(items, return_exceptions=False)
    error = info.value
    assert [i for i, _ in error.errors] == [1]
    assert isinstance(error.results[0], sio.Prediction)
    assert isinstance(error.results[2], sio.Prediction)
    assert "1 of 3 batch items failed" in str(error)


def test_async_batch(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.handler = _answer_by_ticket
    items = [{"ticket": f"ticket {i}"} for i in range(1, 5)]
    results = asyncio.run(sio.Predict(Triage, lm=make_lm()).abatch(items, max_concurrency=2))
    assert [r.urgency for r in results if isinstance(r, sio.Prediction)] == [1, 2, 3, 4]
    assert server.max_in_flight == 2


def test_batch_goes_through_the_cache(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.default = Reply(content=CHAT_ANSWER)
    triage = sio.Predict(Triage, lm=make_lm(cache=True))
    items = [{"ticket": "same"}] * 1 + [{"ticket": "other"}]
    triage.batch(items)
    triage.batch(items)
    assert len(server.requests) == 2


def test_server_saw_the_signature_prompt(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content="[[ ## answer ## ]]\n4"))
    assert sio.Predict("question -> answer", lm=make_lm())(question="2+2?").answer == "4"
    body = json.dumps(server.requests[0].body)
    assert "[[ ## question ## ]]\\n2+2?" in body


class Conversation(sio.Signature):
    """Answer the latest question."""

    question: str = sio.InputField()
    history: sio.History = sio.InputField()
    answer: str = sio.OutputField()


LONG_HISTORY = sio.History(
    [
        {"question": f"question {i} " + "lorem ipsum " * 40, "answer": f"answer {i}"}
        for i in range(30)
    ]
)


def test_max_prompt_tokens_truncates_history_before_the_call(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(content="[[ ## answer ## ]]\nok"))
    full = sio.ChatAdapter().render(Conversation, [], {"question": "now?", "history": LONG_HISTORY})
    predict = sio.Predict(Conversation, lm=make_lm(), max_prompt_tokens=1500, truncation_step=200)
    pred = predict(question="now?", history=LONG_HISTORY)
    sent = server.requests[0].messages
    assert sent[0] == full.messages[0]
    assert sent[-1] == full.messages[-1]
    assert len(sent) < len(full.messages)
    assert pred.truncation is not None
    assert pred.truncation.reason == "max_prompt_tokens"
    assert pred.truncation.token_limit == 1500
    assert pred.truncation.tokens_before == full.token_count
    assert pred.truncation.tokens_after <= 1500
    assert pred.truncation.dropped[:2] == ("history_1_user", "history_1_assistant")
    # The remaining history is the newest turns, in order.
    assert sent[-2]["content"].startswith("[[ ## answer ## ]]\nanswer 29")


def test_no_truncation_when_the_prompt_fits(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content="[[ ## answer ## ]]\nok"))
    pred = sio.Predict(Conversation, lm=make_lm(), max_prompt_tokens=100_000)(question="q")
    assert pred.truncation is None


def test_context_window_exceeded_truncates_to_the_model_limit_and_retries_once(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    too_long = Reply(
        status=400,
        error_message="maximum context length is 2000 tokens",
        error_code="context_length_exceeded",
    )
    server.reply(too_long, Reply(content="[[ ## answer ## ]]\nshorter now"))
    pred = sio.Predict(Conversation, lm=make_lm(context_window=2000))(
        question="now?", history=LONG_HISTORY
    )
    assert pred.answer == "shorter now"
    assert len(server.requests) == 2
    assert len(server.requests[1].messages) < len(server.requests[0].messages)
    assert pred.truncation is not None
    assert pred.truncation.reason == "context_window"
    assert pred.truncation.token_limit == 1800  # 90% of the model's 2000
    assert pred.truncation.tokens_after <= 1800


def test_context_window_retry_happens_once(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.default = Reply(
        status=400, error_message="too long", error_code="context_length_exceeded"
    )
    with pytest.raises(sio.ContextWindowExceededError):
        sio.Predict(Conversation, lm=make_lm(context_window=2000))(
            question="now?", history=LONG_HISTORY
        )
    assert len(server.requests) == 2


def test_context_window_unknown_means_no_retry(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.default = Reply(
        status=400, error_message="too long", error_code="context_length_exceeded"
    )
    with pytest.raises(sio.ContextWindowExceededError):
        sio.Predict(Conversation, lm=make_lm())(question="now?", history=LONG_HISTORY)
    assert len(server.requests) == 1  # litellm does not know "openai/test": nothing to cut to


def test_context_window_with_nothing_left_to_drop(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.default = Reply(
        status=400, error_message="too long", error_code="context_length_exceeded"
    )
    with pytest.raises(sio.ContextWindowExceededError):
        sio.Predict(Conversation, lm=make_lm(context_window=100_000))(question="now?")
    assert len(server.requests) == 1  # no history: resending the same prompt cannot help


def test_async_context_window_retry(server: OpenAIServer, make_lm: MakeLM) -> None:
    too_long = Reply(status=400, error_message="too long", error_code="context_length_exceeded")
    server.reply(too_long, Reply(content="[[ ## answer ## ]]\nok"))
    predict = sio.Predict(Conversation, lm=make_lm(context_window=2000))
    pred = asyncio.run(predict.acall(question="now?", history=LONG_HISTORY))
    assert pred.truncation is not None
    assert pred.truncation.reason == "context_window"
