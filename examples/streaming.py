"""Streaming: each output as it arrives, offline (FakeLM streams its scripted replies).

Run: python examples/streaming.py

`FieldDelta` events carry a ``str`` output's new text as the model writes it; a
`FieldValue` gives each output's typed value once its text is complete (never earlier,
never changed later); the last item is the `Prediction`, the same one a plain call reads.
Swap `FakeLM` for `sio.LM("openai/gpt-4o-mini")` (or any model) and nothing else changes.
"""

from __future__ import annotations

import asyncio

import structio as sio


class Explain(sio.Signature):
    """Explain the answer briefly, then give it."""

    question: str = sio.InputField()
    reasoning: str = sio.OutputField()
    answer: int = sio.OutputField()


REPLY = {
    "reasoning": "A week has 7 days, and 3 weeks make 3 times 7 days.",
    "answer": 21,
}


def main() -> None:
    # chunk_size / chunk_delay make FakeLM stream like a provider does.
    lm = sio.FakeLM([REPLY, REPLY, "It is a short poem about the sea."], chunk_size=6)
    explain = sio.Predict(Explain, lm=lm)

    # 1. Every event, then the prediction.
    with explain.stream(question="How many days are 3 weeks?") as stream:
        for item in stream:
            match item:
                case sio.FieldDelta(field, delta):
                    print(f"  {field} += {delta!r}")
                case sio.FieldValue(field, value):
                    print(f"  {field} = {value!r}  (complete)")
                case sio.Reread(reason):
                    print(f"  reading again: {reason}")
                case sio.Prediction():
                    print(f"prediction: {item!r} (route {item.meta.route})")
    print(f"answer: {stream.result.answer}")

    # 2. One field as text, as DSPy's StreamListener gives it (async this time).
    async def listen() -> sio.Prediction:
        async with explain.astream(question="How many days are 3 weeks?") as stream:
            async for event in stream.field("reasoning"):
                if isinstance(event, sio.FieldDelta):
                    print(event.delta, end="", flush=True)
            print()
        return stream.result

    print(f"answer: {asyncio.run(listen()).answer}")

    # 3. A prompt function returning str streams plain text.
    @sio.prompt("Write one line about {topic}.", lm=lm)
    def line(topic: str) -> str: ...

    print("".join(line.stream("the sea")))


if __name__ == "__main__":
    main()
