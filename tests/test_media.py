"""Image, Audio and File: sources, MIME types, limits, content parts, pydantic, markers."""

from __future__ import annotations

import base64
import copy
import gc
import http.server
import io
import json
import pickle
import re
import socket
import threading
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import to_jsonable_python

from structio import media
from structio._util.data import jsonable
from structio.exceptions import FormatError, MediaError
from structio.media import (
    MARKER_PREFIX,
    Audio,
    File,
    Image,
    Media,
    has_markers,
    is_media_part,
    marker,
    markers,
    split_markers,
)

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PNG_URI = "data:image/png;base64," + base64.b64encode(PNG).decode()
PDF = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"


def make_wav(frames: int = 80) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x01" * frames)
    return buffer.getvalue()


WAV = make_wav()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# -- sources -------------------------------------------------------------------------------


def test_image_from_bytes_sniffs_png_and_keeps_a_data_uri() -> None:
    image = Image(PNG)
    assert image.mime_type == "image/png"
    assert image.url == PNG_URI
    assert image.size == len(PNG) == 70
    assert image.data == PNG
    assert Image(bytearray(PNG)) == image
    assert Image(memoryview(PNG)) == image
    assert Image.from_bytes(PNG) == image


def test_image_from_a_path_a_str_path_and_from_path(tmp_path: Path) -> None:
    path = tmp_path / "photo.png"
    path.write_bytes(PNG)
    assert Image(path).url == PNG_URI
    assert Image(str(path)).url == PNG_URI
    assert Image.from_path(path).url == PNG_URI
    assert Image.from_path(str(path)).url == PNG_URI


def test_image_from_an_http_url_is_kept_and_guesses_the_type() -> None:
    image = Image("https://example.org/cat.jpg")
    assert image.url == "https://example.org/cat.jpg"
    assert image.mime_type == "image/jpeg"
    assert image.data is None
    assert image.size is None
    assert Image("http://example.org/pic").mime_type is None
    # The extension of a web page says nothing of what it serves.
    assert Image("https://example.org/render.php?id=3").mime_type is None
    assert Image("https://example.org/pic", mime_type="image/webp").mime_type == "image/webp"
    assert Image.from_url("https://example.org/cat.jpg") == image


def test_image_from_a_data_uri_reads_the_type_from_it() -> None:
    image = Image("data:image/gif;base64," + b64(b"GIF89a" + bytes(20)))
    assert image.mime_type == "image/gif"
    assert image.size == 26
    assert image.data == b"GIF89a" + bytes(20)


@pytest.mark.parametrize(
    "uri",
    [
        "data:image/png,abcd",  # not base64
        "data:image/png;base64,abc",  # length not a multiple of 4
        "data:image/png;base64,ab$d",  # not the base64 alphabet
        "data:;base64,iVBO",  # no MIME type
        "data:image/png;base64",  # no comma
        "data:image/png;base64,",  # no data
    ],
)
def test_malformed_data_uris_are_refused(uri: str) -> None:
    with pytest.raises(MediaError, match=r"data URI|base64|no data|no MIME"):
        Image(uri)


def test_data_uri_and_a_different_mime_type_conflict() -> None:
    with pytest.raises(MediaError, match=r"says its data is image/png, but mime_type='image/jpeg'"):
        Image(PNG_URI, mime_type="image/jpeg")
    assert Image(PNG_URI, mime_type="image/png").url == PNG_URI


@given(st.binary(min_size=1, max_size=300))
@settings(max_examples=200, deadline=None)
def test_data_uri_size_is_computed_from_the_base64_length(data: bytes) -> None:
    image = Image("data:image/png;base64," + b64(data))
    assert image.size == len(data)
    assert image.data == data


def test_garbage_strings_are_refused_naming_them() -> None:
    with pytest.raises(MediaError, match="'not a picture' is not a URL, a data URI or an existing"):
        Image("not a picture")
    long = "x" * 10_000
    with pytest.raises(MediaError) as caught:
        Image(long)
    assert len(str(caught.value)) < 300


