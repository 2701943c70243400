"""Streaming over the real wire: text and field events as the server sends them.

Every test that takes ``make_lm`` runs once per transport (direct httpx and litellm): the
loopback server streams server-sent events when a request says ``"stream": true``, and
records what it sent, when, and whether the client went away before the end.
"""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import structio as sio
from structio.lm import lm as lm_module
from tests.wire.server import OpenAIServer, Reply, StreamLog

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi?"}]
TEXT = "Hello there, this answer is streamed in small pieces."
MakeLM = Callable[..., sio.LM]

# The server's usage chunk (see `Reply.usage`), as structio reads it.
SERVER_USAGE = sio.Usage(prompt_tokens=11, completion_tokens=3, cached_tokens=4)
# Long enough for a stream that would take seconds to send whole (see the cancel tests).
LONG_TEXT = "word " * 120


class QA(sio.Signature):
    """Answer the question."""

    question: str = sio.InputField()
    reasoning: str = sio.OutputField()
    answer: int = sio.OutputField()


REASONING = "Two and two make four, as counting shows."
CHAT_REPLY = f"[[ ## reasoning ## ]]\n{REASONING}\n\n[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]"
JSON_REPLY = '{"reasoning": "Sum of two pairs.", "answer": 4}'
LONG_CHAT_REPLY = (
    f"[[ ## reasoning ## ]]\n{LONG_TEXT}\n\n[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]"
)


@pytest.fixture
def disk_cache(tmp_path: Path) -> Iterator[sio.ResponseCache]:
    """A response cache of this test's own, on disk, closed at the end."""
    cache = sio.ResponseCache(tmp_path / "stream-cache")
    yield cache
    cache.close()


def pieces_of(items: Sequence[Any]) -> list[str]:
    """The text pieces of an LM stream's items (everything but the final response).

    Args:
        items: What iterating an `LMStream` gave.

    Returns:
        The ``str`` items, checked to be all the items but the last.
    """
    pieces = [item for item in items if isinstance(item, str)]
    assert pieces == items[:-1]
    return pieces


def events_of(items: Sequence[Any]) -> list[sio.StreamEvent]:
    """The stream events among a stream's items."""
    return [item for item in items if isinstance(item, sio.StreamEvent)]


def values_of(events: Sequence[object]) -> list[sio.FieldValue]:
    """The `FieldValue` events, in order."""
    return [e for e in events if isinstance(e, sio.FieldValue)]


def deltas_of(events: Sequence[object], name: str) -> str:
    """The text the `FieldDelta` events of output ``name`` add up to."""
    return "".join(e.delta for e in events if isinstance(e, sio.FieldDelta) and e.field == name)


def ended(server: OpenAIServer, index: int = 0, timeout: float = 3.0) -> StreamLog:
    """The server's log of its ``index``-th streamed reply, once the handler has stopped.

    Args:
        server: The loopback server.
        index: Which streamed reply, in the order they started.
        timeout: Seconds to wait for the handler to stop sending.

    Returns:
        The log, after the handler stopped (asserted).
    """
    deadline = time.monotonic() + timeout
    while len(server.streams) <= index and time.monotonic() < deadline:
        time.sleep(0.005)
    log = server.streams[index]
    assert log.wait(max(0.0, deadline - time.monotonic())), "the server is still sending"
    return log


def assert_left_early(log: StreamLog) -> None:
    """The server saw the client go while it was still sending.

    Args:
        log: The server's log of the stream.
    """
    assert not log.completed
    assert log.disconnected is not None
    assert log.sent < log.total
    assert log.ended is not None


# -- LM.stream ------------------------------------------------------------------------------


def test_lm_stream_gives_text_pieces_then_the_response(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(content=TEXT, chunk_size=5))
    lm = make_lm()
    stream = lm.stream(MESSAGES)
    assert isinstance(stream, sio.LMStream)
    assert server.requests == []  # the request is made when the stream is first read
    items: list[Any] = list(stream)
    pieces = pieces_of(items)
    assert len(pieces) > 5
    assert "".join(pieces) == TEXT
    response = items[-1]
    assert isinstance(response, sio.LMResponse)
    assert stream.response is response
    assert response.text == TEXT
    assert response[0].finish_reason == "stop"
    assert response.usage == SERVER_USAGE
    assert not response.cached
    (request,) = server.requests
    assert request.messages == MESSAGES
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    # Recorded like a call, usage included.
    (entry,) = lm.history
    assert entry.messages == MESSAGES
    assert entry.response.text == TEXT
    assert entry.response.usage == SERVER_USAGE
    out = io.StringIO()
    sio.inspect_history(1, file=out)
    shown = out.getvalue()
    assert "openai/test" in shown
    assert "User message:\n\nHi?" in shown
    assert f"Response (finish reason: stop):\n\n{TEXT}" in shown
    assert "11 prompt + 3 completion tokens" in shown


