"""Re-asking with the error, other wire formats, and seeing what happened, offline.

A scripted `FakeLM` first answers with an urgency out of range; `max_retries=1` sends the
answer back with what was wrong, and the second answer is used. A callback prints each
call's story and `track_usage` counts the model calls (with a real provider: tokens and
cost per model). Run: python examples/reask_and_observe.py
"""

from __future__ import annotations

from typing import Literal

import structio as sio


class Triage(sio.Signature):
    """Route a support ticket to the right team."""

    ticket: str = sio.InputField()
    category: Literal["billing", "bug", "other"] = sio.OutputField()
    urgency: int = sio.OutputField(desc="1 (low) to 5 (high)", ge=1, le=5)


class Story(sio.Callback):
    """Prints what each call did."""

    def on_retry(self, event: sio.RetryEvent) -> None:
        print(f"  request {event.attempt}, because:\n    {event.feedback.splitlines()[1]}")

    def on_call_end(self, event: sio.CallEndEvent) -> None:
        print(f"  {event.adapter} call ended: {event.outputs[0]} via {event.route}")


def main() -> None:
    lm = sio.FakeLM(
        [
            {"category": "billing", "urgency": 9},  # breaks le=5: re-asked
            {"category": "billing", "urgency": 4},
            '{"category": "bug", "urgency": 5}',  # a JSON answer, for CompactAdapter
        ]
    )
    sio.configure(lm=lm, callbacks=[Story()])
    triage = sio.Predict(Triage, max_retries=1)
    with sio.track_usage() as tracked:
        print("ChatAdapter, with one re-ask:")
        pred = triage(ticket="I was charged twice")
        print(
            f"  {pred.category}, urgency {pred.urgency}; earlier answers: {len(pred.meta.attempts)}"
        )
        print("CompactAdapter (the outputs' type in a short notation):")
        triage(ticket="The app crashes on start", adapter=sio.CompactAdapter())
    # A FakeLM reports no tokens; a provider's usage and litellm's prices add up here.
    print(f"{tracked.calls} model calls in the block: {tracked.calls_by_model}")
    print("\nWhat CompactAdapter asks for:")
    system = sio.CompactAdapter().format(Triage, inputs={"ticket": "..."})[0]["content"]
    notation = system.split("Outputs will be a JSON object of this type")[1]
    print(notation.split("\n\n")[1].split("In adhering")[0].rstrip())


if __name__ == "__main__":
    main()
