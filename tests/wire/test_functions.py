"""Prompt functions over the real wire: the request is the prompt, the answer is typed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import structio as sio
from tests.wire.server import OpenAIServer, Reply

MakeLM = Callable[..., sio.LM]


def test_a_prompt_function_calls_the_server(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content="A gull, a wave."), Reply(content="[[ ## answer ## ]]\n8"))
    lm = make_lm()

    @sio.prompt("Write a poem about {topic}.", lm=lm, temperature=0.5)
    def poem(topic: str) -> str:
        raise NotImplementedError

    @sio.prompt("How many legs has a {animal}?", lm=lm)
    def legs(animal: str) -> int:
        raise NotImplementedError

    assert poem("the sea {not a field}") == "A gull, a wave."
    assert asyncio.run(legs.acall("spider")) == 8
    first, second = server.requests
    assert first.messages == [
        {"role": "user", "content": "Write a poem about the sea {not a field}."}
    ]
    assert first.body["temperature"] == 0.5
    assert second.messages == legs.messages("spider")
