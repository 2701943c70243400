"""The call layer: the only place that calls a model through an adapter.

One call: the adapter renders the prompt (truncated to ``max_prompt_tokens`` if asked),
chooses its request parameters, the model answers, and the adapter reads every choice.
When the provider says the context window is exceeded, the prompt is cut to the model's
input limit and sent once more. When a completion cannot be read, the adapter's fallback
(`Adapter.fallback_adapter`, JSONAdapter for ChatAdapter) reads the same completion, then,
if that fails too, makes one more request. Provider errors never fall back.

`Predict`, both kinds of prompt function and everything above them call models through
`call` / `acall`; the sync and async paths sit side by side below, step for step. `stream`
/ `astream` are the same call read while the model writes: they yield the adapter's stream
events (`structio.parsing.stream`), then the `CallResult`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, Callable, Generator, Iterable, Iterator, Mapping
from typing import Any, Literal, Union

from structio._util.log import logger
from structio.adapters.base import Adapter, SignatureLike, as_signature, check_input_types
from structio.adapters.native import Native
from structio.exceptions import (
    ConfigurationError,
    ContextWindowExceededError,
    ParseError,
    ServerError,
    TruncationError,
)
from structio.lm.base import BaseLM, reset_origin, set_origin
from structio.lm.types import AsyncLMStream, Completion, LMResponse, StreamItem, Usage
from structio.observe.dispatch import CallScope, call_started
from structio.parsing.clean import drafts
from structio.parsing.stream import FieldValue, Reread, StreamEvent
from structio.rendering.prompt import Part, Prompt, Truncation, TruncationStep
from structio.signatures.signature import Signature

__all__ = [
    "Attempt",
    "Builder",
    "CallResult",
    "PreparedCall",
    "Route",
    "StreamOut",
    "acall",
    "astream",
    "call",
    "check_retries",
    "prepare",
    "read_response",
    "stream",
]

Route = Literal["chat", "json", "xml", "json_reparse", "json_request"]
"""Which route produced a result: the adapter's own format (``"chat"``, ``"json"``,
``"xml"``), the same completion read again by the fallback adapter (``"json_reparse"``, no
new request), or a new request with the fallback adapter after the first could not be read
(``"json_request"``)."""

Builder = Callable[[Adapter], tuple[type[Signature], Prompt]]
"""Builds the prompt of a call with a given adapter (the fallback gets its own prompt)."""

# Our token count and the provider's differ (other tokenizers, message framing): keep a margin.
_CONTEXT_MARGIN = 0.9


@dataclasses.dataclass(frozen=True)
class CallResult:
    """What a call through an adapter produced.

    Attributes:
        outputs: One dict of typed output values per completion (``n=`` choices).
        route: How the outputs were read (see `Route`).
        responses: Every model response involved, in order (two after a fallback request).
        truncation: What was cut from the prompt before the answering request, if anything.
        max_tokens_reached: The model stopped at its token limit after every output was
            closed (a cut inside an output is a `ParseError` instead).
        attempts: The answers that could not be used before this one, each sent back to the
            model with what was wrong (``max_retries``); their responses are in
            ``responses`` too, so `usage` and `cost` count them.
    """

    outputs: list[dict[str, Any]]
    route: Route
    responses: list[LMResponse] = dataclasses.field(default_factory=list)
    truncation: Truncation | None = None
    max_tokens_reached: bool = False
    attempts: tuple[Attempt, ...] = ()

    @property
    def path(self) -> Route:
        """The former name of `route`."""
        return self.route

    @property
    def usage(self) -> Usage:
        """Tokens of every request made for this result."""
        if len(self.responses) == 1:  # the usual case: nothing to add up
            return self.responses[0].usage
        total = Usage()
        for response in self.responses:
            total = total + response.usage
        return total

    @property
    def cost(self) -> float | None:
        """Cost in USD of every request, when known."""
        if len(self.responses) == 1:
            cost = self.responses[0].cost
            return None if cost is None else float(cost)
        costs = [r.cost for r in self.responses]
        return None if any(c is None for c in costs) else float(sum(c or 0.0 for c in costs))

    def after(self, first: LMResponse) -> CallResult:
        """This result as the answer of a fallback request made after ``first`` failed."""
        return CallResult(
            self.outputs,
            "json_request",
            [first, *self.responses],
            self.truncation,
            self.max_tokens_reached,
            self.attempts,
        )

    def retried(self, attempts: list[Attempt]) -> CallResult:
        """This result as the answer given after ``attempts`` were sent back."""
        if not attempts:
            return self
        earlier = [attempt.response for attempt in attempts]
        return dataclasses.replace(
            self, responses=[*earlier, *self.responses], attempts=tuple(attempts)
        )


@dataclasses.dataclass(frozen=True)
class Attempt:
    """An answer that could not be used, and what the model was told about it.

    Attributes:
        response: The model's response.
        error: Why it could not be used (missing and invalid fields, and why).
        feedback: The message sent back to the model, after its own answer.
    """

    response: LMResponse
    error: ParseError
    feedback: str

    @property
    def completions(self) -> list[str]:
        """The text of each choice of the response."""
        return [c.text for c in self.response.completions]

    @property
    def usage(self) -> Usage:
        """The tokens of this attempt's request."""
        return self.response.usage


