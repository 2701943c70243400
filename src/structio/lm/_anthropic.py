"""Anthropic's Messages API (``POST {base}/v1/messages``) as a `WireAPI`, without litellm.

Requests arrive in OpenAI's chat shape (what the adapters write) and are written in
Anthropic's: system messages become the top-level ``system`` blocks, image and PDF parts
become ``image`` and ``document`` blocks, assistant tool calls ``tool_use`` blocks, tool
messages ``tool_result`` blocks of one user turn, a reply's thinking blocks are replayed
first in their assistant turn with their signatures, and consecutive turns of one role are
merged as the API requires. Answers are read back into OpenAI's shape: text, tool calls
(``arguments`` a JSON string), the thinking as ``reasoning`` and ``reasoning_items``, finish
reasons, and usage in which the prompt counts every input token (Anthropic's
``input_tokens`` leaves out the cached ones) with cache reads and writes apart, so that
`ModelProfile.cost` prices each at its rate.

**Prompt caching that places itself** (client setting ``prompt_cache``, on unless it is
``False``): ``cache_control: {"type": "ephemeral"}`` marks the end of the stable prefix of
a prompt, at most four breakpoints (Anthropic's limit), in this order:

1. the last tool (the tools are the start of the prefix, and the same on every call);
2. the last system block (the instructions, the same for a signature and an adapter);
3. the last block of the turn before the final user turn: the demos and the earlier
   conversation, written once by the previous call of a conversation and read by this one;
4. the last block of the turn before the previous user turn: where the previous request of
   a growing conversation put its third breakpoint, so that its cached prefix is found (a
   read) while this request writes the longer one.

A prefix shorter than the model's minimum (1024 tokens, 2048 for Haiku) is not cached, at
no cost: the breakpoints are sent whatever the length.

Parameters Anthropic does not take (``n`` > 1, ``logprobs``, ``seed``, penalties...) are a
`ConfigurationError` naming the model and the option, before anything is sent. JSON object
mode (``response_format={"type": "json_object"}``) has no native form: it is asked for in
the system prompt (one sentence) and read as any JSON answer.
"""

from __future__ import annotations

import dataclasses
import json
import urllib.parse
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
from structio.lm import _http, _pool
from structio.lm._errors import lm_error
from structio.lm._exchange import Endpoint, HTTPTransport, client_key, joined
from structio.lm._stream import StreamAssembler
from structio.lm.base import no_choices_error
from structio.lm.client import LITELLM_ONLY, is_client_setting
from structio.lm.models import cost_of, map_profile
from structio.lm.types import Completion, LMResponse, ReasoningPiece, ToolCallPiece, Usage

__all__ = [
    "ANTHROPIC",
    "ANTHROPIC_VERSION",
    "DEFAULT_MAX_TOKENS",
    "THINKING_BUDGETS",
    "AnthropicAPI",
    "AnthropicAssembler",
    "AnthropicTransport",
    "messages_body",
    "serves",
    "to_response",
    "usage_of",
]

PROVIDER = "anthropic"
DEFAULT_BASE = "https://api.anthropic.com"
KEY_ENV = ("ANTHROPIC_API_KEY",)
BASE_ENV = ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE")
#: The API version every request names (``anthropic-version``).
ANTHROPIC_VERSION = "2023-06-01"
#: ``max_tokens`` when neither the call nor the model map gives one (Anthropic requires it).
DEFAULT_MAX_TOKENS = 4096
#: ``reasoning_effort`` as a thinking budget in tokens (1024 is Anthropic's least).
THINKING_BUDGETS = {"minimal": 1024, "low": 1024, "medium": 2048, "high": 4096}
#: The most ``cache_control`` breakpoints one request may hold.
MAX_BREAKPOINTS = 4
_EPHEMERAL = {"type": "ephemeral"}
_JSON_SENTENCE = "Answer with one JSON object and nothing else."

