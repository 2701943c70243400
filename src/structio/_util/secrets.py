"""The one rule for secrets: which request settings are credentials, and hiding them.

Every place that shows, stores or keys request settings (the response cache key, the call
history, saved prompt files, ``repr`` of an LM) goes through `public_params`, so a
credential can never appear in one and not in another. Text that may repeat a credential
(a provider's error message, a prompt or a completion kept in the call history) goes
through `redact` with the values `secret_values` finds by the same rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from structio.exceptions import ConfigurationError

__all__ = [
    "ENDPOINT_PARAMS",
    "REDACTED",
    "check_endpoints",
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
        clean[name] = value
    return clean


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


def check_endpoints(settings: Mapping[str, Any], *, what: str, trusted: bool) -> None:
    """Refuse settings from a file that choose where requests go, unless the caller trusts it.

    Raises:
        ConfigurationError: ``settings`` name an endpoint and ``trusted`` is False; the
            message names them and says how to opt in.
    """
    endpoints = sorted(k for k in settings if k in ENDPOINT_PARAMS)
    if endpoints and not trusted:
        shown = ", ".join(f"{k}={settings[k]!r}" for k in endpoints)
        raise ConfigurationError(
            f"{what} sends requests to {shown}; a file does not choose where requests (and "
            "your API key) go unless you say so: load it with trust_endpoint=True if you "
            "trust this file, or give the model yourself (Predict.load(path, lm=my_lm), "
            "load_prompt(name, lm=my_lm), or predictor.load(path) into a predictor that "
            "has an LM)"
        )
