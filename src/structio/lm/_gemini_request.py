"""Gemini's ``generateContent`` request written from OpenAI's chat shape (`structio.lm._gemini`).

Messages become ``systemInstruction`` and ``contents``, parameters ``generationConfig``,
``tools`` and ``toolConfig``; a parameter Gemini does not take is refused here, before
anything is sent. How thought signatures travel back is told in `structio.lm._gemini`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from structio.exceptions import ConfigurationError
from structio.lm.client import is_client_setting

__all__ = ["PROVIDER", "SIGNATURE_SEPARATOR", "contents", "model_name", "request_body"]

PROVIDER = "gemini"
#: Between a tool call's id and its thought signature (litellm's separator).
SIGNATURE_SEPARATOR = "__thought__"
# Google's documented stand-in for a function call whose signature is unknown (Gemini 3).
_SKIP_SIGNATURE = "skip_thought_signature_validator"
# OpenAI-shaped parameters and their names in ``generationConfig``.
_GENERATION = {
    "temperature": "temperature",
    "top_p": "topP",
    "top_k": "topK",
    "max_tokens": "maxOutputTokens",
    "max_completion_tokens": "maxOutputTokens",
    "n": "candidateCount",
    "seed": "seed",
    "presence_penalty": "presencePenalty",
    "frequency_penalty": "frequencyPenalty",
}
# Read by `GeminiAPI.body` itself; ``stream_options`` is dropped (Gemini always reports
# usage at a stream's end), the LM's own settings are never sent.
_READ = frozenset(
    {
        "stop",
        "response_format",
        "reasoning_effort",
        "thinking",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "safety_settings",
        "cached_content",
        "stream",
        "stream_options",
        "extra_body",
        "timeout",
        "num_retries",
        "max_retries",
    }
)
# What a few refused parameters need said.
_WHY = {
    "logprobs": "Gemini's log probabilities are not read by this transport",
    "top_logprobs": "Gemini's log probabilities are not read by this transport",
}
# Gemini 2.5's thinking budget (tokens) for each reasoning effort.
_BUDGETS = {
    "none": 0,
    "disable": 0,
    "minimal": 512,
    "low": 1024,
    "medium": 8192,
    "high": 24576,
    "xhigh": 32768,
}
# Gemini 3's thinking level for each reasoning effort (it cannot think less than MINIMAL).
_LEVELS = {
    "none": "MINIMAL",
    "disable": "MINIMAL",
    "minimal": "MINIMAL",
    "low": "LOW",
    "medium": "MEDIUM",
    "high": "HIGH",
    "xhigh": "HIGH",
}
_CHOICES = {"auto": "AUTO", "none": "NONE", "required": "ANY"}


def model_name(model: str) -> str:
    """The model's name as Gemini knows it (``gemini/`` and ``models/`` taken off)."""
    name = model.split("/", 1)[1] if model.startswith(f"{PROVIDER}/") else model
    return name.removeprefix("models/")


def _generation(model: str) -> int:
    """The model's Gemini generation (``gemini-3-pro`` is 3; 0 when the name does not say)."""
    found = re.match(r"gemini-(\d+)", model_name(model))
    return int(found.group(1)) if found else 0


def _refuse(model: str, detail: str) -> ConfigurationError:
    return ConfigurationError(f"{model} (provider gemini): {detail}")


# -- the request ------------------------------------------------------------------------------


def _split_id(call_id: Any) -> tuple[str | None, str | None]:
    """A tool call's id without its thought signature, and the signature (if it has one)."""
    if not isinstance(call_id, str) or not call_id:
        return None, None
    base, found, signature = call_id.partition(SIGNATURE_SEPARATOR)
    return base or None, (signature or None) if found else None


def _data_url(model: str, url: str) -> dict[str, Any]:
    """A ``data:`` URL as an ``inlineData`` part."""
    head, _, data = url.partition(",")
    if not head.endswith(";base64"):
        raise _refuse(model, "a data URL must be base64-encoded to be sent to Gemini")
    return {"inlineData": {"mimeType": head[5:-7] or "application/octet-stream", "data": data}}


def _url_part(model: str, url: str, mime: str | None = None) -> dict[str, Any]:
    """A media URL as a part: data URLs inline, others for Gemini to fetch (``fileData``)."""
    if url.startswith("data:"):
        return _data_url(model, url)
    import mimetypes  # only for a URL: `import structio` does not pay for it

    data: dict[str, Any] = {"fileUri": url}
    guessed = mime or mimetypes.guess_type(url.split("?", 1)[0])[0]
    if guessed:
        data["mimeType"] = guessed
    return {"fileData": data}


