"""`Callback`: the hooks a call tells what it does.

A callback is told of every call made through the call layer (`Predict`, prompt
functions, streams): when it starts, each completion that could not be read, each new
request made for it, and how it ended (the events are in `structio.observe.events`). Set
callbacks with ``structio.configure(callbacks=[...])`` or, for a block,
``structio.context(callbacks=[...])``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from structio.observe.events import (
        CallEndEvent,
        CallStartEvent,
        ParseErrorEvent,
        RetryEvent,
    )

__all__ = ["Callback"]


class Callback:
    """Subclass and override the hooks you need: each is told of one kind of event.

    Hooks run in the thread or task of the call, in the order the callbacks were given;
    keep them quick. A hook that raises is logged (logger ``"structio"``) and never breaks
    the call. Every hook of the base class does nothing.

    Example:
        >>> import structio as sio
        >>> class Printer(sio.Callback):
        ...     def on_call_end(self, event):
        ...         print(event.signature, event.route, event.usage.total_tokens)
        >>> sio.configure(callbacks=[Printer()])
        >>> sio.configure(callbacks=[])
    """

    def on_call_start(self, event: CallStartEvent) -> None:
        """A call is about to make its first request."""

    def on_call_end(self, event: CallEndEvent) -> None:
        """A call has ended, with its outputs or with an error."""

    def on_parse_error(self, event: ParseErrorEvent) -> None:
        """A completion of the call could not be read."""

    def on_retry(self, event: RetryEvent) -> None:
        """The call makes another request."""