# Never sent: the LM's own settings, and what Anthropic gives unasked (usage in streams).
_NOT_SENT = frozenset({"timeout", "num_retries", "max_retries", "stream", "stream_options"})
# Anthropic's own request fields, sent as they are.
_OWN = frozenset(
    {
        "top_k",
        "metadata",
        "service_tier",
        "thinking",
        "output_config",
        "container",
        "inference_geo",
        "speed",
        "cache_control",
        "diagnostics",
    }
)
# What Anthropic says for OpenAI's finish reasons.
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}
# Anthropic's error types (error bodies, and the error event of a stream).
_ERROR_TYPES: dict[str, type[LMError]] = {
    "overloaded_error": ServerError,
    "api_error": ServerError,
    "rate_limit_error": RateLimitError,
    "invalid_request_error": BadRequestError,
}


def serves(model: str, client: Mapping[str, Any]) -> bool:
    """Whether ``transport="auto"`` sends ``model`` here: ``anthropic/...``, no litellm option."""
    return model.startswith(f"{PROVIDER}/") and not LITELLM_ONLY.intersection(client)


def _refuse(model: str, what: str) -> ConfigurationError:
    return ConfigurationError(f"{model}: {what} (the anthropic transport, Messages API)")


# -- where a request goes -------------------------------------------------------------------


def endpoint(model: str, client: Mapping[str, Any]) -> Endpoint:
    """The URL (``{base}/v1/messages``), headers and body model name of a request.

    The base is ``api_base``, else ``ANTHROPIC_BASE_URL`` / ``ANTHROPIC_API_BASE``, else
    Anthropic's; a base that ends in ``/v1`` is taken as the API's root with it
    (``Endpoint.base`` is the root, other paths of the API are `joined` to it).

    Raises:
        AuthenticationError: No key (``api_key=``, ``ANTHROPIC_API_KEY``) for Anthropic's
            own address; nothing is sent.
        ConfigurationError: The address is not one.
    """
    name = model.split("/", 1)[1] if model.startswith(f"{PROVIDER}/") else model
    base, custom = _http.api_address(model, client, PROVIDER, BASE_ENV, DEFAULT_BASE)
    base = _root(base)
    key = _http.api_key(model, client, PROVIDER, KEY_ENV, required=not custom)
    headers = {"Content-Type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
    if key:
        headers["x-api-key"] = key
    _http.add_headers(headers, client)
    secrets = _pool.address_secrets({"api_base": base})
    url = joined(base, "/v1/messages")
    return Endpoint(url, headers, name, PROVIDER, client_key(client), base, secrets)


def _root(base: str) -> str:
    """The API's root: a base given as ``https://host/v1`` loses its ``/v1``."""
    parts = urllib.parse.urlsplit(base)
    path = parts.path.rstrip("/")
    if not path.endswith("/v1"):
        return base
    return urllib.parse.urlunsplit(parts._replace(path=path[:-3])).rstrip("/")


# -- the request ----------------------------------------------------------------------------


def messages_body(
    model: str,
    name: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any],
    *,
    stream: bool,
) -> dict[str, Any]:
    """The JSON body of a Messages request for OpenAI chat-shaped ``messages`` and params.

    ``model`` is the LM's model string (named in errors), ``name`` the provider's. Without
    ``stream`` the body has no ``stream`` key: it is also a batch request's ``params``.

    Raises:
        ConfigurationError: A parameter Anthropic does not take, or a content part it
            cannot read; nothing is sent.
    """
    system, turns = _convert_messages(model, messages)
    body: dict[str, Any] = {"model": name}
    tools: list[dict[str, Any]] = []
    choice: dict[str, Any] | None = None
    parallel = True
    for key, value in params.items():
        if key in _NOT_SENT or is_client_setting(key) or key == "extra_body":
            continue
        if key in ("max_tokens", "max_completion_tokens"):
            if value is not None:
                body["max_tokens"] = int(value)
        elif key in ("temperature", "top_p"):
            if value is not None:
                body[key] = value
        elif key == "stop":
            if value:
                body["stop_sequences"] = [value] if isinstance(value, str) else list(value)
        elif key == "tools":
            tools = [_tool(model, tool) for tool in value or ()]
        elif key == "tool_choice":
            choice = _tool_choice(model, value)
        elif key == "parallel_tool_calls":
            parallel = value is not False
        elif key == "response_format":
            _response_format(model, value, body, system)
        elif key == "reasoning_effort":
            if value not in (None, "none"):
                if value not in THINKING_BUDGETS:
                    raise _refuse(
                        model,
                        f"reasoning_effort={value!r} is not one of {', '.join(THINKING_BUDGETS)}",
                    )
                body.setdefault(
                    "thinking", {"type": "enabled", "budget_tokens": THINKING_BUDGETS[value]}
                )
        elif key == "n":
            if value not in (None, 1):
                raise _refuse(model, f"n={value!r}: Anthropic answers one choice per request")
        elif key in ("logprobs", "top_logprobs"):
            if value not in (None, False):
                raise _refuse(model, f"{key}={value!r}: Anthropic returns no log probabilities")
        elif key == "user":
            body["metadata"] = {"user_id": str(value)}
        elif key in _OWN:
            body[key] = value
        else:
            raise _refuse(
                model,
                f"Anthropic's Messages API does not take {key}={value!r}; remove it, or pass "
                "transport='litellm' to drop what a provider does not take (drop_params)",
            )
    if tools:
        body["tools"] = tools
    if not parallel and choice is None and tools:
        choice = {"type": "auto"}
    if choice is not None:
        if not parallel and choice["type"] != "none":
            choice["disable_parallel_tool_use"] = True
        body["tool_choice"] = choice
    if system:
        body["system"] = system
    body["messages"] = turns
    body["max_tokens"] = body.get("max_tokens") or _max_tokens(model)
    _check_thinking(model, body)
    if client.get("prompt_cache", True) is not False:
        place_breakpoints(body)
    extra = client.get("extra_body", params.get("extra_body"))
    if isinstance(extra, Mapping):
        body.update(extra)
    if stream:
        body["stream"] = True
    return body


