"""Demo and history messages are remembered by content: never stale, never mixed up."""

from __future__ import annotations

from typing import Any, ClassVar

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


def cached(cache: RenderCache, key: str, calls: list[str]) -> str:
    """``key`` in upper case, through the cache; ``calls`` records each real render."""

    def render() -> str:
        calls.append(key)
        return key.upper()

    return cache.get(lambda: key, render)


def test_a_turn_used_recently_survives_eviction() -> None:
    probe = RenderCache()
    cached(probe, "a", [])
    one = probe.nbytes  # what one entry of this shape costs
    cache = RenderCache(max_bytes=2 * one + one // 2)  # room for two
    calls: list[str] = []
    for key in ["a", "b", "a", "c", "a", "b"]:
        assert cached(cache, key, calls) == key.upper()
    # "a", read again before "c" came in, stayed; "b" (least recent then) went.
    assert calls == ["a", "b", "c", "b"]


def test_the_byte_budget_holds_for_large_renderings() -> None:
    budget = 1_000_000
    cache = RenderCache(max_bytes=budget)
    for index in range(500):
        text = f"{index} " + "x" * 20_000
        assert cache.get(lambda text=text: text, lambda text=text: text[::-1]) == text[::-1]
        assert cache.nbytes <= budget
    assert cache.nbytes > budget // 2  # bounded by bytes, not emptied
    assert 20 < len(cache) < 50  # about 40 KiB an entry: key and text


class CountingAdapter(sio.ChatAdapter):
    """A ChatAdapter that counts the assistant messages it renders."""

    rendered: ClassVar[list[int]] = []

    def format_assistant_message_content(self, *args: Any, **kwargs: Any) -> str:
        self.rendered.append(1)
        return super().format_assistant_message_content(*args, **kwargs)


def test_a_history_longer_than_4096_turns_is_rendered_once_and_as_without_a_cache() -> None:
    # A history of 6,000 turns outgrew the old cache of 4,096 entries: every call rendered
    # every turn again. Now each turn is rendered once, and the cached prompt is the same.
    sig = sio.make_signature("question, history: History -> answer")
    turns = [{"question": f"q{i}?", "answer": f"{i}"} for i in range(6_000)]
    inputs = {"question": "next?", "history": sio.History(turns)}
    adapter = CountingAdapter()
    CountingAdapter.rendered.clear()
    first = adapter.format(sig, [], inputs)
    assert len(CountingAdapter.rendered) == 6_000
    again = adapter.format(sig, [], inputs)
    assert len(CountingAdapter.rendered) == 6_000  # all from the cache
    assert again == first
    # Rendered afresh (an adapter with other options has a cache of its own): the same.
    fresh = CountingAdapter()
    fresh.note = "other options"
    assert fresh.format(sig, [], inputs) == first
    assert len(CountingAdapter.rendered) == 12_000


@pytest.mark.parametrize("adapter", [sio.ChatAdapter(), sio.JSONAdapter()])
def test_renderings_past_a_tiny_budget_equal_cached_ones(adapter: sio.Adapter) -> None:
    sig = sio.make_signature({"note": (Note, sio.InputField()), "answer": (str, sio.OutputField())})
    turns = [{"note": Note(text=f"t{i}", tags=["a"] * i), "answer": str(i)} for i in range(50)]
    demos = [{"note": Note(text="d"), "answer": "D"}]
    inputs = {"note": Note(text="now")}
    plan = adapter._plan(sig)
    expected = adapter.format(sig, demos, inputs)
    assert adapter.format(sig, demos, inputs) == expected  # from the cache
    plan.rendered = RenderCache(max_bytes=2_000)  # a few entries: evicting all the time
    for _ in range(3):
        assert adapter.format(sig, demos, inputs) == expected
        assert plan.rendered.nbytes <= 2_000
    history_sig = sio.make_signature("note: Note, history: History -> answer")
    history = sio.History(turns)
    with_history = adapter.format(history_sig, demos, {"note": Note(text="q"), "history": history})
    adapter._plan(history_sig).rendered = RenderCache(max_bytes=0)  # nothing kept
    assert adapter.format(history_sig, demos, {"note": Note(text="q"), "history": history}) == (
        with_history
    )
