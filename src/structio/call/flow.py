"""The policy of a call, written once and doing no I/O: re-asks, fallback, the context cut.

`call_flow` is a generator in the manner of httpx's auth flow. It yields `Send` (a request
to make: the driver sends the model's response back in, or throws the provider's error in)
and `Restart` (what was streamed so far is void: a re-ask or a fallback request follows),
and returns the `CallResult`. The four drivers in `structio.call.drivers` (call, acall,
stream, astream) only move requests and responses: whatever the verb, a call re-asks,
falls back and cuts its prompt in exactly the same way.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Union

from structio._util.log import logger
from structio.call.options import CallOptions
from structio.call.request import Request, UnreadableError, begin, read
from structio.call.result import Attempt, CallResult
from structio.exceptions import ContextWindowExceededError, ParseError
from structio.lm.base import BaseLM
from structio.lm.types import LMResponse
from structio.observe.dispatch import CallScope

__all__ = ["Flow", "Restart", "Send", "Step", "call_flow"]


class Send:
    """A step of a call: make this request and send its response back into the flow.

    A provider error is thrown into the flow instead (``flow.throw(error)``): the flow
    cuts the prompt and asks again when the context window was exceeded, and raises the
    error otherwise.

    Attributes:
        request: The request to make.
    """

    # A plain class: a step is made per request, and a dataclass costs import time.
    __slots__ = ("request",)

    def __init__(self, request: Request) -> None:
        self.request = request

    def __repr__(self) -> str:
        return f"Send({self.request.original.__name__}, {type(self.request.adapter).__name__})"


class Restart:
    """A step of a call: the answer given so far is void, a new request follows.

    A streaming driver tells its reader's audience (a `Reread` event, with ``reason``)
    when it has already handed out values of that answer; the others go on.

    Attributes:
        reason: Why, for the `Reread` event.
    """

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"Restart({self.reason!r})"


Step = Union[Send, Restart]  # noqa: UP007 - a runtime alias on 3.10
Flow = Generator[Step, "LMResponse | None", CallResult]
"""A call's policy: steps out, responses in, the result returned."""


def call_flow(request: Request, lm: BaseLM, options: CallOptions, scope: CallScope) -> Flow:
    """The steps of one call that starts with ``request``; returns its `CallResult`.

    ``lm`` is read, never called: its input limit (to cut a prompt that exceeded the
    context window) and what it supports (to build a fallback request).

    Raises:
        ParseError: No usable answer (after the re-asks, or the fallback).
        LMError: Thrown in by the driver and not handled here.
        TruncationError: The prompt cannot be cut enough.
    """
    # Written out rather than in helpers: each generator a call goes through costs time.
    try:
        response = _answer((yield Send(request)))
    except ContextWindowExceededError as exc:
        # The first request only: cut once to the model's input limit and sent again.
        request = request.fitted_to_context(lm, exc)
        response = _answer((yield Send(request)))
    scope.responded(response)
    attempts: list[Attempt] = []
    while True:
        try:
            return read(request, response).retried(attempts)
        except (UnreadableError, ParseError) as failure:
            error = _error_of(failure)
            scope.parse_failed(error)
            if len(attempts) < options.max_retries:
                request, attempt = _reask(request, response, error, len(attempts) + 1)
                attempts.append(attempt)
                scope.retried(attempt.feedback)
                yield Restart(_reask_reason(error))
                # A re-ask is the same conversation, longer: a context error is final.
                response = _answer((yield Send(request)))
                scope.responded(response)
                continue
            if not isinstance(failure, UnreadableError) or options.max_retries:
                raise _with_attempts(error, attempts) from None
            reason = _fallback_reason(failure)
            scope.retried(reason)
            yield Restart(reason)
            second, fallback_options = _fallback(request, lm, failure, options)
            try:
                result = yield from call_flow(second, lm, fallback_options, scope)
            except ParseError as again:
                raise _fallback_failed(failure, again) from again
            return result.after(response, failure.fallback.route)


