"""`LM`: any model, over HTTP directly or through litellm, with retries, a cache and history."""

from __future__ import annotations

import dataclasses
import functools
import os
import random
import time
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterator,
    Mapping,
)
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from structio._util.data import jsonable
from structio._util.log import logger
from structio._util.secrets import check_file_settings, public_params, secret_values
from structio.exceptions import (
    ConfigurationError,
    LMError,
)
from structio.lm import _litellm
from structio.lm._errors import RETRYABLE, check_api_base, redact_chain
from structio.lm._stream import StreamAssembler
from structio.lm.base import BaseLM
from structio.lm.cache import ResponseCache, cache_key, configured_cache
from structio.lm.client import ClientSettings
from structio.lm.flight import flights_for
from structio.lm.models import direct_profile
from structio.lm.params import checked_split, choose_api, take_rollout_id, warn_unsupported
from structio.lm.profile import ModelProfile, ProfileOverride, apply_override, check_override
from structio.lm.servers import refused_structure, served_by, server_for
from structio.lm.types import LMResponse, StreamItem, response_pieces

if TYPE_CHECKING:
    from structio.lm.transport import Transport

__all__ = ["LM"]

# The fields of a profile that price a response.
_PRICES = ("input_cost", "output_cost", "cached_input_cost", "cache_write_cost")

# One request of a transport, read whole: (model, messages, params, client, timeout, start,
# attempt) -> the response.
_Send = Callable[
    [str, list[dict[str, Any]], Mapping[str, Any], Mapping[str, Any], float, float, int],
    LMResponse,
]
_ASend = Callable[
    [str, list[dict[str, Any]], Mapping[str, Any], Mapping[str, Any], float, float, int],
    Awaitable[LMResponse],
]


class _Request(NamedTuple):
    """One call's request settings: what is sent, to where, and where its answer is kept."""

    params: dict[str, Any]
    client: ClientSettings
    cache: ResponseCache | None
    key: str


