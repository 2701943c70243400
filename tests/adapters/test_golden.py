"""Golden tests: structio's prompts equal DSPy 3.4.1's byte for byte, and its parser returns
the same values wherever DSPy returns values (tests/golden/README.md lists the fixes)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import to_jsonable_python

import structio as sio
from tests.golden_signatures import BY_FILE, Clinic

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "dspy-3.4.1"
ADAPTERS: dict[str, sio.Adapter] = {
    "ChatAdapter": sio.ChatAdapter(),
    "JSONAdapter": sio.JSONAdapter(),
}
# Media, tools and reasoning are compared in test_golden_media_tools.py.
OUT_OF_SCOPE_FILES = {
    "golden_multimodal_tools.json",
    "golden_media.json",
    "golden_tools.json",
    "golden_reasoning.json",
}


def load(name: str) -> dict[str, Any]:
    return json.loads((GOLDEN / name).read_text(encoding="utf-8"))


def signature_for(file: str, case: dict[str, Any]) -> type[sio.Signature]:
    sigs = BY_FILE[file]
    return sigs[case.get("signature")] if None not in sigs else sigs[None]


def inputs_for(file: str, data: dict[str, Any]) -> dict[str, Any]:
    inputs = copy.deepcopy(data["inputs"])
    if file == "golden_extract_pydantic.json":
        inputs["clinic"] = Clinic(**inputs["clinic"])  # DSPy was given a model instance
    return inputs


def fix_history_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """DSPy's messages for golden_history.json with the three History fixes applied."""
    fixed = copy.deepcopy(messages)
    system = fixed[0]["content"]
    # Fix 1: the History input is not described in the system message, nor shown as a section.
    system = system.replace(
        "1. `question` (str): \n2. `history` (History):", "1. `question` (str):"
    )
    system = system.replace("[[ ## history ## ]]\n{history}\n\n", "")
    fixed[0]["content"] = system
    # Fix 2: a demo without `history` is complete, so it gets no "incomplete" prefix.
    prefix = (
        "This is an example of the task, though some input or output fields are not supplied.\n\n"
    )
    for message in fixed:
        if message["role"] == "user" and message["content"].startswith(prefix):
            message["content"] = message["content"][len(prefix) :]
    # Fix 3: the unanswered history turn gives only a user turn, not an assistant turn of None.
    return [
        m
        for m in fixed
        if not (
            m["role"] == "assistant"
            and m["content"]
            in ("[[ ## answer ## ]]\nNone\n\n[[ ## completed ## ]]\n", '{\n  "answer": null\n}')
        )
    ]


def format_cases() -> list[Any]:
    cases = []
    for path in sorted(GOLDEN.glob("golden_*.json")):
        if path.name in OUT_OF_SCOPE_FILES or path.name == "golden_parse.json":
            continue
        data = load(path.name)
        for index, case in enumerate(data["cases"]):
            if case["adapter"] in ADAPTERS:
                case_id = f"{path.stem}-{case['adapter']}-{case.get('signature', '')}-{index}"
                cases.append(pytest.param(path.name, index, id=case_id))
    return cases


FORMAT_CASES = format_cases()


def test_every_golden_file_is_covered() -> None:
    names = {p.name for p in GOLDEN.glob("golden_*.json")}
    assert names == set(BY_FILE) | OUT_OF_SCOPE_FILES
    # Chat/JSON cases: qa_context 3 + 1, classify 1 + 1, extract 1 + 1, history 2 + 1, demos 1 + 1.
    assert len(FORMAT_CASES) == 13


@pytest.mark.parametrize(("file", "index"), FORMAT_CASES)
def test_format_matches_dspy(file: str, index: int) -> None:
    data = load(file)
    case = data["cases"][index]
    signature = signature_for(file, case)
    demos = data["demos"] if case.get("note") != "no demos" else []
    messages = ADAPTERS[case["adapter"]].format(signature, demos, inputs_for(file, data))
    expected = case["messages"]
    if file == "golden_history.json":
        expected = fix_history_messages(expected)
    assert messages == expected


def test_history_fixes_change_only_what_the_readme_lists() -> None:
    case = load("golden_history.json")["cases"][0]
    fixed = fix_history_messages(case["messages"])
    assert len(case["messages"]) - len(fixed) == 1
    assert "history" not in fixed[0]["content"].split("In adhering")[0]
    # The two consecutive user turns: the unanswered question, then the new one.
    assert [m["role"] for m in fixed[-2:]] == ["user", "user"]


def test_finetune_data_matches_dspy() -> None:
    data = load("golden_demos.json")
    golden = data["format_finetune_data"]
    record = sio.ChatAdapter().format_finetune_data(
        BY_FILE["golden_demos.json"][None], data["demos"][:1], data["inputs"], golden["outputs"]
    )
    assert record == golden["ChatAdapter"]


def test_json_finetune_data_is_the_json_prompt_plus_the_json_target() -> None:
    data = load("golden_demos.json")
    sig = BY_FILE["golden_demos.json"][None]
    adapter = sio.JSONAdapter()
    outputs = data["format_finetune_data"]["outputs"]
    record = adapter.format_finetune_data(sig, data["demos"][:1], data["inputs"], outputs)
    assert record["messages"][:-1] == adapter.format(sig, data["demos"][:1], data["inputs"])
    assert record["messages"][-1] == {
        "role": "assistant",
        "content": '{\n  "sentiment": "positive",\n  "rationale": "quality outweighs delay"\n}',
    }
    assert adapter.parse(sig, record["messages"][-1]["content"]) == outputs


