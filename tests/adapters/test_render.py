"""Adapter.render: the prompt as named parts, with the history truncatable oldest first."""

from __future__ import annotations

import pytest

import structio as sio


class Chat(sio.Signature):
    """Answer."""

    question: str = sio.InputField()
    history: sio.History = sio.InputField()
    answer: str = sio.OutputField()


HISTORY = sio.History(
    [{"question": f"q{i}", "answer": f"a{i}"} for i in range(1, 4)] + [{"question": "q4"}]
)
DEMOS = [{"question": "2+2?", "answer": "4"}, {"question": "only input"}]


@pytest.mark.parametrize("adapter", [sio.ChatAdapter(), sio.JSONAdapter()], ids=["chat", "json"])
def test_parts_are_named_and_format_is_render_messages(adapter: sio.Adapter) -> None:
    inputs = {"question": "now?", "history": HISTORY}
    prompt = adapter.render(Chat, DEMOS, inputs)
    assert [(p.name, p.role, p.truncation_priority) for p in prompt.parts] == [
        ("system", "system", 0),
        ("demo_1_user", "user", 0),
        ("demo_1_assistant", "assistant", 0),
        ("history_1_user", "user", 1),
        ("history_1_assistant", "assistant", 1),
        ("history_2_user", "user", 1),
        ("history_2_assistant", "assistant", 1),
        ("history_3_user", "user", 1),
        ("history_3_assistant", "assistant", 1),
        ("history_4_user", "user", 1),
        ("user", "user", 0),
    ]
    assert adapter.format(Chat, DEMOS, inputs) == prompt.messages


def test_history_is_dropped_oldest_first() -> None:
    prompt = sio.ChatAdapter().render(Chat, DEMOS, {"question": "now?", "history": HISTORY})
    budget = prompt.token_count - prompt.part_tokens[3] - prompt.part_tokens[4] + 1
    truncated = prompt.truncate(budget)
    assert [p.name for p in truncated.dropped] == ["history_1_user", "history_1_assistant"]
    assert truncated.parts[0].name == "system"
    assert truncated.parts[-1].name == "user"


def test_render_counts_tokens_with_the_chosen_encoding() -> None:
    inputs = {"question": "now?", "history": HISTORY}
    o200k = sio.ChatAdapter().render(Chat, [], inputs)
    custom = sio.ChatAdapter().render(Chat, [], inputs, encode_func=lambda s: [0] * len(s))
    assert custom.token_count == len(o200k.string)
    assert 0 < o200k.token_count < custom.token_count
