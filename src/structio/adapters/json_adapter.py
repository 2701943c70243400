"""`JSONAdapter`: inputs as sections, outputs as one JSON object."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from structio.adapters._completions import Found, find_json, find_labels, find_sections
from structio.adapters._values import jsonable, type_info
from structio.adapters.base import _STRUCTURE_SENTENCE, Adapter, bare_value
from structio.signatures.signature import Signature

if TYPE_CHECKING:
    from structio.lm.base import BaseLM

__all__ = ["JSONAdapter", "strict_output_schema"]


class JSONAdapter(Adapter):
    """Asks for the outputs as one JSON object and reads it back, repairing common damage.

    Inputs are written as ``[[ ## name ## ]]`` sections, as with `ChatAdapter`; the prompts
    equal DSPy 3.4.1's byte for byte. Unlike DSPy, finetuning data works with this adapter.

    Example:
        >>> import structio as sio
        >>> sio.JSONAdapter().parse("question -> answer: int", '{"answer": "42"}')
        {'answer': 42}
    """

    @property
    def _own_path(self) -> Literal["json"]:
        return "json"

    def lm_kwargs(
        self, lm: BaseLM, signature: type[Signature], lm_kwargs: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Add a ``response_format`` the model supports, unless the caller chose one.

        A strict ``json_schema`` built from the output fields when litellm says the model
        supports schemas and no output is an open ``dict`` (strict schemas cannot express one,
        and forcing ``{}`` would lose data); ``{"type": "json_object"}`` when the model supports
        only that; nothing (plain prompting) otherwise.
        """
        kwargs = dict(lm_kwargs)
        if "response_format" in kwargs:
            return kwargs
        schema = strict_output_schema(signature) if lm.supports_response_schema else None
        if schema is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": _schema_name(signature), "strict": True, "schema": schema},
            }
        elif lm.supports_json_mode or lm.supports_response_schema:
            kwargs["response_format"] = {"type": "json_object"}
        return kwargs

    def format_field_structure(self, signature: type[Signature]) -> str:
        """The input sections, then the JSON skeleton of the outputs with type hints."""
        inputs = self.format_input_structure(signature)
        skeleton = {
            name: type_info(f.annotation).placeholder(name)
            for name, f in signature.output_fields.items()
        }
        return "\n\n".join(
            [
                _STRUCTURE_SENTENCE,
                "Inputs will have the following structure:",
                inputs,
                "Outputs will be a JSON object with the following fields.",
                json.dumps(skeleton, indent=2, ensure_ascii=False),
            ]
        )

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
            or _bare_json_value(signature, text)
            or find_sections(text, names, outputs)
            or find_labels(text, names, {n: f.required for n, f in outputs.items()})
            or bare_value(signature, text)
        )


def _bare_json_value(signature: type[Signature], text: str) -> Found | None:
    """A single-output signature answered with a bare JSON value (``42``, ``"Paris"``)."""
    if len(signature.output_fields) != 1:
        return None
    try:
        value = json.loads(text, strict=False)
    except ValueError:
        return None
    if isinstance(value, dict):
        return None
    return Found(texts={next(iter(signature.output_fields)): value}, how="JSON value")


def _schema_name(signature: type[Signature]) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", signature.__name__)[:64] or "outputs"


def strict_output_schema(signature: type[Signature]) -> dict[str, Any] | None:
    """A strict JSON schema of the outputs, or ``None`` when an output is an open object.

    Every object lists all its properties as required and forbids others, as OpenAI's
    strict structured outputs demand. An open ``dict`` (or ``Any``) cannot be expressed
    that way, and closing it would force ``{}``, so the caller falls back to JSON mode.
    Computed once per signature.
    """
    cache = signature.__structio_cache__
    key = ("json", "strict_schema")
    if key not in cache:
        cache[key] = _build_strict_schema(signature)
    schema: dict[str, Any] | None = cache[key]
    return schema


def _build_strict_schema(signature: type[Signature]) -> dict[str, Any] | None:
    from pydantic import TypeAdapter

    properties: dict[str, Any] = {}
    defs: dict[str, Any] = {}
    for name, field in signature.output_fields.items():
        schema = TypeAdapter(field.annotation).json_schema()
        defs.update(schema.pop("$defs", {}))
        properties[name] = schema
    root: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    if defs:
        root["$defs"] = defs
    return root if _make_strict(root) else None


def _make_strict(node: Any) -> bool:
    """Close every object in place; False if one is open (a dict or Any)."""
    if isinstance(node, list):
        return all(_make_strict(item) for item in node)
    if not isinstance(node, dict):
        return True
    node.pop("default", None)
    if not node or (node.get("type") == "object" and "properties" not in node):
        return False  # Any ({}), or a dict with free keys
    if "properties" in node:
        node["required"] = list(node["properties"])
        node["additionalProperties"] = False
    for key in ("properties", "$defs"):
        if key in node and not all(_make_strict(v) for v in node[key].values()):
            return False
    for key in ("items", "anyOf", "allOf", "oneOf", "prefixItems"):
        if key in node and not _make_strict(node[key]):
            return False
    return True
