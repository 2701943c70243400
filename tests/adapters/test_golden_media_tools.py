"""Golden tests for media, tools and reasoning: structio's messages equal DSPy 3.4.1's.

The golden files (tests/golden/dspy-3.4.1/golden_media.json, golden_tools.json,
golden_reasoning.json) were recorded by benchmarks/golden_media_tools.py. Each case is
rebuilt here with structio's types and compared message for message. Where structio
deliberately differs (tests/golden/README.md lists why), the DSPy messages are fixed by a
function below that changes only what the README names, and a test checks that each fix
changes something.
"""

from __future__ import annotations

import ast
import base64
import copy
import json
import types
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

import structio as sio
from structio.lm.types import Completion, LMResponse

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "dspy-3.4.1"


def load(name: str) -> dict[str, Any]:
    return json.loads((GOLDEN / name).read_text(encoding="utf-8"))


MEDIA = load("golden_media.json")
TOOLS = load("golden_tools.json")
REASONING = load("golden_reasoning.json")


def namespace(data: dict[str, Any]) -> dict[str, Any]:
    """The golden file's DSPy source run with structio in DSPy's place."""
    dspy = types.SimpleNamespace(
        Signature=sio.Signature,
        InputField=sio.InputField,
        OutputField=sio.OutputField,
        Image=sio.Image,
        Audio=sio.Audio,
        File=sio.File,
        History=sio.History,
        Tool=sio.Tool,
        ToolCalls=sio.ToolCalls,
        Reasoning=sio.Reasoning,
    )
    names: dict[str, Any] = {"dspy": dspy, "BaseModel": BaseModel, "Field": Field}
    names["__name__"] = "golden_source"
    # Compiled without this module's `from __future__ import annotations`: pydantic reads
    # the annotations in the source's own namespace, as DSPy did.
    code = compile(data["signature_source"], "golden_source", "exec", dont_inherit=True)
    exec(code, names)  # noqa: S102 - the repository's own golden file
    return names


MEDIA_NS = namespace(MEDIA)
TOOLS_NS = namespace(TOOLS)
REASONING_NS = namespace(REASONING)


def as_compiled_here(data: Any, ns: dict[str, Any]) -> Any:
    """Golden data with each function's docstring as this Python compiles it.

    The goldens were recorded on Python 3.11; Python 3.13 strips a docstring's indentation
    when it compiles it, and DSPy (like structio) shows a tool's docstring as the running
    Python gives it. Each docstring as written (read from the source) is replaced by the
    compiled one, also in its one-line form (newlines as two spaces).
    """
    pairs: list[tuple[str, str]] = []
    for node in ast.walk(ast.parse(data["signature_source"])):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            written = ast.get_docstring(node, clean=False)
            compiled = getattr(ns.get(node.name), "__doc__", None)
            if written and compiled is not None and written != compiled:
                pairs.append((written, compiled))
                pairs.append((written.replace("\n", "  "), compiled.replace("\n", "  ")))

    def fixed(value: Any) -> Any:
        if isinstance(value, str):
            for written, compiled in pairs:
                value = value.replace(written, compiled)
            return value
        if isinstance(value, dict):
            return {key: fixed(item) for key, item in value.items()}
        if isinstance(value, list):
            return [fixed(item) for item in value]
        return value

    return fixed(data) if pairs else data


TOOLS = as_compiled_here(TOOLS, TOOLS_NS)


def tool_value(ns: dict[str, Any], text: str) -> sio.Tool:
    assert text.startswith("Tool("), text
    assert text.endswith(")"), text
    return sio.Tool(ns[text[5:-1]])


