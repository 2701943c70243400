"""One request of a call: built, cut to fit, and its response read (no I/O here)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from structio._util.log import logger
from structio.adapters.base import Adapter, SignatureLike, as_signature, check_input_types
from structio.adapters.native import Native
from structio.call.options import CallOptions
from structio.call.result import CallResult, Fallback, fallback_route
from structio.exceptions import (
    ConfigurationError,
    ContextWindowExceededError,
    ParseError,
    ServerError,
    TruncationError,
)
from structio.lm.base import BaseLM
from structio.lm.types import Completion, LMResponse
from structio.parsing.clean import drafts
from structio.parsing.confidence import field_confidence
from structio.rendering.prompt import Part, Prompt, Truncation, TruncationStep
from structio.settings import current_settings
from structio.signatures.signature import Signature

__all__ = [
    "Builder",
    "PreparedCall",
    "Request",
    "UnreadableError",
    "begin",
    "builder",
    "prepare",
    "read",
    "read_response",
]

Builder = Callable[[Adapter], tuple[type[Signature], Prompt]]
"""Builds the prompt of a call with a given adapter (the fallback gets its own prompt)."""

# Our token count and the provider's differ (other tokenizers, message framing): keep a margin.
_CONTEXT_MARGIN = 0.9
_DEFAULT_OPTIONS = CallOptions()


@dataclasses.dataclass(frozen=True)
class Request:
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
    build: Builder | None = None
    # The call's inputs, so that an echo of one is not read as the answer.
    inputs: Mapping[str, Any] | None = None
    # Tool calls and reasoning that travel beside the text; `signature` is then the wire one.
    native: Native | None = None
    # The signature the call was made with, which a fallback call starts from again.
    given_signature: type[Signature] | None = None
    # Whether each output's confidence is read from the response's log probabilities.
    confidence: bool = False

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages this request sends."""
        return self.sent.messages

    def again(self, options: CallOptions) -> tuple[Mapping[str, Any], CallOptions, Builder | None]:
        """What a fallback call is built from: the caller's parameters, options and builder.

        The fallback asks once, without re-asks, and does not check the inputs again.
        """
        # The default prompt is rebuilt by the fallback (its tools may travel otherwise).
        build = None if self.native is not None else self.build
        fallback = options.replace(max_retries=0, check_inputs=False)
        return self.given, fallback, build

    @property
    def original(self) -> type[Signature]:
        """The signature the call was made with (a fallback call starts from it)."""
        return self.given_signature or self.signature

    def reask(self, answer: str, feedback: str, number: int) -> Request:
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
    ) -> Request:
        """This request with its prompt cut to ``limit`` tokens (logged with ``reason``)."""
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

    def fitted_to_context(self, lm: BaseLM, error: ContextWindowExceededError) -> Request:
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


class UnreadableError(Exception):
    """A completion neither the adapter nor its fallback could read: ask the fallback."""

    def __init__(self, error: ParseError, fallback: Adapter) -> None:
        super().__init__(str(error))
        self.error = error
        self.fallback = fallback


def begin(
    adapter: Adapter,
    lm: BaseLM,
    signature: SignatureLike,
    demos: Iterable[Mapping[str, Any]],
    inputs: Mapping[str, Any] | None,
    params: Mapping[str, Any] | None,
    options: CallOptions,
    build: Builder | None,
) -> Request:
    """The first request of a call: rendered, truncated to the budget, with the parameters."""
    native: Native | None = None
    given_signature: type[Signature] | None = None
    if build is None:
        given_signature = as_signature(signature)
        # DSPy's configure(warn_on_type_mismatch=False) turns the check off for every call.
        if options.check_inputs and current_settings().warn_on_type_mismatch:
            check_input_types(given_signature, inputs)
        native = adapter.native(given_signature, lm)
        values = inputs or {}
        if native is None:
            build = builder(given_signature, list(demos), values)
        else:
            build = builder(native.wire, list(demos), native.wire_inputs(values))
    sig, prompt = build(adapter)
    given = params or {}
    request_params = adapter.request_params(sig, given, lm)
    if native is not None:
        request_params = native.request_params(
            request_params, inputs or {}, getattr(lm, "params", None)
        )
    if options.confidence:
        request_params = _with_logprobs(lm, request_params)
    request = Request(
        adapter,
        sig,
        prompt,
        prompt,
        request_params,
        options.truncation_step,
        None,
        given,
        build,
        inputs,
        native,
        given_signature,
        options.confidence,
    )
    if options.max_prompt_tokens is not None:
        request = request.truncated("max_prompt_tokens", options.max_prompt_tokens)
    return request


