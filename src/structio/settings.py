"""Default LM and adapter: set globally with `configure`, or for a scope with `context`.

``structio.settings.lm`` (``.adapter``, ``.callbacks``) reads what is in effect, as
``dspy.settings.lm`` does.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from structio.adapters.base import Adapter
from structio.adapters.chat_adapter import ChatAdapter
from structio.exceptions import ConfigurationError, UnknownSettingError
from structio.lm.base import BaseLM
from structio.lm.params import suggestion

__all__ = [
    "CALLBACK_HOOKS",
    "Settings",
    "check_adapter",
    "check_lm",
    "configure",
    "context",
    "current_settings",
    "resolve_adapter",
    "resolve_lm",
]

#: The methods a callback may have (`structio.Callback` has them all, doing nothing). Named
#: here, below `observe`, so that `configure` can check a callback without importing it.
CALLBACK_HOOKS = ("on_call_start", "on_call_end", "on_parse_error", "on_retry")


class _Unset:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSET"


_UNSET: Any = _Unset()


@dataclass(frozen=True)
class Settings:
    """The defaults a `Predict` uses when a call does not name its own.

    Attributes:
        lm: The language model.
        adapter: The adapter (`ChatAdapter` when ``None``).
        callbacks: What is told of each call (`structio.Callback` objects), in order.
    """

    lm: BaseLM | None = None
    adapter: Adapter | None = None
    callbacks: tuple[Any, ...] = ()


_global = Settings()
_global_lock = threading.Lock()
# A scope set by `context` is seen by its own thread or task (and tasks it starts), never by
# others, so concurrent requests can use different models safely.
_scoped: contextvars.ContextVar[Settings | None] = contextvars.ContextVar(
    "structio_settings", default=None
)


def current_settings() -> Settings:
    """The settings in effect here: the innermost `context`, else the global ones."""
    scoped = _scoped.get()
    return scoped if scoped is not None else _global


# Read as DSPy's ``dspy.settings.lm`` is: the value in effect here, looked up on each read.
_CURRENT = ("lm", "adapter", "callbacks")


def __getattr__(name: str) -> Any:
    """``structio.settings.lm`` (and ``.adapter``, ``.callbacks``): what is in effect here.

    The innermost `context`, else what `configure` set; ``None`` when nothing is set.
    """
    if name in _CURRENT:
        return getattr(current_settings(), name)
    raise AttributeError(f"module 'structio.settings' has no attribute {name!r}")


def resolve_adapter(*given: Adapter | None) -> Adapter:
    """Which adapter: the first given, else the configured one, else a `ChatAdapter`.

    The one rule, used by `Predict`, prompt functions, finetune data and the CLI alike.
    """
    for adapter in given:
        if adapter is not None:
            return adapter
    scoped = _scoped.get()
    configured = (scoped if scoped is not None else _global).adapter
    if configured is not None:
        return configured
    return _DEFAULT_ADAPTER


# The adapter used when none is given or configured. Never mutated by structio; an adapter's
# options are its attributes, so set your own with configure(adapter=...) instead.
_DEFAULT_ADAPTER = ChatAdapter()


def resolve_lm(*given: BaseLM | None, who: str = "this call") -> BaseLM:
    """Which model: the first given, else the configured one.

    Raises:
        ConfigurationError: There is none; the message says how to give one.
    """
    for lm in given:
        if lm is not None:
            return lm
    configured = current_settings().lm
    if configured is None:
        raise ConfigurationError(
            f"no LM to call for {who}: pass lm=, or set one with "
            "structio.configure(lm=structio.LM('openai/gpt-4o-mini'))"
        )
    return configured


def _refuse_unknown(where: str, unknown: dict[str, Any]) -> None:
    """Raise `UnknownSettingError` for the first of ``unknown``'s keys, if there are any."""
    if not unknown:
        return
    name = next(iter(unknown))
    listed = ", ".join(f"`{n}`" for n in _CURRENT)
    raise UnknownSettingError(
        f"{where}() has no setting `{name}`{suggestion(name, _CURRENT) or '.'} The settings are "
        f"{listed}; request parameters (temperature, max_tokens...) belong to the LM: "
        "structio.LM('openai/gpt-4o-mini', temperature=0)"
    )


def _updated(base: Settings, lm: Any, adapter: Any, callbacks: Any) -> Settings:
    changes: dict[str, Any] = {}
    if lm is not _UNSET:
        changes["lm"] = check_lm(lm)
    if adapter is not _UNSET:
        changes["adapter"] = check_adapter(adapter)
    if callbacks is not _UNSET:
        changes["callbacks"] = _check_callbacks(callbacks)
    return replace(base, **changes)


