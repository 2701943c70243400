"""A sliding-window history: the render cache by turn content, whatever a turn's position.

A chat that sends only its last N turns moves every turn one place per call. Each turn is
rendered once (its cache key is its content) and its parts are named for the place it has
on each call (``history_<i>_user``...), so messages, names and truncation are what a
fresh adapter gives.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structio as sio

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PNG_URI = "data:image/png;base64," + base64.b64encode(PNG).decode()

ADAPTERS = [
    sio.ChatAdapter,
    sio.JSONAdapter,
    sio.XMLAdapter,
    sio.CompactAdapter,
    sio.ToolOutputAdapter,
]


def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return f"sunny in {city}"


def chat_signature(tools: bool = True) -> type[sio.Signature]:
    """A new signature class each call: one with no cache yet (same name, same prompt).

    Args:
        tools: Whether the signature has a `ToolCalls` output (`ToolOutputAdapter` refuses
            one: its tool channel carries the answer).
    """

    class Chat(sio.Signature):
        """Answer the user."""

        question: str = sio.InputField()
        picture: sio.Image | None = sio.InputField(default=None)
        history: sio.History = sio.InputField()
        calls: sio.ToolCalls = sio.OutputField()
        answer: str = sio.OutputField()

    return Chat if tools else Chat.delete("calls")


def executed_calls(city: str) -> sio.ToolCalls:
    """Calls that have run: a turn that replays the calls and their results."""
    calls = sio.ToolCalls.from_calls([{"name": "get_weather", "args": {"city": city}}])
    calls.execute([get_weather])
    return calls


def conversation(length: int, tools: bool = True) -> list[dict[str, Any]]:
    """Turns of every kind: plain, answered with calls, with an image, without an answer."""
    turns: list[dict[str, Any]] = []
    for i in range(length):
        kind = i % 4
        if kind == 0:
            turns.append({"question": f"Question {i}?", "answer": f"Answer {i}."})
        elif kind == 1 and not tools:
            turns.append({"question": f"Weather {i}?", "answer": f"Sunny in City {i}."})
        elif kind == 1:
            turns.append(
                {"question": f"Weather {i}?", "calls": executed_calls(f"City {i}"), "answer": ""}
            )
        elif kind == 2:
            turns.append(
                {"question": f"What is in {i}?", "picture": sio.Image(PNG_URI), "answer": "A dot."}
            )
        else:
            turns.append({"question": f"Unanswered {i}?"})
    return turns


def inputs(window: list[dict[str, Any]]) -> dict[str, Any]:
    return {"question": "And now?", "history": sio.History(window)}


@pytest.mark.parametrize("adapter_class", ADAPTERS, ids=lambda c: c.__name__)
def test_a_sliding_window_renders_as_a_fresh_adapter_does(
    adapter_class: type[sio.Adapter],
) -> None:
    tools = adapter_class is not sio.ToolOutputAdapter
    turns = conversation(14, tools)
    sig = chat_signature(tools)
    adapter = adapter_class()
    size = 5
    # Windows slide one turn a call, then jump back and forth: turns seen at every place.
    starts = [*range(len(turns) - size + 1), 3, 0, 7, 2]
    for start in starts:
        window = turns[start : start + size]
        fresh = adapter_class()
        fresh_sig = chat_signature(tools)
        assert adapter.format(sig, [], inputs(window)) == fresh.format(
            fresh_sig, [], inputs(window)
        )
        # Names, roles, contents, priorities and extras: the same parts, so the same cuts.
        assert (
            adapter.render(sig, [], inputs(window)).parts
            == fresh.render(fresh_sig, [], inputs(window)).parts
        )
        assert adapter.format_history(sig, sio.History(window)) == fresh.format_history(
            fresh_sig, sio.History(window)
        )


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 11), st.integers(0, 6)), min_size=1, max_size=6))
def test_any_sequence_of_windows_gives_fresh_names_and_messages(
    windows: list[tuple[int, int]],
) -> None:
    turns = conversation(12)
    sig = chat_signature()
    adapter = sio.ChatAdapter()
    for start, size in windows:
        window = turns[start : start + size]
        expected = sio.ChatAdapter().render(chat_signature(), [], inputs(window))
        prompt = adapter.render(sig, [], inputs(window))
        assert prompt.parts == expected.parts
        names = [p.name for p in prompt.parts if p.name.startswith("history_")]
        assert len(names) == len(set(names))
        assert adapter.format(sig, [], inputs(window)) == expected.messages


class CountingAdapter(sio.ChatAdapter):
    """Counts the assistant messages it renders: one per answered turn rendered."""

    rendered = 0

    def format_assistant_message_content(self, *args: Any, **kwargs: Any) -> str:
        type(self).rendered += 1
        return super().format_assistant_message_content(*args, **kwargs)


@pytest.mark.parametrize("method", ["format", "render"])
def test_a_turn_seen_at_another_position_is_not_rendered_again(method: str) -> None:
    turns = [{"question": f"Question {i}?", "answer": f"Answer {i}."} for i in range(40)]
    sig = chat_signature()
    adapter = CountingAdapter()
    call = getattr(adapter, method)
    CountingAdapter.rendered = 0
    call(sig, [], inputs(turns[0:10]))
    assert CountingAdapter.rendered == 10
    for start in range(1, 31):
        call(sig, [], inputs(turns[start : start + 10]))
        # Only the newest turn of each window is new.
        assert CountingAdapter.rendered == 10 + start
    # One cache entry per turn: the window does not grow the cache by its length a call.
    assert len(adapter._plan(sig).rendered) == 40


def test_renamed_parts_keep_everything_but_the_name() -> None:
    turns = conversation(4)
    sig = chat_signature()
    adapter = sio.ChatAdapter()
    first = adapter.render(sig, [], inputs(turns)).parts
    moved = adapter.render(sig, [], inputs([{"question": "Before?"}, *turns])).parts
    old = [p for p in first if p.name.startswith("history_")]
    new = [p for p in moved if p.name.startswith("history_")][1:]
    assert [p.name for p in new] == [
        p.name.replace(
            f"history_{p.name.split('_')[1]}_", f"history_{int(p.name.split('_')[1]) + 1}_"
        )
        for p in old
    ]
    for before, after in zip(old, new, strict=True):
        assert (before.role, before.content, before.truncation_priority, before.extra) == (
            after.role,
            after.content,
            after.truncation_priority,
            after.extra,
        )
        assert (before.tokens, before.sections) == (after.tokens, after.sections)
