"""Calling a model with Predict, offline: FakeLM stands in for a provider.

Swap `FakeLM` for `sio.LM("openai/gpt-4o-mini")` (with OPENAI_API_KEY set) and nothing else
changes. Run: python examples/predict_offline.py
"""

from __future__ import annotations

from typing import Literal

import structio as sio


class Triage(sio.Signature):
    """Route a support ticket to the right team."""

    ticket: str = sio.InputField()
    category: Literal["billing", "bug", "other"] = sio.OutputField()
    urgency: int = sio.OutputField(desc="1 (low) to 5 (high)", ge=1, le=5)


def fake_model(messages: list[dict[str, str]]) -> dict[str, object]:
    """A stand-in model: billing for money words, bug for crashes."""
    ticket = messages[-1]["content"].lower()
    if "charged" in ticket or "refund" in ticket:
        return {"category": "billing", "urgency": 4}
    if "crash" in ticket:
        return {"category": "bug", "urgency": 5}
    return {"category": "other", "urgency": 1}


def main() -> None:
    sio.configure(lm=sio.FakeLM(fake_model))
    triage = sio.Predict(Triage)

    pred = triage(ticket="I was charged twice")
    print(pred.category, pred.urgency, f"(read via {pred.meta.route})")

    # The same call with the JSON adapter, for this call only.
    pred = triage(ticket="The app crashes on start", adapter=sio.JSONAdapter())
    print(pred.category, pred.urgency, f"(read via {pred.meta.route})")

    # Many calls at once; results come back in order, failures in place.
    tickets = ["Refund please", "Crash when saving", "How do I export?"]
    for ticket, result in zip(tickets, triage.batch([{"ticket": t} for t in tickets]), strict=True):
        print(f"{ticket!r}: {result}")

    sio.inspect_history(1)


if __name__ == "__main__":
    main()
