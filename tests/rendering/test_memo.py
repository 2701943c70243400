"""Demo and history messages are remembered by content: never stale, never mixed up."""

from __future__ import annotations

import pydantic
import pytest

import structio as sio
from structio.rendering.memo import RenderCache, Unfreezable, freeze


class Note(pydantic.BaseModel):
    text: str
    tags: list[str] = []


class Box:
    """A value whose rendering the cache cannot know from its content."""

    def __init__(self, label: str) -> None:
        self.label = label

    def __format__(self, spec: str) -> str:
        return f"<{self.label}>"


SIG = sio.make_signature(
    {
        "note": (Note, sio.InputField()),
        "box": (Box, sio.InputField()),
        "n": (int | float | bool, sio.InputField()),
        "answer": (list[str], sio.OutputField()),
    }
)


@pytest.mark.parametrize("adapter", [sio.ChatAdapter(), sio.JSONAdapter()])
def test_mutated_demos_and_turns_are_rendered_again(adapter: sio.Adapter) -> None:
    demo = {"note": Note(text="a"), "box": Box("x"), "n": 1, "answer": ["p"]}

    def demo_text() -> str:
        messages = adapter.format(SIG, [demo], {"note": Note(text="q"), "box": Box("b"), "n": 2})
        return messages[1]["content"] + messages[2]["content"]

    first = demo_text()
    assert demo_text() == first
    demo["note"].tags.append("new")  # in place, inside a model
    assert '"tags": ["new"]' in demo_text()
    demo["answer"].append("q")
    assert '"q"' in demo_text()
    demo["box"].label = "y"  # not freezable: rendered afresh every time
    assert "<y>" in demo_text()
    for value, shown in ((True, "True"), (1.0, "1.0"), (1, "1")):
        demo["n"] = value
        assert f"[[ ## n ## ]]\n{shown}" in demo_text()


def test_history_turns_follow_their_content() -> None:
    sig = sio.make_signature("question, history: History -> answer")
    adapter = sio.ChatAdapter()
    turns = [{"question": "a?", "answer": "1"}]
    history = sio.History(turns)
    before = adapter.format(sig, [], {"question": "b?", "history": history})
    history.messages[0]["answer"] = "2"
    after = adapter.format(sig, [], {"question": "b?", "history": history})
    assert before[2]["content"].startswith("[[ ## answer ## ]]\n1")
    assert after[2]["content"].startswith("[[ ## answer ## ]]\n2")


def test_freeze_keeps_types_and_refuses_unknown_objects() -> None:
    assert freeze([1, True, 1.0]) != freeze([1, 1, 1])
    assert freeze({"a": [1]}) == freeze({"a": [1]})
    assert freeze(Note(text="a")) != freeze(Note(text="b"))
    assert freeze(sio.BulletedList(["a"])) != freeze(["a"])
    with pytest.raises(Unfreezable):
        freeze(Box("x"))


def test_the_cache_is_bounded() -> None:
    cache = RenderCache(size=2)
    calls: list[str] = []

    def render(text: str) -> str:
        calls.append(text)
        return text.upper()

    for text in ["a", "b", "a", "c", "a"]:
        assert cache.get(lambda text=text: text, lambda text=text: render(text)) == text.upper()
    assert calls == ["a", "b", "c", "a"]  # "a" was evicted when "c" came in