def _part(model: str, part: Any) -> dict[str, Any]:
    """One OpenAI content part as a Gemini part."""
    kind = part.get("type") if isinstance(part, Mapping) else None
    if kind == "text":
        return {"text": str(part.get("text") or "")}
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else image
        if isinstance(url, str):
            return _url_part(model, url)
    if kind == "file":
        file = part.get("file")
        if isinstance(file, Mapping) and isinstance(file.get("file_data"), str):
            return _url_part(model, file["file_data"])
        if isinstance(file, Mapping) and isinstance(file.get("file_id"), str):
            return _url_part(model, file["file_id"])
    if kind == "input_audio":
        audio = part.get("input_audio")
        if isinstance(audio, Mapping) and isinstance(audio.get("data"), str):
            mime = f"audio/{audio.get('format') or 'wav'}"
            return {"inlineData": {"mimeType": mime, "data": audio["data"]}}
    raise _refuse(model, f"a content part of type {kind!r} cannot be sent to Gemini: {part!r}")


def _parts(model: str, content: Any) -> list[dict[str, Any]]:
    """A message's content (a string, or a list of parts) as Gemini parts."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, list):
        return [_part(model, part) for part in content]
    raise _refuse(model, f"a message's content is a string or a list of parts, not {content!r}")


def _text(content: Any) -> str:
    """A message's content as text (a tool result's)."""
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return "" if content is None else str(content)


def _replayed(message: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The model's own parts an assistant message carries (`Completion.reasoning_items`)."""
    items = message.get("reasoning_items")
    if not isinstance(items, Sequence) or not items:
        return None
    parts = [
        dict(item["part"])
        for item in items
        if isinstance(item, Mapping)
        and item.get("type") == PROVIDER
        and isinstance(item.get("part"), Mapping)
    ]
    return parts or None


