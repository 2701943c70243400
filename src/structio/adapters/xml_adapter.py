"""`XMLAdapter`: fields as ``<name>...</name>`` elements, nested values as nested elements."""

from __future__ import annotations

import functools
import json
import types
import typing
from collections.abc import Mapping
from functools import partial
from typing import Any, ClassVar

from structio._util.data import jsonable
from structio.adapters.base import STRUCTURE_SENTENCE
from structio.adapters.chat_adapter import ChatAdapter
from structio.adapters.fields import placeholder_texts, text_outputs
from structio.adapters.grammars import cached_grammar, xml_rules
from structio.adapters.hooks import hook
from structio.adapters.json_adapter import output_schema
from structio.grammar import Grammar
from structio.parsing.found import PromptText
from structio.parsing.locate import Found, bare_value, find_json, find_labels, find_sections
from structio.parsing.stream import StreamReader, XMLStreamReader
from structio.parsing.xml import (
    Shape,
    find_xml,
    is_tag_name,
    quote_attribute,
    shape_of,
    untyped_value,
    written_text,
)
from structio.rendering.formatting import input_text
from structio.rendering.text import format_value
from structio.signatures.history import History
from structio.signatures.signature import Signature
from structio.typemodel.info import type_info

__all__ = ["XMLAdapter"]


class XMLAdapter(ChatAdapter):
    r"""Writes each field as an XML element, nested values as nested elements, and reads back.

    The prompts equal DSPy 3.4.1's `XMLAdapter` byte for byte (except for the DSPy bugs
    structio fixes): inputs and scalar outputs as ``<name>⏎value⏎</name>``; outputs that are
    pydantic models, lists or dicts as nested elements (``<item>`` for each list item, a key
    as a tag, ``<entry key="...">`` for a key that is no tag name), with their structure
    shown in the system message and the reminder.

    What it writes reads back exactly: ``&`` and ``<`` in text are escaped (``&amp;``,
    ``&lt;``) and whitespace at a value's edges is written as character references. Reading
    takes both escaped and raw text (see `structio.parsing.xml`), a nested value by its
    declared type, and never makes up a value: an output whose element is missing is
    missing, one opened and never closed is cut off. A completion in another format (a JSON
    object, ``[[ ## field ## ]]`` sections) is read as `ChatAdapter` reads it, and a call
    falls back to `JSONAdapter` as `ChatAdapter` does.

    Example:
        >>> import structio as sio
        >>> sio.XMLAdapter().parse("question -> answer: int", "<answer>42</answer>")
        {'answer': 42}
    """

    route: ClassVar[str] = "xml"

    # -- the prompt -------------------------------------------------------------------------

    @hook
    def format_field_structure(self, signature: type[Signature]) -> str:
        """``All interactions will be structured ...``, then one element per field.

        A nested output (a model, a list, a dict) shows its structure
        (``<patients><item><name>...</name></item></patients>``); any other output its
        ``{name}`` placeholder and type note.
        """
        outputs = "\n\n".join(
            _structure(name, f.annotation)
            if _nested(f.annotation)
            else f"<{name}>\n{type_info(f.annotation).placeholder(name)}\n</{name}>"
            for name, f in signature.output_fields.items()
        )
        return "\n\n".join([STRUCTURE_SENTENCE, self.format_input_structure(signature), outputs])

    @hook
    def format_input_structure(self, signature: type[Signature]) -> str:
        """One ``<name>`` / ``{name}`` / ``</name>`` block per input (`History` excepted)."""
        return "\n\n".join(
            f"<{name}>\n{{{name}}}\n</{name}>"
            for name, f in signature.input_fields.items()
            if f.annotation is not History
        )

    @hook
    def prompt_texts(self, signature: type[Signature]) -> Mapping[str, PromptText]:
        """The ``{name}`` placeholder and type note of each output not shown as elements.

        A nested output's structure holds ``...`` in its leaves: `structio.parsing.xml`
        reads that text in a leaf that admits ``None`` as no value.
        """
        cache = signature.__structio_cache__
        texts: dict[str, PromptText] | None = cache.get(("xml", "prompt_texts"))
        if texts is None:
            outputs = signature.output_fields
            texts = cache[("xml", "prompt_texts")] = {
                name: text
                for name, text in placeholder_texts(signature).items()
                if not _nested(outputs[name].annotation)
            }
        return texts

    @hook
    def user_message_output_requirements(self, signature: type[Signature]) -> str:
        """``Respond with the corresponding output fields wrapped in XML tags ...``.

        With nested outputs: `` Use this nested XML structure: ...`` and their structures.
        """
        fields = ", then ".join(f"`<{name}>`" for name in signature.output_fields)
        structures = [
            _structure(name, f.annotation)
            for name, f in signature.output_fields.items()
            if _nested(f.annotation)
        ]
        text = f"Respond with the corresponding output fields wrapped in XML tags {fields}."
        if structures:
            text += " Use this nested XML structure: " + " ".join(structures)
        return text

    @hook
    def format_user_message_content(
        self,
        signature: type[Signature],
        inputs: Mapping[str, Any],
        *,
        prefix: str = "",
        main_request: bool = False,
    ) -> str:
        """A user message: the given inputs as elements, then the reminder on requests."""
        plan = self._plan(signature)
        blocks = []
        for name, _, is_str in plan.inputs:
            if name in inputs:
                value = inputs[name]
                text = (
                    value
                    if type(value) is str
                    else input_text(value, str_field=is_str, as_class=plan.input_formats.get(name))
                )
                blocks.append(f"<{name}>\n{text}\n</{name}>")
        parts = [prefix, "\n\n".join(blocks).strip()]
        if main_request:
            parts.append(plan.reminder)
        parts.append("")
        return "\n\n".join(parts).strip()

    @hook
    def format_assistant_message_content(
        self,
        signature: type[Signature],
        outputs: Mapping[str, Any],
        missing_field_message: str | None = None,
    ) -> str:
        """The outputs as elements, nested values as nested elements, separated by blank lines.

        Text is escaped so that it reads back exactly (see `structio.parsing.xml`); an
        absent output is written as ``missing_field_message``, as it is, or left out.
        """
        blocks = []
        for name, f in signature.output_fields.items():
            if name in outputs:
                blocks.append(_output_element(name, f.annotation, outputs[name]))
            elif missing_field_message is not None:
                blocks.append(f"<{name}>\n{missing_field_message}\n</{name}>")
        return "\n\n".join(blocks).strip()

    @hook
    def grammar(self, signature: type[Signature], *, think: bool = False) -> Grammar | None:
        """The elements in order, text escaped as written; nested values as nested elements."""
        return cached_grammar(
            self, signature, think, lambda sig: xml_rules(sig, output_schema(sig), _nested)
        )

    # -- reading ----------------------------------------------------------------------------

    @hook
    def stream_reader(
        self, signature: type[Signature], *, inputs: Mapping[str, Any] | None = None
    ) -> StreamReader:
        """A reader that gives each output as soon as its closing tag has arrived."""
        return XMLStreamReader(signature, partial(self.find, signature, inputs=inputs))

    @hook
    def locate(self, signature: type[Signature], text: str) -> Found | None:
        """Find the outputs: elements first, then a JSON object, sections, labels, a bare value.

        The first closed element named after each output is its value, unless a later one
        gives it another (then it has none; see `structio.parsing.xml`); prose around the
        elements is ignored. A completion without
        any output element is read as `ChatAdapter` reads one.
        """
        names = list(signature.fields)
        outputs = signature.output_fields
        return (
            find_xml(text, _annotations(signature))
            or find_json(text, outputs)
            or find_sections(text, names, outputs)
            or find_labels(
                text,
                names,
                {n: f.required for n, f in outputs.items()},
                [n for n, any_text in text_outputs(signature).items() if not any_text],
            )
            or bare_value(text_outputs(signature), text)
        )


