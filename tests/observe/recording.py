"""A callback that keeps what it is told, shared by the observe tests and the wire tests."""

from __future__ import annotations

from typing import Any

from structio.observe import (
    Callback,
    CallEndEvent,
    CallEvent,
    CallStartEvent,
    ParseErrorEvent,
    RetryEvent,
)


class Recorder(Callback):
    """Keeps every event it is told of, with the hook that told it."""

    def __init__(self) -> None:
        self.events: list[tuple[str, CallEvent]] = []

    def on_call_start(self, event: CallStartEvent) -> None:
        self.events.append(("start", event))

    def on_call_end(self, event: CallEndEvent) -> None:
        self.events.append(("end", event))

    def on_parse_error(self, event: ParseErrorEvent) -> None:
        self.events.append(("parse_error", event))

    def on_retry(self, event: RetryEvent) -> None:
        self.events.append(("retry", event))

    @property
    def hooks(self) -> list[str]:
        return [hook for hook, _ in self.events]

    def last(self, hook: str) -> Any:
        return [event for name, event in self.events if name == hook][-1]
