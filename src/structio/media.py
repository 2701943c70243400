"""Images, audio and files as input values: `Image`, `Audio`, `File`.

Sources. Each value is made from an ``http(s)`` URL (kept as a URL, never fetched unless
``from_url(..., download=True)``), a ``data:`` URI (checked, MIME type read from it), a local
path, raw bytes, or another media value. Bytes are kept as a base64 data URI, which is what
the OpenAI content parts carry, so a value is encoded once and never decoded unless `data`
is read. The MIME type comes from ``mime_type=``, else the magic bytes, else the file name;
`Image` and `Audio` refuse data of another kind, `File` takes any type.

Limits. Inline data is capped per class (`Image` 20 MiB, `Audio` 25 MiB, `File` 32 MiB;
``max_bytes=`` per value): checked before a file is read, while a download streams, and for a
data URI from its base64 length, so an oversized value fails before it is copied around.

Markers. Prompts are rendered as text, so a value is put into that text as a marker
(``<<structio-media:KEY>>``, from `marker`, ``str(value)`` or ``f"{value}"``) that survives
``json.dumps`` unchanged; `split_markers` then turns the rendered text into OpenAI content
parts, text between the values. The registry that maps keys back to values holds them
weakly: render and send while the values are alive. Pydantic JSON serialization gives
`Media.to_json` data, or markers inside ``with markers():`` (how a model holding an image is
rendered).

Every error about a value is a `structio.exceptions.MediaError` that names the source (a data
URI clipped to its first characters) and says what to do.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import functools
import hashlib
import json
import mimetypes
import os
import re
import threading
import weakref
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn, TypeVar
from urllib.parse import unquote, urlsplit

from structio.exceptions import MediaError

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import SchemaSerializer, core_schema

__all__ = [
    "Audio",
    "File",
    "Image",
    "MARKER_PREFIX",
    "Media",
    "has_markers",
    "is_media_part",
    "marker",
    "markers",
    "split_markers",
]

MARKER_PREFIX = "<<structio-media:"
_MARKER = re.compile(r"<<structio-media:([0-9a-f]{32})>>")

_MIB = 1024 * 1024
_DETAILS = ("low", "high", "auto")
_MEDIA_PART_TYPES = frozenset({"image_url", "input_audio", "file"})

# Keys are digests of content parts, so equal values share a key and whichever was registered
# last answers for both. Weak values: a marker must never keep a large value alive.
_REGISTRY: weakref.WeakValueDictionary[str, Media] = weakref.WeakValueDictionary()
_REGISTRY_LOCK = threading.Lock()
_MARKERS_ON: contextvars.ContextVar[int] = contextvars.ContextVar(
    "structio_media_markers", default=0
)

_MAX_HEADER = 1024
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_MIME = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*")
# Content types a server sends when it does not know; the bytes then say more.
_VAGUE_TYPES = frozenset(
    {"", "application/octet-stream", "binary/octet-stream", "application/binary"}
)
_FTYP_AUDIO = frozenset({b"M4A ", b"M4B ", b"M4P ", b"F4A ", b"F4B "})
_FTYP_IMAGE = {b"avif": "image/avif", b"avis": "image/avif", b"heic": "image/heic"}
_FTYP_IMAGE.update({b"heix": "image/heic", b"mif1": "image/heif", b"msf1": "image/heif"})
_BMP_HEADER_SIZES = frozenset({12, 40, 52, 56, 64, 108, 124})
_AUDIO_FORMATS = {"mpeg": "mp3", "mp3": "mp3", "wav": "wav", "x-wav": "wav", "wave": "wav"}
_AUDIO_FORMATS.update({"vnd.wave": "wav", "x-flac": "flac"})
_FORMAT_TYPES = {"mp3": "audio/mpeg", "wav": "audio/wav"}

_M = TypeVar("_M", bound="Media")


def _sniff(data: bytes | bytearray | memoryview) -> str | None:
    """The MIME type the first bytes of ``data`` show, or ``None`` when they match no format.

    Knows PNG, JPEG, GIF, WEBP, BMP, TIFF, AVIF/HEIC, WAV, MP3, OGG, FLAC, MP4/M4A, WEBM/MKV
    and PDF.
    """
    head = bytes(data[:64])
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return "audio/wav"
    # "BM" alone starts too many texts; the DIB header size after it must be a real one.
    if head.startswith(b"BM") and int.from_bytes(head[14:18], "little") in _BMP_HEADER_SIZES:
        return "image/bmp"
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return "image/tiff"
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    if head.startswith(b"ID3") or (
        len(head) > 1 and head[0] == 0xFF and head[1] in b"\xfb\xf3\xf2"
    ):
        return "audio/mpeg"
    if head.startswith(b"OggS"):
        return "audio/ogg"
    if head.startswith(b"fLaC"):
        return "audio/flac"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in _FTYP_AUDIO:
            return "audio/mp4"
        if brand in _FTYP_IMAGE:
            return _FTYP_IMAGE[brand]
        return "video/quicktime" if brand == b"qt  " else "video/mp4"
    if head.startswith(b"\x1aE\xdf\xa3"):
        return "video/webm" if b"webm" in head else "video/x-matroska"
    return None


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _human(size: int) -> str:
    if size < 1024:
        return f"{size} byte" if size == 1 else f"{size} bytes"
    if size < _MIB:
        return f"{size / 1024:.1f} KiB"
    return f"{size / _MIB:.1f} MiB"


def _is_http(text: str) -> bool:
    return text[:8].lower().startswith(("http://", "https://"))


def _is_data_uri(text: str) -> bool:
    return text[:5].lower() == "data:"


def _explicit_mime(mime_type: str | None) -> str | None:
    if mime_type is None:
        return None
    if not isinstance(mime_type, str):
        raise MediaError(
            f"mime_type must be a str like 'image/png', not {type(mime_type).__name__}"
        )
    normal = mime_type.split(";", 1)[0].strip().lower()
    if not _MIME.fullmatch(normal):
        raise MediaError(f"mime_type must be a MIME type like 'image/png', not {mime_type!r}")
    return normal


def _guess(name: str) -> str | None:
    guessed = mimetypes.guess_type(name, strict=False)[0]
    return guessed.lower() if guessed else None


def _url_name(url: str) -> str | None:
    name = unquote(PurePosixPath(urlsplit(url).path).name)
    return name or None


def _label(source: object) -> str:
    """How an error message names a source: never more than the start of the data."""
    if isinstance(source, str):
        return _clip(source, 100 if _is_http(source) else 60)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return "the data given"
    if isinstance(source, os.PathLike):
        return os.fsdecode(source)
    return type(source).__name__


def _serialize(value: Any, info: core_schema.SerializationInfo) -> Any:
    if not isinstance(value, Media) or not info.mode_is_json():
        return value
    return marker(value) if _MARKERS_ON.get() else value.to_json()


# pydantic_core is imported when pydantic first meets a media value, not by `import
# structio`: it is a fifth of the import's time, and a call with no model never needs it.
@functools.cache
def _serialization() -> core_schema.SerSchema:
    from pydantic_core import core_schema

    return core_schema.plain_serializer_function_ser_schema(_serialize, info_arg=True)


class _Serializer:
    """`Media.__pydantic_serializer__`, built on first read (see `_serialization`)."""

    built: ClassVar[SchemaSerializer | None] = None

    def __get__(self, instance: object, owner: type | None = None) -> SchemaSerializer:
        if _Serializer.built is None:
            from pydantic_core import SchemaSerializer, core_schema

            schema = core_schema.any_schema(serialization=_serialization())
            _Serializer.built = SchemaSerializer(schema)
        return _Serializer.built


class Media:
    """An image, audio clip or file passed to a model: the base of `Image`, `Audio`, `File`.

    Values are immutable and hashable. ``str(value)`` and ``f"{value}"`` give the value's
    marker, which `split_markers` turns back into the value's content part.

    Attributes:
        MAX_BYTES: The largest inline data a value of the class takes unless ``max_bytes=``
            says otherwise.
    """

    __slots__ = ("__weakref__", "_key", "_mime_type", "_size", "_url")

    MAX_BYTES: ClassVar[int] = 32 * _MIB
    # Read by `to_jsonable_python` (and so `jsonable`) to serialize a value that is not
    # inside a model the same way a model's field is; every subclass inherits it.
    __pydantic_serializer__ = _Serializer()
    _KIND: ClassVar[str | None] = None
    _NOUN: ClassVar[str] = "a media value"
    _LIMIT_HINT: ClassVar[str] = "pass max_bytes= to raise the limit"
    _EXAMPLE_TYPE: ClassVar[str] = "application/pdf"

    _url: str | None
    _mime_type: str | None
    _size: int | None
    _key: str | None

    def __init__(
        self,
        source: Any = None,
        *,
        mime_type: str | None = None,
        max_bytes: int | None = None,
        **options: Any,
    ) -> None:
        raise TypeError("Media is the base class: make an Image, Audio or File")

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def from_url(
        cls: type[_M],
        url: str,
        *,
        download: bool = False,
        timeout: float = 30.0,
        max_bytes: int | None = None,
        mime_type: str | None = None,
        **options: Any,
    ) -> _M:
        """A value for an ``http(s)`` URL, kept as the URL or downloaded into inline data.

        Args:
            url: The ``http://`` or ``https://`` URL.
            download: Fetch the data now (redirects followed) and keep it inline; `Audio`
                and `File` need this, as their content parts carry the data itself.
            timeout: Seconds to wait for the server, per network operation.
            max_bytes: The size limit for this value (default: the class's `MAX_BYTES`);
                a download stops as soon as it goes over.
            mime_type: The MIME type, if the server's ``Content-Type`` and the bytes should
                not decide it.
            **options: Passed to the class: ``detail=`` for `Image`, ``filename=`` for
                `File` (a download takes the file name from the URL otherwise).

        Raises:
            MediaError: The URL is not ``http(s)``, the server answers with an error status
                or cannot be reached, or the data is too large or of the wrong kind.
        """
        if not download:
            return cls(url, mime_type=mime_type, max_bytes=max_bytes, **options)
        if not isinstance(url, str) or not _is_http(url):
            raise MediaError(
                f"{_label(url)} is not an http(s) URL: from_url takes http:// or https://"
            )
        limit = cls._limit(max_bytes)
        data, header = _download(url, limit=limit, timeout=timeout, owner=cls)
        cls._download_options(url, options)
        fetched = _Fetched(data, label=_clip(url, 100), before=header, after=_guess_url(url))
        return cls(fetched, mime_type=mime_type, max_bytes=max_bytes, **options)

    @classmethod
    def from_path(
        cls: type[_M],
        path: str | os.PathLike[str],
        *,
        mime_type: str | None = None,
        max_bytes: int | None = None,
        **options: Any,
    ) -> _M:
        """A value holding a local file's data (the file is read now).

        Raises:
            MediaError: There is no such file, or it is too large or of the wrong kind.
        """
        return cls(Path(path), mime_type=mime_type, max_bytes=max_bytes, **options)

    @classmethod
    def from_bytes(
        cls: type[_M],
        data: bytes | bytearray | memoryview,
        *,
        mime_type: str | None = None,
        max_bytes: int | None = None,
        **options: Any,
    ) -> _M:
        """A value holding ``data``; its MIME type is ``mime_type`` or read from the bytes.

        Raises:
            MediaError: The type cannot be told (pass ``mime_type=``), is of the wrong
                kind, or the data is too large.
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise MediaError(f"from_bytes takes bytes, not {type(data).__name__}")
        return cls(data, mime_type=mime_type, max_bytes=max_bytes, **options)

    @classmethod
    def _download_options(cls, url: str, options: dict[str, Any]) -> None:
        """Fill in constructor options a download knows (a hook for `File`'s name)."""

    @classmethod
    def _limit(cls, max_bytes: int | None) -> int:
        if max_bytes is None:
            return cls.MAX_BYTES
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
            raise MediaError(f"max_bytes must be a positive int, not {max_bytes!r}")
        return max_bytes

    def _set(self, url: str | None, mime_type: str | None, size: int | None) -> None:
        object.__setattr__(self, "_url", url)
        object.__setattr__(self, "_mime_type", mime_type)
        object.__setattr__(self, "_size", size)
        object.__setattr__(self, "_key", None)

    def _load(self, source: Any, mime_type: str | None, max_bytes: int | None) -> str | None:
        """Set url, MIME type and size from a source; returns the file name it shows, if any."""
        explicit = _explicit_mime(mime_type)
        cls = type(self)
        if isinstance(source, _Fetched):
            self._inline(
                source.data, source.label, explicit, source.before, source.after, max_bytes
            )
            return None
        if isinstance(source, str):
            if _is_http(source):
                self._set(
                    self._remote(source, explicit), explicit or _guess_url(source, cls._KIND), None
                )
                return None
            if _is_data_uri(source):
                self._data_uri(source, explicit, max_bytes)
                return None
            if os.path.isfile(source):
                return self._path(Path(source), source, explicit, max_bytes)
            raise MediaError(
                f"{_label(source)!r} is not a URL, a data URI or an existing file: give "
                f"{cls.__name__} an http(s) URL, a 'data:<mime>;base64,...' URI, the path of a "
                f"file, or bytes"
            )
        if isinstance(source, os.PathLike):
            name = os.fsdecode(source)
            return self._path(Path(name), name, explicit, max_bytes)
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._inline(source, _label(source), explicit, None, None, max_bytes)
            return None
        raise MediaError(
            f"{cls.__name__} cannot be made from {type(source).__name__}: give it an http(s) "
            f"URL, a data URI, a path, bytes or another {cls.__name__}"
        )

    def _remote(self, url: str, explicit: str | None) -> str:
        """Check an http(s) URL kept as it is (a hook: `Audio` and `File` refuse URLs)."""
        split = urlsplit(url)
        if not split.netloc:
            raise MediaError(f"{_label(url)!r} is not a valid URL: it names no host")
        if explicit is not None:
            self._check_kind(explicit, _label(url))
        return url

    def _path(self, path: Path, name: str, explicit: str | None, max_bytes: int | None) -> str:
        limit = type(self)._limit(max_bytes)
        try:
            size = path.stat().st_size
            if path.is_dir():
                raise MediaError(f"{name} is a folder, not a file: give the path of a file")
            if not path.is_file():
                raise MediaError(f"{name} is not a regular file: give the path of a file")
            # The size on disk is checked before reading, so a huge file is never loaded.
            if size > limit:
                self._too_big(name, size, limit)
            with path.open("rb") as handle:
                data = handle.read(limit + 1)
        except FileNotFoundError:
            raise MediaError(f"there is no file at {name}: check the path") from None
        except PermissionError:
            raise MediaError(f"{name} cannot be read (permission denied)") from None
        except OSError as exc:
            raise MediaError(f"{name} cannot be read: {exc.strerror or exc}") from None
        self._inline(data, name, explicit, None, _guess(path.name), max_bytes)
        return path.name

    def _inline(
        self,
        data: bytes | bytearray | memoryview,
        label: str,
        explicit: str | None,
        before: str | None,
        after: str | None,
        max_bytes: int | None,
    ) -> None:
        """Keep bytes as a data URI; MIME type: explicit, else ``before``, bytes, ``after``."""
        cls = type(self)
        size = len(data)
        if size == 0:
            raise MediaError(f"{label} is empty: give {cls.__name__} some data")
        limit = cls._limit(max_bytes)
        if size > limit:
            self._too_big(label, size, limit)
        if explicit is not None:
            mime: str | None = explicit
        else:
            mime = before or _sniff(data) or after
            mime = cls._detected(mime)
        if mime is None:
            raise MediaError(
                f"cannot tell what type of data {label} holds (its bytes match no known "
                f"format): pass mime_type=, e.g. mime_type={cls._EXAMPLE_TYPE!r}"
            )
        self._check_kind(mime, label)
        encoded = base64.b64encode(data).decode("ascii")
        self._set(f"data:{mime};base64,{encoded}", mime, size)

    def _data_uri(self, uri: str, explicit: str | None, max_bytes: int | None) -> None:
        label = _clip(uri)
        # The header is short; searching only its first characters keeps a huge malformed
        # URI (no comma at all) cheap to refuse.
        comma = uri.find(",", 0, _MAX_HEADER)
        if comma == -1:
            raise MediaError(
                f"{label!r} is not a well-formed data URI: expected 'data:<mime>;base64,<data>'"
            )
        mime, *params = (piece.strip().lower() for piece in uri[5:comma].split(";"))
        if not params or params[-1] != "base64":
            raise MediaError(
                f"{label!r} is not base64: structio takes data URIs of the form "
                f"'data:<mime>;base64,<data>'"
            )
        if not _MIME.fullmatch(mime):
            raise MediaError(f"{label!r} names no MIME type: write 'data:<mime>;base64,<data>'")
        start = comma + 1
        size = len(uri) - start
        if size % 4 or not _BASE64.fullmatch(uri, start):
            raise MediaError(f"the data of {label!r} is not valid base64")
        # The decoded size follows from the base64 length; nothing is decoded here.
        size = size // 4 * 3 - (2 if uri.endswith("==") else 1 if uri.endswith("=") else 0)
        if size == 0:
            raise MediaError(f"{label!r} holds no data")
        limit = type(self)._limit(max_bytes)
        if size > limit:
            self._too_big(label, size, limit)
        if explicit is not None and explicit != mime:
            raise MediaError(
                f"{label!r} says its data is {mime}, but mime_type={explicit!r}: drop "
                f"mime_type= or fix the data URI"
            )
        self._check_kind(mime, label)
        self._set(uri, mime, size)

    @classmethod
    def _detected(cls, mime: str | None) -> str | None:
        """A detected (not given) type as the class reads it (`Audio` takes containers)."""
        return mime

    def _check_kind(self, mime: str, label: str) -> None:
        kind = type(self)._KIND
        if kind is None or mime.startswith(kind + "/"):
            return
        better = {"image": "structio.Image", "audio": "structio.Audio"}.get(mime.split("/")[0])
        raise MediaError(
            f"{label} is {mime}, not {type(self)._NOUN}: use {better or 'structio.File'}"
        )

    def _too_big(self, label: str, size: int, limit: int) -> NoReturn:
        cls = type(self)
        raise MediaError(
            f"{label} is {_human(size)}; {cls.__name__} takes at most {_human(limit)}: "
            f"{cls._LIMIT_HINT}"
        )

    def _copy_from(self, other: Media) -> None:
        self._set(other._url, other._mime_type, other._size)

    # -- immutability, copying, pickling ----------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} values are immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} values are immutable")

    def __copy__(self: _M) -> _M:
        return self

    def __deepcopy__(self: _M, memo: dict[int, Any]) -> _M:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        # The default reduction restores slots with setattr, which immutability refuses.
        state = {name: getattr(self, name) for name in _slot_names(type(self))}
        return (_restore, (type(self), state))

    # -- attributes -----------------------------------------------------------------------

    @property
    def url(self) -> str | None:
        """The ``http(s)`` URL or the ``data:`` URI (``None`` for a `File` given by id)."""
        return self._url

    @property
    def mime_type(self) -> str | None:
        """The MIME type, e.g. ``"image/png"`` (``None`` for a URL that does not show it)."""
        return self._mime_type

    @property
    def size(self) -> int | None:
        """The size of the inline data in bytes (``None`` for a URL or a file id)."""
        return self._size

    @property
    def data(self) -> bytes | None:
        """The inline data, decoded on each read (``None`` for a URL or a file id)."""
        if self._url is None or not _is_data_uri(self._url):
            return None
        return base64.b64decode(self._payload())

    def _payload(self) -> str:
        url = self._url or ""
        return url[url.index(",") + 1 :]

    # -- output ---------------------------------------------------------------------------

    def content_part(self) -> dict[str, Any]:
        """The OpenAI chat content part that sends this value (a new dict each call)."""
        raise NotImplementedError

    def to_json(self) -> Any:
        """The value as JSON data, which the class's constructor accepts back."""
        raise NotImplementedError

    def _identity(self) -> tuple[Any, ...]:
        return (self._url,)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Media):
            return NotImplemented
        return type(self) is type(other) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash((type(self), *self._identity()))

    def _shown(self) -> str:
        url = self._url or ""
        if _is_data_uri(url):
            comma = url.index(",") + 1
            return url[: comma + 11] + ("…" if len(url) > comma + 11 else "")
        return _clip(url, 80)

    def __repr__(self) -> str:
        shown = [repr(self._shown())]
        if self._size is not None:
            shown.append(_human(self._size))
        shown.extend(self._repr_extras())
        return f"{type(self).__name__}({', '.join(shown)})"

    def _repr_extras(self) -> list[str]:
        return []

    def __str__(self) -> str:
        return marker(self)

    def __format__(self, format_spec: str) -> str:
        if format_spec:
            raise TypeError(f"unsupported format string passed to {type(self).__name__}.__format__")
        return marker(self)

    # -- pydantic ---------------------------------------------------------------------------

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source_type: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        """The pydantic schema: validate from any source the class takes, dump as `to_json`."""
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(
            cls._validate, serialization=_serialization()
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """The JSON schema of what `to_json` writes."""
        return cls._json_schema()

    @classmethod
    def _json_schema(cls) -> dict[str, Any]:
        return {"type": "string", "format": "uri"}

    @classmethod
    def _validate(cls, value: Any) -> Media:
        if isinstance(value, cls):
            return value
        from pydantic_core import PydanticCustomError

        if cls is Media:
            raise PydanticCustomError(
                "media_type", "expected an Image, Audio or File, got {got}", {"got": _got(value)}
            )
        if not isinstance(value, (str, bytes, bytearray, memoryview, os.PathLike, Mapping, Media)):
            raise PydanticCustomError(
                "media_type",
                "expected {what}, a URL, a data URI, a path or bytes; got {got}",
                {"what": cls.__name__, "got": _got(value)},
            )
        try:
            return cls(value)
        except MediaError as exc:
            # The message goes in as context, so braces in it are never read as a template.
            raise PydanticCustomError("media", "{message}", {"message": str(exc)}) from None


class Image(Media):
    """An image input: a URL, a data URI, a path or bytes of an ``image/*`` type.

    Args:
        source: An ``http(s)`` URL (kept as the URL), a ``data:`` URI, a path, bytes, an
            `Image`, or what `to_json` returned.
        mime_type: The MIME type when the bytes or the file name do not show it.
        detail: The vision detail, ``"low"``, ``"high"`` or ``"auto"`` (default: unset).
        max_bytes: The size limit for this value (default 20 MiB).

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
        source: Any,
        *,
        mime_type: str | None = None,
        detail: str | None = None,
        max_bytes: int | None = None,
    ) -> None:
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
        source: Any,
        *,
        mime_type: str | None = None,
        max_bytes: int | None = None,
    ) -> None:
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


class _Fetched:
    """Downloaded bytes on their way into a constructor, with what the download knew."""

    __slots__ = ("after", "before", "data", "label")

    def __init__(self, data: bytes, *, label: str, before: str | None, after: str | None) -> None:
        self.data = data
        self.label = label
        self.before = before
        self.after = after


def _guess_url(url: str, kind: str | None = None) -> str | None:
    """The type a URL's extension suggests; for a kind, only a type of that kind."""
    guessed = _guess(PurePosixPath(urlsplit(url).path).name or "x")
    if kind is not None and guessed is not None and not guessed.startswith(kind + "/"):
        # Extensions of web pages (.php, .aspx) say nothing of what they serve.
        return None
    return guessed


def _media_source(source: Any, cls: type[Media]) -> Any:
    """The source a value of another class gives to ``cls``: its URL or data URI."""
    if not isinstance(source, Media):
        return source
    if source.url is None:
        raise MediaError(
            f"{source!r} is an uploaded file's id, which a {cls.__name__} cannot be made from"
        )
    return source.url


def _check_copy(target: Media, source: Media, max_bytes: int | None) -> None:
    # A copy keeps the limit its source passed unless a new limit is asked for.
    if max_bytes is not None and source.size is not None:
        limit = type(target)._limit(max_bytes)
        if source.size > limit:
            target._too_big(repr(source), source.size, limit)


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


def _restore(cls: type[_M], state: dict[str, Any]) -> _M:
    value = cls.__new__(cls)
    for name, item in state.items():
        object.__setattr__(value, name, item)
    return value


def _download(
    url: str, *, limit: int, timeout: float, owner: type[Media]
) -> tuple[bytes, str | None]:
    """GET ``url`` with the size limit enforced while reading; the data and its content type."""
    import httpx  # the network is only needed here, and most programs never download

    label = _clip(url, 100)

    def over(size: int | None) -> NoReturn:
        shown = f"is {_human(size)}" if size is not None else f"is over {_human(limit)}"
        raise MediaError(
            f"{label} {shown}; {owner.__name__} takes at most {_human(limit)}: {owner._LIMIT_HINT}"
        )

    try:
        with (
            httpx.Client(follow_redirects=True, timeout=timeout) as client,
            client.stream("GET", url) as response,
        ):
            if response.is_error:
                raise MediaError(
                    f"downloading {label} failed: HTTP {response.status_code} "
                    f"{response.reason_phrase}: check the URL"
                )
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                over(int(declared))
            received = bytearray()
            for chunk in response.iter_bytes():
                received += chunk
                if len(received) > limit:
                    over(None)
            header = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise MediaError(f"downloading {label} failed: {type(exc).__name__}: {exc}") from None
    before = header if header not in _VAGUE_TYPES and _MIME.fullmatch(header) else None
    return bytes(received), before


# -- markers -------------------------------------------------------------------------------


def _key(media: Media) -> str:
    key = media._key
    if key is None:
        part = json.dumps(media.content_part(), separators=(",", ":"), sort_keys=True)
        digest = hashlib.blake2b(digest_size=16)
        digest.update(type(media).__name__.encode())
        digest.update(b"\0")
        digest.update(part.encode())
        key = digest.hexdigest()
        # Immutable values: the key is computed once, as a large data URI makes it costly.
        object.__setattr__(media, "_key", key)
    return key


def marker(media: Media) -> str:
    """The marker that stands for ``media`` in prompt text, registering the value.

    The registry holds the value weakly: `split_markers` finds it while it is alive.
    """
    if not isinstance(media, Media):
        raise TypeError(f"marker() takes an Image, Audio or File, not {type(media).__name__}")
    key = _key(media)
    with _REGISTRY_LOCK:
        _REGISTRY[key] = media
    return f"{MARKER_PREFIX}{key}>>"


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