def media_inputs(values: dict[str, Any]) -> dict[str, Any]:
    """A golden case's inputs with DSPy's media written back as structio values."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict) and "audio_base64" in value:
            data = base64.b64decode(value["audio_base64"])
            out[key] = sio.Audio(data, mime_type=f"audio/{value['format']}")
        elif isinstance(value, dict) and ("file_data" in value or "file_id" in value):
            out[key] = sio.File(value)
        elif key == "person":
            out[key] = MEDIA_NS["Person"](**value)
        elif key == "history":
            out[key] = sio.History(value["messages"])
        else:
            out[key] = value  # image URLs and data URIs: the adapter makes them Images
    return out


def tool_inputs(values: dict[str, Any]) -> dict[str, Any]:
    out = dict(values)
    if "tools" in out:
        out["tools"] = [tool_value(TOOLS_NS, t) for t in out["tools"]]
    if "history" in out:
        out["history"] = sio.History(out["history"]["messages"])
    return out


ADAPTERS = {"ChatAdapter": sio.ChatAdapter, "JSONAdapter": sio.JSONAdapter}


# -- the fixes structio makes (tests/golden/README.md) --------------------------------------


def drop_history_from_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fix 1: a History input is neither described in the system message nor a section."""
    fixed = copy.deepcopy(messages)
    system: str = fixed[0]["content"]
    head, rest = system.split("Your output fields are:", 1)
    lines = head.rstrip("\n").split("\n")
    kept = [lines[0]] + [line for line in lines[1:] if "(History)" not in line]
    renumbered = [kept[0]]
    for number, line in enumerate(kept[1:], 1):
        renumbered.append(f"{number}." + line.split(".", 1)[1])
    renumbered[-1] = renumbered[-1].rstrip()
    system = "\n".join(renumbered) + "\nYour output fields are:" + rest
    system = system.replace("[[ ## history ## ]]\n{history}\n\n", "")
    fixed[0]["content"] = system
    return fixed


def unpad_none(messages: list[dict[str, Any]], adapter: str) -> list[dict[str, Any]]:
    """Fix 3: a history turn's missing outputs are left out, not written as ``None``."""
    fixed = copy.deepcopy(messages)
    for message in fixed[1:-1]:
        content = message.get("content")
        if message["role"] != "assistant" or not isinstance(content, str):
            continue
        if adapter == "ChatAdapter":
            message["content"] = content.replace("\n\n[[ ## answer ## ]]\nNone", "")
        else:
            data = json.loads(content)
            kept = {k: v for k, v in data.items() if v is not None}
            message["content"] = json.dumps(kept, indent=2, ensure_ascii=False)
    return fixed


# -- media -------------------------------------------------------------------------------


MEDIA_CASES = [c for c in MEDIA["cases"] if "messages" in c]


@pytest.mark.parametrize(
    "case", MEDIA_CASES, ids=[f"{c['adapter']}-{c['name']}" for c in MEDIA_CASES]
)
def test_media_messages_match_dspy(case: dict[str, Any]) -> None:
    sig = MEDIA_NS[case["signature"]]
    adapter = ADAPTERS[case["adapter"]]()
    got = adapter.format(sig, case.get("demos") or [], media_inputs(case["inputs"]))
    expected = case["messages"]
    if "history" in case["inputs"]:
        expected = drop_history_from_system(expected)
    assert got == expected


def test_every_media_case_is_compared() -> None:
    # A case DSPy could not format would carry an error instead; none does today.
    assert len(MEDIA_CASES) == len(MEDIA["cases"]) == 22


def test_media_finetune_record_matches_dspy() -> None:
    chat = next(f for f in MEDIA["finetune"] if f["adapter"] == "ChatAdapter")
    sig = MEDIA_NS[chat["signature"]]
    record = sio.ChatAdapter().format_finetune_data(
        sig, chat["demos"], media_inputs(chat["inputs"]), chat["outputs"]
    )
    assert record == chat["result"]


def test_the_history_fix_changes_the_system_message() -> None:
    case = next(c for c in MEDIA_CASES if "history" in c["inputs"])
    fixed = drop_history_from_system(case["messages"])
    assert fixed[0] != case["messages"][0]
    assert fixed[1:] == case["messages"][1:]


