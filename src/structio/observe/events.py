"""The events a call tells its callbacks: frozen dataclasses, one per kind of news.

Loaded when first needed (the first call a callback is told of), never at ``import structio``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from structio.exceptions import ParseError
from structio.lm.types import LMResponse, Usage

__all__ = ["CallEndEvent", "CallEvent", "CallStartEvent", "ParseErrorEvent", "RetryEvent"]


@dataclass(frozen=True)
class CallEvent:
    """What every event of a call carries: which call, and what it asked.

    Credentials are never in an event: the parameters hold no secret setting, and a
    configured credential found in the messages is replaced by ``[redacted]``, as in the
    LM's history.

    Attributes:
        call_id: A new UUID (as 32 hex digits) for each call, the same in all its events.
        adapter: The adapter's class name (``"ChatAdapter"``).
        signature: The signature's name.
        model: The LM's model string (``"openai/gpt-4o-mini"``).
        inputs: The call's inputs (a copy of the mapping given).
        messages: The messages of the first request.
        params: The request parameters sent: the LM's own updated by the call's.
    """

    call_id: str
    adapter: str
    signature: str
    model: str
    inputs: Mapping[str, Any]
    messages: Sequence[Mapping[str, Any]]
    params: Mapping[str, Any]


@dataclass(frozen=True)
class CallStartEvent(CallEvent):
    """A call is about to make its first request (its prompt is built)."""


@dataclass(frozen=True)
class CallEndEvent(CallEvent):
    """A call has ended: with its outputs, or with the error that ended it.

    Attributes:
        outputs: One dict of output values per choice (empty when the call failed).
        route: How the outputs were read (``"chat"``, ``"json"``, ``"json_reparse"``,
            ``"json_request"``), ``None`` when the call failed.
        usage: Tokens of every response of the call.
        cost: Cost in USD of every response, ``None`` if any price is unknown or no
            response came.
        latency: Seconds from the start of the call to its end.
        responses: Every model response of the call, in order.
        error: The exception that ended the call, ``None`` when it succeeded
            (``GeneratorExit`` for a stream closed before its end).
    """

    outputs: list[dict[str, Any]]
    route: str | None
    usage: Usage
    cost: float | None
    latency: float
    responses: tuple[LMResponse, ...]
    error: BaseException | None


@dataclass(frozen=True)
class ParseErrorEvent(CallEvent):
    """A completion of the call could not be read.

    Attributes:
        error: What could not be read, and why.
        attempt: Which request of the call gave the completion (1 for the first).
    """

    error: ParseError
    attempt: int


@dataclass(frozen=True)
class RetryEvent(CallEvent):
    """The call makes another request.

    Attributes:
        attempt: Which request this is (2 for the first retry).
        feedback: Why the call asks again, as the call layer says it.
    """

    attempt: int
    feedback: str
