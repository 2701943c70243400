"""The direct transport: OpenAI-compatible chat endpoints over httpx, without litellm.

OpenAI, Azure OpenAI and every server that speaks the same API (vLLM, llama.cpp, Ollama,
LM Studio, TGI, Groq, Together, OpenRouter, DeepSeek, Fireworks...) are reached with one
pooled `httpx.Client` (and one `httpx.AsyncClient` per event loop): a call costs about what
its HTTP request costs. httpx is imported on the first request, never at ``import
structio``. Errors are translated into structio's tree with the same wording as the litellm
path (`structio.lm._errors`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import AsyncGenerator, Callable, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from structio.exceptions import (
    AuthenticationError,
    ConfigurationError,
    LMError,
)
from structio.lm import _pool
from structio.lm._errors import (
    check_api_base,
    lm_error,
)
from structio.lm._exchange import (
    Endpoint,
    HTTPStatusError,
    HTTPTransport,
    WireAPI,
    _exchange_async,
    _exchange_sync,
    _stream_async,
    _stream_sync,
    client_key,
    joined,
    load,
    replayable,
)
from structio.lm._exchange import translate_error as _translate_error
from structio.lm._stream import StreamAssembler, logprobs_of, reasoning_of, usage_of
from structio.lm.base import no_choices_error, origin_key
from structio.lm.client import LITELLM_ONLY, ClientSettings, is_client_setting
from structio.lm.models import cost_of, model_info
from structio.lm.types import Completion, LMResponse, StreamPiece

if TYPE_CHECKING:
    pass

__all__ = [
    "CHAT",
    "DIRECT_PROVIDERS",
    "ChatAPI",
    "DirectTransport",
    "Endpoint",
    "HTTPStatusError",
    "HTTPTransport",
    "REASONING_PREFIXES",
    "Provider",
    "WireAPI",
    "add_headers",
    "api_address",
    "api_key",
    "check",
    "check_litellm_only",
    "endpoint",
    "joined",
    "kept_endpoint",
    "key_variables",
    "load",
    "prompt_cache_key",
    "register_api",
    "asend",
    "astream",
    "send",
    "sent_params",
    "serves",
    "stream",
    "translate_error",
]


class Provider(NamedTuple):
    """An OpenAI-compatible provider: where it listens and where its key is found.

    Attributes:
        base_url: The default API base (``None``: ``api_base=`` is required).
        key_env: Environment variables that may hold the key, first found wins.
        base_env: Environment variables that may hold the API base.
        needs_key: Whether a request without a key is refused before it is sent.
        azure: Azure OpenAI's URL scheme and ``api-key`` header.
    """

    base_url: str | None
    key_env: tuple[str, ...]
    base_env: tuple[str, ...] = ()
    needs_key: bool = True
    azure: bool = False


#: The model prefixes that go over the direct transport by default, and where they listen.
DIRECT_PROVIDERS: dict[str, Provider] = {
    "openai": Provider(
        "https://api.openai.com/v1", ("OPENAI_API_KEY",), ("OPENAI_BASE_URL", "OPENAI_API_BASE")
    ),
    "azure": Provider(
        None,
        ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY"),
        ("AZURE_API_BASE", "AZURE_OPENAI_ENDPOINT"),
        azure=True,
    ),
    "groq": Provider("https://api.groq.com/openai/v1", ("GROQ_API_KEY",)),
    "together_ai": Provider(
        "https://api.together.xyz/v1",
        ("TOGETHERAI_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_API_KEY"),
    ),
    "openrouter": Provider(
        "https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY",), ("OPENROUTER_API_BASE",)
    ),
    "deepseek": Provider("https://api.deepseek.com/v1", ("DEEPSEEK_API_KEY",)),
    "fireworks_ai": Provider(
        "https://api.fireworks.ai/inference/v1", ("FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY")
    ),
    "xai": Provider("https://api.x.ai/v1", ("XAI_API_KEY",)),
    "hosted_vllm": Provider(
        None, ("HOSTED_VLLM_API_KEY",), ("HOSTED_VLLM_API_BASE",), needs_key=False
    ),
    "lm_studio": Provider(
        "http://localhost:1234/v1",
        ("LM_STUDIO_API_KEY",),
        ("LM_STUDIO_API_BASE",),
        needs_key=False,
    ),
    # Ollama's OpenAI-compatible API, where a JSON schema constrains the answer; an
    # address given as litellm writes it (its root, no /v1) is completed (`endpoint`).
    "ollama": Provider(
        "http://localhost:11434/v1", ("OLLAMA_API_KEY",), ("OLLAMA_API_BASE",), needs_key=False
    ),
    "ollama_chat": Provider(
        "http://localhost:11434/v1", ("OLLAMA_API_KEY",), ("OLLAMA_API_BASE",), needs_key=False
    ),
}

# Settings of the LM itself (read by `LM`), never sent: the OpenAI client's own max_retries
# would multiply structio's retries (num_retries), so a caller's is dropped too.
_NOT_SENT = frozenset({"timeout", "num_retries", "max_retries"})

_DEFAULT_AZURE_VERSION = "2024-10-21"
#: OpenAI's reasoning models (by name): they take max_completion_tokens and refuse max_tokens.
REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")


def _split(model: str) -> tuple[str | None, str]:
    """The provider prefix of a model string (if it names one we serve) and the rest."""
    if "/" in model:
        prefix, name = model.split("/", 1)
        if prefix in DIRECT_PROVIDERS:
            return prefix, name
    return None, model


def _openai_compatible(model: str) -> bool:
    prefix, _ = _split(model)
    return prefix is not None or ("/" not in model and _is_openai_name(model))


def serves(model: str, client: Mapping[str, Any]) -> bool:
    """Whether ``transport="auto"`` sends ``model`` over this transport.

    Yes for the providers of `DIRECT_PROVIDERS` (``openai/...``, ``azure/...``,
    ``groq/...``...) and bare OpenAI model names (``"gpt-4o-mini"``), unless a litellm-only
    option is set; every other provider (``anthropic/...``, ``bedrock/...``,
    ``vertex_ai/...``) is litellm's.
    """
    return not LITELLM_ONLY.intersection(client) and _openai_compatible(model)


def check(model: str, client: Mapping[str, Any]) -> None:
    """Refuse ``transport="direct"`` for what this transport cannot serve.

    Raises:
        ConfigurationError: A litellm-only option is set, or the model is not
            OpenAI-compatible and no ``api_base`` says where such a server is.
    """
    check_litellm_only(model, client, "direct")
    if not _openai_compatible(model) and not (client.get("api_base") or client.get("base_url")):
        raise ConfigurationError(
            f"transport='direct' needs an OpenAI-compatible model ({model!r} is not one "
            f"of {', '.join(sorted(DIRECT_PROVIDERS))}/...) or api_base= pointing at an "
            "OpenAI-compatible server"
        )


def check_litellm_only(model: str, client: Mapping[str, Any], transport: str) -> None:
    """Refuse a litellm-only option on the httpx transport named ``transport``.

    Raises:
        ConfigurationError: A litellm-only option is set.
    """
    litellm_only = sorted(LITELLM_ONLY.intersection(client))
    if litellm_only:
        raise ConfigurationError(
            f"{', '.join(litellm_only)} is a litellm option, which the {transport} transport "
            f"does not have: pass transport='litellm' to LM({model!r})"
        )


def _is_openai_name(model: str) -> bool:
    info = model_info(model)  # reads the map only when a bare name needs it
    return info is not None and info.provider == "openai"


def _setting(params: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        value = params.get(name)
        if value:
            return value
    return None


def _env(names: tuple[str, ...]) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


def api_address(
    model: str,
    client: Mapping[str, Any],
    provider_name: str,
    base_env: tuple[str, ...],
    default: str | None,
) -> tuple[str, bool]:
    """The API base of a request (no trailing slash), and whether the caller set it.

    ``api_base`` (or ``base_url``) wins, then the first of ``base_env`` that is set, then
    ``default``; each is checked (`check_api_base`) before any request is made.

    Raises:
        ConfigurationError: The address is not one, or there is none.
    """
    base = _setting(client, "api_base", "base_url")
    custom_base = bool(base)
    if not base:
        from_env = [name for name in base_env if os.environ.get(name)]
        base = _env(base_env)
        # LM checks its own api_base; one from the environment is checked here, before a
        # request that could only fail.
        check_api_base(base, f"the environment variable {from_env[0]}" if from_env else "")
        base = base or default
    else:
        check_api_base(base, "api_base" if client.get("api_base") else "base_url")
    if not base:
        names = " or ".join(base_env)
        raise ConfigurationError(
            f"{model}: the {provider_name} provider has no default address; pass api_base= "
            f"to LM or set {names}"
        )
    return str(base).rstrip("/"), custom_base


def api_key(
    model: str,
    client: Mapping[str, Any],
    provider_name: str,
    key_env: tuple[str, ...],
    *,
    required: bool,
) -> str | None:
    """The key of a request: ``api_key``, else the first of ``key_env`` that is set.

    Raises:
        AuthenticationError: ``required`` and there is none (no request is made).
    """
    key = client.get("api_key") or _env(key_env)
    if not key and required:
        names = " or ".join(key_env)
        raise lm_error(
            AuthenticationError,
            model=model,
            provider=provider_name,
            attempts=1,
            detail=f"no API key; set the environment variable {names} (or pass api_key= to LM)",
        )
    return str(key) if key else None


def add_headers(headers: dict[str, str], client: Mapping[str, Any]) -> dict[str, str]:
    """``headers`` with the client's own (``headers``, ``extra_headers``) over them."""
    for setting in ("headers", "extra_headers"):
        extra = client.get(setting)
        if isinstance(extra, Mapping):
            headers.update({str(k): str(v) for k, v in extra.items()})
    return headers


