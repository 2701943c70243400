"""What the litellm transport's requests may not do: follow a redirect, or read without bound.

For an OpenAI model (``openai/...``, a bare OpenAI name, ``custom_openai/...``) litellm
sends the request through the OpenAI SDK, over an httpx client it makes itself with
``follow_redirects=True`` and reads whole. So a server that answered 307 or 308 had the
prompt sent on to whatever host its ``Location`` named (the SDK drops the key header
there, never the body), and a gzip bomb or an endless body was read into memory. The
direct transport does neither (`structio.lm._http`), and neither does this one now.

litellm takes the SDK client of one call as its ``client=`` argument and uses it as it
is: `client_args` makes one over a pooled httpx client of structio's own (pooled with
the direct transport's, `structio.lm._pool.client`), so litellm's shared clients, and
every other user of litellm or httpx in the process, are left as they are. That client
follows no redirect, and its one response hook (`_guard`) refuses one outright and puts
a bounded reader under every body: gzip and deflate are undone here, at most `_PIECE`
bytes at a time (never a whole network read's worth at once), and the decompressed
bytes are counted against `structio.lm._exchange.MAX_RESPONSE_BYTES`, for a body and for a
whole stream alike. Each refusal is a `structio.lm._http.HTTPStatusError`, raised under
whatever the SDK and litellm wrap it in; `refusal` finds it there.

Most other providers' requests go through litellm's own HTTP handler (``HTTPHandler``,
``AsyncHTTPHandler``, over httpx clients that follow redirects and read whole), and for
the providers of `_HANDLER_PROVIDERS` litellm takes the handler of one call as its
``client=`` argument, called, streamed, sync and async (litellm 1.83 on): `client_args`
gives it one over the same guarded httpx client (`_handler`). Any other provider's
requests are sent as litellm sends them.

This module imports httpx: `structio.lm._litellm` imports it when litellm is used (litellm
has imported httpx by then), never at ``import structio``.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, cast

import httpx

from structio.exceptions import LMError, ServerError
from structio.lm import _exchange, _http, _pool
from structio.lm._errors import body_detail, exception_chain, lm_error, redirect_detail

__all__ = [
    "Resolvers",
    "aclient_args",
    "causes",
    "client_args",
    "keep_repeats",
    "refusal",
    "refused_error",
]


class Resolvers(NamedTuple):
    """How litellm's OpenAI route resolves a request, as `structio.lm._litellm` reads it.

    Attributes:
        credentials: ``get_openai_credentials(api_base=, api_key=, organization=)``: the
            arguments, then litellm's settings, then the environment (``OPENAI_API_KEY``,
            ``OPENAI_BASE_URL``...), as litellm resolves them for its own client.
        tls: ``get_ssl_configuration()``: what litellm's own client verifies with
            (``litellm.ssl_verify``, ``SSL_CERT_FILE``...).
        handlers: litellm's ``http_handler`` module: its ``HTTPHandler`` and
            ``AsyncHTTPHandler``, subclassed by `_handler` and `_async_handler`.
    """

    credentials: Callable[..., Any]
    tls: Callable[[], Any]
    handlers: Any


# The providers litellm sends through the OpenAI SDK with the ``client=`` it is given (in
# every litellm from 1.83 on: its ``openai`` / ``custom_openai`` chat route).
_SDK_PROVIDERS = frozenset({"openai", "custom_openai"})

# The providers litellm sends through its own HTTP handler with the ``client=`` it is given,
# an ``HTTPHandler`` or ``AsyncHTTPHandler``, for every request of a call, streamed or not
# (read in litellm 1.83 and 1.110, and tested against a loopback server for each). Left
# out: ``cohere`` (litellm passes it no client), ``openrouter`` (none in 1.83), ``groq``
# (untested: its loopback answer fails as it is), ``vertex_ai`` (Google's credentials) and
# the rest, not checked; a provider handed a client it does not take would fail outright.
_HANDLER_PROVIDERS = frozenset(
    {"anthropic", "gemini", "mistral", "deepseek", "xai", "fireworks_ai"}
)

#: The most decompressed bytes made at once from a compressed body: a gzip bomb expands
#: about a thousandfold, so one 64 KiB network read could otherwise be 64 MiB at once.
_PIECE = 64 * 1024

# The encodings undone here; any other (brotli, zstd, several at once) is undone by
# httpx's own decoders, still counted piece by piece.
_ZLIB = frozenset({"gzip", "x-gzip", "deflate"})


def client_args(
    litellm: Any, resolvers: Resolvers | None, args: Mapping[str, Any]
) -> dict[str, Any]:
    """What litellm is to send ``args`` with besides them: ``client``, guarded.

    A guarded SDK client for an OpenAI model, a handler of litellm's over a guarded httpx
    client for a provider of `_HANDLER_PROVIDERS`. Empty where litellm would not use one
    (another provider), where it is not structio's to choose (a ``client`` in ``args``, a
    ``litellm.client_session`` set by the program, for OpenAI), and where no OpenAI API key
    is set (litellm then fails as it always has, before any request).
    ``resolvers`` are litellm's own (see `Resolvers`; None: a litellm without them).
    """
    if resolvers is not None and _handled(litellm, args):
        verify = resolvers.tls()
        http = _pool.client(("litellm", verify), lambda: _new_client(verify))
        return {"client": _handler(resolvers.handlers.HTTPHandler, http, _timeout(litellm, args))}
    route = _route(litellm, resolvers, args, litellm.client_session)
    if route is None:
        return {}
    import openai

    base, key, organization, verify = route
    http = _pool.client(("litellm", verify), lambda: _new_client(verify))
    # The SDK's types name httpx2's clients; it takes httpx's too, as litellm gives it.
    sdk = openai.OpenAI(
        api_key=key,
        base_url=base,
        organization=organization,
        http_client=cast(Any, http),
        max_retries=0,
    )
    return {"client": sdk}


async def aclient_args(
    litellm: Any, resolvers: Resolvers | None, args: Mapping[str, Any]
) -> dict[str, Any]:
    """Async form of `client_args` (its httpx client belongs to the running event loop)."""
    if resolvers is not None and _handled(litellm, args):
        verify = resolvers.tls()
        http = await _pool.aclient(("litellm", verify), lambda: _new_async_client(verify))
        handler = resolvers.handlers.AsyncHTTPHandler
        return {"client": _async_handler(handler, http, verify, _timeout(litellm, args))}
    route = _route(litellm, resolvers, args, litellm.aclient_session)
    if route is None:
        return {}
    import openai

    base, key, organization, verify = route
    http = await _pool.aclient(("litellm", verify), lambda: _new_async_client(verify))
    sdk = openai.AsyncOpenAI(
        api_key=key,
        base_url=base,
        organization=organization,
        http_client=cast(Any, http),
        max_retries=0,
    )
    return {"client": sdk}


def _route(
    litellm: Any, resolvers: Resolvers | None, args: Mapping[str, Any], session: Any
) -> tuple[str, str, Any, Any] | None:
    """Where litellm's OpenAI route would send ``args``: (base URL, key, organization, TLS)."""
    if resolvers is None or args.get("client") is not None or session is not None:
        return None
    base = args.get("api_base") or args.get("base_url")
    try:
        _, provider, key, found_base = litellm.get_llm_provider(
            model=str(args.get("model")),
            custom_llm_provider=args.get("custom_llm_provider"),
            api_base=base,
            api_key=args.get("api_key"),
        )
        if provider not in _SDK_PROVIDERS:
            return None
        found = resolvers.credentials(
            api_base=found_base or base,
            api_key=args.get("api_key") or key,
            organization=args.get("organization"),
        )
        verify = resolvers.tls()
    except Exception:  # a model litellm cannot route: litellm says so itself
        return None
    if not found.api_key:
        return None
    return str(found.api_base), str(found.api_key), found.organization, verify


