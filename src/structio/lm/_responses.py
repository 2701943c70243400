"""OpenAI's Responses API (``POST {base}/responses``), spoken by the direct transport.

`RESPONSES` is a `structio.lm._exchange.WireAPI`: it takes the messages and parameters in
OpenAI's chat-completions shape (what the adapters write) and answers in it, so an adapter
never knows which API carried its request. The direct transport chooses it for the client
setting ``api="responses"`` (DSPy's ``LM(..., model_type="responses")``).

Choices made here, and why:

- A ``system`` (or ``developer``) message becomes a ``{"role": "developer"}`` input item in
  its place, not ``instructions``: the order of the messages is kept (a system message in
  the middle of a conversation stays there), several are kept apart, and their content
  parts go as they are; the prompt prefix, and so what OpenAI caches, is the same.
- ``store`` is ``false`` unless the caller sets it: structio sends the whole conversation
  with every request and never reads a stored response back (no ``previous_response_id``),
  so a stored copy would only be kept at OpenAI for nothing. With reasoning on (a
  ``reasoning_effort``, or a reasoning model: o1, o3, o4, gpt-5), the reasoning items are
  asked for with their encrypted content (``include: ["reasoning.encrypted_content"]``),
  which is how a later turn replays them without a stored response.
- No reasoning summary is asked for by default: OpenAI refuses a request for one (400) from
  an organization it has not verified, so asking by default would make every
  ``reasoning_effort`` call fail there. Pass ``reasoning={"summary": "auto"}`` to get the
  summary back as `structio.lm.types.Completion.reasoning`.
- A refusal (a ``refusal`` content part) is the completion's text, with the finish reason
  ``"content_filter"``: the caller reads why there is no answer, rather than an empty one.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from structio.exceptions import (
    BadRequestError,
    ConfigurationError,
    LMConnectionError,
    LMError,
    RateLimitError,
    ServerError,
)
from structio.lm._errors import lm_error
from structio.lm._exchange import Endpoint, joined
from structio.lm._http import (
    CHAT,
    REASONING_PREFIXES,
    endpoint,
    prompt_cache_key,
    sent_params,
)
from structio.lm._stream import StreamAssembler, usage_of
from structio.lm.base import no_choices_error
from structio.lm.models import cost_of
from structio.lm.types import (
    Completion,
    LMResponse,
    LogprobsPiece,
    ReasoningPiece,
    ToolCallPiece,
)

__all__ = ["RESPONSES", "ResponsesAPI", "ResponsesAssembler", "chat_usage", "to_response"]

#: Chat-completions parameters the Responses API does not take: refused before anything is
#: sent, with what to do instead.
_REFUSED = {
    "seed": "the Responses API has no seed",
    "stop": "the Responses API has no stop sequences; end the text in the prompt instead",
    "logit_bias": "the Responses API has no logit_bias",
    "functions": "pass tools= (function tools) instead of the legacy functions=",
    "function_call": "pass tool_choice= instead of the legacy function_call=",
    "modalities": "the Responses API answers in text; use chat completions for audio",
    "audio": "the Responses API answers in text; use chat completions for audio",
    "prediction": "predicted outputs are a chat-completions feature",
    "web_search_options": "pass tools=[{'type': 'web_search'}] instead",
}

# Chat-completions names translated here, never sent as they are.
_TRANSLATED = frozenset(
    {
        "messages",
        "max_tokens",
        "max_completion_tokens",
        "response_format",
        "tools",
        "tool_choice",
        "reasoning_effort",
        "logprobs",
        "n",
        "stream",
        "stream_options",
        "verbosity",
    }
)


def _refuse(model: str, option: str, why: str) -> ConfigurationError:
    return ConfigurationError(
        f"{model}: {option} is not supported by OpenAI's Responses API (api='responses'): "
        f"{why}; drop it, or use chat completions (the default API)"
    )


def _check(model: str, params: Mapping[str, Any]) -> None:
    """Refuse a chat-only parameter, naming the model and the option."""
    for name, why in _REFUSED.items():
        if params.get(name) is not None:
            raise _refuse(model, name, why)
    n = params.get("n")
    if n is not None and n != 1:
        raise _refuse(model, f"n={n}", "it writes one answer per request; make n requests")


# -- the request --------------------------------------------------------------------------------


def _part(part: Any, model: str) -> Any:
    """One chat content part as a Responses input content part."""
    if not isinstance(part, Mapping):
        return part
    kind = part.get("type")
    if kind == "text":
        return {"type": "input_text", "text": part.get("text", "")}
    if kind == "image_url":
        image = part.get("image_url")
        url, detail = (
            (image.get("url"), image.get("detail")) if isinstance(image, Mapping) else (image, None)
        )
        return {"type": "input_image", "image_url": url, "detail": detail or "auto"}
    if kind == "file":
        file = part.get("file")
        if not isinstance(file, Mapping):
            raise ConfigurationError(f"{model}: a file part holds no file: {part!r}")
        out = {"type": "input_file"}
        out.update({k: file[k] for k in ("file_data", "file_id", "filename") if k in file})
        return out
    if kind == "input_audio":
        return {"type": "input_audio", "input_audio": part.get("input_audio")}
    return dict(part)  # already a Responses part (input_text, input_image...)


def _content(content: Any, model: str) -> Any:
    if isinstance(content, list):
        return [_part(part, model) for part in content]
    return "" if content is None else content


def _text(content: Any) -> str:
    """A message's content as text (a tool result or an assistant turn may be parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def input_items(messages: list[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    """Chat messages as Responses input items (see the module's notes for the choices)."""
    items: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role in ("system", "developer"):
            items.append({"role": "developer", "content": _content(message.get("content"), model)})
        elif role == "user":
            items.append({"role": "user", "content": _content(message.get("content"), model)})
        elif role == "assistant":
            # A turn's reasoning comes before its output, as the model wrote them.
            items.extend(dict(item) for item in message.get("reasoning_items") or ())
            text = _text(message.get("content"))
            if text:
                # A plain string: output_text parts need the id and status of an item the
                # server stored, which a stateless request does not have.
                items.append({"role": "assistant", "content": text})
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call.get("id"),
                        "name": function.get("name"),
                        "arguments": function.get("arguments") or "{}",
                    }
                )
        elif role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.get("tool_call_id"),
                    "output": _text(message.get("content")),
                }
            )
        else:
            raise ConfigurationError(
                f"{model}: a message of role {role!r} has no Responses API form (system, "
                "developer, user, assistant and tool messages do)"
            )
    return items


def _text_format(response_format: Any, model: str) -> dict[str, Any]:
    if not isinstance(response_format, Mapping):
        raise ConfigurationError(
            f"{model}: response_format must be a dict such as {{'type': 'json_object'}} on the "
            f"Responses API, not {type(response_format).__name__}"
        )
    kind = response_format.get("type")
    if kind == "json_schema":
        spec = response_format.get("json_schema") or {}
        out = {"type": "json_schema", "name": spec.get("name") or "response"}
        out["schema"] = spec.get("schema") or {}
        for key in ("strict", "description"):
            if spec.get(key) is not None:
                out[key] = spec[key]
        return out
    return dict(response_format)  # {"type": "json_object"} and {"type": "text"} are the same


def _tool(tool: Any) -> Any:
    """A chat function tool as a Responses function tool (other tools go as they are)."""
    if not isinstance(tool, Mapping) or tool.get("type") != "function":
        return tool
    function = tool.get("function")
    if not isinstance(function, Mapping):
        return dict(tool)  # already flat
    out: dict[str, Any] = {"type": "function", "name": function.get("name")}
    if function.get("description") is not None:
        out["description"] = function["description"]
    out["parameters"] = function.get("parameters") or {"type": "object", "properties": {}}
    out["strict"] = function.get("strict")
    return out


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, Mapping) and choice.get("type") == "function":
        function = choice.get("function")
        if isinstance(function, Mapping):
            return {"type": "function", "name": function.get("name")}
    return choice


def reasoning_on(model: str, params: Mapping[str, Any]) -> bool:
    """Whether the request's model reasons: an effort asked for, or a reasoning model."""
    effort = params.get("reasoning_effort")
    if effort is not None:
        return bool(effort != "none")
    reasoning = params.get("reasoning")
    if isinstance(reasoning, Mapping) and reasoning.get("effort") is not None:
        return bool(reasoning["effort"] != "none")
    return model.rsplit("/", 1)[-1].startswith(REASONING_PREFIXES)


