"""The litellm boundary: the only module that imports litellm, and only when first needed."""

from __future__ import annotations

import os
import re
import threading
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from structio._util.secrets import redact
from structio.exceptions import (
    AuthenticationError,
    BadRequestError,
    ContextWindowExceededError,
    LMConnectionError,
    LMError,
    LMTimeoutError,
    RateLimitError,
    ServerError,
)
from structio.lm.base import no_choices_error
from structio.lm.types import Completion, LMResponse, Usage

__all__ = ["get_litellm", "model_capabilities", "to_response", "translate_error"]

_IMPORT_LOCK = threading.Lock()
_litellm: Any = None


def get_litellm() -> Any:
    """Import litellm once, offline: its price map is read from the package, not fetched."""
    global _litellm
    if _litellm is None:
        with _IMPORT_LOCK:
            if _litellm is None:
                os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
                # litellm's import builds pydantic models, and pydantic warns about
                # litellm's own types; those warnings are not the caller's to act on, and
                # under ``-W error`` they would leave the classes half-built.
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    import litellm

                    # Some response classes finish building on first use; do it here, where
                    # those warnings are silenced, rather than inside a caller's request.
                    litellm.ModelResponse()

                litellm.suppress_debug_info = True  # no "Give Feedback" banners on errors
                if hasattr(litellm, "telemetry"):
                    litellm.telemetry = False
                _litellm = litellm
    return _litellm


def provider_of(model: str) -> str | None:
    """The provider litellm would route ``model`` to, if it can tell."""
    try:
        return str(get_litellm().get_llm_provider(model)[1])
    except Exception:  # unknown models make litellm raise; the prefix is a fair guess
        return model.split("/", 1)[0] if "/" in model else None


def model_capabilities(model: str) -> dict[str, Any]:
    """What litellm knows of a model: structured output support and token limits."""
    litellm = get_litellm()
    caps: dict[str, Any] = {
        "response_schema": False,
        "json_mode": False,
        "max_input_tokens": None,
    }
    try:
        caps["response_schema"] = bool(litellm.supports_response_schema(model=model))
    except Exception:  # unknown model: no schema support claimed
        caps["response_schema"] = False
    try:
        supported = litellm.get_supported_openai_params(model=model) or []
        caps["json_mode"] = "response_format" in supported
    except Exception:  # unknown provider: plain prompting
        caps["json_mode"] = False
    try:
        caps["max_input_tokens"] = litellm.get_model_info(model)["max_input_tokens"]
    except Exception:  # not in litellm's model map
        caps["max_input_tokens"] = None
    return caps


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
        completions.append(
            Completion(
                text=message.content or "",
                finish_reason=getattr(choice, "finish_reason", None),
                tool_calls=tool_calls,
            )
        )
    if not completions:
        raise no_choices_error(model, provider=provider_of(model), attempts=attempts)
    usage = Usage()
    raw_usage = getattr(raw, "usage", None)
    if raw_usage is not None:
        details = getattr(raw_usage, "prompt_tokens_details", None)
        usage = Usage(
            prompt_tokens=int(getattr(raw_usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(raw_usage, "completion_tokens", 0) or 0),
            cached_tokens=int(getattr(details, "cached_tokens", 0) or 0) if details else 0,
        )
    return LMResponse(
        completions=tuple(completions),
        model=model,
        usage=usage,
        cost=_cost(raw),
        latency=latency,
    )


def _plain(obj: Any) -> dict[str, Any]:
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dict(dump())
    return dict(obj) if isinstance(obj, Mapping) else {"value": repr(obj)}


def _cost(raw: Any) -> float | None:
    try:
        return float(get_litellm().completion_cost(completion_response=raw))
    except Exception:  # litellm does not know this model's price
        return None


# litellm reports a missing OpenAI key as a 500 ("Missing credentials..."): recognised by text.
_MISSING_KEY = re.compile(
    r"missing credentials|missing \w+ api key|api[_ ]key (?:client option )?must be set|no api key",
    re.IGNORECASE,
)
_PREFIX = re.compile(r"^(litellm\.\w+: )+|^\w+Error: |(\w+Exception - )")


def _clean_message(exc: BaseException) -> str:
    text = str(exc)
    for _ in range(4):
        new = _PREFIX.sub("", text, count=1).strip()
        if new == text:
            break
        text = new
    return text


def _retry_after(exc: BaseException) -> float | None:
    for attr in ("litellm_response_headers", "response"):
        source = getattr(exc, attr, None)
        headers = getattr(source, "headers", source)
        if headers is None:
            continue
        getter = getattr(headers, "get", None)
        if not callable(getter):
            continue
        value = getter("retry-after") or getter("Retry-After")
        if value is None:
            continue
        try:
            return max(0.0, float(value))
        except (TypeError, ValueError):
            return _http_date_delay(str(value))
    return None


def _http_date_delay(value: str) -> float | None:
    import email.utils
    import time

    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, parsed.timestamp() - time.time())


