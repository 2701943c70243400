"""DSPy's spellings of media values (``dspy.Image``, ``dspy.Audio``), each as DSPy means it."""

from __future__ import annotations

from pathlib import Path

import pytest

from structio.exceptions import MediaError, UsageError
from structio.media import Audio, File, Image
from tests.test_media import PNG, PNG_URI, WAV, b64, server

__all__ = ["server"]  # the loopback server fixture, used here by name


def test_image_takes_dspys_url_keyword() -> None:
    assert Image(url=PNG_URI) == Image(PNG_URI)
    assert Image(url="https://example.com/dog.png").url == "https://example.com/dog.png"
    with pytest.raises(MediaError, match="a source and url=: give one"):
        Image(PNG_URI, url=PNG_URI)
    with pytest.raises(MediaError, match="Image needs a source"):
        Image()


def test_image_download_true_fetches_as_from_url(server: str) -> None:
    image = Image(f"{server}/photo", download=True)
    assert image.url == PNG_URI
    assert image == Image.from_url(f"{server}/photo", download=True)
    assert Image(f"{server}/photo", download=True, detail="low").detail == "low"


@pytest.mark.parametrize("kind", [Image, Audio, File])
def test_from_file_is_from_path(kind: type[Image], tmp_path: Path) -> None:
    data = {Image: PNG, Audio: WAV, File: b"%PDF-1.4\n%%EOF\n"}[kind]
    suffix = {Image: "png", Audio: "wav", File: "pdf"}[kind]
    path = tmp_path / f"x.{suffix}"
    path.write_bytes(data)
    assert kind.from_file(path) == kind.from_path(path)
    assert kind.from_file(str(path)).data == data


def test_audio_takes_dspys_data_and_audio_format_keywords() -> None:
    audio = Audio(data=b64(WAV), audio_format="wav")
    assert audio.data == WAV
    assert audio.content_part()["input_audio"]["format"] == "wav"
    with pytest.raises(MediaError, match="a source and data=: give one"):
        Audio(WAV, data=b64(WAV), audio_format="wav")
    with pytest.raises(MediaError, match="'data' and 'format' must be strs"):
        Audio(data=b64(WAV))


def test_audio_from_array_says_structios_way() -> None:
    with pytest.raises(UsageError, match=r"Audio\.from_path\('clip\.wav'\)"):
        Audio.from_array([0.0, 0.1], 16000)
