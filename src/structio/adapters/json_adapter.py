"""`JSONAdapter`: inputs as sections, outputs as one JSON object."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from structio.adapters._values import jsonable, type_info
from structio.adapters.base import _STRUCTURE_SENTENCE, Adapter, SignatureLike, as_signature
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

    def parse(self, signature: SignatureLike, completion: str) -> dict[str, Any]:
        """Read the outputs from the JSON object in a completion.

        Code fences, prose around the object, single quotes, trailing commas and Python
        literals are tolerated; keys that are not outputs are ignored; ``null`` counts as
        absent (so an optional output becomes ``None``).

        Raises:
            ParseError: No JSON object can be read, a required output is missing, or a value
                does not fit its type or constraints.
        """
        sig = as_signature(signature)
        plan = self._plan(sig)
        obj = load_json_object(completion)
        if obj is None:
            names = ", ".join(f'"{n}"' for n in sig.output_fields)
            return self._finish(
                sig,
                completion,
                {},
                {},
                problem=f"the completion holds no JSON object (expected {{{names}}})",
            )
        values: dict[str, Any] = {}
        invalid: dict[str, tuple[str, str]] = {}
        for name, info in plan.output_infos.items():
            value = obj.get(name)
            if value is None:
                continue
            try:
                values[name] = info.parse_json_value(value)
            except ValueError as exc:
                shown = value if isinstance(value, str) else json.dumps(jsonable(value))
                invalid[name] = (shown, str(exc))
        return self._finish(sig, completion, values, invalid)


def load_json_object(text: str) -> dict[str, Any] | None:
    """Find the JSON object in a completion, repairing it if needed; ``None`` if there is none."""
    stripped = text.strip()
    if not stripped:
        return None
    obj = _decode_object(stripped)
    if obj is not None:
        return obj
    inner = _first_balanced_object(stripped)
    if inner is not None and inner != stripped:
        return _decode_object(inner)
    return None


def _decode_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value
    if text.startswith("{"):
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            value = None
        if isinstance(value, dict):
            return {str(k): v for k, v in value.items()}
    import json_repair

    value = json_repair.loads(text)
    return value if isinstance(value, dict) else None


def _first_balanced_object(text: str) -> str | None:
    start = text.find("{")
    while start != -1:
        depth = 0
        quote: str | None = None
        i = start
        while i < len(text):
            ch = text[i]
            if quote:
                if ch == "\\":
                    i += 2
                    continue
                if ch == quote:
                    quote = None
            elif ch == '"':
                quote = ch
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return text[start : i + 1]
            i += 1
        start = text.find("{", start + 1)
    return None


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
