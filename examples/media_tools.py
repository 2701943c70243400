"""Images, tools and reasoning, offline: what goes on the wire and what comes back.

Run: python examples/media_tools.py

`FakeLM` stands in for a provider: it records each request and answers from a script, here
with native tool calls and reasoning the way an OpenAI-compatible server sends them. Swap it
for `sio.LM("openai/gpt-4o-mini")` (or any model) and nothing else changes.
"""

from __future__ import annotations

import base64
import json
import tempfile
from pathlib import Path

import structio as sio
from structio.lm.types import Completion

# A 1x1 PNG, written to a file as a photo would be.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


class Caption(sio.Signature):
    """Caption the image."""

    image: sio.Image = sio.InputField()
    caption: str = sio.OutputField()


def get_weather(city: str, unit: str = "C") -> str:
    """Get the weather for a city."""
    return {"Rome": "sunny, 24", "Oslo": "rain, 9"}.get(city, "unknown") + f" {unit}"


class Assist(sio.Signature):
    """Answer the user, calling tools when needed."""

    question: str = sio.InputField()
    tools: list[sio.Tool] = sio.InputField()
    history: sio.History = sio.InputField()
    calls: sio.ToolCalls = sio.OutputField()
    answer: str = sio.OutputField()


class Solve(sio.Signature):
    """Solve the problem."""

    question: str = sio.InputField()
    reasoning: sio.Reasoning = sio.OutputField()
    answer: int = sio.OutputField()


def expect(condition: bool, what: str) -> None:
    """Stop with a message if the example no longer shows what it says (CI runs it)."""
    if not condition:
        raise SystemExit(f"examples/media_tools.py: expected {what}")


def images() -> None:
    with tempfile.TemporaryDirectory() as folder:
        photo = Path(folder) / "photo.png"
        photo.write_bytes(PNG)
        lm = sio.FakeLM([{"caption": "A single red pixel."}])
        pred = sio.Predict(Caption, lm=lm)(image=sio.Image(photo))  # or a URL, bytes, data URI
    parts = lm.calls[0].messages[-1]["content"]
    print("1. image input ->", [part["type"] for part in parts], "->", pred.caption)
    expect([part["type"] for part in parts] == ["text", "image_url", "text"], "an image part")


def tools() -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": json.dumps({"city": "Rome"})},
    }
    lm = sio.FakeLM(
        [
            Completion("", "tool_calls", (call,)),  # the model asks for a tool
            {"answer": "It is sunny in Rome, 24 C."},  # then answers
        ],
        supports_function_calling=True,  # as litellm says of gpt-4o-mini
    )
    assist = sio.Predict(Assist, lm=lm)
    question = "What's the weather in Rome?"
    first = assist(question=question, tools=[get_weather], history=sio.History())
    print("2. tools= sent:", [t["function"]["name"] for t in lm.calls[0].params["tools"]])
    print("   calls:", [(c.name, c.args) for c in first.calls], "answer:", first.answer)
    print("   results:", first.calls.execute())
    # The calls and their results go back as the provider expects them.
    history = sio.History([{"question": question, "calls": first.calls}])
    second = assist(question=question, tools=[get_weather], history=history)
    roles = [m["role"] for m in lm.calls[1].messages]
    print("   second request:", roles, "->", second.answer)
    expect(roles == ["system", "user", "assistant", "tool", "user"], "the calls replayed")

    # Text mode: the tools are described in the prompt and the calls read from the answer.
    text = sio.FakeLM(
        [
            '[[ ## calls ## ]]\n[{"name": "get_weather", "args": {"city": "Oslo"}}]\n\n'
            "[[ ## answer ## ]]\nChecking.\n\n[[ ## completed ## ]]"
        ]
    )
    adapter = sio.ChatAdapter(native_tools=False)
    pred = sio.Predict(Assist, lm=text, adapter=adapter)(
        question="Oslo?", tools=[get_weather], history=sio.History()
    )
    print("3. text-mode calls:", pred.calls.execute())


def reasoning() -> None:
    lm = sio.FakeLM(
        [Completion("[[ ## answer ## ]]\n21\n\n[[ ## completed ## ]]", reasoning="3 x 7 = 21.")],
        supports_reasoning=True,  # e.g. a DeepSeek-R1 or o3-mini
    )
    pred = sio.Predict(Solve, lm=lm)(question="How many days are 3 weeks?")
    print("4. reasoning:", repr(pred.reasoning), "answer:", pred.answer)
    print("   reasoning_effort sent:", lm.calls[0].params["reasoning_effort"])
    expect(pred.answer == 21 and pred.reasoning == "3 x 7 = 21.", "the reasoning kept apart")


def main() -> None:
    images()
    tools()
    reasoning()


if __name__ == "__main__":
    main()
