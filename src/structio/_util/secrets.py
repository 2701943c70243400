"""The one rule for secrets: which request settings are credentials, and hiding them.

Every place that shows, stores or keys request settings (the response cache key, the call
history, saved prompt files, ``repr`` of an LM) goes through `public_params`, so a
credential can never appear in one and not in another.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from structio.exceptions import ConfigurationError

__all__ = ["ENDPOINT_PARAMS", "check_endpoints", "is_secret", "public_params"]

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
            "trust this file, or pass lm= yourself"
        )
