"""`ChatAdapter`: fields as ``[[ ## name ## ]]`` sections, DSPy's wire format."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, ClassVar, Literal

from structio.adapters.base import STRUCTURE_SENTENCE, Adapter
from structio.adapters.constrain import set_constrain, with_grammar
from structio.adapters.fields import placeholder_texts, text_outputs
from structio.adapters.grammars import cached_grammar, chat_rules
from structio.adapters.hooks import (
    ModelCapabilities,
    hook,
    native_reasoning_option,
    native_tools_option,
    refuse_callbacks,
    set_native_options,
)
from structio.adapters.json_adapter import JSONAdapter, output_schema
from structio.grammar import Grammar
from structio.parsing.found import PromptText
from structio.parsing.locate import Found, bare_value, find_json, find_labels, find_sections
from structio.parsing.stream import SectionStreamReader, StreamReader
from structio.rendering.text import format_value
from structio.signatures.signature import Signature
from structio.typemodel.info import type_info

__all__ = ["ChatAdapter"]

_COMPLETED = "[[ ## completed ## ]]"
_COMPLETED_TAIL = f"\n\n{_COMPLETED}\n"


class ChatAdapter(Adapter):
    r"""Writes each field as a ``[[ ## name ## ]]`` section and reads completions back.

    The prompts equal DSPy 3.4.1's byte for byte (except for the DSPy bugs structio fixes),
    so prompts tuned there behave the same here.

    Example:
        >>> import structio as sio
        >>> sio.ChatAdapter().parse("question -> answer: int", "[[ ## answer ## ]]\n42")
        {'answer': 42}
    """

    route: ClassVar[str] = "chat"

    def __init__(
        self,
        *,
        fallback: Literal["json"] | None = "json",
        native_tools: bool | None = None,
        native_reasoning: bool | None = None,
        constrain: bool | None = None,
        use_native_function_calling: bool | None = None,
        callbacks: Sequence[Any] | None = None,
        use_json_adapter_fallback: bool | None = None,
        native_response_types: Sequence[Any] | None = None,
    ) -> None:
        """Create a ChatAdapter.

        Args:
            fallback: What a call does when a completion cannot be read: ``"json"``
                (default) makes one more request, with `JSONAdapter`; ``None`` raises the
                `ParseError` at once. Reading a JSON answer given instead of sections needs
                no new request and happens either way (the prediction's path says
                ``"json_reparse"``). Provider errors never fall back.
            native_tools: How a `ToolCalls` output is asked for: ``True``, the tools go
                on the request (``tools=``) and the reply's tool calls are read; ``False``,
                the tools are described in the prompt and the calls read from the text;
                ``None`` (default), native when the model supports function calling.
            native_reasoning: How a `Reasoning` output is filled: ``True``, from the
                model's native reasoning; ``False``, from a section of the answer; ``None``
                (default), native when the model returns its reasoning.
            constrain: Whether a local server that takes grammars (``LM(...,
                server="llamacpp" | "vllm" | "sglang")``) is asked to hold the answer to
                the grammar of this format, compiled from the signature (`grammar`):
                ``True`` always (a `ConfigurationError` where the server cannot),
                ``False`` never, ``None`` (default) as `constrain_default` says (not
                constrained: on a real small model free decoding was as right, and
                cheaper; docs/tutorials/local-models.md). Hosted models are never sent a grammar.
            use_native_function_calling: DSPy's name for ``native_tools``.
            callbacks: DSPy's per-adapter callbacks: none, or a `ConfigurationError`
                (structio's are ``structio.configure(callbacks=[...])``).
            use_json_adapter_fallback: DSPy's switch for ``fallback``: ``False`` is
                ``fallback=None``, ``True`` is ``fallback="json"``.
            native_response_types: DSPy's list of the output types filled natively: one
                with `Reasoning` is the default, one without it ``native_reasoning=False``.
        """
        if use_json_adapter_fallback is not None:  # DSPy's name for the same choice
            fallback = "json" if use_json_adapter_fallback else None
        if fallback not in ("json", None):
            raise ValueError(f"fallback must be 'json' or None, not {fallback!r}")
        self.fallback = fallback
        refuse_callbacks(callbacks)
        native_tools = native_tools_option(native_tools, use_native_function_calling)
        native_reasoning = native_reasoning_option(native_reasoning, native_response_types)
        set_native_options(self, native_tools, native_reasoning)
        set_constrain(self, constrain)

    @hook
    def request_params(
        self, signature: type[Signature], params: Mapping[str, Any], lm: ModelCapabilities
    ) -> dict[str, Any]:
        """The parameters, with this format's grammar on a local server that takes one.

        See ``constrain``: the grammar of the sections this adapter asks for (`grammar`),
        in the syntax and under the parameter name the server takes
        (`structio.lm.servers`); a structured-output parameter the caller set is kept.
        """
        return with_grammar(self, signature, super().request_params(signature, params, lm), lm)

    def __repr__(self) -> str:
        options = {k: v for k, v in self._options().items() if k != "fallback"}
        if self.fallback != "json":
            options = {"fallback": self.fallback, **options}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in options.items())})"

    @hook
    def fallback_adapter(self) -> Adapter | None:
        """`JSONAdapter`, unless made with ``fallback=None``."""
        if self.fallback != "json":
            return None
        return JSONAdapter(
            native_tools=getattr(self, "native_tools", None),
            native_reasoning=getattr(self, "native_reasoning", None),
        )

    @hook
    def format_field_structure(self, signature: type[Signature]) -> str:
        """``All interactions will be structured ...`` with one section per field."""
        inputs = self.format_input_structure(signature)
        outputs = "\n\n".join(
            f"[[ ## {name} ## ]]\n{type_info(f.annotation).placeholder(name)}"
            for name, f in signature.output_fields.items()
        )
        return "\n\n".join([STRUCTURE_SENTENCE, inputs, outputs, _COMPLETED])

    @hook
    def prompt_texts(self, signature: type[Signature]) -> Mapping[str, PromptText]:
        """Each output's ``{name}`` placeholder and type note, as the structure shows them."""
        return placeholder_texts(signature)

    @hook
    def user_message_output_requirements(self, signature: type[Signature]) -> str:
        """``Respond with the corresponding output fields, starting with the field ...``."""
        fields = [
            f"`[[ ## {name} ## ]]`{self.format_type_requirement(f)}"
            for name, f in signature.output_fields.items()
        ]
        return (
            "Respond with the corresponding output fields, starting with the field "
            + ", then ".join(fields)
            + f", and then ending with the marker for `{_COMPLETED}`."
        )

    @hook
    def format_assistant_message_content(
        self,
        signature: type[Signature],
        outputs: Mapping[str, Any],
        missing_field_message: str | None = None,
    ) -> str:
        """Output sections followed by ``[[ ## completed ## ]]`` and a newline."""
        sections = []
        for name, f in signature.output_fields.items():
            if name in outputs:
                value = outputs[name]
                # Strings, the usual values, are their own text (format_value would agree).
                text = (
                    value
                    if type(value) is str
                    else format_value(value, str_field=f.annotation is str)
                )
            elif missing_field_message is not None:
                text = missing_field_message
            else:
                continue
            sections.append(f"[[ ## {name} ## ]]\n{text}")
        return "\n\n".join(sections).strip() + _COMPLETED_TAIL

    @hook
    def grammar(self, signature: type[Signature], *, think: bool = False) -> Grammar | None:
        """The sections in order, each value as its type is written, then the completed marker.

        A ``str`` value may hold any text but a line starting with ``[[ ## ``.
        """
        return cached_grammar(
            self, signature, think, lambda sig: chat_rules(sig, output_schema(sig))
        )

    @hook
    def stream_reader(
        self, signature: type[Signature], *, inputs: Mapping[str, Any] | None = None
    ) -> StreamReader:
        """A reader that gives each output as soon as its text is complete."""
        return SectionStreamReader(signature, partial(self.find, signature, inputs=inputs))

    @hook
    def locate(self, signature: type[Signature], text: str) -> Found | None:
        """Find the outputs: sections first, then a JSON object, labels, or a bare value.

        Sections may be decorated (``**[[ ## answer ## ]]**``, ``### [[ ## Answer ## ]]:``),
        indented, glued to the previous text or several on one line; a marker mentioned
        inside a sentence is not a section. Everything after ``[[ ## completed ## ]]`` is
        ignored. Without any output section, a JSON object with the outputs, ``Field: value``
        lines naming every required output, or (for a single non-``str`` output) the whole
        text are read instead.
        """
        names = list(signature.fields)
        outputs = signature.output_fields
        return (
            find_sections(text, names, outputs)
            or find_json(text, outputs)
            or find_labels(
                text,
                names,
                {n: f.required for n, f in outputs.items()},
                [n for n, any_text in text_outputs(signature).items() if not any_text],
            )
            or bare_value(text_outputs(signature), text)
        )