# A cached answer replayed as a stream comes in pieces of this many characters.
_REPLAY_PIECE = 64
# Attributes an LM derives from its settings in each process: never pickled.
_DERIVED = ("_route", "_transport", "_derived_profile", "_client_shown")


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
    OpenAI-compatible server (vLLM, llama.cpp, Ollama, LM Studio, TGI...). A local server
    named by the prefix (``hosted_vllm/``, ``ollama/``, ``lm_studio/``) or by ``server=``
    (``"vllm"``, ``"sglang"``, ``"llamacpp"``, ``"ollama"``, ``"lmstudio"``) is asked for
    decoding constrained to the signature in its own words (`structio.lm.servers`).

    Two transports carry the requests (see `transport`): **direct**, one pooled httpx
    client speaking the OpenAI chat API, for ``openai/...``, ``azure/...``, ``groq/...``,
    ``together_ai/...``, ``openrouter/...``, ``deepseek/...``, ``fireworks_ai/...``,
    ``xai/...``, ``hosted_vllm/...``, ``lm_studio/...`` and bare OpenAI names
    (``"gpt-4o-mini"``); and **litellm** for every other provider (``anthropic/...``,
    ``bedrock/...``, ``vertex_ai/...``...), imported only when that path is used. Both give
    the same responses, errors, cache, history, usage and cost (from litellm's map).

    Requests that fail with a rate limit, a timeout, a connection error, a 5xx or a
    response with no choices are retried up to ``num_retries`` times with exponential
    backoff (honouring ``Retry-After``); a 400 or an authentication error never is.

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
        timeout: Seconds one attempt of a request may take, all of it: connecting, the
            headers, the body or the whole stream (a call's ``timeout=`` overrides it).
        cache: ``True`` for the process's cache (`structio.configure_cache`'s, else the
            shared cache in ``$STRUCTIO_CACHE_DIR``, default ``~/.cache/structio``),
            ``False`` for none, or a `ResponseCache`.
        backoff: Seconds before the first retry; doubled for each further retry.
        max_backoff: Longest wait between two attempts, ``Retry-After`` included.
        context_window: The model's input limit in tokens, for models litellm does not know
            (a local server); by default litellm's model map says.
        transport: ``"auto"`` (default: direct for OpenAI-compatible providers, litellm for
            the others), ``"direct"`` (force the httpx transport, e.g. for an
            OpenAI-compatible server behind an unusual model name with ``api_base=``),
            ``"litellm"`` (force litellm, e.g. for its provider-specific parameter handling),
            the name of any other registered transport
            (`structio.lm.transport.register_transport`), or a `Transport` itself (such as a
            `structio.lm.MockTransport`; an LM holding one pickles only if it does).
        profile: What the model supports, for a model the map does not know (a local
            server) or knows wrongly: a `ModelProfile` replaces the derived `profile`
            whole, a dict changes only the fields it names (``{"json_schema": True}``).
            Saved by `to_dict`. By default litellm's model map (or litellm) says.
        **kwargs: Any other request parameter (``top_p``, ``n``, ``stop``,
            ``response_format``, ``tools``...), sent with every request and kept in
            `params`; and the client settings, sorted apart into `client` (see
            `structio.lm.client`): ``api_base``, ``api_key``, ``api_version`` (Azure),
            ``organization``, ``extra_headers``, ``extra_body``, ``proxy`` (direct: an httpx
            proxy URL; the ``HTTPS_PROXY`` environment variable is honoured too),
            ``verify``, litellm's own options (``custom_llm_provider``, ``mock_response``...)
            and every secret. A call's own keywords are sorted the same way:
            ``lm(messages, api_base=...)`` sends that request elsewhere, over the transport
            chosen here.

    Raises:
        ConfigurationError: A setting is invalid (``api_base`` without ``http://`` or
            ``https://``, an unknown ``transport``, ``max_retries=``, which is no LM
            setting: ``num_retries=`` retries failed requests, ``Predict(...,
            max_retries=)`` re-asks a model whose answer does not parse...). A model
            string that names no provider litellm can tell (``"gpt4"``) is refused at the
            first request, which is where litellm decides it: no bare name it knows is
            refused before.
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
        transport: str | Transport = "auto",
        profile: ProfileOverride | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigurationError(f"LM(model) needs a litellm model string, not {model!r}")
        if num_retries < 0:
            raise ConfigurationError(f"num_retries must be 0 or more, not {num_retries}")
        if "max_retries" in kwargs:
            raise ConfigurationError(
                f"LM(max_retries={kwargs['max_retries']!r}): an LM has no max_retries; pass "
                "num_retries= to LM to retry failed requests (rate limits, timeouts, 5xx), "
                "or max_retries= to Predict to re-ask a model whose answer does not parse"
            )
        # DSPy's choice of API (model_type), never a request field (OpenAI answers 400 to
        # one): it is the client setting api.
        choose_api(model, kwargs)
        server_for(model, kwargs.get("server"))  # an unknown server= refused now
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
        # The caller's word on what the model supports, over what the model map says.
        self._profile_override = check_override(profile)
        client, params = checked_split(kwargs, model)  # a typo (`temprature`) refused here
        #: The request parameters, sent with every request (a call's own go over them).
        self.params: dict[str, Any] = params
        if temperature is not None:
            self.params["temperature"] = temperature
        if max_tokens is not None:
            self.params["max_tokens"] = max_tokens
        #: The client settings: where and how requests go (read-only; never shown whole).
        self.client = ClientSettings(client)
        #: The transport asked for: ``"auto"``, a registered name, or a `Transport`.
        self.transport = transport
        self._bind_transport()

    def _bind_transport(self) -> None:
        """Choose the transport from the settings (`transport_for`)."""
        # The registry loads with the first LM, not with `import structio`.
        from structio.lm.transport import transport_for

        self._transport: Transport = transport_for(self.model, self.transport, self.client)
        self._route = self._transport.name
        api = self.client.get("api")
        if api is not None and self._route != "direct":
            raise ConfigurationError(
                f"LM({self.model!r}, api={api!r}): the {self._route!r} transport speaks its "
                "provider's own API; api= chooses among the APIs of the direct transport "
                "(OpenAI and compatible servers)"
            )

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
        """The name of the transport requests go through: ``"direct"`` (httpx), ``"litellm"``..."""
        return self._route

    @property
    def kwargs(self) -> dict[str, Any]:
        """`params` under DSPy's name (``dspy.LM.kwargs``), kept for DSPy code."""
        return self.params

    def copy(self, **changes: Any) -> LM:
        """A new LM of these settings with ``changes``, as DSPy's ``lm.copy(...)``.

        ``lm.copy(temperature=1.0, rollout_id=2)`` takes every keyword of `LM`; one given
        ``None`` is removed. The copy is checked as `LM` checks (`ConfigurationError`),
        shares the response cache, and has a history of its own.
        """
        settings: dict[str, Any] = {
            "num_retries": self.num_retries,
            "timeout": self.timeout,
            "cache": self.cache,
            "backoff": self.backoff,
            "max_backoff": self.max_backoff,
            "context_window": self.context_window,
            "transport": self.transport,
            "profile": self._profile_override,
            **self.client,
            **self.params,
        }
        model = changes.pop("model", self.model)
        settings.update(changes)
        return type(self)(model, **{k: v for k, v in settings.items() if v is not None})

    def __repr__(self) -> str:
        # The one secret rule: no key, token or auth header, in any spelling, is shown.
        shown = {**public_params(self.params), **self.client.public()}
        extra = "".join(f", {k}={v!r}" for k, v in shown.items())
        return f"LM({self.model!r}{extra})"

    # -- saving ---------------------------------------------------------------------------

    def dump_state(self) -> dict[str, Any]:
        """The LM's settings as data, without credentials: DSPy's name for `to_dict`."""
        return self.to_dict()

    def to_dict(self) -> dict[str, Any]:
        """The LM's settings as JSON-ready data, without credentials.

        The request parameters are saved under ``"params"``, the client settings (without
        credentials) under ``"client"``; a `Transport` given as an object is saved as its
        name, which must be registered where the data is loaded.
        """
        return {
            "model": self.model,
            "num_retries": self.num_retries,
            "timeout": self.timeout,
            "backoff": self.backoff,
            "max_backoff": self.max_backoff,
            "context_window": self.context_window,
            "transport": self.transport if isinstance(self.transport, str) else self._route,
            **self._saved_profile(),
            "cache": self.cache is not False,
            "params": {k: jsonable(v) for k, v in public_params(self.params).items()},
            "client": {k: jsonable(v) for k, v in self.client.public().items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, trust_endpoint: bool = False) -> LM:
        """The LM `to_dict` described; API keys come from the environment, as usual.

        Args:
            data: What `to_dict` wrote (or wrote before the client settings were kept
                apart: one ``"kwargs"`` dict of both, sorted here as `LM` sorts them).
            trust_endpoint: Take every setting from the data. Off by default: the data may
                then set only what `structio._util.secrets.FILE_SETTINGS` lists (sampling,
                length and format parameters; retries, time limits and ``n`` within
                bounds), as an edited file could otherwise send the next request, and the
                API key from the environment, to any address (``api_base``,
                ``aws_bedrock_runtime_endpoint``...), as another account (``api_key``), to
                be stored by the provider, or with no end to its retries and time.

        Raises:
            ConfigurationError: The data is malformed, or it sets something beyond
                `FILE_SETTINGS` (or out of its bounds) and ``trust_endpoint`` is False.
        """
        if not isinstance(data, Mapping) or not isinstance(data.get("model"), str):
            raise ConfigurationError(f"a saved LM is a dict with a 'model' string, not {data!r}")
        settings = dict(data)
        kwargs: dict[str, Any] = {}
        for part in ("kwargs", "params", "client"):  # "kwargs": the format before the two
            saved = settings.pop(part, None) or {}
            if not isinstance(saved, Mapping):
                raise ConfigurationError(f"a saved LM's {part!r} is a dict, not {saved!r}")
            kwargs.update(saved)
        # An old file's max_retries was never sent (both transports dropped it): dropped.
        kwargs.pop("max_retries", None)
        model = settings.pop("model")
        check_file_settings(
            {**settings, **kwargs}, what=f"the saved LM {model!r}", trusted=trust_endpoint
        )
        return cls(model, **settings, **kwargs)

    # -- capabilities ---------------------------------------------------------------------

    @functools.cached_property
    def _derived_profile(self) -> ModelProfile:
        """The map's (or litellm's) profile of the model with ``profile=`` over it."""
        if self.resolved_transport == "litellm":
            base = _litellm.model_capabilities(self.model)
        else:
            # Read from litellm's map without importing litellm; every OpenAI-compatible
            # server takes {"type": "json_object"} and reports usage in streams.
            base = direct_profile(self.model)
        base = served_by(base, server_for(self.model, self.client.get("server")))
        return apply_override(base, self.__dict__.get("_profile_override"))

    @property
    def profile(self) -> ModelProfile:
        """What the model supports, as the transport serves it (see `ModelProfile`).

        Derived from litellm's model map (on the litellm transport, from litellm's own
        answers), then ``profile=``: a `ModelProfile` replaces it, a dict changes the
        fields it names; ``context_window=`` overrides the window last.
        """
        found = self._derived_profile
        window = self.context_window
        if window is not None and window != found.context_window:
            return found.replace(context_window=window)
        return found

    def _saved_profile(self) -> dict[str, Any]:
        """``{"profile": ...}`` for `to_dict` when ``profile=`` was given, else nothing.

        A whole `ModelProfile` is saved with every field, which loads as a dict that
        changes every field: the same profile.
        """
        override = self.__dict__.get("_profile_override")
        if override is None:
            return {}
        if isinstance(override, ModelProfile):
            return {"profile": override.to_dict()}
        return {"profile": {k: jsonable(v) for k, v in override.items()}}

    # -- calls ----------------------------------------------------------------------------

    def load(self) -> None:
        """Import the transport's library and open its client now rather than in a call.

        Importing litellm takes seconds, httpx a fraction of one. Every call does this
        first (after the cache is read: a cached answer imports nothing), outside the time
        it measures, so the first call's latency is its request's. Call it early to know
        that the client loads (or to say so while it does).
        """
        self._transport.load(self.client)

    def _loaded(self, start: float, client: ClientSettings) -> float:
        """The transport loaded, then ``start`` moved later by the time it took."""
        before = time.perf_counter()
        self._transport.load(client)
        return start + (time.perf_counter() - before)

    def request_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Everything a call with ``params`` sends, ``cache`` excluded, as one dict.

        The LM's client settings and request parameters, with the call's over them: what
        the call's history entry shows (credentials removed) and its credentials are
        redacted by. A transport gets the two apart (`_prepare`).
        """
        merged = self.client.as_dict()
        merged.update(self.params)
        merged.update(params)
        merged.pop("cache", None)
        return merged

    def _history_params(self, params: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """`BaseLM._history_params`, with the client settings' part kept between calls.

        ``lm.client`` is read-only: what it shows and the credentials in it (its address
        parsed, its headers scanned) are the same for every call, kept until ``lm.client``
        is another object. When a call's settings or ``lm.params`` name a client setting,
        the whole merge is made again, as `request_params` makes it.
        """
        client = self.client
        names = client.keys()
        if not (names.isdisjoint(self.params) and names.isdisjoint(params)):
            return super()._history_params(params)
        kept = self.__dict__.get("_client_shown")
        if kept is None or kept[0] is not client:
            kept = (client, public_params(client), secret_values(client))
            self.__dict__["_client_shown"] = kept
        rest = {**self.params, **params}
        rest.pop("cache", None)
        shown = {**kept[1], **public_params(rest)} if rest else dict(kept[1])
        found = secret_values(rest) if rest else []
        if not found:
            return shown, kept[2]
        return shown, sorted({*kept[2], *found}, key=lambda text: (-len(text), text))

    def _prepare(self, messages: list[dict[str, Any]], call_params: Mapping[str, Any]) -> _Request:
        """The request parameters, client settings, cache (or None) and cache key."""
        call_client, call = checked_split(call_params, self.model, call=True)
        params = {**self.params, **call}
        params.pop("cache", None)
        rollout = take_rollout_id(self, params)  # keyed, never sent
        warn_unsupported(self, params)  # once per name, before any request
        client = self.client.updated(call_client)
        cache = self._cache_for(call_params)
        # The client settings are keyed too: another api_base is another server, whose
        # answers are its own (credentials are never in a key: see cache_key).
        key = (
            cache_key(self.model, messages, {**client.as_dict(), **params, **rollout})
            if cache is not None
            else ""
        )
        return _Request(params, client, cache, key)

    def _cache_for(self, call_params: Mapping[str, Any]) -> ResponseCache | None:
        choice = call_params.get("cache", self.cache)
        if choice is False or choice is None:
            return None
        if isinstance(choice, ResponseCache):
            return choice
        return configured_cache()  # `configure_cache`'s, else the default one

    def _streamed(self, params: dict[str, Any]) -> dict[str, Any]:
        """A stream's parameters: usage asked for at its end when the profile says it can be.

        Decided here, from `profile`, for every transport: a server that refuses
        ``stream_options`` is told apart with ``profile={"stream_usage": False}``.
        """
        if "stream_options" in params or not self.profile.stream_usage:
            return params
        return {**params, "stream_options": {"include_usage": True}}

    def _priced(self, response: LMResponse) -> LMResponse:
        """``response`` priced at the prices ``profile=`` set, when it set any."""
        override = self.__dict__.get("_profile_override")
        if not override or response.cached:
            return response
        names = override.to_dict() if isinstance(override, ModelProfile) else override
        if not any(name in names for name in _PRICES):
            return response
        return dataclasses.replace(response, cost=self.profile.cost(response.usage))

    # Identical requests in flight at once in this process are made once (`flight`), when
    # the cache is on: the key is the cache key, and what the leader pays for is what the
    # cache would have served the others a moment later. The waiters get it as a cache hit
    # (no tokens, no cost of their own). Streams are not merged: each streamed call reads
    # its own request as it is written (a stream's answer is still cached at its end).

    def _complete(self, messages: list[dict[str, Any]], call_params: dict[str, Any]) -> LMResponse:
        start = time.perf_counter()
        request = self._prepare(messages, call_params)
        cache, key = request.cache, request.key
        if cache is None:
            return self._send(messages, request, start)
        hit = cache.get(key)
        # A response without choices (cached before they were refused) is not an answer.
        if hit is not None and hit.completions:
            return hit.as_cache_hit(time.perf_counter() - start)

        def lead() -> LMResponse:
            # Another call may have stored the answer between this call's miss and its lead.
            again = cache.get(key)
            if again is not None and again.completions:
                return again.as_cache_hit(time.perf_counter() - start)
            response = self._send(messages, request, start)
            _store(cache, key, response)
            return response

        response, led = flights_for(cache).run(key, lead)
        return response if led else response.as_cache_hit(time.perf_counter() - start)

    def _send(self, messages: list[dict[str, Any]], request: _Request, start: float) -> LMResponse:
        """The request made (retried as `num_retries` says) and priced; not cached here."""
        params, client = request.params, request.client
        start = self._loaded(start, client)
        # A call asked as a stream (``stream=True``) reads the stream whole.
        send: _Send = self._read_stream if params.get("stream") else self._transport.send
        timeout = self._timeout(params)
        attempt = 0
        while True:
            attempt += 1
            try:
                # A response with no choices raises inside: it is retried like a 5xx.
                response = send(self.model, messages, params, client, timeout, start, attempt)
                break
            except Exception as exc:
                error = self._failure(exc, attempt, params, client)
                _sleep(self._delay(error, attempt))
        return self._priced(response)

    async def _acomplete(
        self, messages: list[dict[str, Any]], call_params: dict[str, Any]
    ) -> LMResponse:
        import asyncio  # imported here: asyncio costs ~25 ms at import structio

        start = time.perf_counter()
        request = self._prepare(messages, call_params)
        cache, key = request.cache, request.key
        if cache is None:
            return await self._asend(messages, request, start)
        hit = await asyncio.to_thread(cache.get, key)
        if hit is not None and hit.completions:
            return hit.as_cache_hit(time.perf_counter() - start)

        async def lead() -> LMResponse:
            again = await asyncio.to_thread(cache.get, key)
            if again is not None and again.completions:
                return again.as_cache_hit(time.perf_counter() - start)
            response = await self._asend(messages, request, start)
            await asyncio.to_thread(_store, cache, key, response)
            return response

        response, led = await flights_for(cache).arun(key, lead)
        return response if led else response.as_cache_hit(time.perf_counter() - start)

    async def _asend(
        self, messages: list[dict[str, Any]], request: _Request, start: float
    ) -> LMResponse:
        """Async form of `_send`."""
        import asyncio

        params, client = request.params, request.client
        start = self._loaded(start, client)
        asend: _ASend = self._aread_stream if params.get("stream") else self._transport.asend
        timeout = self._timeout(params)
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await asend(
                    self.model, messages, params, client, timeout, start, attempt
                )
                break
            except Exception as exc:
                error = self._failure(exc, attempt, params, client)
                await asyncio.sleep(self._delay(error, attempt))
        return self._priced(response)

    # -- streams --------------------------------------------------------------------------

    def _read_stream(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        timeout: float,
        start: float,
        attempt: int,
    ) -> LMResponse:
        """One streamed request read whole: its pieces, then the assembler of them all."""
        source = self._transport.stream(
            model, messages, self._streamed(dict(params)), client, timeout, attempt
        )
        last = list(source)[-1]
        return cast(StreamAssembler, last).response(time.perf_counter() - start, attempt)

    async def _aread_stream(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        timeout: float,
        start: float,
        attempt: int,
    ) -> LMResponse:
        source = self._transport.astream(
            model, messages, self._streamed(dict(params)), client, timeout, attempt
        )
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
        params, client, cache, key = self._prepare(messages, call_params)
        if cache is not None:
            hit = cache.get(key)
            if hit is not None and hit.completions:
                replayed = hit.as_cache_hit(time.perf_counter() - start)
                yield from response_pieces(replayed, _replay(hit.text))
                return
        start = self._loaded(start, client)
        timeout = self._timeout(params)
        attempt = 0
        while True:
            attempt += 1
            source = self._transport.stream(
                self.model, messages, self._streamed(params), client, timeout, attempt
            )
            given = False
            try:
                for item in source:
                    if isinstance(item, StreamAssembler):
                        response = self._priced(item.response(time.perf_counter() - start, attempt))
                        break
                    given = True
                    yield item
                break
            except Exception as exc:
                error = self._failure(exc, attempt, params, client, retry=not given)
                _sleep(self._delay(error, attempt))
            finally:
                source.close()
        if cache is not None:
            _store(cache, key, response)
        yield response

    async def _astream(
        self, messages: list[dict[str, Any]], call_params: dict[str, Any]
    ) -> AsyncIterator[StreamItem]:
        import asyncio

        start = time.perf_counter()
        params, client, cache, key = self._prepare(messages, call_params)
        if cache is not None:
            hit = await asyncio.to_thread(cache.get, key)
            if hit is not None and hit.completions:
                replayed = hit.as_cache_hit(time.perf_counter() - start)
                for piece in response_pieces(replayed, _replay(hit.text)):
                    yield piece
                return
        start = self._loaded(start, client)
        timeout = self._timeout(params)
        attempt = 0
        while True:
            attempt += 1
            source = self._transport.astream(
                self.model, messages, self._streamed(params), client, timeout, attempt
            )
            given = False
            try:
                async for item in source:
                    if isinstance(item, StreamAssembler):
                        response = self._priced(item.response(time.perf_counter() - start, attempt))
                        break
                    given = True
                    yield item
                break
            except Exception as exc:
                error = self._failure(exc, attempt, params, client, retry=not given)
                await asyncio.sleep(self._delay(error, attempt))
            finally:
                await source.aclose()
        if cache is not None:
            await asyncio.to_thread(_store, cache, key, response)
        yield response

    def _failure(
        self,
        exc: Exception,
        attempt: int,
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        *,
        retry: bool = True,
    ) -> LMError:
        """Translate ``exc``; raise it unless it is retryable and retries remain.

        The translated message has every credential of the request's settings (``params``
        and ``client``) and of the environment redacted; ``exc`` stays its ``__cause__``,
        its text redacted the same way (`redact_chain`). ``retry=False`` raises whatever
        the failure.
        """
        # A call may set its own retries (``lm(messages, num_retries=0)``).
        retries = params.get("num_retries", self.num_retries) if retry else 0
        if isinstance(exc, LMError):
            # Already structio's (a response with no choices): nothing to translate.
            if not isinstance(exc, RETRYABLE) or attempt > retries:
                raise exc
            return exc
        # The environment too: litellm sends OPENAI_API_KEY and the like when no
        # api_key is set, and a provider may echo it. Read on failures only.
        secrets = secret_values(params, client, os.environ)
        key_given = bool(client.get("api_key") or client.get("azure_ad_token"))
        error = self._transport.translate_error(
            exc, self.model, attempt, secrets=secrets, key_given=key_given
        )
        if error is None:
            raise exc
        error = refused_structure(error, params)  # asked again, it would fail again
        if not isinstance(error, RETRYABLE) or attempt > retries:
            # What a traceback prints of the cause is redacted too (see redact_chain).
            redact_chain(exc, secrets)
            raise error from exc
        return error

    def _timeout(self, params: Mapping[str, Any]) -> float:
        """The seconds each attempt of a request may take: the call's ``timeout=``, or the LM's."""
        given = params.get("timeout")
        return float(given) if isinstance(given, (int, float)) and given > 0 else self.timeout

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


def _store(cache: ResponseCache, key: str, response: LMResponse) -> None:
    """Cache a paid answer; a cache that fails is logged, never the call's failure.

    `ResponseCache.set` already logs a disk that cannot be written and goes on; this is
    for the rest (a file that turned out not to be a cache, a cache of another kind): the
    answer was paid for, so it is returned whatever becomes of its copy.
    """
    try:
        cache.set(key, response)
    except Exception:
        logger().warning(
            "the response cache %r could not keep an answer; the call goes on without it",
            cache,
            exc_info=True,
        )


def _replay(text: str) -> Iterator[str]:
    """A cached answer's text in pieces, as a stream would bring it."""
    for start in range(0, len(text), _REPLAY_PIECE):
        yield text[start : start + _REPLAY_PIECE]
