"""The calls a model makes: `ToolCall` and `ToolCalls`, read, checked, run and kept.

They read the usual shapes (a ``{"tool_calls": [...]}`` object, a bare list, a single call,
OpenAI's wire form) where each has exactly one meaning, check calls against the tools
offered, run them in order and keep each result so the exchange can be replayed into a
conversation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import pydantic
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator
from pydantic.json_schema import (
    SkipJsonSchema,
)

from structio._util.data import jsonable
from structio.exceptions import ToolCallError, UsageError
from structio.tools.tool import Tool, _clip, _coerce_tool

__all__ = ["ToolCall", "ToolCalls", "ToolsLike"]

#: Tools given as a list (of `Tool` objects or plain functions) or by name.
ToolsLike = Sequence[Any] | Mapping[str, Any]


# Keys of a call as a model or a provider writes it; anything else has no agreed meaning.
_CALL_KEYS = frozenset({"name", "args", "arguments", "id"})


# `index` is the call's place among parallel calls: OpenAI's stream deltas carry it, and so
# do litellm's translation of Anthropic's `tool_use` and some OpenAI-compatible servers'
# whole responses. It says nothing the list's order does not.
_OPENAI_CALL_KEYS = frozenset({"id", "type", "function", "index"})


_OPENAI_FUNCTION_KEYS = frozenset({"name", "arguments"})


def _schema_without_description(schema: dict[str, Any]) -> None:
    # The docstrings below are for programmers; the schema a model sees is DSPy's, bare.
    schema.pop("description", None)


class ToolCall(BaseModel):
    """One call a model asked for: a tool's name and its arguments.

    Besides the fields, a call may carry the tool it is bound to (see `ToolCalls.bind`) and,
    once executed, the tool's result or exception, so that the exchange can be replayed into
    a conversation. Calls compare by their fields only.

    Input is read leniently where the shape has one meaning: ``arguments`` is another name
    for ``args``, ``args`` given as a JSON string of an object is decoded, and OpenAI's wire
    form ``{"id": ..., "type": "function", "function": {"name": ..., "arguments": "..."}}`` is
    read with its id. Unknown keys are refused.

    Attributes:
        name: The tool's name.
        args: The arguments by name.
        id: The provider's id for the call, if it gave one. Not part of the JSON schema nor
            of a dump: the model writes calls without ids, and a call written into a prompt
            (a demo, a history turn in text mode) is shown as DSPy shows it.
    """

    model_config = ConfigDict(json_schema_extra=_schema_without_description)

    name: str
    args: dict[str, Any]
    id: SkipJsonSchema[str | None] = Field(default=None, exclude=True)

    _tool: Tool | None = PrivateAttr(default=None)
    _result: Any = PrivateAttr(default=None)
    _error: BaseException | None = PrivateAttr(default=None)
    _executed: bool = PrivateAttr(default=False)

    @model_validator(mode="before")
    @classmethod
    def _read_call(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        if "function" in data:
            return _read_openai_call(data)
        unknown = sorted(str(k) for k in data if k not in _CALL_KEYS)
        if unknown:
            raise ValueError(
                f"a tool call has `name` and `args` (and maybe `id`), not {_keys(unknown)}"
            )
        if "args" in data and "arguments" in data:
            raise ValueError("a tool call gives both `args` and `arguments`; give one")
        call = {k: v for k, v in data.items() if k != "arguments"}
        if "arguments" in data:
            call["args"] = data["arguments"]
        if isinstance(call.get("args"), str):
            call["args"] = _decode_args(call["args"], call.get("name"))
        return call

    @property
    def tool(self) -> Tool | None:
        """The tool the call is bound to, if any."""
        return self._tool

    @property
    def executed(self) -> bool:
        """Whether the tool has run for this call (returned or raised)."""
        return self._executed

    @property
    def result(self) -> Any:
        """What the tool returned (``None`` if it raised: see `error`).

        Raises:
            UsageError: The call has not been executed.
        """
        if not self._executed:
            raise UsageError(f"the call to `{self.name}` has not been executed yet")
        return self._result

    @property
    def error(self) -> BaseException | None:
        """The exception the tool raised when executed, or ``None``."""
        return self._error

    def bind(self, tools: ToolsLike) -> ToolCall:
        """A copy of the call with its arguments validated and its tool bound.

        Args:
            tools: The tools offered: a list of `Tool` objects or functions, or a mapping of
                name to tool or function.

        Raises:
            ToolCallError: No tool has the call's name, or the arguments do not fit.
        """
        return self._bound(_tool_map(tools))

    def _bound(self, tools: Mapping[str, Tool]) -> ToolCall:
        tool = self._find(tools)
        bound = ToolCall(name=self.name, args=tool.validate_args(self.args), id=self.id)
        bound._tool = tool
        return bound

    def _find(self, tools: Mapping[str, Tool]) -> Tool:
        tool = tools.get(self.name)
        if tool is None:
            have = ", ".join(f"`{n}`" for n in tools) if tools else "none"
            raise ToolCallError(
                f"no tool named `{self.name}`; the tools are: {have}",
                tool=self.name,
                args=self.args,
            )
        return tool

    def _resolve(
        self, tools: ToolsLike | Mapping[str, Tool] | None, functions: ToolsLike | None = None
    ) -> Tool:
        if functions is not None:  # DSPy's keyword for the same thing
            if tools is not None:
                raise UsageError("give the tools once: tools= or functions=")
            tools = functions
        if tools is not None:
            return self._find(_tool_map(tools))
        if self._tool is None:
            raise UsageError(
                f"the call to `{self.name}` is bound to no tool: pass tools=..., or bind first"
            )
        return self._tool

    def execute(self, tools: ToolsLike | None = None, *, functions: ToolsLike | None = None) -> Any:
        """Run the call and keep its result.

        Args:
            tools: The tools to look the call's name up in; by default the bound tool.
            functions: The same, by DSPy's name (``call.execute(functions=[...])``).

        Returns:
            What the tool returned (also kept in `result`).

        Raises:
            ToolCallError: No tool has the call's name, or the arguments do not fit.
            UsageError: No tools were given and none is bound, or the tool is async (and
                ``allow_tool_async_sync_conversion`` is not in effect).
        """
        tool = self._resolve(tools, functions)
        instance = tool._validate(self.args)
        tool._check_sync("await call.aexecute(...)")
        try:
            result = tool._invoke(instance)
        except BaseException as exc:
            self._finish(None, exc)
            raise
        self._finish(result, None)
        return result

    async def aexecute(
        self, tools: ToolsLike | None = None, *, functions: ToolsLike | None = None
    ) -> Any:
        """Run the call, awaiting an async tool, and keep its result.

        Args:
            tools: The tools to look the call's name up in; by default the bound tool.
            functions: The same, by DSPy's name (``call.execute(functions=[...])``).

        Returns:
            What the tool returned (also kept in `result`).

        Raises:
            ToolCallError: No tool has the call's name, or the arguments do not fit.
            UsageError: No tools were given and none is bound.
        """
        tool = self._resolve(tools, functions)
        instance = tool._validate(self.args)
        try:
            result = await tool._ainvoke(instance)
        except BaseException as exc:
            self._finish(None, exc)
            raise
        self._finish(result, None)
        return result

    def _finish(self, result: Any, error: BaseException | None) -> None:
        self._result = result
        self._error = error
        self._executed = True

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolCall):
            return NotImplemented
        return (self.name, self.args, self.id) == (other.name, other.args, other.id)


class ToolCalls(BaseModel):
    """The tool calls a model answered with, in order.

    Read leniently where the shape has one meaning: ``{"tool_calls": [...]}``, a bare list of
    calls, or a single call; each call as `ToolCall` reads it. Anything else is a pydantic
    `ValidationError`. A `ToolCalls` behaves as a sequence of its calls (``len``, iteration,
    indexing) and is true when it has any.

    Construct with ``ToolCalls([...])``, ``ToolCalls(tool_calls=[...])``,
    ``ToolCalls.from_calls([...])`` or, from a provider's response, ``ToolCalls.from_openai``.

    Attributes:
        tool_calls: The calls.
    """

    model_config = ConfigDict(json_schema_extra=_schema_without_description)

    tool_calls: list[ToolCall]
    # The provider's reasoning blocks of the reply that made these calls, replayed with them
    # in a later turn (Anthropic refuses a tool result whose call lost its thinking block).
    _reasoning_items: tuple[Mapping[str, Any], ...] = PrivateAttr(default=())

    @property
    def reasoning_items(self) -> tuple[Mapping[str, Any], ...]:
        """The provider's own reasoning blocks that came with these calls (often none).

        Anthropic's thinking blocks with their signatures, the Responses API's reasoning
        items: a conversation that replays the calls (a `History` turn holding them)
        sends these back unchanged, as the provider requires.
        """
        return self._reasoning_items

    @classmethod
    def from_dict_list(cls, tool_calls_dicts: Sequence[Mapping[str, Any]]) -> ToolCalls:
        """Calls from a list of ``{"name": ..., "args": ...}`` dicts (DSPy's name)."""
        return cls(list(tool_calls_dicts))

    @classmethod
    def description(cls) -> str:
        """How a model is told to write tool calls (DSPy's ``ToolCalls.description()``)."""
        return cls.prompt_description()

    def __init__(self, tool_calls: Any = None, /, **data: Any) -> None:
        if tool_calls is not None:
            if "tool_calls" in data:
                raise UsageError("give the tool calls once: positionally or as tool_calls=")
            data["tool_calls"] = tool_calls
        super().__init__(**data)

    @model_validator(mode="before")
    @classmethod
    def _read_calls(cls, data: Any) -> Any:
        if isinstance(data, (list, tuple)):
            return {"tool_calls": data}
        if not isinstance(data, Mapping):
            return data
        if "tool_calls" in data:
            if len(data) != 1:
                others = sorted(str(k) for k in data if k != "tool_calls")
                raise ValueError(f"tool calls have only `tool_calls`, not {_keys(others)}")
            return data
        if data and all(k in _CALL_KEYS or k in _OPENAI_CALL_KEYS for k in data):
            return {"tool_calls": [data]}
        return data

    @classmethod
    def from_calls(cls, calls: Sequence[ToolCall | Mapping[str, Any]]) -> ToolCalls:
        """Calls from a list of calls, each a `ToolCall` or ``{"name": ..., "args": ...}``."""
        return cls.model_validate({"tool_calls": list(calls)})

    @classmethod
    def from_openai(
        cls,
        tool_calls: Sequence[Any],
        reasoning_items: Sequence[Mapping[str, Any]] | None = None,
    ) -> ToolCalls:
        """Calls from a provider's ``message.tool_calls`` (OpenAI's form), ids kept.

        Args:
            tool_calls: Each a mapping (or a pydantic object) of the form ``{"id": ...,
                "type": "function", "function": {"name": ..., "arguments": "<JSON>"}}``.
            reasoning_items: The reply's own reasoning blocks (`Completion.reasoning_items`),
                kept to be replayed with the calls.

        Raises:
            ToolCallError: A call is malformed, or its arguments are not a JSON object; the
                message names the tool and shows the text.
        """
        calls: list[ToolCall] = []
        for index, raw in enumerate(tool_calls):
            item = raw.model_dump() if isinstance(raw, BaseModel) else raw
            function = item.get("function") if isinstance(item, Mapping) else None
            name = function.get("name") if isinstance(function, Mapping) else None
            name = name if isinstance(name, str) else "?"
            if not isinstance(function, Mapping):
                raise ToolCallError(
                    f"tool call {index} is not in OpenAI's form ({{'id': ..., 'type': "
                    f"'function', 'function': {{'name': ..., 'arguments': ...}}}}): "
                    f"{_clip(repr(raw))}",
                    tool=name,
                )
            try:
                calls.append(ToolCall.model_validate(item))
            except pydantic.ValidationError as exc:
                reasons = "; ".join(_reason(e) for e in exc.errors(include_url=False))
                raise ToolCallError(
                    f"tool call {index} to `{name}`: {reasons}", tool=name
                ) from None
        made = cls(tool_calls=calls)
        made._reasoning_items = tuple(reasoning_items or ())
        return made

    def to_openai(self) -> list[dict[str, Any]]:
        """The calls in OpenAI's form (an assistant message's ``tool_calls``).

        A call without an id gets ``call_<index>`` here (the call itself is not changed).
        """
        return [
            {
                "id": call.id if call.id is not None else f"call_{index}",
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(jsonable(call.args))},
            }
            for index, call in enumerate(self.tool_calls)
        ]

    def bind(self, tools: ToolsLike) -> ToolCalls:
        """New calls checked against the tools offered, each bound to its tool.

        Each call's arguments are validated (`Tool.validate_args`) and become the validated
        values; ids are kept; `execute` then needs no tools.

        Args:
            tools: A list of `Tool` objects or functions, or a mapping of name to either.

        Raises:
            ToolCallError: A call names no tool offered (the message lists them), or its
                arguments do not fit.
        """
        table = _tool_map(tools)
        bound = ToolCalls(tool_calls=[call._bound(table) for call in self.tool_calls])
        bound._reasoning_items = self._reasoning_items
        return bound

    def execute(self, tools: ToolsLike | None = None) -> list[Any]:
        """Run every call in order; each result is kept on its call.

        Args:
            tools: The tools to look the calls' names up in; by default each call's bound tool.

        Returns:
            The results, in the order of the calls.

        Raises:
            ToolCallError: A call names no tool, or its arguments do not fit.
            UsageError: No tools were given and a call is bound to none, or a tool is async.
        """
        table = None if tools is None else _tool_map(tools)
        return [call.execute(table) for call in self.tool_calls]

    async def aexecute(self, tools: ToolsLike | None = None) -> list[Any]:
        """Run every call in order, awaiting async tools; each result is kept on its call.

        The calls run one after another, never concurrently: a model writes them in an
        order, and tools' side effects (write, then read) often depend on it.

        Args:
            tools: The tools to look the calls' names up in; by default each call's bound tool.

        Returns:
            The results, in the order of the calls.

        Raises:
            ToolCallError: A call names no tool, or its arguments do not fit.
            UsageError: No tools were given and a call is bound to none.
        """
        table = None if tools is None else _tool_map(tools)
        return [await call.aexecute(table) for call in self.tool_calls]

    @classmethod
    def prompt_description(cls) -> str:
        """How a prompt describes the type to a model (DSPy's text)."""
        return (
            "Tool calls must be a JSON object with `tool_calls`, a list of calls. Each call "
            'must include `name` and `args`. Example: {"tool_calls": [{"name": "search", '
            '"args": {"query": "cats"}}]}'
        )

    def __len__(self) -> int:
        return len(self.tool_calls)

    def __iter__(self) -> Iterator[ToolCall]:  # type: ignore[override]
        # The calls, as a sequence's iteration should be (not pydantic's (field, value) pairs).
        return iter(self.tool_calls)

    @overload
    def __getitem__(self, index: int) -> ToolCall: ...

    @overload
    def __getitem__(self, index: slice) -> ToolCalls: ...

    def __getitem__(self, index: int | slice) -> ToolCall | ToolCalls:
        if isinstance(index, slice):
            return ToolCalls(tool_calls=self.tool_calls[index])
        return self.tool_calls[index]

    def __bool__(self) -> bool:
        return bool(self.tool_calls)


