"""The litellm boundary: the only module that imports litellm, and only when first needed."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import threading
import time
from collections.abc import AsyncGenerator, Generator, Mapping, Sequence
from typing import Any, cast

from structio._util.warn import CausedBy, ensure_filter
from structio.exceptions import (
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    ContextWindowExceededError,
    LMConnectionError,
    LMError,
    LMTimeoutError,
    RateLimitError,
    ServerError,
)
from structio.lm import _pool
from structio.lm._errors import (
    body_detail,
    context_exceeded_text,
    exception_chain,
    lm_error,
    request_url,
    retry_after,
    status_error_class,
)
from structio.lm._exchange import replayable
from structio.lm._litellm_mcp import is_mcp_tool, mcp_error, missing_mcp, reads_skip_mcp
from structio.lm._stream import StreamAssembler, logprobs_of
from structio.lm.base import no_choices_error
from structio.lm.models import map_profile
from structio.lm.profile import ModelProfile
from structio.lm.types import Completion, LMResponse, StreamPiece, Usage

__all__ = [
    "LiteLLMTransport",
    "asend",
    "astream",
    "completion_args",
    "get_litellm",
    "model_capabilities",
    "send",
    "stream",
    "to_response",
    "translate_error",
]

_IMPORT_LOCK = threading.Lock()
_litellm: Any = None
# Whether this litellm's completion reads ``_skip_mcp_handler`` (see `completion_args`).
_SKIPS_MCP = False


# litellm's own noise: the warnings raised while litellm's code runs, whichever module
# raises them. litellm 1.108 and newer import their GitHub Copilot types during the first
# completion, and pydantic 2.12+ warns about them (7 "ReadOnly qualifier" UserWarnings);
# litellm's stream handler reads pydantic fields in a way pydantic deprecates. None of them
# is the caller's to act on, and under ``-W error`` they would fail the call. Warnings of
# structio's own code, and of code structio calls outside litellm, are not touched.
_LITELLMS_WARNINGS = ("ignore", None, Warning, CausedBy("litellm", within="structio"), 0)


def get_litellm() -> Any:
    """Import litellm once, offline: its price map is read from the package, not fetched.

    Every use goes through here, so here litellm's own warnings are silenced, in whatever
    filters are in force (see `_LITELLMS_WARNINGS`).
    """
    ensure_filter(_LITELLMS_WARNINGS)
    if _litellm is None:
        _import_litellm()
    return _litellm


def _import_litellm() -> None:
    global _litellm, _SKIPS_MCP
    with _IMPORT_LOCK:
        if _litellm is not None:
            return
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        # Some response classes finish building on first use; do it here, once, rather than
        # inside a caller's request.
        litellm.ModelResponse()
        litellm.ModelResponseStream()
        _SKIPS_MCP = reads_skip_mcp(litellm)
        litellm.suppress_debug_info = True  # no "Give Feedback" banners on errors
        if hasattr(litellm, "telemetry"):
            litellm.telemetry = False
        _litellm = litellm


def _completion(args: dict[str, Any], at: float | None = None) -> Any:
    """``litellm.completion(**args)``; a missing ``mcp`` package or provider said plainly.

    An OpenAI model's request goes over structio's guarded client (`_litellm_guard`), and
    so do those of the providers it hands a client of its own: their connect, writes and
    reads end by ``at`` (`structio.lm._pool.until`), the reads of a stream's body too.
    Other providers' requests are sent by litellm's own clients, ``timeout`` per read.
    """
    from structio.lm import _litellm_guard

    litellm = get_litellm()
    guarded = _litellm_guard.client_args(litellm, _resolvers(), args)
    try:
        # The secrets kept from httpx's log of the request.
        with _pool.hidden(_pool.address_secrets(args)), _pool.until(at):
            return litellm.completion(**args, **guarded)
    except Exception as exc:
        setup = _setup_error(args, exc)
        if setup is not None:
            raise setup from exc
        raise


async def _acompletion(args: dict[str, Any]) -> Any:
    """Async form of `_completion`."""
    from structio.lm import _litellm_guard

    litellm = get_litellm()
    guarded = await _litellm_guard.aclient_args(litellm, _resolvers(), args)
    try:
        with _pool.hidden(_pool.address_secrets(args)):
            return await litellm.acompletion(**args, **guarded)
    except Exception as exc:
        setup = _setup_error(args, exc)
        if setup is not None:
            raise setup from exc
        raise


def _late(model: str, args: Mapping[str, Any], attempt: int) -> LMTimeoutError:
    """The timeout of an attempt still running when its ``timeout`` seconds ran out."""
    base = str(args.get("api_base") or args.get("base_url") or "")
    passed = _pool.deadline_passed(base or "http://provider", float(args["timeout"]))
    error = lm_error(
        LMTimeoutError,
        model=model,
        provider=provider_of(model),
        attempts=attempt,
        detail=str(passed),
        url=passed.url if base else None,
    )
    return cast(LMTimeoutError, error)


@functools.lru_cache(maxsize=1)
def _resolvers() -> Any:
    """How litellm resolves an OpenAI request, for `_litellm_guard` (None: not found)."""
    from structio.lm._litellm_guard import Resolvers

    try:
        from litellm.llms.custom_httpx import http_handler
        from litellm.llms.openai.common_utils import get_openai_credentials
    except ImportError:  # moved in a later litellm: its own client is used, unguarded
        return None
    return Resolvers(get_openai_credentials, http_handler.get_ssl_configuration, http_handler)


def _setup_error(args: Mapping[str, Any], exc: BaseException) -> ConfigurationError | None:
    """The `ConfigurationError` behind a failure that no retry can mend, if it is one.

    Raised as it is, such an error is neither translated into an `LMError` nor retried.
    """
    missing = missing_mcp(exc)
    if missing is not None:
        return mcp_error(args, missing)
    if _NO_PROVIDER in str(exc):
        return _no_provider_error(str(args.get("model")), args.get("api_base"))
    return None


# What litellm says when a model string names no provider it can tell (litellm 1.x).
_NO_PROVIDER = "LLM Provider NOT provided"


def _no_provider_error(model: str, api_base: Any) -> ConfigurationError:
    """A model string litellm cannot route, said in one line with what to write instead.

    litellm routes a bare name only when its model map lists it (``gpt-4o-mini``,
    ``claude-sonnet-4-5``...) or ``api_base`` is a provider it knows; that is
    decided inside litellm (whose map may be newer than the one structio reads), so the
    refusal is litellm's, said here.
    """
    advice = (
        f"; for an OpenAI-compatible server at api_base, write "
        f"LM({f'openai/{model}'!r}, api_base=...)"
        if api_base
        else ""
    )
    return ConfigurationError(
        f"LM({model!r}): the model string names no provider litellm knows; write it as "
        f"provider/name, e.g. 'openai/gpt-4o-mini' or 'anthropic/claude-sonnet-4-5'"
        f"{advice}"
    )


def provider_of(model: str) -> str | None:
    """The provider litellm would route ``model`` to, if it can tell."""
    try:
        return str(get_litellm().get_llm_provider(model)[1])
    except Exception:  # unknown models make litellm raise; the prefix is a fair guess
        return model.split("/", 1)[0] if "/" in model else None


@functools.lru_cache(maxsize=256)
def model_capabilities(model: str) -> ModelProfile:
    """A model as the litellm transport serves it: litellm's answers over the map's profile.

    Structured output, JSON object mode, usage in streams, tools, parallel tool calls,
    reasoning, logprobs and the context window are litellm's to say on this route (it
    translates each provider's API); the prices and the longest answer come from the map
    (`map_profile`). Asked once per model string: each of litellm's lookups walks its map.
    """
    litellm = get_litellm()
    facts: dict[str, Any] = {}
    for name, ask in (
        ("tools", "supports_function_calling"),
        ("parallel_tool_calls", "supports_parallel_function_calling"),
        ("reasoning", "supports_reasoning"),
        ("json_schema", "supports_response_schema"),
    ):
        try:
            facts[name] = bool(getattr(litellm, ask)(model=model))
        except Exception:  # unknown model, or a litellm without that question: not claimed
            facts[name] = False
    try:
        supported = litellm.get_supported_openai_params(model=model) or []
    except Exception:  # unknown provider: plain prompting
        supported = []
    facts["json_object"] = "response_format" in supported
    facts["stream_usage"] = "stream_options" in supported
    facts["logprobs"] = "logprobs" in supported
    try:
        window = litellm.get_model_info(model)["max_input_tokens"]
    except Exception:  # not in litellm's model map
        window = None
    facts["context_window"] = int(window) if isinstance(window, (int, float)) and window else None
    return map_profile(model).replace(**facts)


def to_response(raw: Any, model: str, latency: float, *, attempts: int = 1) -> LMResponse:
    """Convert litellm's ModelResponse into an `LMResponse`.

    Raises:
        ServerError: The response holds no choice with a message (an empty ``choices``
            list): the provider failed, so the request is retried like a 5xx, and never
            read as an empty answer. ``attempts`` is the number of requests made so far.
    """
    completions = []
    for choice in getattr(raw, "choices", None) or ():
        message = getattr(choice, "message", None)
        if message is None:  # no message, nothing to read
            continue
        calls = getattr(message, "tool_calls", None)
        tool_calls = tuple(_plain(call) for call in calls) if calls else None
        content = getattr(message, "content", None)
        raw_logprobs = getattr(choice, "logprobs", None)
        logprobs = logprobs_of({"logprobs": _plain(raw_logprobs)}) if raw_logprobs else None
        blocks = getattr(message, "thinking_blocks", None)
        completions.append(
            Completion(
                # ``content`` is None in a reply that only calls tools: the text is "".
                text=content if isinstance(content, str) else "",
                finish_reason=getattr(choice, "finish_reason", None),
                tool_calls=tool_calls,
                reasoning=_reasoning(message),
                logprobs=tuple(logprobs) if logprobs is not None else None,
                # Anthropic's thinking blocks with their signatures, to be replayed.
                reasoning_items=tuple(
                    block if isinstance(block, Mapping) else _plain(block) for block in blocks
                )
                if blocks
                else None,
            )
        )
    if not completions:
        raise no_choices_error(model, provider=provider_of(model), attempts=attempts)
    usage = Usage()
    raw_usage = getattr(raw, "usage", None)
    if raw_usage is not None:
        prompt = getattr(raw_usage, "prompt_tokens_details", None)
        completion = getattr(raw_usage, "completion_tokens_details", None)
        usage = Usage(
            prompt_tokens=int(getattr(raw_usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(raw_usage, "completion_tokens", 0) or 0),
            cached_tokens=int(getattr(prompt, "cached_tokens", 0) or 0) if prompt else 0,
            reasoning_tokens=(
                int(getattr(completion, "reasoning_tokens", 0) or 0) if completion else 0
            ),
        )
    return LMResponse(
        completions=tuple(completions),
        model=model,
        usage=usage,
        cost=_cost(raw),
        latency=latency,
    )


def _reasoning(message: Any) -> str | None:
    """A litellm message's reasoning: ``reasoning_content``, else its thinking blocks.

    litellm puts every provider's reasoning in ``reasoning_content`` (an OpenAI-compatible
    server's ``reasoning`` too); Anthropic's thinking also comes as ``thinking_blocks``,
    read when ``reasoning_content`` is absent (redacted blocks carry no text).
    """
    text = getattr(message, "reasoning_content", None)
    if isinstance(text, str) and text:
        return text
    text = getattr(message, "reasoning", None)
    if isinstance(text, str) and text:
        return text
    thoughts = []
    for block in getattr(message, "thinking_blocks", None) or ():
        thinking = (block if isinstance(block, Mapping) else _plain(block)).get("thinking")
        if isinstance(thinking, str) and thinking:
            thoughts.append(thinking)
    return "\n\n".join(thoughts) if thoughts else None


def _plain(obj: Any) -> dict[str, Any]:
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dict(dump())
    return dict(obj) if isinstance(obj, Mapping) else {"value": repr(obj)}


def _cost(raw: Any) -> float | None:
    # litellm has already priced the response (its hidden "response_cost", None for a model
    # it has no price for): pricing it a second time costs ~7% of a call.
    hidden = getattr(raw, "_hidden_params", None)
    if isinstance(hidden, Mapping) and "response_cost" in hidden:
        cost = hidden["response_cost"]
        return float(cost) if isinstance(cost, (int, float)) else None
    try:
        return float(get_litellm().completion_cost(completion_response=raw))
    except Exception:  # litellm does not know this model's price
        return None


def _thinking_blocks(messages: list[dict[str, Any]]) -> bool:
    """Whether every replayed reasoning item is one of Anthropic's thinking blocks."""
    items = [item for m in messages for item in m.get("reasoning_items") or ()]
    return bool(items) and all(
        isinstance(item, Mapping) and item.get("type") in ("thinking", "redacted_thinking")
        for item in items
    )


