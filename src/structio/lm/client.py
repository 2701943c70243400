"""Client settings: where and how requests go, kept apart from what a request asks for.

An `LM` takes both in one flat spelling, as DSPy does (``LM("openai/x", api_base=...,
api_key=..., temperature=0)``), and sorts them at the door: the *request parameters*
(``temperature``, ``top_p``, ``n``, ``tools``...) go to ``lm.params`` and into the body of
every request; the *client settings* (``api_base``, ``api_key``, ``extra_headers``,
``proxy``, litellm's own options...) go to ``lm.client``, a read-only `ClientSettings`,
and configure the transport that sends the request. A call's own settings are sorted the
same way: ``lm(messages, api_base=...)`` sends that one request elsewhere (with the
transport chosen when the LM was made).

`is_client_setting` is the one rule that sorts them.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any

from structio._util.secrets import ENDPOINT_PARAMS, is_secret, public_params

__all__ = [
    "CLIENT_SETTINGS",
    "LITELLM_ONLY",
    "ClientSettings",
    "is_client_setting",
    "split_settings",
]

#: Options only litellm understands: asking for them chooses (or requires) its transport.
LITELLM_ONLY = frozenset(
    {
        "custom_llm_provider",
        "drop_params",
        "mock_response",
        "input_cost_per_token",
        "output_cost_per_token",
        "base_model",
        "litellm_logging_obj",
        "model_list",
    }
)

#: The names of the client settings (besides every secret name, see `is_client_setting`):
#: the address, the credentials, the HTTP client's options, and the provider options that
#: litellm reads rather than sends.
CLIENT_SETTINGS = (
    frozenset(
        {
            "api",
            "api_base",
            "base_url",
            "api_key",
            "api_version",
            "azure_ad_token",
            "azure_ad_token_provider",
            "organization",
            "headers",
            "extra_headers",
            "default_headers",
            "extra_body",
            "proxy",
            "verify",
            # Whether the provider is asked to cache the stable prefix of prompts (Anthropic's
            # cache_control breakpoints, on by default; OpenAI's prompt_cache_key, when True).
            "prompt_cache",
            # The local server the model runs on (`structio.lm.servers`): what it takes to
            # constrain decoding.
            "server",
            # litellm's per-provider settings (AWS, Vertex AI)
            "aws_access_key_id",
            "aws_region_name",
            "aws_profile_name",
            "aws_session_name",
            "aws_role_name",
            "vertex_project",
            "vertex_location",
        }
    )
    | ENDPOINT_PARAMS
    | LITELLM_ONLY
)


def is_client_setting(name: str) -> bool:
    """Whether a keyword of `LM` (or of a call) configures the client, not the request.

    The names of `CLIENT_SETTINGS`, and every secret name (``api_key``, ``*_token``,
    ``*_secret``...: a credential is never a request parameter).
    """
    return name in CLIENT_SETTINGS or is_secret(name)


def split_settings(settings: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``settings`` sorted into ``(client settings, request parameters)``."""
    client: dict[str, Any] = {}
    params: dict[str, Any] = {}
    for name, value in settings.items():
        (client if is_client_setting(name) else params)[name] = value
    return client, params


class ClientSettings(Mapping[str, Any]):
    """The client settings of an LM (``lm.client``): a read-only mapping.

    A mapping rather than a fixed set of fields, because what a client takes is open:
    litellm reads provider-specific settings (``vertex_project``, ``aws_region_name``...)
    that structio passes on without knowing. It holds the credentials given (``api_key=``),
    but never shows them: ``repr`` and `public` leave out secret names and secret headers
    (the one rule of `structio._util.secrets.public_params`). `LM.to_dict` saves `public`.

    Example:
        >>> settings = ClientSettings({"api_base": "http://localhost:8000/v1", "api_key": "k"})
        >>> settings["api_base"], settings.api_base
        ('http://localhost:8000/v1', 'http://localhost:8000/v1')
        >>> settings
        ClientSettings(api_base='http://localhost:8000/v1')
    """

    __slots__ = ("_data",)

    def __init__(self, settings: Mapping[str, Any] | None = None, /) -> None:
        self._data: dict[str, Any] = dict(settings or {})

    def __getitem__(self, name: str) -> Any:
        return self._data[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    # Read on every request by the transports: the dict's own methods, not Mapping's
    # generic ones (a Python-level `__getitem__` per lookup).
    def __contains__(self, name: object) -> bool:
        return name in self._data

    def get(self, name: str, default: Any = None) -> Any:
        """The setting ``name``, or ``default``."""
        return self._data.get(name, default)

    def keys(self) -> KeysView[str]:
        """The settings' names."""
        return self._data.keys()

    def items(self) -> ItemsView[str, Any]:
        """The settings, by name."""
        return self._data.items()

    def values(self) -> ValuesView[Any]:
        """The settings' values."""
        return self._data.values()

    def as_dict(self) -> dict[str, Any]:
        """The settings as a new plain dict (what ``{**settings}`` gives, without its cost)."""
        return dict(self._data)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.public().items())
        return f"ClientSettings({shown})"

    def __getstate__(self) -> dict[str, Any]:
        return self._data

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._data = dict(state)

    @property
    def api_base(self) -> str | None:
        """The address requests go to, if one is set (``api_base``, else ``base_url``)."""
        value = self._data.get("api_base") or self._data.get("base_url")
        return str(value) if value else None

    def public(self) -> dict[str, Any]:
        """The settings without credentials: what is shown and saved."""
        return public_params(self._data)

    def updated(self, settings: Mapping[str, Any]) -> ClientSettings:
        """A copy with ``settings`` (a call's own) over these; ``self`` when there are none."""
        if not settings:
            return self
        return ClientSettings({**self._data, **settings})
