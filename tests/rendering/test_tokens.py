"""Tokenizers: offline tiktoken encodings, custom encode functions, the per-text cache."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from structio.rendering import tokens
from structio.rendering.tokens import Tokenizer, get_tokenizer


def test_o200k_and_cl100k_work_offline_and_differ() -> None:
    text = "Structured outputs for language models, 1234 times."
    o200k = get_tokenizer("o200k_base")
    cl100k = get_tokenizer("cl100k_base")
    assert o200k.encode(text) != cl100k.encode(text)
    assert o200k.count(text) == len(o200k.encode(text)) > 5
    assert o200k.encode("hello world") == (24912, 2375)  # o200k_base's real ids


def test_tokenizers_are_shared_and_cache_per_text() -> None:
    calls: list[str] = []

    def encode(text: str) -> list[int]:
        calls.append(text)
        return [len(word) for word in text.split()]

    tokenizer = get_tokenizer(encode_func=encode)
    assert tokenizer.encode("a bb ccc") == (1, 2, 3)
    assert tokenizer.count("a bb ccc") == 3
    assert calls == ["a bb ccc"]  # the second use came from the cache
    tokenizer.clear()
    assert tokenizer.count("a bb ccc") == 3
    assert calls == ["a bb ccc", "a bb ccc"]  # encoded again after clear()
    assert get_tokenizer("o200k_base") is get_tokenizer("o200k_base")


def test_special_token_text_is_plain_text() -> None:
    assert get_tokenizer().count("<|endoftext|>") > 1


def test_unknown_encoding_says_what_to_do() -> None:
    with pytest.raises(
        sio.TokenizerError, match="unknown tiktoken encoding 'no_such_base'"
    ) as info:
        get_tokenizer("no_such_base")
    assert "encode_func" in str(info.value)
    assert isinstance(info.value, sio.ConfigurationError)


def test_encoding_that_is_not_offline_says_how_to_provide_it() -> None:
    # p50k_base is a real encoding whose file is not shipped; the suite blocks the download.
    with pytest.raises(sio.TokenizerError, match="not available offline") as info:
        get_tokenizer("p50k_base")
    assert "TIKTOKEN_CACHE_DIR" in str(info.value)


def test_bad_encode_func() -> None:
    with pytest.raises(sio.TokenizerError, match="must be callable"):
        get_tokenizer(encode_func="split")  # type: ignore[arg-type]


def test_counting_does_not_import_litellm_or_touch_the_environment() -> None:
    code = (
        "import os, sys\n"
        "from structio.rendering.tokens import get_tokenizer\n"
        "print(get_tokenizer().count('hello world'), 'litellm' in sys.modules,"
        " os.environ.get('TIKTOKEN_CACHE_DIR'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["2", "False", "None"]


def test_one_chat_count_with_the_framing_as_a_parameter() -> None:
    from structio import finetune
    from structio.rendering.tokens import NO_FRAMING, OPENAI_FRAMING, count_chat

    prompt = sio.ChatAdapter().render(
        "question -> answer", [{"question": "1+1?", "answer": "2"}], {"question": "2+2?"}
    )
    tokenizer = get_tokenizer()
    messages = prompt.messages
    assert count_chat(messages, tokenizer) == count_chat(messages, tokenizer, NO_FRAMING)
    assert count_chat(messages, tokenizer) == prompt.token_count
    framed = count_chat(messages, tokenizer, OPENAI_FRAMING)
    assert framed == prompt.token_count + 3 * len(messages) + 3
    assert finetune.count_tokens(messages, tokenizer) == framed


def test_cached_counts_equal_direct_counts_with_a_real_encoding(tiktoken_offline: Any) -> None:
    shared = get_tokenizer("o200k_base")
    direct = tiktoken_offline.get_encoding("o200k_base")
    rng = random.Random(3)  # noqa: S311 - seeded test data, not secrets
    words = ["refund", "ünïcödé", "日本語", "emoji 🙂", "x" * 40, "42", "\n\n", "<|endoftext|>"]
    texts = [" ".join(rng.choices(words, k=rng.randint(0, 60))) for _ in range(400)]

    # A small budget, so that counts are evicted and counted again while the test runs.
    def encode(text: str) -> list[int]:
        return direct.encode(text, disallowed_special=())

    tokenizer = Tokenizer(encode, "o200k_base, small", count_cache_bytes=40_000)
    for _ in range(3):
        rng.shuffle(texts)
        for text in texts:
            assert tokenizer.count(text) == len(direct.encode(text, disallowed_special=()))
            assert tokenizer.cache_bytes <= 40_000
    assert shared.count(texts[0]) == tokenizer.count(texts[0])


def counting_tokenizer(calls: list[str], **budgets: int) -> Tokenizer:
    """A tokenizer of words (one token a word) that records each real encoding."""

    def encode(text: str) -> list[int]:
        calls.append(text)
        return [len(word) for word in text.split()]

    return Tokenizer(encode, "words", **budgets)


def test_a_text_counted_recently_survives_eviction() -> None:
    calls: list[str] = []
    probe = counting_tokenizer(calls)
    probe.count("text a")
    one = probe.cache_bytes  # what one count of a six-letter text costs
    tokenizer = counting_tokenizer(calls, count_cache_bytes=3 * one + one // 2)  # room for 3
    calls.clear()
    for text in ["text a", "text b", "text c", "text a", "text d", "text a", "text b"]:
        assert tokenizer.count(text) == 2
    # "a" was counted again before "d" came in, so "b" (least recent) went, not "a".
    assert calls == ["text a", "text b", "text c", "text d", "text b"]


def test_counts_keep_no_token_lists_and_stay_within_their_budget() -> None:
    calls: list[str] = []
    tokenizer = counting_tokenizer(calls, count_cache_bytes=200_000, token_cache_bytes=0)
    texts = [f"message {i} " + "word " * 200 for i in range(2_000)]  # ~1 KiB each
    for text in texts:
        assert tokenizer.count(text) == 202
        assert tokenizer.cache_bytes <= 200_000
    assert tokenizer.cache_bytes > 100_000
    calls.clear()
    assert tokenizer.count(texts[-1]) == 202
    assert calls == []  # the newest are kept
    assert tokenizer.encode(texts[-1]) == (7, len("1999"), *[4] * 200)
    assert calls == [texts[-1]]  # counting kept no tokens: encode encodes


SAMPLES = [
    "hello world",
    "Structured outputs for language models, 1234567 times.",
    "  leading spaces\n\n\ttabs and\r\nnewlines   ",
    "I'm sure they'LL say it's fine; we'd've known.",
    "Ünïcödé, 日本語のテキスト, emoji 🎉🎉, Ελληνικά, русский текст.",
    "<|endoftext|> and <|endofprompt|> are plain text here",
    'def f(x):\n    return {"a": [1, 2.5e-3, None]}  # code\n',
    "",
]


@pytest.fixture
def tiktoken_offline(monkeypatch: pytest.MonkeyPatch) -> object:
    """tiktoken itself, pointed at the files litellm ships (this test's environment only)."""
    import tiktoken

    folder = tokens._litellm_tokenizer_dir()
    assert folder is not None
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(folder))
    return tiktoken


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_bundled_encodings_equal_tiktokens_own(name: str, tiktoken_offline: Any) -> None:
    ours = tokens._encoding(name)
    theirs = tiktoken_offline.get_encoding(name)
    assert (ours.name, ours.n_vocab, ours.special_tokens_set) == (
        theirs.name,
        theirs.n_vocab,
        theirs.special_tokens_set,
    )
    for text in SAMPLES:
        assert ours.encode(text, disallowed_special=()) == theirs.encode(
            text, disallowed_special=()
        )
        assert ours.encode(text, allowed_special="all") == theirs.encode(
            text, allowed_special="all"
        )
        assert get_tokenizer(name).count(text) == len(theirs.encode(text, disallowed_special=()))
    rng = random.Random(7)  # noqa: S311 - seeded test data, not secrets
    alphabet = "abcXYZ019 \n\t'.,;é日🎉<|>"
    for _ in range(200):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 60)))
        assert ours.encode(text, disallowed_special=()) == theirs.encode(
            text, disallowed_special=()
        )