@dataclasses.dataclass(frozen=True)
class _Request:
    """One request being prepared: the full prompt, what is sent, and what was cut."""

    adapter: Adapter
    signature: type[Signature]
    prompt: Prompt
    sent: Prompt
    params: dict[str, Any]
    step: TruncationStep
    truncation: Truncation | None = None
    # What a fallback request is built from: the caller's parameters, not the adapter's.
    given: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    max_prompt_tokens: int | None = None
    build: Builder | None = None
    # The call's inputs, so that an echo of one is not read as the answer.
    inputs: Mapping[str, Any] | None = None
    # Tool calls and reasoning that travel beside the text; `signature` is then the wire one.
    native: Native | None = None
    # The signature the call was made with, which a fallback call starts from again.
    given_signature: type[Signature] | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.sent.messages

    def again(self) -> dict[str, Any]:
        """The options of a fallback call: the same parameters, budget and prompt builder."""
        return {
            "params": self.given,
            "max_prompt_tokens": self.max_prompt_tokens,
            "truncation_step": self.step,
            # The default prompt is rebuilt by the fallback (its tools may travel otherwise).
            "build": None if self.native is not None else self.build,
            "inputs": self.inputs,
        }

    @property
    def original(self) -> type[Signature]:
        """The signature the call was made with (a fallback call starts from it)."""
        return self.given_signature or self.signature

    def reask(self, answer: str, feedback: str, number: int) -> _Request:
        """The same conversation, with the model's answer and what was wrong with it."""
        parts = [
            *self.sent.parts,
            Part(f"retry_{number}_assistant", "assistant", answer),
            Part(f"retry_{number}_user", "user", feedback),
        ]
        prompt = Prompt(parts)
        return dataclasses.replace(self, prompt=prompt, sent=prompt)

    def truncated(
        self, reason: Literal["max_prompt_tokens", "context_window"], limit: int
    ) -> _Request:
        sent = self.prompt.truncate(limit, self.step)
        if not sent.dropped:
            return dataclasses.replace(self, sent=sent)
        truncation = Truncation(
            reason=reason,
            token_limit=limit,
            tokens_before=self.prompt.token_count,
            tokens_after=sent.token_count,
            dropped=tuple(p.name for p in sent.dropped),
        )
        # A budget the caller set cuts every long prompt (INFO); the provider refusing the
        # prompt is a surprise worth seeing (WARNING).
        log = logger().info if reason == "max_prompt_tokens" else logger().warning
        log(
            "%s: prompt cut from %d to %d tokens to fit %s: dropped %s",
            self.original.__name__,
            truncation.tokens_before,
            truncation.tokens_after,
            f"max_prompt_tokens={limit}"
            if reason == "max_prompt_tokens"
            else f"the model's context window (a budget of {limit} tokens)",
            ", ".join(truncation.dropped),
        )
        return dataclasses.replace(self, sent=sent, truncation=truncation)

    def fitted_to_context(self, lm: BaseLM, error: ContextWindowExceededError) -> _Request:
        """The request cut to the model's input limit, or ``error`` raised if that cannot help."""
        limit = lm.max_input_tokens
        if not limit:
            raise error
        budget = max(1, int(limit * _CONTEXT_MARGIN))
        if self.truncation is not None:
            budget = min(budget, self.truncation.token_limit)
        try:
            fitted = self.truncated("context_window", budget)
        except TruncationError as cannot:
            raise cannot from error
        if len(fitted.sent) == len(self.sent):
            raise error  # nothing more can be dropped; the same prompt would fail again
        return fitted


