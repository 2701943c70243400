"""What every adapter is asked and gives: hooks, the model it asks, a reading, a message.

`hook` marks the methods subclasses may override; `ModelCapabilities` is what an adapter may
ask of a model (its `ModelProfile`); `Reading` is a parsed completion.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

from structio.exceptions import ConfigurationError
from structio.reasoning import Reasoning

if TYPE_CHECKING:
    from structio.lm.profile import ModelProfile

__all__ = [
    "NONE_OPEN",
    "Message",
    "ModelCapabilities",
    "Reading",
    "hook",
    "native_tools_option",
    "refuse_callbacks",
    "set_native_options",
]

Message = dict[str, Any]
"""An OpenAI-style chat message: ``{"role": "system" | "user" | "assistant", "content": str}``."""

F = TypeVar("F", bound=Callable[..., Any])


def hook(method: F) -> F:
    """Mark a method as a documented extension point that subclasses may override.

    Hooks may call ``super()``; the base implementations never call back into an override
    of the same hook, so an override that extends the default cannot recurse.
    """
    method.__structio_hook__ = True  # type: ignore[attr-defined]
    return method


class ModelCapabilities(Protocol):
    """What an adapter may ask of a model when it chooses request parameters: its profile.

    Every `BaseLM` is one (`BaseLM.profile`); so is any object with a ``profile``.
    """

    @property
    def profile(self) -> ModelProfile:
        """What the model supports: structured output, tools, reasoning, limits."""
        ...


NONE_OPEN: frozenset[str] = frozenset()


class Reading(NamedTuple):
    """A parsed completion: the typed outputs, which reader found them, which were open.

    ``open_fields`` are outputs whose text ran to the end of the completion with nothing to
    close it: complete only if the model stopped by itself.
    """

    values: dict[str, Any]
    reader: str
    open_fields: frozenset[str] = frozenset()


def native_tools_option(
    native_tools: bool | None, use_native_function_calling: bool | None
) -> bool | None:
    """``native_tools``, also given by DSPy's name for it, ``use_native_function_calling``.

    Raises:
        ValueError: Both are given.
    """
    if use_native_function_calling is None:
        return native_tools
    if native_tools is not None:
        raise ValueError("give native_tools or use_native_function_calling (DSPy's name), not both")
    return use_native_function_calling


def native_reasoning_option(
    native_reasoning: bool | None, native_response_types: Sequence[Any] | None
) -> bool | None:
    """``native_reasoning``, also given as DSPy's ``native_response_types``.

    DSPy's list names the output types filled from a model's native features; `Reasoning`
    is the one structio has. A list with it is the default (native when the model returns
    its reasoning); a list without it is ``native_reasoning=False``.

    Raises:
        ConfigurationError: Both are given, or the list names another type.
    """
    if native_response_types is None:
        return native_reasoning
    if native_reasoning is not None:
        raise ConfigurationError(
            "give native_reasoning or native_response_types (DSPy's), not both"
        )
    others = [t for t in native_response_types if t is not Reasoning]
    if others:
        raise ConfigurationError(
            f"native_response_types: structio fills only Reasoning from a model's native "
            f"features, not {', '.join(getattr(t, '__name__', repr(t)) for t in others)}; "
            "a Reasoning output is native whenever the model returns its reasoning "
            "(native_reasoning=False reads it from the answer's text)"
        )
    return None if native_response_types else False


def refuse_callbacks(callbacks: Sequence[Any] | None) -> None:
    """Refuse DSPy's per-adapter ``callbacks=`` (none given is fine), saying structio's way.

    Raises:
        ConfigurationError: Callbacks were given.
    """
    if callbacks:
        raise ConfigurationError(
            "structio's adapters take no callbacks: pass them to every call with "
            "structio.configure(callbacks=[...]) or structio.context(callbacks=[...])"
        )


def set_native_options(
    adapter: object, native_tools: bool | None, native_reasoning: bool | None
) -> None:
    """Keep an adapter's native options, each only when chosen.

    A default (``None``) is not stored, so an adapter made without them saves, prints and
    compares as before they existed; `Adapter.native` reads a missing one as ``None``.
    """
    for name, value in (("native_tools", native_tools), ("native_reasoning", native_reasoning)):
        if value is not None and not isinstance(value, bool):
            raise ValueError(f"{name} must be True, False or None, not {value!r}")
        if value is not None:
            setattr(adapter, name, value)