def _max_tokens(model: str) -> int:
    """The model's longest answer (the model map's), else `DEFAULT_MAX_TOKENS`."""
    found = map_profile(model if "/" in model else f"{PROVIDER}/{model}").max_output_tokens
    return found or DEFAULT_MAX_TOKENS


def _check_thinking(model: str, body: Mapping[str, Any]) -> None:
    thinking = body.get("thinking")
    if not isinstance(thinking, Mapping) or thinking.get("type") != "enabled":
        return
    budget = thinking.get("budget_tokens")
    if isinstance(budget, int) and budget >= body["max_tokens"]:
        raise _refuse(
            model,
            f"the thinking budget ({budget} tokens) must be below max_tokens "
            f"({body['max_tokens']}): raise max_tokens or lower reasoning_effort",
        )
    if body.get("temperature") not in (None, 1, 1.0):
        raise _refuse(model, "thinking cannot be combined with temperature (only 1)")
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") in ("any", "tool"):
        raise _refuse(
            model,
            "thinking cannot be combined with a forced tool call (tool_choice); use "
            "ChatAdapter or JSONAdapter with a reasoning model, or leave reasoning_effort out",
        )


def _response_format(
    model: str, value: Any, body: dict[str, Any], system: list[dict[str, Any]]
) -> None:
    kind = value.get("type") if isinstance(value, Mapping) else None
    if kind == "json_schema":
        schema = value.get("json_schema", {}).get("schema")
        if not isinstance(schema, Mapping):
            raise _refuse(model, "response_format json_schema without a schema")
        body["output_config"] = {"format": {"type": "json_schema", "schema": dict(schema)}}
    elif kind == "json_object":
        # No JSON mode in the Messages API: asked for in words, read as any JSON answer.
        system.append({"type": "text", "text": _JSON_SENTENCE})
    elif kind != "text" and value is not None:
        raise _refuse(model, f"response_format={value!r} is not a JSON schema or JSON object")


def _tool(model: str, tool: Any) -> dict[str, Any]:
    function = tool.get("function") if isinstance(tool, Mapping) else None
    if not isinstance(function, Mapping) or tool.get("type", "function") != "function":
        raise _refuse(model, f"only function tools are taken, not {tool!r}")
    entry: dict[str, Any] = {
        "name": function["name"],
        "input_schema": dict(function.get("parameters") or {"type": "object", "properties": {}}),
    }
    if function.get("description"):
        entry["description"] = function["description"]
    if function.get("strict"):
        entry["strict"] = True
    return entry


