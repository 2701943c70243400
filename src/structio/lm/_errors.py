"""A provider's failure as structio's error: one wording, whichever transport saw it.

Both transports (`structio.lm._http`, the direct one, and `structio.lm._litellm`) build
their errors here, so a rate limit or a rejected key reads the same on either path.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from structio._util.secrets import redact, redact_data
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

__all__ = [
    "CONTEXT_HINT",
    "RETRYABLE",
    "TIMEOUT_HINT",
    "body_detail",
    "check_api_base",
    "context_exceeded_text",
    "exception_chain",
    "is_retryable",
    "redact_chain",
    "lm_error",
    "redirect_detail",
    "request_url",
    "retry_after",
    "status_error_class",
]

#: Errors saying the provider is down for now: retried by an LM, waited out by `structio run`.
RETRYABLE = (RateLimitError, LMTimeoutError, LMConnectionError, ServerError)


def is_retryable(error: BaseException) -> bool:
    """Whether ``error`` says the provider is down for now (`RETRYABLE`): worth a retry.

    DSPy's ``dspy.is_retryable_lm_error`` is this.
    """
    return isinstance(error, RETRYABLE)


#: Appended to a context-window error: what the user can do about it.
CONTEXT_HINT = "; shorten the prompt (fewer demos, truncated history) or use a larger model"
#: Appended to a timeout: what the user can do about it.
TIMEOUT_HINT = "; raise timeout= on the LM if the model is slow"

_CONTEXT_PHRASES = re.compile(
    r"context[_ ]length|context window|maximum context|prompt is too long|too many (input )?tokens",
    re.IGNORECASE,
)

# What each kind of failure is called in the message.
_WHAT: dict[type[LMError], str] = {
    ContextWindowExceededError: "the prompt exceeds the model's context window",
    AuthenticationError: "authentication failed",
    RateLimitError: "rate limited",
    LMTimeoutError: "timed out",
    BadRequestError: "the request was rejected",
    LMConnectionError: "cannot reach the server",
    ServerError: "the server failed",
}


def context_exceeded_text(text: str) -> bool:
    """Whether an error text says the prompt is too long (in any provider's words)."""
    return bool(_CONTEXT_PHRASES.search(text))


def body_detail(text: str, status: int | None) -> tuple[str, Any]:
    """The provider's error message and code, from an error response's body.

    An OpenAI-style body (``{"error": {"message": ..., "code": ...}}``) gives its message;
    any other body (a proxy's HTML page) is quoted, stripped and cut at 500 characters.
    """
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    error = data.get("error") if isinstance(data, Mapping) else None
    if isinstance(error, Mapping) and error.get("message"):
        return str(error["message"]), error.get("code")
    if isinstance(error, str):
        return error, None
    text = text.strip() or f"HTTP {status or '(no status)'}"
    return (text[:500] + " [...]" if len(text) > 500 else text), None


def status_error_class(status: int) -> type[LMError]:
    """The error class of an HTTP status (the context window is told apart by the caller)."""
    if status in (401, 403):
        return AuthenticationError
    if status == 429:
        return RateLimitError
    if status == 408:
        return LMTimeoutError
    if 400 <= status < 500:
        return BadRequestError
    return ServerError


def lm_error(
    cls: type[LMError],
    *,
    model: str,
    provider: str | None,
    attempts: int,
    detail: str,
    status: int | None = None,
    retry_after: float | None = None,
    secrets: Sequence[str] = (),
    what: str | None = None,
    url: str | None = None,
) -> LMError:
    """The error to raise: ``"<model> (provider <p>): <what>[ after N attempts]: <detail>"``.

    Every one of ``secrets`` is replaced by ``[redacted]`` in the message: a provider that
    echoes the API key in its error text does not get it repeated. ``url`` (from
    `request_url`: no credentials, no query) is named after the detail, so that a server
    that cannot be reached says which address was tried.
    """
    where = f"{model} (provider {provider or 'unknown'})"
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    if url:
        detail += f" (url: {url})"
    if cls is ContextWindowExceededError and CONTEXT_HINT not in detail:
        detail += CONTEXT_HINT
    elif cls is LMTimeoutError and TIMEOUT_HINT not in detail:
        detail += TIMEOUT_HINT
    text = what or _WHAT.get(cls, "the provider failed")
    return cls(
        redact(f"{where}: {text}{tries}: {detail}", secrets),
        model=model,
        provider=provider,
        status_code=status,
        retry_after=retry_after,
        attempts=attempts,
    )


def exception_chain(exc: BaseException) -> list[BaseException]:
    """The exception and its causes (``__cause__``, else ``__context__``), without cycles."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def redact_chain(exc: BaseException, secrets: Sequence[str]) -> None:
    """Redact ``secrets`` in ``exc`` and its causes, in place, as a traceback shows them.

    The transport's exception stays the ``__cause__`` of structio's error (its type and
    fields are useful), but a provider that echoes the key puts it in that exception's
    text, which ``logging.exception`` and an uncaught traceback print: its ``args`` and
    its text attributes (``message``, ``body``...) are rewritten with the key replaced.
    """
    if not secrets:
        return
    for cause in exception_chain(exc):
        try:
            cause.args = tuple(redact_data(arg, secrets) for arg in cause.args)
            for name, value in list(vars(cause).items()):
                if name.startswith("__") or not isinstance(value, (str, Mapping, list, tuple)):
                    continue
                cleaned = redact_data(value, secrets)
                if cleaned is not value:
                    setattr(cause, name, cleaned)
        except (AttributeError, TypeError):  # a read-only field: the rest is still redacted
            continue


def request_url(exc: BaseException) -> str | None:
    """The URL of the request that failed, from the httpx request in ``exc``'s causes.

    Shown without user, password or query (where a key may travel): scheme, host, port and
    path. litellm's own exceptions are passed over: they may hold a placeholder request
    rather than the one made. ``None`` when no cause holds a request.
    """
    for cause in exception_chain(exc):
        if type(cause).__module__.startswith("litellm"):
            continue
        try:
            request = getattr(cause, "request", None)
        except RuntimeError:  # httpx: an exception raised without a request
            continue
        url: Any = getattr(request, "url", None)
        if not getattr(url, "host", None) or not type(request).__module__.startswith("httpx"):
            continue
        port = f":{url.port}" if url.port else ""
        return f"{url.scheme}://{url.host}{port}{url.path}"
    return None


def redirect_detail(status: int, headers: Mapping[str, Any]) -> str:
    """What a refused redirect says: its status and where it pointed (both transports).

    Neither transport follows a redirect: a 307 or 308 sends the request's body, the
    prompt, on to whatever host its ``Location`` names (the OpenAI SDK drops the key
    there, never the body). The target is shown without user, password or query.
    """
    location = next((str(v) for k, v in headers.items() if str(k).lower() == "location"), "")
    try:
        parts = urlsplit(location.strip())
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # a Location that is no URL at all: say so rather than fail
        parts, port = urlsplit(""), ""
    if parts.hostname:
        target = f"{parts.scheme}://{parts.hostname}{port}{parts.path}"
    else:
        target = parts.path or "(no Location)"
    return (
        f"HTTP {status}: a redirect to {target}, not followed (a request goes only to its "
        "api_base); set api_base to the address that answers"
    )


def check_api_base(base: Any, setting: str = "api_base") -> None:
    """Refuse an address that is no http(s) URL: no request could reach it, retried or not.

    Args:
        base: The address (a value that is not a string is left to the transport).
        setting: Where it was given, for the message (``api_base``, an environment variable).

    Raises:
        ConfigurationError: ``base`` is a string that does not start with ``http://`` or
            ``https://``; the message shows the address as it should be written.
    """
    if not isinstance(base, str) or not base:
        return
    if base.strip().lower().startswith(("http://", "https://")):
        return
    rest = base.strip().split("://", 1)[-1]
    raise ConfigurationError(
        f"{setting} must start with http:// or https://, e.g. http://{rest}; got {base!r}"
    )


def retry_after(headers: Mapping[str, Any] | Any) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date), if sent."""
    getter = getattr(headers, "get", None)
    if not callable(getter):
        return None
    value = getter("retry-after") or getter("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    import email.utils  # ~7 ms to import, and an HTTP date is rare: only when one comes

    try:
        parsed = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError):
        return None
    return max(0.0, parsed.timestamp() - time.time())