def _handled(litellm: Any, args: Mapping[str, Any]) -> bool:
    """Whether ``args`` go through litellm's HTTP handler with a ``client`` of structio's."""
    if args.get("client") is not None:
        return False
    try:
        _, provider, _, _ = litellm.get_llm_provider(
            model=str(args.get("model")),
            custom_llm_provider=args.get("custom_llm_provider"),
            api_base=args.get("api_base") or args.get("base_url"),
            api_key=args.get("api_key"),
        )
    except Exception:  # a model litellm cannot route: litellm says so itself
        return False
    return provider in _HANDLER_PROVIDERS


def _timeout(litellm: Any, args: Mapping[str, Any]) -> Any:
    """The call's timeout, for requests litellm sends with none (it gives its client one)."""
    return args.get("timeout") or litellm.request_timeout


def _handler(base: Any, http: httpx.Client, call_timeout: Any) -> Any:
    """A handler of litellm's, ``HTTPHandler``, over ``http``: a guarded client, the pool's."""

    class Handler(base):  # type: ignore[misc]
        """One call's handler: a request sent with no timeout gets the call's.

        litellm's own handler has a client of the call's timeout; this one shares a
        pooled client, whose timeout (httpx's five seconds) is no call's.
        """

        def post(self, url: str, *, timeout: Any = None, **options: Any) -> Any:
            # litellm names every argument but the URL (1.83 and on).
            chosen = call_timeout if timeout is None else timeout
            return super().post(url, timeout=chosen, **options)

        def close(self) -> None:
            """Nothing: the client is the pool's (litellm 1.83 closes it when this goes)."""

    return Handler(client=http, timeout=call_timeout)