def read(request: Request, response: LMResponse) -> CallResult:
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
    fallback: Fallback | None = None
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
            second = adapter.fallback_adapter()
            if second is None:
                raise
            try:
                values = second.parse(sig, text, inputs=request.inputs)
            except ParseError:
                raise UnreadableError(error, second) from error
            route, fallback = fallback_route(second.route, "reparse"), "reparse"
        else:
            if completion.truncated:
                _check_closed(adapter, sig, text, values, open_fields)
                limited = True
            if reader == "JSON" and adapter.route != "json" and fallback is None:
                # A whole-JSON answer read by a text format: reported as a reread, no request.
                route, fallback = fallback_route("json", "reparse"), "reparse"
        if native is not None:
            values = _native_values(request, completion, values)
        outputs.append(values)
    return CallResult(
        outputs,
        route,
        [response],
        request.truncation,
        limited,
        fallback=fallback,
        confidence=_confidence(request, response) if request.confidence else None,
    )


#: How many alternatives per token a call that asks for confidence gets (OpenAI allows 20).
TOP_LOGPROBS = 5


def _with_logprobs(lm: BaseLM, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` asking for log probabilities, or a `ConfigurationError` if the model has none.

    ``top_logprobs`` the caller set (in the call's or the LM's parameters) is kept.
    """
    if not lm.profile.logprobs:
        model = getattr(lm, "model", type(lm).__name__)
        raise ConfigurationError(
            f"confidence=True needs token log probabilities, and the profile of {model!r} "
            "says it returns none. If the model (or its server) does return them, say so: "
            f"LM({model!r}, profile={{'logprobs': True}})"
        )
    wanted = {"logprobs": True, **params}
    if "top_logprobs" not in params and "top_logprobs" not in (getattr(lm, "params", None) or {}):
        wanted["top_logprobs"] = TOP_LOGPROBS
    return wanted


def _confidence(request: Request, response: LMResponse) -> tuple[dict[str, float | None], ...]:
    """Each choice's output confidences (`CallResult.confidence`), read from its text."""
    fields = {name: f.annotation for name, f in request.original.output_fields.items()}
    return tuple(
        field_confidence(completion.text, completion.logprobs, fields)
        for completion in response.completions
    )


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
    _request: Request = dataclasses.field(repr=False, compare=False)


def prepare(
    adapter: Adapter,
    lm: BaseLM,
    signature: SignatureLike,
    demos: Iterable[Mapping[str, Any]] = (),
    inputs: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    options: CallOptions = _DEFAULT_OPTIONS,
) -> PreparedCall:
    """The request `call` would send first, without sending it.

    The same preparation as `call` (render, truncate to ``options.max_prompt_tokens``,
    the adapter's request parameters, native tools), so a request sent another way (a
    provider's batch API) is the very request of the online call.

    Raises:
        FormatError, TruncationError: As `call`.
    """
    request = begin(adapter, lm, signature, demos, inputs, params, options, None)
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
        return read(prepared._request, response)
    except UnreadableError as unreadable:
        raise unreadable.error from None


def _native_values(
    request: Request, completion: Completion, values: dict[str, Any] | None
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
        reasoning_items=completion.reasoning_items,
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


def builder(
    sig: type[Signature], demos: list[Mapping[str, Any]], inputs: Mapping[str, Any]
) -> Builder:
    """The default prompt builder: ``adapter.render(sig, demos, inputs)``."""

    def build(adapter: Adapter) -> tuple[type[Signature], Prompt]:
        return sig, adapter.render(sig, demos, inputs)

    return build
