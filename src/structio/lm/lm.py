"""`LM`: any model, over HTTP directly or through litellm, with retries, a cache and history."""

from __future__ import annotations

import functools
import os
import random
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterator,
    Mapping,
)
from typing import Any, cast

from structio._util.data import jsonable
from structio._util.log import logger
from structio._util.secrets import check_endpoints, public_params, secret_values
from structio.exceptions import (
    ConfigurationError,
    LMConnectionError,
    LMError,
    LMTimeoutError,
    RateLimitError,
    ServerError,
)
from structio.lm import _http, _litellm
from structio.lm._errors import check_api_base
from structio.lm._stream import StreamAssembler
from structio.lm.base import BaseLM
from structio.lm.cache import ResponseCache, cache_key, default_cache
from structio.lm.models import model_info
from structio.lm.types import LMResponse, StreamItem

__all__ = ["LM"]

_RETRYABLE = (RateLimitError, LMTimeoutError, LMConnectionError, ServerError)

# One request of a transport: (model, messages, params, timeout, start, attempt).
_Send = Callable[[str, list[dict[str, Any]], Mapping[str, Any], float, float, int], LMResponse]
_ASend = Callable[
    [str, list[dict[str, Any]], Mapping[str, Any], float, float, int], Awaitable[LMResponse]
]
_Translate = Callable[..., "LMError | None"]
# One streamed request: (model, messages, params, timeout) -> text pieces, then the assembler.
_Stream = Callable[
    [str, list[dict[str, Any]], Mapping[str, Any], float],
    Generator["str | StreamAssembler", None, None],
]
_AStream = Callable[
    [str, list[dict[str, Any]], Mapping[str, Any], float],
    AsyncGenerator["str | StreamAssembler", None],
]
# A cached answer replayed as a stream comes in pieces of this many characters.
_REPLAY_PIECE = 64
# Attributes an LM derives from its settings in each process: never pickled.
_DERIVED = (
    "_route",
    "_send",
    "_asend",
    "_open_stream",
    "_aopen_stream",
    "_translate",
    "_capabilities",
)


def _sleep(seconds: float) -> None:
    """Wait between attempts (a module function, so tests can record the waits)."""
    time.sleep(seconds)


