"""The direct transport: OpenAI-compatible chat endpoints over httpx, without litellm.

OpenAI, Azure OpenAI and every server that speaks the same API (vLLM, llama.cpp, Ollama,
LM Studio, TGI, Groq, Together, OpenRouter, DeepSeek, Fireworks...) are reached with one
pooled `httpx.Client` (and one `httpx.AsyncClient` per event loop): a call costs about what
its HTTP request costs. httpx is imported on the first request, never at ``import
structio``. Errors are translated into structio's tree with the same wording as the litellm
path (`structio.lm._errors`).
"""

from __future__ import annotations

import json
import os
import time
import urllib.parse
from collections.abc import AsyncGenerator, Generator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from structio.exceptions import (
    AuthenticationError,
    ConfigurationError,
    ContextWindowExceededError,
    LMConnectionError,
    LMError,
    LMTimeoutError,
    ServerError,
)
from structio.lm import _pool
from structio.lm._errors import (
    body_detail,
    check_api_base,
    context_exceeded_text,
    lm_error,
    redirect_detail,
    request_url,
    retry_after,
    status_error_class,
)
from structio.lm._stream import StreamAssembler, logprobs_of, reasoning_of, usage_of
from structio.lm.base import no_choices_error
from structio.lm.client import LITELLM_ONLY, is_client_setting
from structio.lm.models import cost_of, model_info
from structio.lm.types import Completion, LMResponse

if TYPE_CHECKING:
    import httpx

__all__ = [
    "DIRECT_PROVIDERS",
    "DirectTransport",
    "Endpoint",
    "HTTPStatusError",
    "Provider",
    "check",
    "endpoint",
    "joined",
    "key_variables",
    "load",
    "asend",
    "astream",
    "send",
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
}

# Settings of the LM itself (read by `LM`), never sent: the OpenAI client's own max_retries
# would multiply structio's retries (num_retries), so a caller's is dropped too.
_NOT_SENT = frozenset({"timeout", "num_retries", "max_retries"})

#: The most bytes of one response read, after decompression (a body, or a whole stream):
#: a completion is kilobytes; past this, a server (or a gzip bomb) is refused, not buffered.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024

