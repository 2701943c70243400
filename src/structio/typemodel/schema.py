"""JSON schemas of types: an object of fields as pydantic writes it, and its strict form.

`fields_schema` is the schema pydantic writes for an object with these fields (every field
required, definitions gathered at the root); `structio.typemodel.dialects` turns it into
each provider's wire schema. `strict_schema` is the OpenAI strict form of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from structio.typemodel.dialects import openai_schema

__all__ = ["fields_schema", "strict_schema"]


def fields_schema(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON schema pydantic writes of an object with these fields (name to annotation).

    Every field is required; the definitions of all fields' models are gathered in one
    ``$defs`` at the root, each under one name (two models of the same name get two).
    """
    from pydantic import TypeAdapter

    by_key, top = TypeAdapter.json_schemas(
        [(name, "validation", TypeAdapter(annotation)) for name, annotation in fields.items()]
    )
    root: dict[str, Any] = {
        "type": "object",
        "properties": {name: by_key[(name, "validation")] for name in fields},
        "required": list(fields),
    }
    if "$defs" in top:
        root["$defs"] = top["$defs"]
    return root


def strict_schema(fields: Mapping[str, Any]) -> dict[str, Any] | None:
    """A strict JSON schema of an object with these fields (name to annotation), or ``None``.

    OpenAI's strict dialect (`structio.typemodel.dialects.openai_schema`): every object
    lists all its properties as required and forbids others, and unions are ``anyOf``. An
    open ``dict`` (or ``Any``) cannot be expressed that way, and closing it would force
    ``{}``, so ``None`` says: use JSON mode instead.
    """
    return openai_schema(fields_schema(fields))
