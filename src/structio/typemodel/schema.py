"""JSON schemas of types: strict schemas for providers' structured-output modes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["strict_schema"]


def strict_schema(fields: Mapping[str, Any]) -> dict[str, Any] | None:
    """A strict JSON schema of an object with these fields (name to annotation), or ``None``.

    Every object lists all its properties as required and forbids others, as OpenAI's
    strict structured outputs demand. An open ``dict`` (or ``Any``) cannot be expressed
    that way, and closing it would force ``{}``, so ``None`` says: use JSON mode instead.
    """
    from pydantic import TypeAdapter

    properties: dict[str, Any] = {}
    defs: dict[str, Any] = {}
    for name, annotation in fields.items():
        schema = TypeAdapter(annotation).json_schema()
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
