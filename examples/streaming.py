"""Streaming: each output as it arrives, offline (FakeLM streams its scripted replies).

Run: python examples/streaming.py

`FieldDelta` events carry a ``str`` output's new text as the model writes it; a
`FieldValue` gives each output's typed value once its text is complete (never earlier,
never changed later: only a `Reread` or `Failed` voids it); a list's items come one by one
as `FieldItem` events; the model's reasoning as `ReasoningDelta`; the last item is the
`Prediction`, the same one a plain call reads.
Swap `FakeLM` for `sio.LM("openai/gpt-4o-mini")` (or any model) and nothing else changes.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

import structio as sio


class Explain(sio.Signature):
    """Explain the answer briefly, then give it."""

    question: str = sio.InputField()
    reasoning: str = sio.OutputField()
    answer: int = sio.OutputField()


class Person(BaseModel):
    name: str
    age: int


class People(sio.Signature):
    """Extract the people named in the text."""

    text: str = sio.InputField()
    people: list[Person] = sio.OutputField()


CHAT_ANSWER = "[[ ## reasoning ## ]]\n3 x 7 = 21\n\n[[ ## answer ## ]]\n21\n\n[[ ## completed ## ]]"

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

    # 4. A list output item by item, each as soon as it is complete (instructor's Iterable).
    people = [{"name": "Ada", "age": 36}, {"name": "Alan", "age": 41}]
    extract = sio.Predict(People, lm=sio.FakeLM([{"people": people}], chunk_size=5))
    for person in extract.stream(text="Ada (36) and Alan (41) met.").items():
        print(f"  got {person.name}, {person.age}")

    # 5. The model's reasoning streams apart from the outputs (here a <think> draft).
    thinking = sio.FakeLM(["<think>3 weeks of 7 days</think>\n" + CHAT_ANSWER], chunk_size=5)
    for item in sio.Predict(Explain, lm=thinking).stream(question="How many days?"):
        if isinstance(item, sio.ReasoningDelta):
            print(f"  thinking: {item.delta!r}")


if __name__ == "__main__":
    main()
