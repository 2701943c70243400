"""The response cache: keys, tiers, and what is never stored."""

from __future__ import annotations

from pathlib import Path

import pytest

import structio as sio
from structio.lm.cache import cache_key, default_cache, public_params

MESSAGES = [{"role": "user", "content": "hi"}]


def response(text: str) -> sio.LMResponse:
    return sio.LMResponse(completions=(sio.Completion(text, "stop"),), model="m", cost=0.5)


def test_key_depends_on_model_messages_and_parameters() -> None:
    base = cache_key("openai/a", MESSAGES, {"temperature": 0})
    assert base == cache_key("openai/a", MESSAGES, {"temperature": 0})
    assert base != cache_key("openai/b", MESSAGES, {"temperature": 0})
    assert base != cache_key("openai/a", [{"role": "user", "content": "hey"}], {"temperature": 0})
    assert base != cache_key("openai/a", MESSAGES, {"temperature": 1})


def test_key_ignores_credentials_and_call_mechanics() -> None:
    base = cache_key("m", MESSAGES, {"temperature": 0})
    noisy = {
        "temperature": 0,
        "api_key": "sk-1",
        "aws_secret_access_key": "x",
        "num_retries": 5,
        "timeout": 3,
        "cache": False,
        "extra_headers": {"Authorization": "Bearer x"},
    }
    assert cache_key("m", MESSAGES, noisy) == cache_key(
        "m", MESSAGES, {"temperature": 0, "extra_headers": {}}
    )
    assert cache_key("m", MESSAGES, {"temperature": 0, "max_tokens": 9}) != base


def test_public_params_drop_secrets_only() -> None:
    assert public_params({"api_key": "k", "max_tokens": 5, "refresh_token": "t", "top_p": 1}) == {
        "max_tokens": 5,
        "top_p": 1,
    }


def test_round_trip_and_lru(tmp_path: Path) -> None:
    cache = sio.ResponseCache(tmp_path / "c", memory_size=2)
    for i in range(3):
        cache.set(f"k{i}", response(f"r{i}"))
    assert cache.get("k0") == response("r0")  # evicted from memory, read back from disk
    assert cache.get("missing") is None
    cache.clear()
    assert cache.get("k1") is None


def test_disk_entries_are_json_text(tmp_path: Path) -> None:
    cache = sio.ResponseCache(tmp_path / "c")
    cache.set("k", response("hello"))
    cache.close()
    reopened = sio.ResponseCache(tmp_path / "c")
    hit = reopened.get("k")
    assert hit is not None
    assert hit.text == "hello"
    assert hit.as_cache_hit(0.01).cost == 0.0


def test_default_cache_follows_the_environment(isolated: Path) -> None:
    cache = default_cache()
    assert cache.directory == isolated / "responses"
    assert default_cache() is cache


class CountingDisk:
    """A disk tier that counts its reads (and holds nothing)."""

    def __init__(self) -> None:
        self.reads = 0

    def get(self, key: str) -> None:
        self.reads += 1

    def set(self, key: str, value: str) -> None:
        pass


def test_memory_hits_read_the_disk_only_after_memory_ttl(tmp_path: Path) -> None:
    patient = sio.ResponseCache(tmp_path / "c", memory_ttl=3600)
    patient.set("k", response("hello"))
    patient._disk = disk = CountingDisk()
    assert [patient.get("k") for _ in range(100)] == [response("hello")] * 100
    assert disk.reads == 0
    strict = sio.ResponseCache(tmp_path / "c", memory_ttl=0)
    strict.set("k", response("hello"))
    strict._disk = disk
    assert strict.get("k") is None  # the disk no longer has it: a miss, not the old copy
    assert disk.reads == 1


def test_memory_ttl_is_checked_and_needs_no_disk(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="memory_ttl must be 0 or more"):
        sio.ResponseCache(tmp_path / "c", memory_ttl=-1)
    memory_only = sio.ResponseCache(memory_ttl=0)  # memory is the only copy: always served
    memory_only.set("k", response("hello"))
    assert memory_only.get("k") == response("hello")
