"""Record DSPy 3.4.1's prompts for media inputs, tools and native reasoning as golden files.

Writes three files under tests/golden/dspy-3.4.1/:

* golden_media.json: `dspy.Image` (data URI, https URL, `list[Image]`, inside a pydantic model,
  next to a str input, in a demo, in a `dspy.History` turn), `dspy.Audio` and `dspy.File` inputs,
  formatted by ChatAdapter and JSONAdapter, plus `ChatAdapter.format_finetune_data` for an image.
* golden_tools.json: `str(dspy.Tool(f))`, `tool.args` and `format_as_litellm_function_call()` for
  three functions; `list[dspy.Tool]` -> `dspy.ToolCalls` signatures with native function calling
  off (`adapter.format`) and on (a full adapter call through `dspy.Predict` with a recording LM:
  the messages and kwargs sent, and the Prediction built from scripted provider tool calls);
  tool calls and their results in a `dspy.History`, native on and off; parse examples.
* golden_reasoning.json: a `dspy.Reasoning` output field, formatted and parsed with native
  reasoning off, and full calls with an LM whose model supports reasoning (`reasoning_effort`,
  `reasoning_content`).

Every signature and function is defined by the source strings below (`*_SOURCE`), which are
executed as they are and stored verbatim as each file's `signature_source`. No real model is
called: `RecordingLM` (a `dspy.BaseLM`) records what DSPy sends and returns scripted responses,
and reports the capabilities litellm's offline metadata gives for its model name (the same
litellm calls `dspy.LM` makes on its litellm route). Network access is blocked while recording.
The output is deterministic: fixed data, no timestamps.

Values that are not JSON are written as JSON data the test suite can rebuild:
an Image as its URL or data URI string; Audio as `{"audio_base64": ..., "format": "wav"}`;
a File as its non-null `file_data` / `file_id` / `filename`; a Tool as `"Tool(<function name>)"`;
ToolCalls as `{"tool_calls": [{"id", "name", "args"}], "tool_call_results": [...]}` (the latter
only when set); a pydantic model as its fields; a History as `{"messages": [...]}`; a Reasoning as
its content string (parse results also give each value's Python type in `parsed_types`).

Run from the repository root:

    LITELLM_LOCAL_MODEL_COST_MAP=True /tmp/bench/bin/python benchmarks/golden_media_tools.py
"""

from __future__ import annotations

import base64
import copy
import io
import json
import os
import socket
import sys
import warnings
import wave
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
warnings.simplefilter("ignore")


def _no_network(*_args: Any, **_kwargs: Any) -> None:
    raise RuntimeError("network access is disabled while recording golden files")


socket.socket.connect = _no_network  # type: ignore[method-assign]
socket.create_connection = _no_network  # type: ignore[assignment]

import dspy  # noqa: E402
import litellm  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402

OUT_DIR = Path(__file__).resolve().parent.parent / "tests" / "golden" / "dspy-3.4.1"

PNG_URI = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
CAT_URL = "https://example.com/cat.jpg"
DOG_URL = "https://example.com/dog.jpg"
ADA_URL = "https://example.com/ada.jpg"

PDF_BYTES = (
    b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
    b"2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"
)


