"""What a model call returns: completions, token usage and cost; or a stream of them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Union, overload

__all__ = [
    "AsyncLMStream",
    "Completion",
    "LMResponse",
    "LMStream",
    "LogprobsPiece",
    "ReasoningPiece",
    "StreamItem",
    "StreamPiece",
    "ToolCallPiece",
    "Usage",
    "response_pieces",
]


@dataclass(frozen=True)
class Usage:
    """Token counts of one or more requests (zero for cache hits).

    Attributes:
        prompt_tokens: Tokens of the request.
        completion_tokens: Tokens the model wrote, its reasoning included.
        cached_tokens: Prompt tokens read from the provider's prompt cache (part of
            ``prompt_tokens``).
        cache_write_tokens: Prompt tokens written to the provider's prompt cache (part of
            ``prompt_tokens``; Anthropic's ``cache_creation_input_tokens``), which some
            providers price above other prompt tokens.
        reasoning_tokens: Completion tokens a reasoning model spent thinking
            (``usage.completion_tokens_details.reasoning_tokens``). OpenAI and the servers
            that follow it count them inside ``completion_tokens`` already, so they are
            never added to the total or priced a second time.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    def as_openai(self) -> dict[str, Any]:
        """The counts under the names of OpenAI's ``usage`` (and so litellm's and DSPy's).

        Tokens written to the cache, when there are any, under litellm's name
        (``cache_creation_input_tokens``).
        """
        usage: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens},
            "completion_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
        }
        if self.cache_write_tokens:
            # litellm's name for tokens written to the cache (Anthropic's, there).
            usage["cache_creation_input_tokens"] = self.cache_write_tokens
        return usage

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Usage:
        """Token counts from `dataclasses.asdict` data; a count not stored there is zero.

        Entries cached before a count existed (``reasoning_tokens``,
        ``cache_write_tokens``) still load.
        """
        return cls(**{f.name: int(data.get(f.name) or 0) for f in fields(cls)})


@dataclass(frozen=True)
class Completion:
    """One choice of a model response.

    Attributes:
        text: The completion text ('' when the model answered only with tool calls).
        finish_reason: Why generation stopped: ``"stop"``, ``"length"`` (cut off by
            ``max_tokens``), ``"tool_calls"``... (``None`` if the provider did not say).
        tool_calls: OpenAI-style tool calls (``{"id", "type", "function": {"name",
            "arguments"}}``), when the provider sent any.
        reasoning: A reasoning model's own reasoning, when the provider returns it apart
            from the answer: the message's ``reasoning_content`` (DeepSeek, litellm) or
            ``reasoning`` (vLLM, OpenRouter), or through litellm the text of Anthropic's
            thinking blocks. Never part of `text`.
        logprobs: The log probability of each token of the text, when asked for
            (``logprobs=True``, ``top_logprobs=k``) and returned: OpenAI's
            ``choice.logprobs.content`` entries (``{"token", "logprob", "bytes",
            "top_logprobs"}``) as the provider sent them, streamed or not.
    """

    text: str
    finish_reason: str | None = None
    tool_calls: tuple[Mapping[str, Any], ...] | None = None
    # Last, so that positional constructions written before them keep their meaning.
    reasoning: str | None = None
    logprobs: tuple[Mapping[str, Any], ...] | None = None
    reasoning_items: tuple[Mapping[str, Any], ...] | None = None

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
                "reasoning": c.reasoning,
                "logprobs": list(c.logprobs) if c.logprobs is not None else None,
                "reasoning_items": (
                    list(c.reasoning_items) if c.reasoning_items is not None else None
                ),
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
                reasoning=c.get("reasoning"),
                logprobs=tuple(c["logprobs"]) if c.get("logprobs") is not None else None,
                reasoning_items=(
                    tuple(c["reasoning_items"]) if c.get("reasoning_items") is not None else None
                ),
            )
            for c in data["completions"]
        )
        return cls(
            completions=completions,
            model=data["model"],
            usage=Usage.from_dict(data.get("usage") or {}),
            cost=data.get("cost"),
            cached=bool(data.get("cached", False)),
            latency=float(data.get("latency", 0.0)),
        )

    def as_cache_hit(self, latency: float) -> LMResponse:
        """This response as served from the cache: no tokens billed, zero cost."""
        return replace(self, usage=Usage(), cost=0.0, cached=True, latency=latency)


