"""`FakeLM`: a scripted model for tests, which records what it was sent."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from structio.exceptions import ConfigurationError
from structio.lm.base import BaseLM
from structio.lm.types import Completion, LMResponse

__all__ = ["FakeCall", "FakeLM"]

Scripted = Union[str, Mapping[str, Any], Completion]  # noqa: UP007 - a runtime alias on 3.10
Reply = Union[Scripted, Sequence[Scripted]]  # noqa: UP007


@dataclass(frozen=True)
class FakeCall:
    """One call received by a `FakeLM`: the messages and the per-call parameters."""

    messages: list[dict[str, Any]]
    params: dict[str, Any]

    @property
    def prompt(self) -> str:
        """The content of the last message (usually the user's request)."""
        content = self.messages[-1].get("content", "") if self.messages else ""
        return content if isinstance(content, str) else json.dumps(content)


class FakeLM(BaseLM):
    """A model that answers from a script, for tests: no network, no API key.

    Each call takes the next scripted reply, or asks the function for one. A reply is:

    - a string: the completion text;
    - a dict of output values: written in the format the prompt asks for (a JSON object
      when the system message asks for JSON, ``[[ ## field ## ]]`` sections otherwise);
    - a `Completion` (to script a finish reason such as ``"length"``);
    - a list of the above: one completion per choice, for ``n > 1`` (a single reply is
      repeated ``n`` times).

    Example:
        >>> lm = FakeLM([{"answer": "Paris"}])
        >>> lm.calls  # what it received, after use
        []

    Args:
        replies: A list of replies, used in order, or a function of the messages that
            returns a reply.
        model: The name reported in history and errors.
    """

    def __init__(
        self,
        replies: Iterable[Reply] | Callable[[list[dict[str, Any]]], Reply],
        *,
        model: str = "fake",
    ) -> None:
        super().__init__(model)
        self._function: Callable[[list[dict[str, Any]]], Reply] | None = None
        self._script: list[Reply] = []
        if callable(replies):
            self._function = replies
        elif isinstance(replies, (str, Mapping)):
            self._script = [replies]
        else:
            self._script = list(replies)
        self._next = 0
        self._lock = threading.Lock()
        self.calls: list[FakeCall] = []

    def __repr__(self) -> str:
        left = "function" if self._function else f"{len(self._script) - self._next} replies left"
        return f"FakeLM({left}, calls={len(self.calls)})"

    def _complete(self, messages: list[dict[str, Any]], overrides: dict[str, Any]) -> LMResponse:
        with self._lock:
            self.calls.append(FakeCall(messages, dict(overrides)))
            if self._function is not None:
                reply = self._function(messages)
            else:
                if self._next >= len(self._script):
                    raise ConfigurationError(
                        f"FakeLM ran out of scripted replies: it was given {len(self._script)} "
                        f"and this is call {len(self.calls)}; script one reply per call"
                    )
                reply = self._script[self._next]
                self._next += 1
        n = int(overrides.get("n", 1) or 1)
        if isinstance(reply, (str, Mapping, Completion)):
            choices: list[Scripted] = [reply] * n
        else:
            choices = list(reply)
        wants_json = _asks_for_json(messages)
        completions = tuple(_completion(choice, wants_json) for choice in choices)
        return LMResponse(completions=completions, model=self.model)


def _asks_for_json(messages: Sequence[Mapping[str, Any]]) -> bool:
    system = messages[0].get("content", "") if messages else ""
    return isinstance(system, str) and "Outputs will be a JSON object" in system


def _completion(reply: Scripted, wants_json: bool) -> Completion:
    if isinstance(reply, Completion):
        return reply
    if isinstance(reply, str):
        return Completion(text=reply, finish_reason="stop")
    if wants_json:
        from structio.adapters._values import jsonable

        return Completion(text=json.dumps(jsonable(dict(reply)), indent=2), finish_reason="stop")
    from structio.adapters._values import prompt_text

    sections = [f"[[ ## {name} ## ]]\n{prompt_text(value)}" for name, value in reply.items()]
    text = "\n\n".join([*sections, "[[ ## completed ## ]]"])
    return Completion(text=text, finish_reason="stop")