# -- tools -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "definition", TOOLS["tool_definitions"], ids=[t["name"] for t in TOOLS["tool_definitions"]]
)
def test_tool_text_and_function_match_dspy(definition: dict[str, Any]) -> None:
    tool = tool_value(TOOLS_NS, definition["tool"])
    assert str(tool) == definition["str"]
    assert tool.args == definition["args"]
    assert json.dumps(tool.args) == json.dumps(definition["args"])  # key order too
    expected = copy.deepcopy(definition["litellm_function_call"])
    if expected["function"]["description"] is None:
        # Fix: a tool without a docstring has no description, rather than `null`.
        del expected["function"]["description"]
    assert json.dumps(tool.to_openai()) == json.dumps(expected)


TEXT_TOOL_CASES = [c for c in TOOLS["cases"] if "messages" in c]


@pytest.mark.parametrize(
    "case", TEXT_TOOL_CASES, ids=[f"{c['adapter']}-{c['name']}" for c in TEXT_TOOL_CASES]
)
def test_text_mode_tool_messages_match_dspy(case: dict[str, Any]) -> None:
    sig = TOOLS_NS[case["signature"]]
    adapter = ADAPTERS[case["adapter"]](native_tools=False)
    got = adapter.format(sig, [], tool_inputs(case["inputs"]))
    expected = case["messages"]
    if "history" in case["inputs"]:
        expected = unpad_none(drop_history_from_system(expected), case["adapter"])
    assert got == expected


class ScriptedLM(sio.BaseLM):
    """A model that answers with DSPy's scripted responses and records each request."""

    def __init__(self, capabilities: dict[str, Any], responses: list[dict[str, Any]]) -> None:
        profile = {
            "tools": capabilities.get("supports_function_calling", False),
            "reasoning": capabilities.get("supports_reasoning", False),
        }
        super().__init__(model="golden", profile=profile)
        self.responses = list(responses)
        self.requests: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []

    def _complete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> LMResponse:
        self.requests.append((messages, params))
        data = self.responses.pop(0)
        completions = tuple(
            Completion(
                text=choice["message"].get("content") or "",
                finish_reason=choice.get("finish_reason"),
                tool_calls=tuple(choice["message"]["tool_calls"])
                if choice["message"].get("tool_calls")
                else None,
                reasoning=choice["message"].get("reasoning_content"),
            )
            for choice in data["choices"]
        )
        return LMResponse(completions=completions, model="golden")


NATIVE_KEYS = ("tools", "tool_choice", "parallel_tool_calls", "reasoning_effort")
CALL_TOOL_CASES = [c for c in TOOLS["cases"] if "lm_requests" in c]


def expected_messages(case: dict[str, Any]) -> list[dict[str, Any]]:
    expected = case["lm_requests"][0]["messages"]
    if "history" in case["inputs"]:
        expected = drop_history_from_system(expected)
        if not case["use_native_function_calling"]:
            expected = unpad_none(expected, case["adapter"])
    return expected


@pytest.mark.parametrize(
    "case", CALL_TOOL_CASES, ids=[f"{c['adapter']}-{c['name']}" for c in CALL_TOOL_CASES]
)
def test_native_tool_calls_match_dspy(case: dict[str, Any]) -> None:
    sig = TOOLS_NS[case["signature"]]
    lm = ScriptedLM(case["lm_capabilities"], case["scripted_responses"])
    options: dict[str, Any] = {}
    if not case["use_native_function_calling"]:
        options["native_tools"] = False
    params = {}
    if "parallel_tool_calls" in case:
        params = {"parallel_tool_calls": case["parallel_tool_calls"], "tool_choice": "auto"}
    predict = sio.Predict(sig, lm=lm, adapter=ADAPTERS[case["adapter"]](**options), **params)
    pred = predict(**tool_inputs(case["inputs"]))
    messages, sent = lm.requests[0]
    assert messages == expected_messages(case)
    recorded = case["lm_requests"][0]["kwargs"]
    assert {k: sent[k] for k in NATIVE_KEYS if k in sent} == {
        k: recorded[k] for k in NATIVE_KEYS if k in recorded
    }
    expected = case["prediction"]
    for name, value in expected.items():
        got = pred[name]
        if isinstance(got, sio.ToolCalls):
            if value is None:
                # Fix: a reply without tool calls gives empty calls, not None.
                assert len(got) == 0
                continue
            # The calls keep their ids; their arguments are validated by the tool.
            assert [(c.id, c.name) for c in got] == [
                (c["id"], c["name"]) for c in value["tool_calls"]
            ]
            tools = {t.name: t for t in tool_inputs(case["inputs"])["tools"]}
            assert [c.args for c in got] == [
                tools[c["name"]].validate_args(c["args"]) for c in value["tool_calls"]
            ]
            continue
        assert got == value, name


