"""A streamed chat completion: put back together, and handed to the caller as it comes.

Both transports read streams with `StreamAssembler`: the direct one feeds it the
server-sent lines, the litellm one the chunks litellm yields (OpenAI's
``chat.completion.chunk`` shape). A stream that stops before the completion does (no
``[DONE]`` and a choice without a finish reason) is a connection failure, never a shorter
answer. What a caller iterates (`LMStream`, `AsyncLMStream`) lives in `structio.lm.types`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from structio.exceptions import LMConnectionError, LMError, ServerError
from structio.lm._errors import lm_error
from structio.lm.base import no_choices_error
from structio.lm.models import cost_of
from structio.lm.types import (
    Completion,
    LMResponse,
    LogprobsPiece,
    ReasoningPiece,
    StreamPiece,
    ToolCallPiece,
    Usage,
)

__all__ = ["StreamAssembler", "logprobs_of", "reasoning_of", "usage_of"]


def usage_of(raw: Any) -> Usage:
    """OpenAI's ``usage`` object as `Usage` (zeros when absent)."""
    if not isinstance(raw, Mapping):
        return Usage()
    prompt = raw.get("prompt_tokens_details")
    cached = prompt.get("cached_tokens") if isinstance(prompt, Mapping) else 0
    completion = raw.get("completion_tokens_details")
    reasoning = completion.get("reasoning_tokens") if isinstance(completion, Mapping) else 0
    return Usage(
        prompt_tokens=int(raw.get("prompt_tokens") or 0),
        completion_tokens=int(raw.get("completion_tokens") or 0),
        cached_tokens=int(cached or 0),
        reasoning_tokens=int(reasoning or 0),
    )


def reasoning_of(message: Mapping[str, Any]) -> str | None:
    """The reasoning text of a message or a streamed delta, if it has any.

    ``reasoning_content`` (DeepSeek's and litellm's name) is read first, then ``reasoning``
    (vLLM's and OpenRouter's): some servers send both with the same text, which must not
    be counted twice.
    """
    for name in ("reasoning_content", "reasoning"):
        text = message.get(name)
        if isinstance(text, str) and text:
            return text
    return None