def translate_error(
    exc: BaseException, model: str, attempts: int, *, secrets: Sequence[str] = ()
) -> LMError | None:
    """Translate a litellm (or openai/httpx) exception into structio's tree; None if foreign.

    The message quotes the provider's error text with every one of ``secrets`` (see
    `structio._util.secrets.secret_values`) replaced by ``[redacted]``: a provider that
    echoes the API key does not get it repeated. The caller raises the translated error
    ``from exc``: that cause is litellm's own exception, which holds the provider's raw
    text as it came.
    """
    litellm = get_litellm()
    module = type(exc).__module__
    if not module.startswith(("litellm", "openai", "httpx", "httpcore", "anthropic", "aiohttp")):
        return None
    provider = getattr(exc, "llm_provider", None) or provider_of(model)
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    where = f"{model} (provider {provider or 'unknown'})"
    detail = _clean_message(exc)
    cls: type[LMError]
    if isinstance(exc, litellm.ContextWindowExceededError) or _context_exceeded(exc):
        cls, what = ContextWindowExceededError, "the prompt exceeds the model's context window"
        detail += "; shorten the prompt (fewer demos, truncated history) or use a larger model"
    elif isinstance(
        exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)
    ) or _MISSING_KEY.search(detail):
        cls, what = AuthenticationError, "authentication failed"
        detail += _missing_key_hint(model)
    elif isinstance(exc, litellm.RateLimitError):
        cls, what = RateLimitError, "rate limited"
    elif isinstance(exc, litellm.Timeout):
        cls, what = LMTimeoutError, "timed out"
        detail += "; raise timeout= on the LM if the model is slow"
    elif isinstance(
        exc, (litellm.BadRequestError, litellm.NotFoundError, litellm.UnprocessableEntityError)
    ):
        cls, what = BadRequestError, "the request was rejected"
    elif _connection_failure(exc):
        cls, what = LMConnectionError, "cannot reach the server"
    elif (status is not None and status >= 500) or isinstance(
        exc, (litellm.InternalServerError, litellm.ServiceUnavailableError)
    ):
        cls, what = ServerError, "the server failed"
    elif status is not None and 400 <= status < 500:
        cls, what = BadRequestError, "the request was rejected"
    elif isinstance(exc, litellm.APIConnectionError):
        cls, what = LMConnectionError, "cannot reach the server"
    else:
        cls, what = ServerError, "the provider failed"
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    return cls(
        redact(f"{where}: {what}{tries}: {detail}", secrets),
        model=model,
        provider=provider,
        status_code=status,
        retry_after=_retry_after(exc),
        attempts=attempts,
    )


_CONTEXT_PHRASES = re.compile(
    r"context[_ ]length|context window|maximum context|prompt is too long|too many (input )?tokens",
    re.IGNORECASE,
)


def _context_exceeded(exc: BaseException) -> bool:
    """Whether a 400 says the prompt is too long (by OpenAI's error code, or in words).

    litellm maps only some wordings to ContextWindowExceededError; OpenAI-compatible
    servers (vLLM, llama.cpp...) send the code ``context_length_exceeded`` with their own.
    """
    if getattr(exc, "status_code", None) not in (400, 413, None):
        return False
    for cause in _chain(exc):
        if getattr(cause, "code", None) == "context_length_exceeded":
            return True
    return bool(_CONTEXT_PHRASES.search(str(exc)))


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and its causes, without cycles."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _connection_failure(exc: BaseException) -> bool:
    """Whether a connection error (refused, reset, DNS) caused ``exc``, however it was wrapped.

    litellm reports a refused connection as a 500 "Connection error."; the cause chain holds
    the httpx or openai connection error that says what really happened.
    """
    for cause in _chain(exc):
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