def completion_args(
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    timeout: float,
    client: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The arguments of ``litellm.completion`` for one request (its retries and cache off).

    litellm takes the client settings (``api_base``, ``api_key``...) as keywords beside
    the request parameters: both go in.
    """
    # litellm replays Anthropic's thinking blocks from an assistant message's
    # thinking_blocks (its name for them); other providers' items are not sent.
    rename = "thinking_blocks" if _thinking_blocks(messages) else None
    args = {**(client or {}), **params, "model": model, "messages": replayable(messages, rename)}
    args["timeout"] = params.get("timeout", timeout)
    # structio retries and caches: the OpenAI client's own retries (2 by default) would
    # multiply requests. litellm's retries and cache are off unless configured globally,
    # and only then turned off per call: passing caching=False costs ~8% of a call.
    args["max_retries"] = 0
    # structio's own settings (read by LM and the direct transports), never litellm's
    # keywords: they would reach the provider as request fields.
    for setting in ("num_retries", "prompt_cache", "server"):
        args.pop(setting, None)
    litellm = get_litellm()
    if getattr(litellm, "num_retries", None):
        args["num_retries"] = 0
    if getattr(litellm, "cache", None) is not None:
        args["caching"] = False
    if "reasoning_effort" in params:
        # Asked for by the caller, it goes to the server: litellm before 1.106 refuses it
        # (UnsupportedParamsError) for a model its map does not list as a reasoning one,
        # such as any model on an OpenAI-compatible server, unless it is allowed by name.
        allowed = list(params.get("allowed_openai_params") or ())
        if "reasoning_effort" not in allowed:
            args["allowed_openai_params"] = [*allowed, "reasoning_effort"]
    tools = params.get("tools")
    if tools and _SKIPS_MCP and not any(is_mcp_tool(tool) for tool in tools):
        # No MCP tool: skip litellm's gateway check and its import of `mcp` (see above).
        args["_skip_mcp_handler"] = True
    return args


def send(
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    timeout: float,
    start: float,
    attempt: int,
) -> LMResponse:
    """Make one request through litellm and convert the response.

    Its ``timeout`` bounds the whole attempt where structio's guarded client carries it
    (`_completion`); elsewhere litellm applies it to connecting and to each read.
    """
    args = completion_args(model, messages, params, timeout, client)
    raw = _completion(args, _pool.deadline(args.get("timeout")))
    return to_response(raw, model, time.perf_counter() - start, attempts=attempt)


async def asend(
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    timeout: float,
    start: float,
    attempt: int,
) -> LMResponse:
    """Async form of `send`: the whole attempt ends within its ``timeout``, any provider."""
    args = completion_args(model, messages, params, timeout, client)
    at = _pool.deadline(args.get("timeout"))
    raw = await _pool.within(_acompletion(args), at, lambda: _late(model, args, attempt))
    return to_response(raw, model, time.perf_counter() - start, attempts=attempt)


def _stream_args(
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    timeout: float,
) -> dict[str, Any]:
    # Usage at the end of the stream is asked for by LM, from its profile (`LM._streamed`).
    return completion_args(model, messages, {**params, "stream": True}, timeout, client)


def stream(
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    timeout: float,
    attempt: int = 1,
) -> Generator[StreamPiece | StreamAssembler, None, None]:
    """One streamed request through litellm: the first choice's new text, then the assembler.

    Assembled by `StreamAssembler`, not litellm's stream_chunk_builder, which merges the
    choices of n > 1 into one text.

    Closing the generator closes the provider's response. ``attempt`` is the LM's count
    (said in a timeout). The stream ends within its ``timeout`` where structio's guarded
    client carries it (`_completion`); elsewhere a stream that keeps sending chunks is cut
    at the first chunk after it, one that sends only keep-alive comments is not.
    """
    from structio.lm._litellm_guard import keep_repeats

    args = _stream_args(model, messages, params, client, timeout)
    at = _pool.deadline(args.get("timeout"))
    raw = _completion(args, at)
    keep_repeats(raw)
    assembler = StreamAssembler(model, provider_of(model))
    try:
        for chunk in raw:
            if at is not None and time.monotonic() > at:
                raise _late(model, args, attempt)
            yield from assembler.handed(assembler.feed_chunk(chunk.model_dump()))
    except Exception as exc:
        if not _cut_short(exc):
            raise
    finally:
        _close(raw)
    _ended(raw, assembler)
    yield assembler


async def astream(
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    timeout: float,
    attempt: int = 1,
) -> AsyncGenerator[StreamPiece | StreamAssembler, None]:
    """Async form of `stream`: the whole stream ends within its ``timeout``, any provider."""
    from structio.lm._litellm_guard import keep_repeats

    args = _stream_args(model, messages, params, client, timeout)
    at = _pool.deadline(args.get("timeout"))

    def late() -> Exception:
        return _late(model, args, attempt)

    raw = await _pool.within(_acompletion(args), at, late)
    keep_repeats(raw)
    assembler = StreamAssembler(model, provider_of(model))
    try:
        while True:
            try:
                chunk = await _pool.within(raw.__anext__(), at, late)
            except StopAsyncIteration:
                break
            for piece in assembler.handed(assembler.feed_chunk(chunk.model_dump())):
                yield piece
    except Exception as exc:
        if not _cut_short(exc):
            raise
    finally:
        await _aclose(raw)
    _ended(raw, assembler)
    yield assembler


# Providers whose streams litellm reads as OpenAI chat chunks: there a finish reason is always
# sent at the end, so a stream without one was cut. Other providers' stream readers are not
# all known to record theirs, and are trusted to end only when finished.
_OPENAI_STREAMS = frozenset(
    (
        "openai",
        "azure",
        "groq",
        "together_ai",
        "openrouter",
        "deepseek",
        "fireworks_ai",
        "xai",
        "hosted_vllm",
        "lm_studio",
        "custom_openai",
    )
)


# What litellm 1.108 and newer say where an OpenAI-style stream ends with no finish reason.
_EOF_TEXT = "Stream ended before a finish_reason was received"


def _cut_short(exc: BaseException) -> bool:
    """Whether ``exc``, raised while a stream was read, says only that the stream was cut.

    litellm 1.108 and newer raise where an OpenAI-style stream ends with no finish reason (a
    ``MidStreamFallbackError`` over an ``APIConnectionError`` that keeps only the words
    `_EOF_TEXT` of the httpx ``RemoteProtocolError`` it made); earlier releases ended the
    stream with a ``stop`` of their own (see `_ended`). A connection closed mid-chunk is the
    same: the stream is over, and the assembler says what was missing, in the words the
    direct transport uses. A timeout, a refusal of the guard (a stream past the size bound)
    or any other failure is raised as it is.
    """
    from structio.lm._litellm_guard import causes, refusal

    seen = causes(exc)
    return refusal(exc) is None and any(
        (
            type(cause).__name__ == "RemoteProtocolError"
            and type(cause).__module__.startswith(("httpx", "httpcore"))
        )
        or _EOF_TEXT in str(cause)
        for cause in seen
    )


def _ended(raw: Any, assembler: StreamAssembler) -> None:
    """Mark the stream done only if the provider finished it.

    litellm adds a ``stop`` finish reason of its own to a stream the connection cut short;
    whether the provider sent one is in its wrapper. A cut stream is then left unfinished,
    and the assembler reports it as a connection failure, never as a shorter answer.
    """
    sent = getattr(raw, "received_finish_reason", "unknown") is not None or (
        getattr(raw, "intermittent_finish_reason", None) is not None
    )
    if sent or assembler.provider not in _OPENAI_STREAMS:
        assembler.done = True
    else:
        assembler.reasons.clear()


def _close(raw: Any) -> None:
    """Close the provider stream under litellm's wrapper (an OpenAI client ``Stream``)."""
    close = getattr(getattr(raw, "completion_stream", None), "close", None)
    if callable(close):
        with contextlib.suppress(Exception):  # closing is best effort: the stream may be done
            close()


async def _aclose(raw: Any) -> None:
    inner = getattr(raw, "completion_stream", None)
    close = getattr(inner, "aclose", None) or getattr(inner, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):
            result = close()
            if hasattr(result, "__await__"):
                await result


# litellm reports a missing OpenAI key as a 500 ("Missing credentials..."): recognised by text.
_MISSING_KEY = re.compile(
    r"missing credentials|missing \w+ api key|api[_ ]key (?:client option )?must be set|no api key",
    re.IGNORECASE,
)
_PREFIX = re.compile(r"^(litellm\.\w+: )+|^\w+Error: |(\w+Exception - )")


# What the OpenAI SDK (2.x and newer) says of an error whose body holds no error message.
_BARE_STATUS = re.compile(r"Error code: \d{3}")


def _clean_message(exc: BaseException) -> str:
    # litellm appends the wrapped error again after its own text; once is enough.
    text = str(exc).split(" Original exception: ", 1)[0]
    for _ in range(4):
        new = _PREFIX.sub("", text, count=1).strip()
        if new == text:
            break
        text = new
    if _BARE_STATUS.fullmatch(text):
        # A body that is not an OpenAI error (a proxy's HTML page): quote it as the
        # direct transport does, rather than the bare status. litellm's own exception may
        # hold a placeholder response (1.83) or the real one (1.110): the first cause with
        # a body has it.
        for cause in exception_chain(exc):
            response = getattr(cause, "response", None)
            body = getattr(response, "text", None)
            if isinstance(body, str) and body.strip():
                return str(body_detail(body, getattr(response, "status_code", None))[0])
    return text


def _retry_after(exc: BaseException) -> float | None:
    for attr in ("litellm_response_headers", "response"):
        source = getattr(exc, attr, None)
        headers = getattr(source, "headers", source)
        if headers is not None:
            wait = retry_after(headers)
            if wait is not None:
                return wait
    return None


def translate_error(
    exc: BaseException,
    model: str,
    attempts: int,
    *,
    secrets: Sequence[str] = (),
    key_given: bool = False,
) -> LMError | None:
    """Translate a litellm (or openai/httpx) exception into structio's tree; None if foreign.

    The message quotes the provider's error text with every one of ``secrets`` (see
    `structio._util.secrets.secret_values`) replaced by ``[redacted]``: a provider that
    echoes the API key does not get it repeated. The caller raises the translated error
    ``from exc``: that cause is litellm's own exception, which holds the provider's raw
    text as it came.
    """
    from structio.lm._litellm_guard import refused_error

    litellm = get_litellm()
    module = type(exc).__module__
    if not module.startswith(("litellm", "openai", "httpx", "httpcore", "anthropic", "aiohttp")):
        return None
    provider = getattr(exc, "llm_provider", None) or provider_of(model)
    refused = refused_error(exc, model, provider, attempts, secrets)
    if refused is not None:  # a redirect, or a response past the bound
        return refused
    url: str | None = None
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    detail = _clean_message(exc)
    cls: type[LMError]
    what = None
    if isinstance(exc, litellm.ContextWindowExceededError) or _context_exceeded(exc):
        cls = ContextWindowExceededError
    elif isinstance(
        exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)
    ) or _MISSING_KEY.search(detail):
        cls = AuthenticationError
        if not key_given:  # say where a key goes; a rejected key needs no such hint
            detail += _missing_key_hint(model)
    elif isinstance(exc, litellm.RateLimitError):
        cls = RateLimitError
    elif isinstance(exc, litellm.Timeout) or _timed_out(exc):
        cls = LMTimeoutError
        url = request_url(exc)
    elif isinstance(
        exc, (litellm.BadRequestError, litellm.NotFoundError, litellm.UnprocessableEntityError)
    ):
        cls = BadRequestError
    elif _connection_failure(exc):
        cls = LMConnectionError
        url = request_url(exc)
    elif status is not None and status >= 400:
        # litellm wraps some statuses in its generic APIError (a 403 from an OpenAI-
        # compatible server): the status says what it is, as on the direct transport.
        cls = status_error_class(status)
    elif isinstance(exc, (litellm.InternalServerError, litellm.ServiceUnavailableError)):
        cls = ServerError
    elif isinstance(exc, litellm.APIConnectionError):
        cls = LMConnectionError
        url = request_url(exc)
    else:
        cls, what = ServerError, "the provider failed"
    return lm_error(
        cls,
        model=model,
        provider=provider,
        attempts=attempts,
        detail=detail,
        status=status,
        retry_after=_retry_after(exc),
        secrets=secrets,
        what=what,
        url=url,
    )


