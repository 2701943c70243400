"""OpenTelemetryCallback: one span per call, with the GenAI semantic-convention attributes."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import structio as sio
from structio.call import CallResult
from structio.lm.types import Completion, LMResponse, Usage
from structio.observe import Callback, CallEndEvent, OpenTelemetryCallback, call_started
from structio.observe.dispatch import CallScope

QA = sio.Signature("question -> answer", name="QA")
ADAPTER = sio.ChatAdapter()
INPUTS = {"question": "2+2?"}


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield tracer_provider
    tracer_provider.shutdown()


@pytest.fixture
def spans(provider: TracerProvider) -> OpenTelemetryCallback:
    callback = OpenTelemetryCallback(tracer_provider=provider)
    sio.configure(callbacks=[callback])
    return callback


def start(model: str = "openai/gpt-4o-mini", **params: Any) -> CallScope:
    lm = sio.FakeLM([])
    lm.model = model
    messages = ADAPTER.format(QA, inputs=INPUTS)
    return call_started(ADAPTER, lm, QA, INPUTS, messages, params)


def response(
    *, model: str = "openai/gpt-4o-mini", cost: float | None = 0.003, cached: bool = False
) -> LMResponse:
    return LMResponse(
        (
            Completion("[[ ## answer ## ]]\n4", "stop"),
            Completion("[[ ## answer ## ]]\n5", "length"),
        ),
        model,
        Usage(prompt_tokens=120, completion_tokens=30, cached_tokens=64, reasoning_tokens=12),
        cost=cost,
        cached=cached,
    )


def only(exporter: InMemorySpanExporter) -> ReadableSpan:
    (span,) = exporter.get_finished_spans()
    return span


@pytest.mark.usefixtures("spans")
def test_a_call_is_one_client_span_with_the_genai_attributes(
    exporter: InMemorySpanExporter,
) -> None:
    answer = response()
    with start(temperature=0.2, max_tokens=100, n=2, stop=["\n\n"], seed=7) as scope:
        assert exporter.get_finished_spans() == ()  # open while the call runs
        scope.ended(CallResult([{"answer": "4"}, {"answer": "5"}], "chat", [answer]))
    span = only(exporter)
    assert span.name == "chat gpt-4o-mini"
    assert span.kind is SpanKind.CLIENT
    assert span.status.status_code is StatusCode.UNSET
    assert span.instrumentation_scope is not None
    assert span.instrumentation_scope.name == "structio"
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.request.temperature": 0.2,
        "gen_ai.request.max_tokens": 100,
        "gen_ai.request.choice.count": 2,
        "gen_ai.request.seed": 7,
        "gen_ai.request.stop_sequences": ("\n\n",),
        "gen_ai.response.model": "gpt-4o-mini",
        "gen_ai.response.finish_reasons": ("stop", "length"),
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 30,
        "gen_ai.usage.cache_read.input_tokens": 64,
        "gen_ai.usage.reasoning.output_tokens": 12,
        "structio.call_id": scope.call_id,
        "structio.model": "openai/gpt-4o-mini",
        "structio.adapter": "ChatAdapter",
        "structio.signature": "QA",
        "structio.route": "chat",
        "structio.cost": 0.003,
        "structio.cached": False,
        "structio.attempts": 1,
    }
    assert span.end_time is not None
    assert span.start_time is not None
    assert span.end_time >= span.start_time


@pytest.mark.usefixtures("spans")
def test_unknown_cost_and_parameters_of_another_type_are_left_out(
    exporter: InMemorySpanExporter,
) -> None:
    with start("fake", temperature=True, max_tokens="100", stop="END") as scope:
        scope.ended(CallResult([{"answer": "4"}], "json", [response(model="fake", cost=None)]))
    attributes = dict(only(exporter).attributes or {})
    assert "structio.cost" not in attributes
    assert "gen_ai.request.temperature" not in attributes  # a bool is not a temperature
    assert "gen_ai.request.max_tokens" not in attributes
    assert "gen_ai.provider.name" not in attributes  # no provider prefix to read
    assert attributes["gen_ai.request.model"] == "fake"
    assert attributes["gen_ai.request.stop_sequences"] == ("END",)
    assert attributes["structio.route"] == "json"
    assert only(exporter).name == "chat fake"


@pytest.mark.usefixtures("spans")
def test_a_failed_call_has_status_error_and_its_error_type(exporter: InMemorySpanExporter) -> None:
    error = sio.ParseError(
        adapter="ChatAdapter", signature=QA, completion="no idea", missing=["answer"]
    )

    def failing_call() -> None:
        with start() as scope:
            scope.responded(response())
            raise error

    with pytest.raises(sio.ParseError):
        failing_call()
    span = only(exporter)
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description is not None
    assert span.status.description.startswith("ParseError: ")
    attributes = dict(span.attributes or {})
    assert attributes["error.type"] == "structio.ParseError"
    assert attributes["gen_ai.usage.input_tokens"] == 120  # what the failed call spent
    assert "structio.route" not in attributes
    (exception,) = [e for e in span.events if e.name == "exception"]
    assert dict(exception.attributes or {})["exception.type"].endswith("ParseError")


@pytest.mark.usefixtures("spans")
def test_a_builtin_error_type_is_its_name(exporter: InMemorySpanExporter) -> None:
    with pytest.raises(TimeoutError), start():
        raise TimeoutError("slow")
    attributes = dict(only(exporter).attributes or {})
    assert attributes["error.type"] == "TimeoutError"
    assert attributes["structio.attempts"] == 0
    assert "gen_ai.response.model" not in attributes


@pytest.mark.usefixtures("spans")
def test_parse_errors_and_retries_are_span_events(exporter: InMemorySpanExporter) -> None:
    error = sio.ParseError(adapter="ChatAdapter", signature=QA, completion="?", missing=["answer"])
    first, second = response(), response(cached=True)
    with start() as scope:
        scope.parse_failed(error)
        scope.retried("answer: missing")
        scope.ended(CallResult([{"answer": "4"}], "chat", [first, second]))
    span = only(exporter)
    events = [(e.name, dict(e.attributes or {})) for e in span.events]
    assert events == [
        (
            "structio.parse_error",
            {
                "structio.attempt": 1,
                "error.type": "structio.ParseError",
                "exception.message": str(error),
            },
        ),
        ("structio.retry", {"structio.attempt": 2, "structio.feedback": "answer: missing"}),
    ]
    attributes = dict(span.attributes or {})
    assert attributes["structio.attempts"] == 2
    assert attributes["gen_ai.usage.input_tokens"] == 240
    assert attributes["structio.cached"] is False  # not every response came from the cache
    assert span.status.status_code is StatusCode.UNSET


def test_content_is_recorded_only_when_asked(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    for capture in (False, True):
        sio.configure(
            callbacks=[OpenTelemetryCallback(tracer_provider=provider, capture_content=capture)]
        )
        with start() as scope:
            scope.ended(CallResult([{"answer": 4}], "chat", [response()]))
    plain, captured = exporter.get_finished_spans()
    assert "gen_ai.input.messages" not in (plain.attributes or {})
    assert "structio.outputs" not in (plain.attributes or {})
    attributes = dict(captured.attributes or {})
    messages = ADAPTER.format(QA, inputs=INPUTS)
    assert json.loads(str(attributes["gen_ai.input.messages"])) == messages
    assert json.loads(str(attributes["structio.outputs"])) == [{"answer": 4}]
    assert repr(OpenTelemetryCallback(tracer_provider=provider)) == (
        "OpenTelemetryCallback(capture_content=False)"
    )


@pytest.mark.usefixtures("spans")
def test_the_span_is_a_child_of_the_span_current_at_the_start(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    tracer = provider.get_tracer("app")
    with tracer.start_as_current_span("handle request") as parent, start():
        pass
    call, request = exporter.get_finished_spans()
    assert request.name == "handle request"
    assert call.parent is not None
    assert call.parent.span_id == parent.get_span_context().span_id
    assert call.context is not None
    assert call.context.trace_id == parent.get_span_context().trace_id
    # The call's span is never made current: code after the call is not its child.
    assert trace.get_current_span() is trace.INVALID_SPAN


@pytest.mark.usefixtures("spans")
def test_calls_in_many_threads_each_get_their_span(exporter: InMemorySpanExporter) -> None:
    barrier = threading.Barrier(8)

    def one(index: int) -> None:
        with start(seed=index) as scope:
            barrier.wait(5)  # every call is open at once
            scope.ended(CallResult([{"answer": str(index)}], "chat", [response()]))

    workers = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    finished = exporter.get_finished_spans()
    assert sorted(dict(s.attributes or {})["gen_ai.request.seed"] for s in finished) == list(
        range(8)
    )
    assert len({dict(s.attributes or {})["structio.call_id"] for s in finished}) == 8


def test_a_call_that_started_before_the_callback_was_set_is_ignored(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    callback = OpenTelemetryCallback(tracer_provider=provider)
    sio.configure(callbacks=[Callback()])
    with start() as scope:
        sio.configure(callbacks=[callback])
    assert scope.call_id is not None
    # Told of an end it never saw start: nothing to end, nothing raised.
    callback.on_call_end(
        CallEndEvent(
            scope.call_id,
            "ChatAdapter",
            "QA",
            "m",
            {},
            [],
            {},
            [],
            None,
            Usage(),
            None,
            0.0,
            (),
            None,
        )
    )
    assert exporter.get_finished_spans() == ()


def test_without_opentelemetry_the_callback_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # import opentelemetry fails
    with pytest.raises(sio.ConfigurationError, match=r"pip install structio\[otel\]"):
        OpenTelemetryCallback()


def test_importing_structio_and_observe_loads_no_opentelemetry() -> None:
    code = (
        "import sys, structio, structio.observe\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'opentelemetry'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_the_global_tracer_provider_is_used_by_default() -> None:
    # Without a provider set, OpenTelemetry's default is a no-op one: a call is not recorded,
    # and nothing fails.
    sio.configure(callbacks=[OpenTelemetryCallback()])
    with start() as scope:
        scope.ended(CallResult([{"answer": "4"}], "chat", [response()]))
