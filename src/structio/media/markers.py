"""Media values in prompt text: the marker registry and text turned into content parts.

Prompts are rendered as text, so a value is put into that text as a marker
(``<<structio-media:KEY>>``) that survives ``json.dumps`` unchanged; `split_markers` turns the
rendered text back into OpenAI content parts. The registry maps keys to values weakly: a
marker never keeps a large value alive. `structio.media.base.marker` registers a value.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
import threading
import weakref
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from structio.exceptions import MediaError


class _Valued(Protocol):
    """What the registry holds: a media value (`structio.media.base.Media`)."""

    def content_part(self) -> dict[str, Any]: ...


MARKER_PREFIX = "<<structio-media:"
_MARKER = re.compile(r"<<structio-media:([0-9a-f]{32})>>")
_MEDIA_PART_TYPES = frozenset({"image_url", "input_audio", "file"})

# Keys are digests of content parts, so equal values share a key and whichever was registered
# last answers for both. Weak values: a marker must never keep a large value alive.
_REGISTRY: weakref.WeakValueDictionary[str, _Valued] = weakref.WeakValueDictionary()
_REGISTRY_LOCK = threading.Lock()
_MARKERS_ON: contextvars.ContextVar[int] = contextvars.ContextVar(
    "structio_media_markers", default=0
)


def has_markers(text: str) -> bool:
    """Whether ``text`` may hold media markers (a fast check before `split_markers`)."""
    return MARKER_PREFIX in text


def split_markers(text: str) -> str | list[dict[str, Any]]:
    """Turn rendered text with media markers into OpenAI content parts.

    Returns:
        ``text`` itself when it holds no marker; else the parts in order: a
        ``{"type": "text", "text": ...}`` part for each non-empty piece of text between
        markers and each value's `Media.content_part`.

    Raises:
        MediaError: A marker names a value that is no longer alive.
    """
    if MARKER_PREFIX not in text:
        return text
    parts: list[dict[str, Any]] = []
    end = 0
    for found in _MARKER.finditer(text):
        with _REGISTRY_LOCK:
            media = _REGISTRY.get(found.group(1))
        if media is None:
            raise MediaError(
                f"the text holds the marker {found.group(0)!r}, but this media value is no "
                f"longer alive: render and send in one step, keeping the value referenced"
            )
        if found.start() > end:
            parts.append({"type": "text", "text": text[end : found.start()]})
        parts.append(media.content_part())
        end = found.end()
    if not parts:
        return text
    if end < len(text):
        parts.append({"type": "text", "text": text[end:]})
    return parts


@contextlib.contextmanager
def markers() -> Iterator[None]:
    """Within this block, pydantic JSON serialization writes media values as markers.

    Re-entrant, and scoped to the current thread or task (a context variable).
    """
    token = _MARKERS_ON.set(_MARKERS_ON.get() + 1)
    try:
        yield
    finally:
        _MARKERS_ON.reset(token)


def is_media_part(part: Mapping[str, Any]) -> bool:
    """Whether a content part carries an image, audio or file (not text)."""
    return part.get("type") in _MEDIA_PART_TYPES