def test_lm_stream_as_a_context_manager(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content=TEXT))
    with make_lm().stream(MESSAGES) as stream:
        items: list[Any] = list(stream)
    assert "".join(pieces_of(items)) == TEXT
    assert stream.response is items[-1]


def test_lm_astream_gives_text_pieces_then_the_response(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(content=TEXT, chunk_size=5))
    lm = make_lm()

    async def read() -> tuple[list[Any], sio.AsyncLMStream]:
        async with lm.astream(MESSAGES) as stream:
            return [item async for item in stream], stream

    items, stream = asyncio.run(read())
    pieces = pieces_of(items)
    assert len(pieces) > 5
    assert "".join(pieces) == TEXT
    response = items[-1]
    assert isinstance(response, sio.LMResponse)
    assert stream.response is response
    assert response.usage == SERVER_USAGE
    (request,) = server.requests
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    (entry,) = lm.history
    assert entry.response.usage == SERVER_USAGE
    printed = io.StringIO()
    sio.inspect_history(1, file=printed)
    assert f"Response (finish reason: stop):\n\n{TEXT}" in printed.getvalue()


def test_a_streamed_tool_call(server: OpenAIServer, make_lm: MakeLM) -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "lookup", "arguments": '{"city": "Paris", "days": 3}'},
    }
    server.reply(Reply(content="", tool_calls=[call], finish_reason="tool_calls"))
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
    items: list[Any] = list(make_lm().stream(MESSAGES, tools=tools))
    (response,) = items  # no text: only the response
    assert isinstance(response, sio.LMResponse)
    (completion,) = response
    assert completion.finish_reason == "tool_calls"
    assert completion.tool_calls is not None
    (got,) = completion.tool_calls
    assert got["id"] == "call_1"
    assert got["function"]["name"] == "lookup"
    assert got["function"]["arguments"] == '{"city": "Paris", "days": 3}'
    assert server.requests[0].body["tools"] == tools


def test_a_stream_with_several_choices_gives_the_first_ones_text(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(content=["first answer", "the second one"], chunk_size=3))
    items: list[Any] = list(make_lm().stream(MESSAGES, n=2))
    assert "".join(pieces_of(items)) == "first answer"
    assert [c.text for c in items[-1]] == ["first answer", "the second one"]
    assert server.requests[0].body["n"] == 2


def test_call_parameters_are_sent_and_cache_is_not(
    server: OpenAIServer, make_lm: MakeLM, disk_cache: sio.ResponseCache
) -> None:
    lm = make_lm(cache=disk_cache, temperature=0.2)
    list(lm.stream(MESSAGES, temperature=0.7, max_tokens=20, cache=False))
    list(lm.stream(MESSAGES, temperature=0.7, max_tokens=20, cache=False))
    assert len(server.requests) == 2  # the cache was off for these calls
    body = server.requests[0].body
    assert (body["temperature"], body["max_tokens"]) == (0.7, 20)
    for private in ("cache", "num_retries", "backoff", "api_key", "transport"):
        assert private not in body
    assert lm.history[-1].params == {
        "api_base": server.base_url,
        "temperature": 0.7,
        "max_tokens": 20,
    }


# -- events arrive while the model writes ---------------------------------------------------


def test_events_arrive_before_the_stream_ends(server: OpenAIServer, make_lm: MakeLM) -> None:
    # The server holds the stream once the answer's marker is out, until the client has seen
    # the reasoning's whole value: a client that read nothing before the end would leave it
    # held, and the answer's chunks are only sent after the release.
    marker_end = CHAT_REPLY.index("[[ ## answer ## ]]") + len("[[ ## answer ## ]]")
    reply = Reply(content=CHAT_REPLY, chunk_size=6, hold_after=marker_end // 6 + 2)
    server.reply(reply)
    seen: list[Any] = []
    for item in sio.Predict(QA, lm=make_lm()).stream(question="2+2?"):
        seen.append(item)
        if item == sio.FieldValue("reasoning", REASONING):
            reply.release.set()
    log = ended(server)
    assert log.completed
    assert log.released is True
    prediction = seen[-1]
    assert isinstance(prediction, sio.Prediction)
    assert (prediction.reasoning, prediction.answer) == (REASONING, 4)
    # Deltas of the reasoning came before its value, each as it was written.
    deltas = [e.delta for e in seen if isinstance(e, sio.FieldDelta) and e.field == "reasoning"]
    assert len(deltas) > 1
    assert "".join(deltas) == REASONING


def test_lm_text_arrives_before_the_stream_ends(server: OpenAIServer, make_lm: MakeLM) -> None:
    reply = Reply(content=TEXT, chunk_size=4, hold_after=3)
    server.reply(reply)
    seen: list[Any] = []
    for item in make_lm().stream(MESSAGES):
        seen.append(item)
        reply.release.set()
    log = ended(server)
    assert isinstance(seen[0], str)
    assert log.completed
    assert log.released is True  # the first piece was read while the server held the rest


# -- leaving a stream early -----------------------------------------------------------------


def test_breaking_out_of_a_predict_stream_ends_the_request(
    server: OpenAIServer, make_lm: MakeLM, disk_cache: sio.ResponseCache
) -> None:
    server.reply(Reply(content=LONG_CHAT_REPLY, chunk_size=3, chunk_delay=0.02))
    lm = make_lm(cache=disk_cache)
    predict = sio.Predict(QA, lm=lm)
    for event in predict.stream(question="q"):
        assert isinstance(event, sio.FieldDelta)
        break
    assert_left_early(ended(server))
    assert len(lm.history) == 0  # a stream left early is not recorded
    # Nothing was cached: the same request is made again.
    server.reply(Reply(content=CHAT_REPLY))
    prediction = predict.stream(question="q").collect()
    assert len(server.requests) == 2
    assert not prediction.responses[0].cached
    assert prediction.reasoning == REASONING


def test_leaving_a_with_block_ends_the_request(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content=LONG_CHAT_REPLY, chunk_size=3, chunk_delay=0.02))
    lm = make_lm()
    with sio.Predict(QA, lm=lm).stream(question="q") as stream:
        for _event in stream:
            break
    # `stream` is still referenced: only leaving the block can have closed the response.
    assert_left_early(ended(server))
    assert isinstance(stream, sio.Stream)
    assert len(lm.history) == 0
    with pytest.raises(sio.UsageError, match="has not ended yet"):
        _ = stream.result


