"""Transports: what carries an `LM`'s requests to a provider, and which one serves a model.

**A public extension point.** `LM` owns everything around a request (the cache, retries
with backoff, history, usage, stream replay); a `Transport` only makes one request and
reads its answer. Built in and registered here: ``"direct"`` (OpenAI-compatible chat over
pooled httpx clients, `structio.lm._http`), ``"litellm"`` (every other provider,
`structio.lm._litellm`, litellm imported on first use only) and ``"anthropic"``
(Anthropic's Messages API over the same pooled clients, `structio.lm._anthropic`). Adding one is one
module that implements `Transport` plus one `register_transport` line; tests can pass an
instance (`structio.lm.MockTransport`) straight to ``LM(model, transport=...)``.

Which transport serves a model (`transport_for`): a name is obeyed (``LM(...,
transport="direct")``); ``"auto"`` asks each registered transport's ``matches(model,
client)`` in registration order (``first=True`` registers in front) and takes the first
that says yes, else the fallback, ``"litellm"``. Built in: ``"direct"`` matches the
OpenAI-compatible providers (``openai/``, ``azure/``, ``groq/``, ``together_ai/``,
``openrouter/``, ``deepseek/``, ``fireworks_ai/``, ``xai/``, ``hosted_vllm/``,
``lm_studio/`` and bare OpenAI names) unless a litellm-only option is set;
``"anthropic"`` matches ``anthropic/...`` models on the same condition, and ``"gemini"``
(Google's Gemini API over the same clients, `structio.lm._gemini`) ``gemini/...`` models
(``vertex_ai/`` stays litellm's).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncGenerator, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from structio._util.log import logger
from structio.exceptions import ConfigurationError
from structio.lm import _http
from structio.lm._stream import StreamAssembler

if TYPE_CHECKING:
    from structio.exceptions import LMError
    from structio.lm.types import LMResponse, StreamPiece

__all__ = [
    "AUTO",
    "FALLBACK",
    "Transport",
    "key_variables",
    "register_transport",
    "registered_transports",
    "transport_for",
    "unregister_transport",
]

#: The transport name that lets `transport_for` choose.
AUTO = "auto"
#: What ``"auto"`` chooses when no registered ``matches`` says yes.
FALLBACK = "litellm"


@runtime_checkable
class Transport(Protocol):
    """What carries one request to a provider: a public extension point.

    An `LM` calls these; it owns the cache, the retries, the history and usage around them,
    so a transport makes one attempt and says how it failed. ``client`` is the LM's
    `structio.lm.client.ClientSettings` (with a call's own client settings over them);
    ``params`` are the request parameters (a call's over the LM's; they may also hold the
    LM's own ``num_retries``, ``timeout``, ``max_retries``, which are never to be sent).

    A transport may also define ``check(model, client) -> None``, raising
    `ConfigurationError` when it is asked for by name for a model it cannot serve.

    Attributes:
        name: The name it is registered under (what ``lm.resolved_transport`` says).
    """

    name: str

    def load(self, client: Mapping[str, Any]) -> None:
        """Import the client library and open the client now (called before each request)."""
        ...

    def send(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        timeout: float,
        start: float,
        attempt: int,
    ) -> LMResponse:
        """Make one request; its response (latency since ``start``, ``attempt`` requests made).

        Raises whatever `translate_error` reads; a response with no choices raises
        `structio.ServerError` (retried like a 5xx).
        """
        ...

    async def asend(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        timeout: float,
        start: float,
        attempt: int,
    ) -> LMResponse:
        """Async form of `send`."""
        ...

    def stream(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        timeout: float,
        attempt: int,
    ) -> Generator[StreamPiece | StreamAssembler, None, None]:
        """Make one streamed request: the first choice's new text, then the assembler.

        The last item is a `StreamAssembler` that has read the whole stream; closing the
        generator early ends the request. ``attempt`` counts the requests of the call, as
        in `send`.
        """
        ...

    def astream(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        timeout: float,
        attempt: int,
    ) -> AsyncGenerator[StreamPiece | StreamAssembler, None]:
        """Async form of `stream`."""
        ...

    def translate_error(
        self,
        exc: BaseException,
        model: str,
        attempt: int,
        *,
        secrets: Sequence[str] = (),
        key_given: bool = False,
    ) -> LMError | None:
        """A failure of this transport as structio's error; None if it is not one of its own.

        ``secrets`` are the credential values to replace by ``[redacted]`` in the message
        (`structio.lm.errors.lm_error` does it); ``key_given`` says whether a key was set
        (so a missing-key hint is not given for a rejected key).
        """
        ...


Matcher = Callable[[str, Mapping[str, Any]], bool]
Factory = Callable[[], Transport]


@dataclass
class _Entry:
    """One registered transport: the instance once built, or the factory that builds it."""

    name: str
    factory: Factory | None
    matches: Matcher | None
    instance: Transport | None = None

    def get(self) -> Transport:
        if self.instance is None and self.factory is not None:
            built = self.factory()
            _check_transport(built, self.name)
            self.instance = built
        return cast(Transport, self.instance)  # one of the two is set by register_transport


_LOCK = threading.Lock()
_REGISTRY: list[_Entry] = []


def _check_transport(transport: object, name: str) -> None:
    if not isinstance(transport, Transport):
        raise ConfigurationError(
            f"the transport {name!r} is a {type(transport).__name__}, which lacks what a "
            "Transport has (name, load, send, asend, stream, astream, translate_error)"
        )
    if transport.name != name:
        raise ConfigurationError(
            f"the transport registered as {name!r} is named {transport.name!r}: give it "
            f"name = {name!r}, or register it under {transport.name!r}"
        )


def register_transport(
    name: str,
    transport: Transport | Factory,
    *,
    matches: Matcher | None = None,
    first: bool = False,
) -> None:
    """Make ``name`` a transport `LM` can use (``LM(model, transport=name)``).

    Args:
        name: The name, as ``LM(transport=...)`` and ``lm.resolved_transport`` say it.
        transport: The `Transport`, or a callable without arguments (a class, a function)
            that builds it on first use, so that registering imports nothing heavy.
        matches: ``matches(model, client_settings)``: whether ``transport="auto"`` sends
            ``model`` this way. Without it, the transport is used only when named.
        first: Ask this transport's ``matches`` before those registered earlier (the
            built-in ``"direct"`` among them), rather than after them.

    Raises:
        ConfigurationError: ``name`` is empty, ``"auto"``, or already registered
            (`unregister_transport` it first), or ``transport`` is neither a `Transport`
            nor a callable.
    """
    if not isinstance(name, str) or not name or name == AUTO:
        raise ConfigurationError(f"a transport's name is a non-empty string, not {name!r}")
    if isinstance(transport, type) or not isinstance(transport, Transport):
        if not callable(transport):
            raise ConfigurationError(
                f"register_transport({name!r}, ...) takes a Transport or a callable that "
                f"builds one, not {transport!r}"
            )
        entry = _Entry(name, transport, matches)
    else:
        _check_transport(transport, name)
        entry = _Entry(name, None, matches, transport)
    with _LOCK:
        if any(known.name == name for known in _REGISTRY):
            raise ConfigurationError(
                f"a transport named {name!r} is registered already; unregister_transport"
                f"({name!r}) first to replace it"
            )
        _REGISTRY.insert(0 if first else len(_REGISTRY), entry)


def unregister_transport(name: str) -> None:
    """Forget the transport ``name`` (LMs that already use it keep it).

    Raises:
        ConfigurationError: No transport of that name is registered.
    """
    with _LOCK:
        for index, entry in enumerate(_REGISTRY):
            if entry.name == name:
                del _REGISTRY[index]
                return
    raise ConfigurationError(f"no transport named {name!r} is registered ({_names()})")


def registered_transports() -> tuple[str, ...]:
    """The names of the registered transports, in the order ``"auto"`` asks them."""
    with _LOCK:
        return tuple(entry.name for entry in _REGISTRY)


def _names() -> str:
    names = [repr(name) for name in (AUTO, *registered_transports())]
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]


def transport_for(
    model: str, requested: str | Transport = AUTO, client: Mapping[str, Any] | None = None
) -> Transport:
    """The transport that serves ``model``: the one named, or the one ``"auto"`` chooses.

    Args:
        model: The model string.
        requested: ``"auto"``, a registered name, or a `Transport` (returned as it is).
        client: The client settings (``api_base``, litellm-only options...), which
            ``matches`` and a transport's ``check`` read.

    Raises:
        ConfigurationError: ``requested`` is no registered name, or the transport named
            refuses the model (``"direct"`` for a model that is not OpenAI-compatible and
            has no ``api_base``; a litellm-only option with ``"direct"``).
    """
    settings: Mapping[str, Any] = client if client is not None else {}
    if not isinstance(requested, str):
        if not isinstance(requested, Transport):
            raise ConfigurationError(
                f"transport must be {_names()} or a Transport, not a {type(requested).__name__}"
            )
        return requested
    with _LOCK:
        entries = list(_REGISTRY)
    if requested == AUTO:
        for entry in entries:
            if entry.matches is not None and entry.matches(model, settings):
                return entry.get()
        requested = FALLBACK
        _say_fallback(model)
    for entry in entries:
        if entry.name == requested:
            transport = entry.get()
            check = getattr(transport, "check", None)
            if callable(check):
                check(model, settings)
            return transport
    raise ConfigurationError(f"transport must be {_names()}, not {requested!r}")


_TOLD: set[str] = set()


def _say_fallback(model: str) -> None:
    """Log once per provider that its models go through the fallback transport, and why."""
    provider = model.split("/", 1)[0] if "/" in model else model
    with _LOCK:
        if provider in _TOLD:
            return
        _TOLD.add(provider)
    logger().info(
        "%s: no direct transport serves the %r provider (or these settings), so its "
        "requests go through the %r transport; LM(..., transport=...) names another",
        model,
        provider,
        FALLBACK,
    )


def key_variables(model: str) -> tuple[str, ...] | None:
    """The environment variables a direct transport reads ``model``'s API key from.

    ``None`` for a model of a provider no direct transport serves by name.
    """
    if model.startswith("anthropic/"):
        from structio.lm._anthropic import KEY_ENV as ANTHROPIC_KEYS

        return ANTHROPIC_KEYS
    if model.startswith("gemini/"):
        from structio.lm._gemini import KEY_ENV as GEMINI_KEYS

        return GEMINI_KEYS
    return _http.key_variables(model)


def _anthropic_transport() -> Transport:
    from structio.lm._anthropic import AnthropicTransport

    return AnthropicTransport()


def _anthropic_serves(model: str, client: Mapping[str, Any]) -> bool:
    if not model.startswith("anthropic/"):
        return False  # most models: the module is not imported to say no
    from structio.lm._anthropic import serves

    return serves(model, client)


def _gemini_transport() -> Transport:
    from structio.lm._gemini import GeminiTransport

    return GeminiTransport()


def _gemini_serves(model: str, client: Mapping[str, Any]) -> bool:
    if not model.startswith("gemini/"):
        return False  # most models: the module is not imported to say no
    from structio.lm._gemini import serves

    return serves(model, client)


def _litellm_transport() -> Transport:
    from structio.lm._litellm import LiteLLMTransport  # the module, not litellm itself

    return LiteLLMTransport()


def _responses_api() -> _http.WireAPI:
    from structio.lm._responses import RESPONSES  # its module, on the first request for it

    return RESPONSES


# The built-in transports, and the direct transport's other API: one line each.
register_transport("direct", _http.DirectTransport, matches=_http.serves)
_http.register_api("responses", _responses_api)
register_transport("litellm", _litellm_transport)
register_transport("anthropic", _anthropic_transport, matches=_anthropic_serves)
register_transport("gemini", _gemini_transport, matches=_gemini_serves)