def configure(
    *,
    lm: BaseLM | None = _UNSET,
    adapter: Adapter | None = _UNSET,
    callbacks: Sequence[Any] | None = _UNSET,
    **unknown: Any,
) -> None:
    r"""Set the process-wide default LM, adapter and/or callbacks (arguments not given are kept).

    Args:
        lm: The default model (``None``: none).
        adapter: The default adapter (``None``: `ChatAdapter`).
        callbacks: A list of `structio.Callback` objects told of every call, in order
            (``None`` or ``[]``: none).
        **unknown: Refused: a setting that does not exist.

    Raises:
        UnknownSettingError: A keyword names no setting (``adaptor=``); the message names
            those that exist.

    Example:
        >>> import structio as sio
        >>> sio.configure(lm=sio.FakeLM(["[[ ## answer ## ]]\\n4"]))
        >>> sio.configure(lm=None)  # back to no default
    """
    global _global
    _refuse_unknown("configure", unknown)
    with _global_lock:
        _global = _updated(_global, lm, adapter, callbacks)


@contextlib.contextmanager
def context(
    *,
    lm: BaseLM | None = _UNSET,
    adapter: Adapter | None = _UNSET,
    callbacks: Sequence[Any] | None = _UNSET,
    **unknown: Any,
) -> Iterator[Settings]:
    """Use another LM, adapter and/or callbacks inside a ``with`` block, in this thread or task.

    ``callbacks=`` replaces the callbacks in effect for the block, as DSPy's does (so
    ``callbacks=[]`` silences them); to add one, pass the ones in effect too:
    ``callbacks=[*structio.settings.current_settings().callbacks, extra]``.

    Raises:
        UnknownSettingError: A keyword names no setting, as for `configure`.

    Example:
        >>> import structio as sio
        >>> with sio.context(adapter=sio.JSONAdapter()):
        ...     pass  # Predict calls here use JSONAdapter unless they name another
    """
    _refuse_unknown("context", unknown)
    token = _scoped.set(_updated(current_settings(), lm, adapter, callbacks))
    try:
        yield current_settings()
    finally:
        _scoped.reset(token)


def check_lm(lm: Any) -> Any:
    """``lm`` itself if it is a structio LM (or ``None``): the one check of every ``lm=``.

    `configure`, `context`, `Predict` (built, assigned, called) and prompt functions take an
    LM through it, so a model string given where an LM belongs fails here, saying how to
    wrap it, rather than deep inside a call.

    Raises:
        ConfigurationError: ``lm`` is something else (a model string, a class...).
    """
    if lm is not None and not isinstance(lm, BaseLM):
        if isinstance(lm, str):
            raise ConfigurationError(
                f"lm= must be a structio LM, not the string {lm!r}: pass lm=structio.LM({lm!r})"
            )
        shown = (
            f"the class {lm.__name__}: pass an instance"
            if isinstance(lm, type)
            else type(lm).__name__
        )
        raise ConfigurationError(
            f"lm= must be a structio LM (LM('openai/gpt-4o-mini'), FakeLM([...])), not {shown}"
        )
    return lm


def check_adapter(adapter: Any) -> Any:
    """``adapter`` itself if it is an `Adapter` instance (or ``None``); see `check_lm`.

    Raises:
        ConfigurationError: ``adapter`` is something else (a name, a class...).
    """
    if adapter is not None and not isinstance(adapter, Adapter):
        if isinstance(adapter, type) and issubclass(adapter, Adapter):
            shown = f"the class {adapter.__name__}: pass an instance, {adapter.__name__}()"
        elif isinstance(adapter, str):
            shown = f"the string {adapter!r}"
        else:
            shown = type(adapter).__name__
        raise ConfigurationError(
            f"adapter= must be an Adapter (ChatAdapter(), JSONAdapter(), XMLAdapter()...), "
            f"not {shown}"
        )
    return adapter


def _check_callbacks(callbacks: Any) -> tuple[Any, ...]:
    if callbacks is None:
        return ()
    if not isinstance(callbacks, (list, tuple)):
        raise ConfigurationError(
            "callbacks= must be a list of callback objects (instances of structio.Callback "
            f"subclasses), not {type(callbacks).__name__}"
        )
    for index, callback in enumerate(callbacks):
        if isinstance(callback, type):
            raise ConfigurationError(
                f"callbacks[{index}] is the class {callback.__name__}, not a callback: "
                f"pass an instance, {callback.__name__}()"
            )
        if not any(callable(getattr(callback, hook, None)) for hook in CALLBACK_HOOKS):
            raise ConfigurationError(
                f"callbacks[{index}] ({type(callback).__name__}) is not a callback: it has "
                f"none of the methods {', '.join(CALLBACK_HOOKS)}; subclass structio.Callback"
            )
    return tuple(callbacks)