def test_loading_leaves_the_environment_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    before = dict(os.environ)
    tokenizer = tokens._load("cl100k_base")  # a fresh load, not the shared tokenizer
    assert tokenizer.count("hello world") == 2
    assert dict(os.environ) == before


def test_a_missing_bundled_file_names_the_path_and_what_to_do(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(tokens, "_litellm_tokenizer_dir", lambda: tmp_path)
    with pytest.raises(sio.ConfigurationError) as info:
        tokens._load("o200k_base")
    message = str(info.value)
    assert str(tmp_path / "fb374d419588a4632f3f557e76b4b70aebbca790") in message
    assert "pip install" in message
    assert "encode_func=" in message
    assert isinstance(info.value, sio.TokenizerError)


def test_without_litellm_the_error_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "_litellm_tokenizer_dir", lambda: None)
    with pytest.raises(sio.TokenizerError, match=r"litellm's package \(not installed\)"):
        tokens._load("cl100k_base")


def test_a_damaged_bundled_file_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder = tokens._litellm_tokenizer_dir()
    assert folder is not None
    name = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
    damaged = (folder / name).read_bytes().replace(b" 100\n", b" 101\n", 1)
    (tmp_path / name).write_bytes(damaged)
    monkeypatch.setattr(tokens, "_litellm_tokenizer_dir", lambda: tmp_path)
    with pytest.raises(sio.TokenizerError, match="SHA-256 differs") as info:
        tokens._load("cl100k_base")
    assert str(tmp_path / name) in str(info.value)
