"""Google's Gemini API (``generateContent``) as a direct transport: `GEMINI`, `GeminiTransport`.

Registered as ``"gemini"``, chosen by ``transport="auto"`` for ``gemini/...`` models (unless
a litellm-only option is set; ``transport="litellm"`` still forces litellm, and Vertex AI's
``vertex_ai/...`` stays litellm's). Requests go to ``{base}/v1beta/models/{model}:
generateContent`` (streamed: ``:streamGenerateContent?alt=sse``), the base from
``api_base=``, ``GEMINI_API_BASE`` or Google's; the key from ``api_key=``, ``GEMINI_API_KEY``
or ``GOOGLE_API_KEY``, sent as the ``x-goog-api-key`` header (never in the address).

Like every `structio.lm._exchange.WireAPI` it takes OpenAI's chat shape and answers in it:

- ``system`` messages become ``systemInstruction``; ``user``/``assistant`` turns become
  ``contents`` of role ``user``/``model``; text, images and PDFs (data URLs as
  ``inlineData``; ``http(s)`` URLs and Files API URIs as ``fileData``, which the Gemini API
  fetches itself) and audio are parts; ``tool`` messages are ``functionResponse`` parts of
  one user turn per run of them.
- Gemini may send a ``functionCall`` without an id: its OpenAI-shaped call gets
  ``call_<n>`` (its place among the response's calls), which the next turn sends back as
  the ``functionCall`` and ``functionResponse`` ids.
- **Thought signatures.** Gemini 2.5 and 3 sign their reasoning (``thoughtSignature`` on a
  part) and Gemini 3 refuses a conversation whose function calls lost their signature. They
  travel two ways. `Completion.reasoning_items` holds the model's parts exactly as sent
  (``{"type": "gemini", "part": {...}}`` each, signatures and thoughts included): an
  assistant message that carries them is replayed as those parts. And a signed call's id is
  ``call_<n>__thought__<signature>`` (litellm's spelling, so conversations move between the
  two transports): whatever keeps a tool call's id (structio's `ToolCalls`, DSPy's history)
  keeps its signature, which is split off again before the id is sent. A Gemini 3 turn with
  calls and no signature at all (a conversation written by hand or by another model) gets
  the value Google documents for that, ``skip_thought_signature_validator``.
- A parameter Gemini has no use for (``logprobs``, ``user``, ``logit_bias``...) is a
  `ConfigurationError` naming the model and the parameter, before anything is sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from structio.exceptions import (
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    ContextWindowExceededError,
    LMConnectionError,
    LMError,
    ServerError,
)
from structio.lm import _pool
from structio.lm._errors import lm_error, retry_after, status_error_class
from structio.lm._exchange import Endpoint, HTTPStatusError, HTTPTransport, client_key, joined
from structio.lm._gemini_request import PROVIDER, SIGNATURE_SEPARATOR, model_name, request_body
from structio.lm._http import add_headers, api_address, api_key, check_litellm_only
from structio.lm._stream import StreamAssembler
from structio.lm.base import no_choices_error
from structio.lm.client import LITELLM_ONLY
from structio.lm.models import cost_of
from structio.lm.types import Completion, LMResponse, ReasoningPiece, ToolCallPiece, Usage

__all__ = [
    "BASE_URL",
    "GEMINI",
    "KEY_ENV",
    "SIGNATURE_SEPARATOR",
    "GeminiAPI",
    "GeminiAssembler",
    "GeminiTransport",
    "check",
    "request_body",
    "serves",
]

#: Google's address of the Gemini API (the version is added unless the base names one).
BASE_URL = "https://generativelanguage.googleapis.com"
#: Where the key is looked for, first found wins (google-genai's names).
KEY_ENV = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
BASE_ENV = ("GEMINI_API_BASE",)
_VERSIONED = re.compile(r"/v1(alpha|beta)?\d*$")

_FINISH = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
}
# Gemini's words for a prompt longer than the model takes.
_TOO_LONG = re.compile(r"input token count.*exceeds the maximum", re.IGNORECASE | re.DOTALL)


def serves(model: str, client: Mapping[str, Any]) -> bool:
    """Whether ``transport="auto"`` sends ``model`` here: ``gemini/...`` without litellm options."""
    return model.startswith(f"{PROVIDER}/") and not LITELLM_ONLY.intersection(client)


def check(model: str, client: Mapping[str, Any]) -> None:
    """Refuse ``transport="gemini"`` for what it cannot serve.

    Raises:
        ConfigurationError: A litellm-only option is set, or the model names another
            provider (``vertex_ai/...``: Vertex AI is litellm's).
    """
    check_litellm_only(model, client, PROVIDER)
    if "/" in model and not model.startswith(f"{PROVIDER}/"):
        raise ConfigurationError(
            f"transport='gemini' serves Gemini API models ('gemini/<name>'), not {model!r}; "
            "leave transport='auto' to let structio choose"
        )


# -- the answer -------------------------------------------------------------------------------


def _finish(reason: Any, calls: bool) -> str | None:
    if not isinstance(reason, str):
        return None
    if calls and reason == "STOP":
        return "tool_calls"
    return _FINISH.get(reason, reason.lower())


def completion(candidate: Mapping[str, Any]) -> Completion:
    """One candidate as a `Completion`: text, thoughts, OpenAI-shaped calls, signed parts."""
    content = candidate.get("content")
    parts = content.get("parts") if isinstance(content, Mapping) else None
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[dict[str, Any]] = []
    signed = False
    for part in parts or ():
        if not isinstance(part, Mapping):
            continue
        signature = part.get("thoughtSignature")
        signed = signed or bool(signature) or bool(part.get("thought"))
        call = part.get("functionCall")
        if isinstance(call, Mapping):
            call_id = str(call.get("id") or f"call_{len(calls)}")
            calls.append(
                {
                    "id": f"{call_id}{SIGNATURE_SEPARATOR}{signature}" if signature else call_id,
                    "type": "function",
                    "function": {
                        "name": str(call.get("name") or ""),
                        "arguments": json.dumps(call.get("args") or {}, ensure_ascii=False),
                    },
                }
            )
        elif isinstance(part.get("text"), str):
            (thoughts if part.get("thought") else texts).append(part["text"])
    return Completion(
        text="".join(texts),
        finish_reason=_finish(candidate.get("finishReason"), bool(calls)),
        tool_calls=tuple(calls) if calls else None,
        reasoning="".join(thoughts) or None,
        reasoning_items=(
            tuple({"type": PROVIDER, "part": dict(part)} for part in parts or ())
            if signed
            else None
        ),
    )


def usage(metadata: Any) -> Usage:
    """``usageMetadata`` as `Usage`: thoughts are completion tokens, counted apart too."""
    if not isinstance(metadata, Mapping):
        return Usage()
    thoughts = int(metadata.get("thoughtsTokenCount") or 0)
    return Usage(
        prompt_tokens=int(metadata.get("promptTokenCount") or 0),
        completion_tokens=int(metadata.get("candidatesTokenCount") or 0) + thoughts,
        cached_tokens=int(metadata.get("cachedContentTokenCount") or 0),
        reasoning_tokens=thoughts,
    )


def _blocked(model: str, feedback: Any, attempts: int) -> LMError | None:
    """The error of a prompt Gemini refused to answer (``promptFeedback.blockReason``).

    A `BadRequestError`, never retried: the same prompt is refused again.
    """
    reason = feedback.get("blockReason") if isinstance(feedback, Mapping) else None
    if not reason:
        return None
    message = feedback.get("blockReasonMessage")
    return lm_error(
        BadRequestError,
        model=model,
        provider=PROVIDER,
        attempts=attempts,
        what="the prompt was refused",
        detail=f"Gemini blocked it (promptFeedback.blockReason {reason}"
        f"{': ' + str(message) if message else ''}); the same prompt is refused again, so it "
        "is not retried: change the prompt (or safety_settings=)",
    )


def to_response(data: Mapping[str, Any], model: str, latency: float, attempts: int) -> LMResponse:
    """A ``GenerateContentResponse`` as an `LMResponse`.

    Raises:
        BadRequestError: The prompt was blocked (no candidates, a ``blockReason``).
        ServerError: No candidate at all (retried like a 5xx).
    """
    candidates = [c for c in data.get("candidates") or () if isinstance(c, Mapping)]
    if not candidates:
        blocked = _blocked(model, data.get("promptFeedback"), attempts)
        raise blocked or no_choices_error(model, provider=PROVIDER, attempts=attempts)
    candidates.sort(key=lambda candidate: int(candidate.get("index") or 0))
    counted = usage(data.get("usageMetadata"))
    return LMResponse(
        completions=tuple(completion(candidate) for candidate in candidates),
        model=model,
        usage=counted,
        cost=cost_of(model, counted) if data.get("usageMetadata") else None,
        latency=latency,
    )


def _merge(parts: list[dict[str, Any]], part: Mapping[str, Any]) -> None:
    """Add a streamed part: text continues the text before it (thought or not).

    An empty text part that carries nothing else (the last event's, often) is left out; one
    with a signature is kept, as it signs what came before.
    """
    if part.get("text") == "" and not part.get("thoughtSignature") and len(part) == 1:
        return
    last = parts[-1] if parts else None
    if (
        last is not None
        and isinstance(part.get("text"), str)
        and isinstance(last.get("text"), str)
        and bool(part.get("thought")) == bool(last.get("thought"))
        and not last.get("thoughtSignature")
    ):
        last["text"] += part["text"]
        if part.get("thoughtSignature"):
            last["thoughtSignature"] = part["thoughtSignature"]
        return
    parts.append(dict(part))


class GeminiAssembler(StreamAssembler):
    """Reads ``streamGenerateContent?alt=sse``: each event is a whole response's new parts.

    The parts are merged per candidate and read at the end as a non-streamed answer is
    (`completion`). Gemini sends no ``[DONE]``: a stream is whole when every candidate has
    a finish reason; one cut before is an `LMConnectionError`.
    """

    def __init__(self, model: str, provider: str | None) -> None:
        super().__init__(model, provider)
        self.candidates: dict[int, dict[str, Any]] = {}
        self.feedback: Any = None

    def feed_line(self, line: str) -> str:
        """Read one line of the stream; the first candidate's new answer text."""
        if not line.startswith("data:"):
            return ""
        payload = line[5:].strip()
        if not payload:
            return ""
        try:
            chunk = json.loads(payload)
        except ValueError:
            raise self._error(
                ServerError, f"a streamed chunk is not JSON: {payload[:200]}"
            ) from None
        try:
            return self._feed(chunk)
        except LMError:
            raise
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            raise self._error(
                ServerError,
                f"a streamed chunk is not a GenerateContentResponse ({exc}): {payload[:200]}",
            ) from None

    def _feed(self, chunk: Mapping[str, Any]) -> str:
        error = chunk.get("error")
        if isinstance(error, Mapping):
            code = error.get("code")
            cls = status_error_class(code) if isinstance(code, int) else ServerError
            detail = f"the stream reported an error: {error.get('message')} [{error.get('status')}]"
            raise lm_error(cls, model=self.model, provider=self.provider, attempts=1, detail=detail)
        if chunk.get("usageMetadata"):
            self.usage = chunk["usageMetadata"]
        if chunk.get("promptFeedback"):
            self.feedback = chunk["promptFeedback"]
        new = ""
        for candidate in chunk.get("candidates") or ():
            index = int(candidate.get("index") or 0)
            kept = self.candidates.setdefault(index, {"index": index, "content": {"parts": []}})
            content = candidate.get("content")
            for part in (content.get("parts") if isinstance(content, Mapping) else None) or ():
                if not isinstance(part, Mapping):
                    continue
                _merge(kept["content"]["parts"], part)
                text = part.get("text")
                if index == 0 and isinstance(text, str) and not part.get("thought"):
                    new += text
                elif index == 0:
                    self._piece(kept["content"]["parts"], part)
            if candidate.get("finishReason"):
                kept["finishReason"] = candidate["finishReason"]
        return new

    def _piece(self, parts: list[Any], part: Mapping[str, Any]) -> None:
        """The first candidate's thought text or function call, as a piece to hand out."""
        text = part.get("text")
        call = part.get("functionCall")
        if isinstance(text, str) and text:
            self.pieces.append(ReasoningPiece(text))
        elif isinstance(call, Mapping):
            position = sum(1 for kept in parts if "functionCall" in kept) - 1
            arguments = json.dumps(call.get("args") or {}, ensure_ascii=False)
            self.pieces.append(ToolCallPiece(position, str(call.get("name") or ""), arguments))

    def response(self, latency: float, attempts: int) -> LMResponse:
        """The whole response, once the stream has ended.

        Raises:
            LMConnectionError: The stream stopped before every candidate finished.
            BadRequestError: The prompt was blocked.
            ServerError: The stream held no candidate at all.
        """
        if not self.candidates:
            blocked = _blocked(self.model, self.feedback, attempts)
            raise blocked or no_choices_error(self.model, provider=self.provider, attempts=attempts)
        if any("finishReason" not in candidate for candidate in self.candidates.values()):
            raise lm_error(
                LMConnectionError,
                model=self.model,
                provider=self.provider,
                attempts=attempts,
                detail="the stream ended before the completion did (no finish reason); the "
                "partial text is not an answer",
            )
        data = {"candidates": list(self.candidates.values()), "usageMetadata": self.usage}
        return to_response(data, self.model, latency, attempts)


class GeminiAPI:
    """Gemini's ``generateContent`` and ``streamGenerateContent``: a `WireAPI`."""

    def provider(self, model: str) -> str:
        """Always ``"gemini"``."""
        return PROVIDER

    def endpoint(self, model: str, client: Mapping[str, Any], *, stream: bool) -> Endpoint:
        """The address of the model's method, and the key in ``x-goog-api-key``.

        Raises:
            AuthenticationError: No key is set and the base is Google's (a proxy of one's
                own, ``api_base=``, may hold the key itself).
            ConfigurationError: The API base is not an address.
        """
        base, custom = api_address(model, client, PROVIDER, BASE_ENV, BASE_URL)
        key = api_key(model, client, PROVIDER, KEY_ENV, required=not custom)
        version = "" if _VERSIONED.search(base.split("?", 1)[0]) else "/v1beta"
        method = "streamGenerateContent" if stream else "generateContent"
        url = joined(
            base, f"{version}/models/{model_name(model)}:{method}", "alt=sse" if stream else ""
        )
        headers = {"Content-Type": "application/json"}
        if key:
            headers["x-goog-api-key"] = key
        add_headers(headers, client)
        secrets = _pool.address_secrets({"api_base": base})
        return Endpoint(
            url, headers, model_name(model), PROVIDER, client_key(client), base, secrets
        )

    def body(
        self,
        point: Endpoint,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        *,
        stream: bool,
    ) -> dict[str, Any]:
        """`request_body` (streamed or not, the body is the same: the address differs)."""
        return request_body(f"{PROVIDER}/{point.model}", messages, params, client)

    def response(
        self, data: Mapping[str, Any], model: str, provider: str, latency: float, attempts: int
    ) -> LMResponse:
        """`to_response`."""
        return to_response(data, model, latency, attempts)

    def assembler(self, model: str, provider: str) -> StreamAssembler:
        """A `GeminiAssembler`."""
        return GeminiAssembler(model, provider)


#: The Gemini API.
GEMINI = GeminiAPI()


def _google_error(text: str) -> Mapping[str, Any] | None:
    """The ``error`` object of a Google error body, if the body is one."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    error = data.get("error") if isinstance(data, Mapping) else None
    return error if isinstance(error, Mapping) and error.get("message") else None


def _details(error: Mapping[str, Any]) -> tuple[set[str], float | None]:
    """The ``ErrorInfo`` reasons and the ``RetryInfo`` delay (seconds) of a Google error."""
    reasons: set[str] = set()
    delay: float | None = None
    for detail in error.get("details") or ():
        if not isinstance(detail, Mapping):
            continue
        if isinstance(detail.get("reason"), str):
            reasons.add(detail["reason"])
        wait = detail.get("retryDelay")
        if isinstance(wait, str) and re.fullmatch(r"\d+(\.\d+)?s", wait):
            delay = float(wait[:-1])
    return reasons, delay


class GeminiTransport(HTTPTransport):
    """The ``"gemini"`` transport: `GEMINI` over the pooled HTTP client."""

    name = PROVIDER

    def __init__(self) -> None:
        super().__init__(GEMINI, PROVIDER)

    def check(self, model: str, client: Mapping[str, Any]) -> None:
        """`check`."""
        check(model, client)

    def translate_error(
        self,
        exc: BaseException,
        model: str,
        attempts: int,
        *,
        secrets: Sequence[str] = (),
        key_given: bool = False,
    ) -> LMError | None:
        """A failure as structio's error, with Google's message and status.

        A rejected key (Google answers 400 ``API_KEY_INVALID``) is an `AuthenticationError`;
        a too long prompt a `ContextWindowExceededError`; a 429's wait is its
        ``Retry-After``, else Google's ``RetryInfo.retryDelay``.
        """
        error = _google_error(exc.text) if isinstance(exc, HTTPStatusError) else None
        if not isinstance(exc, HTTPStatusError) or exc.status is None or error is None:
            return super().translate_error(
                exc, model, attempts, secrets=secrets, key_given=key_given
            )
        reasons, delay = _details(error)
        status = str(error.get("status") or "")
        message = str(error["message"])
        cls = status_error_class(exc.status)
        if "API_KEY_INVALID" in reasons or status in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
            cls = AuthenticationError
        elif exc.status == 400 and _TOO_LONG.search(message):
            cls = ContextWindowExceededError
        wait = retry_after(exc.headers)
        return lm_error(
            cls,
            model=model,
            provider=PROVIDER,
            attempts=attempts,
            detail=f"{message} [{status}]" if status else message,
            status=exc.status,
            retry_after=wait if wait is not None else delay,
            secrets=secrets,
        )