def test_a_missing_path_is_named() -> None:
    missing = Path("/nonexistent/folder/photo.png")
    with pytest.raises(MediaError, match=re.escape(f"there is no file at {missing}")):
        Image(missing)
    with pytest.raises(MediaError, match="there is no file at"):
        Audio.from_path(str(missing))


def test_a_folder_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(MediaError, match="is a folder"):
        File(tmp_path)


def test_other_types_are_refused() -> None:
    with pytest.raises(MediaError, match="Image cannot be made from int"):
        Image(3)
    with pytest.raises(MediaError, match="from_bytes takes bytes"):
        Image.from_bytes("abc")  # type: ignore[arg-type]


def test_media_errors_are_format_errors_and_value_errors() -> None:
    with pytest.raises(FormatError):
        Image(b"\x00\x01")
    with pytest.raises(ValueError, match="pass mime_type="):
        Image(b"\x00\x01")


def test_media_is_a_base_class_only() -> None:
    with pytest.raises(TypeError, match="base class"):
        Media(PNG)


# -- MIME detection ------------------------------------------------------------------------

MAGIC = [
    (PNG, "image/png"),
    (b"\xff\xd8\xff\xe0" + bytes(20), "image/jpeg"),
    (b"GIF87a" + bytes(20), "image/gif"),
    (b"RIFF\x10\x00\x00\x00WEBPVP8 " + bytes(20), "image/webp"),
    (b"BM" + bytes(12) + (40).to_bytes(4, "little") + bytes(20), "image/bmp"),
    (b"II*\x00" + bytes(20), "image/tiff"),
    (b"MM\x00*" + bytes(20), "image/tiff"),
    (WAV, "audio/wav"),
    (b"ID3\x04\x00" + bytes(20), "audio/mpeg"),
    (b"\xff\xfb\x90\x00" + bytes(20), "audio/mpeg"),
    (b"\xff\xf3\x90\x00" + bytes(20), "audio/mpeg"),
    (b"\xff\xf2\x90\x00" + bytes(20), "audio/mpeg"),
    (b"OggS\x00\x02" + bytes(20), "audio/ogg"),
    (b"fLaC\x00\x00\x00\x22" + bytes(20), "audio/flac"),
    (b"\x00\x00\x00\x20ftypM4A \x00\x00\x00\x00" + bytes(20), "audio/mp4"),
    (b"\x00\x00\x00\x20ftypisom\x00\x00\x02\x00" + bytes(20), "video/mp4"),
    (b"\x1aE\xdf\xa3\x9fB\x86\x81\x01B\xf7\x81\x01B\x82\x84webm" + bytes(20), "video/webm"),
    (PDF, "application/pdf"),
]


@pytest.mark.parametrize(("data", "mime"), MAGIC)
def test_magic_bytes_give_the_mime_type(data: bytes, mime: str) -> None:
    assert File(data).mime_type == mime
    kind = mime.split("/")[0]
    if kind == "image":
        assert Image(data).mime_type == mime
    if kind == "audio":
        assert Audio(data).mime_type == mime


def test_audio_reads_mp4_and_webm_containers_as_audio() -> None:
    mp4 = b"\x00\x00\x00\x20ftypisom\x00\x00\x02\x00" + bytes(20)
    webm = b"\x1aE\xdf\xa3\x9fB\x86\x81\x01B\xf7\x81\x01B\x82\x84webm" + bytes(20)
    assert Audio(mp4).mime_type == "audio/mp4"
    assert Audio(webm).mime_type == "audio/webm"
    # A type given explicitly is taken as it is.
    with pytest.raises(MediaError, match="is video/mp4, not audio"):
        Audio(mp4, mime_type="video/mp4")


def test_text_starting_with_bm_is_not_a_bitmap() -> None:
    assert File(b"BMW annual report, 2024 edition").mime_type == "application/octet-stream"


def test_explicit_mime_type_wins_over_the_bytes() -> None:
    assert Image(PNG, mime_type="image/x-icon").mime_type == "image/x-icon"
    assert Image(PNG, mime_type="Image/PNG; charset=binary").mime_type == "image/png"
    with pytest.raises(MediaError, match="mime_type must be a MIME type"):
        Image(PNG, mime_type="png")


