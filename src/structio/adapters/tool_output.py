"""`ToolOutputAdapter`: the answer given as the arguments of one forced tool call."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from structio.adapters.base import STRUCTURE_SENTENCE
from structio.adapters.hooks import ModelCapabilities, hook, set_native_options
from structio.adapters.json_adapter import JSONAdapter, dialect_output_schema
from structio.adapters.native import Native, tool_calls_output, tools_input
from structio.exceptions import ConfigurationError
from structio.grammar import Grammar
from structio.parsing.found import PromptText
from structio.parsing.stream import ArgumentsStreamReader, StreamReader
from structio.signatures.signature import Signature
from structio.typemodel.dialects import DIALECTS, plain_schema, wire_schema

__all__ = ["DEFAULT_TOOL_NAME", "ToolOutputAdapter", "answer_tool"]

DEFAULT_TOOL_NAME = "final_answer"
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what OpenAI accepts as a function name


class ToolOutputAdapter(JSONAdapter):
    """Has the model answer by calling one tool whose arguments are the outputs.

    For providers whose JSON mode is weak but whose function calling is strong (instructor's
    ``TOOLS`` mode, pydantic-ai's ``ToolOutput``): the outputs' JSON schema goes on the
    request as a single function tool (``final_answer`` by default, described by the
    signature's instructions), ``tool_choice`` forces the model to call it, and the answer
    is read from the call's ``arguments``. The schema is strict (``"strict": true``, in the
    model profile's schema dialect: OpenAI's by default, every property required and no
    others) when the model supports strict schemas and the dialect can express the
    outputs (no open ``dict``; no recursion where the provider refuses it); otherwise it is
    pydantic's schema of the outputs, not strict, with only what no provider takes changed
    (``oneOf`` read as ``anyOf``, no ``discriminator``; Gemini's own rules for Gemini).

    The prompt is `JSONAdapter`'s with its output part replaced: the system message lists
    the outputs (names, types, descriptions) and says to answer by calling the tool; the
    schema itself travels only in the tool. Demos, history turns and finetuning targets show
    their answers as JSON objects in assistant messages, not as tool calls: a tool call must
    be followed by a tool message answering it, and a prompt cut to fit a token budget could
    keep one without the other, which providers refuse. The reading is `JSONAdapter`'s, applied to
    the arguments; a model that answers in plain text instead is read from its text, the
    same way. A streamed call gives every value at the end (the arguments are not text).

    This mode uses the tool channel for the answer, so a signature that offers tools (a
    ``list[Tool]`` input or a `ToolCalls` output) and a call with ``tools=`` are refused
    with a `ConfigurationError`: use `ChatAdapter` or `JSONAdapter` for those.

    Example:
        >>> adapter = ToolOutputAdapter()
        >>> adapter.answer_text("", [{"function": {"name": "final_answer",
        ...                                        "arguments": '{"answer": 4}'}}])
        '{"answer": 4}'
    """

    def __init__(
        self,
        *,
        tool_name: str = DEFAULT_TOOL_NAME,
        strict: bool | None = None,
        native_reasoning: bool | None = None,
    ) -> None:
        """Create a ToolOutputAdapter.

        Args:
            tool_name: The name of the tool the model answers through.
            strict: Whether the tool's schema is strict: ``None`` (default) when the
                model supports strict schemas (its profile's ``json_schema``, in a strict
                dialect: ``"openai-strict"`` or ``"anthropic"``) and the outputs can be
                expressed strictly; ``True`` always (an output the dialect cannot express,
                such as an open ``dict``, is then a `ConfigurationError`); ``False`` never.
            native_reasoning: How a `Reasoning` output is filled (see `ChatAdapter`):
                ``None`` (default) is native when the model returns its reasoning.

        Raises:
            ValueError: ``tool_name`` is not 1 to 64 letters, digits, ``_`` or ``-``, or
                ``strict`` is not a bool or ``None``.
        """
        if not isinstance(tool_name, str) or not _TOOL_NAME.match(tool_name):
            raise ValueError(
                f"tool_name must be 1 to 64 letters, digits, '_' or '-', not {tool_name!r}"
            )
        if strict is not None and not isinstance(strict, bool):
            raise ValueError(f"strict must be True, False or None, not {strict!r}")
        self.tool_name = tool_name
        if strict is not None:  # a default is not stored: it saves and prints as before
            self.strict = strict
        set_native_options(self, None, native_reasoning)

    # -- the request ------------------------------------------------------------------------

    @hook
    def grammar(self, signature: type[Signature], *, think: bool = False) -> Grammar | None:
        """``None``: the answer is a tool call's arguments, which no text grammar shapes."""
        return None

    @hook
    def request_params(
        self, signature: type[Signature], params: Mapping[str, Any], lm: ModelCapabilities
    ) -> dict[str, Any]:
        """Add the answer tool as ``tools`` and force it with ``tool_choice``.

        Raises:
            ConfigurationError: The call or the LM sets ``tools`` or ``tool_choice``, or the
                signature offers tools (this mode uses the tool channel for the answer).
        """
        _check_signature(signature, self.tool_name)
        lm_params = getattr(lm, "params", None)
        for source, given in (("this call", params), ("the LM", lm_params)):
            taken = [key for key in ("tools", "tool_choice") if given and key in given]
            if taken:
                raise ConfigurationError(
                    f"{source} sets {' and '.join(taken)}, but ToolOutputAdapter uses the tool "
                    f"channel for the answer (the model calls `{self.tool_name}`); use "
                    "ChatAdapter or JSONAdapter to offer tools"
                )
        kwargs = dict(params)
        dialect = lm.profile.schema_dialect
        strict = getattr(self, "strict", None)
        if strict is None:
            strict = (
                dialect is not None
                and DIALECTS[dialect].strict
                and dialect_output_schema(signature, dialect) is not None
            )
        tool = answer_tool(signature, self.tool_name, strict=strict, dialect=dialect)
        kwargs["tools"] = [tool]
        kwargs["tool_choice"] = {"type": "function", "function": {"name": self.tool_name}}
        return kwargs

    @hook
    def native(self, signature: type[Signature], lm: ModelCapabilities) -> Native | None:
        """Reasoning may travel natively; tools cannot (see the class).

        Raises:
            ConfigurationError: The signature offers tools.
        """
        _check_signature(signature, self.tool_name)
        return super().native(signature, lm)

    @hook
    def answer_text(self, text: str, tool_calls: Sequence[Mapping[str, Any]] | None = None) -> str:
        """The arguments of the first call to the answer tool; without one, the text.

        A model that answered in plain text is read from its text, with the usual reading.
        """
        for call in tool_calls or ():
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping) and function.get("name") == self.tool_name:
                arguments = function.get("arguments")
                if isinstance(arguments, str):
                    return arguments
                if isinstance(arguments, Mapping):  # a provider that sends them decoded
                    return json.dumps(arguments, ensure_ascii=False)
        return text

    @hook
    def stream_reader(
        self, signature: type[Signature], *, inputs: Mapping[str, Any] | None = None
    ) -> StreamReader:
        """Reads the answer tool's arguments as they are streamed, as JSON members."""
        return ArgumentsStreamReader(
            signature, partial(self.find, signature, inputs=inputs), self.tool_name
        )

    # -- the prompt -------------------------------------------------------------------------

    @hook
    def format_field_structure(self, signature: type[Signature]) -> str:
        """The input sections, then: the outputs are the arguments of the answer tool.

        Raises:
            ConfigurationError: The signature offers tools.
        """
        _check_signature(signature, self.tool_name)
        return "\n\n".join(
            [
                STRUCTURE_SENTENCE,
                "Inputs will have the following structure:",
                self.format_input_structure(signature),
                f"Outputs will be the arguments of a call to the `{self.tool_name}` tool: a "
                "JSON object with the output fields.",
            ]
        )

    @hook
    def prompt_texts(self, signature: type[Signature]) -> Mapping[str, PromptText]:
        """None: the prompt shows no value's place (the outputs are the tool's arguments)."""
        return {}

    @hook
    def user_message_output_requirements(self, signature: type[Signature]) -> str:
        """``Respond by calling the `final_answer` tool with the arguments ...``."""
        names = ", then ".join(f"`{name}`" for name in signature.output_fields)
        return f"Respond by calling the `{self.tool_name}` tool with the arguments {names}."


def answer_tool(
    signature: type[Signature], name: str, *, strict: bool, dialect: str | None = None
) -> dict[str, Any]:
    """The ``tools`` entry whose arguments are the signature's outputs.

    Shaped as `structio.tools.Tool.to_openai` shapes a tool: ``{"type": "function",
    "function": {"name", "description", "parameters"}}``, with ``"strict": true`` and the
    strict schema when ``strict``: in ``dialect`` when it is a strict one (``"anthropic"``),
    else OpenAI's (for ``"gemini"``, OpenAI's then written in Gemini's terms). Not strict,
    the schema is pydantic's in the plain dialect, or in Gemini's for ``"gemini"`` (whose
    rules hold for every tool).

    Raises:
        ConfigurationError: ``strict`` and an output cannot be expressed strictly (an
            open ``dict`` or ``Any``, or recursion the dialect refuses).
    """
    if strict:
        chosen = dialect if dialect is not None and DIALECTS[dialect].strict else "openai-strict"
        found = dialect_output_schema(signature, chosen)
        if found is not None and dialect == "gemini":  # closed, and in Gemini's terms
            found = wire_schema(found, "gemini")
        if found is None:
            raise ConfigurationError(
                f"{signature.__name__} has an output that is an open dict (or Any), or a "
                f"recursive type the {chosen} schema dialect refuses, which a strict tool "
                "schema cannot express; use ToolOutputAdapter(strict=None or False)"
            )
        schema = found
    else:
        loose = _loose_schema(signature)
        converted = wire_schema(loose, "gemini") if dialect == "gemini" else None
        # A Gemini model gets the plain schema when Gemini's rules cannot express it
        # (recursion through required fields): the best there is, and pydantic's otherwise.
        schema = converted if converted is not None else plain_schema(loose)
    function: dict[str, Any] = {"name": name}
    description = signature.instructions.strip()
    if description:  # none rather than an empty one: some providers refuse it
        function["description"] = description
    function["parameters"] = schema
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def _loose_schema(signature: type[Signature]) -> dict[str, Any]:
    """The outputs' JSON schema (pydantic's) as one object, every output required."""
    cache = signature.__structio_cache__
    key = ("tool_output", "schema")
    schema: dict[str, Any] | None = cache.get(key)
    if schema is None:
        from pydantic import TypeAdapter

        fields = signature.output_fields
        by_key, top = TypeAdapter.json_schemas(
            [(name, "validation", TypeAdapter(f.annotation)) for name, f in fields.items()]
        )
        schema = {
            "type": "object",
            "properties": {
                name: _described(by_key[(name, "validation")], f.desc) for name, f in fields.items()
            },
            "required": list(fields),
        }
        if "$defs" in top:
            schema["$defs"] = top["$defs"]
        cache[key] = schema
    return copy.deepcopy(schema)  # the caller may change it; the cached one stays


def _described(schema: dict[str, Any], desc: str | None) -> dict[str, Any]:
    return {**schema, "description": desc} if desc else schema


def _check_signature(signature: type[Signature], tool_name: str) -> None:
    """Refuse a signature that offers tools: the tool channel carries the answer here."""
    offered = [
        f"{kind} `{name}`"
        for kind, name in (
            ("input", tools_input(signature)),
            ("output", tool_calls_output(signature)),
        )
        if name is not None
    ]
    if offered:
        raise ConfigurationError(
            f"{signature.__name__} offers tools ({', '.join(offered)}), but ToolOutputAdapter "
            f"answers through a forced call to `{tool_name}`: the two cannot be combined; use "
            "ChatAdapter or JSONAdapter for tool use"
        )