def request_body(
    point: Endpoint,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    *,
    stream: bool,
) -> dict[str, Any]:
    """The JSON body of a Responses API request.

    Raises:
        ConfigurationError: A chat-only parameter (``seed``, ``stop``, ``n>1``...), named
            with the model, before anything is sent.
    """
    model = point.model
    params = sent_params(params)
    _check(model, params)
    body: dict[str, Any] = {"model": model, "input": input_items(messages, model)}
    for name, value in params.items():
        if name not in _TRANSLATED and name not in _REFUSED:
            body[name] = value  # temperature, top_p, parallel_tool_calls, Responses' own
    limit = params.get("max_output_tokens") or _first(params, "max_completion_tokens", "max_tokens")
    if limit is not None:
        body["max_output_tokens"] = limit
    text = dict(body.get("text") or {})
    if params.get("response_format") is not None:
        text["format"] = _text_format(params["response_format"], model)
    if params.get("verbosity") is not None:
        text["verbosity"] = params["verbosity"]
    if text:
        body["text"] = text
    if params.get("tools"):
        body["tools"] = [_tool(tool) for tool in params["tools"]]
    if params.get("tool_choice") is not None:
        body["tool_choice"] = _tool_choice(params["tool_choice"])
    include = list(body.get("include") or ())
    if params.get("reasoning_effort") is not None:
        body["reasoning"] = {**(body.get("reasoning") or {}), "effort": params["reasoning_effort"]}
    body.setdefault("store", False)
    if reasoning_on(model, params) and body["store"] is False:
        include.append("reasoning.encrypted_content")
    if params.get("logprobs"):
        include.append("message.output_text.logprobs")
    if include:
        body["include"] = list(dict.fromkeys(include))
    key = prompt_cache_key(params, client)
    if key is not None:
        body["prompt_cache_key"] = key
    options = params.get("stream_options")
    if stream:
        body["stream"] = True
        # include_usage is chat's: a Responses stream always ends with the usage.
        kept = {k: v for k, v in (options or {}).items() if k != "include_usage"}
        if kept:
            body["stream_options"] = kept
    extra = client.get("extra_body", params.get("extra_body"))
    if isinstance(extra, Mapping):
        body.update(extra)
    body.pop("extra_body", None)
    return body