def tiny_wav() -> bytes:
    """8 frames of 16-bit mono PCM at 8 kHz; `wave` writes a fixed 44-byte header."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        samples = [0, 1000, 2000, 1000, 0, -1000, -2000, -1000]
        w.writeframes(b"".join(s.to_bytes(2, "little", signed=True) for s in samples))
    return buf.getvalue()


WAV_B64 = base64.b64encode(tiny_wav()).decode("ascii")


# --------------------------------------------------------------------------------------------
# Sources: executed as they are, stored verbatim as `signature_source`.
# --------------------------------------------------------------------------------------------

MEDIA_SOURCE = '''class Caption(dspy.Signature):
    """Caption the image."""

    image: dspy.Image = dspy.InputField()
    caption: str = dspy.OutputField()


class CompareImages(dspy.Signature):
    """Say how the images differ."""

    images: list[dspy.Image] = dspy.InputField()
    difference: str = dspy.OutputField()


class Person(BaseModel):
    name: str
    photo: dspy.Image


class DescribePerson(dspy.Signature):
    """Describe the person in one sentence."""

    person: Person = dspy.InputField()
    description: str = dspy.OutputField()


class VisualQA(dspy.Signature):
    """Answer the question about the image."""

    image: dspy.Image = dspy.InputField()
    question: str = dspy.InputField()
    answer: str = dspy.OutputField()


class ImageChat(dspy.Signature):
    """Answer questions about the images in the conversation."""

    question: str = dspy.InputField()
    image: dspy.Image = dspy.InputField()
    history: dspy.History = dspy.InputField()
    answer: str = dspy.OutputField()


class Transcribe(dspy.Signature):
    """Transcribe the audio."""

    audio: dspy.Audio = dspy.InputField()
    transcript: str = dspy.OutputField()


class Summarize(dspy.Signature):
    """Summarize the document."""

    document: dspy.File = dspy.InputField()
    summary: str = dspy.OutputField()
'''

TOOLS_SOURCE = '''def get_weather(city: str, unit: str = "C") -> str:
    """Get the weather for a city."""
    return "sunny"


class Coordinates(BaseModel):
    lat: float
    lon: float


class Location(BaseModel):
    """A place on Earth."""

    city: str
    country: str = Field(description="ISO country code")
    coords: Coordinates | None = None


def search_flights(origin: Location, destination: Location, max_stops: int = 1) -> list[str]:
    """Search for flights between two locations.

    Args:
        origin: Where the trip starts.
        destination: Where the trip ends.
        max_stops: Maximum number of stops.

    Returns:
        A list of flight numbers.
    """
    return []


async def fetch_url(url: str, timeout: float = 10.0) -> str:
    """Fetch a web page and return its text."""
    return ""


def add(a: int, b: int = 0):
    return a + b


class PickTool(dspy.Signature):
    """Decide which tools to call."""

    question: str = dspy.InputField()
    tools: list[dspy.Tool] = dspy.InputField()
    calls: dspy.ToolCalls = dspy.OutputField()


class PickToolAndAnswer(dspy.Signature):
    """Answer the question, calling tools when needed."""

    question: str = dspy.InputField()
    tools: list[dspy.Tool] = dspy.InputField()
    calls: dspy.ToolCalls = dspy.OutputField()
    answer: str = dspy.OutputField()


class ToolChat(dspy.Signature):
    """Answer the user, calling tools when needed."""

    question: str = dspy.InputField()
    tools: list[dspy.Tool] = dspy.InputField()
    history: dspy.History = dspy.InputField()
    calls: dspy.ToolCalls = dspy.OutputField()
    answer: str = dspy.OutputField()
'''

REASONING_SOURCE = '''class MathQA(dspy.Signature):
    """Answer the math question."""

    question: str = dspy.InputField()
    reasoning: dspy.Reasoning = dspy.OutputField()
    answer: int = dspy.OutputField()
'''


def load(source: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {
        "dspy": dspy,
        "BaseModel": BaseModel,
        "Field": Field,
        "__name__": "golden_source",
    }
    exec(compile(source, "<golden_source>", "exec", dont_inherit=True), namespace)
    return namespace


M = load(MEDIA_SOURCE)
T = load(TOOLS_SOURCE)
R = load(REASONING_SOURCE)


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def describe(value: Any) -> Any:
    """A runtime value as JSON data (see the module docstring)."""
    if isinstance(value, dspy.Image):
        return value.url
    if isinstance(value, dspy.Audio):
        return {"audio_base64": value.data, "format": value.audio_format}
    if isinstance(value, dspy.File):
        return {
            k: getattr(value, k)
            for k in ("file_data", "file_id", "filename")
            if getattr(value, k) is not None
        }
    if isinstance(value, dspy.Tool):
        return f"Tool({value.name})"
    if isinstance(value, dspy.Reasoning):
        return value.content
    if isinstance(value, dspy.ToolCalls):
        out: dict[str, Any] = {
            "tool_calls": [
                {"id": c.id, "name": c.name, "args": describe(c.args)} for c in value.tool_calls
            ]
        }
        if value.tool_call_results is not None:
            out["tool_call_results"] = describe(value.tool_call_results)
        return out
    if isinstance(value, dspy.History):
        return {"messages": [describe(m) for m in value.messages]}
    if isinstance(value, BaseModel):
        return {name: describe(getattr(value, name)) for name in type(value).model_fields}
    if isinstance(value, dict):
        return {k: describe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [describe(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot describe {type(value).__name__}")


def describe_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key in sorted(kwargs):
        value = kwargs[key]
        if isinstance(value, type) and issubclass(value, BaseModel):
            value = {"pydantic_model": value.__name__, "json_schema": value.model_json_schema()}
        out[key] = copy.deepcopy(value)
    return out


def error_of(exc: BaseException) -> dict[str, str]:
    return {"error_type": type(exc).__name__, "error": str(exc)}


def parsed_of(values: dict[str, Any]) -> dict[str, Any]:
    return {
        "parsed": {k: describe(v) for k, v in values.items()},
        "parsed_types": {k: type(v).__name__ for k, v in values.items()},
    }


ADAPTERS = {"ChatAdapter": dspy.ChatAdapter, "JSONAdapter": dspy.JSONAdapter}


def format_case(
    adapter_name: str,
    sig_name: str,
    ns: dict[str, Any],
    inputs: dict[str, Any],
    demos: list[dict[str, Any]] | None = None,
    name: str | None = None,
    note: str | None = None,
    **adapter_kwargs: Any,
) -> dict[str, Any]:
    case: dict[str, Any] = {}
    if name:
        case["name"] = name
    case["adapter"] = adapter_name
    if adapter_kwargs:
        case.update(adapter_kwargs)
    case["signature"] = sig_name
    if note:
        case["note"] = note
    case["inputs"] = describe(inputs)
    if demos:
        case["demos"] = describe(demos)
    adapter = ADAPTERS[adapter_name](**adapter_kwargs)
    try:
        case["messages"] = adapter.format(ns[sig_name], demos or [], inputs)
    except Exception as exc:  # recorded, not hidden
        case.update(error_of(exc))
    return case


def parse_case(
    adapter_name: str, sig_name: str, ns: dict[str, Any], completion: str, note: str | None = None
) -> dict[str, Any]:
    case: dict[str, Any] = {"adapter": adapter_name, "signature": sig_name}
    if note:
        case["note"] = note
    case["completion"] = completion
    try:
        case.update(parsed_of(ADAPTERS[adapter_name]().parse(ns[sig_name], completion)))
    except Exception as exc:
        case.update(error_of(exc))
    return case


class RecordingLM(dspy.BaseLM):
    """Records every request and answers with scripted OpenAI chat-completion responses.

    Capabilities come from litellm's offline metadata for `model`, asked the way dspy.LM's
    litellm route asks (dspy/clients/capabilities.py `_litellm_capabilities`).
    """

    def __init__(self, model: str, responses: list[dict[str, Any]], **kwargs: Any):
        super().__init__(model, cache=False, **kwargs)
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []

    @property
    def supports_function_calling(self) -> bool:
        return bool(litellm.supports_function_calling(model=self.model))

    @property
    def supports_reasoning(self) -> bool:
        return bool(litellm.supports_reasoning(self.model))

    @property
    def supports_response_schema(self) -> bool:
        provider = self.model.split("/", 1)[0]
        return bool(
            litellm.supports_response_schema(model=self.model, custom_llm_provider=provider)
        )

    @property
    def supported_params(self) -> set[str]:
        provider = self.model.split("/", 1)[0]
        return set(
            litellm.get_supported_openai_params(model=self.model, custom_llm_provider=provider)
            or ()
        )

    def capabilities(self) -> dict[str, Any]:
        return {
            "supports_function_calling": self.supports_function_calling,
            "supports_reasoning": self.supports_reasoning,
            "supports_response_schema": self.supports_response_schema,
            "response_format_in_supported_params": "response_format" in self.supported_params,
        }

    def forward(self, prompt: Any = None, messages: Any = None, **kwargs: Any) -> dict[str, Any]:
        self.requests.append(
            {"messages": copy.deepcopy(messages), "kwargs": describe_kwargs(kwargs)}
        )
        if not self.responses:
            raise RuntimeError("RecordingLM has no scripted response left")
        return self.responses.pop(0)


def chat_response(
    model: str,
    content: str | None,
    tool_calls: list[dict[str, Any]] | None = None,
    reasoning_content: str | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    if reasoning_content is not None:
        message["reasoning_content"] = reasoning_content
    return {
        "id": "chatcmpl-golden",
        "object": "chat.completion",
        "created": 0,
        "model": model.split("/", 1)[-1],
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls" if tool_calls else "stop",
                "message": message,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def openai_tool_call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def predict_case(
    adapter_name: str,
    sig_name: str,
    ns: dict[str, Any],
    model: str,
    inputs: dict[str, Any],
    responses: list[dict[str, Any]],
    demos: list[dict[str, Any]] | None = None,
    name: str | None = None,
    note: str | None = None,
    lm_kwargs: dict[str, Any] | None = None,
    call_kwargs: dict[str, Any] | None = None,
    **adapter_kwargs: Any,
) -> dict[str, Any]:
    """A full `dspy.Predict` call through the adapter with a RecordingLM."""
    lm = RecordingLM(model, responses, **(lm_kwargs or {}))
    adapter = ADAPTERS[adapter_name](**adapter_kwargs)
    case: dict[str, Any] = {}
    if name:
        case["name"] = name
    case["adapter"] = adapter_name
    case.update(adapter_kwargs)
    case["signature"] = sig_name
    if note:
        case["note"] = note
    case["call"] = "dspy.Predict(signature)(**inputs) under dspy.context(lm=lm, adapter=adapter)"
    case["lm_model"] = model
    case["lm_capabilities"] = lm.capabilities()
    if lm_kwargs:
        case["lm_init_kwargs"] = lm_kwargs
    if call_kwargs:
        case["call_config"] = call_kwargs
    case["inputs"] = describe(inputs)
    if demos:
        case["demos"] = describe(demos)
    case["scripted_responses"] = copy.deepcopy(responses)
    predictor = dspy.Predict(ns[sig_name])
    if demos:
        predictor.demos = demos
    try:
        with dspy.context(lm=lm, adapter=adapter):
            prediction = predictor(**inputs, **({"config": call_kwargs} if call_kwargs else {}))
        values = dict(prediction.items())
        outcome: dict[str, Any] = {
            "prediction": {k: describe(v) for k, v in values.items()},
            "prediction_types": {k: type(v).__name__ for k, v in values.items()},
        }
    except Exception as exc:
        outcome = error_of(exc)
    case["lm_requests"] = lm.requests
    case.update(outcome)
    return case


def write(filename: str, data: dict[str, Any]) -> None:
    # The same layout as the other golden files: indent=2, ensure_ascii=False, no final newline.
    text = json.dumps(data, indent=2, ensure_ascii=False)
    (OUT_DIR / filename).write_text(text, encoding="utf-8")
    print(f"wrote {OUT_DIR / filename} ({len(data['cases'])} cases)")


# --------------------------------------------------------------------------------------------
# golden_media.json
# --------------------------------------------------------------------------------------------


def media() -> dict[str, Any]:
    png = dspy.Image(PNG_URI)
    cat = dspy.Image(CAT_URL)
    dog = dspy.Image(DOG_URL)
    person = M["Person"](name="Ada Lovelace", photo=dspy.Image(ADA_URL))
    audio = dspy.Audio(data=WAV_B64, audio_format="wav")
    pdf = dspy.File.from_bytes(PDF_BYTES, filename="report.pdf")
    pdf_typed = dspy.File.from_bytes(PDF_BYTES, filename="report.pdf", mime_type="application/pdf")
    uploaded = dspy.File.from_file_id("file-abc123")
    history = dspy.History(
        messages=[
            {"question": "What is in this picture?", "image": png, "answer": "A single pixel."}
        ]
    )

    cases = []
    for ad in ADAPTERS:
        cases += [
            format_case(ad, "Caption", M, {"image": png}, name="image_data_uri"),
            format_case(
                ad,
                "Caption",
                M,
                {"image": cat},
                name="image_https_url",
                note="dspy.Image('https://example.com/cat.jpg'): "
                "the URL is kept as is, never downloaded",
            ),
            format_case(ad, "CompareImages", M, {"images": [png, cat]}, name="image_list"),
            format_case(
                ad,
                "DescribePerson",
                M,
                {"person": person},
                name="image_in_pydantic_model",
                note="Person(name='Ada Lovelace', photo=dspy.Image('https://example.com/ada.jpg'))",
            ),
            format_case(
                ad,
                "VisualQA",
                M,
                {"image": png, "question": "What colour is the pixel?"},
                name="image_plus_str",
            ),
            format_case(
                ad,
                "Caption",
                M,
                {"image": png},
                demos=[{"image": dog, "caption": "A dog on a sofa."}],
                name="image_demo",
            ),
            format_case(
                ad,
                "ImageChat",
                M,
                {"question": "And this one?", "image": cat, "history": history},
                name="image_in_history",
            ),
            format_case(
                ad,
                "Transcribe",
                M,
                {"audio": audio},
                name="audio_wav",
                note="dspy.Audio(data=<base64 of a 60-byte WAV built with the wave module>, "
                "audio_format='wav')",
            ),
            format_case(
                ad,
                "Summarize",
                M,
                {"document": pdf},
                name="file_from_bytes",
                note="dspy.File.from_bytes(PDF_BYTES, filename='report.pdf'): "
                "mime_type defaults to application/octet-stream",
            ),
            format_case(
                ad,
                "Summarize",
                M,
                {"document": pdf_typed},
                name="file_from_bytes_pdf_mime",
                note="dspy.File.from_bytes(PDF_BYTES, filename='report.pdf', "
                "mime_type='application/pdf')",
            ),
            format_case(
                ad,
                "Summarize",
                M,
                {"document": uploaded},
                name="file_from_file_id",
                note="dspy.File.from_file_id('file-abc123')",
            ),
        ]

    finetune = []
    for ad in ADAPTERS:
        entry: dict[str, Any] = {
            "adapter": ad,
            "signature": "Caption",
            "inputs": describe({"image": png}),
            "demos": describe([{"image": dog, "caption": "A dog on a sofa."}]),
            "outputs": {"caption": "A single pixel."},
        }
        try:
            entry["result"] = ADAPTERS[ad]().format_finetune_data(
                M["Caption"],
                [{"image": dog, "caption": "A dog on a sofa."}],
                {"image": png},
                {"caption": "A single pixel."},
            )
        except Exception as exc:
            entry.update(error_of(exc))
        finetune.append(entry)

    construction = []
    for label, build in [
        ("dspy.Image('https://example.com/cat.jpg')", lambda: dspy.Image(CAT_URL)),
        ("dspy.Image(url='https://example.com/cat.jpg')", lambda: dspy.Image(url=CAT_URL)),
        (
            "dspy.Image('https://example.com/cat.jpg', download=False)",
            lambda: dspy.Image(CAT_URL, download=False),
        ),
        (
            "dspy.Image(url='https://example.com/cat.jpg', download=False)",
            lambda: dspy.Image(url=CAT_URL, download=False),
        ),
        ("dspy.Image('cat.jpg')", lambda: dspy.Image("cat.jpg")),
        (
            "dspy.Audio('data:audio/wav;base64,' + WAV_B64)",
            lambda: dspy.Audio("data:audio/wav;base64," + WAV_B64),
        ),
        ("dspy.Audio(WAV_BYTES)", lambda: dspy.Audio(tiny_wav())),
        ("dspy.File(PDF_BYTES)", lambda: dspy.File(PDF_BYTES)),
        ("dspy.File('report.pdf')", lambda: dspy.File("report.pdf")),
    ]:
        entry = {"construct": label}
        try:
            value = build()
            entry["value"] = describe(value)
            entry["format"] = value.format()
        except Exception as exc:
            entry.update(error_of(exc))
        construction.append(entry)

    return {
        "dspy_version": dspy.__version__,
        "title": "dspy.Image / dspy.Audio / dspy.File inputs become OpenAI content parts "
        "in user messages (final request, demos, history), for ChatAdapter and JSONAdapter",
        "notes": MEDIA_NOTES,
        "signature_source": MEDIA_SOURCE,
        "media_data": {
            "PNG_URI": PNG_URI,
            "WAV_BYTES_base64": WAV_B64,
            "PDF_BYTES_base64": base64.b64encode(PDF_BYTES).decode("ascii"),
        },
        "cases": cases,
        "finetune": finetune,
        "construction": construction,
    }


MEDIA_NOTES = (
    "1. Every dspy.Type value (Image, Audio, File) is first rendered as a marker "
    "<<CUSTOM-TYPE-START-IDENTIFIER>>[parts JSON]<<CUSTOM-TYPE-END-IDENTIFIER>> inside the field "
    "text; after assembly, every message with role 'user' whose content is a str containing a "
    "marker becomes a list of content parts: the text before the marker as {'type': 'text', "
    "'text': ...}, then the type's parts, then the remaining text. Text parts are not stripped "
    "(the part before an image ends in '[[ ## image ## ]]\\n'; the part after starts with "
    "'\\n\\n'). A marker at the very end of a message (a demo whose last input is the image) "
    "leaves no empty text part after it. System and assistant messages are never split; user "
    "messages without a marker stay plain strings. 2. Part shapes: Image -> {'type': "
    "'image_url', 'image_url': {'url': <https URL or data URI as given>}}; Audio -> {'type': "
    "'input_audio', 'input_audio': {'data': <raw base64, not a data URI>, 'format': 'wav'}}; "
    "File -> {'type': 'file', 'file': {...}} with only the non-null keys among file_data, "
    "file_id, filename, in that order. 3. list[dspy.Image]: the list is dumped to JSON first, so "
    "the JSON punctuation around each element stays as text: '[[ ## images ## ]]\\n[\"', image, "
    "'\", \"', image, '\"]\\n\\nRespond ...'. An Image inside a pydantic model likewise: '[[ ## "
    'person ## ]]\\n{"name": "Ada Lovelace", "photo": "\', image, \'"}\\n\\nRespond ...\' '
    "(the marker JSON, escaped inside the dumped JSON string, is un-escaped back into parts). 4. "
    "Demos: a complete demo's user message is split into parts exactly like the final request "
    "and has no 'Respond with ...' reminder; the demo's assistant message stays a plain string. "
    "History: each earlier turn's user message is split the same way and DOES end with the "
    "reminder (DSPy passes main_request=True for a turn that has any input field); its assistant "
    "message is a plain string. The History field itself is still listed in the system message "
    "(known DSPy quirk). 5. JSONAdapter formats user messages (final request, demos, history) "
    "with the same '[[ ## field ## ]]' sections as ChatAdapter, so its content parts are "
    "identical apart from the reminder text ('Respond with a JSON object in the following order "
    "of fields: `caption`.'); only the system message and assistant messages (indented JSON) "
    "differ. 6. System message type names: Image, list[Image], Person, Audio, File, History; no "
    "'Type description' line (their description() is empty). A pydantic input shows only its "
    "class name, never its schema. 7. ChatAdapter.format_finetune_data returns {'messages': "
    "format(signature, demos, inputs) + [{'role': 'assistant', 'content': <outputs "
    "formatted>}]}: user messages are content-part lists, the final assistant message a string. "
    "JSONAdapter.format_finetune_data raises NotImplementedError (empty message). 8. "
    "Construction never downloads: dspy.Image(url_string) and dspy.Image(url=url_string) keep "
    "the https URL as is. dspy.Image(url=..., download=False) raises TypeError (download/verify "
    "are accepted only with a positional source); dspy.Image(url_string, download=False) works, "
    "with a DeprecationWarning. A bare relative path raises ValueError (use Image.from_path). "
    "File.from_bytes defaults mime_type to application/octet-stream even for PDF bytes; "
    "dspy.File(bytes) gives file_data only (no filename); dspy.File('report.pdf') raises "
    "ValueError. See `construction`."
)


# --------------------------------------------------------------------------------------------
# golden_tools.json
# --------------------------------------------------------------------------------------------


def tools() -> dict[str, Any]:
    weather = dspy.Tool(T["get_weather"])
    flights = dspy.Tool(T["search_flights"])
    fetch = dspy.Tool(T["fetch_url"])
    add = dspy.Tool(T["add"])
    tool_list = [weather, flights]

    tool_definitions = []
    for tool in (weather, flights, fetch, add):
        tool_definitions.append(
            {
                "tool": f"Tool({tool.name})",
                "name": tool.name,
                "desc": tool.desc,
                "str": str(tool),
                "args": copy.deepcopy(tool.args),
                "arg_types": {k: repr(v) for k, v in (tool.arg_types or {}).items()},
                "has_kwargs": tool.has_kwargs,
                "litellm_function_call": tool.format_as_litellm_function_call(),
            }
        )

    q1 = "What is the weather in Paris?"
    inputs_pick = {"question": q1, "tools": tool_list}
    inputs_answer = {
        "question": "Find flights from Paris to Rome and tell me the weather in Rome.",
        "tools": tool_list,
    }

    cases: list[dict[str, Any]] = []
    # Native function calling off: adapter.format (what a full call sends; the system prompt
    # keeps `tools`).
    for ad in ADAPTERS:
        cases.append(
            format_case(
                ad,
                "PickTool",
                T,
                inputs_pick,
                name="format_native_off",
                use_native_function_calling=False,
            )
        )
        cases.append(
            format_case(
                ad,
                "PickToolAndAnswer",
                T,
                inputs_answer,
                name="format_native_off_with_answer",
                use_native_function_calling=False,
            )
        )

    model = "openai/gpt-4o-mini"
    calls_paris = [openai_tool_call("call_weather_1", "get_weather", {"city": "Paris"})]
    calls_two = [
        openai_tool_call(
            "call_flights_1",
            "search_flights",
            {
                "origin": {"city": "Paris", "country": "FR"},
                "destination": {"city": "Rome", "country": "IT"},
            },
        ),
        openai_tool_call("call_weather_2", "get_weather", {"city": "Rome", "unit": "C"}),
    ]
    for ad in ADAPTERS:
        text_answer = (
            "[[ ## answer ## ]]\nLet me look that up.\n\n[[ ## completed ## ]]"
            if ad == "ChatAdapter"
            else '{"answer": "Let me look that up."}'
        )
        cases.append(
            predict_case(
                ad,
                "PickTool",
                T,
                model,
                inputs_pick,
                [chat_response(model, None, calls_paris)],
                name="native_on_tool_calls",
                use_native_function_calling=True,
            )
        )
        cases.append(
            predict_case(
                ad,
                "PickToolAndAnswer",
                T,
                model,
                inputs_answer,
                [chat_response(model, None, calls_two)],
                name="native_on_tool_calls_content_none",
                use_native_function_calling=True,
                note="the provider returns tool calls and content None: "
                "the other outputs are not parsed",
            )
        )
        cases.append(
            predict_case(
                ad,
                "PickToolAndAnswer",
                T,
                model,
                inputs_answer,
                [chat_response(model, text_answer, calls_two)],
                name="native_on_tool_calls_with_text",
                use_native_function_calling=True,
            )
        )
        cases.append(
            predict_case(
                ad,
                "PickToolAndAnswer",
                T,
                model,
                inputs_answer,
                [chat_response(model, "I will check the flights and the weather.", calls_two)],
                name="native_on_tool_calls_with_unparseable_text",
                use_native_function_calling=True,
                note="content that is not in the adapter's format, next to tool calls",
            )
        )
        cases.append(
            predict_case(
                ad,
                "PickToolAndAnswer",
                T,
                model,
                inputs_answer,
                [chat_response(model, text_answer, calls_two)],
                name="native_on_parallel_tool_calls",
                use_native_function_calling=True,
                parallel_tool_calls=False,
            )
        )
        off_text = (
            '[[ ## calls ## ]]\n{"tool_calls": [{"name": "get_weather", '
            '"args": {"city": "Rome"}}]}\n\n'
            "[[ ## answer ## ]]\nChecking.\n\n[[ ## completed ## ]]"
            if ad == "ChatAdapter"
            else '{"calls": {"tool_calls": [{"name": "get_weather", "args": {"city": "Rome"}}]}, '
            '"answer": "Checking."}'
        )
        cases.append(
            predict_case(
                ad,
                "PickToolAndAnswer",
                T,
                model,
                inputs_answer,
                [chat_response(model, off_text)],
                name="native_off_full_call",
                use_native_function_calling=False,
            )
        )
    # A model without function calling: native on is requested but not possible.
    cases.append(
        predict_case(
            "ChatAdapter",
            "PickTool",
            T,
            "openai/gpt-3.5-turbo-instruct",
            inputs_pick,
            [
                chat_response(
                    "openai/gpt-3.5-turbo-instruct",
                    '[[ ## calls ## ]]\n{"tool_calls": [{"name": "get_weather", '
                    '"args": {"city": "Paris"}}]}'
                    "\n\n[[ ## completed ## ]]",
                )
            ],
            name="native_on_model_without_function_calling",
            use_native_function_calling=True,
        )
    )

    # Tool calls and their results in conversation history.
    turn_with_results = {
        "question": "Weather in Paris and Tokyo?",
        "calls": dspy.ToolCalls.model_validate(
            {
                "tool_calls": [
                    {"id": "call_1", "name": "get_weather", "args": {"city": "Paris"}},
                    {"id": "call_2", "name": "get_weather", "args": {"city": "Tokyo", "unit": "F"}},
                ],
                "tool_call_results": [
                    {"call_id": "call_1", "name": "get_weather", "value": "sunny"},
                    {
                        "call_id": "call_2",
                        "name": "get_weather",
                        "value": {"sky": "rain", "temp": 61},
                    },
                ],
            }
        ),
    }
    turn_with_answer = {
        "question": "And in Rome?",
        "calls": dspy.ToolCalls.model_validate(
            {
                "tool_calls": [{"id": "call_3", "name": "get_weather", "args": {"city": "Rome"}}],
                "tool_call_results": [
                    {"call_id": "call_3", "name": "get_weather", "value": "windy"}
                ],
            }
        ),
        "answer": "It is windy in Rome.",
    }
    history = dspy.History(messages=[turn_with_results, turn_with_answer])
    hist_inputs = {
        "question": "Should I pack an umbrella for Tokyo?",
        "tools": [weather],
        "history": history,
    }

    turn_no_results = {
        "question": "Weather in Oslo?",
        "calls": dspy.ToolCalls.model_validate(
            {"tool_calls": [{"id": "call_9", "name": "get_weather", "args": {"city": "Oslo"}}]}
        ),
    }
    turn_no_ids = {
        "question": "Weather in Lima?",
        "calls": dspy.ToolCalls.model_validate(
            {
                "tool_calls": [{"name": "get_weather", "args": {"city": "Lima"}}],
                "tool_call_results": [{"name": "get_weather", "value": "mild"}],
            }
        ),
        "answer": "Mild.",
    }
    odd_history = dspy.History(messages=[turn_no_results, turn_no_ids])
    odd_inputs = {"question": "Thanks.", "tools": [weather], "history": odd_history}

    for ad in ADAPTERS:
        cases.append(
            format_case(
                ad,
                "ToolChat",
                T,
                hist_inputs,
                name="history_tool_results_native_off",
                use_native_function_calling=False,
            )
        )
        final_text = (
            "[[ ## answer ## ]]\nYes, it is raining in Tokyo.\n\n[[ ## completed ## ]]"
            if ad == "ChatAdapter"
            else '{"answer": "Yes, it is raining in Tokyo."}'
        )
        cases.append(
            predict_case(
                ad,
                "ToolChat",
                T,
                model,
                hist_inputs,
                [chat_response(model, final_text)],
                name="history_tool_results_native_on",
                use_native_function_calling=True,
            )
        )
        cases.append(
            format_case(
                ad,
                "ToolChat",
                T,
                odd_inputs,
                name="history_calls_without_results_or_ids_native_off",
                use_native_function_calling=False,
            )
        )
        cases.append(
            predict_case(
                ad,
                "ToolChat",
                T,
                model,
                odd_inputs,
                [chat_response(model, final_text)],
                name="history_calls_without_results_or_ids_native_on",
                use_native_function_calling=True,
            )
        )

    obj = {"tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]}
    bare = [
        {"name": "get_weather", "args": {"city": "Paris"}},
        {"name": "get_weather", "args": {"city": "Rome"}},
    ]
    single = {"name": "get_weather", "args": {"city": "Paris"}}
    provider = [
        {
            "id": "call_7",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ]
    arguments_key = {"tool_calls": [{"name": "get_weather", "arguments": '{"city": "Paris"}'}]}
    parse_examples = []
    for label, value in [
        ("JSON object with tool_calls", obj),
        ("bare list of calls", bare),
        ("single call object", single),
        ("OpenAI provider-shaped list (id, function.arguments as a JSON string)", provider),
        ("'arguments' (JSON string) instead of 'args'", arguments_key),
    ]:
        text = json.dumps(value)
        parse_examples.append(
            parse_case(
                "ChatAdapter",
                "PickTool",
                T,
                f"[[ ## calls ## ]]\n{text}\n\n[[ ## completed ## ]]",
                label,
            )
        )
        parse_examples.append(
            parse_case("JSONAdapter", "PickTool", T, json.dumps({"calls": value}), label)
        )
    parse_examples += [
        parse_case(
            "ChatAdapter",
            "PickTool",
            T,
            "[[ ## calls ## ]]\nget_weather(city='Paris')\n\n[[ ## completed ## ]]",
            "malformed: a Python call",
        ),
        parse_case(
            "ChatAdapter",
            "PickTool",
            T,
            '[[ ## calls ## ]]\n{"tool_calls": [{"args": {"city": "Paris"}}]}'
            "\n\n[[ ## completed ## ]]",
            "malformed: call without name",
        ),
        parse_case(
            "ChatAdapter",
            "PickTool",
            T,
            '[[ ## calls ## ]]\n{"calls": []}\n\n[[ ## completed ## ]]',
            "malformed: object without tool_calls",
        ),
        parse_case(
            "ChatAdapter",
            "PickTool",
            T,
            '[[ ## calls ## ]]\n{"tool_calls": []}\n\n[[ ## completed ## ]]',
            "empty tool_calls list",
        ),
        parse_case(
            "JSONAdapter",
            "PickTool",
            T,
            '{"calls": "get_weather(city=\'Paris\')"}',
            "malformed: a string",
        ),
        parse_case(
            "JSONAdapter",
            "PickTool",
            T,
            '{"calls": {"tool_calls": [{"args": {}}]}}',
            "malformed: call without name",
        ),
        parse_case(
            "ChatAdapter",
            "PickToolAndAnswer",
            T,
            '[[ ## calls ## ]]\n[{"name": "get_weather", "args": {"city": "Rome"}}]\n\n'
            "[[ ## answer ## ]]\nChecking.\n\n[[ ## completed ## ]]",
            "calls plus another output",
        ),
        parse_case(
            "JSONAdapter",
            "PickToolAndAnswer",
            T,
            '{"calls": [{"name": "get_weather", "args": {"city": "Rome"}}], "answer": "Checking."}',
            "calls plus another output",
        ),
    ]

    return {
        "dspy_version": dspy.__version__,
        "title": "dspy.Tool rendering, list[dspy.Tool] -> dspy.ToolCalls with native function "
        "calling off (text) and on (provider tools), tool calls and results in dspy.History, "
        "and ToolCalls parsing",
        "notes": TOOLS_NOTES,
        "signature_source": TOOLS_SOURCE,
        "tool_definitions": tool_definitions,
        "cases": cases,
        "parse_examples": parse_examples,
    }


TOOLS_NOTES = (
    "1. str(Tool) = f'{name}, whose description is <desc>{desc}</desc>. It takes arguments "
    "{args}.' where desc is the function's WHOLE __doc__ as written (not cleandoc'ed: "
    "continuation lines keep their indentation) with every '\\n' replaced by two spaces, and "
    "args is the Python repr of tool.args (single quotes, None, True, 10.0). With no docstring "
    "desc is None and the text is '{name}. It takes arguments {args}.'. A Google 'Args:' section "
    "is NOT parsed: argument descriptions stay only in desc, and tool.args carries no "
    "'description' for them. 2. tool.args[param] = pydantic's JSON schema of the annotation "
    "(TypeAdapter(T).json_schema(), or Model.model_json_schema() for a BaseModel) with every "
    "$ref inlined and $defs dropped; keys keep pydantic's order (for a model: description, "
    "properties, required, title, type; titles kept; an Optional nested model is anyOf [inlined "
    "model, {'type': 'null'}] followed by 'default': None), then 'default' is appended when the "
    "parameter has one. The 'return' annotation is skipped. An async function renders like a "
    "sync one. 3. format_as_litellm_function_call() = {'type': 'function', 'function': {'name', "
    "'description': the raw __doc__ (newlines kept; null without a docstring), 'parameters': "
    "{'type': 'object', 'properties': tool.args, 'required': [params whose schema has no "
    "'default' key]}}}. 4. Native function calling OFF (and adapter.format in every mode): the "
    "tools field is an ordinary input: system line '2. `tools` (list[Tool]):', value = JSON "
    "array (json.dumps, ensure_ascii=False) of the str(Tool) strings. The calls field gets the "
    "ToolCalls type description and the JSON-schema hint; the reminder says '(must be a JSON "
    'object like {"tool_calls": [{"name": "...", "args": {...}}]})\'. JSONAdapter.format '
    "does NOT drop the tools field either; its constructor default is "
    "use_native_function_calling=True (ChatAdapter's is False), but the fields are removed only "
    "inside a full call (adapter.__call__). A JSONAdapter full call with native OFF and a "
    "ToolCalls output sends response_format={'type': 'json_object'}. 5. Native ON (full call, "
    "LM.supports_function_calling True): the list[Tool] input and the ToolCalls output are "
    "deleted from the signature before formatting; the LM gets "
    "tools=[tool.format_as_litellm_function_call() for each tool]. No tool_choice is sent, "
    "unless the adapter has parallel_tool_calls set: then parallel_tool_calls=<bool> and "
    "tool_choice='auto' are added. With ToolCalls as the only output the prompt degenerates: "
    "ChatAdapter system 'Your output fields are:\\n' + '\\nAll interactions ...', an empty "
    "output section ('{question}\\n\\n\\n\\n[[ ## completed ## ]]'), reminder '... starting with "
    "the field , and then ending with the marker ...'; JSONAdapter skeleton '{}' and reminder "
    "'Respond with a JSON object in the following order of fields: .'. JSONAdapter also sends "
    "response_format = pydantic model DSPyProgramOutputs of the outputs minus the ToolCalls "
    "field (recorded as its JSON schema; with no other output its properties are {} and required "
    "[]). 6. Native response -> Prediction: each provider tool call becomes ToolCall(id=<call "
    "id>, name=function.name, args=json_repair.loads(function.arguments)); Prediction.calls is "
    "ToolCalls with those ids. Content None: nothing is parsed, every other output is None (no "
    "error, no JSONAdapter fallback). Content plus tool calls: the content is parsed with the "
    "reduced signature; if that parse fails the error is swallowed and the other outputs are "
    "None. A text-only response (no tool calls) gives calls=None. Output key order in the "
    "Prediction: the parsed outputs first, the ToolCalls field last. 7. A model whose litellm "
    "metadata lacks function calling: native ON silently uses the text protocol (fields kept; "
    "tools/tool_choice/parallel_tool_calls removed from the LM kwargs). 8. History with tool "
    "calls: a turn holds a ToolCalls value (or a dict with 'tool_calls') under the output field "
    "name, with 'tool_call_results' = a list of {call_id, name, value, is_error (default false)} "
    "paired with the calls by position. Native OFF: user turn (with the reminder); assistant "
    "turn with the outputs, calls rendered WITHOUT ids and without results, a missing output "
    "rendered as 'None' (ChatAdapter) / null (JSONAdapter); then, when results exist, an extra "
    "USER message '[[ ## tool_call_results ## ]]\\n' + json.dumps({\"tool_call_results\": "
    '[{"call_id", "name", "value", "is_error"}]}) (call_id null when missing). Native '
    "ON: user turn (with the reminder for the reduced signature); then {'role': 'assistant', "
    "'content': <the turn's other outputs formatted, or None when it has none>, 'tool_calls': "
    "[{'id', 'type': 'function', 'function': {'name', 'arguments': json.dumps(args, "
    "ensure_ascii=False)}}]}; then one {'role': 'tool', 'tool_call_id', 'name', 'content'} per "
    "result (a str value as is, any other value json.dumps'ed). A turn's answer shares the "
    "assistant message with its tool_calls, BEFORE the tool results. Native ON with no results, "
    "or with a missing id anywhere: the tool calls are dropped; the assistant message carries "
    "only the other outputs, and is omitted entirely when there are none (two user messages in a "
    "row). 9. Text parsing of ToolCalls accepts {'tool_calls': [...]}, a bare list of calls, a "
    "single {name, args} object, provider-shaped items {'id', 'function': {'name', 'arguments': "
    "<JSON string>}} and 'arguments' (JSON string) instead of 'args'; {'tool_calls': []} parses "
    "to an empty ToolCalls. Parsed calls have id None unless the item carries 'id'/'call_id'. "
    "ToolCalls' own serializer (model_dump, and the adapters' rendering) drops ids; the ids "
    "recorded here are read from ToolCall.id."
)


# --------------------------------------------------------------------------------------------
# golden_reasoning.json
# --------------------------------------------------------------------------------------------


def reasoning() -> dict[str, Any]:
    inputs = {"question": "What is 2 + 2?"}
    demos = [{"question": "What is 1 + 1?", "reasoning": "One plus one makes two.", "answer": 2}]
    cases: list[dict[str, Any]] = []
    for ad in ADAPTERS:
        cases.append(format_case(ad, "MathQA", R, inputs, name="format"))
        cases.append(format_case(ad, "MathQA", R, inputs, demos=demos, name="format_with_demo"))

    chat_text = "[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]"
    json_text = '{"answer": 4}'
    full_chat = (
        "[[ ## reasoning ## ]]\nTwo plus two makes four.\n\n"
        "[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]"
    )
    full_json = '{"reasoning": "Two plus two makes four.", "answer": 4}'
    for ad in ADAPTERS:
        text = chat_text if ad == "ChatAdapter" else json_text
        full = full_chat if ad == "ChatAdapter" else full_json
        cases.append(
            predict_case(
                ad,
                "MathQA",
                R,
                "openai/gpt-4o-mini",
                inputs,
                [chat_response("openai/gpt-4o-mini", full)],
                name="model_without_reasoning",
            )
        )
        cases.append(
            predict_case(
                ad,
                "MathQA",
                R,
                "openai/o3-mini",
                inputs,
                [chat_response("openai/o3-mini", text, reasoning_content="2 + 2 = 4.")],
                demos=demos,
                name="native_reasoning_default_effort",
            )
        )
        cases.append(
            predict_case(
                ad,
                "MathQA",
                R,
                "openai/o3-mini",
                inputs,
                [chat_response("openai/o3-mini", text, reasoning_content="2 + 2 = 4.")],
                name="native_reasoning_lm_effort_high",
                lm_kwargs={"reasoning_effort": "high"},
            )
        )
        cases.append(
            predict_case(
                ad,
                "MathQA",
                R,
                "openai/o3-mini",
                inputs,
                [chat_response("openai/o3-mini", full)],
                name="native_reasoning_disabled_by_none",
                call_kwargs={"reasoning_effort": None},
            )
        )
        cases.append(
            predict_case(
                ad,
                "MathQA",
                R,
                "openai/o3-mini",
                inputs,
                [chat_response("openai/o3-mini", text)],
                name="native_reasoning_response_without_reasoning_content",
            )
        )

    parse_examples = [
        parse_case("ChatAdapter", "MathQA", R, full_chat),
        parse_case("JSONAdapter", "MathQA", R, full_json),
        parse_case("ChatAdapter", "MathQA", R, chat_text, "reasoning section missing"),
        parse_case("JSONAdapter", "MathQA", R, json_text, "reasoning key missing"),
        parse_case(
            "JSONAdapter",
            "MathQA",
            R,
            '{"reasoning": {"content": "Four."}, "answer": 4}',
            "reasoning given as an object with content",
        ),
        parse_case(
            "JSONAdapter",
            "MathQA",
            R,
            '{"reasoning": 42, "answer": 4}',
            "reasoning given as a number",
        ),
    ]

    return {
        "dspy_version": dspy.__version__,
        "title": "dspy.Reasoning output field: text field when native reasoning is off, "
        "deleted from the prompt and filled from reasoning_content when the LM supports reasoning",
        "notes": REASONING_NOTES,
        "signature_source": REASONING_SOURCE,
        "cases": cases,
        "parse_examples": parse_examples,
    }


REASONING_NOTES = (
    "1. Without native reasoning (adapter.format, or a full call whose LM does not support "
    "reasoning, or reasoning_effort=None) a Reasoning output is an ordinary text field: the "
    "system message shows its type as 'str', the structure has no type hint for it, "
    'JSONAdapter\'s skeleton shows \'"reasoning": "{reasoning}"\'. But the reminder treats it '
    "as non-str: '`[[ ## reasoning ## ]]` (must be formatted as a valid Python str)' "
    "(ChatAdapter) / '`reasoning` (must be formatted as a valid Python str)' (JSONAdapter), "
    "because the annotation is not `str` while its display name is 'str'. 2. Parsing: the text "
    "becomes dspy.Reasoning(content=text) (parsed_types 'Reasoning'); JSONAdapter also accepts "
    "{'content': ...}; a non-string value is a parse error; a missing reasoning field is a parse "
    "error (Reasoning is required). 3. Native: Reasoning is in the adapters' default "
    "native_response_types. In a full call DSPy takes reasoning_effort from the call's "
    "lm_kwargs, else lm.kwargs, else 'low'. If that is None or lm.supports_reasoning is False "
    "nothing changes (an explicit None is still forwarded to the LM as reasoning_effort=None). "
    "Otherwise the LM gets reasoning_effort=<value> and the reasoning field is deleted from the "
    "signature: gone from the system message, the reminder, the JSON skeleton and the demos (a "
    "demo's reasoning value is not shown). In the source, GPT-5 models on the chat API are "
    "excluded by name. 4. The Prediction's reasoning is "
    "Reasoning(content=message.reasoning_content); with no reasoning_content it is None, not an "
    "error. Prediction key order: parsed outputs first, reasoning last. 5. JSONAdapter builds "
    "response_format from the ORIGINAL signature, before the reasoning field is deleted, and the "
    "Reasoning annotation there is a pydantic object: the schema requires 'reasoning' as "
    "{'$ref': '#/$defs/Reasoning'} = an object {content: string} (with Reasoning's docstring as "
    "description), both for models without native reasoning (where the prompt asks for a string) "
    "and for reasoning models (where the prompt no longer asks for it at all). 6. litellm's "
    "offline metadata here: openai/o3-mini supports reasoning and function calling; "
    "openai/gpt-4o-mini function calling only; anthropic/claude-3-7-sonnet-20250219 reports "
    "neither, so it is not used."
)


def main() -> int:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    write("golden_media.json", media())
    write("golden_tools.json", tools())
    write("golden_reasoning.json", reasoning())
    return 0


if __name__ == "__main__":
    sys.exit(main())
