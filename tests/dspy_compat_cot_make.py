"""Write tests/dspy_compat_cot.json: DSPy 3.4.1's messages for ChainOfThought programs.

Run with a Python that has DSPy 3.4.1 installed (never imported by the tests):

    python tests/dspy_compat_cot_make.py

The cases mirror `CASES` in tests/test_dspy_compat_cot.py, which renders the same programs
with `structio.ChainOfThought` and compares the messages byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import dspy
from dspy.adapters import ChatAdapter, JSONAdapter


class Triage(dspy.Signature):
    """Route a support ticket."""

    ticket: str = dspy.InputField()
    category: Literal["billing", "bug", "other"] = dspy.OutputField()
    urgency: int = dspy.OutputField(desc="1 (low) to 5 (high)")


QA = "question, context: list[str] -> answer: int"
QA_INPUTS = {"question": "How many?", "context": ["one", "two"]}
TRIAGE_INPUTS = {"ticket": "I was charged twice."}
TRIAGE_DEMOS = [
    {"ticket": "App crashes", "reasoning": "A crash is a bug.", "category": "bug", "urgency": 4},
    {"ticket": "Refund?", "category": "billing", "urgency": 2},
]


def messages(adapter: object, signature: object, demos: list, inputs: dict) -> list:
    program = dspy.ChainOfThought(signature)
    return adapter.format(program.predict.signature, demos=demos, inputs=inputs)


def main() -> None:
    cases = {
        "qa_chat": messages(ChatAdapter(), QA, [], QA_INPUTS),
        "qa_json": messages(JSONAdapter(), QA, [], QA_INPUTS),
        "triage_chat_demos": messages(ChatAdapter(), Triage, TRIAGE_DEMOS, TRIAGE_INPUTS),
        "triage_json_demos": messages(JSONAdapter(), Triage, TRIAGE_DEMOS, TRIAGE_INPUTS),
    }
    out = Path(__file__).with_name("dspy_compat_cot.json")
    out.write_text(json.dumps({"dspy": dspy.__version__, "cases": cases}, indent=1) + "\n")


if __name__ == "__main__":
    main()