class _UnreadableError(Exception):
    """A completion neither the adapter nor its fallback could read: ask the fallback."""

    def __init__(self, error: ParseError, fallback: Adapter) -> None:
        super().__init__(str(error))
        self.error = error
        self.fallback = fallback


def _begin(
    adapter: Adapter,
    lm: BaseLM,
    signature: SignatureLike,
    demos: Iterable[Mapping[str, Any]],
    inputs: Mapping[str, Any] | None,
    params: Mapping[str, Any] | None,
    max_prompt_tokens: int | None,
    step: TruncationStep,
    build: Builder | None,
    *,
    check_inputs: bool = False,
) -> _Request:
    """The first request of a call: rendered, truncated to the budget, with the parameters."""
    native: Native | None = None
    given_signature: type[Signature] | None = None
    if build is None:
        given_signature = as_signature(signature)
        if check_inputs:
            check_input_types(given_signature, inputs)
        native = adapter.native(given_signature, lm)
        values = inputs or {}
        if native is None:
            build = _builder(given_signature, list(demos), values)
        else:
            build = _builder(native.wire, list(demos), native.wire_inputs(values))
    sig, prompt = build(adapter)
    given = params or {}
    request_params = adapter.request_params(sig, given, lm)
    if native is not None:
        request_params = native.request_params(
            request_params, inputs or {}, getattr(lm, "params", None)
        )
    request = _Request(
        adapter,
        sig,
        prompt,
        prompt,
        request_params,
        step,
        None,
        given,
        max_prompt_tokens,
        build,
        inputs,
        native,
        given_signature,
    )
    if max_prompt_tokens is not None:
        request = request.truncated("max_prompt_tokens", max_prompt_tokens)
    return request


def _read(request: _Request, response: LMResponse) -> CallResult:
    """Every choice of ``response`` read by the adapter, or by its fallback without a request.

    A choice the model ended at its token limit (finish reason ``length``) gives values only
    when every output was closed before the cut; otherwise it is a `ParseError` that says it
    was cut off, whatever could be read from it.
    """
    adapter, sig = request.adapter, request.signature
    if not response.completions:  # a response must hold an answer; an empty one is the provider's
        raise ServerError(
            f"{response.model or 'the model'} returned no choices",
            model=response.model or None,
        )
    outputs: list[dict[str, Any]] = []
    route: str = adapter.route
    limited = False
    native = request.native
    for completion in response.completions:
        text = adapter.answer_text(completion.text, completion.tool_calls)
        try:
            values, reader, open_fields = adapter.read(sig, text, inputs=request.inputs)
        except ParseError as error:
            if native is not None and native.native_calls and completion.tool_calls:
                # The model called tools instead of answering: that is its answer for now.
                outputs.append(_native_values(request, completion, None))
                continue
            if completion.truncated:
                raise error.with_truncation() from None
            fallback = adapter.fallback_adapter()
            if fallback is None:
                raise
            try:
                values = fallback.parse(sig, text, inputs=request.inputs)
            except ParseError:
                raise _UnreadableError(error, fallback) from error
            route = "json_reparse"
        else:
            if completion.truncated:
                _check_closed(adapter, sig, text, values, open_fields)
                limited = True
            if reader == "JSON" and adapter.route in ("chat", "xml"):
                route = "json_reparse"  # a JSON answer read by a text format: no new request
        if native is not None:
            values = _native_values(request, completion, values)
        outputs.append(values)
    if route not in _ROUTES:
        route = "chat"  # a custom adapter's own format is reported as the "chat" route
    return CallResult(outputs, route, [response], request.truncation, limited)  # type: ignore[arg-type]


