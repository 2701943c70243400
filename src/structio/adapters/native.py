"""Outputs a model gives natively, beside its text: tool calls and reasoning.

A signature with a `ToolCalls` output and a ``list[Tool]`` input can ask for the calls in
two ways. *Native*: the tools go on the request as ``tools=`` (OpenAI function calling),
neither field appears in the prompt, and the reply's tool calls become the `ToolCalls`.
*Text*: the tools are described in the prompt and the calls are read from the answer's
sections or JSON. A `Reasoning` output likewise comes from the reply's native reasoning
(``reasoning_content``) or from a section.

`native_plan` decides, per adapter options and model capabilities, and gives a `Native`:
the signature that goes on the wire, the request parameters to add, and `Native.fill`,
which completes what the adapter read from the text. Either way, tool calls are checked
against the tools the call was given (`ToolCalls.bind`): a call to a tool that does not
exist, or with arguments the tool does not take, is a `ParseError`, never a value.
"""

from __future__ import annotations

import json
import sys
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from structio._util.data import jsonable
from structio.exceptions import ParseError, ToolCallError
from structio.lm.servers import GRAMMAR_KEYS
from structio.reasoning import Reasoning
from structio.signatures.signature import Signature
from structio.typemodel.dialects import plain_schema, wire_schema
from structio.typemodel.info import core_type

if TYPE_CHECKING:
    from structio.lm.profile import ModelProfile
    from structio.tools import Tool, ToolCalls

__all__ = [
    "Native",
    "NativeCapabilities",
    "ToolResult",
    "ToolTurn",
    "native_calls_of",
    "native_plan",
    "tool_calls_output",
    "tool_entry",
    "tool_turn",
    "tool_types",
    "tools_input",
]

# What a model is asked to do with its reasoning when it reasons natively, unless the call
# says otherwise: some providers (Anthropic through litellm) only think when asked.
DEFAULT_REASONING_EFFORT = "low"


class NativeCapabilities(Protocol):
    """What `native_plan` asks of a model: its profile (``tools``, ``reasoning``)."""

    @property
    def profile(self) -> ModelProfile:
        """What the model supports."""
        ...


def tool_types() -> tuple[type[Tool], type[ToolCalls]] | None:
    """`Tool` and `ToolCalls`, if `structio.tools` is loaded.

    It loads pydantic, which ``import structio`` does not; a signature that names a tool
    type has loaded it, so a signature of a program that never did holds none.
    """
    module = sys.modules.get("structio.tools")
    if module is None:
        return None
    return module.Tool, module.ToolCalls


def tools_input(signature: type[Signature]) -> str | None:
    """The first input typed ``list[Tool]`` (or a sequence or optional of it), if any."""
    types = tool_types()
    if types is None:
        return None
    for name, field in signature.input_fields.items():
        annotation = core_type(field.annotation)
        origin = typing.get_origin(annotation)
        if origin is not None and isinstance(origin, type) and issubclass(origin, Sequence):
            args = typing.get_args(annotation)
            if args and args[0] is types[0]:
                return name
    return None


def tool_calls_output(signature: type[Signature]) -> str | None:
    """The first output typed `ToolCalls` (optional or not), if any."""
    types = tool_types()
    if types is None:
        return None
    for name, field in signature.output_fields.items():
        if core_type(field.annotation) is types[1]:
            return name
    return None


def _reasoning_output(signature: type[Signature]) -> str | None:
    for name, field in signature.output_fields.items():
        if core_type(field.annotation) is Reasoning:
            return name
    return None