def test_unknown_bytes_need_a_mime_type() -> None:
    with pytest.raises(MediaError, match=r"pass mime_type=, e\.g\. mime_type='image/png'"):
        Image(b"\x00\x01\x02\x03")
    with pytest.raises(MediaError, match=r"mime_type='audio/wav'"):
        Audio(b"\x00\x01\x02\x03")
    assert Audio(b"\x00\x01\x02\x03", mime_type="audio/L16").mime_type == "audio/l16"
    assert File(b"\x00\x01\x02\x03").mime_type == "application/octet-stream"


def test_paths_fall_back_to_the_file_name(tmp_path: Path) -> None:
    truncated = tmp_path / "cut.png"
    truncated.write_bytes(b"\x00\x00not really")
    assert Image(truncated).mime_type == "image/png"
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    file = File(notes)
    assert file.mime_type == "text/plain"
    assert file.filename == "notes.txt"
    blob = tmp_path / "blob.unknownext"
    blob.write_bytes(b"\x00\x01")
    assert File(blob).mime_type == "application/octet-stream"
    with pytest.raises(MediaError, match=r"blob\.unknownext.*pass mime_type="):
        Image(blob)
    # The bytes are read before the name: a PNG named .jpg is a PNG.
    misnamed = tmp_path / "photo.jpg"
    misnamed.write_bytes(PNG)
    assert Image(misnamed).mime_type == "image/png"


def test_wrong_kind_says_which_class_to_use(tmp_path: Path) -> None:
    report = tmp_path / "report.pdf"
    report.write_bytes(PDF)
    with pytest.raises(
        MediaError, match=r"report\.pdf is application/pdf, not an image: use structio\.File"
    ):
        Image(report)
    with pytest.raises(MediaError, match=r"is application/pdf, not audio: use structio\.File"):
        Audio(report)
    with pytest.raises(MediaError, match=r"is audio/wav, not an image: use structio\.Audio"):
        Image(WAV)
    with pytest.raises(MediaError, match=r"is image/png, not audio: use structio\.Image"):
        Audio(PNG_URI)
    assert File(report).mime_type == "application/pdf"


# -- size limits ---------------------------------------------------------------------------


def test_class_limits() -> None:
    assert Image.MAX_BYTES == 20 * 1024 * 1024
    assert Audio.MAX_BYTES == 25 * 1024 * 1024
    assert File.MAX_BYTES == 32 * 1024 * 1024


def test_size_limit_on_bytes_paths_and_data_uris(tmp_path: Path) -> None:
    path = tmp_path / "photo.png"
    path.write_bytes(PNG)
    message = r"photo\.png is 70 bytes; Image takes at most 69 bytes: pass max_bytes= to raise"
    with pytest.raises(MediaError, match=message):
        Image(path, max_bytes=69)
    assert Image(path, max_bytes=70).size == 70
    with pytest.raises(MediaError, match="is 70 bytes; Image takes at most 10 bytes"):
        Image(PNG, max_bytes=10)
    with pytest.raises(MediaError, match="is 70 bytes; Image takes at most 10 bytes"):
        Image(PNG_URI, max_bytes=10)
    with pytest.raises(MediaError, match="Audio takes at most"):
        Audio(WAV, max_bytes=len(WAV) - 1)
    with pytest.raises(MediaError, match="upload the file and pass file_id="):
        File(PDF, max_bytes=8)
    with pytest.raises(MediaError, match="max_bytes must be a positive int"):
        Image(PNG, max_bytes=0)


def test_default_limit_on_a_large_data_uri_reports_mib() -> None:
    uri = "data:image/png;base64," + "A" * (4 * 11_000_000)
    with pytest.raises(MediaError) as caught:
        Image(uri)
    message = str(caught.value)
    assert (
        "is 31.5 MiB; Image takes at most 20.0 MiB: pass max_bytes= to raise the limit, or "
        in message
    )
    assert message.endswith("or send a URL")
    assert message.startswith("data:image/png;base64,AAAA")
    assert len(message) < 250


def test_copy_keeps_its_limit_unless_a_new_one_is_given() -> None:
    big = Image(PNG, max_bytes=100)
    assert Image(big) is not big
    assert Image(big) == big
    with pytest.raises(MediaError, match="Image takes at most 50 bytes"):
        Image(big, max_bytes=50)