_DEFAULT_AZURE_VERSION = "2024-10-21"
# OpenAI's reasoning models take max_completion_tokens and refuse max_tokens.
_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")


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
    ``vertex_ai/...``, ``ollama_chat/...``) is litellm's.
    """
    return not LITELLM_ONLY.intersection(client) and _openai_compatible(model)


def check(model: str, client: Mapping[str, Any]) -> None:
    """Refuse ``transport="direct"`` for what this transport cannot serve.

    Raises:
        ConfigurationError: A litellm-only option is set, or the model is not
            OpenAI-compatible and no ``api_base`` says where such a server is.
    """
    litellm_only = sorted(LITELLM_ONLY.intersection(client))
    if litellm_only:
        raise ConfigurationError(
            f"{', '.join(litellm_only)} is a litellm option, which the direct transport "
            f"does not have: pass transport='litellm' to LM({model!r})"
        )
    if not _openai_compatible(model) and not (client.get("api_base") or client.get("base_url")):
        raise ConfigurationError(
            f"transport='direct' needs an OpenAI-compatible model ({model!r} is not one "
            f"of {', '.join(sorted(DIRECT_PROVIDERS))}/...) or api_base= pointing at an "
            "OpenAI-compatible server"
        )


def _is_openai_name(model: str) -> bool:
    info = model_info(model)  # reads the map only when a bare name needs it
    return info is not None and info.provider == "openai"


class Endpoint(NamedTuple):
    """Where one request goes: the URL, the headers and the model name in the body.

    ``base`` is the API base the URL was made from (other paths of the API are `joined` to
    it); ``secrets`` are the credentials it carries in its address (user, password, query
    values), hidden from what httpx logs of a request (`structio.lm._pool.hidden`).
    """

    url: str
    headers: dict[str, str]
    model: str
    provider: str
    client_key: tuple[Any, ...]
    base: str = ""
    secrets: tuple[str, ...] = ()


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


def endpoint(model: str, client: Mapping[str, Any]) -> Endpoint:
    """The URL, headers and body model name of a request for ``model`` with ``client``.

    Raises:
        AuthenticationError: The provider needs a key and none is set (no request is made).
        ConfigurationError: The provider needs an API base and none is set.
    """
    prefix, name = _split(model)
    provider_name = prefix or "openai"
    provider = DIRECT_PROVIDERS[provider_name]
    base = _setting(client, "api_base", "base_url")
    custom_base = bool(base)
    if not base:
        from_env = [name for name in provider.base_env if os.environ.get(name)]
        base = _env(provider.base_env)
        # LM checks its own api_base; one from the environment is checked here, before a
        # request that could only fail.
        check_api_base(base, f"the environment variable {from_env[0]}" if from_env else "")
        base = base or provider.base_url
    else:
        check_api_base(base, "api_base" if client.get("api_base") else "base_url")
    if not base:
        names = " or ".join(provider.base_env)
        raise ConfigurationError(
            f"{model}: the {provider_name} provider has no default address; pass api_base= "
            f"to LM or set {names}"
        )
    key = client.get("api_key") or _env(provider.key_env)
    if not key and provider.needs_key and not custom_base and not client.get("azure_ad_token"):
        names = " or ".join(provider.key_env)
        raise lm_error(
            AuthenticationError,
            model=model,
            provider=provider_name,
            attempts=1,
            detail=f"no API key; set the environment variable {names} (or pass api_key= to LM)",
        )
    headers: dict[str, str] = {"Content-Type": "application/json"}
    base = str(base).rstrip("/")
    if provider.azure:
        version = (
            client.get("api_version") or os.environ.get("AZURE_API_VERSION")
        ) or _DEFAULT_AZURE_VERSION
        url = joined(base, f"/openai/deployments/{name}/chat/completions", f"api-version={version}")
        if key:
            headers["api-key"] = str(key)
        elif client.get("azure_ad_token"):
            headers["Authorization"] = f"Bearer {client['azure_ad_token']}"
    else:
        url = joined(base, "/chat/completions")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        organization = client.get("organization")
        if organization:
            headers["OpenAI-Organization"] = str(organization)
    for setting in ("headers", "extra_headers"):
        extra = client.get(setting)
        if isinstance(extra, Mapping):
            headers.update({str(k): str(v) for k, v in extra.items()})
    secrets = _pool.address_secrets({"api_base": base})
    return Endpoint(url, headers, name, provider_name, _client_key(client), base, secrets)


def joined(base: str, path: str, query: str = "") -> str:
    """``base`` with ``path`` added to its path, its query (if any) kept after them.

    An API base may carry a query (``https://host/v1?key=...``): the path goes before it,
    not into it. A fragment is never sent, so it is dropped.
    """
    if "?" not in base and "#" not in base:
        return f"{base}{path}?{query}" if query else f"{base}{path}"
    parts = urllib.parse.urlsplit(base)
    merged = "&".join(part for part in (parts.query, query) if part)
    return urllib.parse.urlunsplit(
        (parts.scheme, parts.netloc, parts.path.rstrip("/") + path, merged, "")
    )


def _client_key(client: Mapping[str, Any]) -> tuple[Any, ...]:
    """Which pooled client serves requests with these settings: one per proxy and TLS setting."""
    return (client.get("proxy"), client.get("verify", True))


def load(client: Mapping[str, Any]) -> None:
    """Import httpx and open the client requests with these settings use (once: then free)."""
    _pool.client(_client_key(client))


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
    body: dict[str, Any] = {"model": point.model, "messages": messages}
    for name, value in params.items():
        if name not in _NOT_SENT and not is_client_setting(name):
            body[name] = value
    if (
        point.provider == "openai"
        and "max_tokens" in body
        and point.model.startswith(_REASONING_PREFIXES)
    ):
        body.setdefault("max_completion_tokens", body.pop("max_tokens"))
    extra = (client or {}).get("extra_body", params.get("extra_body"))
    if isinstance(extra, Mapping):
        body.update(extra)
    return body


# -- requests -----------------------------------------------------------------------------------


class HTTPStatusError(Exception):
    """A response that is not a completion: its status, text and headers, to translate."""

    def __init__(self, status: int | None, text: str, headers: Mapping[str, str]) -> None:
        super().__init__(f"HTTP {status}: {text}" if status else text)
        self.status = status
        self.text = text
        self.headers = dict(headers)


def _encode(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def _post(
    http: httpx.Client | httpx.AsyncClient, point: Endpoint, body: dict[str, Any], timeout: float
) -> httpx.Request:
    """The request of one call: ``body`` posted to ``point``."""
    return http.build_request(
        "POST", point.url, content=_encode(body), headers=point.headers, timeout=timeout
    )


def send(
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    timeout: float,
    start: float,
    attempt: int,
) -> LMResponse:
    """Make one request and read its response (raising what `translate_error` reads)."""
    point = endpoint(model, client)
    body = request_body(point, messages, params, client)
    http = _pool.client(point.client_key)
    with _pool.opened(http, _post(http, point, body, timeout), point.secrets) as response:
        content = _bounded(response.iter_bytes(), response)
    return _read(response, content, model, point.provider, start, attempt)


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
    point = endpoint(model, client)
    body = request_body(point, messages, params, client)
    http = await _pool.aclient(point.client_key)
    async with _pool.aopened(http, _post(http, point, body, timeout), point.secrets) as response:
        content = await _abounded(response)
    return _read(response, content, model, point.provider, start, attempt)


def stream(
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    timeout: float,
    attempt: int = 1,
) -> Generator[str | StreamAssembler, None, None]:
    """Make one streamed request: the first choice's new text as it comes, then the assembler.

    Closing the generator closes the HTTP response. ``attempt`` is the LM's count, unused.
    """
    point = endpoint(model, client)
    body = request_body(point, messages, {**params, "stream": True}, client)
    http = _pool.client(point.client_key)
    with _pool.opened(http, _post(http, point, body, timeout), point.secrets) as response:
        if response.status_code != 200:
            text = _bounded(response.iter_bytes(), response).decode(errors="replace")
            raise HTTPStatusError(response.status_code, text, response.headers)
        assembler = StreamAssembler(model, point.provider)
        size = 0
        for line in response.iter_lines():
            size += len(line) + 1
            if size > MAX_RESPONSE_BYTES:
                raise _too_large(response)
            new = assembler.feed_line(line)
            if new:
                yield new
    yield assembler


async def astream(
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    timeout: float,
    attempt: int = 1,
) -> AsyncGenerator[str | StreamAssembler, None]:
    """Async form of `stream`."""
    point = endpoint(model, client)
    body = request_body(point, messages, {**params, "stream": True}, client)
    http = await _pool.aclient(point.client_key)
    async with _pool.aopened(http, _post(http, point, body, timeout), point.secrets) as response:
        if response.status_code != 200:
            text = (await _abounded(response)).decode(errors="replace")
            raise HTTPStatusError(response.status_code, text, response.headers)
        assembler = StreamAssembler(model, point.provider)
        size = 0
        async for line in response.aiter_lines():
            size += len(line) + 1
            if size > MAX_RESPONSE_BYTES:
                raise _too_large(response)
            new = assembler.feed_line(line)
            if new:
                yield new
    yield assembler


def _bounded(pieces: Iterable[bytes], response: httpx.Response) -> bytes:
    """The decompressed body, read piece by piece up to `MAX_RESPONSE_BYTES`."""
    read: list[bytes] = []
    size = 0
    for piece in pieces:
        size += len(piece)
        if size > MAX_RESPONSE_BYTES:
            raise _too_large(response)
        read.append(piece)
    return b"".join(read)


async def _abounded(response: httpx.Response) -> bytes:
    """Async form of `_bounded`, over the response's decompressed bytes."""
    read: list[bytes] = []
    size = 0
    async for piece in response.aiter_bytes():
        size += len(piece)
        if size > MAX_RESPONSE_BYTES:
            raise _too_large(response)
        read.append(piece)
    return b"".join(read)


def _too_large(response: httpx.Response) -> HTTPStatusError:
    return HTTPStatusError(
        None,
        f"the response passed {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB (decompressed) and "
        "was not read further: no completion is that large (a misbehaving server, or a "
        "compressed body that expands without bound)",
        response.headers,
    )


def _read(
    response: httpx.Response,
    content: bytes,
    model: str,
    provider: str,
    start: float,
    attempt: int,
) -> LMResponse:
    text = content.decode(errors="replace")
    if response.status_code != 200:
        raise HTTPStatusError(response.status_code, text, response.headers)
    try:
        data = json.loads(content)
    except ValueError:
        raise HTTPStatusError(None, f"the response is not JSON: {text[:2000]}", {}) from None
    if not isinstance(data, dict):
        raise HTTPStatusError(None, f"the response is not a JSON object: {text[:2000]}", {})
    try:
        return to_response(data, model, provider, time.perf_counter() - start, attempt)
    except LMError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        # A body of the wrong shape ({"choices": 5}) is the server's fault, in our tree.
        raise HTTPStatusError(
            None, f"the response is not a chat.completion ({exc}): {text[:2000]}", {}
        ) from None


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
    """Translate a failure of `send` into structio's tree; None if it is not one of ours.

    ``key_given`` is unused here: a missing key is refused before any request is sent.
    """
    prefix, _ = _split(model)
    provider = prefix or "openai"
    common: dict[str, Any] = {
        "model": model,
        "provider": provider,
        "attempts": attempts,
        "secrets": secrets,
    }
    if isinstance(exc, HTTPStatusError):
        detail, code = body_detail(exc.text, exc.status)
        status = exc.status
        if status is not None and 300 <= status < 400:  # redirects are never followed
            detail = redirect_detail(status, exc.headers)
        cls: type[LMError] = status_error_class(status) if status else ServerError
        if status in (400, 413, 422) and (
            code == "context_length_exceeded" or context_exceeded_text(detail)
        ):
            cls = ContextWindowExceededError
        return lm_error(
            cls,
            detail=detail,
            status=status,
            retry_after=retry_after(exc.headers),
            **common,
        )
    module = type(exc).__module__
    if not module.startswith(("httpx", "httpcore")):
        return None
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return lm_error(LMTimeoutError, detail=_exception_text(exc), url=request_url(exc), **common)
    if isinstance(exc, httpx.TransportError):
        return lm_error(
            LMConnectionError, detail=_exception_text(exc), url=request_url(exc), **common
        )
    return lm_error(ServerError, detail=_exception_text(exc), what="the provider failed", **common)


def _exception_text(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text


class DirectTransport:
    """The direct transport (registered as ``"direct"``): OpenAI-compatible chat over httpx.

    The module's functions as one `structio.lm.transport.Transport`; httpx is imported by
    `load` (or the first request), never before.
    """

    name = "direct"
    # The module's functions, called as they are (a request, a stream, an error).
    send = staticmethod(send)
    asend = staticmethod(asend)
    stream = staticmethod(stream)
    astream = staticmethod(astream)
    translate_error = staticmethod(translate_error)

    def load(self, client: Mapping[str, Any]) -> None:
        """Import httpx and open the pooled client of these settings."""
        load(client)

    def check(self, model: str, client: Mapping[str, Any]) -> None:
        """Refuse a model this transport cannot serve when it is asked for by name."""
        check(model, client)
