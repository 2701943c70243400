"""Prompt and Part: messages, tokens, and Prompt Poet's truncation rule."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structio as sio
from structio.rendering.prompt import auto_truncation_step


def words(text: str) -> list[int]:
    """One token per word: token arithmetic that is easy to read in tests."""
    return [len(w) for w in text.split()]


def part(name: str, priority: int = 0, size: int = 10, role: str = "user") -> sio.Part:
    return sio.Part(name, role, " ".join([name] * size), priority)


def test_messages_string_and_tokens() -> None:
    prompt = sio.Prompt(
        [sio.Part("system", "system", "Be brief."), sio.Part("user", "user", "Hi there")],
        encode_func=words,
    )
    assert prompt.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi there"},
    ]
    assert prompt.string == "Be brief.Hi there"  # no separator, as Prompt Poet
    assert prompt.tokens == [2, 6, 2, 5]
    assert prompt.tokenize() == prompt.tokens
    assert prompt.part_tokens == [2, 2]
    assert prompt.token_count == 4
    assert [p.name for p in prompt.parts] == ["system", "user"]


def test_real_tokens_are_each_parts_tokens_in_order() -> None:
    prompt = sio.Prompt([sio.Part("a", "user", "hello"), sio.Part("b", "user", " world")])
    tokenizer = prompt.tokenizer
    assert prompt.tokens == list(tokenizer.encode("hello")) + list(tokenizer.encode(" world"))


# Prompt Poet's worked example: every part 10 tokens, priorities as named.
EXAMPLE = [
    ("sys", 0),
    ("h1", 1),
    ("h2", 1),
    ("ex1", 2),
    ("ex2", 2),
    ("mid", 0),
    ("h3", 1),
    ("ex3", 2),
    ("q", 0),
]


@pytest.mark.parametrize(
    ("remove", "kept"),
    [
        (5, "sys h1 h2 ex2 mid h3 ex3 q"),
        (10, "sys h1 h2 ex2 mid h3 ex3 q"),
        (25, "sys h1 h2 mid h3 q"),
        (35, "sys h2 mid h3 q"),
        (45, "sys mid h3 q"),
    ],
)
def test_prompt_poet_worked_example(remove: int, kept: str) -> None:
    prompt = sio.Prompt([part(n, p) for n, p in EXAMPLE], encode_func=words)
    truncated = prompt.truncate(90 - remove)
    assert " ".join(p.name for p in truncated.parts) == kept
    assert [p.name for p in truncated.dropped] == [n for n, _ in EXAMPLE if n not in kept.split()]
    assert len(prompt.parts) == 9  # the original is unchanged


def test_untruncatable_parts_over_the_limit_say_by_how_much() -> None:
    prompt = sio.Prompt([part(n, p) for n, p in EXAMPLE], encode_func=words)
    with pytest.raises(sio.TruncationError) as info:
        prompt.truncate(25)
    error = info.value
    assert "take 30 tokens, 5 over the limit" in str(error)
    assert "(sys, mid, q)" in str(error)
    assert (error.token_limit, error.fixed_tokens) == (25, 30)
    assert isinstance(error, ValueError)


def test_a_prompt_that_fits_is_kept_whole() -> None:
    prompt = sio.Prompt([part(n, p) for n, p in EXAMPLE], encode_func=words)
    assert prompt.truncate(90).parts == prompt.parts
    assert prompt.truncate(90).dropped == ()


def test_step_rounds_the_removal_up_to_a_multiple() -> None:
    parts = [part("sys"), *(part(f"m{i}", 1) for i in range(10)), part("q")]
    prompt = sio.Prompt(parts, encode_func=words)  # 120 tokens
    assert len(prompt.truncate(115, 0).dropped) == 1  # 5 over: one part
    assert len(prompt.truncate(115, 30).dropped) == 3  # 30 removed
    assert len(prompt.truncate(85, 30).dropped) == 6  # 35 over -> 60 removed


def test_bad_arguments() -> None:
    prompt = sio.Prompt([part("a")], encode_func=words)
    with pytest.raises(sio.ConfigurationError, match="token_limit"):
        prompt.truncate(0)
    with pytest.raises(sio.ConfigurationError, match="truncation_step"):
        prompt.truncate(10, -5)
    with pytest.raises(sio.ConfigurationError, match="truncation_step"):
        prompt.truncate(10, "sometimes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a Part"):
        sio.Prompt(["hello"])  # type: ignore[list-item]


def chat_prompt(turns: int, size: int = 10) -> sio.Prompt:
    parts = [part("system", size=50, role="system")]
    for i in range(turns):
        parts.append(part(f"u{i}", 1, size))
        parts.append(part(f"a{i}", 1, size, role="assistant"))
    parts.append(part("request", size=size))
    return sio.Prompt(parts, encode_func=words)


def shared_prefix(a: sio.Prompt, b: sio.Prompt) -> int:
    count = 0
    for x, y in zip(a.tokens, b.tokens, strict=False):
        if x != y:
            break
        count += 1
    return count


def test_a_step_keeps_the_cut_point_fixed_over_many_turns() -> None:
    limit, step = 400, 100
    previous = None
    reuses = 0
    for turns in range(20, 60):
        current = chat_prompt(turns).truncate(limit, step)
        assert current.token_count <= limit
        if previous is not None:
            # Without the final request, the previous prompt is a prefix of this one...
            history = [p for p in previous.parts if p.name != "request"]
            if [p.name for p in current.parts[: len(history)]] == [p.name for p in history]:
                reuses += 1
        previous = current
    # ...on most turns: the cut moves only when the surplus crosses a multiple of the step.
    assert reuses >= 30


def test_naive_truncation_moves_the_cut_every_turn() -> None:
    limit = 400
    moves = 0
    previous_first = None
    for turns in range(20, 60):
        current = chat_prompt(turns).truncate(limit, 0)
        first = current.parts[1].name
        moves += first != previous_first
        previous_first = first
    assert moves >= 35


def test_auto_step_rule() -> None:
    prompt = chat_prompt(40, size=20)  # each turn adds 40 tokens
    # g = 40 tokens a turn; 0.9 cache rate -> 400 -> next power of two 512, capped at limit/4.
    assert auto_truncation_step(prompt, 4000) == 512
    assert auto_truncation_step(prompt, 1000) == 250
    assert auto_truncation_step(prompt, 4000, target_cache_rate=0.5) == 128
    no_history = sio.Prompt([part("system"), part("request")], encode_func=words)
    assert auto_truncation_step(no_history, 4000) == 0
    # The mean covers the whole history: recent long messages barely move the step.
    longer_lately = sio.Prompt(
        [*prompt.parts[:-1], *(part(f"late_{i}", 1, size=40) for i in range(20)), prompt.parts[-1]],
        encode_func=words,
    )
    # 80 parts of 20 tokens, 20 of 40: mean 24, g 48 -> 480 -> 512 (the last 20 alone: 1024).
    assert auto_truncation_step(longer_lately, 4000) == 512
    truncated = prompt.truncate(1000, "auto")
    assert truncated.token_count <= 1000
    with pytest.raises(sio.ConfigurationError, match="target_cache_rate"):
        auto_truncation_step(prompt, 1000, target_cache_rate=1.0)


def test_token_counts_are_cached_per_content() -> None:
    seen: list[str] = []

    def counting(text: str) -> list[int]:
        seen.append(text)
        return words(text)

    tokenizer = sio.Prompt([], encode_func=counting).tokenizer
    for turns in range(1, 30):
        prompt = chat_prompt(turns)
        sio.Prompt(prompt.parts, tokenizer=tokenizer).truncate(10_000)
    # Each distinct message was encoded once, however many turns re-rendered it.
    assert len(seen) == len(set(seen))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(1, 30)), min_size=1, max_size=25),
    st.integers(1, 400),
    st.integers(0, 60),
)
def test_truncation_properties(spec: list[tuple[int, int]], limit: int, step: int) -> None:
    parts = [part(f"p{i}", priority, size) for i, (priority, size) in enumerate(spec)]
    prompt = sio.Prompt(parts, encode_func=words)
    fixed = sum(size for priority, size in spec if priority == 0)
    if fixed > limit:
        with pytest.raises(sio.TruncationError):
            prompt.truncate(limit, step)
        return
    result = prompt.truncate(limit, step)
    assert result.token_count <= limit
    kept = [p.name for p in result.parts]
    assert kept == [p.name for p in parts if p.name in kept]  # order kept
    assert all(p.truncation_priority > 0 for p in result.dropped)  # priority 0 never dropped
    if prompt.token_count <= limit:
        assert not result.dropped
    # Nothing of a lower priority goes while a higher one survives.
    if result.dropped:
        lowest_dropped = min(p.truncation_priority for p in result.dropped)
        assert all(
            p.truncation_priority <= lowest_dropped
            for p in result.parts
            if p.truncation_priority > 0
        )
