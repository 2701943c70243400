"""Checking a `Predict`'s demos against its signature, and demos as saved data."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from structio.exceptions import FormatError
from structio.signatures.history import History
from structio.signatures.signature import Signature

__all__ = ["checked_demos", "demo_from_data", "demo_to_data"]


def checked_demos(
    signature: type[Signature], demos: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The demos with each value converted to its field's type.

    A demo may leave fields out (an incomplete example) and give ``None``. A ``str`` field
    also takes a list of strings (shown as numbered passages, as the adapters do).

    Raises:
        FormatError: A demo is not a dict, names a field the signature lacks, or has a
            value that is not of the field's type; the message names the demo's index and
            the field.
    """
    from structio.adapters._values import type_info

    if isinstance(demos, (str, bytes, Mapping)):
        raise FormatError(f"demos must be a list of dicts, not a {type(demos).__name__}")
    checked: list[dict[str, Any]] = []
    fields = signature.fields
    for index, demo in enumerate(demos):
        if not isinstance(demo, Mapping):
            raise FormatError(
                f"demo {index} must be a dict of field name to value, not {type(demo).__name__}"
            )
        values: dict[str, Any] = {}
        for key, value in demo.items():
            field = fields.get(key)
            if field is None:
                close = difflib.get_close_matches(str(key), list(fields), n=1)
                hint = f" (did you mean `{close[0]}`?)" if close else ""
                raise FormatError(
                    f"demo {index}: `{key}` is not a field of {signature.__name__}{hint}; "
                    f"its fields: {', '.join(fields)}"
                )
            if value is None or field.annotation is History:
                values[key] = value
                continue
            passages = isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
            if field.annotation is str and passages:
                values[key] = list(value)
                continue
            info = type_info(field.annotation, tuple(field.constraints.items()))
            try:
                values[key] = info.validate(value)
            except ValueError as exc:
                raise FormatError(
                    f"demo {index}, field `{key}`: {value!r} is not a valid value: {exc}"
                ) from None
        checked.append(values)
    return checked


def demo_to_data(signature: type[Signature], demo: Mapping[str, Any]) -> dict[str, Any]:
    """A demo as JSON-ready data (models as dicts, enums as values, dates as text...)."""
    from structio.adapters._values import jsonable

    data: dict[str, Any] = {}
    for key, value in demo.items():
        if isinstance(value, History):
            data[key] = {"messages": jsonable(value.messages)}
        else:
            data[key] = jsonable(value)
    return data


def demo_from_data(signature: type[Signature], data: Mapping[str, Any]) -> dict[str, Any]:
    """A saved demo back with History values rebuilt (types are restored when checked)."""
    demo: dict[str, Any] = {}
    for key, value in data.items():
        field = signature.fields.get(key)
        if field is not None and field.annotation is History and isinstance(value, Mapping):
            demo[key] = History(value.get("messages") or [])
        else:
            demo[key] = value
    return demo
