"""Tools a model may call, and the calls it makes.

`Tool` wraps a Python function (sync or async): its name, its description (the docstring,
as written) and the JSON schema of each argument, from the signature's type hints, shown to
the model as DSPy shows them (so prompts match DSPy's byte for byte), and a pydantic model
of the arguments that validates every call. Calling a tool
validates the arguments first, so a model's mistake becomes a `ToolCallError` that names the
argument, never a `TypeError` deep inside the function.

`ToolCall` and `ToolCalls` are what a model answers with: they read the usual shapes (a
``{"tool_calls": [...]}`` object, a bare list, a single call, OpenAI's wire form) where each
has exactly one meaning, check calls against the tools offered, run them in order and keep
each result so the exchange can be replayed into a conversation.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import re
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, cast, overload

import pydantic
import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator
from pydantic.json_schema import (
    GenerateJsonSchema,
    JsonSchemaValue,
    JsonSchemaWarningKind,
    SkipJsonSchema,
)
from pydantic_core import CoreSchema, core_schema

from structio._util.data import jsonable
from structio.exceptions import ToolCallError, UsageError

__all__ = ["Tool", "ToolCall", "ToolCalls"]

#: Tools given as a list (of `Tool` objects or plain functions) or by name.
ToolsLike = Sequence[Any] | Mapping[str, Any]

_ARGS_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params)\s*:\s*$")
_ARG_ENTRY = re.compile(r"^(\w+)\s*(?:\([^)]*\))?\s*:(.*)$")

# Keys of a call as a model or a provider writes it; anything else has no agreed meaning.
_CALL_KEYS = frozenset({"name", "args", "arguments", "id"})
_OPENAI_CALL_KEYS = frozenset({"id", "type", "function"})
_OPENAI_FUNCTION_KEYS = frozenset({"name", "arguments"})

# JSON Schema keywords whose values are schemas, lists of schemas, or maps of name to schema;
# every other keyword holds data (defaults, enums, examples) and is left untouched.
_SUBSCHEMA = frozenset(
    {"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else"}
    | {"unevaluatedItems", "unevaluatedProperties"}
)
_SUBSCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SUBSCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})


def _schema_without_description(schema: dict[str, Any]) -> None:
    # The docstrings below are for programmers; the schema a model sees is DSPy's, bare.
    schema.pop("description", None)


class _ArgsSchema(GenerateJsonSchema):
    # A default that is not JSON data (an object, a sentinel) is left out of the schema; the
    # parameter still is optional. Ignored so that pydantic's warning does not reach users.
    ignored_warning_kinds: set[JsonSchemaWarningKind] = {  # noqa: RUF012
        "skipped-choice",
        "non-serializable-default",
    }


class Tool:
    """A function a model may call: its name, description and argument schema.

    The model is shown the docstring as written (its ``Args:`` section says what each
    argument means) and each argument's JSON schema from its type hint (references inlined,
    then the default), as DSPy shows them. The arguments are validated by `args_model`, a
    pydantic model built from the signature, whose fields carry the ``Args:`` descriptions.
    Tools are called with keyword arguments only, so ``*args``, ``**kwargs`` and
    positional-only parameters are refused.

    Example::

        def get_weather(city: str, unit: str = "C") -> str:
            \"\"\"Get the weather for a city.\"\"\"
            ...

        tool = Tool(get_weather)
        tool.to_openai()  # the OpenAI `tools` entry
        tool(city="Paris")  # validated, then called

    A `Tool` is immutable, compares by (function, name, description), and can be declared in
    pydantic models and signatures (``list[Tool]``): a plain function is wrapped, and in JSON
    a tool is its `str` text.

    Args:
        func: The function, sync or async.
        name: The name the model calls it by; defaults to the function's ``__name__``.
        description: What it does; defaults to the docstring as written (empty if none).

    Raises:
        UsageError: The function cannot be a tool: a parameter that cannot be passed by
            keyword, a type hint that cannot be resolved, or a type pydantic cannot validate.
    """

    __slots__ = (
        "_args",
        "_description",
        "_fields",
        "_func",
        "_is_async",
        "_model",
        "_name",
        "_required",
    )

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
    ) -> None:
        if isinstance(func, Tool):
            raise UsageError(f"{func!r} is already a Tool; pass its function (tool.func)")
        if not callable(func):
            raise UsageError(f"a tool needs a callable, got {type(func).__name__}")
        if name is not None and not isinstance(name, str):
            raise UsageError(f"a tool's name must be a string, got {type(name).__name__}")
        if description is not None and not isinstance(description, str):
            raise UsageError(
                f"a tool's description must be a string, got {type(description).__name__}"
            )
        target = _unwrap(func)
        self._func = func
        self._name = name if name is not None else _default_name(func)
        doc = inspect.getdoc(target) or ""
        # The docstring as written, as DSPy shows it (its Args section tells the model
        # what each argument means).
        raw = getattr(target, "__doc__", None) if not isinstance(target, type) else None
        raw = raw if isinstance(raw, str) else doc
        self._description = description if description is not None else raw
        self._is_async = _is_async(func)
        # (field name in args_model, parameter name): pydantic reserves some names (`json`,
        # `model_dump`, `_x`), so such a parameter is a field under another name, aliased.
        self._fields: tuple[tuple[str, str], ...] = ()
        self._model = self._build_model(func, _arg_descriptions(doc))
        self._args, self._required = self._build_schema()

    def _build_model(self, func: Callable[..., Any], docs: Mapping[str, str]) -> type[BaseModel]:
        try:
            signature = inspect.signature(func)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"tool {self._name}: cannot read the signature ({exc})") from exc
        hints = _type_hints(func, self._name)
        taken = set(signature.parameters)
        fields: dict[str, Any] = {}
        pairs: list[tuple[str, str]] = []
        for index, param in enumerate(signature.parameters.values()):
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
                if param.kind is param.VAR_POSITIONAL:
                    kind = f"*{param.name}"
                elif param.kind is param.VAR_KEYWORD:
                    kind = f"**{param.name}"
                else:
                    kind = "positional-only"
                raise UsageError(
                    f"tool {self._name}: parameter `{param.name}` ({kind}) cannot be passed by "
                    "keyword; a tool is called with keyword arguments only"
                )
            annotation = hints.get(param.name, Any)
            field_name = param.name
            if _reserved(field_name):
                field_name = f"arg{index}_"
                while field_name in taken:
                    field_name += "_"
                taken.add(field_name)
            extra: dict[str, Any] = {}
            if param.name in docs:
                extra["description"] = docs[param.name]
            if field_name != param.name:
                extra["alias"] = param.name
            default = ... if param.default is param.empty else param.default
            fields[field_name] = (annotation, Field(default, **extra))
            pairs.append((field_name, param.name))
        self._fields = tuple(pairs)
        try:
            return pydantic.create_model(
                f"{self._name}_args",
                __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
                **fields,
            )
        except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError) as exc:
            raise UsageError(
                f"tool {self._name}: its arguments cannot be validated: {exc}"
            ) from exc

    def _build_schema(self) -> tuple[dict[str, Any], list[str]]:
        # DSPy's rules, so that prompts and `tools=` entries match it byte for byte: each
        # parameter is its type's own schema (references inlined, titles kept), then its
        # default; argument descriptions stay in the docstring, which the model is shown.
        signature = inspect.signature(self._func)
        hints = _type_hints(self._func, self._name)
        args: dict[str, Any] = {}
        required: list[str] = []
        for _, param in self._fields:
            parameter = signature.parameters[param]
            annotation = hints.get(param, Any)
            try:
                schema = pydantic.TypeAdapter(annotation).json_schema(schema_generator=_ArgsSchema)
            except pydantic.PydanticInvalidForJsonSchema as exc:
                raise UsageError(
                    f"tool {self._name}: argument `{param}` has no JSON schema: {exc}"
                ) from exc
            schema = _inline_refs(schema, schema.pop("$defs", {}))
            if parameter.default is inspect.Parameter.empty:
                required.append(param)
            else:
                default = _json_default(parameter.default)
                if default is not _MISSING:
                    schema["default"] = default
            args[param] = schema
        return args, required

    @property
    def func(self) -> Callable[..., Any]:
        """The wrapped function."""
        return self._func

    @property
    def name(self) -> str:
        """The name the model calls the tool by."""
        return self._name

    @property
    def description(self) -> str:
        """What the tool does (empty when the function has no docstring)."""
        return self._description

    @property
    def is_async(self) -> bool:
        """Whether the function is a coroutine function (call it with `acall`)."""
        return self._is_async

    @property
    def args_model(self) -> type[BaseModel]:
        """The pydantic model of the arguments (extra arguments are refused)."""
        return self._model

    @property
    def args(self) -> dict[str, Any]:
        """Each parameter's JSON schema (references inlined), then its default (a fresh copy)."""
        return copy.deepcopy(self._args)

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of all the arguments: the ``parameters`` of a function tool."""
        schema: dict[str, Any] = {
            "type": "object",
            "properties": copy.deepcopy(self._args),
            "required": list(self._required),
        }
        return schema

    def to_openai(self) -> dict[str, Any]:
        """The tool as an entry of an OpenAI chat request's ``tools`` list."""
        function: dict[str, Any] = {"name": self._name}
        if self._description:  # none rather than null: some providers refuse a null
            function["description"] = self._description
        function["parameters"] = self.parameters
        return {"type": "function", "function": function}

    def validate_args(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Validate arguments as a model gave them.

        Args:
            args: The arguments by name, as data (JSON-decoded) or Python values.

        Returns:
            The arguments given (defaults left out), as Python values of the declared types:
            a pydantic-model parameter is a model instance.

        Raises:
            ToolCallError: `args` is not a mapping, or an argument is missing, unknown or of
                the wrong type; the message names each.
        """
        instance = self._validate(args)
        given = instance.model_fields_set
        return {param: getattr(instance, field) for field, param in self._fields if field in given}

    def __call__(self, **kwargs: Any) -> Any:
        """Validate the arguments, then call the function with them.

        Raises:
            ToolCallError: The arguments do not fit the parameters.
            UsageError: The function is async (use `acall`).
        """
        if self._is_async:
            raise UsageError(f"{self._name} is async: use await tool.acall(...)")
        return self._invoke(self._validate(kwargs))

    async def acall(self, **kwargs: Any) -> Any:
        """Validate the arguments, then call the function: awaited if async, directly if not.

        Raises:
            ToolCallError: The arguments do not fit the parameters.
        """
        return await self._ainvoke(self._validate(kwargs))

    def _validate(self, args: Any) -> BaseModel:
        if not isinstance(args, Mapping):
            raise ToolCallError(
                f"{self._name}: the arguments must be an object of name to value, "
                f"got {type(args).__name__}",
                tool=self._name,
            )
        try:
            return self._model.model_validate(dict(args))
        except pydantic.ValidationError as exc:
            raise ToolCallError(self._problems(exc), tool=self._name, args=args) from None

    def _problems(self, exc: pydantic.ValidationError) -> str:
        parts: list[str] = []
        unknown = False
        for error in exc.errors(include_url=False):
            where = ".".join(str(p) for p in error["loc"])
            reason = error["msg"]
            if error["type"] in ("extra_forbidden", "invalid_key"):
                unknown = True
            elif error["type"] != "missing":
                reason += f" (got {_clip(repr(error['input']))})"
            parts.append(f"argument `{where}`: {reason}")
        message = f"{self._name}: " + "; ".join(parts)
        if unknown:
            names = ", ".join(f"`{p}`" for _, p in self._fields)
            message += f"; {self._name} takes " + (names or "no arguments")
        return message

    def _kwargs(self, instance: BaseModel) -> dict[str, Any]:
        return {param: getattr(instance, field) for field, param in self._fields}

    def _invoke(self, instance: BaseModel) -> Any:
        if self._is_async:
            raise UsageError(f"{self._name} is async: use await tool.acall(...)")
        return self._func(**self._kwargs(instance))

    async def _ainvoke(self, instance: BaseModel) -> Any:
        if self._is_async:
            return await self._func(**self._kwargs(instance))
        return self._func(**self._kwargs(instance))

    def __str__(self) -> str:
        # DSPy's wording, which prompts (and their golden files) show for a list of tools:
        # the description on one line, each newline two spaces.
        text = self._description.replace("\n", "  ")
        desc = f", whose description is <desc>{text}</desc>." if text else "."
        return f"{self._name}{desc} It takes arguments {self._args!r}."

    def __structio_json__(self) -> str:
        """The tool as JSON data (`structio._util.data.jsonable`): its `str` text."""
        return str(self)

    def __format__(self, format_spec: str) -> str:
        return format(str(self), format_spec)

    def __repr__(self) -> str:
        return f"Tool({self._name})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tool):
            return NotImplemented
        return (self._func, self._name, self._description) == (
            other._func,
            other._name,
            other._description,
        )

    def __hash__(self) -> int:
        # Not the function: a callable object may be unhashable, and equal tools share these.
        return hash((Tool, self._name, self._description))

    def __copy__(self) -> Tool:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Tool:
        # Immutable, and its args model is a class: copies would only cost a rebuild.
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_tool, (self._func, self._name, self._description))

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: pydantic.GetCoreSchemaHandler
    ) -> CoreSchema:
        """Let pydantic validate a `Tool` (a plain callable is wrapped) and show it as text."""
        return core_schema.no_info_plain_validator_function(
            _coerce_tool,
            serialization=core_schema.plain_serializer_function_ser_schema(str, when_used="json"),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: CoreSchema, handler: pydantic.GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """A tool in JSON is its `str` text."""
        return {"type": "string"}


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

    def _resolve(self, tools: ToolsLike | Mapping[str, Tool] | None) -> Tool:
        if tools is not None:
            return self._find(_tool_map(tools))
        if self._tool is None:
            raise UsageError(
                f"the call to `{self.name}` is bound to no tool: pass tools=..., or bind first"
            )
        return self._tool

    def execute(self, tools: ToolsLike | None = None) -> Any:
        """Run the call and keep its result.

        Args:
            tools: The tools to look the call's name up in; by default the bound tool.

        Returns:
            What the tool returned (also kept in `result`).

        Raises:
            ToolCallError: No tool has the call's name, or the arguments do not fit.
            UsageError: No tools were given and none is bound, or the tool is async.
        """
        tool = self._resolve(tools)
        instance = tool._validate(self.args)
        if tool.is_async:
            raise UsageError(f"{tool.name} is async: use await call.aexecute(...)")
        try:
            result = tool._invoke(instance)
        except BaseException as exc:
            self._finish(None, exc)
            raise
        self._finish(result, None)
        return result

    async def aexecute(self, tools: ToolsLike | None = None) -> Any:
        """Run the call, awaiting an async tool, and keep its result.

        Args:
            tools: The tools to look the call's name up in; by default the bound tool.

        Returns:
            What the tool returned (also kept in `result`).

        Raises:
            ToolCallError: No tool has the call's name, or the arguments do not fit.
            UsageError: No tools were given and none is bound.
        """
        tool = self._resolve(tools)
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
    def from_openai(cls, tool_calls: Sequence[Any]) -> ToolCalls:
        """Calls from a provider's ``message.tool_calls`` (OpenAI's form), ids kept.

        Args:
            tool_calls: Each a mapping (or a pydantic object) of the form ``{"id": ...,
                "type": "function", "function": {"name": ..., "arguments": "<JSON>"}}``.

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
        return cls(tool_calls=calls)

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
        return ToolCalls(tool_calls=[call._bound(table) for call in self.tool_calls])

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


