"""Values as JSON-compatible data: the one conversion every layer uses."""

from __future__ import annotations

from typing import Any

__all__ = ["jsonable"]


def _is_native(value: Any) -> bool:
    t = type(value)
    if t is str or t is int or t is float or t is bool or value is None:
        return True
    if t is list or t is tuple:
        return all(_is_native(v) for v in value)
    if t is dict:
        return all(type(k) is str and _is_native(v) for k, v in value.items())
    return False


def jsonable(value: Any) -> Any:
    """Convert a value to JSON-compatible data (models, enums, dates... via pydantic).

    A value pydantic does not know is written by its ``__structio_json__()`` method when
    it has one (an image as its URL, a tool as its description), else as ``str(value)``.
    """
    if _is_native(value):
        return value
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, by_alias=False, fallback=_fallback)


def _fallback(value: Any) -> Any:
    own = getattr(type(value), "__structio_json__", None)
    if own is not None:
        return own(value)
    return str(value)