# -- Audio and File ------------------------------------------------------------------------


def test_audio_and_file_refuse_urls_without_download() -> None:
    with pytest.raises(
        MediaError,
        match=r"input_audio takes the audio data itself, not a URL: "
        r"use Audio\.from_url\(url, download=True\)",
    ):
        Audio("https://example.org/clip.mp3")
    with pytest.raises(
        MediaError, match=r"download=True\), or upload the file and pass File\(file_id=\.\.\.\)"
    ):
        File("https://example.org/report.pdf")
    with pytest.raises(MediaError, match="not a URL"):
        Audio.from_url("https://example.org/clip.mp3")


def test_audio_from_a_wav_file(tmp_path: Path) -> None:
    path = tmp_path / "clip.wav"
    path.write_bytes(WAV)
    clip = Audio(path)
    assert clip.mime_type == "audio/wav"
    assert clip.format == "wav"
    assert clip.content_part() == {
        "type": "input_audio",
        "input_audio": {"data": b64(WAV), "format": "wav"},
    }


@pytest.mark.parametrize(
    ("mime", "fmt"),
    [
        ("audio/mpeg", "mp3"),
        ("audio/mp3", "mp3"),
        ("audio/wav", "wav"),
        ("audio/x-wav", "wav"),
        ("audio/wave", "wav"),
        ("audio/flac", "flac"),
        ("audio/ogg", "ogg"),
        ("audio/mp4", "mp4"),
    ],
)
def test_audio_format_from_the_mime_type(mime: str, fmt: str) -> None:
    clip = Audio(f"data:{mime};base64,{b64(b'abc')}")
    assert clip.content_part()["input_audio"] == {"data": b64(b"abc"), "format": fmt}


def test_audio_from_an_input_audio_mapping() -> None:
    clip = Audio({"data": b64(WAV), "format": "wav"})
    assert clip == Audio(WAV)
    assert Audio({"audio_base64": b64(b"ID3abc"), "audio_format": "mp3"}).mime_type == "audio/mpeg"
    assert Audio({"data": b64(b"OggS"), "format": "ogg"}).content_part()["input_audio"] == {
        "data": b64(b"OggS"),
        "format": "ogg",
    }
    with pytest.raises(MediaError, match="an Audio mapping has the keys 'data'"):
        Audio({"data": b64(WAV)})
    with pytest.raises(MediaError, match="not valid base64"):
        Audio({"data": "@@@@", "format": "wav"})


def test_file_from_a_path_takes_its_name(tmp_path: Path) -> None:
    path = tmp_path / "report.pdf"
    path.write_bytes(PDF)
    report = File(path)
    assert report.filename == "report.pdf"
    assert report.file_id is None
    assert report.url == "data:application/pdf;base64," + b64(PDF)
    assert report.content_part() == {
        "type": "file",
        "file": {"file_data": "data:application/pdf;base64," + b64(PDF), "filename": "report.pdf"},
    }
    assert File(path, filename="q3.pdf").filename == "q3.pdf"


def test_file_without_a_name_sends_no_filename() -> None:
    assert File(PDF).content_part() == {
        "type": "file",
        "file": {"file_data": "data:application/pdf;base64," + b64(PDF)},
    }


def test_file_by_id() -> None:
    uploaded = File(file_id="file-abc")
    assert uploaded.url is None
    assert uploaded.data is None
    assert uploaded.size is None
    assert uploaded.file_id == "file-abc"
    assert uploaded.content_part() == {"type": "file", "file": {"file_id": "file-abc"}}
    assert uploaded.to_json() == {"file_id": "file-abc"}
    assert File(uploaded.to_json()) == uploaded
    assert repr(uploaded) == "File(file_id='file-abc')"
    with pytest.raises(MediaError, match=r"exactly one of a source .* got both"):
        File(PDF, file_id="file-abc")
    with pytest.raises(MediaError, match="got neither"):
        File()
    with pytest.raises(MediaError, match="uploaded file's id"):
        Image(uploaded)