@dataclass(frozen=True)
class Native:
    """How one signature's tool calls and reasoning travel, for one adapter and model.

    Attributes:
        signature: The signature the call was made with.
        wire: The signature of the prompt and of the text reading: ``signature`` without
            the fields that travel natively.
        tools: The ``list[Tool]`` input, or ``None``.
        calls: The `ToolCalls` output, or ``None``.
        native_calls: The calls come as the reply's tool calls (the tools as ``tools=``).
        reasoning: The `Reasoning` output, or ``None``.
        native_reasoning: It comes from the reply's native reasoning.
        dialect: The model's schema dialect (`ModelProfile.schema_dialect`): native tools'
            parameters are written in Gemini's for ``"gemini"``, else in the plain one.
    """

    signature: type[Signature]
    wire: type[Signature]
    tools: str | None
    calls: str | None
    native_calls: bool
    reasoning: str | None
    native_reasoning: bool
    dialect: str | None = None

    def wire_inputs(self, inputs: Mapping[str, Any]) -> Mapping[str, Any]:
        """The inputs that go into the prompt (tools sent natively are not among them)."""
        if self.native_calls and self.tools in inputs:
            return {k: v for k, v in inputs.items() if k != self.tools}
        return inputs

    def request_params(
        self,
        params: Mapping[str, Any],
        inputs: Mapping[str, Any],
        lm_params: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``params`` with the native tools and reasoning effort added.

        The call's own ``tools`` and the call's or the model's ``reasoning_effort`` win.
        When tools are sent, a local server's grammar of the text answer is not: it would
        forbid the calls.
        """
        out = dict(params)
        if self.native_calls and self.tools is not None:
            from structio.tools import Tool

            tools = [t if isinstance(t, Tool) else Tool(t) for t in inputs.get(self.tools) or ()]
            if tools:
                out.setdefault("tools", [tool_entry(tool, self.dialect) for tool in tools])
                # A grammar of the text answer would forbid the tool calls themselves.
                for key in GRAMMAR_KEYS:
                    out.pop(key, None)
            else:  # no tools this time: the model can only answer in text
                out.pop("tool_choice", None)
                out.pop("parallel_tool_calls", None)
        if self.native_reasoning and "reasoning_effort" not in (lm_params or {}):
            out.setdefault("reasoning_effort", DEFAULT_REASONING_EFFORT)
        return out

    def fill(
        self,
        values: Mapping[str, Any] | None,
        *,
        text: str,
        tool_calls: Sequence[Mapping[str, Any]] | None,
        reasoning: str | None,
        inputs: Mapping[str, Any] | None,
        adapter: str,
        reasoning_items: Sequence[Mapping[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Every output, in signature order: the text's values and the native ones.

        Args:
            values: What the adapter read from the text (``None`` when the text could not
                be read but the model called tools, which is an answer in itself: the other
                outputs are then ``None``, as the model has not given them yet).
            text: The completion text, for error messages.
            tool_calls: The reply's OpenAI-style tool calls.
            reasoning: The reply's native reasoning (``None``: the field is ``None``).
            inputs: The call's inputs (the tools the calls are checked against).
            adapter: The adapter's name, for errors.
            reasoning_items: The reply's own reasoning blocks, kept on native calls to be
                replayed with them.

        Raises:
            ParseError: A tool call names no tool, or its arguments do not fit the tool.
        """
        got = dict(values) if values is not None else {}
        invalid: dict[str, tuple[str, str]] = {}
        if self.calls is not None:
            from structio.tools import ToolCalls

            if self.native_calls:
                try:
                    calls = ToolCalls.from_openai(tool_calls or (), reasoning_items)
                except ToolCallError as exc:
                    invalid[self.calls] = (str(tool_calls), str(exc))
                    calls = None
            else:
                calls = got.get(self.calls)
            if calls is not None and self.tools is not None and inputs:
                available = inputs.get(self.tools)
                if available is not None:
                    try:
                        calls = calls.bind(available)
                    except ToolCallError as exc:
                        invalid[self.calls] = (_calls_text(calls), str(exc))
            if self.calls not in invalid:
                got[self.calls] = calls
        if self.reasoning is not None and self.native_reasoning:
            # A provider that keeps the reasoning hidden (OpenAI's o-series) sends none:
            # the field is then None, as in DSPy, never a made-up text.
            got[self.reasoning] = Reasoning(reasoning) if reasoning else None
        if invalid:
            raise ParseError(
                adapter=adapter,
                signature=self.signature,
                completion=text,
                parsed={k: v for k, v in got.items() if k not in invalid},
                invalid=invalid,
            )
        ordered: dict[str, Any] = {}
        for name in self.signature.output_fields:
            ordered[name] = got.get(name)
        return ordered


def tool_entry(tool: Tool, dialect: str | None) -> dict[str, Any]:
    """A tool as an entry of ``tools=``: `Tool.to_openai`, its parameters in a dialect.

    Native tools are not strict, so what a provider takes of their parameters is JSON
    Schema less what none takes (``oneOf``, which becomes ``anyOf``; ``discriminator``):
    the plain dialect, which leaves the parameters of most tools as they are (and DSPy's
    requests byte for byte). Gemini's function declarations hold to Gemini's rules
    whatever the mode: its dialect, when it can express the parameters.
    """
    entry = tool.to_openai()
    function = entry["function"]
    converted = wire_schema(function["parameters"], "gemini") if dialect == "gemini" else None
    function["parameters"] = (
        converted if converted is not None else plain_schema(function["parameters"])
    )
    return entry


def _calls_text(calls: Any) -> str:
    try:
        return str(calls.model_dump(mode="json"))
    except AttributeError:
        return str(calls)


def native_plan(
    signature: type[Signature],
    lm: NativeCapabilities,
    *,
    native_tools: bool | None,
    native_reasoning: bool | None,
) -> Native | None:
    """How this signature's tool calls and reasoning travel, or ``None`` if it has neither.

    Args:
        signature: The call's signature.
        lm: The model (its `ModelProfile` says what it supports).
        native_tools: ``True``/``False`` to choose; ``None``: native when the model
            supports function calling.
        native_reasoning: ``True``/``False`` to choose; ``None``: native when the model
            returns its reasoning.
    """
    cache = signature.__structio_cache__
    flags = cache.get("native_fields")
    if flags is None:
        flags = cache["native_fields"] = (
            tools_input(signature),
            tool_calls_output(signature),
            _reasoning_output(signature),
        )
    tools, calls, reasoning = flags
    if calls is None and reasoning is None:
        return None
    as_calls = (
        calls is not None
        and tools is not None
        and (native_tools if native_tools is not None else lm.profile.tools)
    )
    as_reasoning = reasoning is not None and (
        native_reasoning if native_reasoning is not None else lm.profile.reasoning
    )
    dialect = lm.profile.schema_dialect if as_calls else None
    key = ("native", as_calls, as_reasoning, dialect)
    plan = cache.get(key)
    if plan is None:
        wire = signature
        if as_calls and tools is not None and calls is not None:
            wire = wire.delete(tools).delete(calls)
        if as_reasoning and reasoning is not None:
            wire = wire.delete(reasoning)
        plan = cache[key] = Native(
            signature, wire, tools, calls, as_calls, reasoning, as_reasoning, dialect
        )
        if as_calls:
            # The wire signature has no calls field; its history still replays them.
            wire.__structio_cache__[_NATIVE_CALLS] = calls
    return typing.cast(Native, plan)


_NATIVE_CALLS = "native_calls_field"


def native_calls_of(wire: type[Signature]) -> str | None:
    """The `ToolCalls` field a wire signature lost to native tools, or ``None``."""
    field: str | None = wire.__structio_cache__.get(_NATIVE_CALLS)
    return field


@dataclass(frozen=True)
class ToolResult:
    """One result of a tool call, as it is replayed into a conversation."""

    call_id: str | None
    name: str
    value: Any
    is_error: bool = False


@dataclass(frozen=True)
class ToolTurn:
    """The tool calls of one history turn, and the results of those that ran."""

    calls: tuple[tuple[str | None, str, Mapping[str, Any]], ...]
    results: tuple[ToolResult, ...]
    reasoning_items: tuple[Mapping[str, Any], ...] = ()

    @property
    def replayable(self) -> bool:
        """Whether the calls can be sent natively: each has an id and a result."""
        ids = [call_id for call_id, _, _ in self.calls]
        return (
            bool(self.calls)
            and all(ids)
            and len(self.results) == len(self.calls)
            and [r.call_id for r in self.results] == ids
        )

    def written(self) -> dict[str, Any]:
        """The calls as a model writes them in text: names and arguments, no ids."""
        return {"tool_calls": [{"name": name, "args": dict(args)} for _, name, args in self.calls]}

    def openai_calls(self) -> list[dict[str, Any]]:
        """The calls as an assistant message's ``tool_calls``."""
        return [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
            }
            for call_id, name, args in self.calls
        ]

    def tool_messages(self) -> list[tuple[str, tuple[tuple[str, Any], ...]]]:
        """One ``tool`` message per result: its content and its other keys."""
        return [
            (_result_text(r.value), (("tool_call_id", r.call_id), ("name", r.name)))
            for r in self.results
        ]

    def results_section(self) -> str:
        """The results as the text-mode user message (a ``tool_call_results`` section)."""
        data = {
            "tool_call_results": [
                {
                    "call_id": r.call_id,
                    "name": r.name,
                    "value": jsonable(r.value),
                    "is_error": r.is_error,
                }
                for r in self.results
            ]
        }
        return "[[ ## tool_call_results ## ]]\n" + json.dumps(data, ensure_ascii=False)