def _first(params: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if params.get(name) is not None:
            return params[name]
    return None


# -- the response -------------------------------------------------------------------------------


def chat_usage(raw: Any) -> dict[str, Any] | None:
    """The Responses API's ``usage`` in chat completions' names (what `usage_of` reads)."""
    if not isinstance(raw, Mapping):
        return None
    given = raw.get("input_tokens_details")
    written = raw.get("output_tokens_details")
    return {
        "prompt_tokens": raw.get("input_tokens") or 0,
        "completion_tokens": raw.get("output_tokens") or 0,
        "prompt_tokens_details": {
            "cached_tokens": given.get("cached_tokens") if isinstance(given, Mapping) else 0
        },
        "completion_tokens_details": {
            "reasoning_tokens": written.get("reasoning_tokens")
            if isinstance(written, Mapping)
            else 0
        },
    }


def _call(item: Mapping[str, Any]) -> dict[str, Any]:
    """A ``function_call`` output item as an OpenAI chat tool call (its id the call_id)."""
    return {
        "id": item.get("call_id") or item.get("id"),
        "type": "function",
        "function": {"name": item.get("name") or "", "arguments": item.get("arguments") or ""},
    }


def _summary(item: Mapping[str, Any]) -> str:
    parts = item.get("summary") or ()
    return "\n\n".join(str(p.get("text", "")) for p in parts if isinstance(p, Mapping))


def finish_reason(data: Mapping[str, Any], calls: bool, refused: bool) -> str:
    """Chat's finish reason for a response's status (and what its output holds)."""
    if data.get("status") == "incomplete":
        details = data.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, Mapping) else None
        return "length" if reason == "max_output_tokens" else "content_filter"
    if refused:
        return "content_filter"
    return "tool_calls" if calls else "stop"


def _failed(data: Mapping[str, Any], model: str, provider: str, attempts: int) -> LMError:
    """A ``failed`` response (or a stream's ``error`` event) in structio's tree."""
    error = data.get("error") if data.get("type") != "error" else data
    message = error.get("message") if isinstance(error, Mapping) else None
    code = error.get("code") if isinstance(error, Mapping) else None
    cls: type[LMError] = ServerError
    if code in ("rate_limit_exceeded", "insufficient_quota"):
        cls = RateLimitError
    elif code in ("invalid_prompt", "invalid_request_error", "context_length_exceeded"):
        cls = BadRequestError
    detail = f"the response failed ({code}): {message or error}" if code else str(message or error)
    return lm_error(cls, model=model, provider=provider, attempts=attempts, detail=detail)