EndpointOf = Callable[[str, Mapping[str, Any]], Endpoint]
"""An API's endpoint function: the `Endpoint` of a request for a model with client settings."""

# Kept endpoints, at most this many (then all are dropped): one per LM in use.
_KEPT_ENDPOINTS = 256


def kept_endpoint(
    variables: Callable[[str], tuple[str, ...]],
) -> Callable[[EndpointOf], EndpointOf]:
    """An endpoint function made once per model and client settings, not on every request.

    What an endpoint reads is the model, the client settings and ``variables(model)``, the
    environment variables that may hold its address, key or version. `ClientSettings` are
    read-only (an LM's ``lm.client``), so the endpoint made for one is kept with the values
    those variables had, and made again when any of them has changed: setting a key in the
    environment takes effect at the next request. Any other mapping (a test's dict) is read
    anew each time. The endpoint's headers are shared between requests: never change them.
    """

    def keep(compute: EndpointOf) -> EndpointOf:
        kept: dict[tuple[str, int], _Kept] = {}

        @functools.wraps(compute)
        def endpoint(model: str, client: Mapping[str, Any]) -> Endpoint:
            environ = os.environ
            data = getattr(environ, "_data", None)
            if type(client) is not ClientSettings or not isinstance(data, dict):
                return compute(model, client)
            found = kept.get((model, id(client)))
            # The identity checks: an id is reused once its object is gone, and a test may
            # put another mapping in os.environ.
            if (
                found is not None
                and found.client is client
                and found.environ is environ
                and [data.get(key) for key in found.keys] == found.values
            ):
                return found.point
            keys = [environ.encodekey(name) for name in variables(model)]
            values = [data.get(key) for key in keys]
            point = compute(model, client)
            if len(kept) >= _KEPT_ENDPOINTS:
                kept.clear()
            kept[(model, id(client))] = _Kept(client, environ, keys, values, point)
            return point

        return endpoint

    return keep


