"""`CompactAdapter`: outputs described in a short type notation, answered as JSON."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from structio.adapters.base import STRUCTURE_SENTENCE
from structio.adapters.constrain import choice
from structio.adapters.fields import describe_fields
from structio.adapters.hooks import ModelCapabilities, hook
from structio.adapters.json_adapter import JSONAdapter
from structio.parsing.found import PromptText
from structio.signatures.history import History
from structio.signatures.signature import Signature
from structio.typemodel.compact import compact_fields, compact_type

__all__ = ["CompactAdapter"]


class CompactAdapter(JSONAdapter):
    """Asks for one JSON object whose type is written in a short TypeScript-like notation.

    `JSONAdapter` shows each structured output's full JSON schema; this adapter shows the
    outputs as one type in the notation of `structio.typemodel.compact` instead
    (``age: int  // 0 to 130``, ``country: "US" | "UK"``, ``lines: { sku: string }[]``),
    which costs about a third of the tokens on nested models. Unlike DSPy's
    ``BAMLAdapter`` every declared constraint and description stays visible, as a ``//``
    comment on its field's line, and recursive models work (they are named once).

    Everything else is `JSONAdapter`'s: inputs as ``[[ ## name ## ]]`` sections, demos and
    history answers as JSON objects, and the same lenient reading of the answer (fences,
    prose, comments, trailing commas repaired; a value is never invented).

    The request asks for JSON mode (``{"type": "json_object"}``) when the model supports
    it, and never sends a JSON schema as ``response_format``: the schema would cost the
    tokens this adapter saves (providers count it as prompt), and the notation already says
    what a strict schema would. Use `JSONAdapter` for schema-enforced decoding.

    Example:
        >>> import structio as sio
        >>> sio.CompactAdapter().parse("question -> answer: int", '{"answer": 42}')
        {'answer': 42}
    """

    @hook
    def request_params(
        self, signature: type[Signature], params: Mapping[str, Any], lm: ModelCapabilities
    ) -> dict[str, Any]:
        """Add ``response_format={"type": "json_object"}`` when the model takes it.

        Never a JSON schema to a hosted model (see the class) unless ``constrain=True``;
        on a local server, whose schema costs no prompt tokens, the outputs' schema when
        the adapter constrains (`JSONAdapter`'s rule). A ``response_format`` the caller
        chose is kept.
        """
        kwargs = dict(params)
        if "response_format" in kwargs:
            return kwargs
        if lm.profile.server or choice(self):
            return super().request_params(signature, kwargs, lm)
        profile = lm.profile
        if "response_format" not in kwargs and (profile.json_object or profile.json_schema):
            kwargs["response_format"] = {"type": "json_object"}
        return kwargs

    @hook
    def format_field_description(self, signature: type[Signature]) -> str:
        """The inputs as the other adapters describe them; the outputs by name only.

        The outputs' types and descriptions are in the notation that follows: saying them
        twice would cost the tokens this adapter exists to save.
        """
        inputs = {n: f for n, f in signature.input_fields.items() if f.annotation is not History}
        names = ", ".join(f"`{name}`" for name in signature.output_fields)
        described = describe_fields(inputs)
        return f"Your input fields are:\n{described}\nYour output fields are: {names}."

    @hook
    def format_field_structure(self, signature: type[Signature]) -> str:
        """The input sections, then the outputs as one object type in the notation."""
        notation = output_type(signature)
        # The notation's two signs that JSON lacks are explained only where they appear.
        signs = []
        if "//" in notation:
            signs.append("`//` starts a comment")
        if "?:" in notation:
            signs.append("`?:` marks a field that may be left out")
        explained = f" ({', '.join(signs)})" if signs else ""
        return "\n\n".join(
            [
                STRUCTURE_SENTENCE,
                "Inputs will have the following structure:",
                self.format_input_structure(signature),
                f"Outputs will be a JSON object of this type{explained}:",
                notation,
            ]
        )

    @hook
    def prompt_texts(self, signature: type[Signature]) -> Mapping[str, PromptText]:
        """Each output's type in the notation (``int | null``), which the prompt shows.

        The notation writes no text after a value, so there is no hint to set aside.
        """
        cache = signature.__structio_cache__
        texts: dict[str, PromptText] | None = cache.get(("compact", "prompt_texts"))
        if texts is None:
            texts = cache[("compact", "prompt_texts")] = {
                name: PromptText(
                    placeholders=frozenset((compact_type(f.annotation),)), optional=not f.required
                )
                for name, f in signature.output_fields.items()
            }
        return texts

    @hook
    def user_message_output_requirements(self, signature: type[Signature]) -> str:
        """``Respond with a JSON object of the type above, its fields in this order: ...``."""
        names = ", then ".join(f"`{name}`" for name in signature.output_fields)
        return f"Respond with a JSON object of the type above, its fields in this order: {names}."


def output_type(signature: type[Signature]) -> str:
    """A signature's outputs as one object type in the compact notation (computed once)."""
    cache = signature.__structio_cache__
    key = ("compact", "output_type")
    text: str | None = cache.get(key)
    if text is None:
        text = cache[key] = compact_fields(
            [
                (name, f.annotation, tuple(f.constraints.items()), f.desc)
                for name, f in signature.output_fields.items()
            ]
        )
    return text