def to_response(
    data: Mapping[str, Any], model: str, provider: str, latency: float, attempts: int
) -> LMResponse:
    """A Responses API ``response`` object as an `LMResponse` (one completion).

    Raises:
        ServerError: The response failed, or holds no output (retried like a 5xx).
    """
    if data.get("status") == "failed" or (data.get("error") and not data.get("output")):
        raise _failed(data, model, provider, attempts)
    output = data.get("output")
    if not isinstance(output, list) or not output:
        raise no_choices_error(model, provider=provider, attempts=attempts)
    texts: list[str] = []
    logprobs: list[Mapping[str, Any]] = []
    calls: list[dict[str, Any]] = []
    summaries: list[str] = []
    reasoning_items: list[Mapping[str, Any]] = []
    refused = False
    seen_logprobs = False
    for item in output:
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or ():
                if part.get("type") == "output_text":
                    texts.append(str(part.get("text") or ""))
                    if isinstance(part.get("logprobs"), list):
                        seen_logprobs = seen_logprobs or bool(part["logprobs"])
                        logprobs.extend(part["logprobs"])
                elif part.get("type") == "refusal":
                    refused = True
                    texts.append(str(part.get("refusal") or ""))
        elif kind == "function_call":
            calls.append(_call(item))
        elif kind == "reasoning":
            reasoning_items.append(dict(item))
            summary = _summary(item)
            if summary:
                summaries.append(summary)
    completion = Completion(
        text="".join(texts),
        finish_reason=finish_reason(data, bool(calls), refused),
        tool_calls=tuple(calls) if calls else None,
        reasoning="\n\n".join(summaries) if summaries else None,
        logprobs=tuple(logprobs) if seen_logprobs else None,
        reasoning_items=tuple(reasoning_items) if reasoning_items else None,
    )
    usage = usage_of(chat_usage(data.get("usage")))
    return LMResponse(
        completions=(completion,),
        model=model,
        usage=usage,
        cost=cost_of(model, usage),
        latency=latency,
    )


# -- the stream ---------------------------------------------------------------------------------