class _Kept(NamedTuple):
    """An endpoint kept, with what it was made from (see `kept_endpoint`)."""

    client: ClientSettings
    environ: Mapping[str, str]
    # The variables' keys and values as os.environ holds them (bytes on POSIX): read
    # without os.environ.get, whose KeyError for an unset variable costs microseconds.
    keys: list[Any]
    values: list[Any]
    point: Endpoint


def _variables(model: str) -> tuple[str, ...]:
    """The environment variables `endpoint` reads for ``model``."""
    prefix, _ = _split(model)
    provider = DIRECT_PROVIDERS[prefix or "openai"]
    return (
        *provider.base_env,
        *provider.key_env,
        *(("AZURE_API_VERSION",) if provider.azure else ()),
    )


@kept_endpoint(_variables)
def endpoint(model: str, client: Mapping[str, Any]) -> Endpoint:
    """The URL, headers and body model name of a request for ``model`` with ``client``.

    Raises:
        AuthenticationError: The provider needs a key and none is set (no request is made).
        ConfigurationError: The provider needs an API base and none is set.
    """
    prefix, name = _split(model)
    provider_name = prefix or "openai"
    provider = DIRECT_PROVIDERS[provider_name]
    base, custom_base = api_address(
        model, client, provider_name, provider.base_env, provider.base_url
    )
    if provider_name.startswith("ollama") and not base.endswith("/v1"):
        base += "/v1"  # litellm's spelling of Ollama's address is its root
    key = api_key(
        model,
        client,
        provider_name,
        provider.key_env,
        required=provider.needs_key and not custom_base and not client.get("azure_ad_token"),
    )
    headers: dict[str, str] = {"Content-Type": "application/json"}
    if provider.azure:
        version = (
            client.get("api_version") or os.environ.get("AZURE_API_VERSION")
        ) or _DEFAULT_AZURE_VERSION
        url = joined(base, f"/openai/deployments/{name}/chat/completions", f"api-version={version}")
        if key:
            headers["api-key"] = key
        elif client.get("azure_ad_token"):
            headers["Authorization"] = f"Bearer {client['azure_ad_token']}"
    else:
        url = joined(base, "/chat/completions")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        organization = client.get("organization")
        if organization:
            headers["OpenAI-Organization"] = str(organization)
    add_headers(headers, client)
    secrets = _pool.address_secrets({"api_base": base})
    return Endpoint(url, headers, name, provider_name, client_key(client), base, secrets)