def _async_handler(base: Any, http: httpx.AsyncClient, verify: Any, timeout: Any) -> Any:
    """A handler of litellm's, ``AsyncHTTPHandler``, over ``http``: a guarded client, the pool's.

    A request with no timeout gets the handler's, the call's. litellm retries a request
    that failed to connect over a client of the handler's making, and closes it after:
    that one is a new guarded client.
    """

    class Handler(base):  # type: ignore[misc]
        """One call's handler over ``http``."""

        def create_client(self, *_: Any, **__: Any) -> httpx.AsyncClient:
            # The first (made by __init__) is replaced below by the pooled one at once.
            return _new_async_client(verify) if made else http

        async def close(self) -> None:
            """Nothing: the client is the pool's (litellm 1.83 closes it when this goes)."""

    made = False
    handler = Handler(timeout=timeout)
    made = True
    # The setter where litellm has one (newer than 1.83): not the handler's own, so never closed.
    handler.client = http
    return handler


def _new_client(verify: Any) -> httpx.Client:
    return httpx.Client(limits=_pool._limits(), verify=verify, event_hooks={"response": [_guard]})


def _new_async_client(verify: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        limits=_pool._limits(), verify=verify, event_hooks={"response": [_aguard]}
    )


# -- the response hook ------------------------------------------------------------------------


def _guard(response: httpx.Response) -> None:
    """Refuse a redirect; read the body through `_Bounded` (httpx calls this before reading).

    A hook sees every response before httpx follows it or reads its body, whatever the
    request asked for: a redirect is refused here even where a request said to follow it.
    """
    if response.has_redirect_location:
        raise _redirect(response)
    response.stream = _Bounded(cast(httpx.SyncByteStream, response.stream), response)
    _decoded_here(response)


async def _aguard(response: httpx.Response) -> None:
    """Async form of `_guard`."""
    if response.has_redirect_location:
        raise _redirect(response)
    response.stream = _AsyncBounded(cast(httpx.AsyncByteStream, response.stream), response)
    _decoded_here(response)


def _redirect(response: httpx.Response) -> _http.HTTPStatusError:
    headers = dict(response.headers)
    # A relative Location is shown where it points.
    headers["location"] = str(response.request.url.join(response.headers["location"]))
    return _http.HTTPStatusError(
        response.status_code, redirect_detail(response.status_code, headers), headers
    )


def _decoded_here(response: httpx.Response) -> None:
    """The body is decoded by `_Bounded`: httpx is to pass it on as it is."""
    for name in ("content-encoding", "content-length"):
        if name in response.headers:
            del response.headers[name]


