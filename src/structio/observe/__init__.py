"""Seeing what happened: callbacks told of each call, and OpenTelemetry spans.

`Callback` subclasses are set with ``structio.configure(callbacks=[...])`` (or for a block,
``structio.context(callbacks=[...])``); the call layer reports each call through
`call_started` and the `CallScope` it returns. `OpenTelemetryCallback` turns the calls into
spans (``pip install structio[otel]``; OpenTelemetry is imported only when one is made).
The event classes load on first use: an unobserved program never pays for them.
"""

from typing import TYPE_CHECKING

from structio.observe.callbacks import Callback
from structio.observe.dispatch import CallOutcome, CallScope, call_started
from structio.observe.otel import OpenTelemetryCallback

if TYPE_CHECKING:
    from structio.observe.events import (
        CallEndEvent,
        CallEvent,
        CallStartEvent,
        ParseErrorEvent,
        RetryEvent,
    )

_EVENTS = frozenset(
    ("CallEndEvent", "CallEvent", "CallStartEvent", "ParseErrorEvent", "RetryEvent")
)


def __getattr__(name: str) -> object:
    if name in _EVENTS:
        from structio.observe import events

        return getattr(events, name)
    raise AttributeError(f"module 'structio.observe' has no attribute {name!r}")


__all__ = [
    "CallEndEvent",
    "CallEvent",
    "CallOutcome",
    "CallScope",
    "CallStartEvent",
    "Callback",
    "OpenTelemetryCallback",
    "ParseErrorEvent",
    "RetryEvent",
    "call_started",
]