def _tool_text(value: Any) -> str:
    # Serializing does not validate: a list of plain functions may reach here as it is.
    return str(value if isinstance(value, Tool) else _coerce_tool(value))


def _tool_map(tools: Any) -> dict[str, Tool]:
    if isinstance(tools, Mapping):
        table: dict[str, Tool] = {}
        for key, value in tools.items():
            if not isinstance(key, str):
                raise UsageError(f"tools by name need string names, got {key!r}")
            if isinstance(value, Tool):
                table[key] = value
            elif callable(value):
                table[key] = Tool(value, name=key)
            else:
                raise UsageError(f"tool `{key}` is not a Tool or a function: {value!r}")
        return table
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
        raise UsageError(
            "tools must be a list of Tool objects or functions, or a mapping of name to "
            f"either; got {type(tools).__name__}"
        )
    table = {}
    for value in tools:
        if isinstance(value, Tool):
            tool = value
        elif callable(value):
            tool = Tool(value)
        else:
            raise UsageError(f"not a Tool or a function: {value!r}")
        if tool.name in table and table[tool.name] != tool:
            raise UsageError(f"two different tools are named `{tool.name}`")
        table[tool.name] = tool
    return table


def _read_openai_call(data: Mapping[Any, Any]) -> dict[str, Any]:
    unknown = sorted(str(k) for k in data if k not in _OPENAI_CALL_KEYS)
    if unknown:
        raise ValueError(
            f"an OpenAI tool call has `id`, `type`, `function` and maybe `index`, "
            f"not {_keys(unknown)}"
        )
    index = data.get("index")
    if index is not None and (type(index) is not int or index < 0):
        raise ValueError(f"a tool call's `index` is a count from 0, not {_clip(repr(index))}")
    if "type" in data and data["type"] != "function":
        raise ValueError(
            f"an OpenAI tool call has type 'function', not {_clip(repr(data['type']))}"
        )
    function = data["function"]
    if not isinstance(function, Mapping):
        raise ValueError(f"`function` must be an object, got {type(function).__name__}")
    unknown = sorted(str(k) for k in function if k not in _OPENAI_FUNCTION_KEYS)
    if unknown:
        raise ValueError(f"`function` has `name` and `arguments`, not {_keys(unknown)}")
    if "arguments" not in function:
        raise ValueError("`function` has no `arguments`")
    name = function.get("name")
    arguments = function["arguments"]
    if isinstance(arguments, str):
        arguments = _decode_args(arguments, name)
    call: dict[str, Any] = {"args": arguments}
    if "name" in function:
        call["name"] = name
    if "id" in data:
        call["id"] = data["id"]
    return call


def _decode_args(text: str, name: Any) -> dict[str, Any]:
    who = f"`{name}`" if isinstance(name, str) else "the tool"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise ValueError(
            f"the arguments of {who} are not valid JSON ({reason}): {_clip(repr(text))}"
        ) from None
    if not isinstance(value, dict):
        raise ValueError(
            f"the arguments of {who} must be a JSON object, got {type(value).__name__}: "
            f"{_clip(repr(text))}"
        )
    return value


def _reason(error: Any) -> str:
    where = ".".join(str(p) for p in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def _keys(names: Sequence[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


# DSPy's spelling of the call type, ``dspy.ToolCalls.ToolCall(name=..., args=...)``.
ToolCalls.ToolCall = ToolCall  # type: ignore[attr-defined]
