"""Reasoning and tool-call arguments streamed as they come, over both transports.

`lm.stream(..., pieces=True)` hands out the provider's reasoning (`ReasoningPiece`) and
each tool call's argument text (`ToolCallPiece`) beside the text; `Predict.stream` turns
them into `ReasoningDelta` events and, for `ToolOutputAdapter`, into the outputs' events
while the arguments are still being written.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

import structio as sio
from structio.lm import ReasoningPiece, ToolCallPiece
from tests.wire.pieces import check_pieces
from tests.wire.server import OpenAIServer, Reply
from tests.wire.test_stream import ended

MakeLM = Callable[..., sio.LM]
MESSAGES = [{"role": "user", "content": "Hi"}]
THOUGHT = "The user greets me. I should answer briefly, and call the tool once."
ARGUMENTS = {"reasoning": "Two and two make four, as counting on fingers shows.", "answer": 4}


class QA(sio.Signature):
    """Answer the question."""

    question: str = sio.InputField()
    reasoning: str = sio.OutputField()
    answer: int = sio.OutputField()


def answer_call(arguments: dict[str, Any] = ARGUMENTS) -> dict[str, Any]:
    """The forced call to ToolOutputAdapter's tool, as OpenAI returns it."""
    return {
        "id": "call_1",
        "type": "function",
        "function": {"name": "final_answer", "arguments": json.dumps(arguments)},
    }


