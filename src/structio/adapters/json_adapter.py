"""`JSONAdapter`: inputs as sections, outputs as one JSON object."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, ClassVar

from structio._util.data import jsonable
from structio.adapters.base import STRUCTURE_SENTENCE, Adapter
from structio.adapters.constrain import choice, set_constrain, with_schema
from structio.adapters.fields import placeholder_texts, text_outputs
from structio.adapters.grammars import cached_grammar, json_rules
from structio.adapters.hooks import (
    ModelCapabilities,
    hook,
    native_reasoning_option,
    native_tools_option,
    refuse_callbacks,
    set_native_options,
)
from structio.exceptions import ConfigurationError
from structio.grammar import Grammar
from structio.parsing.found import PromptText
from structio.parsing.locate import (
    Found,
    bare_json_value,
    bare_value,
    find_json,
    find_labels,
    find_sections,
)
from structio.parsing.stream import JSONStreamReader, StreamReader
from structio.signatures.signature import Signature
from structio.typemodel.dialects import DIALECTS, wire_schema
from structio.typemodel.info import type_info
from structio.typemodel.schema import fields_schema

__all__ = [
    "JSONAdapter",
    "dialect_output_schema",
    "output_schema",
    "strict_output_schema",
]


class JSONAdapter(Adapter):
    """Asks for the outputs as one JSON object and reads it back, repairing common damage.

    Inputs are written as ``[[ ## name ## ]]`` sections, as with `ChatAdapter`; the prompts
    equal DSPy 3.4.1's byte for byte. Unlike DSPy, finetuning data works with this adapter.

    Example:
        >>> import structio as sio
        >>> sio.JSONAdapter().parse("question -> answer: int", '{"answer": "42"}')
        {'answer': 42}
    """

    route: ClassVar[str] = "json"

    def __init__(
        self,
        *,
        native_tools: bool | None = None,
        native_reasoning: bool | None = None,
        constrain: bool | None = None,
        use_native_function_calling: bool | None = None,
        callbacks: Sequence[Any] | None = None,
        native_response_types: Sequence[Any] | None = None,
    ) -> None:
        """Create a JSONAdapter.

        Args:
            native_tools: How a `ToolCalls` output is asked for (see `ChatAdapter`):
                ``None`` (default) is native when the model supports function calling.
            native_reasoning: How a `Reasoning` output is filled (see `ChatAdapter`):
                ``None`` (default) is native when the model returns its reasoning.
            constrain: Whether decoding is held to the outputs' JSON schema: ``True``
                always (a `ConfigurationError` where the model takes no schema),
                ``False`` never (JSON object mode where the model has it), ``None``
                (default): on a local server as `constrain_default` says (not
                constrained: measured better on a real small model), on a hosted model
                whenever its profile takes schemas.
            use_native_function_calling: DSPy's name for ``native_tools``.
            callbacks: DSPy's per-adapter callbacks: none, or a `ConfigurationError`
                (structio's are ``structio.configure(callbacks=[...])``).
            native_response_types: DSPy's list of the output types filled natively: one
                with `Reasoning` is the default, one without it ``native_reasoning=False``.
        """
        refuse_callbacks(callbacks)
        native_tools = native_tools_option(native_tools, use_native_function_calling)
        native_reasoning = native_reasoning_option(native_reasoning, native_response_types)
        set_native_options(self, native_tools, native_reasoning)
        set_constrain(self, constrain)

    @hook
    def request_params(
        self, signature: type[Signature], params: Mapping[str, Any], lm: ModelCapabilities
    ) -> dict[str, Any]:
        """Add a ``response_format`` the model supports, unless the caller chose one.

        On a local server (``lm.profile.server``): the outputs' plain JSON schema in the
        server's own form when the adapter constrains (``constrain``), else nothing
        (`structio.adapters.constrain.with_schema`). On a hosted model:

        What the model's `ModelProfile` (``lm.profile``) says it takes: a ``json_schema``
        built from the output fields, in the profile's schema dialect
        (`structio.typemodel.dialects`), when it takes schemas: ``"openai-strict"`` (the
        default) and ``"anthropic"`` with ``"strict": true``, ``"gemini"`` and
        ``"json-schema"`` (local servers) with ``"strict": false``. When the dialect cannot
        express the outputs (an open ``dict`` where objects must be closed: forcing ``{}``
        would lose data; recursion a provider refuses), ``{"type": "json_object"}``; the
        same when the model takes JSON object mode but no schemas; nothing (plain
        prompting) otherwise.
        """
        kwargs = dict(params)
        if "response_format" in kwargs:
            return kwargs
        local = with_schema(
            self,
            signature,
            kwargs,
            lm,
            dialect_output_schema(signature, "json-schema") if lm.profile.server else None,
            _schema_name(signature),
        )
        if local is not None:
            return local
        profile = lm.profile
        dialect = profile.schema_dialect
        schema: dict[str, Any] | None = None
        wanted = choice(self)
        if wanted and not profile.json_schema:
            raise ConfigurationError(
                f"{type(self).__name__}(constrain=True): {getattr(lm, 'model', 'the model')} "
                "takes no JSON schema (its profile says so; profile={'json_schema': True} "
                "if it does)"
            )
        if profile.json_schema and dialect is not None and wanted is not False:
            schema = dialect_output_schema(signature, dialect)
        if schema is not None and dialect is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": _schema_name(signature),
                    "strict": DIALECTS[dialect].strict,
                    "schema": schema,
                },
            }
        elif profile.json_object or profile.json_schema:
            kwargs["response_format"] = {"type": "json_object"}
        return kwargs

    @hook
    def format_field_structure(self, signature: type[Signature]) -> str:
        """The input sections, then the JSON skeleton of the outputs with type hints."""
        inputs = self.format_input_structure(signature)
        skeleton = {
            name: type_info(f.annotation).placeholder(name)
            for name, f in signature.output_fields.items()
        }
        return "\n\n".join(
            [
                STRUCTURE_SENTENCE,
                "Inputs will have the following structure:",
                inputs,
                "Outputs will be a JSON object with the following fields.",
                json.dumps(skeleton, indent=2, ensure_ascii=False),
            ]
        )

    @hook
    def prompt_texts(self, signature: type[Signature]) -> Mapping[str, PromptText]:
        """Each output's ``{name}`` placeholder and type note, as the JSON skeleton shows them."""
        return placeholder_texts(signature)

    @hook
    def user_message_output_requirements(self, signature: type[Signature]) -> str:
        """``Respond with a JSON object in the following order of fields: ...``."""
        fields = [
            f"`{name}`{self.format_type_requirement(f)}"
            for name, f in signature.output_fields.items()
        ]
        return (
            "Respond with a JSON object in the following order of fields: "
            + ", then ".join(fields)
            + "."
        )

    @hook
    def format_assistant_message_content(
        self,
        signature: type[Signature],
        outputs: Mapping[str, Any],
        missing_field_message: str | None = None,
    ) -> str:
        """The outputs as an indented JSON object."""
        data: dict[str, Any] = {}
        for name in signature.output_fields:
            if name in outputs:
                data[name] = jsonable(outputs[name])
            elif missing_field_message is not None:
                data[name] = missing_field_message
        return json.dumps(data, indent=2, ensure_ascii=False)

    @hook
    def grammar(self, signature: type[Signature], *, think: bool = False) -> Grammar | None:
        """The outputs' JSON object, as their JSON schema describes it.

        Servers that take the schema itself get it from `request_params`; this is for those
        that take only grammars.
        """
        return cached_grammar(
            self, signature, think, lambda sig: json_rules(sig, output_schema(sig))
        )

    @hook
    def stream_reader(
        self, signature: type[Signature], *, inputs: Mapping[str, Any] | None = None
    ) -> StreamReader:
        """A reader that gives each output as soon as its text is complete."""
        return JSONStreamReader(signature, partial(self.find, signature, inputs=inputs))

    @hook
    def locate(self, signature: type[Signature], text: str) -> Found | None:
        """Find the outputs: a JSON object first, then a bare JSON value, sections, labels.

        Fences (also unclosed), prose around the object, comments, single quotes, trailing
        commas, Python literals and other damage are repaired. Of several objects (an echoed
        schema or input before the answer) the one that fits the outputs best is read; a
        wrapper key (``{"output": {...}}``) is opened and key case drift is forgiven. An
        object cut off mid-value marks that value as cut off instead of completing it.
        """
        names = list(signature.fields)
        outputs = signature.output_fields
        return (
            find_json(text, outputs)
            or bare_json_value(outputs, text)
            or find_sections(text, names, outputs)
            or find_labels(
                text,
                names,
                {n: f.required for n, f in outputs.items()},
                [n for n, any_text in text_outputs(signature).items() if not any_text],
            )
            or bare_value(text_outputs(signature), text)
        )


def _schema_name(signature: type[Signature]) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", signature.__name__)[:64] or "outputs"


def output_schema(signature: type[Signature]) -> dict[str, Any]:
    """The JSON schema pydantic writes of the outputs, every one required, before any dialect.

    Objects stay as pydantic describes them: an open ``dict`` is expressed, nothing is
    closed, unions are pydantic's. Computed once per signature.
    """
    cache = signature.__structio_cache__
    key = ("json", "schema")
    found: dict[str, Any] | None = cache.get(key)
    if found is None:
        found = cache[key] = fields_schema(
            {name: f.annotation for name, f in signature.output_fields.items()}
        )
    return found


def dialect_output_schema(signature: type[Signature], dialect: str) -> dict[str, Any] | None:
    """The outputs' schema in a dialect (`structio.typemodel.dialects`), or ``None``.

    ``None`` when the dialect cannot express an output (an open ``dict`` where objects must
    be closed, recursion the provider refuses): the caller falls back to JSON mode.
    Computed once per signature and dialect.

    Raises:
        KeyError: ``dialect`` is not a schema dialect.
    """
    cache = signature.__structio_cache__
    key = ("json", "schema", dialect)
    if key not in cache:
        cache[key] = wire_schema(output_schema(signature), dialect)
    schema: dict[str, Any] | None = cache[key]
    return schema


def strict_output_schema(signature: type[Signature]) -> dict[str, Any] | None:
    """A strict JSON schema of the outputs, or ``None`` when an output is an open object.

    OpenAI's strict dialect: every object lists all its properties as required and forbids
    others, as OpenAI's strict structured outputs demand. An open ``dict`` (or ``Any``)
    cannot be expressed that way, and closing it would force ``{}``, so the caller falls
    back to JSON mode. Computed once per signature.
    """
    return dialect_output_schema(signature, "openai-strict")