def key_variables(model: str) -> tuple[str, ...] | None:
    """The environment variables that hold the key for ``model`` on this transport.

    ``None`` for a model of a provider this transport does not serve by name.
    """
    prefix, _ = _split(model)
    if prefix is None and "/" in model:
        return None
    return DIRECT_PROVIDERS[prefix or "openai"].key_env


def request_body(
    point: Endpoint,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON body: the model, the messages, every request parameter, ``extra_body``.

    A client setting or an LM setting (``num_retries``, ``timeout``, ``max_retries``) in
    ``params`` is never sent.
    """
    body: dict[str, Any] = {"model": point.model, "messages": replayable(messages)}
    body.update(sent_params(params))
    if (
        point.provider == "openai"
        and "max_tokens" in body
        and point.model.startswith(REASONING_PREFIXES)
    ):
        body.setdefault("max_completion_tokens", body.pop("max_tokens"))
    key = prompt_cache_key(params, client or {})
    if key is not None:
        body["prompt_cache_key"] = key
    extra = (client or {}).get("extra_body", params.get("extra_body"))
    if isinstance(extra, Mapping):
        body.update(extra)
    return body


def sent_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """The request parameters a body may send: no client setting, no LM setting."""
    return {
        name: value
        for name, value in params.items()
        if name not in _NOT_SENT and not is_client_setting(name)
    }


def prompt_cache_key(params: Mapping[str, Any], client: Mapping[str, Any]) -> str | None:
    """The ``prompt_cache_key`` a request adds: its signature's and adapter's, when asked.

    Only with the client setting ``prompt_cache=True`` (OpenAI caches prompts without a
    key too, but routes requests that share a key to the same cache, so that every call of
    one signature and adapter finds the prefix the last one left); never over a caller's
    own ``prompt_cache_key``, which is sent as it is. None outside a call that said its
    origin (`structio.lm.base.set_origin`).
    """
    if client.get("prompt_cache") is not True or params.get("prompt_cache_key") is not None:
        return None
    return origin_key()


class ChatAPI:
    """OpenAI's chat completions (``/chat/completions``), and every server that speaks it."""

    def provider(self, model: str) -> str:
        """The provider prefix the model names, else ``"openai"``."""
        return _split(model)[0] or "openai"

    def endpoint(self, model: str, client: Mapping[str, Any], *, stream: bool) -> Endpoint:
        """`endpoint` (the same URL streamed or not)."""
        return endpoint(model, client)

    def body(
        self,
        point: Endpoint,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        *,
        stream: bool,
    ) -> dict[str, Any]:
        """`request_body`, with ``stream: true`` when streamed."""
        return request_body(
            point, messages, {**params, "stream": True} if stream else params, client
        )

    def response(
        self, data: Mapping[str, Any], model: str, provider: str, latency: float, attempts: int
    ) -> LMResponse:
        """`to_response`."""
        return to_response(data, model, provider, latency, attempts)

    def assembler(self, model: str, provider: str) -> StreamAssembler:
        """A `StreamAssembler` of ``chat.completion.chunk`` lines."""
        return StreamAssembler(model, provider)


#: The chat-completions API (the direct transport's own).
CHAT = ChatAPI()


def send(
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    timeout: float,
    start: float,
    attempt: int,
) -> LMResponse:
    """Make one chat-completions request and read its response (see `translate_error`)."""
    return _exchange_sync(CHAT, model, messages, params, client, timeout, start, attempt)


async def asend(
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    timeout: float,
    start: float,
    attempt: int,
) -> LMResponse:
    """Async form of `send`."""
    return await _exchange_async(CHAT, model, messages, params, client, timeout, start, attempt)


def stream(
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    timeout: float,
    attempt: int = 1,
) -> Generator[StreamPiece | StreamAssembler, None, None]:
    """Make one streamed request: the first choice's new text as it comes, then the assembler.

    Closing the generator closes the HTTP response. ``attempt`` is the LM's count, unused.
    """
    return _stream_sync(CHAT, model, messages, params, client, timeout)


def astream(
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    timeout: float,
    attempt: int = 1,
) -> AsyncGenerator[StreamPiece | StreamAssembler, None]:
    """Async form of `stream`."""
    return _stream_async(CHAT, model, messages, params, client, timeout)


def _text(content: Any) -> str:
    """A message's content as text (some servers send a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return ""


def to_response(
    data: Mapping[str, Any], model: str, provider: str, latency: float, attempts: int
) -> LMResponse:
    """A chat.completion JSON object as an `LMResponse`.

    Raises:
        ServerError: No choice holds a message (retried like a 5xx).
    """
    completions = []
    for choice in data.get("choices") or ():
        message = choice.get("message") if isinstance(choice, Mapping) else None
        if not isinstance(message, Mapping):
            continue
        calls = message.get("tool_calls")
        logprobs = logprobs_of(choice)
        completions.append(
            Completion(
                # ``content`` is null in a reply that only calls tools: the text is "".
                text=_text(message.get("content")),
                finish_reason=choice.get("finish_reason"),
                tool_calls=tuple(dict(call) for call in calls) if calls else None,
                reasoning=reasoning_of(message),
                logprobs=tuple(logprobs) if logprobs is not None else None,
            )
        )
    if not completions:
        raise no_choices_error(model, provider=provider, attempts=attempts)
    usage = usage_of(data.get("usage"))
    return LMResponse(
        completions=tuple(completions),
        model=model,
        usage=usage,
        cost=cost_of(model, usage),
        latency=latency,
    )


def translate_error(
    exc: BaseException,
    model: str,
    attempts: int,
    *,
    secrets: Sequence[str] = (),
    key_given: bool = False,
) -> LMError | None:
    """Translate a failure of `send` into structio's tree; None if it is not one of ours."""
    return _translate_error(
        exc, model, attempts, secrets=secrets, key_given=key_given, provider=CHAT.provider(model)
    )


#: The APIs the direct transport speaks besides chat completions, by the ``api`` setting's
#: value: each a function that loads its module and returns the API (`register_api`).
_APIS: dict[str, Callable[[], WireAPI]] = {}


def register_api(name: str, load: Callable[[], WireAPI]) -> None:
    """Let the direct transport speak another API when the client setting ``api`` names it.

    ``load`` imports the API's module on its first use (`structio.lm.transport` registers
    OpenAI's Responses API so: this module never imports the APIs built on it).
    """
    _APIS[name] = load


class DirectTransport(HTTPTransport):
    """The direct transport (registered as ``"direct"``): OpenAI-compatible APIs over httpx.

    Chat completions by default; OpenAI's Responses API with the client setting
    ``api="responses"`` (DSPy's ``model_type="responses"``; `register_api`). httpx is
    imported by `load` (or the first request), never before.
    """

    name = "direct"

    def __init__(self) -> None:
        super().__init__(CHAT)

    def wire(self, model: str, client: Mapping[str, Any]) -> WireAPI:
        """Chat completions, or the API ``client["api"]`` names (`register_api`).

        Raises:
            ConfigurationError: No API of that name is registered.
        """
        api = client.get("api")
        if api is None or api == "chat":
            return CHAT
        load = _APIS.get(api)
        if load is None:
            raise ConfigurationError(
                f"{model}: the direct transport speaks no API named {api!r} (it speaks "
                f"'chat'{''.join(f', {name!r}' for name in sorted(_APIS))})"
            )
        return load()

    def check(self, model: str, client: Mapping[str, Any]) -> None:
        """Refuse a model this transport cannot serve when it is asked for by name."""
        check(model, client)
