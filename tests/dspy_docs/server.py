"""A loopback OpenAI-compatible server that follows the format it is asked for.

It answers any structio or DSPy prompt with a well-formed reply: it reads the requested
output fields from the messages (the `[[ ## field ## ]]` markers of the chat format, the
JSON object of the JSON format, XML tags, a `response_format` schema or a forced tool) and
writes plausible values of each field's type. Run alone (`python -m tests.dspy_docs.server`)
it prints its address and serves until stopped, for the opt-in DSPy run.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FormatServer", "reply_for"]

_FIELD = re.compile(r"^\d+\. `(\w+)` \((.+?)\):", re.M)
_SCHEMA_NOTE = "# note: the value you produce must adhere to the JSON schema: "
_TOOL = re.compile(
    r"(\w+), whose description is <desc>.*?</desc>\.\s*It takes arguments (\{.*?\})\.", re.S
)
_USAGE = {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _from_schema(schema: Any, defs: dict[str, Any], depth: int = 0) -> Any:
    """A plausible value for a JSON schema."""
    if not isinstance(schema, dict) or depth > 8:
        return "sample"
    defs = {**defs, **schema.get("$defs", {})}
    if "$ref" in schema:
        return _from_schema(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs, depth + 1)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return _from_schema(options[0], defs, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        if properties:
            return {k: _from_schema(v, defs, depth + 1) for k, v in properties.items()}
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            return {"key": _from_schema(extra, defs, depth + 1)}
        return {}
    if kind == "array":
        return [_from_schema(schema.get("items", {}), defs, depth + 1)]
    return {"integer": 3, "number": 1.5, "boolean": True, "null": None}.get(str(kind), "sample")


def _from_type(name: str, type_text: str, schema: Any, tools: list[tuple[str, Any]]) -> Any:
    """A plausible value of a field, from its type as the prompt writes it."""
    if type_text.startswith("ToolCalls") or name == "next_tool_name":
        if not tools:
            return {"tool_calls": []}
        tool, args = tools[0]
        return {"tool_calls": [{"name": tool, "args": _from_schema(args_schema(args), {})}]}
    if type_text.startswith("Literal["):
        try:
            return ast.literal_eval(type_text[len("Literal[") : -1].split(",")[0])
        except (ValueError, SyntaxError):
            return type_text
    simple = {"int": 3, "float": 0.75, "bool": True}
    if type_text in simple:
        return simple[type_text]
    if schema is not None:
        return _from_schema(schema, {})
    if type_text.startswith("list["):
        return ["first item", "second item"]
    if type_text.startswith("dict["):
        return {"key": "value"}
    if name == "reasoning":
        return "Let me think step by step about the question."
    return f"A sample {name}."


def args_schema(args: Any) -> dict[str, Any]:
    """A tool's arguments as an object schema."""
    return {"type": "object", "properties": args if isinstance(args, dict) else {}}


def _schemas(system: str) -> dict[str, Any]:
    """Each field's JSON schema, from the notes of the chat, JSON and XML formats."""
    found: dict[str, Any] = {}
    for match in re.finditer(r"\{(\w+)\}\s+" + re.escape(_SCHEMA_NOTE) + r"(.*)$", system, re.M):
        rest = match.group(2).rstrip()
        for candidate in (rest, rest.removesuffix(",").removesuffix('"')):
            try:
                found[match.group(1)] = json.loads(candidate)
                break
            except json.JSONDecodeError:
                try:
                    found[match.group(1)] = json.loads(json.loads(f'"{candidate}"'))
                    break
                except (json.JSONDecodeError, ValueError):
                    continue
    return found


def _outputs(system: str) -> list[tuple[str, str]]:
    section = system.split("Your output fields are:", 1)
    if len(section) < 2:
        return []
    body = section[1].split("All interactions will be structured", 1)[0]
    return _FIELD.findall(body)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value)
    return json.dumps(value)


def reply_for(body: dict[str, Any]) -> dict[str, Any]:
    """The assistant message that answers a chat-completions request in its own format."""
    messages = body.get("messages", [])
    system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    user = _text(messages[-1].get("content")) if messages else ""
    every = "\n".join(_text(m.get("content")) for m in messages)
    tools = [(n, _literal(a)) for n, a in _TOOL.findall(every)]
    response_format = body.get("response_format") or {}
    forced = body.get("tool_choice")
    if isinstance(forced, dict) and body.get("tools"):
        name = forced.get("function", {}).get("name")
        tool = next(t for t in body["tools"] if t["function"]["name"] == name)
        arguments = _from_schema(tool["function"].get("parameters", {}), {})
        return _tool_message(name, arguments)
    fields = _outputs(system)
    if body.get("tools") and not any(t.startswith("ToolCalls") for _, t in fields):
        # Tools offered natively and no ToolCalls field in the text: call the first one.
        function = body["tools"][0]["function"]
        message = _tool_message(function["name"], _from_schema(function.get("parameters"), {}))
        if fields:
            message["content"] = _sections({n: _from_type(n, t, None, []) for n, t in fields})
        return message
    if not fields:
        if response_format.get("type") == "json_schema":
            schema = response_format["json_schema"].get("schema", {})
            return {"role": "assistant", "content": json.dumps(_from_schema(schema, {}))}
        return {"role": "assistant", "content": "This is a test!"}
    schemas = _schemas(system)
    values = {n: _from_type(n, t, schemas.get(n), tools) for n, t in fields}
    if response_format or "Respond with a JSON object" in user:
        return {"role": "assistant", "content": json.dumps(values)}
    if "wrapped in XML tags" in user:
        content = "\n".join(f"<{n}>{_xml(v)}</{n}>" for n, v in values.items())
        return {"role": "assistant", "content": content}
    return {"role": "assistant", "content": _sections(values)}


def _sections(values: dict[str, Any]) -> str:
    sections = [f"[[ ## {n} ## ]]\n{_as_text(v)}" for n, v in values.items()]
    return "\n\n".join([*sections, "[[ ## completed ## ]]"])


def _xml(value: Any) -> str:
    if isinstance(value, list):
        return "".join(f"<item>{_xml(v)}</item>" for v in value)
    if isinstance(value, dict):
        return "".join(f"<{k}>{_xml(v)}</{k}>" for k, v in value.items())
    return _as_text(value)


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return {}


def _tool_message(name: str, arguments: Any) -> dict[str, Any]:
    call = {"id": "call_1", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(arguments)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _chunks(message: dict[str, Any], model: str) -> Iterator[dict[str, Any]]:
    """The message as a stream of chat-completion chunks, a few characters each."""
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model}
    content = message.get("content") or ""
    for start in range(0, len(content), 7):
        delta = {"role": "assistant", "content": content[start : start + 7]}
        yield {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    if message.get("tool_calls"):
        calls = [{"index": 0, **message["tool_calls"][0]}]
        yield {**head, "choices": [{"index": 0, "delta": {"tool_calls": calls}}]}
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    yield {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    yield {**head, "choices": [], "usage": _USAGE}


class _Handler(BaseHTTPRequestHandler):
    counter = itertools.count(1)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        message = reply_for(body)
        model = body.get("model", "model")
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for chunk in _chunks(message, model):
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            return
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        answer = {
            "id": f"chatcmpl-{next(self.counter)}",
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": _USAGE,
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class FormatServer:
    """The server on a free loopback port, in a daemon thread (a context manager)."""

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FormatServer:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


if __name__ == "__main__":
    with FormatServer() as server:
        print(server.base, flush=True)
        sys.stdin.read()