@dataclasses.dataclass(frozen=True)
class PreparedCall:
    """The first request of a call, prepared but not sent (for provider batch APIs).

    Attributes:
        messages: The chat messages the request sends (rendered, truncated if asked).
        params: The call's request parameters with the adapter's own (``response_format``,
            ``tools``...); the LM adds its parameters when it sends them
            (``lm.request_params(params)``).
    """

    messages: list[dict[str, Any]]
    params: dict[str, Any]
    _request: _Request = dataclasses.field(repr=False, compare=False)


def prepare(
    adapter: Adapter,
    lm: BaseLM,
    signature: SignatureLike,
    demos: Iterable[Mapping[str, Any]] = (),
    inputs: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    max_prompt_tokens: int | None = None,
    truncation_step: TruncationStep = 0,
    check_inputs: bool = True,
) -> PreparedCall:
    """The request `call` would send first, without sending it.

    The same preparation as `call` (render, truncate to ``max_prompt_tokens``, the
    adapter's request parameters, native tools), so a request sent another way (a
    provider's batch API) is the very request of the online call.

    Raises:
        FormatError, TruncationError: As `call`.
    """
    request = _begin(
        adapter,
        lm,
        signature,
        demos,
        inputs,
        params,
        max_prompt_tokens,
        truncation_step,
        None,
        check_inputs=check_inputs,
    )
    return PreparedCall(request.messages, dict(request.params), request)


def read_response(prepared: PreparedCall, response: LMResponse) -> CallResult:
    """Every choice of ``response`` read as `call` reads the answer to ``prepared``.

    The adapter's fallback reads the same text again (ChatAdapter: as JSON) but no new
    request is made: a completion neither can read raises.

    Raises:
        ParseError: A completion cannot be read (the adapter's own error).
        ServerError: The response holds no choice.
    """
    try:
        return _read(prepared._request, response)
    except _UnreadableError as unreadable:
        raise unreadable.error from None


def _native_values(
    request: _Request, completion: Completion, values: dict[str, Any] | None
) -> dict[str, Any]:
    """Every output of the call: what the text gave, and the tool calls and reasoning."""
    native = request.native
    if native is None:  # pragma: no cover - callers check
        return values or {}
    reasoning = completion.reasoning
    if reasoning is None and native.native_reasoning:
        reasoning = drafts(completion.text)  # a model that thinks in <think> tags
    return native.fill(
        values,
        text=completion.text,
        tool_calls=completion.tool_calls,
        reasoning=reasoning,
        inputs=request.inputs,
        adapter=type(request.adapter).__name__,
    )


def _check_closed(
    adapter: Adapter,
    sig: type[Signature],
    text: str,
    values: dict[str, Any],
    open_fields: frozenset[str],
) -> None:
    """Raise the truncation `ParseError` if an output was still open when the model stopped."""
    cut = [name for name in sig.output_fields if name in open_fields]
    if not cut:
        return
    reason = "the model stopped at its token limit while writing this; it may be incomplete"
    raise ParseError(
        adapter=type(adapter).__name__,
        signature=sig,
        completion=text,
        parsed={k: v for k, v in values.items() if k not in cut},
        invalid={name: (str(values.get(name)), reason) for name in cut},
        truncated=True,
    )


_ROUTES = frozenset(("chat", "json", "xml", "json_reparse", "json_request"))


