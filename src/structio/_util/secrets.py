"""The one rule for secrets: which request settings are credentials, and hiding them.

Every place that shows, stores or keys request settings (the response cache key, the call
history, saved prompt files, ``repr`` of an LM) goes through `public_params`, so a
credential can never appear in one and not in another. Text that may repeat a credential
(a provider's error message, a prompt or a completion kept in the call history) goes
through `redact` with the values `secret_values` finds by the same rule.
"""

from __future__ import annotations

import base64
import math
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from structio.exceptions import ConfigurationError

__all__ = [
    "ENDPOINT_PARAMS",
    "FILE_SETTINGS",
    "REDACTED",
    "check_file_settings",
    "file_setting_problem",
    "public_url",
    "shown_setting",
    "is_secret",
    "public_params",
    "redact",
    "redact_data",
    "secret_values",
]

_SECRET_NAMES = frozenset(
    {"api_key", "api_token", "azure_ad_token", "vertex_credentials", "password", "token"}
)
_SECRET_SUFFIXES = ("_key", "_secret", "_token", "_password", "_credentials")
# Request parameters whose names end like a credential's but name no credential: OpenAI's
# prompt_cache_key names a cache, and is sent (as a secret it would be held back).
_NOT_SECRETS = frozenset({"prompt_cache_key"})
_HEADER_SETTINGS = frozenset({"headers", "extra_headers", "default_headers"})
_SECRET_HEADERS = frozenset(
    {"authorization", "api-key", "x-api-key", "proxy-authorization", "cookie", "x-goog-api-key"}
)
_SECRET_HEADER_WORDS = ("token", "secret", "key", "auth", "password")

#: Settings that say *where* a request goes. A file must not choose them silently: the next
#: request, and the API key taken from the environment, would go to that address.
ENDPOINT_PARAMS = frozenset(
    {"api_base", "base_url", "azure_endpoint", "api_host", "endpoint", "proxy", "proxies"}
)


def is_secret(name: str) -> bool:
    """Whether a request setting of this name holds a credential."""
    lowered = name.lower()
    if lowered in _NOT_SECRETS:
        return False
    return lowered in _SECRET_NAMES or lowered.endswith(_SECRET_SUFFIXES)


def _is_secret_header(name: str) -> bool:
    lowered = str(name).lower()
    return lowered in _SECRET_HEADERS or any(word in lowered for word in _SECRET_HEADER_WORDS)


def public_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """The settings with credentials removed: secret names, and secret headers inside them."""
    clean: dict[str, Any] = {}
    for name, value in params.items():
        if is_secret(name):
            continue
        if name in _HEADER_SETTINGS and isinstance(value, Mapping):
            value = {k: v for k, v in value.items() if not _is_secret_header(k)}
        elif name in ENDPOINT_PARAMS:
            value = _public_endpoint(value)
        clean[name] = value
    return clean


def _public_endpoint(value: Any) -> Any:
    if isinstance(value, str):
        return public_url(value)
    if isinstance(value, Mapping):  # ``proxies``: a URL per scheme
        return {k: public_url(v) if isinstance(v, str) else v for k, v in value.items()}
    return value


def _url_secrets(url: str) -> list[str]:
    """The user, password and query values of a URL: where a key travels in an address.

    The user and password also as the ``Basic`` credentials a client makes of them.
    """
    try:
        parts = urllib.parse.urlsplit(url.strip())
        found = [parts.username or "", parts.password or ""]
    except ValueError:  # a malformed port or bracket: no secret is read out of it
        return []
    if "@" in parts.netloc:
        found.append(parts.netloc.rpartition("@")[0])  # ``user:password`` as written
        # What an HTTP client sends of them, and a server may echo in an error:
        # ``Authorization: Basic <base64 of user:password>`` (httpx, requests).
        pair = f"{urllib.parse.unquote(found[0])}:{urllib.parse.unquote(found[1])}"
        found.append(base64.b64encode(pair.encode()).decode())
    found += [value for _, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)]
    found += [value for _, value in urllib.parse.parse_qsl(parts.fragment)]
    return [text for text in found if len(text) >= _MIN_SECRET_LENGTH]