def test_closing_an_lm_stream_ends_the_request(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(
        Reply(content=LONG_TEXT, chunk_size=3, chunk_delay=0.02),
        Reply(content=LONG_TEXT, chunk_size=3, chunk_delay=0.02),
    )
    lm = make_lm()
    with lm.stream(MESSAGES) as stream:
        first = next(stream)
    assert isinstance(first, str)
    assert_left_early(ended(server, 0))
    assert stream.response is None
    again = lm.stream(MESSAGES)
    next(again)
    again.close()
    assert_left_early(ended(server, 1))
    assert len(lm.history) == 0


def test_leaving_an_async_with_block_ends_the_request(
    server: OpenAIServer, make_lm: MakeLM, disk_cache: sio.ResponseCache
) -> None:
    server.reply(
        Reply(content=LONG_CHAT_REPLY, chunk_size=3, chunk_delay=0.02),
        Reply(content=LONG_TEXT, chunk_size=3, chunk_delay=0.02),
    )
    lm = make_lm(cache=disk_cache)
    predict = sio.Predict(QA, lm=lm)

    async def leave() -> None:
        async with predict.astream(question="q") as stream:
            async for _event in stream:
                break
        # `stream` is still referenced here: the block's exit closed the response.
        await asyncio.to_thread(ended, server, 0)
        async with lm.astream(MESSAGES) as text:
            async for _piece in text:
                break
        await asyncio.to_thread(ended, server, 1)
        assert isinstance(stream, sio.AsyncStream)
        assert text.response is None

    asyncio.run(leave())
    assert_left_early(server.streams[0])
    assert_left_early(server.streams[1])
    assert len(lm.history) == 0
    # Nothing was cached for either request.
    server.reply(Reply(content=CHAT_REPLY))
    prediction = predict(question="q")
    assert len(server.requests) == 3
    assert not prediction.responses[0].cached


def test_a_stream_closed_before_it_is_read_makes_no_request(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    lm = make_lm()
    lm.stream(MESSAGES).close()
    sio.Predict(QA, lm=lm).stream(question="q").close()

    async def close_async() -> None:
        await lm.astream(MESSAGES).aclose()
        await sio.Predict(QA, lm=lm).astream(question="q").aclose()

    asyncio.run(close_async())
    assert server.requests == []
    assert len(lm.history) == 0


def test_leaving_during_the_fallback_request_ends_it(server: OpenAIServer, make_lm: MakeLM) -> None:
    unreadable = "[[ ## reasoning ## ]]\nHmm.\n\n[[ ## answer ## ]]\nfour\n\n[[ ## completed ## ]]"
    long_json = '{"reasoning": "' + LONG_TEXT + '", "answer": 4}'
    server.reply(
        Reply(content=unreadable), Reply(content=long_json, chunk_size=3, chunk_delay=0.02)
    )
    lm = make_lm()
    with sio.Predict(QA, lm=lm).stream(question="q") as stream:
        for event in stream:
            if isinstance(event, sio.Reread):
                break
        after = next(stream)  # the first event of the second request
    assert isinstance(after, sio.FieldDelta)
    assert ended(server, 0).completed
    assert_left_early(ended(server, 1))
    assert len(lm.history) == 1  # the first request ended; the second was left


def test_leaving_during_an_async_fallback_request_ends_it(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    unreadable = "[[ ## reasoning ## ]]\nHmm.\n\n[[ ## answer ## ]]\nfour\n\n[[ ## completed ## ]]"
    long_json = '{"reasoning": "' + LONG_TEXT + '", "answer": 4}'
    server.reply(
        Reply(content=unreadable), Reply(content=long_json, chunk_size=3, chunk_delay=0.02)
    )
    predict = sio.Predict(QA, lm=make_lm())

    async def leave() -> None:
        async with predict.astream(question="q") as stream:
            async for event in stream:
                if isinstance(event, sio.Reread):
                    break
            await stream.__anext__()
        await asyncio.to_thread(ended, server, 1)

    asyncio.run(leave())
    assert_left_early(server.streams[1])


# -- failures mid-stream and before it ------------------------------------------------------


def test_a_stream_cut_after_some_text_is_a_connection_error_not_retried(
    server: OpenAIServer, make_lm: MakeLM, disk_cache: sio.ResponseCache
) -> None:
    server.reply(Reply(content=TEXT, chunk_size=4, cut_after=4))
    lm = make_lm(cache=disk_cache, num_retries=3)
    received: list[Any] = []
    with pytest.raises(sio.LMConnectionError) as info:
        received.extend(lm.stream(MESSAGES))  # what came before the error stays
    assert "".join(received) == TEXT[:12]  # the text before the cut was given
    assert "openai/test" in str(info.value)
    assert info.value.model == "openai/test"
    assert len(server.requests) == 1  # text was given: never retried
    assert len(lm.history) == 0
    # Nothing was cached: the same call is a new request.
    server.reply(Reply(content=TEXT))
    response = lm(MESSAGES)
    assert len(server.requests) == 2
    assert not response.cached
    assert response.text == TEXT


def test_an_async_stream_cut_after_some_text_is_a_connection_error(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(content=TEXT, chunk_size=4, cut_after=4))
    lm = make_lm(num_retries=3)

    async def read() -> None:
        async with lm.astream(MESSAGES) as stream:
            async for _item in stream:
                pass

    with pytest.raises(sio.LMConnectionError, match="openai/test"):
        asyncio.run(read())
    assert len(server.requests) == 1


def test_a_predict_stream_cut_mid_way_raises_a_connection_error(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(content=CHAT_REPLY, chunk_size=5, cut_after=6))
    events: list[Any] = []
    stream = sio.Predict(QA, lm=make_lm(num_retries=3)).stream(question="q")
    with pytest.raises(sio.LMConnectionError, match="openai/test"):
        events.extend(stream)
    assert events  # some reasoning text was streamed before the cut
    assert not any(isinstance(e, sio.Prediction) for e in events)
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "failure",
    [Reply(status=500, error_message="boom"), Reply(content=TEXT, cut_after=1)],
    ids=["500", "cut-before-text"],
)
def test_a_failure_before_any_text_is_retried(
    server: OpenAIServer, make_lm: MakeLM, failure: Reply
) -> None:
    # cut-before-text: only the opening chunk (role, empty content) comes, then the close.
    server.reply(failure, Reply(content=TEXT))
    lm = make_lm(num_retries=2)
    items: list[Any] = list(lm.stream(MESSAGES))
    assert "".join(pieces_of(items)) == TEXT
    assert items[-1].text == TEXT
    assert len(server.requests) == 2
    assert len(lm.history) == 1


def test_an_async_failure_before_any_text_is_retried(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(status=503, error_message="busy"), Reply(content=TEXT))
    lm = make_lm(num_retries=2)

    async def read() -> list[Any]:
        return [item async for item in lm.astream(MESSAGES)]

    items = asyncio.run(read())
    assert "".join(pieces_of(items)) == TEXT
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (Reply(status=401, error_message="Incorrect API key provided"), sio.AuthenticationError),
        (
            Reply(
                status=400,
                error_message="This model's maximum context length is 10 tokens",
                error_code="context_length_exceeded",
            ),
            sio.ContextWindowExceededError,
        ),
        (Reply(status=404, error_message="no such model"), sio.BadRequestError),
    ],
    ids=["401", "context", "404"],
)
def test_a_4xx_before_the_stream_raises_as_a_call_does(
    server: OpenAIServer, make_lm: MakeLM, reply: Reply, error: type[sio.LMError]
) -> None:
    server.default = reply
    lm = make_lm(num_retries=2)
    with pytest.raises(error) as called:
        lm(MESSAGES)
    stream = lm.stream(MESSAGES)
    assert len(server.requests) == 1  # nothing sent before the first read
    with pytest.raises(error) as streamed:
        next(stream)
    assert len(server.requests) == 2  # never retried
    assert type(streamed.value) is type(called.value)
    assert str(streamed.value) == str(called.value)
    assert streamed.value.status_code == called.value.status_code

    async def read() -> None:
        async for _item in lm.astream(MESSAGES):
            pass

    with pytest.raises(error):
        asyncio.run(read())
    assert len(server.requests) == 3
    assert len(lm.history) == 0


