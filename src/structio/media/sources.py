"""Reading a media value's source: the mappings of content parts, wrapped downloads.

Helpers the value classes (`structio.media.base`, `structio.media.kinds`) read their sources
with; none of them knows the classes themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from structio.exceptions import MediaError
from structio.media.mime import _FORMAT_TYPES


class _Fetched:
    """Downloaded bytes on their way into a constructor, with what the download knew."""

    __slots__ = ("after", "before", "data", "label")

    def __init__(self, data: bytes, *, label: str, before: str | None, after: str | None) -> None:
        self.data = data
        self.label = label
        self.before = before
        self.after = after


def _image_mapping(source: Mapping[str, Any], detail: str | None) -> tuple[Any, str | None]:
    extra = set(source) - {"url", "detail"}
    if "url" not in source or extra:
        raise MediaError(
            f"an Image mapping has the keys 'url' and optionally 'detail', not "
            f"{sorted(map(str, source))}"
        )
    return source["url"], detail if detail is not None else source.get("detail")


def _audio_mapping(source: Mapping[str, Any], explicit: str | None) -> str:
    """The data URI of an ``input_audio``-like mapping: base64 data and its format."""
    data_key = next((k for k in ("data", "audio_base64") if k in source), None)
    format_key = next((k for k in ("format", "audio_format") if k in source), None)
    if data_key is None or format_key is None or len(source) != 2:
        raise MediaError(
            f"an Audio mapping has the keys 'data' (base64) and 'format' (e.g. 'wav'), not "
            f"{sorted(map(str, source))}"
        )
    data, fmt = source[data_key], source[format_key]
    if not isinstance(data, str) or not isinstance(fmt, str) or not fmt:
        raise MediaError("an Audio mapping's 'data' and 'format' must be strs")
    mime = explicit or _FORMAT_TYPES.get(fmt.lower(), f"audio/{fmt.lower()}")
    return f"data:{mime};base64,{data}"


def _file_mapping(
    source: Mapping[str, Any], file_id: str | None, filename: str | None
) -> tuple[Any, str | None, str | None]:
    keys = set(source)
    if keys - {"file_data", "file_id", "filename"} or len(keys & {"file_data", "file_id"}) != 1:
        raise MediaError(
            "a File mapping has 'file_data' (a data URI) or 'file_id', and optionally "
            f"'filename', not {sorted(map(str, keys))}"
        )
    name = filename if filename is not None else source.get("filename")
    if "file_id" in source:
        if file_id is not None:
            raise MediaError("File was given a file_id both in the mapping and as file_id=")
        return None, source["file_id"], name
    return source["file_data"], file_id, name


def _got(value: Any) -> str:
    return type(value).__name__


def _slot_names(cls: type) -> list[str]:
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        for name in klass.__dict__.get("__slots__", ()):
            if name != "__weakref__" and name not in names:
                names.append(name)
    return names