def public_url(url: str) -> str:
    """``url`` with its user, password and query values replaced by `REDACTED`.

    An address can carry a key (``https://key@host/v1``, ``...?key=...``): it is shown,
    saved and logged as ``https://[redacted]@host/v1?key=[redacted]``, the rest kept.
    """
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return REDACTED if "@" in url or "?" in url else url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    query = "&".join(
        f"{name}={REDACTED}" if value else name
        for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    )
    fragment = REDACTED if parts.fragment else ""
    if netloc == parts.netloc and query == parts.query and fragment == parts.fragment:
        return url
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


#: What a credential is replaced with in text.
REDACTED = "[redacted]"

# Shorter values are not looked for: they cannot be told apart from ordinary text, and
# replacing them everywhere would garble messages without hiding a real credential.
_MIN_SECRET_LENGTH = 4


def secret_values(*sources: Mapping[str, Any]) -> list[str]:
    """The credentials in request settings, longest first, for `redact`.

    The values of secret settings (``api_key``, ``*_token``...; every string inside one
    that is a dict or a list) and of secret headers, both whole (``Bearer sk-...``) and
    without their scheme (``sk-...``), as providers echo either. Values shorter than four
    characters are left out.
    """
    found: set[str] = set()
    for params in sources:
        for name, value in params.items():
            if is_secret(str(name)):
                _collect(value, found)
            elif name in ENDPOINT_PARAMS:
                urls = value.values() if isinstance(value, Mapping) else [value]
                for url in urls:
                    if isinstance(url, str):
                        found.update(_url_secrets(url))
            elif name in _HEADER_SETTINGS and isinstance(value, Mapping):
                for header, header_value in value.items():
                    if _is_secret_header(header):
                        _collect(header_value, found)
                        if isinstance(header_value, str):
                            _collect(header_value.strip().rpartition(" ")[2], found)
    return sorted(found, key=lambda text: (-len(text), text))


def _collect(value: Any, found: set[str]) -> None:
    if isinstance(value, str):
        text = value.strip()
        if len(text) >= _MIN_SECRET_LENGTH:
            found.add(text)
    elif isinstance(value, Mapping):
        for item in value.values():
            _collect(item, found)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _collect(item, found)
    else:
        reveal = getattr(value, "get_secret_value", None)  # pydantic's SecretStr
        if callable(reveal):
            _collect(reveal(), found)


