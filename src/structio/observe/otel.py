"""`OpenTelemetryCallback`: one OpenTelemetry span per model call (``structio[otel]``).

The spans follow the OpenTelemetry semantic conventions for generative AI (``gen_ai.*``
attributes), with structio's own facts beside them (``structio.*``). OpenTelemetry is
imported when the callback is made, never at ``import structio``.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from structio.exceptions import ConfigurationError
from structio.observe.callbacks import Callback

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer, TracerProvider

    from structio.observe.events import (
        CallEndEvent,
        CallStartEvent,
        ParseErrorEvent,
        RetryEvent,
    )

__all__ = ["OpenTelemetryCallback"]

# Request parameters with a GenAI attribute of their own, and the types the convention gives
# them: a value of another type is left out rather than sent under a name that promises it.
_REQUEST_ATTRIBUTES: dict[str, tuple[str, tuple[type, ...]]] = {
    "temperature": ("gen_ai.request.temperature", (int, float)),
    "top_p": ("gen_ai.request.top_p", (int, float)),
    "top_k": ("gen_ai.request.top_k", (int, float)),
    "max_tokens": ("gen_ai.request.max_tokens", (int,)),
    "max_completion_tokens": ("gen_ai.request.max_tokens", (int,)),
    "frequency_penalty": ("gen_ai.request.frequency_penalty", (int, float)),
    "presence_penalty": ("gen_ai.request.presence_penalty", (int, float)),
    "seed": ("gen_ai.request.seed", (int,)),
    "n": ("gen_ai.request.choice.count", (int,)),
}


class OpenTelemetryCallback(Callback):
    """Emit one OpenTelemetry span per model call, with the GenAI semantic conventions.

    The span (kind ``CLIENT``, named ``"chat {model}"``) starts when the call starts, as a
    child of the span current then, and ends with the call. Its attributes:
    ``gen_ai.operation.name`` (``"chat"``), ``gen_ai.provider.name`` (the model string's
    prefix, ``openai`` in ``openai/gpt-4o-mini``), ``gen_ai.request.model`` and
    ``gen_ai.response.model`` (the name after that prefix), the request parameters the
    convention names (``gen_ai.request.temperature``, ``max_tokens``...),
    ``gen_ai.usage.input_tokens`` / ``output_tokens`` (and ``cache_read.input_tokens``,
    ``reasoning.output_tokens`` when there are any), ``gen_ai.response.finish_reasons``,
    and ``structio.call_id``, ``structio.model``, ``structio.adapter``,
    ``structio.signature``, ``structio.route``, ``structio.cost`` (USD, when known),
    ``structio.cached`` and ``structio.attempts``. A completion that could not be read and
    each new request are span events (``structio.parse_error``, ``structio.retry``). A call
    that fails gets status ERROR, ``error.type`` and the exception as an event.

    Needs ``pip install structio[otel]``.

    Args:
        tracer_provider: Where the spans go; by default OpenTelemetry's global provider.
        capture_content: Also record the messages sent (``gen_ai.input.messages``: the
            chat messages as JSON) and the outputs read (``structio.outputs``: one object
            of values per choice, as JSON). They may hold personal data: off by default,
            as the convention asks.

    Raises:
        ConfigurationError: OpenTelemetry is not installed.

    Example:
        >>> import structio as sio
        >>> sio.configure(callbacks=[sio.OpenTelemetryCallback()])  # doctest: +SKIP
    """

    def __init__(
        self, *, tracer_provider: TracerProvider | None = None, capture_content: bool = False
    ) -> None:
        try:
            from opentelemetry import trace
        except ImportError as missing:
            raise ConfigurationError(
                "OpenTelemetryCallback needs OpenTelemetry, which is not installed: "
                "pip install structio[otel]"
            ) from missing
        self._tracer: Tracer = trace.get_tracer("structio", tracer_provider=tracer_provider)
        self.capture_content = capture_content
        # Spans of the calls in flight, by call id: calls run in many threads and tasks.
        self._spans: dict[str, Span] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenTelemetryCallback(capture_content={self.capture_content})"

    def on_call_start(self, event: CallStartEvent) -> None:
        """Start the call's span."""
        from opentelemetry.trace import SpanKind

        provider, name = _split_model(event.model)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": name,
            "structio.call_id": event.call_id,
            "structio.model": event.model,
            "structio.adapter": event.adapter,
            "structio.signature": event.signature,
        }
        if provider:
            attributes["gen_ai.provider.name"] = provider
        for param, (attribute, kinds) in _REQUEST_ATTRIBUTES.items():
            value = event.params.get(param)
            if isinstance(value, kinds) and not isinstance(value, bool):
                attributes[attribute] = value
        stop = event.params.get("stop")
        if isinstance(stop, str):
            attributes["gen_ai.request.stop_sequences"] = (stop,)
        elif isinstance(stop, (list, tuple)) and all(isinstance(s, str) for s in stop):
            attributes["gen_ai.request.stop_sequences"] = tuple(stop)
        if self.capture_content:
            attributes["gen_ai.input.messages"] = _json(list(event.messages))
        span = self._tracer.start_span(f"chat {name}", kind=SpanKind.CLIENT, attributes=attributes)
        with self._lock:
            self._spans[event.call_id] = span

    def on_parse_error(self, event: ParseErrorEvent) -> None:
        """Note the completion that could not be read, as a span event."""
        span = self._span(event.call_id)
        if span is not None:
            span.add_event(
                "structio.parse_error",
                {
                    "structio.attempt": event.attempt,
                    "error.type": _error_type(event.error),
                    "exception.message": str(event.error),
                },
            )

    def on_retry(self, event: RetryEvent) -> None:
        """Note the new request, as a span event."""
        span = self._span(event.call_id)
        if span is not None:
            span.add_event(
                "structio.retry",
                {"structio.attempt": event.attempt, "structio.feedback": event.feedback},
            )

    def on_call_end(self, event: CallEndEvent) -> None:
        """Set what the call gave (or how it failed) and end its span."""
        from opentelemetry.trace import Status, StatusCode

        with self._lock:
            span = self._spans.pop(event.call_id, None)
        if span is None:  # the call started before this callback was configured
            return
        attributes: dict[str, Any] = {
            "gen_ai.usage.input_tokens": event.usage.prompt_tokens,
            "gen_ai.usage.output_tokens": event.usage.completion_tokens,
            "structio.attempts": len(event.responses),
        }
        if event.responses:
            last = event.responses[-1]
            attributes["gen_ai.response.model"] = _split_model(last.model)[1]
            reasons = tuple(c.finish_reason for c in last.completions if c.finish_reason)
            if reasons:
                attributes["gen_ai.response.finish_reasons"] = reasons
            attributes["structio.cached"] = all(r.cached for r in event.responses)
        if event.usage.cached_tokens:
            attributes["gen_ai.usage.cache_read.input_tokens"] = event.usage.cached_tokens
        if event.usage.reasoning_tokens:
            attributes["gen_ai.usage.reasoning.output_tokens"] = event.usage.reasoning_tokens
        if event.cost is not None:
            attributes["structio.cost"] = event.cost
        if event.route is not None:
            attributes["structio.route"] = event.route
        if self.capture_content and event.error is None:
            attributes["structio.outputs"] = _json(event.outputs)
        span.set_attributes(attributes)
        error = event.error
        if error is not None:
            span.set_attribute("error.type", _error_type(error))
            span.record_exception(error)
            span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
        span.end()

    def _span(self, call_id: str) -> Span | None:
        with self._lock:
            return self._spans.get(call_id)


def _split_model(model: str) -> tuple[str | None, str]:
    """``"openai/gpt-4o-mini"`` -> ``("openai", "gpt-4o-mini")``; no prefix -> ``(None, model)``."""
    provider, slash, name = model.partition("/")
    return (provider, name) if slash and provider and name else (None, model)


def _error_type(error: BaseException) -> str:
    """The exception's class as the convention asks: fully qualified, builtins by name alone."""
    kind = type(error)
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


def _json(value: Any) -> str:
    """Content as a JSON attribute: anything JSON cannot hold is written as its text."""
    return json.dumps(value, default=str, ensure_ascii=False)