def _model_parts(model: str, message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """An assistant message as the parts of a ``model`` turn, signatures put back."""
    calls = [call for call in message.get("tool_calls") or () if isinstance(call, Mapping)]
    ids = [_split_id(call.get("id")) for call in calls]
    parts = _replayed(message)
    if parts is not None:
        # The model's parts as it sent them; its calls get the ids the results refer to.
        position = 0
        for kept in parts:
            if isinstance(kept.get("functionCall"), Mapping):
                if position < len(ids) and ids[position][0]:
                    kept["functionCall"] = {**kept["functionCall"], "id": ids[position][0]}
                position += 1
        return parts
    parts = _parts(model, message.get("content")) if message.get("content") else []
    for call, (call_id, signature) in zip(calls, ids, strict=True):
        function = call.get("function") or {}
        try:
            args = json.loads(function.get("arguments") or "{}")
        except ValueError:
            args = None
        if not isinstance(args, dict):
            raise _refuse(
                model,
                f"the arguments of the tool call {function.get('name')!r} are not a JSON "
                f"object ({function.get('arguments')!r}), which Gemini's functionCall needs",
            )
        function_call: dict[str, Any] = {"name": str(function.get("name") or ""), "args": args}
        if call_id:
            function_call["id"] = call_id
        part: dict[str, Any] = {"functionCall": function_call}
        if signature:
            part["thoughtSignature"] = signature
        parts.append(part)
    if calls and _generation(model) >= 3 and not any(sig for _, sig in ids):
        first = next(part for part in parts if "functionCall" in part)
        first["thoughtSignature"] = _SKIP_SIGNATURE
    return parts or [{"text": ""}]


def _function_response(
    model: str, message: Mapping[str, Any], names: Mapping[str, str]
) -> dict[str, Any]:
    """A ``tool`` message as a ``functionResponse`` part."""
    full_id = message.get("tool_call_id")
    call_id, _ = _split_id(full_id)
    name = message.get("name") or (names.get(full_id) if isinstance(full_id, str) else None)
    if not name:
        raise _refuse(
            model,
            "a tool message needs the name of the function it answers (Gemini matches "
            f"results by name): give it 'name', or a tool_call_id of an earlier call ({full_id!r})",
        )
    text = _text(message.get("content"))
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    response: dict[str, Any] = {"name": str(name), "response": value}
    if not isinstance(value, dict):
        response["response"] = {"result": value}
    if call_id:
        response["id"] = call_id
    return {"functionResponse": response}


def contents(
    model: str, messages: Sequence[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """OpenAI chat messages as Gemini's system instruction parts and ``contents``.

    Raises:
        ConfigurationError: A role or a content part Gemini cannot take.
    """
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    results: list[dict[str, Any]] | None = None  # the parts of the turn of tool results
    for message in messages:
        role = message.get("role")
        if role == "tool":
            part = _function_response(model, message, names)
            if results is None:
                results = []
                turns.append({"role": "user", "parts": results})
            results.append(part)
            continue
        results = None
        if role in ("system", "developer"):
            system.extend(_parts(model, message.get("content")))
        elif role == "user":
            turns.append({"role": "user", "parts": _parts(model, message.get("content"))})
        elif role == "assistant":
            for call in message.get("tool_calls") or ():
                function = call.get("function") if isinstance(call, Mapping) else None
                if isinstance(function, Mapping) and isinstance(call.get("id"), str):
                    names[call["id"]] = str(function.get("name"))
            turns.append({"role": "model", "parts": _model_parts(model, message)})
        else:
            raise _refuse(
                model, f"a message's role is system, user, assistant or tool, not {role!r}"
            )
    return system, turns


def _thinking(model: str, params: Mapping[str, Any]) -> dict[str, Any] | None:
    """``reasoning_effort`` (or Anthropic's ``thinking``) as Gemini's ``thinkingConfig``."""
    effort = params.get("reasoning_effort")
    thinking = params.get("thinking")
    if effort is not None:
        if effort not in _BUDGETS:
            raise _refuse(
                model,
                f"reasoning_effort={effort!r} is not one of {', '.join(map(repr, _BUDGETS))}",
            )
        wanted = _BUDGETS[effort] > 0
        config: dict[str, Any] = (
            {"thinkingLevel": _LEVELS[effort]}
            if _generation(model) >= 3
            else {"thinkingBudget": _BUDGETS[effort]}
        )
    elif isinstance(thinking, Mapping):
        budget = thinking.get("budget_tokens", -1) if thinking.get("type") == "enabled" else 0
        wanted = budget != 0
        config = {"thinkingBudget": int(budget)}
    elif thinking is not None:
        raise _refuse(
            model, f"thinking= takes {{'type': 'enabled', 'budget_tokens': N}}, not {thinking!r}"
        )
    else:
        return None
    if wanted:
        config["includeThoughts"] = True
    return config


def _response_format(model: str, value: Any) -> dict[str, Any]:
    kind = value.get("type") if isinstance(value, Mapping) else None
    if kind == "json_schema":
        spec = value.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, Mapping) else None
        if isinstance(schema, Mapping):
            return {"responseMimeType": "application/json", "responseJsonSchema": schema}
    elif kind == "json_object":
        return {"responseMimeType": "application/json"}
    elif kind == "text":
        return {}
    raise _refuse(model, f"response_format={value!r} is not one Gemini takes")


def _tools(model: str, tools: Any) -> list[dict[str, Any]]:
    declarations = []
    for tool in tools or ():
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if not (isinstance(tool, Mapping) and tool.get("type") == "function" and function):
            raise _refuse(model, f"only function tools can be sent to Gemini, not {tool!r}")
        declaration: dict[str, Any] = {"name": function["name"]}
        if function.get("description"):
            declaration["description"] = function["description"]
        if function.get("parameters"):
            declaration["parametersJsonSchema"] = function["parameters"]
        declarations.append(declaration)
    return [{"functionDeclarations": declarations}] if declarations else []


def _tool_config(model: str, choice: Any) -> dict[str, Any]:
    if isinstance(choice, str) and choice in _CHOICES:
        return {"functionCallingConfig": {"mode": _CHOICES[choice]}}
    function = choice.get("function") if isinstance(choice, Mapping) else None
    if isinstance(function, Mapping) and isinstance(function.get("name"), str):
        return {
            "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [function["name"]]}
        }
    raise _refuse(model, f"tool_choice={choice!r} is not one Gemini takes")


def _check_params(model: str, params: Mapping[str, Any]) -> None:
    """Refuse what Gemini does not take, before anything is sent."""
    for name, value in params.items():
        if name in _GENERATION or name in _READ or is_client_setting(name):
            continue
        if value is None or value is False:
            continue  # asks for nothing
        why = _WHY.get(name, "Gemini's generateContent API has no such parameter")
        raise _refuse(
            model,
            f"{name}={value!r} is not supported ({why}); remove it, or use "
            "transport='litellm' to have litellm drop or translate it",
        )
    if params.get("parallel_tool_calls") is False:
        raise _refuse(
            model,
            "parallel_tool_calls=False is not supported (Gemini cannot be told to make one "
            "call at a time); remove it",
        )


def request_body(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any],
    client: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON body of a ``generateContent`` request.

    Raises:
        ConfigurationError: A parameter, role or content part Gemini does not take.
    """
    _check_params(model, params)
    system, turns = contents(model, messages)
    body: dict[str, Any] = {"contents": turns}
    if system:
        body["systemInstruction"] = {"parts": system}
    config = {
        key: params[name]
        for name, key in _GENERATION.items()
        if params.get(name) is not None and not (name == "n" and params[name] == 1)
    }
    stop = params.get("stop")
    if stop:
        config["stopSequences"] = [stop] if isinstance(stop, str) else list(stop)
    if params.get("response_format") is not None:
        config.update(_response_format(model, params["response_format"]))
    thinking = _thinking(model, params)
    if thinking is not None:
        config["thinkingConfig"] = thinking
    if config:
        body["generationConfig"] = config
    tools = _tools(model, params.get("tools"))
    if tools:
        body["tools"] = tools
    if params.get("tool_choice") is not None:
        body["toolConfig"] = _tool_config(model, params["tool_choice"])
    if params.get("safety_settings") is not None:
        body["safetySettings"] = params["safety_settings"]
    if params.get("cached_content") is not None:
        body["cachedContent"] = params["cached_content"]
    extra = (client or {}).get("extra_body", params.get("extra_body"))
    if isinstance(extra, Mapping):
        body.update(extra)
    return body