def _context_exceeded(exc: BaseException) -> bool:
    """Whether a 400 says the prompt is too long (by OpenAI's error code, or in words).

    litellm maps only some wordings to ContextWindowExceededError; OpenAI-compatible
    servers (vLLM, llama.cpp...) send the code ``context_length_exceeded`` with their own.
    """
    if getattr(exc, "status_code", None) not in (400, 413, None):
        return False
    for cause in exception_chain(exc):
        if getattr(cause, "code", None) == "context_length_exceeded":
            return True
    return context_exceeded_text(str(exc))


_TIMEOUT_NAMES = frozenset(
    ("ReadTimeout", "WriteTimeout", "ConnectTimeout", "PoolTimeout", "APITimeoutError")
)


def _timed_out(exc: BaseException) -> bool:
    """Whether a timeout caused ``exc``: litellm wraps one during a stream as a 500."""
    return any(
        isinstance(cause, TimeoutError) or type(cause).__name__ in _TIMEOUT_NAMES
        for cause in exception_chain(exc)
    )


def _connection_failure(exc: BaseException) -> bool:
    """Whether a connection error (refused, reset, DNS) caused ``exc``, however it was wrapped.

    litellm reports a refused connection as a 500 "Connection error."; the cause chain holds
    the httpx or openai connection error that says what really happened.
    """
    for cause in exception_chain(exc):
        name = type(cause).__name__
        if isinstance(cause, ConnectionError) or name in ("ConnectError", "APIConnectionError"):
            return "Timeout" not in name
    return False


def _missing_key_hint(model: str) -> str:
    try:
        missing = get_litellm().validate_environment(model=model).get("missing_keys") or []
    except Exception:  # unknown provider: no hint
        missing = []
    if not missing:
        return ""
    names = " and ".join(missing)
    return f"; set the environment variable {names} (or pass api_key= to LM)"


class LiteLLMTransport:
    """The litellm transport (registered as ``"litellm"``): every provider litellm knows.

    The module's functions as one `structio.lm.transport.Transport`; litellm is imported
    by `load` (or the first request), never before.
    """

    name = "litellm"
    # The module's functions, called as they are (a request, a stream, an error).
    send = staticmethod(send)
    asend = staticmethod(asend)
    stream = staticmethod(stream)
    astream = staticmethod(astream)
    translate_error = staticmethod(translate_error)

    def load(self, client: Mapping[str, Any]) -> None:
        """Import litellm (seconds, once per process)."""
        get_litellm()