def logprobs_of(choice: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The token log probabilities of a choice or a streamed chunk's choice, if it has any.

    OpenAI's (and vLLM's) ``choice.logprobs.content``: one entry per token, ``{"token",
    "logprob", "bytes", "top_logprobs"}``, kept as the server sent it. The legacy
    completions shape, which llama-cpp-python's server answers chat requests in
    (``{"tokens", "token_logprobs", "text_offset", "top_logprobs"}``, each top list a dict
    of token -> logprob), is turned into entries of the same shape, so everything after
    this reads one shape. A server that sends both is read by its ``content``.
    """
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, Mapping):
        return None
    content = logprobs.get("content")
    if isinstance(content, list):
        return [entry for entry in content if isinstance(entry, Mapping)]
    tokens = logprobs.get("tokens")
    if not isinstance(tokens, list):
        return None
    return _legacy_entries(tokens, logprobs.get("token_logprobs"), logprobs.get("top_logprobs"))


def _legacy_entries(tokens: list[Any], logprobs: Any, tops: Any) -> list[Mapping[str, Any]]:
    """The legacy completions shape's lists as OpenAI's chat entries, one per token."""
    logprobs = logprobs if isinstance(logprobs, list) else []
    tops = tops if isinstance(tops, list) else []
    entries: list[Mapping[str, Any]] = []
    for i, token in enumerate(tokens):
        if not isinstance(token, str):
            continue
        top = tops[i] if i < len(tops) else None
        entries.append(
            {
                "token": token,
                "logprob": logprobs[i] if i < len(logprobs) else None,
                "bytes": None,  # the legacy shape has none: the token's text stands
                "top_logprobs": [
                    {"token": alt, "logprob": value, "bytes": None}
                    for alt, value in (top.items() if isinstance(top, Mapping) else ())
                ],
            }
        )
    return entries


class StreamAssembler:
    """Collects the chunks of one streamed completion into the whole `LMResponse`."""

    def __init__(self, model: str, provider: str | None) -> None:
        self.model = model
        self.provider = provider
        self.texts: dict[int, list[str]] = {}
        self.reasonings: dict[int, list[str]] = {}
        self.reasons: dict[int, str | None] = {}
        self.calls: dict[int, dict[int, dict[str, Any]]] = {}
        self.logprobs: dict[int, list[Mapping[str, Any]]] = {}
        self.usage: Any = None
        self.done = False
        #: The first choice's reasoning and tool-call pieces not handed out yet (`handed`).
        self.pieces: list[ReasoningPiece | ToolCallPiece | LogprobsPiece] = []

    def handed(self, new: str) -> list[StreamPiece]:
        """What a transport hands out after a line or chunk: its pieces, then its ``new`` text."""
        if not self.pieces:
            return [new] if new else []
        pieces: list[StreamPiece] = [*self.pieces, new] if new else [*self.pieces]
        self.pieces = []
        return pieces

    def feed_line(self, line: str) -> str:
        """Read one line of a server-sent event stream; the first choice's new text."""
        if not line.startswith("data:"):
            return ""  # comments, event names, keep-alives
        payload = line[5:].strip()
        if payload == "[DONE]":
            self.done = True
            return ""
        try:
            chunk = json.loads(payload)
        except ValueError:
            raise self._error(ServerError, f"a streamed chunk is not JSON: {payload}") from None
        return self.feed_chunk(chunk) if isinstance(chunk, Mapping) else ""

    def feed_chunk(self, chunk: Mapping[str, Any]) -> str:
        """Read one ``chat.completion.chunk`` object; the first choice's new text.

        Raises:
            ServerError: The chunk reports an error, or is not of a chunk's shape
                (``{"choices": 5}``): the provider's fault, in structio's tree.
        """
        try:
            return self._feed_chunk(chunk)
        except LMError:
            raise
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            shown = json.dumps(chunk, default=str)[:200]
            raise self._error(
                ServerError, f"a streamed chunk is not a chat.completion.chunk ({exc}): {shown}"
            ) from None

    def _feed_chunk(self, chunk: Mapping[str, Any]) -> str:
        error = chunk.get("error")
        if error:
            message = error.get("message") if isinstance(error, Mapping) else error
            raise self._error(ServerError, f"the stream reported an error: {message}")
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        new = ""
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, Mapping):
                continue
            index = int(choice.get("index") or 0)
            texts = self.texts.setdefault(index, [])
            delta = choice.get("delta")
            if isinstance(delta, Mapping):
                # The reasoning is kept apart: the pieces handed out are the answer only.
                reasoning = reasoning_of(delta)
                if reasoning:
                    self.reasonings.setdefault(index, []).append(reasoning)
                    if index == 0:
                        self.pieces.append(ReasoningPiece(reasoning))
                content = delta.get("content")
                if isinstance(content, str) and content:
                    texts.append(content)
                    if index == 0:
                        new += content
                for call in delta.get("tool_calls") or ():
                    if isinstance(call, Mapping):
                        self._tool_call(index, call)
            logprobs = logprobs_of(choice)
            if logprobs:
                self.logprobs.setdefault(index, []).extend(logprobs)
                if index == 0:
                    self.pieces.append(LogprobsPiece(tuple(logprobs)))
            if choice.get("finish_reason"):
                self.reasons[index] = choice["finish_reason"]
        return new

    def _tool_call(self, index: int, delta: Mapping[str, Any]) -> None:
        """Merge one tool-call delta into the calls of choice ``index``.

        OpenAI sends each call's id and name once, then its arguments in pieces, all under
        the call's ``index``. Servers that leave ``index`` out send each call whole: a new
        id starts a new call there, and a delta without one continues the last.
        """
        calls = self.calls.setdefault(index, {})
        position = delta.get("index")
        call_id = delta.get("id")
        if not isinstance(position, int):
            known = [i for i, call in calls.items() if call_id and call["id"] == call_id]
            if known:
                position = known[0]
            elif call_id or not calls:
                position = len(calls)
            else:
                position = max(calls)
        call = calls.setdefault(
            position,
            {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
        )
        if call_id:
            call["id"] = call_id
        if isinstance(delta.get("type"), str):
            call["type"] = delta["type"]
        function = delta.get("function")
        if isinstance(function, Mapping):
            call["function"]["name"] += function.get("name") or ""
            arguments = function.get("arguments") or ""
            call["function"]["arguments"] += arguments
            if index == 0 and arguments:
                self.pieces.append(ToolCallPiece(position, call["function"]["name"], arguments))

    def _error(self, cls: type[ServerError] | type[LMConnectionError], detail: str) -> Exception:
        return lm_error(cls, model=self.model, provider=self.provider, attempts=1, detail=detail)

    def response(self, latency: float, attempts: int) -> LMResponse:
        """The whole response, once the stream has ended.

        Raises:
            LMConnectionError: The stream stopped before every choice finished.
            ServerError: The stream held no choice at all.
        """
        if not self.texts:
            raise no_choices_error(self.model, provider=self.provider, attempts=attempts)
        unfinished = [index for index in self.texts if index not in self.reasons]
        if unfinished and not self.done:
            raise lm_error(
                LMConnectionError,
                model=self.model,
                provider=self.provider,
                attempts=attempts,
                detail="the stream ended before the completion did (no finish reason, no "
                "[DONE]); the partial text is not an answer",
            )
        completions = []
        for index in sorted(self.texts):
            calls = self.calls.get(index)
            reasoning = self.reasonings.get(index)
            logprobs = self.logprobs.get(index)
            completions.append(
                Completion(
                    text="".join(self.texts[index]),
                    finish_reason=self.reasons.get(index),
                    tool_calls=tuple(calls[i] for i in sorted(calls)) if calls else None,
                    reasoning="".join(reasoning) if reasoning else None,
                    logprobs=tuple(logprobs) if logprobs is not None else None,
                )
            )
        usage = usage_of(self.usage)
        return LMResponse(
            completions=tuple(completions),
            model=self.model,
            usage=usage,
            cost=cost_of(self.model, usage) if self.usage else None,
            latency=latency,
        )