def parse_cases() -> list[Any]:
    cases = []
    for path in sorted(GOLDEN.glob("golden_*.json")):
        if path.name in OUT_OF_SCOPE_FILES:
            continue
        data = load(path.name)
        if path.name == "golden_parse.json":
            for adapter in ADAPTERS:
                for name, example in data[adapter].items():
                    cases.append(
                        pytest.param(
                            path.name, adapter, None, example, id=f"parse-{adapter}-{name}"
                        )
                    )
            continue
        for index, example in enumerate(data.get("parse_examples", [])):
            if example["adapter"] in ADAPTERS:
                case_id = f"{path.stem}-{example['adapter']}-{index}"
                cases.append(
                    pytest.param(
                        path.name, example["adapter"], example.get("signature"), example, id=case_id
                    )
                )
    return cases


# Where DSPy's answer is a bug that structio fixes (tests/golden/README.md, fixes 4 and 6), or
# where DSPy raises and structio reads the one honest value (the robust-parsing issue).
FIXED_PARSES: dict[str, Any] = {
    # Fix 4: an indented header with the value on the same line parses to the value.
    "  [[ ## reasoning ## ]]\nr\n   [[ ## answer ## ]]   7": {"reasoning": "r", "answer": 7},
    # A label with drifted case has one reading.
    (
        "[[ ## category ## ]]\nBilling\n\n[[ ## urgency ## ]]\nhigh\n\n[[ ## needs_human ## ]]\n"
        "True\n\n[[ ## confidence ## ]]\n0.92\n\n[[ ## priority ## ]]\n2\n\n[[ ## completed ## ]]"
    ): {
        "category": "billing",
        "urgency": "high",
        "needs_human": True,
        "confidence": 0.92,
        "priority": 2,
    },
}
FIXED_PARSES.update(
    {
        # Drifted marker spacing and case: one reading.
        "[[## reasoning ##]]\nr\n[[ ## answer ## ]]\n1": {"reasoning": "r", "answer": 1},
        "[[ ## Reasoning ## ]]\nr\n[[ ## answer ## ]]\n1": {"reasoning": "r", "answer": 1},
        # JSONAdapter reads [[ ## field ## ]] sections when the model wrote those instead.
        "[[ ## reasoning ## ]]\nr\n[[ ## answer ## ]]\n42": {"reasoning": "r", "answer": 42},
    }
)
# Fix 9: a section holding only `None` for an Optional[str] output is no value (DSPy reads
# the string "None", so a None it wrote itself does not round-trip).
_EXTRACT = json.loads((GOLDEN / "golden_extract_pydantic.json").read_text(encoding="utf-8"))
_NONE_NOTES = _EXTRACT["parse_examples"][0]
FIXED_PARSES[_NONE_NOTES["completion"]] = {**_NONE_NOTES["parsed"], "notes": None}
# DSPy completes truncated JSON ({"answer": 4 may have been 42...): structio never pads a
# cut-off value, so the field being written is refused as cut off.
REFUSED_CUT_OFF = {'{"reasoning": "r", "answer": 4': "answer"}
# Fix 6: a constraint violation is a ParseError naming the constraint.
CONSTRAINT_VIOLATION = "constraint violation (le=1.0) is NOT enforced by parse"


@pytest.mark.parametrize(("file", "adapter", "sig_name", "example"), parse_cases())
def test_parse_matches_dspy(
    file: str, adapter: str, sig_name: str | None, example: dict[str, Any]
) -> None:
    sigs = BY_FILE[file]
    signature = sigs[sig_name] if None not in sigs else sigs[None]
    parser = ADAPTERS[adapter]
    completion = example["completion"]
    if completion in REFUSED_CUT_OFF:
        with pytest.raises(sio.ParseError) as refused:
            parser.parse(signature, completion)
        assert list(refused.value.invalid) == [REFUSED_CUT_OFF[completion]]
        assert "cut off here" in str(refused.value)
    elif completion in FIXED_PARSES:
        parsed = to_jsonable_python(parser.parse(signature, completion))
        assert parsed == FIXED_PARSES[completion]
    elif example.get("note") == CONSTRAINT_VIOLATION:
        with pytest.raises(sio.ParseError) as info:
            parser.parse(signature, completion)
        assert set(info.value.invalid) == {"confidence"}
        assert "constraint le=1.0" in str(info.value)
    elif "parsed" in example:
        assert to_jsonable_python(parser.parse(signature, completion)) == example["parsed"]
    else:
        with pytest.raises(sio.ParseError) as info:
            parser.parse(signature, completion)
        assert info.value.adapter == adapter
        assert info.value.completion == completion
        assert info.value.missing or info.value.invalid or info.value.problem


def test_parse_case_count() -> None:
    # 14 Chat + 12 JSON in golden_parse.json, 2 in qa_context, 4 in classify, 3 in extract.
    assert len(parse_cases()) == 14 + 12 + 2 + 4 + 3
