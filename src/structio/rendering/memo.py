"""Remembering rendered demo and history messages by their content.

Demos and conversation turns come back call after call, and rendering them (JSON for lists,
dicts and models) is most of the cost of formatting a prompt. A turn is looked up by a
hashable *copy of its content* (`freeze`): equal content gives the same text, so nothing
stale can be served even when the caller mutates a dict between calls. Values whose
rendering might depend on more than their type and content are not frozen, and such a turn
is rendered afresh every time.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import marshal
import sys
import threading
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar

from structio.rendering.formatting import BulletedDict, BulletedList, NumberedDict, NumberedList
from structio.signatures.history import History

__all__ = ["RenderCache", "Unfreezable", "freeze"]

T = TypeVar("T")
_NONE = type(None)
_SCALARS = frozenset((int, float, bool, _NONE, bytes, decimal.Decimal))
_TIMES = frozenset((datetime.date, datetime.datetime, datetime.time, datetime.timedelta))


class Unfreezable(Exception):  # noqa: N818 - a signal between two functions, not an error
    """The value's rendering may depend on more than its type and content."""


def freeze(value: Any) -> Hashable:
    """A hashable copy of ``value``'s content and types, or `Unfreezable`.

    Types are part of the key (``1``, ``1.0`` and ``True`` are equal in Python but render
    differently). Containers keep their order. Pydantic models are their class and fields.
    """
    t = type(value)
    if t is str:
        text: str = value
        return text
    kind = _KINDS.get(t)
    if kind is None:
        kind = _KINDS[t] = _kind(t)
    if t is list or t is tuple or t is dict:
        # marshal copies builtin containers of builtin values in C, types and all (it
        # refuses subclasses, so an enum or a BulletedList inside falls through to below).
        try:
            return marshal.dumps(value)
        except ValueError:
            pass
    # Strings, the commonest items, are their own key: inlined, as this runs per call.
    if kind == _LIST:
        return (t, tuple([v if type(v) is str else freeze(v) for v in value]))
    if kind == _DICT:
        return (t, tuple([(_item(k), _item(v)) for k, v in value.items()]))
    if kind == _ATOM:
        return (t, value)
    if kind == _MODEL:
        extra = value.__pydantic_extra__
        return (t, freeze(value.__dict__), freeze(extra) if extra else None)
    if kind == _HISTORY:
        return (t, freeze(value.messages))
    raise Unfreezable


def _item(value: Any) -> Hashable:
    if type(value) is str:
        text: str = value
        return text
    return freeze(value)


_LIST, _DICT, _ATOM, _MODEL, _HISTORY, _OTHER = range(6)
_KINDS: dict[type, int] = {}


def _kind(t: type) -> int:
    """How values of a type are frozen (worked out once per type)."""
    if t in (list, tuple, BulletedList, NumberedList):
        return _LIST
    if t in (dict, BulletedDict, NumberedDict):
        return _DICT
    if t in _SCALARS or t in _TIMES or issubclass(t, enum.Enum):
        return _ATOM
    if t is History:
        return _HISTORY
    pydantic_main = sys.modules.get("pydantic.main")
    if pydantic_main is not None and issubclass(t, pydantic_main.BaseModel):
        return _MODEL
    return _OTHER


class RenderCache:
    """A bounded map from frozen content to what it rendered to (oldest entries go first)."""

    def __init__(self, size: int = 4096) -> None:
        self._items: dict[Hashable, Any] = {}
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: Callable[[], Hashable], render: Callable[[], T]) -> T:
        """``render()``, or what it gave before for the same key.

        A key that cannot be made (`Unfreezable`) means rendering every time.
        """
        try:
            frozen = key()
        except Unfreezable:
            return render()
        try:
            found = self._items.get(frozen)
        except TypeError:  # an unhashable value inside a model field, say
            return render()
        if found is None:
            found = render()
            with self._lock:
                if len(self._items) >= self._size:
                    self._items.pop(next(iter(self._items)))
                self._items[frozen] = found
        result: T = found
        return result


def freeze_fields(values: Mapping[str, Any]) -> Hashable:
    """A turn or demo as a key: its fields, in order, frozen."""
    if type(values) is dict:
        try:
            return marshal.dumps(values)
        except ValueError:
            pass
    return tuple([(k, v if type(v) is str else freeze(v)) for k, v in values.items()])
