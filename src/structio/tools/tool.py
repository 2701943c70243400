"""`Tool`: a function a model may call, its argument schema, and calling it checked.

`Tool` wraps a Python function (sync or async): its name, its description (the docstring,
as written) and the JSON schema of each argument, from the signature's type hints, shown to
the model as DSPy shows them (so prompts match DSPy's byte for byte), and a pydantic model
of the arguments that validates every call. Calling a tool
validates the arguments first, so a model's mistake becomes a `ToolCallError` that names the
argument, never a `TypeError` deep inside the function.

What a model answers with, `ToolCall` and `ToolCalls`, is in `structio.tools.calls`.
"""

from __future__ import annotations

import copy
import functools
import inspect
import re
import typing
from collections.abc import Callable, Mapping
from typing import Any, cast

import pydantic
import pydantic_core
from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import (
    GenerateJsonSchema,
    JsonSchemaValue,
    JsonSchemaWarningKind,
)
from pydantic_core import CoreSchema, core_schema

from structio.exceptions import ToolCallError, UsageError

__all__ = ["Tool", "set_sync_conversion_reader"]


def _never() -> bool:
    return False


# Whether a sync call may run an async tool to its end (DSPy's
# `allow_tool_async_sync_conversion`). The setting lives in `structio.settings`, a layer
# above tools, which registers how to read it (`set_sync_conversion_reader`): tools read it
# through this function, never import the settings. Until then, never.
_sync_conversion: Callable[[], bool] = _never


def set_sync_conversion_reader(reader: Callable[[], bool]) -> None:
    """Register how tools read whether a sync call may run an async tool (`settings` does)."""
    global _sync_conversion
    _sync_conversion = reader


def _run_to_end(coroutine: Any) -> Any:
    """Run ``coroutine`` to its end from sync code, and return what it returns.

    With no event loop running here, ``asyncio.run``. Inside a running loop (a sync tool
    call from async code), a loop cannot be nested: the coroutine runs in a new loop in
    another thread, with this context's variables, while this thread waits.
    """
    import asyncio  # imported here: asyncio costs ~25 ms at import structio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    import contextvars
    from concurrent.futures import ThreadPoolExecutor

    context = contextvars.copy_context()
    with ThreadPoolExecutor(1, thread_name_prefix="structio-tool") as pool:
        return pool.submit(context.run, asyncio.run, coroutine).result()


_ARGS_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params)\s*:\s*$")
_ARG_ENTRY = re.compile(r"^(\w+)\s*(?:\([^)]*\))?\s*:(.*)$")


# JSON Schema keywords whose values are schemas, lists of schemas, or maps of name to schema;
# every other keyword holds data (defaults, enums, examples) and is left untouched.
_SUBSCHEMA = frozenset(
    {"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else"}
    | {"unevaluatedItems", "unevaluatedProperties"}
)
_SUBSCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SUBSCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})


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
        desc: The same, by DSPy's name (``Tool(f, desc="...")``); give one or the other.
        **dspy_options: DSPy's ``args``, ``arg_types`` and ``arg_desc``: refused with a
            `UsageError` saying where structio reads them from.

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
        desc: str | None = None,
        **dspy_options: Any,
    ) -> None:
        if dspy_options:  # DSPy's args=, arg_types=, arg_desc=: the function declares them
            raise UsageError(
                f"Tool takes no {', '.join(map(repr, dspy_options))}: the arguments, their "
                "types and descriptions come from the function's signature and its "
                "docstring's Args: section; wrap the function to change them"
            )
        if desc is not None:  # DSPy's keyword for the description
            if description is not None:
                raise UsageError("give the tool's description once: description= or desc=")
            description = desc
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
    def desc(self) -> str:
        """The description, by DSPy's name for it (``tool.desc``)."""
        return self._description

    @property
    def arg_types(self) -> dict[str, Any]:
        """Each parameter's type annotation (DSPy's ``Tool.arg_types``)."""
        fields = self._model.model_fields
        return {param: fields[field].annotation for field, param in self._fields}

    @property
    def arg_desc(self) -> dict[str, str]:
        """Each parameter's description from the docstring's Args section (DSPy's name)."""
        fields = self._model.model_fields
        found = ((param, fields[field].description) for field, param in self._fields)
        return {param: text for param, text in found if text}

    @property
    def has_kwargs(self) -> bool:
        """Whether the function takes ``**kwargs``: never, a tool's arguments are declared."""
        return False

    def format_as_litellm_function_call(self) -> dict[str, Any]:
        """The tool as an OpenAI ``tools`` entry: DSPy's name for `to_openai`."""
        return self.to_openai()

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
            UsageError: The function is async (use `acall`), and
                ``configure(allow_tool_async_sync_conversion=True)`` is not in effect.
        """
        self._check_sync("await tool.acall(...)")
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

    def _check_sync(self, instead: str) -> None:
        """Refuse a sync call of an async tool unless the setting allows it to run to its end."""
        if self._is_async and not _sync_conversion():
            raise UsageError(
                f"{self._name} is async: use {instead}, or let sync calls run it with "
                "structio.configure(allow_tool_async_sync_conversion=True)"
            )

    def _invoke(self, instance: BaseModel) -> Any:
        self._check_sync("await tool.acall(...)")
        if self._is_async:
            return _run_to_end(self._func(**self._kwargs(instance)))
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