def _tool_choice(model: str, value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if value == "auto":
        return {"type": "auto"}
    if value == "required":
        return {"type": "any"}
    if value == "none":
        return {"type": "none"}
    function = value.get("function") if isinstance(value, Mapping) else None
    if isinstance(function, Mapping) and isinstance(function.get("name"), str):
        return {"type": "tool", "name": function["name"]}
    raise _refuse(model, f"tool_choice={value!r} is not auto, required, none or a function")


def _convert_messages(
    model: str, messages: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """OpenAI chat messages as Anthropic's ``system`` blocks and alternating turns."""
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role in ("system", "developer"):
            system.extend(_blocks(model, message.get("content"), system=True))
            continue
        if role == "user":
            blocks = _blocks(model, message.get("content"))
        elif role == "assistant":
            blocks = _assistant_blocks(model, message)
            role = "assistant"
        elif role == "tool":
            blocks = [_tool_result(message)]
            role = "user"
        else:
            raise _refuse(model, f"a message of role {role!r} cannot be sent")
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)  # the API wants the roles to alternate
        else:
            turns.append({"role": role, "content": blocks})
    return system, turns


def _blocks(model: str, content: Any, *, system: bool = False) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content or ():
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text":
            if part.get("text"):
                blocks.append({"type": "text", "text": part["text"]})
        elif system:
            raise _refuse(model, f"a system message holds only text, not a {kind!r} part")
        elif kind == "image_url":
            url = part.get("image_url", {}).get("url", "")
            blocks.append({"type": "image", "source": _source(model, url, "an image")})
        elif kind == "file":
            data = part.get("file", {}).get("file_data")
            if not isinstance(data, str):
                raise _refuse(model, "a file part is sent by its data (file_data), not an id")
            blocks.append({"type": "document", "source": _source(model, data, "a document")})
        else:
            raise _refuse(model, f"Anthropic does not take {kind!r} content parts")
    return blocks


def _source(model: str, url: str, what: str) -> dict[str, Any]:
    if url.startswith(("http://", "https://")):
        return {"type": "url", "url": url}
    header, _, data = url.partition(",")
    if not header.startswith("data:") or not header.endswith(";base64"):
        raise _refuse(model, f"{what} is sent as an http(s) URL or a base64 data URL")
    media_type = header[5:-7]
    if what == "a document" and media_type != "application/pdf":
        raise _refuse(model, f"a document is a PDF, not {media_type}")
    return {"type": "base64", "media_type": media_type, "data": data}


def _assistant_blocks(model: str, message: Mapping[str, Any]) -> list[dict[str, Any]]:
    # A reply's own thinking blocks go first, unchanged: the signature proves them.
    blocks = [dict(item) for item in message.get("reasoning_items") or ()]
    blocks.extend(_blocks(model, message.get("content")))
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        arguments = function.get("arguments") or "{}"
        try:
            decoded = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            decoded = None
        if not isinstance(decoded, Mapping):
            raise _refuse(model, f"the arguments of a tool call are not a JSON object: {arguments}")
        use = {"type": "tool_use", "id": call.get("id"), "name": function.get("name")}
        blocks.append({**use, "input": decoded})
    return blocks


def _tool_result(message: Mapping[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, str):
        content = "".join(
            str(part.get("text", "")) for part in content or () if isinstance(part, Mapping)
        )
    return {"type": "tool_result", "tool_use_id": message.get("tool_call_id"), "content": content}


def place_breakpoints(body: dict[str, Any]) -> None:
    """Mark the end of the stable prefix with ``cache_control`` (the module's four places)."""
    spots: list[dict[str, Any]] = []
    if body.get("tools"):
        spots.append(body["tools"][-1])
    if body.get("system"):
        spots.append(body["system"][-1])
    turns = body["messages"]
    users = [i for i, turn in enumerate(turns) if turn["role"] == "user"]
    # The turn before the final user turn, then the turn before the previous user turn.
    for position in users[-1:-3:-1]:
        block = _last_cacheable(turns[position - 1]) if position > 0 else None
        if block is not None:
            spots.append(block)
    for block in spots[:MAX_BREAKPOINTS]:
        block["cache_control"] = dict(_EPHEMERAL)


def _last_cacheable(turn: Mapping[str, Any]) -> dict[str, Any] | None:
    for block in reversed(turn["content"]):
        if block.get("type") not in ("thinking", "redacted_thinking"):
            return block  # type: ignore[no-any-return]
    return None


# -- the answer -----------------------------------------------------------------------------


def usage_of(raw: Any) -> Usage:
    """Anthropic's ``usage`` as `Usage`: the prompt counts cached and cache-written tokens."""
    if not isinstance(raw, Mapping):
        return Usage()
    read = int(raw.get("cache_read_input_tokens") or 0)
    written = int(raw.get("cache_creation_input_tokens") or 0)
    return Usage(
        prompt_tokens=int(raw.get("input_tokens") or 0) + read + written,
        completion_tokens=int(raw.get("output_tokens") or 0),
        cached_tokens=read,
        cache_write_tokens=written,
    )


def _call(block: Mapping[str, Any], arguments: str) -> dict[str, Any]:
    return {
        "id": block.get("id"),
        "type": "function",
        "function": {"name": block.get("name") or "", "arguments": arguments},
    }


def to_response(
    data: Mapping[str, Any], model: str, provider: str, latency: float, attempts: int
) -> LMResponse:
    """A ``Message`` object as an `LMResponse` (one completion).

    Raises:
        ServerError: The body holds no ``content`` list (retried like a 5xx).
    """
    content = data.get("content")
    if not isinstance(content, list):
        raise no_choices_error(model, provider=provider, attempts=attempts)
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    thoughts: list[str] = []
    items: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "tool_use":
            calls.append(_call(block, json.dumps(block.get("input") or {}, ensure_ascii=False)))
        elif kind in ("thinking", "redacted_thinking"):
            items.append(dict(block))
            if kind == "thinking" and block.get("thinking"):
                thoughts.append(str(block["thinking"]))
        # Server tools' blocks (web search...) are the provider's own business.
    usage = usage_of(data.get("usage"))
    reason = data.get("stop_reason")
    completion = Completion(
        text="".join(texts),
        finish_reason=_FINISH.get(reason, reason) if isinstance(reason, str) else None,
        tool_calls=tuple(calls) if calls else None,
        reasoning="\n\n".join(thoughts) if thoughts else None,
        reasoning_items=tuple(items) if items else None,
    )
    return LMResponse((completion,), model, usage, cost_of(model, usage), latency=latency)


class AnthropicAssembler(StreamAssembler):
    """Reads Anthropic's server-sent events into the whole response.

    Only ``message_stop`` ends a stream: one cut before it is an `LMConnectionError`, never
    a shorter answer, even after a ``message_delta`` gave a stop reason.
    """

    def __init__(self, model: str, provider: str | None) -> None:
        super().__init__(model, provider)
        self.blocks: dict[int, dict[str, Any]] = {}
        self.arguments: dict[int, list[str]] = {}
        self.raw_usage: dict[str, Any] = {}
        self.started = False

    def feed_line(self, line: str) -> str:
        """Read one line of the stream; the answer's new text."""
        if not line.startswith("data:"):
            return ""  # event names, comments, keep-alives
        try:
            event = json.loads(line[5:])
        except ValueError:
            raise self._error(ServerError, f"a streamed event is not JSON: {line[5:]}") from None
        if not isinstance(event, Mapping):
            return ""
        try:
            return self._event(event)
        except LMError:
            raise
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            shown = json.dumps(event, default=str)[:200]
            detail = f"a streamed event is not Anthropic's ({exc}): {shown}"
            raise self._error(ServerError, detail) from None

    def _event(self, event: Mapping[str, Any]) -> str:
        kind = event.get("type")
        if kind == "message_start":
            self.started = True
            self.raw_usage.update(event["message"].get("usage") or {})
        elif kind == "content_block_start":
            self.blocks[int(event["index"])] = dict(event["content_block"])
            block = event["content_block"]
            if block.get("type") == "text" and block.get("text"):
                return str(block["text"])
        elif kind == "content_block_delta":
            return self._delta(int(event["index"]), event["delta"])
        elif kind == "message_delta":
            reason = (event.get("delta") or {}).get("stop_reason")
            if reason:
                self.reasons[0] = _FINISH.get(reason, reason)
            self.raw_usage.update(event.get("usage") or {})
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            error = event.get("error") or {}
            cls = _ERROR_TYPES.get(str(error.get("type")), ServerError)
            detail = f"{error.get('type', 'error')}: {error.get('message', '')}"
            raise lm_error(cls, model=self.model, provider=self.provider, attempts=1, detail=detail)
        return ""  # ping, content_block_stop, and events of later API versions

    def _delta(self, index: int, delta: Mapping[str, Any]) -> str:
        block = self.blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta["text"]
            return str(delta["text"])
        if kind == "input_json_delta":
            self.arguments.setdefault(index, []).append(delta["partial_json"])
            # A server tool's input (`server_tool_use`) is no call of the client's.
            if delta["partial_json"] and block.get("type") == "tool_use":
                position = sum(
                    1 for i, b in self.blocks.items() if i < index and b.get("type") == "tool_use"
                )
                name = str(block.get("name") or "")
                self.pieces.append(ToolCallPiece(position, name, str(delta["partial_json"])))
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta["thinking"]
            if delta["thinking"]:
                self.pieces.append(ReasoningPiece(str(delta["thinking"])))
        elif kind == "signature_delta":
            block["signature"] = block.get("signature", "") + delta["signature"]
        return ""

    def response(self, latency: float, attempts: int) -> LMResponse:
        """The whole response, once ``message_stop`` came.

        Raises:
            LMConnectionError: The stream stopped before ``message_stop``.
        """
        if not self.done:
            raise lm_error(
                LMConnectionError,
                model=self.model,
                provider=self.provider,
                attempts=attempts,
                detail="the stream ended before message_stop; the partial text is not an answer",
            )
        content = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.get("type") == "tool_use":
                pieces = "".join(self.arguments.get(index, ()))
                try:
                    arguments = json.loads(pieces) if pieces else block.get("input")
                except ValueError:
                    raise self._error(
                        ServerError, f"a streamed tool call's input is not JSON: {pieces[:200]}"
                    ) from None
                block = {**block, "input": arguments}
            content.append(block)
        data = {"content": content, "stop_reason": None, "usage": self.raw_usage}
        response = to_response(data, self.model, self.provider or PROVIDER, latency, attempts)
        completion = dataclasses.replace(response.completions[0], finish_reason=self.reasons.get(0))
        return dataclasses.replace(response, completions=(completion,))


class AnthropicAPI:
    """Anthropic's Messages API (``/v1/messages``): the `WireAPI` of the anthropic transport.

    `endpoint`, `body` (without ``stream``) and `response` (of a ``Message`` object) also
    serve Anthropic's Message Batches, whose requests are Messages requests.
    """

    def provider(self, model: str) -> str:
        """``"anthropic"``."""
        return PROVIDER

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
        """`messages_body` for the model ``point`` names."""
        return messages_body(
            f"{PROVIDER}/{point.model}", point.model, messages, params, client, stream=stream
        )

    def response(
        self, data: Mapping[str, Any], model: str, provider: str, latency: float, attempts: int
    ) -> LMResponse:
        """`to_response`."""
        return to_response(data, model, provider, latency, attempts)

    def assembler(self, model: str, provider: str) -> StreamAssembler:
        """An `AnthropicAssembler`."""
        return AnthropicAssembler(model, provider)


#: The Messages API (the anthropic transport's own).
ANTHROPIC = AnthropicAPI()


class AnthropicTransport(HTTPTransport):
    """The anthropic transport (registered as ``"anthropic"``): the Messages API over httpx."""

    name = PROVIDER

    def __init__(self) -> None:
        super().__init__(ANTHROPIC, PROVIDER)

    def check(self, model: str, client: Mapping[str, Any]) -> None:
        """Refuse a litellm-only option, which this transport does not have."""
        _http.check_litellm_only(model, client, PROVIDER)