def _annotations(signature: type[Signature]) -> dict[str, Any]:
    cache = signature.__structio_cache__
    found: dict[str, Any] | None = cache.get("xml_outputs")
    if found is None:
        found = cache["xml_outputs"] = {n: f.annotation for n, f in signature.output_fields.items()}
    return found


# -- nested outputs -------------------------------------------------------------------------


def _nested(annotation: Any) -> bool:
    """Whether an output is written as nested elements: DSPy's rule, for the same prompts.

    A pydantic model, TypedDict, ``list[...]`` or ``dict[...]`` (also ``Optional``), but not
    structio's own types (`ToolCalls`...); bare ``list``/``dict``, tuples and others are text.
    """
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if len(args) == 1 and origin in (typing.Union, types.UnionType):
        annotation = args[0]
        origin = typing.get_origin(annotation)
    item = annotation
    if origin is list and typing.get_args(annotation):
        item = typing.get_args(annotation)[0]
    if _is_model(item) and _is_own(item):
        return False
    return origin in (list, dict) or _is_typeddict(annotation) or _is_model(annotation)


def _is_model(annotation: Any) -> bool:
    from pydantic import BaseModel

    # On 3.10 `list[int]` passes isinstance(..., type), but is no class to issubclass.
    return (
        isinstance(annotation, type)
        and typing.get_origin(annotation) is None
        and issubclass(annotation, BaseModel)
    )


def _is_own(klass: type) -> bool:
    module = klass.__module__
    return module == "structio" or module.startswith("structio.")