def _builder(
    sig: type[Signature], demos: list[Mapping[str, Any]], inputs: Mapping[str, Any]
) -> Builder:
    def build(adapter: Adapter) -> tuple[type[Signature], Prompt]:
        return sig, adapter.render(sig, demos, inputs)

    return build


def call(
    adapter: Adapter,
    lm: BaseLM,
    signature: SignatureLike,
    demos: Iterable[Mapping[str, Any]] = (),
    inputs: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    max_prompt_tokens: int | None = None,
    truncation_step: TruncationStep = 0,
    build: Builder | None = None,
    max_retries: int = 0,
    check_inputs: bool = True,
) -> CallResult:
    """Format, call the model, and read every choice, with the fallback and context retry.

    Args:
        adapter: The wire format.
        lm: The model.
        signature: A signature class or a string spec.
        demos: Few-shot examples.
        inputs: The signature's inputs.
        params: Request parameters for this call (``temperature``, ``n``...).
        max_prompt_tokens: Truncate the history so the prompt fits this many tokens.
        truncation_step: With ``max_prompt_tokens``: 0, a fixed step, or ``"auto"``.
        build: Build the prompt yourself from the adapter (prompt functions do); by default
            ``adapter.render(signature, demos, inputs)``.
        max_retries: How many times an answer that cannot be used (unreadable, a missing
            output, a value that fails its type, constraints or validators) is sent back to
            the model with what was wrong (`Adapter.retry_message`), in the same
            conversation. With re-asking on, the adapter's fallback still reads each answer
            in JSON without a request, but its blind new request is not made: the re-ask
            replaces it. 0 (default): no re-asking; the fallback request is made.
        check_inputs: Check each input value against its declared type first
            (`FormatError` if one does not fit); ``False`` sends values as they are.

    Raises:
        FormatError: An input is missing, unknown, or (with ``check_inputs``) does not fit
            its type.
        ParseError: A completion cannot be read (after the fallback, if any, or the last
            re-ask: the error's ``attempts`` holds the earlier ones). It is ``adapter``'s
            error; when the fallback request failed too, its message says so and why, and
            the fallback's own error is its ``__cause__``. When the model hit its token
            limit, the error says so (``truncated``).
        LMError: The provider failed; never answered with a fallback.
        TruncationError: The parts that cannot be dropped exceed the budget.
    """
    check_retries(max_retries)
    request = _begin(
        adapter,
        lm,
        signature,
        demos,
        inputs,
        params,
        max_prompt_tokens,
        truncation_step,
        build,
        check_inputs=check_inputs,
    )
    with _observe(request, lm) as scope:
        result = _call(request, lm, max_retries, scope)
        scope.ended(result)
    return result


def _observe(request: _Request, lm: BaseLM) -> CallScope:
    """Tell the callbacks a call starts (next to nothing when none is configured)."""
    return call_started(
        request.adapter, lm, request.original, request.inputs, request.sent, request.params
    )


def _call(request: _Request, lm: BaseLM, max_retries: int, scope: CallScope) -> CallResult:
    request, response = _send(request, lm, fit=True)
    scope.responded(response)
    attempts: list[Attempt] = []
    while True:
        try:
            return _read(request, response).retried(attempts)
        except (_UnreadableError, ParseError) as failure:
            error = _error_of(failure)
            scope.parse_failed(error)
            if len(attempts) < max_retries:
                request, attempt = _reask(request, response, error, len(attempts) + 1)
                attempts.append(attempt)
                scope.retried(attempt.feedback)
                request, response = _send(request, lm, fit=False)
                scope.responded(response)
                continue
            if not isinstance(failure, _UnreadableError) or max_retries:
                raise _with_attempts(error, attempts) from None
            scope.retried(_fallback_reason(failure))
            try:
                result = _call(_fallback(request, lm, failure), lm, 0, scope)
            except ParseError as again:
                raise _fallback_failed(failure, again) from again
            return result.after(response)