class ReasoningPiece:
    """New reasoning text of the first choice, as the provider streams it apart from the answer.

    ``reasoning_content`` deltas, Anthropic's thinking, Gemini's thoughts, a Responses
    reasoning summary. Given by ``lm.stream(..., pieces=True)`` only.

    Attributes:
        text: The new text.
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ReasoningPiece) and other.text == self.text

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ReasoningPiece({self.text!r})"


class ToolCallPiece:
    """New argument text of one of the first choice's tool calls, as it is streamed.

    Given by ``lm.stream(..., pieces=True)`` only.

    Attributes:
        index: The call's position among the choice's tool calls.
        name: The tool's name (as far as it has come; providers send it first).
        arguments: The new text of its JSON arguments.
    """

    __slots__ = ("arguments", "index", "name")

    def __init__(self, index: int, name: str, arguments: str) -> None:
        self.index = index
        self.name = name
        self.arguments = arguments

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolCallPiece) and (other.index, other.name, other.arguments) == (
            self.index,
            self.name,
            self.arguments,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ToolCallPiece({self.index}, {self.name!r}, {self.arguments!r})"


class LogprobsPiece:
    """Token log probabilities of the first choice's new text, in OpenAI's entry shape.

    Given by ``lm.stream(..., pieces=True)`` only, before the text they are of; what a
    stream's `FieldValue` confidence is read from.

    Attributes:
        entries: ``{"token", "logprob", "bytes", "top_logprobs"}`` per token.
    """

    __slots__ = ("entries",)

    def __init__(self, entries: tuple[Mapping[str, Any], ...]) -> None:
        self.entries = entries

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LogprobsPiece) and other.entries == self.entries

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LogprobsPiece({len(self.entries)} tokens)"


StreamPiece = Union[str, ReasoningPiece, ToolCallPiece, LogprobsPiece]  # noqa: UP007 - a runtime alias on 3.10
"""What a transport's stream yields before its end: text, reasoning and tool-call pieces."""

StreamItem = Union[str, ReasoningPiece, ToolCallPiece, LogprobsPiece, LMResponse]  # noqa: UP007 - 3.10
"""What an LM stream yields: text (and, when asked, reasoning and tool-call pieces) as it
comes, then the whole `LMResponse`."""


def response_pieces(response: LMResponse, texts: Iterable[str]) -> Iterator[StreamItem]:
    """A whole response as a stream brings it: reasoning, the text pieces, tool calls, itself.

    For models and cache hits that have the whole answer at once; ``texts`` is the first
    choice's text cut into pieces.
    """
    first = response.completions[0] if response.completions else None
    if first is not None and first.reasoning:
        yield ReasoningPiece(first.reasoning)
    yield from texts
    for index, call in enumerate((first.tool_calls if first is not None else None) or ()):
        function = call.get("function")
        if isinstance(function, Mapping):
            arguments = function.get("arguments")
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments or {}, ensure_ascii=False)
            yield ToolCallPiece(index, str(function.get("name") or ""), arguments)
    yield response


class LMStream(Iterator[StreamItem]):
    """A model's answer as it is written: text pieces, then the whole `LMResponse`.

    Iterate it: each item is a `str` (new text of the first choice) until the last, which
    is the `LMResponse` (every choice, finish reasons, usage, cost), also kept in
    `response`. With ``lm.stream(..., pieces=True)``, `ReasoningPiece`, `ToolCallPiece`
    and `LogprobsPiece` items come too, as the provider streams them. Leaving the loop
    early, or `close`, ends the request (the HTTP response is closed); use it as a context
    manager to be sure of that.

    Example:
        >>> for item in lm.stream(messages):                      # doctest: +SKIP
        ...     if isinstance(item, str):
        ...         print(item, end="")
    """

    def __init__(self, source: Iterator[StreamItem], *, pieces: bool = False) -> None:
        self._source = source
        self._pieces = pieces
        #: The whole response, once the stream has ended (``None`` before).
        self.response: LMResponse | None = None

    def __iter__(self) -> LMStream:
        return self

    def __next__(self) -> StreamItem:
        while True:
            item = next(self._source)
            if isinstance(item, str) or self._pieces:
                break
            if isinstance(item, LMResponse):
                break
        if isinstance(item, LMResponse):
            self.response = item
        return item

    def close(self) -> None:
        """Stop reading: the request ends and its connection is closed."""
        close = getattr(self._source, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> LMStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncLMStream(AsyncIterator[StreamItem]):
    """Async form of `LMStream`: ``async for item in lm.astream(messages)``.

    Breaking out of an ``async for`` does not close an async iterator at once; use
    ``async with lm.astream(...) as stream`` (or call `aclose`) to end the request there.
    """

    def __init__(self, source: AsyncIterator[StreamItem], *, pieces: bool = False) -> None:
        self._source = source
        self._pieces = pieces
        #: The whole response, once the stream has ended (``None`` before).
        self.response: LMResponse | None = None

    def __aiter__(self) -> AsyncLMStream:
        return self

    async def __anext__(self) -> StreamItem:
        while True:
            item = await self._source.__anext__()
            if isinstance(item, str) or self._pieces:
                break
            if isinstance(item, LMResponse):
                break
        if isinstance(item, LMResponse):
            self.response = item
        return item

    async def aclose(self) -> None:
        """Stop reading: the request ends and its connection is closed."""
        close = getattr(self._source, "aclose", None)
        if close is not None:
            await close()

    async def __aenter__(self) -> AsyncLMStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
