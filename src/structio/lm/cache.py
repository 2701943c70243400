"""The response cache: in memory, in front of a disk cache that processes can share."""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from structio._util.secrets import public_params
from structio.lm.types import LMResponse

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["ResponseCache", "cache_key", "default_cache", "public_params"]

# Request parameters that never change a response: they are left out of the key.
_NOT_IN_KEY = frozenset(
    {"cache", "num_retries", "max_retries", "timeout", "request_timeout", "metadata", "stream"}
)


def cache_key(model: str, messages: Any, params: Mapping[str, Any]) -> str:
    """A stable key for a request: model, messages and parameters, never credentials."""
    keyed = {k: v for k, v in public_params(params).items() if k not in _NOT_IN_KEY}
    payload = {"model": model, "messages": messages, "params": keyed}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=_key_default)
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _key_default(value: Any) -> Any:
    schema = getattr(value, "model_json_schema", None)
    if callable(schema):  # a pydantic class given as response_format
        return {"schema": schema()}
    return repr(value)


class ResponseCache:
    """Model responses by request: an in-memory LRU in front of a disk cache.

    The disk tier is a `diskcache` SQLite store, safe when several processes (or threads)
    share the directory. Entries are JSON text, so nothing is unpickled from disk.

    Args:
        directory: Where the disk tier lives; ``None`` keeps the cache in memory only.
        memory_size: How many responses the in-memory tier keeps.
    """

    def __init__(self, directory: str | Path | None = None, *, memory_size: int = 4096) -> None:
        from pathlib import Path

        self.directory = Path(directory).expanduser() if directory is not None else None
        self.memory_size = memory_size
        self._memory: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        self._disk: Any = None

    def __repr__(self) -> str:
        return f"ResponseCache(directory={str(self.directory) if self.directory else None!r})"

    def _disk_cache(self) -> Any:
        if self.directory is None:
            return None
        if self._disk is None:
            import diskcache

            with self._lock:
                if self._disk is None:
                    self.directory.mkdir(parents=True, exist_ok=True)
                    self._disk = diskcache.Cache(str(self.directory))
        return self._disk

    def get(self, key: str) -> LMResponse | None:
        """The cached response for ``key``, or ``None``."""
        with self._lock:
            text = self._memory.get(key)
            if text is not None:
                self._memory.move_to_end(key)
        if text is None:
            disk = self._disk_cache()
            stored = disk.get(key) if disk is not None else None
            if not isinstance(stored, str):
                return None
            text = stored
            self._remember(key, text)
        try:
            return LMResponse.from_dict(json.loads(text))
        except (ValueError, KeyError, TypeError):
            return None  # an entry from an incompatible version: treat as a miss

    def set(self, key: str, response: LMResponse) -> None:
        """Store a response under ``key`` in memory and on disk."""
        text = json.dumps(response.to_dict(), ensure_ascii=False)
        self._remember(key, text)
        disk = self._disk_cache()
        if disk is not None:
            disk.set(key, text)

    def _remember(self, key: str, text: str) -> None:
        with self._lock:
            self._memory[key] = text
            self._memory.move_to_end(key)
            while len(self._memory) > self.memory_size:
                self._memory.popitem(last=False)

    def clear(self) -> None:
        """Forget every response, in memory and on disk."""
        with self._lock:
            self._memory.clear()
        disk = self._disk_cache()
        if disk is not None:
            disk.clear()

    def close(self) -> None:
        """Close the disk tier (it reopens on next use)."""
        with self._lock:
            if self._disk is not None:
                self._disk.close()
                self._disk = None


_DEFAULT: dict[Path, ResponseCache] = {}
_DEFAULT_LOCK = threading.Lock()


def default_cache() -> ResponseCache:
    """The shared cache in ``$STRUCTIO_CACHE_DIR`` (default ``~/.cache/structio``)."""
    from pathlib import Path

    root = Path(os.environ.get("STRUCTIO_CACHE_DIR") or "~/.cache/structio").expanduser()
    with _DEFAULT_LOCK:
        cache = _DEFAULT.get(root)
        if cache is None:
            cache = _DEFAULT[root] = ResponseCache(root / "responses")
        return cache
