"""Prompt functions: a typed Python stub whose template and return type make a model call.

    @structio.prompt("Write a short poem about {topic}.")
    def poem(topic: str) -> str: ...

    poem("the sea")            # calls the model, returns the completion
    poem.format("the sea")     # 'Write a short poem about the sea.' (no call)

The parameters fill the template's ``{placeholders}`` (``str.format`` syntax: ``{x}``,
``{x.attr}``, ``{x[0]}``, ``{price:.2f}``); values are inserted once and never read as
template text again, so braces in them stay braces. Values render as in the adapters:
strings as they are, formatting classes (`BulletedList`...) and anything with its own
``__format__`` with it, other lists, dicts and models as JSON. A parameter annotated with a
formatting class turns a plain list or dict into it.

The return annotation is the output. ``str`` (or none) takes the completion as the answer.
Any other type goes through an adapter (`ChatAdapter` unless ``adapter=``): a pydantic model
or a NamedTuple gives one output field per member and comes back as an instance, any other
type a single output field ``answer``. The docstring becomes the instructions.
"""

from __future__ import annotations

import functools
import inspect
import string
import typing
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Generator,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, overload

from structio import call as calling
from structio.adapters.base import Adapter
from structio.exceptions import FormatError, ParseError, SignatureError
from structio.lm.base import BaseLM
from structio.lm.types import AsyncLMStream, LMResponse, LMStream
from structio.media import has_markers
from structio.parsing.stream import StreamEvent
from structio.rendering.formatting import as_formatting, formatting_class, has_own_format
from structio.rendering.prompt import Part, Prompt, part_messages
from structio.rendering.text import prompt_text
from structio.settings import check_adapter, check_lm, resolve_adapter, resolve_lm
from structio.signatures.field import InputField, OutputField
from structio.signatures.signature import Signature, make_signature
from structio.streams import AsyncStream, AsyncTextStream, Stream, TextStream, list_outputs

__all__ = [
    "AssistantMessage",
    "ChatPromptFunction",
    "PromptFunction",
    "SystemMessage",
    "UserMessage",
    "chatprompt",
    "prompt",
]

R = TypeVar("R")
Role = Literal["system", "user", "assistant"]
_PROMPT_FIELD = "prompt"
_ANSWER_FIELD = "answer"


class _Plan:
    """What one call of a prompt function sends: plain messages, or a typed call's parts."""

    __slots__ = ("build", "inputs", "messages", "signature")

    def __init__(
        self,
        messages: list[dict[str, Any]],
        signature: type[Signature] | None = None,
        inputs: Mapping[str, Any] | None = None,
        build: calling.Builder | None = None,
    ) -> None:
        self.messages = messages
        self.signature = signature
        self.inputs = inputs
        self.build = build


@dataclass(frozen=True)
class _Message:
    content: str
    role: typing.ClassVar[Role]

    def __post_init__(self) -> None:
        if not isinstance(self.content, str):
            raise SignatureError(
                f"{type(self).__name__} takes a template string, not {type(self.content).__name__}"
            )


@dataclass(frozen=True)
class SystemMessage(_Message):
    """A system message template for `chatprompt`."""

    role: typing.ClassVar[Role] = "system"


@dataclass(frozen=True)
class UserMessage(_Message):
    """A user message template for `chatprompt`."""

    role: typing.ClassVar[Role] = "user"


@dataclass(frozen=True)
class AssistantMessage(_Message):
    """An assistant message template for `chatprompt` (an example answer, say)."""

    role: typing.ClassVar[Role] = "assistant"


