"""A least-recently-used map bounded by an approximate size in bytes.

Caches keyed by content (rendered turns, token counts) must stay cheap however much they
are asked to hold: an entry read recently stays, the least recently read goes first, and
what they hold is bounded by bytes, not by a number of entries (ten thousand short
messages cost less than ten long ones). A lookup is O(1) and an eviction amortised O(1):
the order is an `OrderedDict`'s linked list, so evicting never scans (taking the first
key of a plain dict does, over the slots deleted before it: 1 µs an eviction at 4,096
entries, 2.9 µs at 65,536).
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any, Generic, TypeVar

__all__ = ["LRU", "approx_size"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: What an entry costs besides its key and value: the ordered dict's slot and link node,
#: the entry record and its size (about 200 bytes on CPython 3.11, tracemalloc).
ENTRY_OVERHEAD = 200


class LRU(Generic[K, V]):
    """A map that forgets its least recently used entries to stay under ``max_bytes``.

    Sizes are the caller's estimate, given with each entry (`approx_size` helps); the sum
    of the sizes held never exceeds ``max_bytes`` once `put` returns, and an entry larger
    than the whole budget is not kept at all.

    Recency is kept the CLOCK way (second chance), an approximation of LRU that costs a
    hit no reordering: a hit only marks its entry; eviction looks at the oldest entry and,
    if it was marked since eviction last passed it, unmarks it and moves it to the newest
    end instead (the refresh, made once when it matters, where an LRU list is reordered on
    every hit, hashing the key again). So an entry read since it was put, or since its
    last second chance, outlives every entry that was not; among entries all read, the
    oldest goes first.

    Safe to share between threads: a hit takes no lock (a lookup and a flag, each atomic
    under the GIL); changes are made under one lock.

    Args:
        max_bytes: The budget for the sizes of the entries held.
    """

    __slots__ = ("_items", "_lock", "_nbytes", "max_bytes")

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be 0 or more, not {max_bytes}")
        self.max_bytes = max_bytes
        # Each entry is [value, size, read since eviction last passed it]: a list, as
        # building one costs a fraction of an object with slots.
        self._items: OrderedDict[K, list[Any]] = OrderedDict()
        self._nbytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    @property
    def nbytes(self) -> int:
        """The sum of the sizes of the entries held."""
        return self._nbytes

    def get(self, key: K) -> V | None:
        """The value for ``key`` (marked as read), or ``None`` if not held.

        Raises:
            TypeError: The key cannot be hashed.
        """
        entry = self._items.get(key)
        if entry is None:
            return None
        entry[2] = True  # _READ, _VALUE: literals, as a global lookup costs this hot path
        value: V = entry[0]
        return value

    def put(self, key: K, value: V, size: int) -> None:
        """Hold ``value`` for ``key`` (replacing any), evicting the least recently used.

        Args:
            key: The key.
            value: The value; ``None`` cannot be told from a miss, so it is not held.
            size: Its approximate size in bytes, key and value together.
        """
        limit = self.max_bytes
        if value is None or size > limit:
            return  # holding it would mean dropping everything else for one entry
        items = self._items
        with self._lock:
            old = items.pop(key, None)
            nbytes = self._nbytes + size - (old[_SIZE] if old is not None else 0)
            # Room is made before the entry goes in, so that it is never its own victim.
            spared = 0
            while nbytes > limit:
                oldest, entry = items.popitem(last=False)  # the head of a linked list: O(1)
                # A second chance for an entry read since it was put or last spared; one
                # pass of them at most, so that a stream of hits cannot hold this loop.
                if entry[_READ] and spared <= len(items):
                    entry[_READ] = False
                    items[oldest] = entry
                    spared += 1
                else:
                    nbytes -= entry[_SIZE]
            items[key] = [value, size, False]
            self._nbytes = nbytes

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._items.clear()
            self._nbytes = 0


_VALUE, _SIZE, _READ = range(3)


def approx_size(value: object) -> int:
    """About how many bytes ``value`` holds: itself, and the items of tuples and lists.

    Strings and bytes count by their length and header (exact for ASCII text and bytes);
    classes and other shared constants (``None``, booleans) by a reference; other objects
    (numbers, dates) by their own size without what they refer to. Meant for keys and
    values of an `LRU`, which are frozen data: tuples of strings, bytes, scalars and
    classes. Runs on every miss, so it is cheap: no call per item but `len`.
    """
    kind = type(value)
    if kind is str or kind is bytes:
        return _TEXT_HEADER + len(value)  # type: ignore[arg-type]
    if kind is not tuple and kind is not list:
        return _item_size(value)
    total = 0
    pending: list[Any] = []
    items: Any = value
    while True:
        total += _SEQUENCE_HEADER + _REFERENCE * len(items)
        for item in items:
            kind = type(item)
            if kind is str or kind is bytes:
                total += _TEXT_HEADER + len(item)
            elif kind is int:
                total += _INT
            elif kind is tuple or kind is list:
                pending.append(item)  # a loop, not recursion: keys can nest deep
            elif item is not None and kind is not bool and not isinstance(item, type):
                total += sys.getsizeof(item)
        if not pending:
            return total
        items = pending.pop()


def _item_size(value: object) -> int:
    if value is None or type(value) is bool or isinstance(value, type):
        return 0  # shared: the reference to it is counted where it is held
    return sys.getsizeof(value)


# Sizes on 64-bit CPython 3.11: a str or bytes object besides its characters (an ASCII
# str: 49; bytes: 33), a tuple (40) or list (56) besides its references, an int.
_TEXT_HEADER = 49
_SEQUENCE_HEADER = 48
_REFERENCE = 8
_INT = 28
