"""Test doubles: `FakeLM`, a scripted model that records what it was sent.

It lives above the call layer, not in `structio.lm`: a dict reply is written in the format
of the adapter the request came from (the call layer says which, `lm.base.current_origin`),
and the model layer sits below the adapters.
"""

from __future__ import annotations

import functools
import json
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from structio._util.secrets import public_params
from structio.adapters.base import Adapter
from structio.adapters.chat_adapter import ChatAdapter
from structio.exceptions import ConfigurationError
from structio.lm.base import BaseLM, current_origin
from structio.lm.profile import TEXT_ONLY, ProfileOverride, apply_override, check_override
from structio.lm.types import Completion, LMResponse, StreamItem, response_pieces
from structio.signatures.field import OutputField
from structio.signatures.signature import Signature, make_signature

__all__ = ["DEFAULT_RECORD", "FakeCall", "FakeLM"]

# How many calls a `FakeLM` keeps by default: every call a test looks at, and a bounded
# memory for a long run.
DEFAULT_RECORD = 1000
# Where a pickled FakeLM keeps how many calls it records (the calls themselves stay).
_RECORD = "__structio_record__"

Scripted = Union[str, Mapping[str, Any], Completion]  # noqa: UP007 - a runtime alias on 3.10
Reply = Union[Scripted, Sequence[Scripted]]  # noqa: UP007