def test_lm_stream_hands_out_reasoning_and_arguments_only_when_asked(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    reply = Reply(
        content="Calling it.",
        reasoning_content=THOUGHT,
        tool_calls=[answer_call(), {**answer_call({"x": [1, 2]}), "id": "call_2"}],
        chunk_size=5,
    )
    server.reply(reply)
    items = list(make_lm().stream(MESSAGES, pieces=True))
    response = check_pieces(items)
    assert response.completions[0].reasoning == THOUGHT
    reasonings = [item for item in items if isinstance(item, ReasoningPiece)]
    calls = [item for item in items if isinstance(item, ToolCallPiece)]
    assert len(reasonings) > 1
    assert len(calls) > 2
    assert {call.index for call in calls} == {0, 1}
    # The reasoning came before the text, the calls after it, as the server sent them.
    first_text = next(i for i, item in enumerate(items) if isinstance(item, str))
    assert items.index(reasonings[-1]) < first_text < items.index(calls[0])
    # Without `pieces`, a stream gives the text only (what `lm.stream` always gave).
    server.reply(reply)
    plain = list(make_lm().stream(MESSAGES))
    assert all(isinstance(item, str) for item in plain[:-1])
    assert "".join(plain[:-1]) == "Calling it."


def test_a_cached_answer_replays_its_reasoning_and_calls(
    server: OpenAIServer, make_lm: MakeLM, tmp_path: Any
) -> None:
    cache = sio.ResponseCache(tmp_path / "cache")
    try:
        server.reply(Reply(content="ok", reasoning_content=THOUGHT, tool_calls=[answer_call()]))
        lm = make_lm(cache=cache)
        first = check_pieces(list(lm.stream(MESSAGES, pieces=True)))
        again = list(lm.stream(MESSAGES, pieces=True))
        assert len(server.requests) == 1
        assert check_pieces(again).cached
        assert again[0] == ReasoningPiece(THOUGHT)
        assert first.completions[0].tool_calls == again[-1].completions[0].tool_calls
    finally:
        cache.close()


def test_native_reasoning_streams_as_its_own_event(server: OpenAIServer, make_lm: MakeLM) -> None:
    chat = "[[ ## reasoning ## ]]\nCounting.\n\n[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]"
    server.reply(Reply(content=chat, reasoning_content=THOUGHT, chunk_size=4))
    items = list(sio.Predict(QA, lm=make_lm()).stream(question="2+2?"))
    prediction = items[-1]
    assert isinstance(prediction, sio.Prediction)
    thoughts = [e for e in items if isinstance(e, sio.ReasoningDelta)]
    assert len(thoughts) > 1
    assert "".join(e.delta for e in thoughts) == THOUGHT == prediction.lm_reasoning
    # Never mixed into an output: the outputs' text is the answer's alone.
    deltas = "".join(e.delta for e in items if isinstance(e, sio.FieldDelta))
    assert deltas == "Counting."
    first_output = next(i for i, e in enumerate(items) if isinstance(e, sio.FieldDelta))
    assert items.index(thoughts[-1]) < first_output


def _held_reply(arguments: dict[str, Any]) -> tuple[Reply, int]:
    """A tool-call reply held by the server once the first output's value is complete."""
    text = json.dumps(arguments)
    size = 5
    closes_first = text.index(', "answer"') + 1  # the comma that makes `reasoning` whole
    # Chunks: the opening one, then the arguments in pieces of `size`; hold after the one
    # holding the comma, and one more.
    hold = 1 + closes_first // size + 2
    return Reply(content=None, tool_calls=[answer_call(arguments)], chunk_size=size), hold


def test_tool_output_values_arrive_while_the_arguments_stream(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    reply, hold = _held_reply(ARGUMENTS)
    reply.hold_after = hold
    server.reply(reply)
    predict = sio.Predict(QA, lm=make_lm(), adapter=sio.ToolOutputAdapter())
    seen: list[Any] = []
    for item in predict.stream(question="2+2?"):
        seen.append(item)
        if item == sio.FieldValue("reasoning", ARGUMENTS["reasoning"]):
            reply.release.set()  # the server sends the rest only now
    log = ended(server)
    assert log.completed
    assert log.released is True
    prediction = seen[-1]
    assert isinstance(prediction, sio.Prediction)
    assert (prediction.reasoning, prediction.answer) == (ARGUMENTS["reasoning"], 4)
    deltas = [e.delta for e in seen if isinstance(e, sio.FieldDelta)]
    assert len(deltas) > 2
    assert "".join(deltas) == ARGUMENTS["reasoning"]
    assert sio.FieldValue("answer", 4) in seen
    assert not any(isinstance(e, sio.Reread) for e in seen)


def test_tool_output_streams_in_async_too(server: OpenAIServer, make_lm: MakeLM) -> None:
    reply, _ = _held_reply(ARGUMENTS)
    server.reply(reply)
    predict = sio.Predict(QA, lm=make_lm(), adapter=sio.ToolOutputAdapter())

    async def read() -> list[Any]:
        return [item async for item in predict.astream(question="2+2?")]

    seen = asyncio.run(read())
    deltas = [e.delta for e in seen if isinstance(e, sio.FieldDelta)]
    assert len(deltas) > 2
    assert "".join(deltas) == ARGUMENTS["reasoning"]
    assert seen[-2:] == [sio.FieldValue("answer", 4), seen[-1]]
    assert isinstance(seen[-1], sio.Prediction)


@pytest.mark.parametrize("other", ["lookup", None])
def test_tool_output_reads_only_the_answer_tools_first_call(
    server: OpenAIServer, make_lm: MakeLM, other: str | None
) -> None:
    # A call to another tool (or a second call to the answer tool) streams nothing.
    decoy = answer_call({"reasoning": "not this", "answer": 1})
    decoy["id"] = "call_0"
    if other is not None:
        decoy["function"]["name"] = other
    calls = [decoy, answer_call()] if other is not None else [answer_call(), decoy]
    server.reply(Reply(content=None, tool_calls=calls, chunk_size=5))
    predict = sio.Predict(QA, lm=make_lm(), adapter=sio.ToolOutputAdapter())
    items = list(predict.stream(question="2+2?"))
    assert not any(isinstance(e, sio.Reread) for e in items)
    values = [e for e in items if isinstance(e, sio.FieldValue)]
    assert values == [
        sio.FieldValue("reasoning", ARGUMENTS["reasoning"]),
        sio.FieldValue("answer", 4),
    ]
