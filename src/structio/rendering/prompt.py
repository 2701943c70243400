"""Prompts as named parts: token counts, and truncation that keeps the prefix cache warm.

A `Prompt` is a sequence of `Part`s (one chat message each). Parts with a
``truncation_priority`` above 0 may be dropped to fit a token limit; the rule is Prompt
Poet's, so that over a long chat consecutive prompts share the longest possible prefix and
the provider's prefix cache stays warm.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union

from structio.exceptions import ConfigurationError, MediaError, TruncationError
from structio.media import has_markers, split_markers
from structio.rendering.tokens import (
    DEFAULT_ENCODING,
    EncodeFunc,
    Tokenizer,
    content_text,
    get_tokenizer,
)

__all__ = [
    "Content",
    "Part",
    "PartSection",
    "Prompt",
    "Truncation",
    "auto_truncation_step",
    "part_messages",
]

TruncationStep = int | Literal["auto"]


Content = Union[str, list[dict[str, Any]], None]  # noqa: UP007 - a runtime alias on 3.10
"""A message's content: text, OpenAI content parts (text and media), or ``None``."""


@dataclass(frozen=True, slots=True)
class PartSection:
    """A named piece of a part's text, its tokens counted on their own.

    A template part written with Prompt Poet's ``sections:`` (instead of ``content:``)
    has one per section; the part's text is theirs joined. `Prompt.section_tokens` counts
    each, to show what a long part spends its tokens on.

    Attributes:
        name: The section's name.
        text: The section's text (spaces and tabs around it stripped, newlines kept).
        tokens: Its tokens, given instead of encoding its text (a token override);
            ``None`` (the default) encodes the text.
    """

    name: str
    text: str
    tokens: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class Part:
    """One named message of a prompt.

    A user part whose text holds media (an `Image`, `Audio` or `File` rendered into it)
    becomes OpenAI content parts: the text around each media value, and the media's own
    part, in order.

    Attributes:
        name: What the part is (``"system"``, ``"history_3_user"``, ``"user"``...).
        role: The chat role: ``"system"``, ``"user"`` or ``"assistant"`` (or ``"developer"``,
            ``"tool"``).
        content: The message text; content parts when it holds media; ``None`` for an
            assistant message that only calls tools.
        truncation_priority: 0 (the default) never drops the part; parts with higher
            numbers are dropped first when the prompt must fit a token limit.
        extra: Other keys of the message, as ``(key, value)`` pairs: an assistant's
            ``tool_calls``, a tool result's ``tool_call_id``.
        tokens: The part's tokens, given instead of encoding its text (Prompt Poet's token
            override: counts and truncation use them, the message still sends the text);
            ``None`` (the default) encodes the text.
        sections: The named pieces the text was written as (a template's ``sections:``);
            empty for a part written whole. Truncation drops whole parts, never sections.
    """

    name: str
    role: str
    content: Content
    truncation_priority: int = 0
    extra: tuple[tuple[str, Any], ...] = ()
    tokens: tuple[int, ...] | None = None
    sections: tuple[PartSection, ...] = ()

    def __post_init__(self) -> None:
        content = self.content
        if type(content) is str and has_markers(content):
            if self.role != "user":
                raise MediaError(
                    f"prompt part {self.name!r} ({self.role}) holds an image, audio or file; "
                    "models take media only in user messages: make the field an input"
                )
            object.__setattr__(self, "content", split_markers(content))

    @property
    def text(self) -> str:
        """The part's text: its content, or the text of its content parts (media left out)."""
        content = self.content
        return content if type(content) is str else content_text(content)

    @property
    def message(self) -> dict[str, Any]:
        """The part as an OpenAI-style chat message."""
        content = self.content
        if type(content) is list:  # a copy: the caller may change it, the part is shared
            content = [dict(p) for p in content]
        message = {"role": self.role, "content": content}
        if self.extra:
            message.update(self.extra)
        return message


@dataclass(frozen=True, slots=True)
class Truncation:
    """What truncating a prompt before a model call removed, and why.

    Attributes:
        reason: ``"max_prompt_tokens"`` (the budget asked for), or ``"context_window"``
            (the provider said the prompt was too long; it was cut to the model's limit and
            sent once more).
        token_limit: The budget the prompt was cut to.
        tokens_before: The prompt's tokens before.
        tokens_after: Its tokens after.
        dropped: The names of the parts removed, oldest first.
    """

    reason: Literal["max_prompt_tokens", "context_window"]
    token_limit: int
    tokens_before: int
    tokens_after: int
    dropped: tuple[str, ...]


def part_messages(parts: Iterable[Part]) -> list[dict[str, Any]]:
    """Parts as OpenAI-style chat messages, one per part (see `Part.message`)."""
    return [
        {"role": p.role, "content": p.content}
        if type(p.content) is str and not p.extra
        else p.message
        for p in parts
    ]


