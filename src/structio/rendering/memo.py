"""Remembering rendered demo and history messages by their content.

Demos and conversation turns come back call after call, and rendering them (JSON for lists,
dicts and models) is most of the cost of formatting a prompt. A turn is looked up by a
hashable *copy of its content* (`freeze`): equal content gives the same text, so nothing
stale can be served even when the caller mutates a dict between calls. Values whose
rendering might depend on more than their type and content are not frozen, and such a turn
is rendered afresh every time.

Each cache keeps what was used most recently, up to `DEFAULT_MAX_BYTES` of keys and text:
a 6,000-turn history, or a hundred chats on one signature, stay cached where a fixed count
of 4,096 entries was too few. Past the budget the least recently used go, at O(1) each, so
a miss costs the same however full the cache (`structio._util.lru`).
"""

from __future__ import annotations

import datetime
import decimal
import enum
import marshal
import sys
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar

from structio._util.lru import ENTRY_OVERHEAD, LRU, approx_size
from structio.media import Media
from structio.rendering.formatting import BulletedDict, BulletedList, NumberedDict, NumberedList
from structio.rendering.prompt import Part
from structio.signatures.history import History

__all__ = ["DEFAULT_MAX_BYTES", "RenderCache", "Unfreezable", "freeze"]

#: What one render cache (one signature under one adapter's options) may hold: keys and
#: rendered text, approximately. A turn of a few hundred characters costs about 1.5 KiB,
#: so 32 MiB holds some 20,000 turns.
DEFAULT_MAX_BYTES = 32 * 1024 * 1024

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
        # Private state renders too (a tool call's result, once it has run).
        private = getattr(value, "__pydantic_private__", None)
        return (
            t,
            freeze(value.__dict__),
            freeze(extra) if extra else None,
            freeze(private) if private else None,
        )
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
    if t in _SCALARS or t in _TIMES or issubclass(t, (enum.Enum, Media)):
        return _ATOM  # media are immutable and equal by content
    if t is History:
        return _HISTORY
    pydantic_main = sys.modules.get("pydantic.main")
    if pydantic_main is not None and issubclass(t, pydantic_main.BaseModel):
        return _MODEL
    return _OTHER


class RenderCache:
    """What demos and turns rendered to, by frozen content; least recently used out first.

    Bounded by bytes (`DEFAULT_MAX_BYTES`), not by a count of entries. Shared by the
    threads of a batch: a hit takes no lock.

    Args:
        max_bytes: The budget for keys and rendered text, approximately.
    """

    __slots__ = ("_lru",)

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._lru: LRU[Hashable, Any] = LRU(max_bytes)

    def __len__(self) -> int:
        return len(self._lru)

    @property
    def nbytes(self) -> int:
        """The approximate bytes held (never above the budget)."""
        return self._lru.nbytes

    def get(self, key: Callable[[], Hashable], render: Callable[[], T]) -> T:
        """``render()``, or what it gave before for the same key.

        A key that cannot be made (`Unfreezable`) means rendering every time.
        """
        try:
            frozen = key()
        except Unfreezable:
            return render()
        try:
            found = self._lru.get(frozen)
        except TypeError:  # an unhashable value inside a model field, say
            return render()
        if found is None:
            found = render()
            self._lru.put(frozen, found, ENTRY_OVERHEAD + approx_size(frozen) + _size(found))
        result: T = found
        return result


def _size(rendered: object) -> int:
    """About how many bytes a rendering holds: the tuple, its parts and their text."""
    if type(rendered) is not tuple:
        return approx_size(rendered)
    total = _TUPLE + _REFERENCE * len(rendered)
    for part in rendered:
        if type(part) is Part:
            content = part.content
            size = len(content) if type(content) is str else approx_size(content)
            total += _PART + size + len(part.name)
        else:
            total += approx_size(part)
    return total


# A part besides its text: the object (4 slots) and two string headers (49 bytes each on
# CPython 3.11, as `approx_size` counts them); a tuple, and a reference in it.
_PART = 72 + 2 * 49
_TUPLE, _REFERENCE = 48, 8


def freeze_fields(values: Mapping[str, Any]) -> Hashable:
    """A turn or demo as a key: its fields, in order, frozen."""
    if type(values) is dict:
        try:
            return marshal.dumps(values)
        except ValueError:
            pass
    return tuple([(k, v if type(v) is str else freeze(v)) for k, v in values.items()])