class ResponsesAssembler(StreamAssembler):
    """Reads a Responses API event stream (``event:`` and ``data:`` lines) into the response.

    The text deltas are handed out as they come; function calls and reasoning items are
    taken whole from ``response.output_item.done``; ``response.completed`` (or
    ``response.incomplete``) gives the usage and ends the stream. A stream that stops before
    either is an `LMConnectionError`, never a shorter answer.
    """

    def __init__(self, model: str, provider: str | None) -> None:
        super().__init__(model, provider)
        self.texts[0] = []
        self.items: list[Mapping[str, Any]] = []
        self.refused = False
        self.summary_parts: set[tuple[str, int]] = set()

    def feed_line(self, line: str) -> str:
        """Read one line of the event stream; the answer's new text."""
        if not line.startswith("data:"):
            return ""  # the event name is in the data's "type" too
        payload = line[5:].strip()
        if not payload or payload == "[DONE]":
            return ""
        try:
            event = json.loads(payload)
        except ValueError:
            raise self._error(ServerError, f"a streamed event is not JSON: {payload}") from None
        if not isinstance(event, Mapping):
            return ""
        try:
            return self._event(event)
        except LMError:
            raise
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            raise self._error(
                ServerError, f"a streamed event is not of the API's shape ({exc}): {payload[:200]}"
            ) from None

    def _event(self, event: Mapping[str, Any]) -> str:
        kind = event.get("type")
        if kind == "response.output_text.delta":
            delta = str(event.get("delta") or "")
            self.texts[0].append(delta)
            if isinstance(event.get("logprobs"), list):
                self.logprobs.setdefault(0, []).extend(event["logprobs"])
                if event["logprobs"]:
                    self.pieces.append(LogprobsPiece(tuple(event["logprobs"])))
            return delta
        if kind == "response.refusal.delta":
            self.refused = True
            delta = str(event.get("delta") or "")
            self.texts[0].append(delta)
            return delta
        if kind == "response.reasoning_summary_text.delta":
            # Summary parts are apart in the response: a blank line between them here too.
            part = (str(event.get("item_id")), int(event.get("summary_index") or 0))
            pieces = self.reasonings.setdefault(0, [])
            delta = str(event.get("delta") or "")
            if part not in self.summary_parts:
                if pieces:
                    delta = "\n\n" + delta
                self.summary_parts.add(part)
            pieces.append(delta)
            self.pieces.append(ReasoningPiece(delta))
        elif kind == "response.output_item.added":
            self._call_item(event, added=True)
        elif kind == "response.function_call_arguments.delta":
            call = self._call_at(event)
            if call is not None:
                piece = str(event.get("delta") or "")
                call["function"]["arguments"] += piece
                position = sorted(self.calls[0]).index(int(event.get("output_index") or 0))
                self.pieces.append(ToolCallPiece(position, call["function"]["name"], piece))
        elif kind == "response.function_call_arguments.done":
            call = self._call_at(event)
            if call is not None and isinstance(event.get("arguments"), str):
                call["function"]["arguments"] = event["arguments"]
        elif kind == "response.output_item.done":
            item = event.get("item")
            if isinstance(item, Mapping) and item.get("type") == "reasoning":
                self.items.append(dict(item))
            self._call_item(event, added=False)
        elif kind in ("response.completed", "response.incomplete"):
            self._end(event.get("response") or {})
        elif kind in ("response.failed", "error"):
            data = event.get("response") if kind == "response.failed" else event
            raise _failed(
                data if isinstance(data, Mapping) else {}, self.model, self.provider or "openai", 1
            )
        return ""

    def _call_item(self, event: Mapping[str, Any], *, added: bool) -> None:
        item = event.get("item")
        if not isinstance(item, Mapping) or item.get("type") != "function_call":
            return
        calls = self.calls.setdefault(0, {})
        position = int(event.get("output_index") or 0)
        if added or position not in calls:
            calls[position] = _call(item)
        else:  # the whole call, done: its arguments are the final ones
            calls[position].update({"id": item.get("call_id") or calls[position]["id"]})
            calls[position]["function"] = _call(item)["function"]

    def _call_at(self, event: Mapping[str, Any]) -> dict[str, Any] | None:
        return self.calls.get(0, {}).get(int(event.get("output_index") or 0))

    def _end(self, response: Mapping[str, Any]) -> None:
        self.usage = chat_usage(response.get("usage"))
        self.reasons[0] = finish_reason(response, bool(self.calls.get(0)), self.refused)
        self.done = True

    def response(self, latency: float, attempts: int) -> LMResponse:
        """The whole response, once the stream has ended.

        Raises:
            LMConnectionError: The stream stopped before ``response.completed``.
        """
        if not self.done:
            raise lm_error(
                LMConnectionError,
                model=self.model,
                provider=self.provider,
                attempts=attempts,
                detail="the stream ended before the response did (no response.completed); "
                "the partial text is not an answer",
            )
        whole = super().response(latency, attempts)
        first = whole.completions[0]
        if self.logprobs.get(0) == [] or (first.logprobs is not None and not first.logprobs):
            first = dataclasses.replace(first, logprobs=None)
        if self.items:
            first = dataclasses.replace(first, reasoning_items=tuple(self.items))
        return dataclasses.replace(whole, completions=(first,))


# -- the API ------------------------------------------------------------------------------------


class ResponsesAPI:
    """OpenAI's Responses API (``/responses``) over the direct transport's addresses and keys."""

    def provider(self, model: str) -> str:
        """The provider prefix the model names, else ``"openai"``."""
        return CHAT.provider(model)

    def endpoint(self, model: str, client: Mapping[str, Any], *, stream: bool) -> Endpoint:
        """The chat endpoint's base, keys and headers, at ``/responses``.

        Azure OpenAI serves it at ``{base}/openai/v1/responses`` (its v1 API, no version).
        """
        point = endpoint(model, client)
        path = "/openai/v1/responses" if point.provider == "azure" else "/responses"
        return point._replace(url=joined(point.base, path))

    def body(
        self,
        point: Endpoint,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        client: Mapping[str, Any],
        *,
        stream: bool,
    ) -> dict[str, Any]:
        """`request_body`."""
        return request_body(point, messages, params, client, stream=stream)

    def response(
        self, data: Mapping[str, Any], model: str, provider: str, latency: float, attempts: int
    ) -> LMResponse:
        """`to_response`."""
        return to_response(data, model, provider, latency, attempts)

    def assembler(self, model: str, provider: str) -> StreamAssembler:
        """A `ResponsesAssembler`."""
        return ResponsesAssembler(model, provider)


#: OpenAI's Responses API, as the direct transport speaks it (``api="responses"``).
RESPONSES = ResponsesAPI()