class Prompt:
    """An ordered list of parts, with tokens counted and truncation to a budget.

    Args:
        parts: The parts, in order.
        encoding: A tiktoken encoding name; ``o200k_base`` and ``cl100k_base`` work offline.
        encode_func: Your own tokenizer, ``str -> list[int]`` (overrides ``encoding``).

    Token counts are cached per part content (shared by every prompt using the same
    encoding), so re-rendering a growing chat each turn encodes only the new messages.
    """

    __slots__ = ("_counts", "_encode_func", "_encoding", "_parts", "_tokenizer", "dropped")

    def __init__(
        self,
        parts: Iterable[Part],
        *,
        encoding: str = DEFAULT_ENCODING,
        encode_func: EncodeFunc | None = None,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        self._parts: tuple[Part, ...] = tuple(parts)
        for index, part in enumerate(self._parts):
            if not isinstance(part, Part):
                raise TypeError(f"prompt part {index} must be a Part, not {type(part).__name__}")
        # Resolved at first use: building a prompt (format() does, every call) must not load
        # a tokenizer.
        self._tokenizer = tokenizer
        self._encoding = encoding
        self._encode_func = encode_func
        self._counts: list[int] | None = None
        self.dropped: tuple[Part, ...] = ()
        """The parts `truncate` removed to produce this prompt (oldest first)."""

    def __repr__(self) -> str:
        names = ", ".join(p.name for p in self._parts)
        return f"Prompt([{names}])"

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer counting this prompt's tokens."""
        if self._tokenizer is None:
            self._tokenizer = get_tokenizer(self._encoding, self._encode_func)
        return self._tokenizer

    def __len__(self) -> int:
        return len(self._parts)

    @property
    def parts(self) -> tuple[Part, ...]:
        """The parts, in order."""
        return self._parts

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The parts as OpenAI-style chat messages, one per part."""
        return part_messages(self._parts)

    @property
    def string(self) -> str:
        """The whole prompt as one string: the contents joined with no separator."""
        return "".join(p.text for p in self._parts)

    def tokenize(self) -> list[int]:
        """The tokens of the prompt: each part's tokens, in order."""
        tokens: list[int] = []
        for part in self._parts:
            given = part.tokens
            tokens.extend(self.tokenizer.encode(part.text) if given is None else given)
        return tokens

    @property
    def tokens(self) -> list[int]:
        """The tokens of the prompt (see `tokenize`)."""
        return self.tokenize()

    @property
    def part_tokens(self) -> list[int]:
        """How many tokens each part has."""
        if self._counts is None:
            count = self.tokenizer.count
            self._counts = [
                count(p.text) if p.tokens is None else len(p.tokens) for p in self._parts
            ]
        return list(self._counts)

    @property
    def section_tokens(self) -> dict[str, dict[str, int]]:
        """How many tokens each section of each part has, by part name and section name.

        A part without sections counts as one entry, ``"_part_total"``, as in Prompt
        Poet's ``get_section_token_counts``. Each section is encoded on its own, so the
        sections of a part may add up to a token or two more or less than the part.
        """
        count = self.tokenizer.count
        return {
            part.name: {
                section.name: count(section.text) if section.tokens is None else len(section.tokens)
                for section in part.sections
            }
            if part.sections
            else {"_part_total": total}
            for part, total in zip(self._parts, self.part_tokens, strict=True)
        }

    @property
    def token_count(self) -> int:
        """How many tokens the prompt has: the sum over its parts' contents.

        This is `count_chat` with no framing; ``count_chat(prompt.messages, tokenizer,
        OPENAI_FRAMING)`` adds what a chat API adds around each message. Images, audio and
        files are not counted (their cost depends on the provider; see `content_text`).
        """
        return sum(self.part_tokens)

    def truncate(
        self,
        token_limit: int,
        truncation_step: TruncationStep = 0,
        *,
        target_cache_rate: float = 0.9,
    ) -> Prompt:
        """Drop truncatable parts until the prompt fits ``token_limit`` tokens.

        The rule (Prompt Poet's): parts with priority 0 are never dropped. Runs of adjacent
        parts with the same priority form blocks; blocks are taken highest priority first
        (earlier blocks first among equals). A block that fits in what must still be removed
        goes whole; otherwise its parts go one at a time, oldest first, until enough is
        removed.

        With ``truncation_step > 0``, the number of tokens removed is the surplus over the
        limit rounded *up* to a multiple of the step. While the prompt grows by less than a
        step, the same parts are dropped, so each prompt extends the previous one and the
        provider's prefix cache stays warm; the cost is up to a step of unused budget.
        ``"auto"`` chooses the step with `auto_truncation_step`.

        Args:
            token_limit: The most tokens the result may have.
            truncation_step: 0 removes just enough; a positive step fixes the cut point;
                ``"auto"`` picks a step for ``target_cache_rate``.
            target_cache_rate: For ``"auto"``: the share of turns whose prompt should extend
                the previous one.

        Returns:
            A new prompt (this one is unchanged), whose `dropped` lists the removed parts.

        Raises:
            TruncationError: The parts that cannot be dropped exceed the limit on their own;
                the message says by how many tokens.
            ConfigurationError: A limit below 1 or a negative step.
        """
        if isinstance(token_limit, bool) or not isinstance(token_limit, int) or token_limit < 1:
            raise ConfigurationError(f"token_limit must be a positive int, not {token_limit!r}")
        counts = self.part_tokens
        if truncation_step == "auto":
            step = auto_truncation_step(self, token_limit, target_cache_rate=target_cache_rate)
        elif (
            isinstance(truncation_step, int)
            and not isinstance(truncation_step, bool)
            and truncation_step >= 0
        ):
            step = truncation_step
        else:
            raise ConfigurationError(
                f"truncation_step must be 0, a positive int or 'auto', not {truncation_step!r}"
            )
        total = sum(counts)
        surplus = max(0, total - token_limit)
        to_remove = math.ceil(surplus / step) * step if step > 0 else surplus
        drop = _parts_to_drop(self._parts, counts, to_remove) if to_remove else set()
        kept_tokens = total - sum(counts[i] for i in drop)
        if kept_tokens > token_limit:
            fixed = sum(
                c for p, c in zip(self._parts, counts, strict=True) if p.truncation_priority <= 0
            )
            names = ", ".join(p.name for p in self._parts if p.truncation_priority <= 0) or "none"
            raise TruncationError(
                f"cannot fit the prompt in {token_limit:,} tokens: the parts that are never "
                f"dropped ({names}) take {fixed:,} tokens, {fixed - token_limit:,} over the "
                "limit. Raise the limit, shorten those parts, or give more parts a "
                "truncation_priority above 0",
                token_limit=token_limit,
                fixed_tokens=fixed,
            )
        result = Prompt(
            (p for i, p in enumerate(self._parts) if i not in drop), tokenizer=self.tokenizer
        )
        result._counts = [c for i, c in enumerate(counts) if i not in drop]
        result.dropped = tuple(self._parts[i] for i in sorted(drop))
        return result


def _parts_to_drop(parts: Sequence[Part], counts: Sequence[int], to_remove: int) -> set[int]:
    """Indexes of the parts to remove so that at least ``to_remove`` tokens go (if possible)."""
    blocks: list[tuple[int, list[int]]] = []  # (priority, part indexes), in document order
    for index, part in enumerate(parts):
        if blocks and blocks[-1][0] == part.truncation_priority and blocks[-1][1][-1] == index - 1:
            blocks[-1][1].append(index)
        else:
            blocks.append((part.truncation_priority, [index]))
    # Highest priority first; the sort is stable, so equal priorities keep document order.
    ordered = sorted((b for b in blocks if b[0] > 0), key=lambda b: -b[0])
    removed = 0
    drop: set[int] = set()
    for _, indexes in ordered:
        if removed >= to_remove:
            break
        block_tokens = sum(counts[i] for i in indexes)
        if removed + block_tokens <= to_remove:
            drop.update(indexes)
            removed += block_tokens
            continue
        for i in indexes:  # oldest first, until enough is removed
            drop.add(i)
            removed += counts[i]
            if removed >= to_remove:
                break
    return drop


def auto_truncation_step(
    prompt: Prompt, token_limit: int, *, target_cache_rate: float = 0.9
) -> int:
    """Choose a truncation step for a target prefix-cache rate.

    The rule: let ``g`` be the tokens a chat turn adds, estimated as twice the mean size of
    the truncatable parts (a user and an assistant message per turn). With step ``s`` the
    cut point moves once every ``s / g`` turns, and only those turns miss the cache, so a
    share ``r`` of cache-friendly turns needs ``s >= g / (1 - r)``. The step is rounded up
    to a power of two and capped at a quarter of the limit (so the prompt still fills about
    seven eighths of it on average). The mean is taken over the whole history, not recent
    messages, because every change of step moves the cut: over a long chat it settles and
    the step stays put. With no truncatable part, 0.
    """
    if not 0 <= target_cache_rate < 1:
        raise ConfigurationError(f"target_cache_rate must be in [0, 1), not {target_cache_rate!r}")
    history = [
        c
        for p, c in zip(prompt.parts, prompt.part_tokens, strict=True)
        if p.truncation_priority > 0
    ]
    if not history:
        return 0
    per_turn = 2 * sum(history) / len(history)
    wanted = max(1.0, per_turn / (1 - target_cache_rate))
    step = 1 << math.ceil(math.log2(wanted))
    return max(1, min(step, token_limit // 4))
