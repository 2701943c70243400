"""The events of a streamed call: what a stream says about the outputs while the model writes."""

from __future__ import annotations

from typing import Any

__all__ = [
    "Failed",
    "FieldDelta",
    "FieldItem",
    "FieldValue",
    "ReasoningDelta",
    "Reread",
    "StreamEvent",
]


class StreamEvent:
    """Something a stream says about the outputs while the model writes them.

    Events are immutable, compare by value and match by position
    (``case FieldDelta(name, text)``).
    """

    __slots__ = ()
    __match_args__: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__match_args__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self), self._values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{type(self).__name__}({shown})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")


# Plain classes, not dataclasses: building a frozen dataclass costs a millisecond at import.
class FieldDelta(StreamEvent):
    """New text of a ``str`` output, as it arrives.

    The deltas of a field, joined, are its final value (unless a `Reread` follows).

    Attributes:
        field: The output's name.
        delta: The new text.
    """

    __slots__ = ("delta", "field")
    __match_args__ = ("field", "delta")
    field: str
    delta: str

    def __init__(self, field: str, delta: str) -> None:
        object.__setattr__(self, "field", field)
        object.__setattr__(self, "delta", delta)


class FieldValue(StreamEvent):
    """An output's typed value: given once, when its text is complete, and final.

    The call's result holds this value for this output, unless a `Reread` comes after it
    (the answer is read again) or the stream ends with `Failed` (there is no result).

    Attributes:
        field: The output's name.
        value: The value, as the final `Prediction` holds it.
        confidence: The output's confidence in [0, 1] (``confidence=True``; its meaning:
            `structio.parsing.confidence`), known once the whole answer is: a value given
            while the model writes carries ``None``, one given at the end of the stream
            carries it when known (the result's ``meta.confidence`` holds every output's).
            Metadata, not part of the event: equality, hashing and ``case FieldValue(f,
            v)`` see the field and the value only.
    """

    __slots__ = ("confidence", "field", "value")
    __match_args__ = ("field", "value")
    field: str
    value: Any
    confidence: float | None

    def __init__(self, field: str, value: Any, confidence: float | None = None) -> None:
        object.__setattr__(self, "field", field)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "confidence", confidence)

    def __repr__(self) -> str:
        shown = super().__repr__()
        if self.confidence is None:
            return shown
        return f"{shown[:-1]}, confidence={self.confidence!r})"


class Reread(StreamEvent):
    """The answer is read anew: every event before this one is void.

    Given when the whole completion reads differently from what was streamed (the
    adapter's format could not be read and the fallback read it or asked again), and as
    soon as a late ``</think>`` shows that outputs already given came from a reasoning
    draft (the reasoning given so far then comes again, the draft with it). The events
    after it give every output again, from the start.

    Attributes:
        reason: What happened, in words.
    """

    __slots__ = ("reason",)
    __match_args__ = ("reason",)
    reason: str

    def __init__(self, reason: str) -> None:
        object.__setattr__(self, "reason", reason)


class FieldItem(StreamEvent):
    """One element of a ``list[T]`` output, as soon as it is complete and valid.

    Items come in order, ``index`` 0, 1, 2...; the output's `FieldValue` follows them, its
    list starting with exactly these items. Like a `FieldValue`, an item is final unless a
    `Reread` or `Failed` comes after it.

    Attributes:
        field: The output's name.
        index: The item's position in the list.
        value: The item, validated as ``T``.
    """

    __slots__ = ("field", "index", "value")
    __match_args__ = ("field", "index", "value")
    field: str
    index: int
    value: Any

    def __init__(self, field: str, index: int, value: Any) -> None:
        object.__setattr__(self, "field", field)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "value", value)


class ReasoningDelta(StreamEvent):
    """New text of the model's reasoning, as it arrives; never part of an output.

    From the provider's own reasoning (``reasoning_content``, Anthropic's thinking, Gemini's
    thoughts, a Responses reasoning summary) or from a ``<think>`` draft in the text. Joined,
    the deltas are the reasoning the result keeps (``lm_reasoning``), give or take the
    blank space around a draft.

    Attributes:
        delta: The new text.
    """

    __slots__ = ("delta",)
    __match_args__ = ("delta",)
    delta: str

    def __init__(self, delta: str) -> None:
        object.__setattr__(self, "delta", delta)


class Failed(StreamEvent):
    """The call failed: every event before this one is void, and the error is raised next.

    The last event of a stream that gave events and then ends without a result (an answer
    that could not be read after every re-ask and fallback, a provider error or a timeout
    after text came). The stream raises ``error`` right after it. A stream that fails
    before any event raises at once, with no `Failed`.

    Attributes:
        error: The exception the stream raises.
    """

    __slots__ = ("error",)
    __match_args__ = ("error",)
    error: BaseException

    def __init__(self, error: BaseException) -> None:
        object.__setattr__(self, "error", error)
