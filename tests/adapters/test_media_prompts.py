"""Images, audio and files in prompts: content parts, demos, saving, tokens and finetuning."""

from __future__ import annotations

import base64
import io
import json
import wave
from pathlib import Path

import pytest

import structio as sio
from structio.rendering.tokens import content_text

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PNG_URI = "data:image/png;base64," + base64.b64encode(PNG).decode()


class Caption(sio.Signature):
    """Caption the image."""

    image: sio.Image = sio.InputField()
    caption: str = sio.OutputField()


def wav_bytes() -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x00" * 8)
    return buffer.getvalue()


def test_an_image_file_goes_on_the_request_as_a_content_part(tmp_path: Path) -> None:
    photo = tmp_path / "photo.png"
    photo.write_bytes(PNG)
    lm = sio.FakeLM(["[[ ## caption ## ]]\nA pixel."])
    pred = sio.Predict(Caption, lm=lm)(image=sio.Image(photo))
    assert pred.caption == "A pixel."
    content = lm.calls[0].messages[-1]["content"]
    assert content[0] == {"type": "text", "text": "[[ ## image ## ]]\n"}
    assert content[1] == {"type": "image_url", "image_url": {"url": PNG_URI}}
    assert content[2]["text"].startswith("\n\nRespond with the corresponding output fields")
    # A path given as a string is read too, as pydantic would validate it.
    sio.Predict(Caption, lm=sio.FakeLM(["[[ ## caption ## ]]\nA pixel."]))(image=str(photo))


def test_audio_and_files_are_parts_of_their_own_kind(tmp_path: Path) -> None:
    report = tmp_path / "report.pdf"
    report.write_bytes(b"%PDF-1.4\n%%EOF\n")
    sig = sio.Signature("clip: Audio, document: File -> summary")
    messages = sio.ChatAdapter().format(
        sig, [], {"clip": sio.Audio(wav_bytes()), "document": sio.File(report)}
    )
    kinds = [part["type"] for part in messages[-1]["content"]]
    assert kinds == ["text", "input_audio", "text", "file", "text"]
    audio = messages[-1]["content"][1]["input_audio"]
    assert audio["format"] == "wav"
    assert base64.b64decode(audio["data"]) == wav_bytes()
    file_part = messages[-1]["content"][3]["file"]
    assert file_part["filename"] == "report.pdf"
    assert file_part["file_data"].startswith("data:application/pdf;base64,")


def test_a_bad_media_input_is_a_format_error_naming_the_field() -> None:
    with pytest.raises(sio.FormatError) as exc:
        sio.ChatAdapter().format(Caption, [], {"image": "not/a/file.png"})
    assert "`image`" in str(exc.value)
    assert "not/a/file.png" in str(exc.value)


def test_media_in_an_assistant_message_is_refused() -> None:
    sig = sio.Signature("question -> picture: Image")
    demo = {"question": "q", "picture": sio.Image(PNG_URI)}
    with pytest.raises(sio.MediaError, match="only in user messages"):
        sio.ChatAdapter().format(sig, [demo], {"question": "q"})


def test_token_counts_leave_media_out() -> None:
    with_image = sio.ChatAdapter().render(Caption, [], {"image": PNG_URI})
    user = with_image.parts[-1]
    assert isinstance(user.content, list)
    assert user.text == content_text(user.content)
    assert PNG_URI not in user.text
    text_only = sio.Part("user", "user", user.text)
    assert with_image.part_tokens[-1] == sio.Prompt([text_only]).token_count


def test_demos_with_images_are_checked_saved_and_loaded(tmp_path: Path) -> None:
    demos = [
        {"image": "https://example.com/dog.jpg", "caption": "A dog."},
        {"image": PNG_URI, "caption": "A pixel."},
    ]
    predict = sio.Predict(Caption, demos=demos)
    assert all(isinstance(d["image"], sio.Image) for d in predict.demos)
    path = tmp_path / "caption.json"
    predict.save(path)
    saved = json.loads(path.read_text())
    assert [d["image"] for d in saved["demos"]] == [demos[0]["image"], PNG_URI]
    loaded = sio.Predict.load(path)
    assert loaded.demos == predict.demos
    lm = sio.FakeLM(["[[ ## caption ## ]]\nA cat."])
    loaded(image="https://example.com/cat.jpg", lm=lm)
    parts = [m["content"] for m in lm.calls[0].messages if m["role"] == "user"]
    urls = [p["image_url"]["url"] for content in parts for p in content if p["type"] == "image_url"]
    assert urls == ["https://example.com/dog.jpg", PNG_URI, "https://example.com/cat.jpg"]


def test_finetune_records_with_images_are_valid_vision_data(tmp_path: Path) -> None:
    data = tmp_path / "train.jsonl"
    rows = [
        {"image": PNG_URI, "caption": "A pixel."},
        {"image": "https://example.com/a.jpg", "caption": "A."},
    ]
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "out.jsonl"
    sio.finetune.write_jsonl(Caption, data, out)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    user = records[0]["messages"][1]["content"]
    assert user[1] == {"type": "image_url", "image_url": {"url": PNG_URI}}
    assert records[0]["messages"][-1] == {
        "role": "assistant",
        "content": "[[ ## caption ## ]]\nA pixel.\n\n[[ ## completed ## ]]\n",
    }
    report = sio.finetune.validate(out, signature=Caption)
    assert report.problems == []
    assert report.valid == 2


def test_finetune_validation_refuses_audio_parts(tmp_path: Path) -> None:
    record = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Transcribe."},
                    {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
                ],
            },
            {"role": "assistant", "content": "Hello."},
        ]
    }
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record) + "\n")
    report = sio.finetune.validate(path)
    assert report.valid == 0
    assert "may hold images but not audio" in report.problems[0].message