class _Counter:
    """The decompressed bytes of one response, counted against `MAX_RESPONSE_BYTES`."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        # As sent: the response's own headers say "no encoding" once this reads the body.
        self.headers = httpx.Headers(response.headers)
        self.size = 0
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        self.encoding = encoding or "identity"
        self.inflater = _Inflater(self.encoding) if self.encoding in _ZLIB else None

    def count(self, piece: bytes) -> bytes:
        self.size += len(piece)
        # Read at each piece: tests lower the bound on the direct transport's module.
        if self.size > _exchange.MAX_RESPONSE_BYTES:
            raise _exchange._too_large(self.response)
        return piece

    def pieces(self, raw: bytes) -> Iterator[bytes]:
        """The decompressed pieces of one raw piece (a zlib body's; identity as it is)."""
        if self.inflater is None:
            if raw:
                yield self.count(raw)
            return
        for piece in self.inflater.feed(raw):
            yield self.count(piece)

    def rest(self) -> Iterator[bytes]:
        """What is left once the raw body has ended."""
        if self.inflater is not None:
            for piece in self.inflater.end():
                yield self.count(piece)


def _decoded(counter: _Counter, stream: httpx.SyncByteStream | httpx.AsyncByteStream) -> Any:
    """A response over ``stream`` that httpx decodes itself (an encoding not undone here)."""
    return httpx.Response(
        counter.response.status_code,
        headers=counter.headers,
        stream=stream,
        request=counter.response.request,
    )


class _Inflater:
    """gzip or deflate undone in pieces of at most `_PIECE` bytes (zlib's ``max_length``).

    A gzip or zlib header is read as it comes (``wbits`` 32+); a deflate body without
    one (as some servers send it, and httpx accepts) is read raw.
    """

    def __init__(self, encoding: str) -> None:
        self.raw_allowed = encoding == "deflate"
        self.zlib = zlib.decompressobj(zlib.MAX_WBITS | 32)
        self.started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        while True:
            try:
                piece = self.zlib.decompress(data, _PIECE)
            except zlib.error as exc:
                if self.raw_allowed and not self.started:
                    self.raw_allowed = False
                    self.zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise _corrupt(exc) from None
            self.started = True
            if piece:
                yield piece
            data = self.zlib.unconsumed_tail
            # Output left inside zlib once the input is taken: asked for again.
            if not data and len(piece) < _PIECE:
                return

    def end(self) -> Iterator[bytes]:
        yield from self.feed(b"")
        try:
            rest = self.zlib.flush()
        except zlib.error as exc:
            raise _corrupt(exc) from None
        if rest:
            yield rest


def _corrupt(exc: zlib.error) -> _http.HTTPStatusError:
    return _http.HTTPStatusError(None, f"the response's compressed body is corrupt ({exc})", {})


class _Bounded(httpx.SyncByteStream):
    """A response body decoded here and counted."""

    def __init__(self, stream: httpx.SyncByteStream, response: httpx.Response) -> None:
        self.stream = stream
        self.counter = _Counter(response)

    def __iter__(self) -> Iterator[bytes]:
        counter = self.counter
        if counter.inflater is None and counter.encoding != "identity":
            for piece in _decoded(counter, self.stream).iter_bytes():
                yield counter.count(piece)
            return
        for raw in self.stream:
            yield from counter.pieces(raw)
        yield from counter.rest()

    def close(self) -> None:
        self.stream.close()


class _AsyncBounded(httpx.AsyncByteStream):
    """Async form of `_Bounded`."""

    def __init__(self, stream: httpx.AsyncByteStream, response: httpx.Response) -> None:
        self.stream = stream
        self.counter = _Counter(response)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        counter = self.counter
        if counter.inflater is None and counter.encoding != "identity":
            async for piece in _decoded(counter, self.stream).aiter_bytes():
                yield counter.count(piece)
            return
        async for raw in self.stream:
            for piece in counter.pieces(raw):
                yield piece
        for piece in counter.rest():
            yield piece

    async def aclose(self) -> None:
        await self.stream.aclose()


def refused_error(
    exc: BaseException,
    model: str,
    provider: str | None,
    attempts: int,
    secrets: Sequence[str],
) -> LMError | None:
    """The `ServerError` of a refusal behind ``exc`` (see `refusal`), as the direct transport's.

    None when ``exc`` is no refusal of the guard.
    """
    refused = refusal(exc)
    if refused is None:
        return None
    detail, _ = body_detail(refused.text, refused.status)
    return lm_error(
        ServerError,
        model=model,
        provider=provider,
        attempts=attempts,
        detail=detail,
        status=refused.status,
        secrets=secrets,
    )


def refusal(exc: BaseException) -> _http.HTTPStatusError | None:
    """The guard's refusal (a redirect, a body past the bound) behind ``exc``, if any.

    Looked for in the causes, and in the ``original_exception`` litellm keeps of an
    exception it wraps.
    """
    for cause in causes(exc):
        if isinstance(cause, _http.HTTPStatusError):
            return cause
    return None


def causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and its causes, with the ``original_exception`` litellm keeps of a wrapped one."""
    seen = exception_chain(exc)
    for cause in list(seen):
        original = getattr(cause, "original_exception", None)
        if isinstance(original, BaseException):
            seen.extend(c for c in exception_chain(original) if all(c is not s for s in seen))
    return seen


def keep_repeats(raw: Any) -> None:
    """Read a litellm stream whole however often a chunk repeats (this stream only).

    litellm takes a stream whose last ``litellm.REPEATED_STREAMING_CHUNK_LIMIT`` (100)
    chunks all carry the same text of three characters or more for a model caught in a
    loop, and raises an ``InternalServerError`` mid-stream: a valid answer (a table's
    rule, the indentation of a long JSON array, a repeated word) failed, and was retried
    as a 5xx. An answer is bounded by ``max_tokens`` and by the response's size, not by
    what it says; so the check is switched off on this stream's own wrapper, an instance
    attribute over litellm's method, and litellm's setting is left alone for everyone else.
    """
    if callable(getattr(raw, "raise_on_model_repetition", None)):
        raw.raise_on_model_repetition = _no_check


def _no_check() -> None:
    """Stands in for litellm's repetition check (see `keep_repeats`)."""
