"""MIME types of media values: read from the bytes, a name, a URL, or checked when given.

Also how an error message names a source (never more than the start of the data) and sizes.
"""

from __future__ import annotations

import mimetypes
import os
import re
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

from structio.exceptions import MediaError

_MIB = 1024 * 1024
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


def _guess_url(url: str, kind: str | None = None) -> str | None:
    """The type a URL's extension suggests; for a kind, only a type of that kind."""
    guessed = _guess(PurePosixPath(urlsplit(url).path).name or "x")
    if kind is not None and guessed is not None and not guessed.startswith(kind + "/"):
        # Extensions of web pages (.php, .aspx) say nothing of what they serve.
        return None
    return guessed
