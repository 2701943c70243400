"""Seeing what happened over the real wire: track_usage, callbacks and spans.

The first tests use the LM and the dispatcher directly, as the call layer does; the ones at
the end go through `Predict`, so the call layer's reports to `structio.observe` are tested
over HTTP too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import structio as sio
from structio.call import CallResult
from structio.lm.types import LMResponse, Usage
from structio.lm.usage import UsageTracker, track_usage
from structio.observe import (
    OpenTelemetryCallback,
    call_started,
)
from tests.observe.recording import Recorder
from tests.wire.server import OpenAIServer, Reply

MakeLM = Callable[..., sio.LM]
MESSAGES = [{"role": "user", "content": "Hi?"}]
QA = sio.Signature("question -> answer", name="QA")
ANSWER = "[[ ## answer ## ]]\nok"
ONE_CALL = Usage(prompt_tokens=11, completion_tokens=3, cached_tokens=4)


@pytest.fixture
def recorder(exporter: InMemorySpanExporter) -> Iterator[Recorder]:
    """A recorder and OpenTelemetry spans, both configured as the callbacks."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    recording = Recorder()
    sio.configure(callbacks=[recording, OpenTelemetryCallback(tracer_provider=provider)])
    yield recording
    provider.shutdown()


def only(exporter: InMemorySpanExporter) -> ReadableSpan:
    (span,) = exporter.get_finished_spans()
    return span


# -- track_usage over HTTP ---------------------------------------------------------------------


def test_track_usage_adds_up_real_calls(server: OpenAIServer, make_lm: MakeLM) -> None:
    lm = make_lm()
    with track_usage() as usage:
        first = lm(MESSAGES)
        second = lm(MESSAGES, temperature=0.5)
    assert len(server.requests) == 2
    assert usage.calls == 2
    assert usage.by_model == {"openai/test": ONE_CALL + ONE_CALL}
    assert usage.total == first.usage + second.usage
    assert usage.cost is None  # litellm has no price for "test"


def test_track_usage_prices_a_known_model(server: OpenAIServer, make_lm: MakeLM) -> None:
    lm = sio.LM(
        "openai/gpt-4o-mini",
        api_base=server.base_url,
        api_key="test-key",
        cache=False,
        transport=make_lm().transport,
    )
    with track_usage() as usage:
        responses = [lm(MESSAGES), lm(MESSAGES)]
    costs = [r.cost for r in responses]
    assert all(cost is not None and cost > 0 for cost in costs)
    assert usage.cost == pytest.approx(sum(c or 0.0 for c in costs))
    assert usage.cost_by_model == {"openai/gpt-4o-mini": pytest.approx(usage.cost)}


def test_track_usage_counts_streams_and_async_calls(server: OpenAIServer, make_lm: MakeLM) -> None:
    lm = make_lm()

    async def main() -> UsageTracker:
        with track_usage() as usage:
            await lm.acall(MESSAGES)
            async with lm.astream(MESSAGES) as stream:
                async for _ in stream:
                    pass
            await asyncio.gather(lm.acall(MESSAGES), lm.acall(MESSAGES))
        return usage

    with track_usage() as outer:
        for item in lm.stream(MESSAGES):
            if isinstance(item, LMResponse):
                assert outer.calls == 1  # counted once the stream has ended
        inner = asyncio.run(main())
    assert inner.calls == 4
    assert inner.total == Usage(44, 12, 16)
    assert outer.calls == 5
    assert len(server.requests) == 5