def test_file_takes_any_media_with_data() -> None:
    as_file = File(Image(PNG), filename="dot.png")
    assert as_file.url == PNG_URI
    assert as_file.mime_type == "image/png"
    assert Image(File(PNG)) == Image(PNG)
    with pytest.raises(MediaError, match="not an image"):
        Image(File(PDF))


# -- content parts and JSON ----------------------------------------------------------------


def test_image_content_parts() -> None:
    assert Image(PNG).content_part() == {"type": "image_url", "image_url": {"url": PNG_URI}}
    assert Image("https://x.org/a.jpg", detail="low").content_part() == {
        "type": "image_url",
        "image_url": {"url": "https://x.org/a.jpg", "detail": "low"},
    }
    with pytest.raises(MediaError, match="detail must be 'low', 'high' or 'auto'"):
        Image(PNG, detail="medium")


def test_content_part_is_a_new_dict_each_time() -> None:
    image = Image(PNG)
    part = image.content_part()
    part["image_url"]["url"] = "changed"
    assert image.content_part()["image_url"]["url"] == PNG_URI


def test_to_json_round_trips() -> None:
    image = Image(PNG)
    assert image.to_json() == PNG_URI
    assert Image(image.to_json()) == image
    detailed = Image("https://x.org/a.jpg", detail="high")
    assert detailed.to_json() == {"url": "https://x.org/a.jpg", "detail": "high"}
    assert Image(detailed.to_json()) == detailed
    clip = Audio(WAV)
    assert clip.to_json() == "data:audio/wav;base64," + b64(WAV)
    assert Audio(clip.to_json()) == clip
    report = File(PDF, filename="r.pdf")
    assert report.to_json() == {
        "file_data": "data:application/pdf;base64," + b64(PDF),
        "filename": "r.pdf",
    }
    assert File(report.to_json()) == report
    assert json.loads(json.dumps(report.to_json())) == report.to_json()
    with pytest.raises(MediaError, match="an Image mapping has the keys 'url'"):
        Image({"href": "https://x.org/a.jpg"})
    with pytest.raises(MediaError, match="a File mapping has 'file_data'"):
        File({"file_data": PNG_URI, "file_id": "file-1"})


def test_is_media_part() -> None:
    assert is_media_part(Image(PNG).content_part())
    assert is_media_part(Audio(WAV).content_part())
    assert is_media_part(File(PDF).content_part())
    assert not is_media_part({"type": "text", "text": "hi"})
    assert not is_media_part({})


# -- value semantics -----------------------------------------------------------------------


def test_equality_and_hash() -> None:
    url = "https://x.org/a.jpg"
    assert Image(url) == Image(url)
    assert hash(Image(url)) == hash(Image(url))
    assert Image(url) != Image(url, detail="low")
    assert Image(PNG) == Image(PNG_URI)
    assert Image(PNG) != File(PNG)
    assert File(PDF, filename="a.pdf") != File(PDF, filename="b.pdf")
    assert File(file_id="file-1") != File(file_id="file-2")
    assert len({Image(url), Image(url), Image(PNG), Image(PNG_URI)}) == 2
    assert Image(url) != url


def test_immutable() -> None:
    image = Image(PNG)
    with pytest.raises(AttributeError):
        image.url = "https://x.org/b.jpg"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        image.anything = 1
    with pytest.raises(AttributeError, match="immutable"):
        del image._url
    assert image.url == PNG_URI


def test_copy_and_pickle() -> None:
    report = File(PDF, filename="r.pdf")
    assert copy.copy(report) is report
    assert copy.deepcopy({"f": report})["f"] is report
    restored = pickle.loads(pickle.dumps(report))  # noqa: S301 (our own bytes)
    assert restored == report
    assert restored.filename == "r.pdf"
    detailed = Image("https://x.org/a.jpg", detail="low")
    assert pickle.loads(pickle.dumps(detailed)).detail == "low"  # noqa: S301 (our own bytes)


