"""The one bytes-bounded LRU: recent entries stay, the budget holds, threads share it."""

from __future__ import annotations

import random
import sys
import threading

import pytest

from structio._util.lru import LRU, approx_size


def held_bytes(cache: LRU[str, str]) -> int:
    """The sizes of the entries held, summed from the entries themselves."""
    return sum(entry[1] for entry in cache._items.values())


def test_an_entry_used_recently_survives_eviction() -> None:
    cache: LRU[str, str] = LRU(max_bytes=30)
    for key in "abc":
        cache.put(key, key.upper(), 10)
    assert cache.get("a") == "A"  # "a" was read; "b", the oldest of the others, goes
    cache.put("d", "D", 10)
    assert "b" not in cache
    assert [cache.get(key) for key in "acd"] == ["A", "C", "D"]
    cache.put("e", "E", 10)  # all were read: the oldest goes ("a" was refreshed after "c")
    assert list(cache._items) == ["a", "d", "e"]
    for _ in range(3):  # "a", read every time, outlives a stream of entries never read
        assert cache.get("a") == "A"
        cache.put(f"new {_}", "N", 10)
        assert "a" in cache
    assert cache.get("e") is None  # the never-read went first


def test_a_new_entry_is_never_its_own_victim() -> None:
    cache: LRU[str, str] = LRU(max_bytes=20)
    cache.put("a", "A", 10)
    cache.put("b", "B", 10)
    cache.get("a")
    cache.get("b")
    cache.put("c", "C", 10)
    assert cache.get("c") == "C"
    assert cache.nbytes == 20


def test_the_byte_budget_is_never_exceeded() -> None:
    budget = 100_000
    cache: LRU[str, str] = LRU(max_bytes=budget)
    rng = random.Random(7)  # noqa: S311 - seeded test data, not secrets
    for index in range(5_000):
        size = rng.randint(1, 20_000)
        cache.put(f"k{rng.randint(0, 800)}", f"value {index}", size)
        assert cache.nbytes == held_bytes(cache) <= budget
        if index % 3 == 0:
            cache.get(f"k{rng.randint(0, 800)}")
    assert 0 < len(cache) < 800


def test_an_entry_over_the_budget_is_not_kept_and_evicts_nothing() -> None:
    cache: LRU[str, str] = LRU(max_bytes=100)
    cache.put("small", "s", 40)
    cache.put("huge", "h", 101)
    assert cache.get("huge") is None
    assert cache.get("small") == "s"
    assert cache.nbytes == 40


def test_replacing_a_key_counts_its_new_size_only() -> None:
    cache: LRU[str, str] = LRU(max_bytes=100)
    cache.put("a", "1", 60)
    cache.put("a", "2", 30)
    assert (cache.get("a"), cache.nbytes, len(cache)) == ("2", 30, 1)
    cache.clear()
    assert (cache.get("a"), cache.nbytes, len(cache)) == (None, 0, 0)


def test_a_negative_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        LRU(max_bytes=-1)


def test_threads_sharing_one_cache_keep_its_accounts_exact() -> None:
    cache: LRU[str, str] = LRU(max_bytes=50_000)
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        rng = random.Random(seed)  # noqa: S311 - seeded test data, not secrets
        try:
            for _ in range(3_000):
                key = f"k{rng.randint(0, 300)}"
                found = cache.get(key)
                assert found is None or found == key.upper()
                if found is None:
                    cache.put(key, key.upper(), rng.randint(100, 2_000))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(previous)
    assert errors == []
    assert cache.nbytes == held_bytes(cache) <= 50_000


def test_approx_size_counts_text_and_items_but_not_classes() -> None:
    text = "x" * 1_000
    assert abs(approx_size(text) - sys.getsizeof(text)) <= 16
    assert abs(approx_size(text.encode()) - sys.getsizeof(text.encode())) <= 16
    nested = (int, ("a", text), b"y" * 500)
    assert approx_size(nested) >= 1_500
    assert approx_size((int,)) < 100  # a class is shared by its values: a reference
    deep: tuple[object, ...] = ("leaf",)
    for _ in range(5_000):  # deeper than the recursion limit: sized all the same
        deep = (deep,)
    assert approx_size(deep) > 5_000 * 8