def _answer(response: LMResponse | None) -> LMResponse:
    """The response a driver sent back for a `Send` step."""
    if response is None:  # pragma: no cover - a driver answers every Send with a response
        raise TypeError("a call flow's Send step must be answered with the model's response")
    return response


def _fallback(
    request: Request, lm: BaseLM, failure: UnreadableError, options: CallOptions
) -> tuple[Request, CallOptions]:
    """The request of the fallback adapter, built as a call with it would build it."""
    logger().warning(
        "%s: %s (a second request)", request.original.__name__, _fallback_reason(failure)
    )
    params, fallback_options, build = request.again(options)
    second = begin(
        failure.fallback, lm, request.original, (), request.inputs, params, fallback_options, build
    )
    return second, fallback_options


def _error_of(failure: Exception) -> ParseError:
    if isinstance(failure, UnreadableError):
        return failure.error
    assert isinstance(failure, ParseError)  # noqa: S101 - the only two kinds caught
    return failure


def _reask(
    request: Request, response: LMResponse, error: ParseError, number: int
) -> tuple[Request, Attempt]:
    """The request that sends the model its answer back with what was wrong with it."""
    logger().info(
        "%s: re-ask %d with %s: the answer could not be used (%s)",
        request.original.__name__,
        number,
        type(request.adapter).__name__,
        _problems(error, reasons=True),
    )
    feedback = request.adapter.retry_message(request.signature, error)
    answer = error.completion or response.text
    return request.reask(answer, feedback, number), Attempt(response, error, feedback)


def _with_attempts(error: ParseError, attempts: list[Attempt]) -> ParseError:
    """The last error, with every earlier attempt's error attached."""
    if attempts:
        error.attempts = [attempt.error for attempt in attempts]
    return error


def _fallback_reason(unreadable: UnreadableError) -> str:
    error = unreadable.error
    return (
        f"the completion could not be read as {error.adapter} output "
        f"({_problems(error)}); asking again with {type(unreadable.fallback).__name__}"
    )


def _reask_reason(error: ParseError) -> str:
    return f"the answer could not be used ({_problems(error)}); asking again with what was wrong"


def _fallback_failed(unreadable: UnreadableError, again: ParseError) -> ParseError:
    """The error of a call whose answer neither the adapter nor its fallback request could read.

    It is the adapter's error (the adapter the call was made with, its per-field reasons,
    the first completion), saying that the fallback failed too, and why; the fallback's
    own error, with its completion, is the ``__cause__``.
    """
    error = unreadable.error
    cut = "; it was cut off at the token limit: raise max_tokens" if again.truncated else ""
    answer = again.completion if len(again.completion) <= 80 else again.completion[:77] + "..."
    fallback = (
        f"neither could the fallback, {again.adapter}: not this completion, nor the answer to "
        f"a second request in its format ({_problems(again, reasons=True)}{cut}; that answer: "
        f"{answer!r}; its full error is this error's __cause__)"
    )
    if error.invalid or error.missing:
        fallback += f"; what {error.adapter} found wrong:"
    combined = ParseError(
        adapter=error.adapter,
        signature=error.signature,
        completion=error.completion,
        parsed=error.parsed,
        missing=error.missing,
        invalid=error.invalid,
        problem=f"{error.problem}\n  - {fallback}" if error.problem else fallback,
        truncated=error.truncated,
    )
    combined.attempts = list(error.attempts)
    return combined


def _problems(error: ParseError, *, reasons: bool = False) -> str:
    """What was wrong with an answer, for a message: its invalid and missing fields.

    With ``reasons``, each invalid field comes with why it is invalid.
    """
    why = [error.problem] if error.problem else []
    if error.invalid:
        fields = (
            [f"{name}: {reason}" for name, (_, reason) in error.invalid.items()]
            if reasons
            else list(error.invalid)
        )
        why.append("invalid: " + ", ".join(fields))
    if error.missing:
        why.append("missing: " + ", ".join(error.missing))
    return "; ".join(why) or "no outputs"