def _fallback(request: _Request, lm: BaseLM, failure: _UnreadableError) -> _Request:
    """The request of the fallback adapter, built as a call with it would build it."""
    logger().warning(
        "%s: %s (a second request)", request.original.__name__, _fallback_reason(failure)
    )
    again = request.again()
    return _begin(
        failure.fallback,
        lm,
        request.original,
        (),
        again["inputs"],
        again["params"],
        again["max_prompt_tokens"],
        again["truncation_step"],
        again["build"],
    )


def _send(request: _Request, lm: BaseLM, *, fit: bool) -> tuple[_Request, LMResponse]:
    """Send a request; once cut to the context window if the provider says it is too long."""
    token = set_origin(request.adapter, request.signature)
    try:
        try:
            return request, lm(request.messages, **request.params)
        except ContextWindowExceededError as exc:
            if not fit:
                raise
            request = request.fitted_to_context(lm, exc)
            return request, lm(request.messages, **request.params)
    finally:
        reset_origin(token)


async def _asend(request: _Request, lm: BaseLM, *, fit: bool) -> tuple[_Request, LMResponse]:
    token = set_origin(request.adapter, request.signature)
    try:
        try:
            return request, await lm.acall(request.messages, **request.params)
        except ContextWindowExceededError as exc:
            if not fit:
                raise
            request = request.fitted_to_context(lm, exc)
            return request, await lm.acall(request.messages, **request.params)
    finally:
        reset_origin(token)


def check_retries(max_retries: int) -> None:
    """Refuse a ``max_retries`` that is not a whole number, 0 or more."""
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ConfigurationError(
            f"max_retries must be a whole number of re-asks, 0 or more; got {max_retries!r}"
        )


def _error_of(failure: Exception) -> ParseError:
    if isinstance(failure, _UnreadableError):
        return failure.error
    assert isinstance(failure, ParseError)  # noqa: S101 - the only two kinds caught
    return failure


def _reask(
    request: _Request, response: LMResponse, error: ParseError, number: int
) -> tuple[_Request, Attempt]:
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


async def acall(
    adapter: Adapter,
    lm: BaseLM,
    signature: SignatureLike,
    demos: Iterable[Mapping[str, Any]] = (),
    inputs: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    max_prompt_tokens: int | None = None,
    truncation_step: TruncationStep = 0,
    build: Builder | None = None,
    max_retries: int = 0,
    check_inputs: bool = True,
) -> CallResult:
    """Async form of `call`: the same steps, with ``await lm.acall``."""
    check_retries(max_retries)
    request = _begin(
        adapter,
        lm,
        signature,
        demos,
        inputs,
        params,
        max_prompt_tokens,
        truncation_step,
        build,
        check_inputs=check_inputs,
    )
    with _observe(request, lm) as scope:
        result = await _acall(request, lm, max_retries, scope)
        scope.ended(result)
    return result


async def _acall(request: _Request, lm: BaseLM, max_retries: int, scope: CallScope) -> CallResult:
    request, response = await _asend(request, lm, fit=True)
    scope.responded(response)
    attempts: list[Attempt] = []
    while True:
        try:
            return _read(request, response).retried(attempts)
        except (_UnreadableError, ParseError) as failure:
            error = _error_of(failure)
            scope.parse_failed(error)
            if len(attempts) < max_retries:
                request, attempt = _reask(request, response, error, len(attempts) + 1)
                attempts.append(attempt)
                scope.retried(attempt.feedback)
                request, response = await _asend(request, lm, fit=False)
                scope.responded(response)
                continue
            if not isinstance(failure, _UnreadableError) or max_retries:
                raise _with_attempts(error, attempts) from None
            scope.retried(_fallback_reason(failure))
            try:
                result = await _acall(_fallback(request, lm, failure), lm, 0, scope)
            except ParseError as again:
                raise _fallback_failed(failure, again) from again
            return result.after(response)


