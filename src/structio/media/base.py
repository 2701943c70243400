"""`Media`, the base of `Image`, `Audio` and `File`: sources, limits, equality, pydantic.

Also `marker`, which puts a value into prompt text (see `structio.media.markers`).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn, TypeVar
from urllib.parse import urlsplit

from structio.exceptions import MediaError
from structio.media.markers import _MARKERS_ON, _REGISTRY, _REGISTRY_LOCK, MARKER_PREFIX
from structio.media.mime import (
    _BASE64,
    _MAX_HEADER,
    _MIB,
    _MIME,
    _VAGUE_TYPES,
    _clip,
    _explicit_mime,
    _guess,
    _guess_url,
    _human,
    _is_data_uri,
    _is_http,
    _label,
    _sniff,
)
from structio.media.sources import _Fetched, _got, _slot_names

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import SchemaSerializer, core_schema

_M = TypeVar("_M", bound="Media")


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
    def from_file(cls: type[_M], path: str | os.PathLike[str], **options: Any) -> _M:
        """DSPy's older name for `from_path` (``Image.from_file(path)``)."""
        return cls.from_path(path, **options)

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


def _media_source(source: Any, cls: type[Media]) -> Any:
    """The source a value of another class gives to ``cls``: its URL or data URI."""
    if not isinstance(source, Media):
        return source
    if source.url is None:
        raise MediaError(
            f"{source!r} is an uploaded file's id, which a {cls.__name__} cannot be made from"
        )
    return source.url


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
