"""`structio.ChainOfThought` sends DSPy 3.4.1's ChainOfThought prompt, byte for byte.

The expected messages were written by DSPy itself (tests/dspy_compat_cot_make.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest

import structio as sio

GOLDEN = json.loads(Path(__file__).with_name("dspy_compat_cot.json").read_text("utf-8"))


class Triage(sio.Signature):
    """Route a support ticket."""

    ticket: str = sio.InputField()
    category: Literal["billing", "bug", "other"] = sio.OutputField()
    urgency: int = sio.OutputField(desc="1 (low) to 5 (high)")


QA = "question, context: list[str] -> answer: int"
QA_INPUTS = {"question": "How many?", "context": ["one", "two"]}
TRIAGE_INPUTS = {"ticket": "I was charged twice."}
TRIAGE_DEMOS = [
    {"ticket": "App crashes", "reasoning": "A crash is a bug.", "category": "bug", "urgency": 4},
    {"ticket": "Refund?", "category": "billing", "urgency": 2},
]

CASES: dict[str, tuple[Any, Any, list[dict[str, Any]], dict[str, Any]]] = {
    "qa_chat": (sio.ChatAdapter(), QA, [], QA_INPUTS),
    "qa_json": (sio.JSONAdapter(), QA, [], QA_INPUTS),
    "triage_chat_demos": (sio.ChatAdapter(), Triage, TRIAGE_DEMOS, TRIAGE_INPUTS),
    "triage_json_demos": (sio.JSONAdapter(), Triage, TRIAGE_DEMOS, TRIAGE_INPUTS),
}


def test_the_golden_file_is_dspys() -> None:
    assert GOLDEN["dspy"] == "3.4.1"
    assert set(GOLDEN["cases"]) == set(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_prompt_is_dspys(case: str) -> None:
    adapter, signature, demos, inputs = CASES[case]
    cot = sio.ChainOfThought(signature, adapter=adapter, demos=demos)
    assert cot.format(**inputs) == GOLDEN["cases"][case]


def test_reasoning_comes_first_and_reads_back() -> None:
    reply = "[[ ## reasoning ## ]]\nTwo items.\n\n[[ ## answer ## ]]\n2\n\n[[ ## completed ## ]]"
    cot = sio.ChainOfThought(QA, lm=sio.FakeLM([reply]))
    assert list(cot.signature.output_fields) == ["reasoning", "answer"]
    assert cot.signature.output_fields["reasoning"].annotation is str
    pred = cot(**QA_INPUTS)
    assert (pred.reasoning, pred.answer) == ("Two items.", 2)
    assert isinstance(cot, sio.Predict)


def test_a_signature_with_reasoning_is_kept_and_a_saved_one_loads_back(tmp_path: Path) -> None:
    cot = sio.ChainOfThought(QA, temperature=0.3)
    assert sio.ChainOfThought(cot.signature).signature == cot.signature
    path = tmp_path / "cot.json"
    cot.save(path)
    loaded = sio.ChainOfThought.load(path)
    assert isinstance(loaded, sio.ChainOfThought)
    assert list(loaded.signature.output_fields) == ["reasoning", "answer"]
    assert loaded.params == {"temperature": 0.3}
    fresh = sio.ChainOfThought(QA)
    assert fresh.load(path) is fresh
    assert fresh.params == {"temperature": 0.3}


def test_the_reasoning_field_can_be_given() -> None:
    field = sio.OutputField(desc="Think it through, briefly.")
    cot = sio.ChainOfThought(QA, rationale_field=field)
    assert cot.signature.output_fields["reasoning"].desc == "Think it through, briefly."
    typed = sio.ChainOfThought(QA, rationale_field_type=list[str])
    assert typed.signature.output_fields["reasoning"].annotation == list[str]
