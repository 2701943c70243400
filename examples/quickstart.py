"""structio in one minute, offline: declare a signature, see the prompt, parse an answer.

Run: python examples/quickstart.py
"""

from __future__ import annotations

from typing import Literal

import structio as sio


class Triage(sio.Signature):
    """Route a support ticket to the right team."""

    ticket: str = sio.InputField()
    category: Literal["billing", "bug", "other"] = sio.OutputField()
    urgency: int = sio.OutputField(desc="1 (low) to 5 (high)", ge=1, le=5)


def show(messages: list[dict[str, str]]) -> None:
    for message in messages:
        print(f"--- {message['role']} ---")
        print(message["content"])


def main() -> None:
    adapter = sio.ChatAdapter()
    messages = adapter.format(Triage, inputs={"ticket": "I was charged twice this month."})
    show(messages)

    # What a model might answer; no API key needed to parse it.
    completion = "[[ ## category ## ]]\nbilling\n\n[[ ## urgency ## ]]\n4\n\n[[ ## completed ## ]]"
    print("\n--- parsed ---")
    print(adapter.parse(Triage, completion))  # {'category': 'billing', 'urgency': 4}

    # The same signature with the JSON adapter, from a string spec.
    qa = sio.Signature("context: list[str], question -> answer: int", "Answer from the context.")
    print(sio.JSONAdapter().parse(qa, '```json\n{"answer": "42"}\n```'))  # {'answer': 42}

    # A value that breaks a declared constraint is refused, with the reason.
    try:
        adapter.parse(Triage, "[[ ## category ## ]]\nbilling\n\n[[ ## urgency ## ]]\n9")
    except sio.ParseError as error:
        print("\n--- refused ---")
        print(error)


if __name__ == "__main__":
    main()