def test_repr_is_short() -> None:
    assert repr(Image(PNG)) == "Image('data:image/png;base64,iVBORw0KGgo…', 70 bytes)"
    assert repr(Image("https://x.org/a.jpg")) == "Image('https://x.org/a.jpg')"
    big = Image(PNG + bytes(1024 * 1024))
    assert repr(big) == "Image('data:image/png;base64,iVBORw0KGgo…', 1.0 MiB)"
    assert repr(File(PDF, filename="r.pdf")).endswith(f"{len(PDF)} bytes, filename='r.pdf')")


# -- downloads -----------------------------------------------------------------------------


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: ClassVar[dict[str, tuple[int, str, bytes, bool]]] = {
        "/photo": (200, "image/png", PNG, True),
        "/custom": (200, "image/x-custom; charset=binary", b"\x00custom", True),
        "/octet/shot.png": (200, "application/octet-stream", PNG, True),
        "/page": (200, "text/html; charset=utf-8", b"<html>login</html>", True),
        "/docs/report.pdf": (200, "application/pdf", PDF, True),
        "/clip": (200, "audio/wav", WAV, True),
        "/big": (200, "image/png", PNG + bytes(10_000), True),
        "/streamed": (200, "image/png", PNG + bytes(200_000), False),
    }

    def do_GET(self) -> None:
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/photo")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path not in self.routes:
            self.send_error(404)
            return
        status, ctype, body, sized = self.routes[self.path]
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if sized:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        for start in range(0, len(body), 4096):
            self.wfile.write(body[start : start + 4096])

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that stops reading an oversized body breaks the pipe on purpose


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    httpd = _Server(("127.0.0.1", 0), _Handler)
    # A short poll: shutdown() waits for the next one (0.5 s by default, per test).
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_download_image(server: str) -> None:
    image = Image.from_url(f"{server}/photo", download=True, detail="low")
    assert image.url == PNG_URI
    assert image.mime_type == "image/png"
    assert image.detail == "low"
    assert Image.from_url(f"{server}/moved", download=True).url == PNG_URI


def test_download_honours_the_content_type(server: str) -> None:
    custom = Image.from_url(f"{server}/custom", download=True)
    assert custom.mime_type == "image/x-custom"
    assert custom.data == b"\x00custom"
    # A vague content type leaves the decision to the bytes.
    assert Image.from_url(f"{server}/octet/shot.png", download=True).mime_type == "image/png"
    with pytest.raises(MediaError, match="is text/html, not an image"):
        Image.from_url(f"{server}/page", download=True)
    assert (
        Image.from_url(f"{server}/custom", download=True, mime_type="image/png").mime_type
        == "image/png"
    )


def test_download_audio_and_file(server: str) -> None:
    clip = Audio.from_url(f"{server}/clip", download=True)
    assert clip.content_part()["input_audio"] == {"data": b64(WAV), "format": "wav"}
    report = File.from_url(f"{server}/docs/report.pdf", download=True)
    assert report.filename == "report.pdf"
    assert report.data == PDF
    assert (
        File.from_url(f"{server}/docs/report.pdf", download=True, filename="q.pdf").filename
        == "q.pdf"
    )


def test_download_http_error(server: str) -> None:
    with pytest.raises(
        MediaError, match=r"downloading http://127\.0\.0\.1:\d+/nothing failed: HTTP 404"
    ):
        Image.from_url(f"{server}/nothing", download=True)


def test_download_stops_over_the_limit(server: str) -> None:
    with pytest.raises(MediaError, match=r"/big is 9\.8 KiB; Image takes at most 1000 bytes"):
        Image.from_url(f"{server}/big", download=True, max_bytes=1000)
    # Without a Content-Length, the limit is enforced while the body streams in.
    with pytest.raises(
        MediaError, match=r"/streamed is over 1000 bytes; Image takes at most 1000 bytes"
    ):
        Image.from_url(f"{server}/streamed", download=True, max_bytes=1000)
    assert Image.from_url(f"{server}/streamed", download=True).size == len(PNG) + 200_000


def test_download_unreachable_and_bad_urls() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Nothing listens on the port now: the connection is refused.
    with pytest.raises(MediaError, match=r"downloading .* failed: ConnectError"):
        Image.from_url(f"http://127.0.0.1:{port}/x", download=True, timeout=2)
    with pytest.raises(MediaError, match="is not an http"):
        Image.from_url("ftp://example.org/a.png", download=True)