_MISSING: Any = object()


def _rebuild_tool(func: Callable[..., Any], name: str, description: str) -> Tool:
    return Tool(func, name=name, description=description)


def _coerce_tool(value: Any) -> Tool:
    if isinstance(value, Tool):
        return value
    if callable(value):
        # A function that cannot be a tool raises UsageError: a mistake in the code, which
        # must not pass for invalid data.
        return Tool(value)
    raise ValueError(f"expected a Tool or a function, got {type(value).__name__}")


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
            f"an OpenAI tool call has `id`, `type` and `function`, not {_keys(unknown)}"
        )
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


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _unwrap(func: Any) -> Any:
    while isinstance(func, functools.partial):
        func = func.func
    return func


def _default_name(func: Any) -> str:
    target = _unwrap(func)
    name = getattr(target, "__name__", None)
    return name if isinstance(name, str) else type(target).__name__


def _is_async(func: Any) -> bool:
    target = _unwrap(func)
    if inspect.iscoroutinefunction(target):
        return True
    if inspect.isroutine(target) or isinstance(target, type):
        return False
    # A callable object whose __call__ is async.
    return inspect.iscoroutinefunction(type(target).__call__)


def _type_hints(func: Any, name: str) -> dict[str, Any]:
    target = _unwrap(func)
    if isinstance(target, type):
        target = cast(Any, target).__init__
    elif not inspect.isroutine(target):
        target = type(target).__call__
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception as exc:
        # A name that cannot be resolved (a type defined inside a function, under
        # `from __future__ import annotations`) would otherwise become a wrong schema.
        raise UsageError(
            f"tool {name}: cannot resolve its type hints ({type(exc).__name__}: {exc}); "
            "define the types at module level"
        ) from exc