def test_a_4xx_before_a_predict_stream_raises_on_the_first_read(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.default = Reply(status=401, error_message="Incorrect API key provided")
    stream = sio.Predict(QA, lm=make_lm()).stream(question="q")
    assert server.requests == []
    with pytest.raises(sio.AuthenticationError):
        next(stream)
    assert len(server.requests) == 1


def test_a_server_gone_quiet_after_some_text_is_a_timeout_not_retried(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    # The opening chunk and two pieces of text, then silence longer than the timeout.
    server.reply(Reply(content=TEXT, chunk_size=4, stall_after=3, stall=1.0))
    lm = make_lm(timeout=0.3, num_retries=2)
    received: list[Any] = []
    with pytest.raises(sio.LMTimeoutError) as info:
        received.extend(lm.stream(MESSAGES))
    assert "".join(received) == TEXT[:8]
    assert isinstance(info.value, TimeoutError)
    assert info.value.model == "openai/test"
    assert len(server.requests) == 1
    assert len(lm.history) == 0


def test_a_server_gone_quiet_before_any_text_is_retried(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    # Only the opening chunk (no text yet), then silence: nothing was given, so it is retried.
    server.reply(Reply(content=TEXT, stall_after=1, stall=1.0), Reply(content=TEXT))
    lm = make_lm(timeout=0.3, num_retries=1)
    items: list[Any] = list(lm.stream(MESSAGES))
    assert "".join(pieces_of(items)) == TEXT
    assert len(server.requests) == 2


def test_a_server_that_stays_quiet_raises_a_timeout_after_the_retries(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    # As `test_slow_response_times_out` for a call: the same error, class and hint.
    server.default = Reply(content=TEXT, stall_after=1, stall=1.0)
    lm = make_lm(timeout=0.3, num_retries=1)
    with pytest.raises(sio.LMTimeoutError) as info:
        list(lm.stream(MESSAGES))
    assert info.value.attempts == 2
    assert "raise timeout=" in str(info.value)
    assert len(server.requests) == 2


def test_an_async_stream_gone_quiet_after_some_text_is_a_timeout(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(content=TEXT, chunk_size=4, stall_after=3, stall=1.0))
    lm = make_lm(timeout=0.3, num_retries=2)

    async def read() -> None:
        async with lm.astream(MESSAGES) as stream:
            async for _item in stream:
                pass

    with pytest.raises(sio.LMTimeoutError):
        asyncio.run(read())
    assert len(server.requests) == 1


def test_a_rate_limit_before_the_stream_honours_retry_after(
    server: OpenAIServer, make_lm: MakeLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits: list[float] = []
    monkeypatch.setattr(lm_module, "_sleep", waits.append)
    server.reply(Reply(status=429, headers={"Retry-After": "2.5"}), Reply(content=TEXT))
    items: list[Any] = list(make_lm().stream(MESSAGES))
    assert "".join(pieces_of(items)) == TEXT
    assert waits == [2.5]
    assert len(server.requests) == 2


def test_a_truncated_streamed_answer_raises_as_a_call_does(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(content="[[ ## reasoning ## ]]\nTwo and", finish_reason="length"))
    with pytest.raises(sio.ParseError) as info:
        list(sio.Predict(QA, lm=make_lm(max_tokens=8)).stream(question="q"))
    assert info.value.truncated
    assert "cut off by the token limit" in str(info.value)
    assert len(server.requests) == 1  # a truncated answer is not asked again as JSON


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
TOO_LONG = Reply(
    status=400,
    error_message="maximum context length is 2000 tokens",
    error_code="context_length_exceeded",
)


def test_context_window_exceeded_is_cut_and_streamed_again(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(TOO_LONG, Reply(content="[[ ## answer ## ]]\nshorter now", chunk_size=4))
    predict = sio.Predict(Conversation, lm=make_lm(context_window=2000))
    items: list[Any] = list(predict.stream(question="now?", history=LONG_HISTORY))
    prediction = items[-1]
    assert prediction.answer == "shorter now"
    assert deltas_of(events_of(items), "answer") == "shorter now"
    assert len(server.requests) == 2
    assert len(server.requests[1].messages) < len(server.requests[0].messages)
    assert all(request.body["stream"] is True for request in server.requests)
    assert prediction.truncation is not None
    assert prediction.truncation.reason == "context_window"
    assert prediction.truncation.tokens_after <= 1800


def test_context_window_exceeded_is_cut_once_in_an_async_stream(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.default = TOO_LONG
    predict = sio.Predict(Conversation, lm=make_lm(context_window=2000))

    async def read() -> None:
        async with predict.astream(question="now?", history=LONG_HISTORY) as stream:
            async for _item in stream:
                pass

    with pytest.raises(sio.ContextWindowExceededError):
        asyncio.run(read())
    assert len(server.requests) == 2


# -- the cache ------------------------------------------------------------------------------


def test_a_finished_stream_is_cached_and_replayed(
    server: OpenAIServer, make_lm: MakeLM, disk_cache: sio.ResponseCache
) -> None:
    server.reply(Reply(content=TEXT, chunk_size=4))
    lm = make_lm(cache=disk_cache)
    first: list[Any] = list(lm.stream(MESSAGES))
    assert not first[-1].cached
    second = lm.stream(MESSAGES)
    items: list[Any] = list(second)
    assert len(server.requests) == 1  # served from the cache
    pieces = pieces_of(items)
    assert pieces
    assert "".join(pieces) == TEXT
    response = items[-1]
    assert isinstance(response, sio.LMResponse)
    assert second.response is response
    assert response.cached
    assert response.text == TEXT
    assert response.usage == sio.Usage()
    assert response.cost == 0.0
    assert len(lm.history) == 2
    assert lm.history[-1].response.cached
    # A normal call of the same request hits the same entry.
    called = lm(MESSAGES)
    assert called.cached
    assert called.text == TEXT
    assert len(server.requests) == 1


def test_a_stream_replays_what_a_call_cached(
    server: OpenAIServer, make_lm: MakeLM, disk_cache: sio.ResponseCache
) -> None:
    server.reply(Reply(content=TEXT))
    lm = make_lm(cache=disk_cache)
    assert not lm(MESSAGES).cached

    async def read() -> list[Any]:
        return [item async for item in lm.astream(MESSAGES)]

    replays: list[list[Any]] = [list(lm.stream(MESSAGES)), asyncio.run(read())]
    for items in replays:
        assert "".join(pieces_of(items)) == TEXT
        assert items[-1].cached
    assert len(server.requests) == 1


def test_a_predict_stream_is_served_from_the_cache_the_second_time(
    server: OpenAIServer, make_lm: MakeLM, disk_cache: sio.ResponseCache
) -> None:
    server.reply(Reply(content=CHAT_REPLY, chunk_size=4))
    predict = sio.Predict(QA, lm=make_lm(cache=disk_cache))
    first: list[Any] = list(predict.stream(question="2+2?"))
    second: list[Any] = list(predict.stream(question="2+2?"))
    assert len(server.requests) == 1
    first_events, second_events = events_of(first), events_of(second)
    assert values_of(first_events) == values_of(second_events)
    assert values_of(second_events) == [
        sio.FieldValue("reasoning", REASONING),
        sio.FieldValue("answer", 4),
    ]
    assert deltas_of(second_events, "reasoning") == deltas_of(first_events, "reasoning")
    assert deltas_of(second_events, "reasoning") == REASONING
    assert second[-1] == first[-1]
    assert not first[-1].responses[0].cached
    assert second[-1].responses[0].cached
    assert second[-1].route == "chat"


def test_a_fallback_stream_is_replayed_from_the_cache(
    server: OpenAIServer, make_lm: MakeLM, disk_cache: sio.ResponseCache
) -> None:
    unreadable = "[[ ## reasoning ## ]]\nHmm.\n\n[[ ## answer ## ]]\nfour\n\n[[ ## completed ## ]]"
    server.reply(Reply(content=unreadable), Reply(content=JSON_REPLY))
    predict = sio.Predict(QA, lm=make_lm(cache=disk_cache))
    first: list[Any] = list(predict.stream(question="q"))
    second: list[Any] = list(predict.stream(question="q"))
    assert len(server.requests) == 2  # both requests of the first run, none of the second
    assert second[-1] == first[-1]
    assert second[-1].route == "json_request"
    assert [r.cached for r in second[-1].responses] == [True, True]
    assert sum(isinstance(e, sio.Reread) for e in second) == 1
    assert values_of(events_of(second)) == values_of(events_of(first))


# -- Predict.stream -------------------------------------------------------------------------


def test_a_predict_stream_equals_calling_the_predictor(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(content=CHAT_REPLY, chunk_size=4), Reply(content=CHAT_REPLY))
    predict = sio.Predict(QA, lm=make_lm())
    stream = predict.stream(question="2+2?")
    assert isinstance(stream, sio.Stream)
    items: list[Any] = list(stream)
    streamed = items[-1]
    assert isinstance(streamed, sio.Prediction)
    assert stream.result is streamed
    assert streamed.route == "chat"
    assert streamed.usage == SERVER_USAGE
    called = predict(question="2+2?")
    assert streamed == called
    assert (streamed.reasoning, streamed.answer) == (REASONING, 4)
    first, second = server.requests
    assert first.messages == second.messages  # the same prompt
    assert first.body["stream"] is True
    assert "stream" not in second.body
    events = events_of(items)
    assert len(events) == len(items) - 1
    assert deltas_of(events, "reasoning") == REASONING
    assert len([e for e in events if isinstance(e, sio.FieldDelta)]) > 3
    assert values_of(events) == [
        sio.FieldValue("reasoning", REASONING),
        sio.FieldValue("answer", 4),
    ]


def test_predict_astream_over_the_wire(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content=CHAT_REPLY, chunk_size=4))
    predict = sio.Predict(QA, lm=make_lm())

    async def read() -> tuple[list[Any], sio.AsyncStream[sio.Prediction]]:
        async with predict.astream(question="2+2?") as stream:
            return [item async for item in stream], stream

    items, stream = asyncio.run(read())
    assert stream.result is items[-1]
    assert items[-1] == {"reasoning": REASONING, "answer": 4}
    assert items[-1].route == "chat"
    events = events_of(items)
    assert deltas_of(events, "reasoning") == REASONING
    assert values_of(events) == [
        sio.FieldValue("reasoning", REASONING),
        sio.FieldValue("answer", 4),
    ]


def test_field_reads_one_outputs_events(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content=CHAT_REPLY, chunk_size=4))
    with sio.Predict(QA, lm=make_lm()).stream(question="q") as stream:
        events = list(stream.field("reasoning"))
    assert all(e.field == "reasoning" for e in events if not isinstance(e, sio.Reread))
    assert deltas_of(events, "reasoning") == REASONING
    assert events[-1] == sio.FieldValue("reasoning", REASONING)
    assert stream.result.answer == 4


def test_json_adapter_streams_deltas_and_values(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content=JSON_REPLY, chunk_size=4))
    predict = sio.Predict(QA, lm=make_lm(), adapter=sio.JSONAdapter())
    items: list[Any] = list(predict.stream(question="q"))
    prediction = items[-1]
    assert prediction == {"reasoning": "Sum of two pairs.", "answer": 4}
    assert prediction.route == "json"
    events = events_of(items)
    assert len([e for e in events if isinstance(e, sio.FieldDelta)]) > 1
    assert deltas_of(events, "reasoning") == "Sum of two pairs."
    assert values_of(events) == [
        sio.FieldValue("reasoning", "Sum of two pairs."),
        sio.FieldValue("answer", 4),
    ]
    (request,) = server.requests
    assert request.body["stream"] is True
    assert request.body["response_format"] == {"type": "json_object"}


def test_an_unreadable_answer_is_asked_again_with_a_reread(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    # Sections the ChatAdapter reads in part (answer is not an int), then a JSON answer.
    unreadable = "[[ ## reasoning ## ]]\nHmm.\n\n[[ ## answer ## ]]\nfour\n\n[[ ## completed ## ]]"
    server.reply(Reply(content=unreadable, chunk_size=5), Reply(content=JSON_REPLY, chunk_size=5))
    items: list[Any] = list(sio.Predict(QA, lm=make_lm()).stream(question="q"))
    prediction = items[-1]
    assert prediction == {"reasoning": "Sum of two pairs.", "answer": 4}
    assert prediction.route == "json_request"
    assert len(prediction.responses) == 2
    assert prediction.usage.prompt_tokens == 22  # both requests counted
    events = events_of(items)
    (reread,) = [i for i, e in enumerate(events) if isinstance(e, sio.Reread)]
    before, after = events[:reread], events[reread + 1 :]
    assert sio.FieldValue("reasoning", "Hmm.") in before
    said = events[reread]
    assert isinstance(said, sio.Reread)
    assert "JSONAdapter" in said.reason
    assert "answer" in said.reason
    assert deltas_of(after, "reasoning") == "Sum of two pairs."
    assert values_of(after) == [
        sio.FieldValue("reasoning", "Sum of two pairs."),
        sio.FieldValue("answer", 4),
    ]
    first, second = server.requests
    assert first.body["stream"] is True
    assert second.body["stream"] is True
    assert "response_format" not in first.body
    assert second.body["response_format"] == {"type": "json_object"}


def test_no_reread_when_nothing_was_said_before_the_fallback(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(content="I cannot say."), Reply(content=JSON_REPLY))
    items: list[Any] = list(sio.Predict(QA, lm=make_lm()).stream(question="q"))
    assert not any(isinstance(e, sio.Reread) for e in items)
    assert items[-1].route == "json_request"
    assert items[-1].answer == 4
    assert len(server.requests) == 2


def test_an_async_unreadable_answer_is_asked_again_with_a_reread(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    unreadable = "[[ ## reasoning ## ]]\nHmm.\n\n[[ ## answer ## ]]\nfour\n\n[[ ## completed ## ]]"
    server.reply(Reply(content=unreadable), Reply(content=JSON_REPLY))
    predict = sio.Predict(QA, lm=make_lm())

    async def read() -> list[Any]:
        async with predict.astream(question="q") as stream:
            return [item async for item in stream]

    items = asyncio.run(read())
    assert items[-1].route == "json_request"
    assert items[-1].answer == 4
    assert sum(isinstance(e, sio.Reread) for e in items) == 1
    assert len(server.requests) == 2


def test_a_predict_stream_with_several_choices(server: OpenAIServer, make_lm: MakeLM) -> None:
    other = CHAT_REPLY.replace("\n4\n", "\n5\n")
    server.reply(Reply(content=[CHAT_REPLY, other]), Reply(content=[CHAT_REPLY, other]))
    predict = sio.Predict(QA, lm=make_lm(), n=2)
    items: list[Any] = list(predict.stream(question="q"))
    streamed = items[-1]
    assert [c["answer"] for c in streamed.completions] == [4, 5]
    assert values_of(events_of(items)) == [  # the events are the first choice's
        sio.FieldValue("reasoning", REASONING),
        sio.FieldValue("answer", 4),
    ]
    assert streamed == predict(question="q")
    assert server.requests[0].body["n"] == 2


# -- prompt functions -----------------------------------------------------------------------


class Greeting(BaseModel):
    greeting: str
    count: int


def test_a_str_prompt_function_streams_its_text(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content=TEXT, chunk_size=4), Reply(content=TEXT, chunk_size=4))

    @sio.prompt("Say hi to {name}", lm=make_lm())
    def hi(name: str) -> str:
        raise NotImplementedError

    stream = hi.stream("Bob")
    assert isinstance(stream, sio.TextStream)
    pieces = list(stream)
    assert len(pieces) > 3
    assert all(isinstance(piece, str) for piece in pieces)
    assert "".join(pieces) == TEXT
    assert stream.result == TEXT
    assert str(hi.stream("Bob")) == TEXT
    first, second = server.requests
    assert first.messages == [{"role": "user", "content": "Say hi to Bob"}]
    assert first.body["stream"] is True
    assert second.messages == first.messages


def test_a_str_prompt_function_astream(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content=TEXT, chunk_size=4))

    @sio.prompt("Say hi to {name}", lm=make_lm())
    def hi(name: str) -> str:
        raise NotImplementedError

    async def read() -> tuple[list[str], str]:
        async with hi.astream("Bob") as stream:
            pieces = [piece async for piece in stream]
        return pieces, stream.result

    pieces, whole = asyncio.run(read())
    assert "".join(pieces) == TEXT
    assert whole == TEXT


def test_a_typed_prompt_function_streams_values_then_the_answer(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(
        Reply(content="[[ ## answer ## ]]\n8\n\n[[ ## completed ## ]]", chunk_size=4),
        Reply(
            content="[[ ## greeting ## ]]\nHello, Bob!\n\n[[ ## count ## ]]\n2\n\n"
            "[[ ## completed ## ]]",
            chunk_size=4,
        ),
    )
    lm = make_lm()

    @sio.prompt("How many legs has a {animal}?", lm=lm)
    def legs(animal: str) -> int:
        raise NotImplementedError

    @sio.prompt("Greet {name}", lm=lm)
    def greet(name: str) -> Greeting:
        raise NotImplementedError

    stream = legs.stream("spider")
    assert isinstance(stream, sio.Stream)
    items: list[Any] = list(stream)
    assert items[-1] == 8
    assert type(items[-1]) is int
    assert stream.result == 8
    assert events_of(items) == [sio.FieldValue("answer", 8)]
    assert server.requests[0].messages == legs.messages("spider")
    assert server.requests[0].body["stream"] is True

    items = list(greet.stream("Bob"))
    assert items[-1] == Greeting(greeting="Hello, Bob!", count=2)
    events = events_of(items)
    assert deltas_of(events, "greeting") == "Hello, Bob!"
    assert values_of(events) == [
        sio.FieldValue("greeting", "Hello, Bob!"),
        sio.FieldValue("count", 2),
    ]


def test_a_chatprompt_function_streams_over_the_wire(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(
        Reply(content="Salut, le monde !", chunk_size=4),
        Reply(content="[[ ## answer ## ]]\n3\n\n[[ ## completed ## ]]", chunk_size=4),
    )
    lm = make_lm()

    @sio.chatprompt(
        sio.SystemMessage("You translate to {language}."),
        sio.UserMessage("Translate: {text}"),
        lm=lm,
    )
    def translate(text: str, language: str = "French") -> str:
        raise NotImplementedError

    @sio.chatprompt(sio.SystemMessage("Count words."), sio.UserMessage("{text}"), lm=lm)
    def count(text: str) -> int:
        raise NotImplementedError

    stream = translate.stream("Hello, world!")
    assert isinstance(stream, sio.TextStream)
    assert str(stream) == "Salut, le monde !"
    assert server.requests[0].messages == translate.format("Hello, world!")
    items: list[Any] = list(count.stream("a b c"))
    assert items[-1] == 3
    assert events_of(items) == [sio.FieldValue("answer", 3)]
    assert all(request.body["stream"] is True for request in server.requests)


def test_a_typed_prompt_function_astream(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content="[[ ## answer ## ]]\n8\n\n[[ ## completed ## ]]", chunk_size=4))

    @sio.prompt("How many legs has a {animal}?", lm=make_lm())
    def legs(animal: str) -> int:
        raise NotImplementedError

    async def read() -> tuple[list[Any], int]:
        async with legs.astream("spider") as stream:
            items = [item async for item in stream]
        return items, stream.result

    items, result = asyncio.run(read())
    assert items == [sio.FieldValue("answer", 8), 8]
    assert result == 8