def test_track_usage_counts_cache_hits_without_tokens(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    lm = make_lm(cache=True)
    with track_usage() as usage:
        lm(MESSAGES)
        hit = lm(MESSAGES)
    assert hit.cached
    assert len(server.requests) == 1
    assert (usage.calls, usage.cached_calls) == (2, 1)
    assert usage.total == ONE_CALL


def test_track_usage_sees_predict_batch_threads(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.default = Reply(content=ANSWER)
    predict = sio.Predict(QA, lm=make_lm())
    with track_usage() as usage:
        results = predict.batch([{"question": str(i)} for i in range(6)], progress=False)
    assert all(isinstance(r, sio.Prediction) for r in results)
    assert usage.calls == len(server.requests) == 6
    assert usage.total == Usage(66, 18, 24)


def test_track_usage_sees_predict_abatch_tasks(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.default = Reply(content=ANSWER)
    predict = sio.Predict(QA, lm=make_lm())

    async def main() -> UsageTracker:
        with track_usage() as usage:
            await predict.abatch([{"question": str(i)} for i in range(4)], progress=False)
        return usage

    usage = asyncio.run(main())
    assert usage.calls == 4
    assert usage.total == Usage(44, 12, 16)


# -- the dispatcher over HTTP, as the call layer uses it -----------------------------------------


def observed_call(lm: sio.LM, inputs: Mapping[str, Any], **params: Any) -> CallResult:
    """One call as `structio.call.call` makes it: start, request, read, end."""
    adapter = sio.ChatAdapter()
    messages = adapter.format(QA, inputs=inputs)
    with call_started(adapter, lm, QA, inputs, messages, params) as scope:
        response = lm(messages, **params)
        scope.responded(response)
        result = CallResult([adapter.parse(QA, response.text)], "chat", [response])
        scope.ended(result)
    return result


def test_a_call_over_http_is_told_and_traced(
    server: OpenAIServer, make_lm: MakeLM, recorder: Recorder, exporter: InMemorySpanExporter
) -> None:
    server.reply(Reply(content=ANSWER))
    result = observed_call(make_lm(temperature=0.3), {"question": "q"}, max_tokens=20)
    assert result.outputs == [{"answer": "ok"}]
    assert recorder.hooks == ["start", "end"]
    began, ended = recorder.last("start"), recorder.last("end")
    assert began.params == {"api_base": server.base_url, "temperature": 0.3, "max_tokens": 20}
    assert "api_key" not in began.params
    assert "test-key" not in repr(began) + repr(ended)
    assert ended.usage == ONE_CALL
    assert ended.outputs == [{"answer": "ok"}]
    attributes = dict(only(exporter).attributes or {})
    assert attributes["gen_ai.provider.name"] == "openai"
    assert attributes["gen_ai.request.model"] == attributes["gen_ai.response.model"] == "test"
    assert attributes["gen_ai.request.temperature"] == 0.3
    assert attributes["gen_ai.request.max_tokens"] == 20
    assert attributes["gen_ai.usage.input_tokens"] == 11
    assert attributes["gen_ai.usage.output_tokens"] == 3
    assert attributes["gen_ai.usage.cache_read.input_tokens"] == 4
    assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert attributes["structio.call_id"] == began.call_id
    assert "structio.cost" not in attributes


def test_a_provider_error_over_http_ends_the_span_in_error(
    server: OpenAIServer, make_lm: MakeLM, recorder: Recorder, exporter: InMemorySpanExporter
) -> None:
    server.reply(Reply(status=400, error_message="bad request body"))
    with pytest.raises(sio.BadRequestError):
        observed_call(make_lm(), {"question": "q"})
    ended = recorder.last("end")
    assert isinstance(ended.error, sio.BadRequestError)
    assert ended.responses == ()
    span = only(exporter)
    assert span.status.status_code is StatusCode.ERROR
    assert dict(span.attributes or {})["error.type"] == "structio.BadRequestError"


# -- through Predict: these need the call layer to report to structio.observe ------------------


def test_predict_tells_callbacks_and_emits_a_span(
    server: OpenAIServer, make_lm: MakeLM, recorder: Recorder, exporter: InMemorySpanExporter
) -> None:
    server.reply(Reply(content=ANSWER))
    prediction = sio.Predict(QA, lm=make_lm(), temperature=0.1)(question="q")
    assert prediction.answer == "ok"
    assert recorder.hooks == ["start", "end"]
    began, ended = recorder.last("start"), recorder.last("end")
    assert (began.adapter, began.signature, began.model) == ("ChatAdapter", "QA", "openai/test")
    assert began.inputs == {"question": "q"}
    assert began.messages == server.requests[0].messages
    assert began.params["temperature"] == 0.1
    assert (ended.outputs, ended.route, ended.error) == ([{"answer": "ok"}], "chat", None)
    assert ended.usage == ONE_CALL
    assert len(ended.responses) == 1
    span = only(exporter)
    assert span.name == "chat test"
    attributes = dict(span.attributes or {})
    assert attributes["structio.signature"] == "QA"
    assert attributes["structio.route"] == "chat"
    assert attributes["gen_ai.usage.input_tokens"] == 11


def test_async_predict_is_told(server: OpenAIServer, make_lm: MakeLM, recorder: Recorder) -> None:
    server.reply(Reply(content=ANSWER))
    prediction = asyncio.run(sio.Predict(QA, lm=make_lm()).acall(question="q"))
    assert prediction.answer == "ok"
    assert recorder.hooks == ["start", "end"]
    assert recorder.last("end").usage == ONE_CALL


def test_a_reask_is_a_parse_error_then_a_retry(
    server: OpenAIServer, make_lm: MakeLM, recorder: Recorder, exporter: InMemorySpanExporter
) -> None:
    server.reply(Reply(content="gibberish"), Reply(content=ANSWER))
    prediction = sio.Predict(QA, lm=make_lm(), max_retries=1)(question="q")
    assert prediction.answer == "ok"
    assert recorder.hooks == ["start", "parse_error", "retry", "end"]
    failed, retry, ended = (recorder.last(h) for h in ("parse_error", "retry", "end"))
    assert failed.attempt == 1
    assert failed.error.missing == ["answer"]
    assert retry.attempt == 2
    assert retry.feedback == server.requests[1].messages[-1]["content"]  # what was sent back
    assert ended.usage == ONE_CALL + ONE_CALL
    assert len(ended.responses) == 2
    span = only(exporter)
    assert [e.name for e in span.events] == ["structio.parse_error", "structio.retry"]
    assert dict(span.attributes or {})["structio.attempts"] == 2


def test_the_fallback_request_is_one_call(
    server: OpenAIServer, make_lm: MakeLM, recorder: Recorder, exporter: InMemorySpanExporter
) -> None:
    server.reply(Reply(content="gibberish"), Reply(content='{"answer": "ok"}'))
    prediction = sio.Predict(QA, lm=make_lm())(question="q")
    assert (prediction.answer, prediction.route) == ("ok", "json_request")
    assert recorder.hooks == ["start", "parse_error", "retry", "end"]
    assert "JSONAdapter" in recorder.last("retry").feedback
    ended = recorder.last("end")
    assert (ended.route, ended.adapter, len(ended.responses)) == ("json_request", "ChatAdapter", 2)
    assert len(exporter.get_finished_spans()) == 1


def test_a_failed_call_ends_with_its_error(
    server: OpenAIServer, make_lm: MakeLM, recorder: Recorder, exporter: InMemorySpanExporter
) -> None:
    server.reply(Reply(content="gibberish"), Reply(content="still gibberish"))
    with pytest.raises(sio.ParseError) as raised:
        sio.Predict(QA, lm=make_lm(), max_retries=1)(question="q")
    assert recorder.hooks == ["start", "parse_error", "retry", "parse_error", "end"]
    ended = recorder.last("end")
    assert ended.error is raised.value
    assert ended.usage == ONE_CALL + ONE_CALL  # what the failed call spent
    span = only(exporter)
    assert span.status.status_code is StatusCode.ERROR
    assert dict(span.attributes or {})["error.type"] == "structio.ParseError"


def test_a_stream_is_one_call(
    server: OpenAIServer, make_lm: MakeLM, recorder: Recorder, exporter: InMemorySpanExporter
) -> None:
    server.reply(Reply(content=ANSWER))
    stream = sio.Predict(QA, lm=make_lm()).stream(question="q")
    assert recorder.hooks == []  # the request is made when the stream is read
    items = list(stream)
    assert isinstance(items[-1], sio.Prediction)
    assert recorder.hooks == ["start", "end"]
    assert recorder.last("end").outputs == [{"answer": "ok"}]
    assert recorder.last("end").usage == ONE_CALL
    assert len(exporter.get_finished_spans()) == 1


def test_an_async_stream_is_one_call(
    server: OpenAIServer, make_lm: MakeLM, recorder: Recorder
) -> None:
    server.reply(Reply(content=ANSWER))

    async def main() -> None:
        async for _ in sio.Predict(QA, lm=make_lm()).astream(question="q"):
            pass

    asyncio.run(main())
    assert recorder.hooks == ["start", "end"]
    assert recorder.last("end").route == "chat"


def test_a_stream_left_early_ends_the_call(
    server: OpenAIServer, make_lm: MakeLM, recorder: Recorder, exporter: InMemorySpanExporter
) -> None:
    server.reply(Reply(content="[[ ## answer ## ]]\n" + "word " * 200, chunk_size=5))
    with sio.Predict(QA, lm=make_lm()).stream(question="q") as stream:
        next(iter(stream))
    assert recorder.hooks == ["start", "end"]
    assert isinstance(recorder.last("end").error, GeneratorExit)
    assert only(exporter).status.status_code is StatusCode.ERROR