StreamOut = Union[StreamEvent, CallResult]  # noqa: UP007 - a runtime alias on 3.10
"""What `stream` yields: events while the model writes, then the `CallResult`."""


def _fallback_reason(unreadable: _UnreadableError) -> str:
    error = unreadable.error
    return (
        f"the completion could not be read as {error.adapter} output "
        f"({_problems(error)}); asking again with {type(unreadable.fallback).__name__}"
    )


def stream(
    adapter: Adapter,
    lm: BaseLM,
    signature: SignatureLike,
    demos: Iterable[Mapping[str, Any]] = (),
    inputs: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    max_prompt_tokens: int | None = None,
    truncation_step: TruncationStep = 0,
    build: Builder | None = None,
    max_retries: int = 0,
    check_inputs: bool = True,
) -> Generator[StreamOut, None, None]:
    """`call`, read while the model writes: stream events, then the `CallResult` last.

    The prompt is built here (a wrong input raises now); the request is made when the
    stream is first read. The events are those of the first choice, from the adapter's
    `stream_reader`; the result is what `call` returns for the same completion (the same
    fallback, re-asks and context retry; a re-ask after events were given is announced
    with a `Reread`). Closing the generator early ends the request.

    Raises:
        FormatError, TruncationError: At once, as `call`.
        ParseError, LMError: While iterating, as `call`.
    """
    check_retries(max_retries)
    request = _begin(
        adapter,
        lm,
        signature,
        demos,
        inputs,
        params,
        max_prompt_tokens,
        truncation_step,
        build,
        check_inputs=check_inputs,
    )
    return _streamed(request, lm, max_retries)


def _streamed(
    request: _Request, lm: BaseLM, max_retries: int = 0
) -> Generator[StreamOut, None, None]:
    with _observe(request, lm) as scope:
        result = yield from _stream_body(request, lm, max_retries, scope)
        scope.ended(result)
    yield result


def _stream_body(
    request: _Request, lm: BaseLM, max_retries: int, scope: CallScope
) -> Generator[StreamEvent, None, CallResult]:
    attempts: list[Attempt] = []
    while True:
        reader = request.adapter.stream_reader(request.signature, inputs=request.inputs)
        source = lm.stream(request.messages, **request.params)
        try:
            item = _next(source, request)
        except ContextWindowExceededError as exc:
            source.close()
            if attempts:  # a re-ask is the same conversation, longer: nothing to cut
                raise
            request = request.fitted_to_context(lm, exc)
            source = lm.stream(request.messages, **request.params)
            item = _next(source, request)
        with source:
            while not isinstance(item, LMResponse):
                yield from reader.feed(item)
                item = _next(source, request)
        scope.responded(item)
        try:
            result = _read(request, item)
        except (_UnreadableError, ParseError) as failure:
            error = _error_of(failure)
            scope.parse_failed(error)
            if len(attempts) < max_retries:
                request, attempt = _reask(request, item, error, len(attempts) + 1)
                attempts.append(attempt)
                scope.retried(attempt.feedback)
                if reader.said:
                    yield Reread(_reask_reason(error))
                continue
            if not isinstance(failure, _UnreadableError) or max_retries:
                raise _with_attempts(error, attempts) from None
            scope.retried(_fallback_reason(failure))
            if reader.said:
                yield Reread(_fallback_reason(failure))
            try:
                again = yield from _stream_body(_fallback(request, lm, failure), lm, 0, scope)
            except ParseError as error_again:
                raise _fallback_failed(failure, error_again) from error_again
            return again.after(item)
        yield from reader.finish(result.outputs[0])
        yield from _native_events(request, result)
        return result.retried(attempts)


def _fallback_failed(unreadable: _UnreadableError, again: ParseError) -> ParseError:
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


def _reask_reason(error: ParseError) -> str:
    return f"the answer could not be used ({_problems(error)}); asking again with what was wrong"


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


