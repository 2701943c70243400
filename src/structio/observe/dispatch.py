"""Telling the callbacks what a call does: `call_started` and the `CallScope` it returns.

The call layer starts a scope for each call and reports to it; the scope builds the events
and gives them to each callback in turn. With no callback configured, `call_started` is
one settings lookup and returns a scope whose methods do nothing, so an unobserved call
pays next to nothing.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from structio._util.log import logger
from structio._util.secrets import public_params, redact_data, secret_values
from structio.lm.types import LMResponse, Usage
from structio.rendering.prompt import Prompt
from structio.settings import current_settings

if TYPE_CHECKING:
    from structio.adapters.base import Adapter
    from structio.exceptions import ParseError
    from structio.lm.base import BaseLM
    from structio.observe.events import CallEvent
    from structio.signatures.signature import Signature

__all__ = ["CallOutcome", "CallScope", "call_started"]


class CallOutcome(Protocol):
    """What a call produced, as `CallScope.ended` reads it (`structio.CallResult` is one)."""

    @property
    def outputs(self) -> list[dict[str, Any]]:
        """One dict of output values per choice."""

    @property
    def route(self) -> str:
        """How the outputs were read."""

    @property
    def responses(self) -> Sequence[LMResponse]:
        """Every model response of the call."""


class CallScope:
    """One call as its callbacks see it: report to it as the call goes.

    Use it as a context manager around the call: leaving it with an exception tells the
    callbacks the call failed with that exception, unless `ended` was called already.
    Only the first `ended` counts.

    Example (the call layer's part, in outline):

        >>> with call_started(adapter, lm, sig, inputs, messages, params) as scope:
        ...     response = lm(messages, **params)
        ...     scope.responded(response)
        ...     result = read(response)
        ...     scope.ended(result)
    """

    __slots__ = ("_attempt", "_base", "_callbacks", "_done", "_responses", "_start")

    def __init__(self, callbacks: tuple[Any, ...], base: dict[str, Any]) -> None:
        self._callbacks = callbacks
        self._base = base
        self._start = time.perf_counter()
        self._attempt = 1
        self._responses: list[LMResponse] = []
        self._done = False

    @property
    def call_id(self) -> str | None:
        """The call's id in its events (``None`` when no callback is told)."""
        return str(self._base["call_id"])

    def responded(self, response: LMResponse) -> None:
        """A request of the call was answered: its usage counts if the call then fails."""
        self._responses.append(response)

    def parse_failed(self, error: ParseError, attempt: int | None = None) -> None:
        """A completion could not be read (``attempt``: which request gave it; the current one).

        Tell this for each failure the call acts on (asks again, or raises), not for a
        completion that the fallback adapter read from the same text.
        """
        from structio.observe.events import ParseErrorEvent

        chosen = self._attempt if attempt is None else attempt
        _tell(
            self._callbacks,
            "on_parse_error",
            ParseErrorEvent(**self._base, error=error, attempt=chosen),
        )

    def retried(self, feedback: str, attempt: int | None = None) -> None:
        """The call makes another request, for the reason ``feedback`` gives.

        ``attempt`` is which request this is; by default the one after the current one.
        """
        from structio.observe.events import RetryEvent

        self._attempt = self._attempt + 1 if attempt is None else attempt
        _tell(
            self._callbacks,
            "on_retry",
            RetryEvent(**self._base, attempt=self._attempt, feedback=feedback),
        )

    def ended(
        self,
        result: CallOutcome | None = None,
        *,
        error: BaseException | None = None,
        responses: Sequence[LMResponse] | None = None,
    ) -> None:
        """The call ended: with ``result``, or with ``error``.

        Args:
            result: What the call produced (its responses are the call's).
            error: The exception that ended the call.
            responses: The call's responses when there is no result; by default those told
                with `responded`.
        """
        if self._done:
            return
        self._done = True
        from structio.observe.events import CallEndEvent

        if result is not None:
            outputs = list(result.outputs)
            route: str | None = result.route
            got = tuple(result.responses)
        else:
            outputs, route = [], None
            got = tuple(self._responses if responses is None else responses)
        usage, cost = _totals(got)
        event = CallEndEvent(
            **self._base,
            outputs=outputs,
            route=route,
            usage=usage,
            cost=cost,
            latency=time.perf_counter() - self._start,
            responses=got,
            error=error,
        )
        _tell(self._callbacks, "on_call_end", event)

    def __enter__(self) -> CallScope:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if not self._done:
            self.ended(error=exc)


class _Unobserved(CallScope):
    """The scope of a call no callback is told of: every report is dropped at once."""

    __slots__ = ()

    def __init__(self) -> None:  # no state: one instance serves every call
        pass

    @property
    def call_id(self) -> str | None:
        """No id: nothing is told."""
        return None

    def responded(self, response: LMResponse) -> None:
        """Nothing to keep."""

    def parse_failed(self, error: ParseError, attempt: int | None = None) -> None:
        """Nothing to tell."""

    def retried(self, feedback: str, attempt: int | None = None) -> None:
        """Nothing to tell."""

    def ended(
        self,
        result: CallOutcome | None = None,
        *,
        error: BaseException | None = None,
        responses: Sequence[LMResponse] | None = None,
    ) -> None:
        """Nothing to tell."""

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        pass


_UNOBSERVED = _Unobserved()


def call_started(
    adapter: Adapter,
    lm: BaseLM,
    signature: type[Signature],
    inputs: Mapping[str, Any] | None,
    messages: Sequence[Mapping[str, Any]] | Prompt,
    params: Mapping[str, Any],
) -> CallScope:
    """Tell the callbacks in effect that a call starts; report the rest to the scope returned.

    Args:
        adapter: The adapter the call is made with.
        lm: The model it calls.
        signature: The signature it was called with.
        inputs: The call's inputs.
        messages: The messages of its first request, or its `Prompt` (turned into
            messages only when a callback is told).
        params: The call's request parameters (the LM's own are added, credentials removed).
    """
    callbacks = current_settings().callbacks
    if not callbacks:  # the usual case: nothing is observed, nothing is built
        return _UNOBSERVED
    import uuid

    # Loaded on the first observed call: an unobserved program never builds an event.
    from structio.observe.events import CallStartEvent

    if isinstance(messages, Prompt):
        messages = messages.messages
    sent = lm.request_params(params)
    secrets = secret_values(sent)
    base: dict[str, Any] = {
        "call_id": uuid.uuid4().hex,
        "adapter": type(adapter).__name__,
        "signature": signature.__name__,
        "model": lm.model,
        "inputs": dict(inputs or {}),
        # Copies: a callback that changes what it was given never changes the request.
        "messages": redact_data([dict(m) for m in messages], secrets),
        "params": redact_data(public_params(sent), secrets),
    }
    scope = CallScope(callbacks, base)
    _tell(callbacks, "on_call_start", CallStartEvent(**base))
    return scope


def _totals(responses: tuple[LMResponse, ...]) -> tuple[Usage, float | None]:
    """The tokens of the responses, and their cost (``None`` if any is unknown, or none came)."""
    if not responses:
        return Usage(), None
    usage = sum((r.usage for r in responses), Usage())
    costs = [r.cost for r in responses]
    return usage, None if None in costs else float(sum(c or 0.0 for c in costs))


def _tell(callbacks: tuple[Any, ...], hook: str, event: CallEvent) -> None:
    """Give the event to each callback's hook in turn; a hook that raises is logged, not raised."""
    for callback in callbacks:
        method = getattr(callback, hook, None)
        if method is None:
            continue
        try:
            method(event)
        except Exception:
            # A broken callback must not break the call it watches, nor the next callback.
            logger().warning(
                "callback %r raised in %s (call %s); the call goes on",
                callback,
                hook,
                event.call_id,
                exc_info=True,
            )
