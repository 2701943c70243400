"""What a model call returns: completions, token usage and cost."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, overload

__all__ = ["Completion", "LMResponse", "Usage"]


@dataclass(frozen=True)
class Usage:
    """Token counts of one or more requests (zero for cache hits)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
        )


@dataclass(frozen=True)
class Completion:
    """One choice of a model response.

    Attributes:
        text: The completion text ('' when the model answered only with tool calls).
        finish_reason: Why generation stopped: ``"stop"``, ``"length"`` (cut off by
            ``max_tokens``), ``"tool_calls"``... (``None`` if the provider did not say).
        tool_calls: OpenAI-style tool calls (``{"id", "type", "function": {"name",
            "arguments"}}``), when the provider sent any.
    """

    text: str
    finish_reason: str | None = None
    tool_calls: tuple[Mapping[str, Any], ...] | None = None

    @property
    def truncated(self) -> bool:
        """Whether the token limit cut this completion off."""
        return self.finish_reason == "length"


@dataclass(frozen=True)
class LMResponse(Sequence[Completion]):
    """The completions of one request (one per choice, ``n=``), with usage and cost.

    Behaves as a sequence of `Completion`; ``response.text`` is the first completion's text.

    Attributes:
        completions: One `Completion` per choice.
        model: The model string that was called.
        usage: Token counts (zero on a cache hit).
        cost: Cost in USD when litellm knows the model's price (0.0 on a cache hit), else
            ``None``.
        cached: Whether the response came from the cache (no request was made).
        latency: Seconds the call took, including retries.
    """

    completions: tuple[Completion, ...]
    model: str
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None
    cached: bool = False
    latency: float = 0.0

    @property
    def text(self) -> str:
        """The text of the first completion."""
        return self.completions[0].text if self.completions else ""

    @overload
    def __getitem__(self, index: int) -> Completion: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Completion]: ...

    def __getitem__(self, index: int | slice) -> Completion | Sequence[Completion]:
        return self.completions[index]

    def __len__(self) -> int:
        return len(self.completions)

    def __iter__(self) -> Iterator[Completion]:
        return iter(self.completions)

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible data, as stored in the cache."""
        data = asdict(self)
        data["completions"] = [
            {
                "text": c.text,
                "finish_reason": c.finish_reason,
                "tool_calls": list(c.tool_calls) if c.tool_calls is not None else None,
            }
            for c in self.completions
        ]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LMResponse:
        """Rebuild a response from `to_dict` data."""
        completions = tuple(
            Completion(
                text=c["text"],
                finish_reason=c.get("finish_reason"),
                tool_calls=tuple(c["tool_calls"]) if c.get("tool_calls") is not None else None,
            )
            for c in data["completions"]
        )
        return cls(
            completions=completions,
            model=data["model"],
            usage=Usage(**data.get("usage", {})),
            cost=data.get("cost"),
            cached=bool(data.get("cached", False)),
            latency=float(data.get("latency", 0.0)),
        )

    def as_cache_hit(self, latency: float) -> LMResponse:
        """This response as served from the cache: no tokens billed, zero cost."""
        return replace(self, usage=Usage(), cost=0.0, cached=True, latency=latency)