# -- pydantic ------------------------------------------------------------------------------


class Shot(BaseModel):
    photo: Image
    caption: str = ""


def test_pydantic_model_validates_and_dumps() -> None:
    from_uri = Shot(photo=PNG_URI)  # type: ignore[arg-type]
    assert from_uri.photo == Image(PNG)
    image = Image(PNG)
    assert Shot(photo=image).photo is image
    assert Shot.model_validate({"photo": PNG}).photo == image
    assert from_uri.model_dump()["photo"] is from_uri.photo
    assert from_uri.model_dump(mode="json") == {"photo": PNG_URI, "caption": ""}
    assert json.loads(from_uri.model_dump_json()) == {"photo": PNG_URI, "caption": ""}
    assert Shot.model_validate_json(from_uri.model_dump_json()) == from_uri


def test_pydantic_errors_carry_the_media_message() -> None:
    with pytest.raises(
        ValidationError, match="'nonsense' is not a URL, a data URI or an existing file"
    ):
        Shot(photo="nonsense")  # type: ignore[arg-type]
    with pytest.raises(
        ValidationError, match="expected Image, a URL, a data URI, a path or bytes; got int"
    ):
        Shot(photo=3)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"not an image: use structio\.File"):
        Shot(photo=PDF)  # type: ignore[arg-type]


def test_markers_context_dumps_markers() -> None:
    shot = Shot(photo=PNG_URI)  # type: ignore[arg-type]
    with markers():
        dumped = shot.model_dump(mode="json")
        assert json.loads(shot.model_dump_json())["photo"] == marker(shot.photo)
    assert dumped["photo"] == marker(shot.photo)
    assert split_markers(json.dumps(dumped)) == [
        {"type": "text", "text": '{"photo": "'},
        {"type": "image_url", "image_url": {"url": PNG_URI}},
        {"type": "text", "text": '", "caption": ""}'},
    ]
    assert shot.model_dump(mode="json")["photo"] == PNG_URI


def test_markers_context_is_reentrant_and_per_thread() -> None:
    image = Image(PNG)
    seen: list[Any] = []
    with markers():
        with markers():
            assert to_jsonable_python(image) == marker(image)
        assert to_jsonable_python(image) == marker(image)
        worker = threading.Thread(target=lambda: seen.append(to_jsonable_python(image)))
        worker.start()
        worker.join()
    assert seen == [PNG_URI]
    assert to_jsonable_python(image) == PNG_URI


def test_type_adapters_and_jsonable() -> None:
    adapter = TypeAdapter(list[Image])
    images = adapter.validate_python([PNG_URI, "https://x.org/a.jpg", Image(PNG)])
    assert images == [Image(PNG), Image("https://x.org/a.jpg"), Image(PNG)]
    assert adapter.dump_python(images, mode="json") == [PNG_URI, "https://x.org/a.jpg", PNG_URI]
    assert jsonable({"files": [File(file_id="file-1")]}) == {"files": [{"file_id": "file-1"}]}
    assert TypeAdapter(File).validate_python({"file_id": "file-1"}) == File(file_id="file-1")
    assert TypeAdapter(Audio).validate_python(WAV) == Audio(WAV)


def test_json_schemas_do_not_crash() -> None:
    assert TypeAdapter(Audio).json_schema() == {"type": "string", "format": "uri"}
    assert "anyOf" in TypeAdapter(Image).json_schema()
    assert "anyOf" in TypeAdapter(File).json_schema()
    assert Shot.model_json_schema()["properties"]["photo"]["anyOf"][0]["type"] == "string"


# -- markers -------------------------------------------------------------------------------


def test_marker_spellings_agree_and_survive_json() -> None:
    image = Image(PNG)
    mark = marker(image)
    assert mark.startswith(MARKER_PREFIX)
    assert mark == str(image) == f"{image}" == format(image, "")
    assert re.fullmatch(r"[A-Za-z0-9<>:\-]+", mark)
    assert json.dumps(mark) == f'"{mark}"'
    assert has_markers(f"see {image}")
    assert not has_markers("see nothing")
    assert marker(Image(PNG)) == mark
    assert marker(File(PNG)) != mark
    assert marker(Image(PNG, detail="low")) != mark
    with pytest.raises(TypeError, match="unsupported format string"):
        format(image, ">10")
    with pytest.raises(TypeError, match="marker"):
        marker("not media")  # type: ignore[arg-type]


