"""`ModelProfile`: what a model, or the server that serves it, supports.

One value answers every question an adapter or the call layer asks of a model: whether it
takes a JSON schema as ``response_format`` (and which dialect of schema), JSON object mode,
native tools and parallel tool calls, whether it reasons, whether a stream reports usage
(``stream_options={"include_usage": True}``), logprobs, its context window and longest
answer, and its prices.

`LM` derives a model's profile from litellm's bundled model map (see
`structio.lm.models.map_profile`) and takes overrides for any model::

    LM("openai/my-model", api_base=..., profile=ModelProfile(json_schema=True))
    LM("openai/my-model", api_base=..., profile={"tools": True})  # only these fields

A `ModelProfile` replaces the derived profile whole; a dict changes only the fields it
names. ``context_window=`` overrides the window of either.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal, Union

from structio.exceptions import ConfigurationError
from structio.lm.types import Usage

__all__ = [
    "SCHEMA_DIALECTS",
    "SERVER_NAMES",
    "TEXT_ONLY",
    "ModelProfile",
    "ProfileOverride",
    "apply_override",
    "check_override",
    "profile_from_entry",
]

#: The local servers a profile may name (`structio.lm.servers.SERVERS` describes each).
SERVER_NAMES: tuple[str, ...] = ("vllm", "sglang", "llamacpp", "ollama", "lmstudio")

SchemaDialect = Literal["openai-strict", "json-schema", "anthropic", "gemini"]
#: The schema dialects a ``response_format`` of type ``json_schema`` may take (their rules:
#: `structio.typemodel.dialects.DIALECTS`, which names the same ones).
SCHEMA_DIALECTS: tuple[str, ...] = ("openai-strict", "json-schema", "anthropic", "gemini")

# Providers of litellm's map whose models take schemas in their own dialect; a model of any
# other provider takes OpenAI's (the default dialect).
_PROVIDER_DIALECTS: dict[str, SchemaDialect] = {
    "anthropic": "anthropic",
    "vertex_ai-anthropic_models": "anthropic",
    "gemini": "gemini",
    "vertex_ai-language-models": "gemini",
}

_FLAGS = (
    "json_schema",
    "json_object",
    "tools",
    "parallel_tool_calls",
    "reasoning",
    "stream_usage",
    "logprobs",
    "sampling",
)
_COUNTS = ("context_window", "max_output_tokens")
_PRICES = ("input_cost", "output_cost", "cached_input_cost", "cache_write_cost")


@dataclass(frozen=True)
class ModelProfile:
    """What a model (or the server that serves it) supports: one frozen value.

    The default profile supports nothing beyond text: plain prompting, no limits known, no
    prices. `BaseLM.profile` is that unless a model says more.

    Example:
        >>> ModelProfile(json_schema=True).schema_dialect
        'openai-strict'
        >>> ModelProfile().replace(tools=True).tools
        True

    Attributes:
        json_schema: Takes a JSON schema as ``response_format`` (``{"type": "json_schema",
            ...}``).
        schema_dialect: Which schemas ``json_schema`` takes, and tools' parameters follow
            (`structio.typemodel.dialects`): ``"openai-strict"`` (OpenAI's strict subset:
            every property required, no other property allowed), ``"anthropic"``
            (Anthropic's structured outputs: objects closed, no recursion, no numeric or
            length bounds), ``"gemini"`` (Gemini's ``responseJsonSchema``: no ``const``,
            few formats), each sent as it asks (``"strict": true`` for the first two), or
            ``"json-schema"`` (a plain JSON schema for local servers, sent with
            ``"strict": false``). A constraint a dialect lacks is written into the
            description; a schema it cannot express at all falls back to JSON object
            mode. ``None`` when ``json_schema`` is False; when it is True,
            ``"openai-strict"`` by default (the map's Anthropic and Gemini models: theirs).
        json_object: Takes ``response_format={"type": "json_object"}``.
        tools: Takes ``tools=`` and answers with tool calls.
        parallel_tool_calls: Makes several tool calls in one answer.
        reasoning: Reasons before it answers, and returns that reasoning beside the text.
        stream_usage: Reports token usage at the end of a stream when asked with
            ``stream_options={"include_usage": True}``.
        logprobs: Returns token log probabilities (``logprobs=True``).
        sampling: Takes sampling settings other than their defaults (``temperature``,
            ``top_p``). False for OpenAI's reasoning models (o1, o3, o4-mini, gpt-5...),
            which take only ``temperature=1``: another value is logged as a warning once.
        context_window: The most input tokens it takes, if known.
        max_output_tokens: The most tokens it writes in one answer, if known.
        input_cost: USD per prompt token, if known.
        output_cost: USD per completion token, if known.
        cached_input_cost: USD per prompt token read from the provider's prompt cache, if
            known (else prompt tokens are priced at ``input_cost``).
        cache_write_cost: USD per prompt token written to the provider's prompt cache, if
            known (Anthropic: 1.25 times ``input_cost`` for its 5-minute cache; else such
            tokens are priced at ``input_cost``).
        server: The local server that serves the model (``"vllm"``, ``"sglang"``,
            ``"llamacpp"``, ``"ollama"``, ``"lmstudio"``: `structio.lm.servers.SERVERS`),
            whose parameters constrain decoding to a grammar or schema compiled from the
            signature; ``None`` for a hosted model. Set from the model's prefix or
            ``LM(..., server=)``.

    Raises:
        ConfigurationError: A field has a value of the wrong kind (a flag that is not a
            bool, a negative window or price, an unknown schema dialect).
    """

    json_schema: bool = False
    schema_dialect: SchemaDialect | None = None
    json_object: bool = False
    tools: bool = False
    parallel_tool_calls: bool = False
    reasoning: bool = False
    stream_usage: bool = False
    logprobs: bool = False
    sampling: bool = True
    context_window: int | None = None
    max_output_tokens: int | None = None
    input_cost: float | None = None
    output_cost: float | None = None
    cached_input_cost: float | None = None
    cache_write_cost: float | None = None
    server: str | None = None

    def __post_init__(self) -> None:
        for name in _FLAGS:
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ConfigurationError(
                    f"ModelProfile.{name} must be True or False, not {value!r}"
                )
        for name in _COUNTS:
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ConfigurationError(
                    f"ModelProfile.{name} must be a positive int of tokens, or None when "
                    f"unknown, not {value!r}"
                )
        for name in _PRICES:
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0
            ):
                raise ConfigurationError(
                    f"ModelProfile.{name} must be a non-negative number of USD per token, or "
                    f"None when unknown, not {value!r}"
                )
        if self.server is not None and self.server not in SERVER_NAMES:
            raise ConfigurationError(
                f"ModelProfile.server must be one of {', '.join(SERVER_NAMES)} or None, not "
                f"{self.server!r}"
            )
        dialect = self.schema_dialect
        if dialect is not None and dialect not in SCHEMA_DIALECTS:
            raise ConfigurationError(
                f"ModelProfile.schema_dialect must be one of {', '.join(SCHEMA_DIALECTS)} or "
                f"None, not {dialect!r}"
            )
        # A schema-taking model has a dialect, and only one does: each is read alone.
        if self.json_schema and dialect is None:
            object.__setattr__(self, "schema_dialect", "openai-strict")
        elif not self.json_schema and dialect is not None:
            object.__setattr__(self, "schema_dialect", None)

    def replace(self, **changes: Any) -> ModelProfile:
        """A copy with these fields changed (``profile.replace(tools=True)``).

        Turning ``json_schema`` on or off without naming a dialect gives the default
        dialect (``"openai-strict"``) or none; setting it while it is on keeps the dialect.

        Raises:
            ConfigurationError: A name is not a field, or a value does not fit its field.
        """
        _check_names(changes)
        if "json_schema" in changes and "schema_dialect" not in changes:
            # Re-derived from json_schema, unless it stays on: a model's own dialect (an
            # Anthropic model's, from the map) survives a transport saying it takes schemas.
            kept = self.json_schema and changes["json_schema"] is True
            changes["schema_dialect"] = self.schema_dialect if kept else None
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The profile as JSON data: every field by name."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ModelProfile:
        """The profile `to_dict` wrote; a field left out has its default.

        Raises:
            ConfigurationError: The data is not a dict of field names, or a value does not
                fit its field.
        """
        if not isinstance(data, Mapping):
            raise ConfigurationError(
                f"a model profile is a dict of field names to values, not {data!r}"
            )
        _check_names(data)
        return cls(**data)

    def cost(self, usage: Usage) -> float | None:
        """What ``usage`` costs in USD at this profile's prices, or None if they are unknown.

        Prompt tokens read from the provider's prompt cache are priced at
        ``cached_input_cost``, and those written to it at ``cache_write_cost``, when known.
        """
        if self.input_cost is None or self.output_cost is None:
            return None
        cached = min(usage.cached_tokens, usage.prompt_tokens)
        written = min(usage.cache_write_tokens, usage.prompt_tokens - cached)
        cached_rate = (
            self.cached_input_cost if self.cached_input_cost is not None else self.input_cost
        )
        write_rate = self.cache_write_cost if self.cache_write_cost is not None else self.input_cost
        return (
            (usage.prompt_tokens - cached - written) * self.input_cost
            + cached * cached_rate
            + written * write_rate
            + usage.completion_tokens * self.output_cost
        )


#: The profile of a model that supports nothing beyond text (`BaseLM`'s default).
TEXT_ONLY = ModelProfile()

ProfileOverride = Union[ModelProfile, Mapping[str, Any]]  # noqa: UP007 - a runtime alias on 3.10
"""What ``profile=`` takes: a whole `ModelProfile`, or a dict of the fields to change."""


def _check_names(data: Mapping[str, Any]) -> None:
    known = {f.name for f in fields(ModelProfile)}
    unknown = [name for name in data if name not in known]
    if unknown:
        raise ConfigurationError(
            f"{', '.join(map(repr, unknown))}: not a field of ModelProfile; its fields are "
            + ", ".join(sorted(known))
        )


def check_override(value: ProfileOverride | None) -> ProfileOverride | None:
    """A ``profile=`` argument checked now, rather than at the first call.

    A dict is copied (and checked by building a profile from it); a `ModelProfile` is kept.

    Raises:
        ConfigurationError: Neither a `ModelProfile` nor a dict of its fields, or a value
            that does not fit its field.
    """
    if value is None or isinstance(value, ModelProfile):
        return value
    if not isinstance(value, Mapping):
        raise ConfigurationError(
            "profile= takes a ModelProfile (the whole profile) or a dict of the fields to "
            f"change (profile={{'json_schema': True}}), not {type(value).__name__}"
        )
    changes = dict(value)
    TEXT_ONLY.replace(**changes)  # each name and value checked
    return changes


def apply_override(base: ModelProfile, override: ProfileOverride | None) -> ModelProfile:
    """``base`` with an override: a `ModelProfile` replaces it, a dict changes those fields."""
    if override is None:
        return base
    if isinstance(override, ModelProfile):
        return override
    return base.replace(**override)


def profile_from_entry(entry: Mapping[str, Any]) -> ModelProfile:
    """What an entry of litellm's model map says a model supports, and costs.

    JSON object mode and usage in streams are not in the map: they are the transport's to
    say (see `structio.lm.models.direct_profile`). The schema dialect follows the provider:
    Anthropic's and Gemini's models (also on Vertex AI) take theirs, all others OpenAI's.
    """

    def number(name: str, least: float) -> float | None:
        value = entry.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < least:
            return None  # absent, or not a price or size the map could mean
        return float(value)

    def count(name: str) -> int | None:
        value = number(name, 1)
        return int(value) if value is not None else None

    provider = entry.get("litellm_provider")
    return ModelProfile(
        json_schema=bool(entry.get("supports_response_schema")),
        schema_dialect=_PROVIDER_DIALECTS.get(provider) if isinstance(provider, str) else None,
        tools=bool(entry.get("supports_function_calling")),
        parallel_tool_calls=bool(entry.get("supports_parallel_function_calling")),
        reasoning=bool(entry.get("supports_reasoning")),
        context_window=count("max_input_tokens"),
        max_output_tokens=count("max_output_tokens"),
        input_cost=number("input_cost_per_token", 0),
        output_cost=number("output_cost_per_token", 0),
        cached_input_cost=number("cache_read_input_token_cost", 0),
        cache_write_cost=number("cache_creation_input_token_cost", 0),
    )