TOOL_PARSES = TOOLS["parse_examples"]


@pytest.mark.parametrize(
    "example",
    TOOL_PARSES,
    ids=[f"{e['adapter']}-{e['note']}" for e in TOOL_PARSES],
)
def test_tool_calls_parse_as_dspy(example: dict[str, Any]) -> None:
    sig = TOOLS_NS[example["signature"]]
    adapter = ADAPTERS[example["adapter"]](native_tools=False)
    if "parsed" not in example:
        with pytest.raises(sio.ParseError):
            adapter.parse(sig, example["completion"])
        return
    values = adapter.parse(sig, example["completion"])
    got = {
        k: (
            {"tool_calls": [{"id": c.id, "name": c.name, "args": c.args} for c in v]}
            if isinstance(v, sio.ToolCalls)
            else v
        )
        for k, v in values.items()
    }
    assert got == example["parsed"]


# -- reasoning ---------------------------------------------------------------------------


REASONING_FORMATS = [c for c in REASONING["cases"] if "messages" in c]


@pytest.mark.parametrize(
    "case",
    REASONING_FORMATS,
    ids=[f"{c['adapter']}-{c['name']}" for c in REASONING_FORMATS],
)
def test_reasoning_as_text_matches_dspy(case: dict[str, Any]) -> None:
    sig = REASONING_NS[case["signature"]]
    adapter = ADAPTERS[case["adapter"]](native_reasoning=False)
    assert adapter.format(sig, case.get("demos") or [], case["inputs"]) == case["messages"]


REASONING_CALLS = [c for c in REASONING["cases"] if "lm_requests" in c]


@pytest.mark.parametrize(
    "case", REASONING_CALLS, ids=[f"{c['adapter']}-{c['name']}" for c in REASONING_CALLS]
)
def test_native_reasoning_matches_dspy(case: dict[str, Any]) -> None:
    sig = REASONING_NS[case["signature"]]
    lm = ScriptedLM(case["lm_capabilities"], case["scripted_responses"])
    lm.params = dict(case.get("lm_init_kwargs") or {})
    options: dict[str, Any] = {}
    config = case.get("call_config") or {}
    if "reasoning_effort" in config and config["reasoning_effort"] is None:
        options["native_reasoning"] = False  # structio's switch for what DSPy reads from None
    adapter = ADAPTERS[case["adapter"]](**options)
    predict = sio.Predict(sig, lm=lm, adapter=adapter, demos=case.get("demos") or [])
    pred = predict(**case["inputs"])
    messages, sent = lm.requests[0]
    assert messages == case["lm_requests"][0]["messages"]
    recorded = case["lm_requests"][0]["kwargs"]
    if options:
        recorded = {k: v for k, v in recorded.items() if k != "reasoning_effort"}
    assert {k: sent[k] for k in NATIVE_KEYS if k in sent} == {
        k: recorded[k] for k in NATIVE_KEYS if k in recorded and k not in lm.params
    }
    for name, value in case["prediction"].items():
        got = pred[name]
        if isinstance(value, dict) and "content" in value:
            value = value["content"]
        assert got == value, name
        if name == "reasoning" and value is not None:
            assert isinstance(got, sio.Reasoning)
