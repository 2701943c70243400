"""`History`: earlier turns of a conversation, as an input of a signature."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["History"]


class History:
    """Earlier turns of a conversation, given to a signature as an input.

    Each message is a dict keyed by the signature's field names: its inputs become a user
    turn and its outputs an assistant turn, placed after the demos and before the final user
    message. A message with only inputs gives only a user turn; one with only outputs gives
    only an assistant turn. Keys that are not fields of the signature are ignored.

    Example:
        >>> History(messages=[{"question": "2+2?", "answer": "4"}])
        History(messages=[{'question': '2+2?', 'answer': '4'}])
    """

    __slots__ = ("messages",)

    messages: list[dict[str, Any]]

    def __init__(self, messages: Iterable[Mapping[str, Any]] = ()) -> None:
        """Create a history.

        Args:
            messages: The turns, oldest first; each a mapping of field name to value.

        Raises:
            TypeError: A message is not a mapping.
        """
        if isinstance(messages, (str, bytes, Mapping)):
            raise TypeError(
                "History(messages=...) takes a list of dicts, one per turn, "
                f"not a {type(messages).__name__}"
            )
        checked: list[dict[str, Any]] = []
        for index, message in enumerate(messages):
            if not isinstance(message, Mapping):
                raise TypeError(
                    f"History message {index} must be a dict of field name to value, "
                    f"not {type(message).__name__}: {message!r}"
                )
            checked.append(dict(message))
        object.__setattr__(self, "messages", checked)

    @classmethod
    def coerce(cls, value: Any) -> History:
        """Return ``value`` as a History: a History, ``{"messages": [...]}`` or a list of dicts.

        Raises:
            TypeError: The value cannot be read as a history.
        """
        if isinstance(value, History):
            return value
        if isinstance(value, Mapping):
            if set(value) != {"messages"}:
                raise TypeError(
                    "a history given as a dict must have exactly one key, 'messages'; "
                    f"got keys {sorted(map(str, value))}"
                )
            return cls(value["messages"])
        if value is None:
            return cls()
        return cls(value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("History is immutable; build a new one: History(messages=[...])")

    def __len__(self) -> int:
        return len(self.messages)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, History):
            return NotImplemented
        return self.messages == other.messages

    __hash__ = None  # type: ignore[assignment]  # equal by value, and the messages are mutable

    def __repr__(self) -> str:
        return f"History(messages={self.messages!r})"