def _result_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(jsonable(value), ensure_ascii=False)


def tool_turn(value: Any) -> ToolTurn | None:
    """The tool calls a history turn holds (a `ToolCalls`, or DSPy's dict form), or ``None``.

    Results come from calls that ran (`ToolCalls.execute`), or from DSPy's
    ``tool_call_results`` list beside the calls.
    """
    if value is None:
        return None
    types = tool_types()
    calls: list[tuple[str | None, str, Mapping[str, Any]]] = []
    results: list[ToolResult] = []
    if types is not None and isinstance(value, types[1]):
        for call in value.tool_calls:
            calls.append((call.id, call.name, call.args))
            if call.executed:
                results.append(ToolResult(call.id, call.name, call.result))
        return ToolTurn(tuple(calls), tuple(results), value.reasoning_items)
    if isinstance(value, Mapping) and isinstance(value.get("tool_calls"), list):
        for call in value["tool_calls"]:
            if isinstance(call, Mapping) and isinstance(call.get("name"), str):
                args = call.get("args")
                calls.append(
                    (call.get("id"), call["name"], args if isinstance(args, Mapping) else {})
                )
        for result in value.get("tool_call_results") or ():
            if isinstance(result, Mapping) and isinstance(result.get("name"), str):
                results.append(
                    ToolResult(
                        result.get("call_id"),
                        result["name"],
                        result.get("value"),
                        bool(result.get("is_error", False)),
                    )
                )
        items = value.get("reasoning_items")
        kept = tuple(i for i in items if isinstance(i, Mapping)) if isinstance(items, list) else ()
        return ToolTurn(tuple(calls), tuple(results), kept)
    return None
