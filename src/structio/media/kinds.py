"""The three kinds of media value: `Image`, `Audio` and `File`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from structio.exceptions import MediaError, UsageError
from structio.media.base import Media, _media_source
from structio.media.mime import _AUDIO_FORMATS, _MIB, _explicit_mime, _label, _url_name
from structio.media.sources import _audio_mapping, _file_mapping, _image_mapping

_DETAILS = ("low", "high", "auto")


class Image(Media):
    """An image input: a URL, a data URI, a path or bytes of an ``image/*`` type.

    Args:
        source: An ``http(s)`` URL (kept as the URL), a ``data:`` URI, a path, bytes, an
            `Image`, or what `to_json` returned.
        mime_type: The MIME type when the bytes or the file name do not show it.
        detail: The vision detail, ``"low"``, ``"high"`` or ``"auto"`` (default: unset).
        max_bytes: The size limit for this value (default 20 MiB).
        url: The source under DSPy's keyword (``Image(url=...)``).
        download: Fetch an ``http(s)`` source now and keep its data inline, as
            ``Image.from_url(url, download=True)`` (DSPy's ``Image(url, download=True)``).

    Raises:
        MediaError: The source cannot be read, is not an image, or is too large.
    """

    __slots__ = ("_detail",)

    MAX_BYTES: ClassVar[int] = 20 * _MIB
    _KIND = "image"
    _NOUN = "an image"
    _LIMIT_HINT = "pass max_bytes= to raise the limit, or send a URL"
    _EXAMPLE_TYPE = "image/png"

    _detail: str | None

    def __init__(
        self,
        source: Any = None,
        *,
        mime_type: str | None = None,
        detail: str | None = None,
        max_bytes: int | None = None,
        url: Any = None,
        download: bool = False,
    ) -> None:
        source = _dspy_source(source, url)
        if download:  # DSPy's `Image(url, download=True)`: `from_url(url, download=True)`
            source = Image.from_url(source, download=True, max_bytes=max_bytes)
        if isinstance(source, Mapping):
            source, detail = _image_mapping(source, detail)
        if detail is not None and detail not in _DETAILS:
            raise MediaError(f"detail must be 'low', 'high' or 'auto', not {detail!r}")
        if isinstance(source, Image) and mime_type is None:
            _check_copy(self, source, max_bytes)
            self._copy_from(source)
            detail = source._detail if detail is None else detail
        else:
            self._load(_media_source(source, Image), mime_type, max_bytes)
        object.__setattr__(self, "_detail", detail)

    @property
    def detail(self) -> str | None:
        """The vision detail (``"low"``, ``"high"``, ``"auto"``), or ``None`` when unset."""
        return self._detail

    def content_part(self) -> dict[str, Any]:
        """``{"type": "image_url", "image_url": {"url": ..., "detail": ...}}`` (detail if set)."""
        image_url: dict[str, Any] = {"url": self._url}
        if self._detail is not None:
            image_url["detail"] = self._detail
        return {"type": "image_url", "image_url": image_url}

    def to_json(self) -> str | dict[str, str]:
        """The URL or data URI; ``{"url": ..., "detail": ...}`` when a detail is set."""
        url = self._url or ""
        if self._detail is None:
            return url
        return {"url": url, "detail": self._detail}

    def _identity(self) -> tuple[Any, ...]:
        return (self._url, self._detail)

    def _repr_extras(self) -> list[str]:
        return [] if self._detail is None else [f"detail={self._detail!r}"]

    @classmethod
    def _json_schema(cls) -> dict[str, Any]:
        detail = {"type": "string", "enum": list(_DETAILS)}
        return {
            "anyOf": [
                {"type": "string", "format": "uri"},
                {
                    "type": "object",
                    "properties": {"url": {"type": "string", "format": "uri"}, "detail": detail},
                    "required": ["url"],
                },
            ]
        }


class Audio(Media):
    """An audio input: a data URI, a path or bytes of an ``audio/*`` type.

    OpenAI's ``input_audio`` part carries the audio data itself, so a URL must be fetched
    first: ``Audio.from_url(url, download=True)``.

    Args:
        source: A ``data:`` URI, a path, bytes, an `Audio`, what `to_json` returned, or a
            mapping of base64 ``data`` and its ``format`` (``{"data": ..., "format": "wav"}``,
            as in an ``input_audio`` part; DSPy's keys ``audio_base64`` and ``audio_format``
            work too).
        mime_type: The MIME type when the bytes or the file name do not show it.
        max_bytes: The size limit for this value (default 25 MiB).
        data: Base64 audio data, with ``audio_format``: DSPy's ``Audio(data=...,
            audio_format="wav")``.
        audio_format: The format of ``data`` (``"wav"``, ``"mp3"``...).

    Raises:
        MediaError: The source is a URL, cannot be read, is not audio, or is too large.
    """

    __slots__ = ()

    MAX_BYTES: ClassVar[int] = 25 * _MIB
    _KIND = "audio"
    _NOUN = "audio"
    _EXAMPLE_TYPE = "audio/wav"

    def __init__(
        self,
        source: Any = None,
        *,
        mime_type: str | None = None,
        max_bytes: int | None = None,
        data: str | None = None,
        audio_format: str | None = None,
    ) -> None:
        if data is not None or audio_format is not None:  # DSPy's fields, as keywords
            if source is not None:
                raise MediaError("Audio was given a source and data=: give one")
            source = {"data": data, "format": audio_format}
        if isinstance(source, Mapping):
            source = _audio_mapping(source, _explicit_mime(mime_type))
            mime_type = None
        if isinstance(source, Audio) and mime_type is None:
            _check_copy(self, source, max_bytes)
            self._copy_from(source)
        else:
            self._load(_media_source(source, Audio), mime_type, max_bytes)

    def _remote(self, url: str, explicit: str | None) -> str:
        raise MediaError(
            f"{_label(url)} is a URL, but OpenAI's input_audio takes the audio data itself, "
            f"not a URL: use Audio.from_url(url, download=True)"
        )

    @classmethod
    def _detected(cls, mime: str | None) -> str | None:
        # Audio-only files in these containers are commonly labelled as video.
        containers = {"video/mp4": "audio/mp4", "video/webm": "audio/webm"}
        return containers.get(mime or "", mime)

    @property
    def format(self) -> str:
        """The ``input_audio`` format: ``"mp3"``, ``"wav"``, else the MIME subtype."""
        subtype = (self._mime_type or "").partition("/")[2]
        return _AUDIO_FORMATS.get(subtype, subtype)

    def content_part(self) -> dict[str, Any]:
        """``{"type": "input_audio", "input_audio": {"data": <base64>, "format": ...}}``."""
        return {
            "type": "input_audio",
            "input_audio": {"data": self._payload(), "format": self.format},
        }

    def to_json(self) -> str:
        """The data URI."""
        return self._url or ""

    @classmethod
    def from_array(cls, array: Any, sampling_rate: int, format: str = "wav") -> Audio:
        """DSPy's ``Audio.from_array``: refused, as structio never encodes audio itself.

        Raises:
            UsageError: Always; the message says structio's way.
        """
        raise UsageError(
            f"structio does not encode arrays into audio: write the array to a file "
            f"(soundfile.write('clip.{format}', array, {sampling_rate})) and pass "
            f"Audio.from_path('clip.{format}'), or bytes: "
            f"Audio.from_bytes(data, mime_type='audio/{format}')"
        )


class File(Media):
    """A file input (a PDF, say): inline data of any type, or the id of an uploaded file.

    Give exactly one of ``source`` and ``file_id``. OpenAI's ``file`` part carries the data
    or a file id, never a URL: fetch one with ``File.from_url(url, download=True)``.

    Args:
        source: A ``data:`` URI, a path, bytes, a media value, or what `to_json` returned.
        file_id: The id of a file uploaded to the provider, e.g. ``"file-abc123"``.
        filename: The name sent with the data (default: the path's name).
        mime_type: The MIME type (default: from the bytes or the file name, else
            ``application/octet-stream``).
        max_bytes: The size limit for this value (default 32 MiB).

    Raises:
        MediaError: The source is a URL or cannot be read, the data is too large, or both
            or neither of ``source`` and ``file_id`` are given.
    """

    __slots__ = ("_file_id", "_filename")

    MAX_BYTES: ClassVar[int] = 32 * _MIB
    _NOUN = "a file"
    _LIMIT_HINT = "pass max_bytes= to raise the limit, or upload the file and pass file_id="

    _file_id: str | None
    _filename: str | None

    def __init__(
        self,
        source: Any = None,
        *,
        file_id: str | None = None,
        filename: str | None = None,
        mime_type: str | None = None,
        max_bytes: int | None = None,
    ) -> None:
        if isinstance(source, Mapping):
            source, file_id, filename = _file_mapping(source, file_id, filename)
        if (source is None) == (file_id is None):
            raise MediaError(
                "File takes exactly one of a source (data URI, path, bytes) and file_id=, "
                f"got {'both' if source is not None else 'neither'}"
            )
        if filename is not None and (not isinstance(filename, str) or not filename):
            raise MediaError(f"filename must be a non-empty str, not {filename!r}")
        if file_id is not None:
            if not isinstance(file_id, str) or not file_id:
                raise MediaError(f"file_id must be a non-empty str, not {file_id!r}")
            self._set(None, _explicit_mime(mime_type), None)
        elif isinstance(source, File) and mime_type is None:
            _check_copy(self, source, max_bytes)
            self._copy_from(source)
            file_id = source._file_id
            filename = source._filename if filename is None else filename
        else:
            shown = self._load(_media_source(source, File), mime_type, max_bytes)
            filename = shown if filename is None else filename
        object.__setattr__(self, "_file_id", file_id)
        object.__setattr__(self, "_filename", filename)

    @classmethod
    def _download_options(cls, url: str, options: dict[str, Any]) -> None:
        if options.get("filename") is None:
            options["filename"] = _url_name(url)

    @classmethod
    def _detected(cls, mime: str | None) -> str | None:
        return mime or "application/octet-stream"

    def _remote(self, url: str, explicit: str | None) -> str:
        raise MediaError(
            f"{_label(url)} is a URL, but OpenAI's file part takes the file's data or an "
            f"uploaded file's id, not a URL: use File.from_url(url, download=True), or upload "
            f"the file and pass File(file_id=...)"
        )

    @property
    def filename(self) -> str | None:
        """The file name sent with the data, or ``None`` when unknown."""
        return self._filename

    @property
    def file_id(self) -> str | None:
        """The id of the uploaded file, or ``None`` for inline data."""
        return self._file_id

    def content_part(self) -> dict[str, Any]:
        """``{"type": "file", "file": {"file_data": ..., "filename": ...}}`` or ``{"file_id"}``."""
        file: dict[str, Any] = (
            {"file_id": self._file_id} if self._file_id is not None else {"file_data": self._url}
        )
        if self._filename is not None:
            file["filename"] = self._filename
        return {"type": "file", "file": file}

    def to_json(self) -> dict[str, str]:
        """``{"file_data": <data URI>, "filename": ...}`` or ``{"file_id": ...}``."""
        file: dict[str, str] = self.content_part()["file"]
        return file

    def _identity(self) -> tuple[Any, ...]:
        return (self._url, self._file_id, self._filename)

    def __repr__(self) -> str:
        if self._file_id is not None:
            shown = [f"file_id={self._file_id!r}"]
            if self._filename is not None:
                shown.append(f"filename={self._filename!r}")
            return f"{type(self).__name__}({', '.join(shown)})"
        return super().__repr__()

    def _repr_extras(self) -> list[str]:
        return [] if self._filename is None else [f"filename={self._filename!r}"]

    @classmethod
    def _json_schema(cls) -> dict[str, Any]:
        name = {"type": "string"}
        return {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {
                        "file_data": {"type": "string", "format": "uri"},
                        "filename": name,
                    },
                    "required": ["file_data"],
                },
                {
                    "type": "object",
                    "properties": {"file_id": {"type": "string"}, "filename": name},
                    "required": ["file_id"],
                },
            ]
        }


def _check_copy(target: Media, source: Media, max_bytes: int | None) -> None:
    # A copy keeps the limit its source passed unless a new limit is asked for.
    if max_bytes is not None and source.size is not None:
        limit = type(target)._limit(max_bytes)
        if source.size > limit:
            target._too_big(repr(source), source.size, limit)


def _dspy_source(source: Any, url: Any) -> Any:
    """The source, given positionally or as DSPy's ``url=`` keyword (one of the two).

    Raises:
        MediaError: Both or neither were given.
    """
    if url is not None:
        if source is not None:
            raise MediaError("Image was given a source and url=: give one")
        return url
    if source is None:
        raise MediaError("Image needs a source: a URL, a data URI, a path or bytes")
    return source