def _is_typeddict(annotation: Any) -> bool:
    import typing_extensions

    return typing.is_typeddict(annotation) or typing_extensions.is_typeddict(annotation)


@functools.lru_cache(maxsize=512)
def _cached_structure(tag: str, annotation: Any) -> str:
    from pydantic import TypeAdapter

    schema = TypeAdapter(annotation).json_schema(by_alias=False)
    return _schema_xml(tag, schema, schema.get("$defs", {}), frozenset())


def _structure(tag: str, annotation: Any) -> str:
    """The nested structure of an output, as the prompt shows it (from its JSON schema)."""
    try:
        return _cached_structure(tag, annotation)
    except TypeError:  # an unhashable annotation
        return _cached_structure.__wrapped__(tag, annotation)


def _schema_xml(
    tag: str, schema: Mapping[str, Any], definitions: Mapping[str, Any], seen: frozenset[str]
) -> str:
    """``<tag>`` with an element per property, ``<item>`` for arrays, ``...`` for leaves.

    A reference is followed once per path (a recursive model ends in ``...``); of a union,
    the first choice that is not ``null`` is shown.
    """
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in seen or name not in definitions:
            return f"<{tag}>...</{tag}>"
        return _schema_xml(tag, definitions[name], definitions, seen | {name})
    choices = schema.get("anyOf")
    if choices:
        choice = next((c for c in choices if c.get("type") != "null"), choices[0])
        return _schema_xml(tag, choice, definitions, seen)
    if schema.get("type") == "array":
        items = schema.get("items", {})
        return f"<{tag}>{_schema_xml('item', items, definitions, seen)}</{tag}>"
    properties = schema.get("properties", {})
    children = "".join(
        _schema_xml(name, child, definitions, seen) for name, child in properties.items()
    )
    return f"<{tag}>{children}</{tag}>" if children else f"<{tag}>...</{tag}>"


def _output_element(name: str, annotation: Any, value: Any) -> str:
    """One output as the assistant writes it."""
    if _nested(annotation):
        data = jsonable(value)
        if isinstance(data, (dict, list)):
            return _element(data, shape_of(annotation), name)
    text = value if type(value) is str else format_value(value, str_field=annotation is str)
    return f"<{name}>\n{written_text(text, name)}\n</{name}>"


def _element(data: Any, shape: Shape, tag: str, key: str | None = None) -> str:
    """JSON data as an element of the declared shape, on one line (as DSPy writes it).

    Where DSPy's form would read back differently, the value is written so that it reads
    back exactly: an empty list where ``None`` is also allowed is ``<tag></tag>`` (``<tag />``
    is ``None``); a value of no declared type whose text would read as another value
    (``"1"``, ``""``, an empty list) is written as JSON.
    """
    opening = f"<{tag} key={quote_attribute(key)}" if key is not None else f"<{tag}"
    structured = shape.kind in ("list", "tuple", "dict", "model")
    if data is None:
        return f"{opening} />"
    if isinstance(data, list):
        if not data:
            if not structured:
                return f"{opening}>[]</{tag}>"
            return f"{opening}></{tag}>" if shape.optional else f"{opening} />"
        if shape.kind not in ("list", "tuple", "any"):
            return _text_element(opening, tag, json.dumps(data, ensure_ascii=False))
        items = "".join(_element(item, shape.item(i), "item") for i, item in enumerate(data))
        return f"{opening}>{items}</{tag}>"
    if isinstance(data, dict):
        if not data and not structured:
            return f"{opening}>{{}}</{tag}>"
        if shape.kind not in ("dict", "model", "any"):
            return _text_element(opening, tag, json.dumps(data, ensure_ascii=False))
        children = []
        for index, (raw_key, child) in enumerate(data.items()):
            child_key = str(raw_key)
            child_shape = shape.child(child_key, index)
            if _tag_key(child_key) and not (shape.kind == "any" and child_key == "item"):
                children.append(_element(child, child_shape, child_key))
            else:
                children.append(_element(child, child_shape, "entry", child_key))
        return f"{opening}>{''.join(children)}</{tag}>"
    if isinstance(data, str):
        text = data
        if shape.untyped and untyped_value(data) != data:
            text = json.dumps(data, ensure_ascii=False)  # it would read as another value
    else:
        text = str(data)
    return _text_element(opening, tag, text)


def _text_element(opening: str, tag: str, text: str) -> str:
    return f"{opening}>{written_text(text)}</{tag}>"


def _tag_key(key: str) -> bool:
    """Whether a dict key is written as a tag: DSPy's rule, where structio reads it back."""
    dspy_rule = (key[:1] + key[1:].replace("-", "_").replace(".", "_")).isidentifier()
    return dspy_rule and is_tag_name(key)