class LM(BaseLM):
    """A language model: OpenAI-compatible endpoints directly over HTTP, the rest via litellm.

    Example:
        >>> lm = LM("openai/gpt-4o-mini", temperature=0)            # doctest: +SKIP
        >>> lm([{"role": "user", "content": "Say hi"}]).text         # doctest: +SKIP
        'Hi!'

    Any litellm model string works: ``"openai/gpt-4o-mini"``, ``"anthropic/claude-..."``,
    ``"ollama_chat/llama3.2"``, or ``"openai/<name>"`` with ``api_base=`` for any
    OpenAI-compatible server (vLLM, llama.cpp, Ollama, LM Studio, TGI...).

    Two transports carry the requests (see `transport`): **direct**, one pooled httpx
    client speaking the OpenAI chat API, for ``openai/...``, ``azure/...``, ``groq/...``,
    ``together_ai/...``, ``openrouter/...``, ``deepseek/...``, ``fireworks_ai/...``,
    ``xai/...``, ``hosted_vllm/...``, ``lm_studio/...`` and bare OpenAI names
    (``"gpt-4o-mini"``); and **litellm** for every other provider (``anthropic/...``,
    ``bedrock/...``, ``vertex_ai/...``...), imported only when that path is used. Both give
    the same responses, errors, cache, history, usage and cost (priced from litellm's model
    map, read without importing litellm).

    Requests that fail with a rate limit, a timeout, a connection error, a 5xx or a
    response with no choices are retried up to ``num_retries`` times with exponential
    backoff (honouring ``Retry-After``); a 400 or an authentication error is never retried.
    litellm's own retries and cache are turned off: structio owns both.

    A failure is raised as structio's `LMError` whose message never repeats a credential:
    the values of the secret settings (``api_key``, auth headers...) of the LM and of the
    call, and of secret environment variables (``OPENAI_API_KEY``...), are replaced by
    ``[redacted]`` in the provider's text. Its ``__cause__`` is the transport's own
    exception (litellm's, or httpx's / the HTTP failure on the direct path), which holds
    the provider's raw text as it came.

    An LM pickles (``pickle``, ``cloudpickle``), so a `Predict` holding one can be sent to
    worker processes (multiprocessing, Ray, Spark). Its settings travel; its history, its
    httpx clients and the memory tier of its cache stay in this process and are made anew
    there. An API key travels only when it was given as ``api_key=``; a key the LM reads
    from the environment is read from the worker's environment, which is where workers
    should get keys (set ``OPENAI_API_KEY``... there). ``cache=ResponseCache(directory)``
    travels as that directory, so workers on one machine (or on a shared file system)
    share its responses; ``cache=True`` is the default cache of the process the LM runs
    in (``$STRUCTIO_CACHE_DIR`` there).

    Args:
        model: The litellm model string.
        temperature: Sampling temperature (``None``: the provider's default).
        max_tokens: Maximum completion tokens (``None``: the provider's default).
        num_retries: How many times a retryable failure is retried.
        timeout: Seconds to wait for one request.
        cache: ``True`` for the shared cache in ``$STRUCTIO_CACHE_DIR`` (default
            ``~/.cache/structio``), ``False`` for none, or a `ResponseCache`.
        backoff: Seconds before the first retry; doubled for each further retry.
        max_backoff: Longest wait between two attempts, ``Retry-After`` included.
        context_window: The model's input limit in tokens, for models litellm does not know
            (a local server); by default litellm's model map says.
        transport: ``"auto"`` (default: direct for OpenAI-compatible providers, litellm for
            the others), ``"direct"`` (force the httpx transport, e.g. for an
            OpenAI-compatible server behind an unusual model name with ``api_base=``) or
            ``"litellm"`` (force litellm, e.g. for its provider-specific parameter handling).
        **kwargs: Any other request parameter (``top_p``, ``n``, ``stop``,
            ``response_format``, ``tools``...), sent with every request, and the client
            settings: ``api_base``, ``api_key``, ``api_version`` (Azure), ``organization``,
            ``extra_headers``, ``extra_body``, ``proxy`` (direct: an httpx proxy URL; the
            ``HTTPS_PROXY`` environment variable is honoured too) and ``verify``.

    Raises:
        ConfigurationError: A setting is invalid (``api_base`` without ``http://`` or
            ``https://``, an unknown ``transport``...). A model string that names no
            provider litellm can tell (``"gpt4"``) is refused at the first request, which
            is where litellm decides it: no bare name it knows is refused before.
    """

    def __init__(
        self,
        model: str,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        num_retries: int = 3,
        timeout: float = 120.0,
        cache: bool | ResponseCache = True,
        backoff: float = 0.5,
        max_backoff: float = 60.0,
        context_window: int | None = None,
        transport: str = "auto",
        **kwargs: Any,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigurationError(f"LM(model) needs a litellm model string, not {model!r}")
        if num_retries < 0:
            raise ConfigurationError(f"num_retries must be 0 or more, not {num_retries}")
        for setting in ("api_base", "base_url"):
            # Refused now: without a scheme, every request fails the same way, retried.
            check_api_base(kwargs.get(setting), setting)
        super().__init__(model)
        self.num_retries = num_retries
        self.timeout = timeout
        self.cache = cache
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.context_window = context_window
        self.params: dict[str, Any] = dict(kwargs)
        if temperature is not None:
            self.params["temperature"] = temperature
        if max_tokens is not None:
            self.params["max_tokens"] = max_tokens
        #: The transport asked for: ``"auto"``, ``"direct"`` or ``"litellm"``.
        self.transport = transport
        self._bind_transport()

    def _bind_transport(self) -> None:
        """Choose the transport from the settings and take its functions."""
        self._route = _http.choose_transport(self.model, self.transport, self.params)
        module = _http if self._route == "direct" else _litellm
        self._send: _Send = module.send
        self._asend: _ASend = module.asend
        self._open_stream: _Stream = module.stream
        self._aopen_stream: _AStream = module.astream
        self._translate: _Translate = module.translate_error

    # -- pickling -------------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        """The settings to pickle: what `__init__` was given, and nothing of this process.

        The transport and the model's capabilities are chosen again where the LM is
        unpickled; the history stays here (`BaseLM`); a `ResponseCache` travels as its
        directory and options; httpx clients are per process and never held by the LM.
        An API key is in the settings only when it was given (``api_key=``): a key read
        from the environment is read there again, from the worker's environment.
        """
        state = super().__getstate__()
        for derived in _DERIVED:
            state.pop(derived, None)
        return state

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        """Restore a pickled LM and choose its transport in this process."""
        super().__setstate__(state)
        self._bind_transport()

    @property
    def resolved_transport(self) -> str:
        """The transport requests go through: ``"direct"`` (httpx) or ``"litellm"``."""
        return self._route

    @property
    def kwargs(self) -> dict[str, Any]:
        """The former name of `params`."""
        return self.params

    def __repr__(self) -> str:
        # The one secret rule: no key, token or auth header, in any spelling, is shown.
        extra = "".join(f", {k}={v!r}" for k, v in public_params(self.params).items())
        return f"LM({self.model!r}{extra})"

    # -- saving ---------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The LM's settings as JSON-ready data, without credentials."""
        return {
            "model": self.model,
            "num_retries": self.num_retries,
            "timeout": self.timeout,
            "backoff": self.backoff,
            "max_backoff": self.max_backoff,
            "context_window": self.context_window,
            "transport": self.transport,
            "cache": self.cache is not False,
            "kwargs": {k: jsonable(v) for k, v in public_params(self.params).items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, trust_endpoint: bool = False) -> LM:
        """The LM `to_dict` described; API keys come from the environment, as usual.

        Args:
            data: What `to_dict` wrote.
            trust_endpoint: Take endpoint settings (``api_base``, ``base_url``...) from the
                data. Off by default: an edited file could otherwise send the next request,
                and the API key from the environment, to any address.

        Raises:
            ConfigurationError: The data is malformed, or it sets an endpoint and
                ``trust_endpoint`` is False.
        """
        if not isinstance(data, Mapping) or not isinstance(data.get("model"), str):
            raise ConfigurationError(f"a saved LM is a dict with a 'model' string, not {data!r}")
        settings = dict(data)
        kwargs = dict(settings.pop("kwargs", {}) or {})
        model = settings.pop("model")
        check_endpoints(kwargs, what=f"the saved LM {model!r}", trusted=trust_endpoint)
        return cls(model, **settings, **kwargs)

    # -- capabilities ---------------------------------------------------------------------

    @functools.cached_property
    def _capabilities(self) -> dict[str, Any]:
        if self._route == "litellm":
            return dict(_litellm.model_capabilities(self.model))
        # Every OpenAI-compatible server takes {"type": "json_object"}; schema support and
        # the window come from litellm's map, read without importing litellm.
        info = model_info(self.model)
        return {
            "response_schema": bool(info and info.supports_response_schema),
            "json_mode": True,
            "max_input_tokens": info.max_input_tokens if info else None,
            "function_calling": bool(info and info.supports_function_calling),
            "reasoning": bool(info and info.supports_reasoning),
        }

    @property
    def supports_response_schema(self) -> bool:  # type: ignore[override]
        """Whether the model map says the model takes a JSON schema as ``response_format``."""
        return bool(self._capabilities["response_schema"])

    @property
    def supports_json_mode(self) -> bool:  # type: ignore[override]
        """Whether the model accepts ``{"type": "json_object"}`` (every direct one does)."""
        return bool(self._capabilities["json_mode"])

    @property
    def supports_function_calling(self) -> bool:  # type: ignore[override]
        """Whether the model map says the model takes ``tools=`` and answers with tool calls."""
        return bool(self._capabilities["function_calling"])

    @property
    def supports_reasoning(self) -> bool:  # type: ignore[override]
        """Whether the model map says the model reasons before it answers."""
        return bool(self._capabilities["reasoning"])

    @property
    def max_input_tokens(self) -> int | None:
        """The model's input limit: ``context_window=``, else litellm's model map, else None."""
        if self.context_window is not None:
            return self.context_window
        value = self._capabilities["max_input_tokens"]
        return int(value) if value else None

    # -- calls ----------------------------------------------------------------------------

    def load(self) -> None:
        """Import the transport's library and open its client now rather than in a call.

        Importing litellm takes seconds, httpx a fraction of one. Every call does this
        first (after the cache is read: a cached answer imports nothing), outside the time
        it measures, so the first call's latency is its request's. Call it early to know
        that the client loads (or to say so while it does).
        """
        if self._route == "litellm":
            _litellm.get_litellm()
        else:
            _http.load(self.params)

    def _loaded(self, start: float) -> float:
        """`load`, then ``start`` moved later by the time it took (no part of the call)."""
        before = time.perf_counter()
        self.load()
        return start + (time.perf_counter() - before)

    def request_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The LM's parameters updated by this call's ``params`` (``cache`` excluded)."""
        merged = {**self.params, **params}
        merged.pop("cache", None)
        return merged

    def _prepare(
        self, messages: list[dict[str, Any]], call_params: Mapping[str, Any]
    ) -> tuple[dict[str, Any], ResponseCache | None, str]:
        """The request parameters, the cache to use (or None) and the request's cache key."""
        params = self.request_params(call_params)
        cache = self._cache_for(call_params)
        key = cache_key(self.model, messages, params) if cache is not None else ""
        return params, cache, key

    def _cache_for(self, call_params: Mapping[str, Any]) -> ResponseCache | None:
        choice = call_params.get("cache", self.cache)
        if choice is False or choice is None:
            return None
        if isinstance(choice, ResponseCache):
            return choice
        return default_cache()

    def _complete(self, messages: list[dict[str, Any]], call_params: dict[str, Any]) -> LMResponse:
        start = time.perf_counter()
        params, cache, key = self._prepare(messages, call_params)
        if cache is not None:
            hit = cache.get(key)
            # A response without choices (cached before they were refused) is not an answer.
            if hit is not None and hit.completions:
                return hit.as_cache_hit(time.perf_counter() - start)
        start = self._loaded(start)
        # A call asked as a stream (``stream=True``) reads the stream whole.
        send = self._read_stream if params.get("stream") else self._send
        attempt = 0
        while True:
            attempt += 1
            try:
                # A response with no choices raises inside: it is retried like a 5xx.
                response = send(self.model, messages, params, self.timeout, start, attempt)
                break
            except Exception as exc:
                error = self._failure(exc, attempt, params)
                _sleep(self._delay(error, attempt))
        if cache is not None:
            cache.set(key, response)
        return response

    async def _acomplete(
        self, messages: list[dict[str, Any]], call_params: dict[str, Any]
    ) -> LMResponse:
        import asyncio  # imported here: asyncio costs ~25 ms at import structio

        start = time.perf_counter()
        params, cache, key = self._prepare(messages, call_params)
        if cache is not None:
            hit = await asyncio.to_thread(cache.get, key)
            if hit is not None and hit.completions:
                return hit.as_cache_hit(time.perf_counter() - start)
        start = self._loaded(start)
        asend = self._aread_stream if params.get("stream") else self._asend
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await asend(self.model, messages, params, self.timeout, start, attempt)
                break
            except Exception as exc:
                error = self._failure(exc, attempt, params)
                await asyncio.sleep(self._delay(error, attempt))
        if cache is not None:
            await asyncio.to_thread(cache.set, key, response)
        return response

    # -- streams --------------------------------------------------------------------------

    def _read_stream(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        timeout: float,
        start: float,
        attempt: int,
    ) -> LMResponse:
        """One streamed request read whole: its pieces, then the assembler of them all."""
        last = list(self._open_stream(model, messages, params, timeout))[-1]
        return cast(StreamAssembler, last).response(time.perf_counter() - start, attempt)

    async def _aread_stream(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        timeout: float,
        start: float,
        attempt: int,
    ) -> LMResponse:
        source = self._aopen_stream(model, messages, params, timeout)
        last = [item async for item in source][-1]
        return cast(StreamAssembler, last).response(time.perf_counter() - start, attempt)

    #
    # A failure before any text is retried as for a call; once text has been handed out it
    # is raised (a new attempt would write another answer after it). A stream that ends is
    # cached as the response a call would have cached; one that fails or is left is not.

    def _stream(
        self, messages: list[dict[str, Any]], call_params: dict[str, Any]
    ) -> Iterator[StreamItem]:
        start = time.perf_counter()
        params, cache, key = self._prepare(messages, call_params)
        if cache is not None:
            hit = cache.get(key)
            if hit is not None and hit.completions:
                yield from _replay(hit.text)
                yield hit.as_cache_hit(time.perf_counter() - start)
                return
        start = self._loaded(start)
        attempt = 0
        while True:
            attempt += 1
            source = self._open_stream(self.model, messages, params, self.timeout)
            given = False
            try:
                for item in source:
                    if isinstance(item, StreamAssembler):
                        response = item.response(time.perf_counter() - start, attempt)
                        break
                    given = True
                    yield item
                break
            except Exception as exc:
                error = self._failure(exc, attempt, params, retry=not given)
                _sleep(self._delay(error, attempt))
            finally:
                source.close()
        if cache is not None:
            cache.set(key, response)
        yield response

    async def _astream(
        self, messages: list[dict[str, Any]], call_params: dict[str, Any]
    ) -> AsyncIterator[StreamItem]:
        import asyncio

        start = time.perf_counter()
        params, cache, key = self._prepare(messages, call_params)
        if cache is not None:
            hit = await asyncio.to_thread(cache.get, key)
            if hit is not None and hit.completions:
                for piece in _replay(hit.text):
                    yield piece
                yield hit.as_cache_hit(time.perf_counter() - start)
                return
        start = self._loaded(start)
        attempt = 0
        while True:
            attempt += 1
            source = self._aopen_stream(self.model, messages, params, self.timeout)
            given = False
            try:
                async for item in source:
                    if isinstance(item, StreamAssembler):
                        response = item.response(time.perf_counter() - start, attempt)
                        break
                    given = True
                    yield item
                break
            except Exception as exc:
                error = self._failure(exc, attempt, params, retry=not given)
                await asyncio.sleep(self._delay(error, attempt))
            finally:
                await source.aclose()
        if cache is not None:
            await asyncio.to_thread(cache.set, key, response)
        yield response

    def _failure(
        self, exc: Exception, attempt: int, params: Mapping[str, Any], *, retry: bool = True
    ) -> LMError:
        """Translate ``exc``; raise it unless it is retryable and retries remain.

        The translated message has every credential of ``params`` (the request's settings)
        and of the environment redacted; ``exc`` stays its ``__cause__`` as it came.
        ``retry=False`` raises whatever the failure.
        """
        # A call may set its own retries (``lm(messages, num_retries=0)``).
        retries = params.get("num_retries", self.num_retries) if retry else 0
        if isinstance(exc, LMError):
            # Already structio's (a response with no choices): nothing to translate.
            if not isinstance(exc, _RETRYABLE) or attempt > retries:
                raise exc
            return exc
        # The environment too: litellm sends OPENAI_API_KEY and the like when no
        # api_key is set, and a provider may echo it. Read on failures only.
        secrets = secret_values(params, os.environ)
        key_given = bool(params.get("api_key") or params.get("azure_ad_token"))
        error = self._translate(exc, self.model, attempt, secrets=secrets, key_given=key_given)
        if error is None:
            raise exc
        if not isinstance(error, _RETRYABLE) or attempt > retries:
            raise error from exc
        return error

    def _delay(self, error: LMError, attempt: int) -> float:
        exponential = self.backoff * (2 ** (attempt - 1)) * (1 + random.random() / 4)  # noqa: S311
        wait = min(
            error.retry_after if error.retry_after is not None else exponential, self.max_backoff
        )
        # The error's text is already redacted (see _failure).
        logger().warning(
            "%s: %s: %s; retry %d in %.2f s", self.model, type(error).__name__, error, attempt, wait
        )
        return wait


def _replay(text: str) -> Iterator[str]:
    """A cached answer's text in pieces, as a stream would bring it."""
    for start in range(0, len(text), _REPLAY_PIECE):
        yield text[start : start + _REPLAY_PIECE]