class _Formatter(string.Formatter):
    """``str.format`` with the adapters' rendering of values, never re-reading them."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec or isinstance(value, str) or has_own_format(value):
            return format(value, format_spec)
        return prompt_text(value)


_FORMATTER = _Formatter()
_REQUIRED: Any = object()
# A template read once: (literal text, field name or None, conversion, format spec).
Piece = tuple[str, str | None, str | None, str]


def _compile(template: str) -> list[Piece]:
    return [
        (text, field, conversion, spec or "")
        for text, field, spec, conversion in (_FORMATTER.parse(template))
    ]


def _render(pieces: list[Piece], values: dict[str, Any]) -> str:
    """The template filled in; values are inserted once and never read as template text."""
    out: list[str] = []
    for text, field, conversion, spec in pieces:
        out.append(text)
        if field is None:
            continue
        if "." in field or "[" in field or "{" in spec:  # attributes, items, nested specs
            out.append(
                _FORMATTER.vformat("{" + _piece_source(field, conversion, spec) + "}", (), values)
            )
            continue
        value = values[field]
        if conversion is not None:
            value = _FORMATTER.convert_field(value, conversion)
        out.append(_FORMATTER.format_field(value, spec))
    return "".join(out)


def _piece_source(field: str, conversion: str | None, spec: str) -> str:
    return field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")


class _BasePromptFunction(Generic[R]):
    """What `prompt` and `chatprompt` functions share: binding, filling, calling."""

    def __init__(
        self,
        function: Callable[..., R],
        templates: Sequence[tuple[Role, str]],
        *,
        lm: BaseLM | None,
        adapter: Adapter | None,
        params: Mapping[str, Any],
        options: calling.CallOptions,
    ) -> None:
        # The stub's name, docstring and module, for help() and tracebacks.
        functools.update_wrapper(self, function)
        self._function = function
        self._name = getattr(function, "__qualname__", repr(function))
        self._templates = list(templates)
        self.lm = check_lm(lm)
        self.adapter = check_adapter(adapter)
        self.params = dict(params)
        #: How a typed return's call is made (re-asks, truncation, input checks).
        self.options = options
        self._parameters = inspect.signature(function)
        for parameter in self._parameters.parameters.values():
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                raise SignatureError(
                    f"{self._name}: *args and **kwargs cannot fill a template; "
                    f"declare each input as a parameter (got {parameter})"
                )
        try:
            hints = typing.get_type_hints(function)
        except Exception as exc:  # a NameError or TypeError from the user's annotations
            raise SignatureError(f"{self._name}: cannot read its annotations: {exc}") from exc
        self._formats = {
            name: klass
            for name, hint in hints.items()
            if name != "return" and (klass := formatting_class(hint)) is not None
        }
        self.return_type: Any = hints.get("return", str)
        for _, template in self._templates:
            self._check_template(template)
        self._compiled = [(role, _compile(template)) for role, template in self._templates]
        parameters = list(self._parameters.parameters.values())
        plain = all(p.kind is p.POSITIONAL_OR_KEYWORD for p in parameters)
        self._positional_names: tuple[str, ...] | None = (
            tuple(p.name for p in parameters) if plain else None
        )
        self._defaults_or_required: dict[str, Any] = {
            p.name: _REQUIRED if p.default is p.empty else p.default for p in parameters
        }
        self._signature: type[Signature] | None = None
        if self.return_type is not str:
            self._signature = _output_signature(
                self._name, self.return_type, inspect.getdoc(function)
            )
        self._check()

    def _check(self) -> None:
        """Checks a kind of prompt function adds (run at decoration)."""

    @property
    def lm_kwargs(self) -> dict[str, Any]:
        """The former name of `params`."""
        return self.params

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._name}>"

    def _check_template(self, template: str) -> None:
        try:
            fields = [f for _, f, _, _ in _FORMATTER.parse(template) if f is not None]
        except ValueError as exc:
            raise SignatureError(
                f"{self._name}: invalid template {template!r}: {exc} (write {{{{ and }}}} "
                "for literal braces)"
            ) from None
        names = list(self._parameters.parameters)
        for field in fields:
            root = field.split(".", 1)[0].split("[", 1)[0]
            if not root or root.isdigit():
                raise SignatureError(
                    f"{self._name}: placeholder {{{field}}} must name a parameter "
                    f"({', '.join(names) or 'none'})"
                )
            if root not in self._parameters.parameters:
                raise SignatureError(
                    f"{self._name}: placeholder {{{field}}} has no matching parameter; "
                    f"its parameters: {', '.join(names) or 'none'}"
                )

    def _arguments(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        values = self._bind_simply(args, kwargs)
        if values is None:  # inspect's binding: every kind of parameter, exact errors
            try:
                bound = self._parameters.bind(*args, **kwargs)
            except TypeError as exc:
                raise FormatError(f"{self._name}(): {exc}") from None
            bound.apply_defaults()
            values = dict(bound.arguments)
        for name, klass in self._formats.items():
            values[name] = as_formatting(values[name], klass)
        return values

    def _bind_simply(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any] | None:
        """The arguments by name when binding is plain (else ``None``: let inspect do it)."""
        names = self._positional_names
        if names is None or len(args) > len(names):
            return None
        values = dict(zip(names, args, strict=False))
        for name, value in kwargs.items():
            if name in values or name not in self._defaults_or_required:
                return None
            values[name] = value
        if len(values) < len(names):
            for name in names:
                if name not in values:
                    default = self._defaults_or_required[name]
                    if default is _REQUIRED:
                        return None
                    values[name] = default
        return values

    def _fill(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[dict[str, str]]:
        values = self._arguments(args, kwargs)
        return [
            {"role": role, "content": _render(pieces, values)} for role, pieces in self._compiled
        ]

    def _adapter(self) -> Adapter:
        return resolve_adapter(self.adapter)

    def _resolve(self) -> tuple[BaseLM, Adapter]:
        return resolve_lm(self.lm, who=self._name), self._adapter()

    def _text(self, response: LMResponse) -> Any:
        return response.completions[0].text if response.completions else ""

    def _built(self, result: calling.CallResult) -> R:
        built: R = self._build(result.outputs[0], self._text(result.responses[-1]))
        return built

    def _typed_stream(self, source: Generator[calling.StreamOut, None, None]) -> Stream[R]:
        def items() -> Iterator[StreamEvent | R]:
            try:
                for item in source:
                    yield self._built(item) if isinstance(item, calling.CallResult) else item
            finally:
                source.close()

        return Stream(items(), tuple(self._outputs()), list_outputs(self._signature))

    def _atyped_stream(self, source: AsyncGenerator[calling.StreamOut, None]) -> AsyncStream[R]:
        async def items() -> AsyncIterator[StreamEvent | R]:
            try:
                async for item in source:
                    yield self._built(item) if isinstance(item, calling.CallResult) else item
            finally:
                await source.aclose()

        return AsyncStream(items(), tuple(self._outputs()), list_outputs(self._signature))

    def _typed(self, plan: _Plan) -> tuple[Any, ...]:
        """The signature, demos, inputs and parameters of a typed return's call."""
        return (plan.signature, (), plan.inputs, self.params)

    def _plan(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Plan:
        """What a call with these arguments sends (each kind of prompt function says)."""
        raise NotImplementedError  # pragma: no cover - both kinds define it

    def __call__(self, *args: Any, **kwargs: Any) -> R:
        """Fill the template(s), call the model and return the typed answer.

        A typed answer goes through the call layer, as `Predict` does, with this function's
        `options`: re-asks (``max_retries``), the adapter's fallback, the prompt budget and
        the context-window cut. A ``str`` return takes the completion as it is.

        Raises:
            FormatError: An argument is missing or unknown.
            ParseError: A typed answer cannot be read from the completion.
            LMError: The provider failed.
        """
        plan = self._plan(args, kwargs)
        lm, adapter = self._resolve()
        if plan.signature is None:
            result: R = self._text(lm(plan.messages, **self.params))
            return result
        return self._built(
            calling.call(adapter, lm, *self._typed(plan), options=self.options, build=plan.build)
        )

    async def acall(self, *args: Any, **kwargs: Any) -> R:
        """Async form of calling the function."""
        plan = self._plan(args, kwargs)
        lm, adapter = self._resolve()
        if plan.signature is None:
            result: R = self._text(await lm.acall(plan.messages, **self.params))
            return result
        outcome = await calling.acall(
            adapter, lm, *self._typed(plan), options=self.options, build=plan.build
        )
        return self._built(outcome)

    @overload
    def stream(self: _BasePromptFunction[str], *args: Any, **kwargs: Any) -> TextStream: ...

    @overload
    def stream(self, *args: Any, **kwargs: Any) -> Stream[R]: ...

    def stream(self, *args: Any, **kwargs: Any) -> TextStream | Stream[R]:
        """Fill the template(s) and read the answer as the model writes it.

        A ``str`` return gives a `TextStream` of text pieces (``str(stream)`` is the whole
        text); a typed return gives a `Stream` of field events whose last item is the
        typed answer, as `Predict.stream` (the same options, re-asks and fallback).

        Raises:
            FormatError: An argument is missing or unknown (at once).
        """
        plan = self._plan(args, kwargs)
        lm, adapter = self._resolve()
        if plan.signature is None:
            return TextStream(_text_pieces(lm.stream(plan.messages, **self.params)))
        return self._typed_stream(
            calling.stream(adapter, lm, *self._typed(plan), options=self.options, build=plan.build)
        )

    @overload
    def astream(self: _BasePromptFunction[str], *args: Any, **kwargs: Any) -> AsyncTextStream: ...

    @overload
    def astream(self, *args: Any, **kwargs: Any) -> AsyncStream[R]: ...

    def astream(self, *args: Any, **kwargs: Any) -> AsyncTextStream | AsyncStream[R]:
        """Async form of `stream`."""
        plan = self._plan(args, kwargs)
        lm, adapter = self._resolve()
        if plan.signature is None:
            return AsyncTextStream(_atext_pieces(lm.astream(plan.messages, **self.params)))
        return self._atyped_stream(
            calling.astream(adapter, lm, *self._typed(plan), options=self.options, build=plan.build)
        )

    def _outputs(self) -> list[str]:
        return list(self._signature.output_fields) if self._signature is not None else []

    def _build(self, values: Mapping[str, Any], completion: str) -> Any:
        """The return value from the parsed output fields."""
        kind = self.return_type
        if _is_model(kind):
            from pydantic import ValidationError

            try:
                return kind.model_validate(dict(values))
            except ValidationError as exc:
                raise ParseError(
                    adapter="prompt function",
                    signature=self._signature,
                    completion=completion,
                    parsed=values,
                    problem=f"the answer is not a valid {kind.__name__}: {exc}",
                ) from None
        if _is_namedtuple(kind):
            return kind(**values)
        return values[_ANSWER_FIELD]


class PromptFunction(_BasePromptFunction[R]):
    """A function made by `prompt`: call it to run the model; `format` shows the prompt."""

    def format(self, *args: Any, **kwargs: Any) -> str:
        """The user prompt: the template filled with the arguments (no model call).

        Raises:
            FormatError: An argument is missing or unknown.
        """
        return self._fill(args, kwargs)[-1]["content"]

    def messages(self, *args: Any, **kwargs: Any) -> list[dict[str, str]]:
        """The messages a call sends (for a typed return, the adapter's, around the prompt)."""
        text = self.format(*args, **kwargs)
        if self._signature is None:
            return self._plain_messages(text)
        return self._adapter().format(self._signature, (), {_PROMPT_FIELD: text})

    def _plain_messages(self, text: str) -> list[dict[str, Any]]:
        doc = inspect.getdoc(self._function)
        system = [{"role": "system", "content": doc}] if doc else []
        return _sent([*system, {"role": "user", "content": text}])

    def _plan(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Plan:
        text = self.format(*args, **kwargs)
        if self._signature is None:
            return _Plan(self._plain_messages(text))
        return _Plan([], self._signature, {_PROMPT_FIELD: text})


class ChatPromptFunction(_BasePromptFunction[R]):
    """A function made by `chatprompt`: call it to run the model; `format` shows the chat."""

    def _check(self) -> None:
        if self._signature is not None and self._templates[-1][0] != "user":
            raise SignatureError(
                f"{self._name}: a chatprompt with a typed return must end with a "
                "UserMessage (the request the answer is read from)"
            )

    def format(self, *args: Any, **kwargs: Any) -> list[dict[str, str]]:
        """The messages: each template filled with the arguments (no model call).

        Raises:
            FormatError: An argument is missing or unknown.
        """
        return self._fill(args, kwargs)

    def messages(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        """The messages a call sends (for a typed return, with the adapter's instructions)."""
        chat = self.format(*args, **kwargs)
        if self._signature is None:
            return chat
        return self._request(chat, self._signature)(self._adapter())[1].messages

    def _request(self, chat: list[dict[str, str]], sig: type[Signature]) -> calling.Builder:
        """How to build the request with an adapter (the fallback builds its own)."""
        # The chat's system messages join the instructions; the adapter's system message
        # describes the answer; the last user message is the request, with its reminder.
        system = "\n\n".join(m["content"] for m in chat if m["role"] == "system")
        if system and inspect.getdoc(self._function):
            sig = sig.with_instructions(f"{sig.instructions}\n\n{system}")
        elif system:  # the system messages replace the default sentence
            sig = sig.with_instructions(system)
        turns = [m for m in chat if m["role"] != "system"]

        def build(adapter: Adapter) -> tuple[type[Signature], Prompt]:
            request = adapter.render(sig, (), {_PROMPT_FIELD: turns[-1]["content"]})
            parts = [request.parts[0]]
            parts += [
                Part(f"chat_{i}_{m['role']}", m["role"], m["content"])
                for i, m in enumerate(turns[:-1], 1)
            ]
            parts.append(request.parts[-1])
            return sig, Prompt(parts)

        return build

    def _plan(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Plan:
        chat = self.format(*args, **kwargs)
        if self._signature is None:
            return _Plan(_sent(chat))
        return _Plan([], self._signature, None, self._request(chat, self._signature))


def _sent(chat: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages as sent: an image (audio, file) in a user message becomes a content part."""
    if not any(has_markers(m["content"]) for m in chat if isinstance(m.get("content"), str)):
        return chat
    return part_messages(Part(f"message_{i}", m["role"], m["content"]) for i, m in enumerate(chat))


def prompt(
    template: str,
    *,
    lm: BaseLM | None = None,
    adapter: Adapter | None = None,
    **params: Any,
) -> Callable[[Callable[..., R]], PromptFunction[R]]:
    """Turn a typed function stub into a model call with ``template`` as the user prompt.

    Args:
        template: The prompt, with ``{parameter}`` placeholders (``str.format`` syntax).
        lm: The model; by default the one set with `structio.configure` at call time.
        adapter: How a typed return is asked for and read (`ChatAdapter` by default).
        **params: Request parameters for every call (``temperature``...), and the call
            options of a typed return (`CallOptions`: ``max_retries``,
            ``max_prompt_tokens``, ``truncation_step``, ``check_inputs``), taken out of
            them. A ``str`` return reads any completion: nothing is re-asked.

    Raises:
        SignatureError: At decoration: a placeholder names no parameter, the template is
            malformed, or the function takes ``*args`` / ``**kwargs``.
        ConfigurationError: A call option has a value it cannot take.
    """
    if not isinstance(template, str):
        raise SignatureError(
            f"@prompt takes a template string, not {type(template).__name__}; "
            "write @structio.prompt('...{x}...')"
        )

    options, request_params = calling.CallOptions.split(params)

    def decorate(function: Callable[..., R]) -> PromptFunction[R]:
        return PromptFunction(
            function,
            [("user", template)],
            lm=lm,
            adapter=adapter,
            params=request_params,
            options=options,
        )

    return decorate


def chatprompt(
    *messages: SystemMessage | UserMessage | AssistantMessage,
    lm: BaseLM | None = None,
    adapter: Adapter | None = None,
    **params: Any,
) -> Callable[[Callable[..., R]], ChatPromptFunction[R]]:
    """Turn a typed function stub into a model call with a list of message templates.

    For a typed return, the chat's system messages join the instructions, the adapter's
    system message describes the answer, and the answer is read from the completion of
    the last user message, with the adapter's fallback and the context-window retry, as for
    `Predict`.

    Request parameters and call options are taken from ``**params`` as by `prompt`.

    Raises:
        SignatureError: At decoration: no messages, something other than a message, a
            placeholder that names no parameter.
        ConfigurationError: A call option has a value it cannot take.
    """
    if not messages:
        raise SignatureError("@chatprompt needs at least one message template")
    for index, message in enumerate(messages):
        if not isinstance(message, _Message):
            raise SignatureError(
                f"@chatprompt message {index} must be SystemMessage, UserMessage or "
                f"AssistantMessage, not {type(message).__name__}"
            )
    templates = [(m.role, m.content) for m in messages]
    options, request_params = calling.CallOptions.split(params)

    def decorate(function: Callable[..., R]) -> ChatPromptFunction[R]:
        return ChatPromptFunction(
            function, templates, lm=lm, adapter=adapter, params=request_params, options=options
        )

    return decorate


def _is_model(kind: Any) -> bool:
    if not isinstance(kind, type):
        return False
    from pydantic import BaseModel

    return issubclass(kind, BaseModel)


def _is_namedtuple(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, tuple) and hasattr(kind, "_fields")


def _output_signature(name: str, kind: Any, doc: str | None) -> type[Signature]:
    """``prompt: str -> <outputs of kind>``, with the docstring as instructions."""
    fields: dict[str, Any] = {_PROMPT_FIELD: (str, InputField())}
    if _is_model(kind):
        for field_name, info in kind.model_fields.items():
            annotation = info.annotation if info.annotation is not None else Any
            fields[field_name] = (annotation, OutputField(desc=info.description))
    elif _is_namedtuple(kind):
        for field_name, annotation in typing.get_type_hints(kind).items():
            fields[field_name] = (annotation, OutputField())
    else:
        fields[_ANSWER_FIELD] = (kind, OutputField())
    if _PROMPT_FIELD in fields and len(fields) == 1:
        raise SignatureError(f"{name}: the return type {kind!r} has no fields")
    try:
        return make_signature(fields, doc or None, name=_class_name(name))
    except SignatureError as exc:
        raise SignatureError(f"{name}: return type {kind!r}: {exc}") from None


def _class_name(qualname: str) -> str:
    cleaned = "".join(c if c.isalnum() else "_" for c in qualname.split(".")[-1])
    return cleaned if cleaned.isidentifier() else "PromptFunction"


def _text_pieces(stream: LMStream) -> Iterator[str]:
    with stream:
        for item in stream:
            if isinstance(item, str):
                yield item


async def _atext_pieces(stream: AsyncLMStream) -> AsyncIterator[str]:
    async with stream:
        async for item in stream:
            if isinstance(item, str):
                yield item