def _native_events(request: _Request, result: CallResult) -> list[StreamEvent]:
    """The values of the outputs that came beside the text (the reader never saw them)."""
    if request.native is None or not result.outputs:
        return []
    wire = request.signature.output_fields
    return [
        FieldValue(name, value) for name, value in result.outputs[0].items() if name not in wire
    ]


def _next(source: Iterator[StreamItem], request: _Request) -> StreamItem:
    # The origin is set around each read, never across a yield to the caller: a model
    # that writes its own replies reads it when the stream starts.
    token = set_origin(request.adapter, request.signature)
    try:
        return next(source)
    finally:
        reset_origin(token)


def astream(
    adapter: Adapter,
    lm: BaseLM,
    signature: SignatureLike,
    demos: Iterable[Mapping[str, Any]] = (),
    inputs: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    max_prompt_tokens: int | None = None,
    truncation_step: TruncationStep = 0,
    build: Builder | None = None,
    max_retries: int = 0,
    check_inputs: bool = True,
) -> AsyncGenerator[StreamOut, None]:
    """Async form of `stream`: the same steps, with ``lm.astream``."""
    check_retries(max_retries)
    request = _begin(
        adapter,
        lm,
        signature,
        demos,
        inputs,
        params,
        max_prompt_tokens,
        truncation_step,
        build,
        check_inputs=check_inputs,
    )
    return _astreamed(request, lm, max_retries)


async def _astreamed(
    request: _Request, lm: BaseLM, max_retries: int = 0
) -> AsyncGenerator[StreamOut, None]:
    with _observe(request, lm) as scope:
        body = _astream_body(request, lm, max_retries, scope)
        try:
            async for out in body:
                if isinstance(out, CallResult):
                    scope.ended(out)
                yield out
        finally:
            await body.aclose()


async def _astream_body(
    request: _Request, lm: BaseLM, max_retries: int, scope: CallScope
) -> AsyncGenerator[StreamOut, None]:
    """The events of a streamed call, then its `CallResult` (an async generator returns none)."""
    attempts: list[Attempt] = []
    while True:
        reader = request.adapter.stream_reader(request.signature, inputs=request.inputs)
        source = lm.astream(request.messages, **request.params)
        try:
            item = await _anext(source, request)
        except ContextWindowExceededError as exc:
            await source.aclose()
            if attempts:
                raise
            request = request.fitted_to_context(lm, exc)
            source = lm.astream(request.messages, **request.params)
            item = await _anext(source, request)
        async with source:
            while not isinstance(item, LMResponse):
                for event in reader.feed(item):
                    yield event
                item = await _anext(source, request)
        scope.responded(item)
        try:
            result = _read(request, item)
        except (_UnreadableError, ParseError) as failure:
            error = _error_of(failure)
            scope.parse_failed(error)
            if len(attempts) < max_retries:
                request, attempt = _reask(request, item, error, len(attempts) + 1)
                attempts.append(attempt)
                scope.retried(attempt.feedback)
                if reader.said:
                    yield Reread(_reask_reason(error))
                continue
            if not isinstance(failure, _UnreadableError) or max_retries:
                raise _with_attempts(error, attempts) from None
            scope.retried(_fallback_reason(failure))
            if reader.said:
                yield Reread(_fallback_reason(failure))
            again: CallResult | None = None
            inner = _astream_body(_fallback(request, lm, failure), lm, 0, scope)
            try:
                async for out in inner:
                    if isinstance(out, CallResult):
                        again = out
                    else:
                        yield out
            except ParseError as error_again:
                raise _fallback_failed(failure, error_again) from error_again
            finally:
                await inner.aclose()
            if again is not None:
                yield again.after(item)
            return
        for event in reader.finish(result.outputs[0]):
            yield event
        for event in _native_events(request, result):
            yield event
        yield result.retried(attempts)
        return


async def _anext(source: AsyncLMStream, request: _Request) -> StreamItem:
    token = set_origin(request.adapter, request.signature)
    try:
        return await source.__anext__()
    finally:
        reset_origin(token)
