"""What litellm's model map says of a model: context window, prices, what it supports.

Read from the model map litellm ships inside its package
(``model_prices_and_context_window_backup.json``), found and parsed *without importing
litellm*: importing litellm costs seconds, reading its map tens of milliseconds once per
process (`benchmarks/import_time.py` measures it),
and each model's entry is looked up once and cached. A model the map does not know, or
knows without prices, is logged once per process (logger ``"structio"``, INFO): its cost is
``None`` and, for a model without a context window, nothing is cut to fit it.

`map_profile` gives an entry as a `ModelProfile`; `direct_profile` adds what every server of
the direct (OpenAI-compatible) transport supports.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from structio._util.log import logger
from structio.lm.profile import TEXT_ONLY, ModelProfile, profile_from_entry
from structio.lm.types import Usage

__all__ = [
    "ModelInfo",
    "cost_of",
    "direct_profile",
    "largest_context_window",
    "map_profile",
    "model_entry",
    "model_info",
    "model_map",
    "training_price",
]

_MAP_FILE = "model_prices_and_context_window_backup.json"
_LOCK = threading.Lock()
_MAP: dict[str, Any] | None = None
# Models already logged as unknown (or unpriced): one line per model and process.
_LOGGED: set[tuple[str, str]] = set()
# Providers of the direct transport whose chat API returns logprobs when asked.
_LOGPROBS_PROVIDERS = frozenset({"openai", "azure", "together_ai", "fireworks_ai", "deepseek"})


class ModelInfo(NamedTuple):
    """One model's entry in litellm's model map.

    Attributes:
        key: The map's name for the model (``"gpt-4o-mini"``, ``"groq/llama3-8b-8192"``).
        provider: The provider the map names (``"openai"``, ``"groq"``...).
        max_input_tokens: The context window in tokens, if the map says.
        input_cost: USD per prompt token, if known.
        output_cost: USD per completion token, if known.
        cached_input_cost: USD per prompt token read from the provider's prompt cache
            (the map's ``cache_read_input_token_cost``).
        supports_response_schema: Whether the model takes a JSON schema as
            ``response_format``.
        supports_function_calling: Whether the model takes ``tools=`` and answers with
            tool calls.
        supports_reasoning: Whether the model reasons before it answers (and takes
            ``reasoning_effort=``).
        cache_write_cost: USD per prompt token written to the provider's prompt cache
            (the map's ``cache_creation_input_token_cost``).
    """

    key: str
    provider: str | None
    max_input_tokens: int | None
    input_cost: float | None
    output_cost: float | None
    cached_input_cost: float | None
    supports_response_schema: bool
    supports_function_calling: bool = False
    supports_reasoning: bool = False
    cache_write_cost: float | None = None


def model_map() -> dict[str, Any]:
    """The model map litellm ships, read once (empty if its file cannot be found)."""
    global _MAP
    if _MAP is None:
        with _LOCK:
            if _MAP is None:
                _MAP = _read_map()
    return _MAP


def _read_map() -> dict[str, Any]:
    # find_spec of a top-level package locates it without running its __init__.
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / _MAP_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # a broken install: no metadata, never a failed call
        return {}
    return data if isinstance(data, dict) else {}


def model_entry(model: str) -> tuple[str, dict[str, Any]] | None:
    """The map's key and raw entry for a model string such as ``"openai/gpt-4o-mini"``.

    The whole string is looked up first, then the name without its provider prefix
    (``"openai/gpt-4o-mini"`` is the map's ``"gpt-4o-mini"``).
    """
    table = model_map()
    candidates = [model]
    if "/" in model:
        candidates.append(model.split("/", 1)[1])
    for key in candidates:
        entry = table.get(key)
        if isinstance(entry, dict) and key != "sample_spec":
            return key, entry
    return None


@functools.cache
def largest_context_window() -> tuple[int, str] | None:
    """The most input tokens any chat model of the map takes, and that model's name.

    What a fine-tuning file is checked against when no model is named: a row longer than
    this fits no model at all. ``None`` when the map cannot be read.
    """
    windows = (
        (entry["max_input_tokens"], name)
        for name, entry in model_map().items()
        if isinstance(entry, dict)
        and entry.get("mode") == "chat"
        and isinstance(entry.get("max_input_tokens"), int)
    )
    return max(windows, default=None)


# litellm's price map has no training prices today; these keys are read if it gains them.
_TRAINING_PRICE_KEYS = ("training_cost_per_token", "fine_tuning_cost_per_token")


def training_price(model: str) -> float | None:
    """USD per training token of ``model`` in the map, if the map has one."""
    found = model_entry(model)
    info = found[1] if found else {}
    for key in _TRAINING_PRICE_KEYS:
        price = info.get(key)
        if price:
            return float(price)
    return None


@functools.lru_cache(maxsize=1024)
def model_info(model: str) -> ModelInfo | None:
    """What the map says of a model string (looked up as `model_entry` does), or None."""
    found = model_entry(model)
    if found is None:
        _log_once(
            model,
            "unknown",
            "model %r is not in litellm's model map: its context window and prices are "
            "unknown, so its cost is None and a prompt is cut to its window only with "
            "LM(..., context_window=N)",
        )
        return None
    return _info(*found)


def _info(key: str, entry: dict[str, Any]) -> ModelInfo:
    def number(name: str) -> float | None:
        value = entry.get(name)
        return float(value) if isinstance(value, (int, float)) else None

    window = entry.get("max_input_tokens")
    return ModelInfo(
        key=key,
        provider=entry.get("litellm_provider"),
        max_input_tokens=int(window) if isinstance(window, (int, float)) and window else None,
        input_cost=number("input_cost_per_token"),
        output_cost=number("output_cost_per_token"),
        cached_input_cost=number("cache_read_input_token_cost"),
        supports_response_schema=bool(entry.get("supports_response_schema")),
        supports_function_calling=bool(entry.get("supports_function_calling")),
        supports_reasoning=bool(entry.get("supports_reasoning")),
        cache_write_cost=number("cache_creation_input_token_cost"),
    )


def _log_once(model: str, kind: str, message: str) -> None:
    with _LOCK:
        if (model, kind) in _LOGGED:
            return
        _LOGGED.add((model, kind))
    logger().info(message, model)


def cost_of(model: str, usage: Usage) -> float | None:
    """What ``usage`` costs in USD by the map's per-token prices, or None if unknown.

    Prompt tokens read from the provider's prompt cache are priced at the cached rate, and
    those written to it at the cache-write rate, when the map has them (see
    `ModelProfile.cost`).
    """
    info = model_info(model)
    if info is None:
        return None  # logged by model_info
    if info.input_cost is None or info.output_cost is None:
        _log_once(
            model,
            "unpriced",
            "litellm's model map has no price for model %r: its cost is None",
        )
        return None
    prices = ModelProfile(
        input_cost=info.input_cost,
        output_cost=info.output_cost,
        cached_input_cost=info.cached_input_cost,
        cache_write_cost=info.cache_write_cost,
    )
    return prices.cost(usage)


def map_profile(model: str) -> ModelProfile:
    """What litellm's map says a model supports and costs (`TEXT_ONLY` if it is unknown).

    Schema support, tools, parallel tool calls, reasoning, the context window, the longest
    answer and the prices; JSON object mode, usage in streams and logprobs are not in the
    map (the transport says: `direct_profile`, `structio.lm._litellm.model_capabilities`).
    An unknown model is logged once, as `model_info` does.
    """
    if model_info(model) is None:  # logs an unknown model once
        return TEXT_ONLY
    found = model_entry(model)
    if found is None:
        return TEXT_ONLY
    profile = profile_from_entry(found[1])
    if _fixed_sampling(found[0], found[1]):
        return profile.replace(sampling=False)
    return profile


def _fixed_sampling(name: str, entry: Mapping[str, Any]) -> bool:
    """Whether the map's model is one of OpenAI's reasoning models, which take no temperature.

    o1, o3, o4-mini and gpt-5 answer a ``temperature`` other than 1 with a 400; their chat
    variants (``gpt-5-chat-latest``) do not reason by default and take one.
    """
    return (
        entry.get("litellm_provider") in ("openai", "azure")
        and bool(entry.get("supports_reasoning"))
        and "chat" not in name.rsplit("/", 1)[-1]
    )


def direct_profile(model: str) -> ModelProfile:
    """A model as the direct (OpenAI-compatible) transport serves it.

    The map's profile, plus what every server of that transport does: each takes
    ``response_format={"type": "json_object"}`` and reports usage at the end of a stream
    when asked (the transport always asks). Logprobs are claimed for the providers known to
    return them (OpenAI, Azure, Together, Fireworks, DeepSeek); a local server's are for
    ``LM(..., profile={"logprobs": True})`` to say. An Anthropic model (served by the
    ``"anthropic"`` transport) has neither JSON object mode nor logprobs.
    """
    base = map_profile(model)
    found = model_entry(model)
    provider = found[1].get("litellm_provider") if found is not None else None
    if provider is None and "/" in model:
        provider = model.split("/", 1)[0]
    if provider == "anthropic":
        # Anthropic's Messages API (`structio.lm._anthropic`): no JSON object mode and no
        # logprobs; every stream reports usage unasked; a tool-using model calls several
        # tools in one answer (the map does not say so of Claude).
        return base.replace(
            json_object=False,
            stream_usage=True,
            logprobs=False,
            parallel_tool_calls=base.tools or base.parallel_tool_calls,
        )
    return base.replace(
        json_object=True,
        stream_usage=True,
        logprobs=provider in _LOGPROBS_PROVIDERS,
    )