@dataclass(frozen=True)
class FakeCall:
    """One call received by a `FakeLM`: the messages and the call's parameters (no secrets)."""

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
    - a dict of output values: written as an answer by ``adapter=`` if given, else by the
      adapter the request came from (the call layer says which), else by `ChatAdapter`;
    - a `Completion`, returned as it is (to script a finish reason such as ``"length"``,
      tool calls or reasoning: ``Completion("", tool_calls=(...,), reasoning="...")``);
    - a list of the above: one completion per choice, for ``n > 1`` (a single reply is
      repeated ``n`` times). An empty list scripts a provider that returns no choices:
      that call raises `ServerError`, as `LM` does once its retries are spent.

    The record of what it received is bounded: the last ``record`` calls (1000 by
    default), so a long run, such as a batch over a million inputs, holds no more.

    Streamed (`stream`, `Predict.stream`), a reply comes in pieces of ``chunk_size``
    characters, ``chunk_delay`` seconds apart, as a provider's stream would.

    Example:
        >>> lm = FakeLM([{"answer": "Paris"}])
        >>> list(lm.calls)  # what it received, after use
        []

    Args:
        replies: A list of replies, used in order, or a function of the messages that
            returns a reply.
        model: The name reported in history and errors.
        adapter: The adapter that writes dict replies, whatever the request's adapter.
        record: How many of the latest calls ``calls`` keeps; ``None`` keeps every call,
            ``0`` none.
        chunk_size: Characters per piece when a reply is streamed.
        chunk_delay: Seconds between two streamed pieces.
        profile: What the model claims to support (`BaseLM.profile`): a `ModelProfile`, or
            a dict of the fields to change from one that supports nothing beyond text.
        supports_function_calling: A shortcut for ``profile={"tools": True}``, for tests of
            code that asks whether the model takes tools.
        supports_reasoning: A shortcut for ``profile={"reasoning": True}``.

    Attributes:
        calls: The latest calls received, oldest first, each a `FakeCall`: a
            `collections.deque`, indexed as a list is (``lm.calls[0]``, ``lm.calls[-1]``);
            slice ``list(lm.calls)``.
        call_count: How many calls it received, including those no longer in ``calls``.

    Raises:
        ConfigurationError: ``record`` is not a non-negative int or ``None``,
            ``chunk_size`` is not a positive int, or ``profile`` is not a profile.
    """

    def __init__(
        self,
        replies: Iterable[Reply] | Callable[[list[dict[str, Any]]], Reply],
        *,
        model: str = "fake",
        adapter: Adapter | None = None,
        record: int | None = DEFAULT_RECORD,
        chunk_size: int = 4,
        chunk_delay: float = 0.0,
        profile: ProfileOverride | None = None,
        supports_function_calling: bool = False,
        supports_reasoning: bool = False,
    ) -> None:
        if record is not None and (
            isinstance(record, bool) or not isinstance(record, int) or record < 0
        ):
            raise ConfigurationError(
                f"record must be a non-negative int (or None for every call), not {record!r}"
            )
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
            raise ConfigurationError(f"chunk_size must be a positive int, not {chunk_size!r}")
        base = TEXT_ONLY if profile is None else apply_override(TEXT_ONLY, check_override(profile))
        # The shortcuts only ever add a claim, so a profile given with them keeps the rest.
        if supports_function_calling:
            base = base.replace(tools=True)
        if supports_reasoning:
            base = base.replace(reasoning=True)
        super().__init__(model, profile=base)
        self.adapter = adapter
        self.chunk_size = chunk_size
        self.chunk_delay = chunk_delay
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
        self.calls: deque[FakeCall] = deque(maxlen=record)
        self.call_count = 0

    def __repr__(self) -> str:
        left = "function" if self._function else f"{len(self._script) - self._next} replies left"
        return f"FakeLM({left}, calls={self.call_count})"

    def __getstate__(self) -> dict[str, Any]:
        """What a pickled FakeLM takes along: its script, where it is in it, its settings.

        The calls it received stay here, as an LM's history does: an unpickled FakeLM has
        received none. A function given as ``replies`` pickles as functions do (by name
        with ``pickle``, by value with ``cloudpickle``).
        """
        state = super().__getstate__()
        calls = state.pop("calls")
        state.pop("_lock")
        state["call_count"] = 0
        state[_RECORD] = calls.maxlen
        return state

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        """Restore a pickled FakeLM with a lock of its own and no calls received."""
        attrs = dict(state)
        record = attrs.pop(_RECORD)
        super().__setstate__(attrs)
        self._lock = threading.Lock()
        self.calls = deque(maxlen=record)

    def _complete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> LMResponse:
        with self._lock:
            self.calls.append(FakeCall(messages, public_params(params)))
            self.call_count += 1
            if self._function is not None:
                reply = self._function(messages)
            else:
                if self._next >= len(self._script):
                    raise ConfigurationError(
                        f"FakeLM ran out of scripted replies: it was given {len(self._script)} "
                        f"and this is call {self.call_count}; script one reply per call"
                    )
                reply = self._script[self._next]
                self._next += 1
        n = int(params.get("n", 1) or 1)
        if isinstance(reply, (str, Mapping, Completion)):
            choices: list[Scripted] = [reply] * n
        else:
            choices = list(reply)
        completions = tuple(self._completion(choice) for choice in choices)
        return LMResponse(completions=completions, model=self.model)

    def _stream(
        self, messages: list[dict[str, Any]], params: dict[str, Any]
    ) -> Iterator[StreamItem]:
        response = self._complete(messages, params)
        texts = 0
        for item in response_pieces(response, self._pieces(response.text)):
            if isinstance(item, str):
                texts += 1
                if texts > 1 and self.chunk_delay:
                    import time

                    time.sleep(self.chunk_delay)
            yield item

    async def _astream(
        self, messages: list[dict[str, Any]], params: dict[str, Any]
    ) -> AsyncIterator[StreamItem]:
        import asyncio

        response = self._complete(messages, params)
        texts = 0
        for item in response_pieces(response, self._pieces(response.text)):
            if isinstance(item, str):
                texts += 1
                if texts > 1 and self.chunk_delay:
                    await asyncio.sleep(self.chunk_delay)
            yield item

    def _pieces(self, text: str) -> list[str]:
        size = self.chunk_size
        return [text[start : start + size] for start in range(0, len(text), size)]

    def _completion(self, reply: Scripted) -> Completion:
        if isinstance(reply, Completion):
            return reply
        if isinstance(reply, str):
            return Completion(text=reply, finish_reason="stop")
        return Completion(text=self._written(reply), finish_reason="stop")

    def _written(self, outputs: Mapping[str, Any]) -> str:
        """Output values as the adapter writes an answer (as demos' answers are written)."""
        requested = current_origin()
        adapter: Adapter = self.adapter or ChatAdapter()
        signature: type[Signature] | None = None
        if requested is not None:
            # The call layer sets an adapter and a signature; anything else is not read.
            if self.adapter is None and isinstance(requested[0], Adapter):
                adapter = requested[0]
            if issubclass(requested[1], Signature):
                signature = requested[1]
        if signature is None or not outputs.keys() <= signature.output_fields.keys():
            signature = _outputs_signature(tuple(outputs))
        return adapter.format_assistant_message_content(signature, outputs)


@functools.lru_cache(maxsize=256)
def _outputs_signature(names: tuple[str, ...]) -> type[Signature]:
    """A signature whose outputs are these names, each of any type."""
    fields: dict[str, Any] = {name: (Any, OutputField()) for name in names}
    return make_signature(fields, "Answer.", name="FakeReply")
