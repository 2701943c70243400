"""Re-asking over the real wire: the server sees the feedback; attempts and usage add up."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import structio as sio
from tests.wire.server import OpenAIServer, Reply

USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def test_the_server_sees_the_answer_and_the_feedback(
    server: OpenAIServer, make_lm: Callable[..., sio.LM]
) -> None:
    server.reply(
        Reply("[[ ## answer ## ]]\nabout four\n\n[[ ## completed ## ]]", usage=USAGE),
        Reply("[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]", usage=USAGE),
    )
    pred = sio.Predict("question -> answer: int", lm=make_lm(), max_retries=1)(question="2+2?")
    assert pred.answer == 4
    assert len(server.requests) == 2
    messages = server.requests[1].messages
    assert messages[-2] == {
        "role": "assistant",
        "content": "[[ ## answer ## ]]\nabout four\n\n[[ ## completed ## ]]",
    }
    assert messages[-1]["role"] == "user"
    assert "- `answer`: expected int" in messages[-1]["content"]
    assert pred.usage.prompt_tokens == 20
    assert pred.usage.completion_tokens == 10
    assert [a.usage.total_tokens for a in pred.attempts] == [15]


def test_attempts_stop_at_the_bound(server: OpenAIServer, make_lm: Callable[..., sio.LM]) -> None:
    server.default = Reply("[[ ## answer ## ]]\nabout four\n\n[[ ## completed ## ]]")
    with pytest.raises(sio.ParseError) as exc:
        sio.Predict("question -> answer: int", lm=make_lm(), max_retries=2)(question="2+2?")
    assert len(server.requests) == 3
    assert len(exc.value.attempts) == 2


def test_a_provider_error_is_not_re_asked(
    server: OpenAIServer, make_lm: Callable[..., sio.LM]
) -> None:
    server.reply(Reply(status=400, error_message="bad request"))
    with pytest.raises(sio.BadRequestError):
        sio.Predict("question -> answer: int", lm=make_lm(), max_retries=3)(question="?")
    assert len(server.requests) == 1