def redact(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every one of ``secrets`` (from `secret_values`) replaced by `REDACTED`."""
    for secret in secrets:  # longest first: a header's value before the key inside it
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact_data(value: Any, secrets: Sequence[str]) -> Any:
    """A copy of JSON-like data (messages, settings) with `redact` applied to every string.

    Values that hold no secret are returned as they are, not copied.
    """
    if not secrets:
        return value
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        items = {k: redact_data(v, secrets) for k, v in value.items()}
        return items if any(items[k] is not v for k, v in value.items()) else value
    if isinstance(value, (list, tuple)):
        cleaned = [redact_data(v, secrets) for v in value]
        if all(a is b for a, b in zip(cleaned, value, strict=True)):
            return value
        return tuple(cleaned) if isinstance(value, tuple) else cleaned
    return value


# -- what a file may set -----------------------------------------------------------------

#: The most a file may ask for without trust: beyond these, a saved prompt could make each
#: call cost or wait without end (a million retries, billion-second timeouts, n=1000).
MAX_FILE_RETRIES = 10
MAX_FILE_SECONDS = 3600.0
MAX_FILE_N = 16
MAX_FILE_TOKENS = 1_000_000

_Check = Callable[[Any], str | None]  # the reason a value is refused, or None


def _number(*, low: float | None = None, high: float | None = None, none: bool = True) -> _Check:
    def check(value: Any) -> str | None:
        if value is None and none:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "is a number"
        if not math.isfinite(value) or (low is not None and value < low):
            return f"is a number from {low} up" if high is None else f"is from {low} to {high}"
        if high is not None and value > high:
            return f"is at most {high}" if low is None else f"is from {low} to {high}"
        return None

    return check


def _integer(*, low: int, high: int | None = None, none: bool = True) -> _Check:
    def check(value: Any) -> str | None:
        if value is None and none:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            return "is a whole number"
        if value < low or (high is not None and value > high):
            return f"is from {low} to {high}" if high is not None else f"is {low} or more"
        return None

    return check


def _of(*kinds: type) -> _Check:
    def check(value: Any) -> str | None:
        if value is None or isinstance(value, kinds):
            return None
        return "is " + " or ".join(f"a {kind.__name__}" for kind in kinds)

    return check


def _stop(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return None
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return None
    return "is a string or a list of strings"


_ANY_NUMBER = _number()

#: What a saved prompt or LM may set without ``trust_endpoint=True``, each with its check:
#: request parameters that change only what the model writes (sampling, length, format),
#: within bounds where they multiply cost or time, and the LM's own options (retries, time
#: limits, cache, window, prices it is told). Everything else a file sets, known or not,
#: needs trust: it may choose where requests go (``api_base``,
#: ``aws_bedrock_runtime_endpoint``...), as whom (``api_key``, ``aws_role_name``...), what
#: the provider keeps (``extra_body={"store": true}``, ``metadata``...) or what a call costs
#: (``thinking`` budgets, audio).
FILE_SETTINGS: Mapping[str, _Check] = {
    # sampling: only what the model writes
    "temperature": _number(low=0),
    "top_p": _ANY_NUMBER,
    "top_k": _ANY_NUMBER,
    "min_p": _ANY_NUMBER,
    "presence_penalty": _ANY_NUMBER,
    "frequency_penalty": _ANY_NUMBER,
    "repetition_penalty": _ANY_NUMBER,
    "seed": _integer(low=-(2**63)),
    "stop": _stop,
    "logit_bias": _of(dict),
    "logprobs": _of(bool),
    "top_logprobs": _integer(low=0, high=20),
    # format and tools: how the answer is written
    "response_format": _of(dict, str),
    "tool_choice": _of(dict, str),
    "parallel_tool_calls": _of(bool),
    "reasoning_effort": _of(str),
    "verbosity": _of(str),
    # cost and time, bounded
    "n": _integer(low=1, high=MAX_FILE_N),
    "max_tokens": _integer(low=1, high=MAX_FILE_TOKENS),
    "max_completion_tokens": _integer(low=1, high=MAX_FILE_TOKENS),
    "num_retries": _integer(low=0, high=MAX_FILE_RETRIES, none=False),
    "timeout": _number(low=0.001, high=MAX_FILE_SECONDS, none=False),
    "backoff": _number(low=0, high=MAX_FILE_SECONDS, none=False),
    "max_backoff": _number(low=0, high=MAX_FILE_SECONDS, none=False),
    # the LM's own options, read by structio, never sent
    "context_window": _integer(low=1),
    "cache": _of(bool),
    "transport": _of(str),
    "profile": _of(dict),
}

_SHOWN_LENGTH = 80


def shown_setting(name: str, value: Any) -> str:
    """``name=value`` for a message or a log, with no credential in it and cut short."""
    if is_secret(name):
        return f"{name}={REDACTED}"
    text = repr(public_params({name: value})[name])
    text = redact(text, secret_values({name: value}))
    if len(text) > _SHOWN_LENGTH:
        text = text[: _SHOWN_LENGTH - 5] + "[...]"
    return f"{name}={text}"


def file_setting_problem(name: str, value: Any) -> str | None:
    """Why a file may not set ``name=value`` without trust; None when it may."""
    check = FILE_SETTINGS.get(name)
    if check is None:
        return (
            f"sets {shown_setting(name, value)}, which is not one of the settings a file may "
            "choose on its own (sampling, length and format parameters, bounded retries and "
            "time limits): it may say where requests go, with which credentials, what the "
            "provider keeps, or what a call costs"
        )
    reason = check(value)
    if reason is None:
        return None
    return f"sets {shown_setting(name, value)}; from a file, {name} {reason}"


def check_file_settings(settings: Mapping[str, Any], *, what: str, trusted: bool) -> None:
    """Refuse what a file sets beyond `FILE_SETTINGS` (and their bounds), unless trusted.

    Args:
        settings: The settings the file gives (request parameters, client settings and an
            LM's own options, together).
        what: What the file describes, for the message (``"the saved LM 'openai/x'"``).
        trusted: The caller trusts the file (``trust_endpoint=True``): nothing is refused.

    Raises:
        ConfigurationError: A setting is not one a file may choose, or is out of its
            bounds; the message names it (its value shown without credentials) and says
            what to do.
    """
    if trusted:
        return
    for name in sorted(settings):
        problem = file_setting_problem(name, settings[name])
        if problem is not None:
            raise ConfigurationError(
                f"{what} {problem}. Load it with trust_endpoint=True only if you trust this "
                "file as you trust your own code, or give the model yourself "
                "(Predict.load(path, lm=my_lm), load_prompt(name, lm=my_lm), or "
                "predictor.load(path) into a predictor that has an LM) and set such "
                "settings on it"
            )