def _reserved(name: str) -> bool:
    return name.startswith("_") or name.startswith("model_") or hasattr(BaseModel, name)


def _arg_descriptions(doc: str) -> dict[str, str]:
    lines = doc.splitlines()
    found: dict[str, str] = {}
    start = next((i for i, line in enumerate(lines) if _ARGS_SECTION.match(line)), None)
    if start is None:
        return found
    header_indent = _indent(lines[start])
    entry_indent: int | None = None
    current: str | None = None
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        indent = _indent(line)
        if indent <= header_indent:
            break
        if entry_indent is None:
            entry_indent = indent
        if indent <= entry_indent:
            match = _ARG_ENTRY.match(line.strip())
            current = match.group(1) if match else None
            if current is not None and match is not None:
                found[current] = match.group(2)
        elif current is not None:
            found[current] += " " + line
    return {k: " ".join(v.split()) for k, v in found.items() if v.strip()}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _inline_refs(schema: Any, defs: Mapping[str, Any], depth: int = 0) -> Any:
    """``schema`` with every ``$ref`` into ``defs`` replaced by the definition itself."""
    if depth > 32:  # a recursive model: keep the reference rather than loop
        return schema
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and len(schema) == 1:
            target = defs.get(ref[len("#/$defs/") :])
            if target is not None:
                return _inline_refs(target, defs, depth + 1)
        return {k: _inline_refs(v, defs, depth) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_inline_refs(item, defs, depth) for item in schema]
    return schema


def _json_default(value: Any) -> Any:
    """A parameter's default as JSON data, or `_MISSING` when it has no JSON form."""
    try:
        return pydantic_core.to_jsonable_python(value)
    except pydantic_core.PydanticSerializationError:
        return _MISSING