def test_split_markers_matches_dspys_content_parts() -> None:
    inline = Image(PNG)
    remote = Image("https://x.org/a.jpg")
    text = (
        "[[ ## images ## ]]\n"
        + json.dumps([str(inline), str(remote)])
        + "\n\nRespond with the answer."
    )
    assert split_markers(text) == [
        {"type": "text", "text": '[[ ## images ## ]]\n["'},
        {"type": "image_url", "image_url": {"url": PNG_URI}},
        {"type": "text", "text": '", "'},
        {"type": "image_url", "image_url": {"url": "https://x.org/a.jpg"}},
        {"type": "text", "text": '"]\n\nRespond with the answer.'},
    ]
    assert split_markers(json.dumps(["x", str(inline), str(remote)])) == [
        {"type": "text", "text": '["x", "'},
        {"type": "image_url", "image_url": {"url": PNG_URI}},
        {"type": "text", "text": '", "'},
        {"type": "image_url", "image_url": {"url": "https://x.org/a.jpg"}},
        {"type": "text", "text": '"]'},
    ]


def test_split_markers_edges() -> None:
    image = Image(PNG)
    clip = Audio(WAV)
    assert split_markers("plain text") == "plain text"
    assert split_markers("") == ""
    assert split_markers(f"{MARKER_PREFIX}not a key>>") == f"{MARKER_PREFIX}not a key>>"
    assert split_markers(str(image)) == [image.content_part()]
    assert split_markers(f"{image}{clip}") == [image.content_part(), clip.content_part()]
    assert split_markers(f"a{image}b{image}") == [
        {"type": "text", "text": "a"},
        image.content_part(),
        {"type": "text", "text": "b"},
        image.content_part(),
    ]


def test_unknown_or_dead_markers_raise() -> None:
    with pytest.raises(MediaError, match="no longer alive: render and send in one step"):
        split_markers(f"x {MARKER_PREFIX}{'0' * 32}>> y")
    text = f"look: {Image(PNG + b'dead')}"  # the value dies with the f-string's temporary
    gc.collect()
    with pytest.raises(MediaError, match="no longer alive"):
        split_markers(text)


def test_registry_holds_values_weakly() -> None:
    image = Image(PNG + b"weak")
    mark = marker(image)
    key = mark[len(MARKER_PREFIX) : -2]
    assert media._REGISTRY.get(key) is image
    del image
    gc.collect()
    assert media._REGISTRY.get(key) is None


@given(st.text())
@settings(max_examples=300, deadline=None)
def test_split_markers_on_any_text_returns_it_or_raises_media_error(text: str) -> None:
    try:
        result = split_markers(text)
    except MediaError:
        assert MARKER_PREFIX in text
        return
    assert result == text or all(isinstance(part, dict) for part in result)
    if MARKER_PREFIX not in text:
        assert result == text


_LIVE = [
    Image(PNG),
    Image("https://x.org/a.jpg", detail="auto"),
    Audio(WAV),
    File(PDF, filename="r.pdf"),
]


@given(st.lists(st.one_of(st.text(max_size=20), st.sampled_from(_LIVE)), max_size=12))
@settings(max_examples=300, deadline=None)
def test_split_markers_keeps_text_and_media_in_order(pieces: list[str | Media]) -> None:
    plain = "".join(p for p in pieces if isinstance(p, str))
    assume(MARKER_PREFIX not in plain)
    text = "".join(str(p) for p in pieces)
    result = split_markers(text)
    values = [p for p in pieces if isinstance(p, Media)]
    if not values:
        assert result == text
        return
    assert isinstance(result, list)
    assert "".join(p["text"] for p in result if p["type"] == "text") == plain
    assert [p for p in result if p["type"] != "text"] == [v.content_part() for v in values]
    assert all(p["text"] for p in result if p["type"] == "text")
