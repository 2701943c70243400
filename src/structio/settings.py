"""Default LM and adapter: set globally with `configure`, or for a scope with `context`.

``structio.settings.lm`` (``.adapter``, ``.callbacks``, ``.track_usage``...) reads what is in
effect, as ``dspy.settings.lm`` does; ``structio.settings.configure(...)`` and
``structio.settings.context(...)`` are DSPy's other spellings of the two functions.

Every key of DSPy 3.4's ``dspy.configure`` is either honoured with DSPy's meaning
(`Settings`), accepted and ignored where it means nothing here (`IGNORED`, each with the
reason), or refused with an `UnknownSettingError` that says what to write instead
(`REFUSED`).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from structio.adapters.base import Adapter
from structio.adapters.chat_adapter import ChatAdapter
from structio.exceptions import ConfigurationError, UnknownSettingError
from structio.lm.base import BaseLM
from structio.lm.params import suggestion

__all__ = [
    "CALLBACK_HOOKS",
    "IGNORED",
    "REFUSED",
    "Settings",
    "check_adapter",
    "check_lm",
    "configure",
    "copy",
    "context",
    "current_settings",
    "listener_of",
    "listening",
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
        track_usage: DSPy's switch for ``pred.get_lm_usage()``. Every structio prediction
            carries its usage whatever this says (``pred.meta.usage``, ``get_lm_usage()``):
            recording it costs nothing, so the switch is kept only to be read back.
        warn_on_type_mismatch: Whether input values are checked against their declared
            types before a call (``Predict(check_inputs=...)`` per predictor; both must be
            on). DSPy logs a warning for a value that does not fit; structio raises a
            `FormatError` before any request, so ``False`` is how to send values unchecked.
        async_max_workers: How many programs `structio.asyncify` runs at once, in all
            (DSPy's default, 8).
        num_threads: How many calls at once `Predict.batch` makes when it is not told
            (DSPy's default, 8).
        allow_tool_async_sync_conversion: Whether a sync call of an async tool
            (``tool(...)``, ``tool_call.execute()``) runs it to its end, as DSPy's setting
            does, rather than raising a `UsageError` that says to await it.
        ignored: DSPy's settings that mean nothing in structio (`IGNORED`), as they were
            set, so that ``structio.settings.<name>`` reads them back.
    """

    lm: BaseLM | None = None
    adapter: Adapter | None = None
    callbacks: tuple[Any, ...] = ()
    track_usage: bool = False
    warn_on_type_mismatch: bool = True
    async_max_workers: int = 8
    num_threads: int = 8
    allow_tool_async_sync_conversion: bool = False
    ignored: tuple[tuple[str, Any], ...] = ()


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


def _sync_conversion() -> bool:
    return current_settings().allow_tool_async_sync_conversion


# Read as DSPy's ``dspy.settings.lm`` is: the value in effect here, looked up on each read.
_CURRENT = (
    "lm",
    "adapter",
    "callbacks",
    "track_usage",
    "warn_on_type_mismatch",
    "async_max_workers",
    "num_threads",
    "allow_tool_async_sync_conversion",
)

#: DSPy's settings that mean nothing in structio: accepted by `configure` and `context`,
#: kept to be read back, and otherwise ignored. Each with DSPy's default and the reason.
IGNORED: dict[str, tuple[Any, str]] = {
    "experimental": (
        False,
        "DSPy's gate for features still settling; structio has no gated features",
    ),
    "provide_traceback": (
        False,
        "DSPy's switch for tracebacks in the logs of parallel runs; a failed item of "
        "Predict.batch always holds its exception, traceback included",
    ),
    "branch_idx": (0, "an optimizer's rollout branch; structio has no optimizers"),
    "max_trace_size": (10000, "structio keeps no trace of predictor calls to bound"),
}

#: DSPy's settings that structio does not take, each with what to write instead.
REFUSED: dict[str, str] = {
    "rm": (
        "structio has no retriever: call yours and pass the passages as an input "
        "(context: list[str])"
    ),
    "trace": (
        "structio keeps no trace of predictor calls: see each call with "
        "callbacks=[structio.Callback subclass] or lm.history"
    ),
    "usage_tracker": "count a block's usage with `with structio.track_usage() as usage:`",
    "caller_predict": "set by DSPy itself; structio tells callbacks which Predict called",
    "caller_modules": "set by DSPy itself; structio tells callbacks which Predict called",
    "send_stream": (
        "stream with structio.streamify(program, stream_listeners=[...]) or "
        "Predict.stream / astream"
    ),
    "stream_listeners": ("pass them to structio.streamify(program, stream_listeners=[...])"),
    "disable_history": "each LM keeps its own history: LM(..., history_size=0) keeps none",
    "max_history_size": "each LM keeps its own history: LM(..., history_size=N)",
    "max_errors": (
        "Predict.batch runs every item and a failed one holds its exception in its place "
        "(return_exceptions=False raises a BatchError at the end instead)"
    ),
    "interpreter_factory": "structio has no code-executing modules to give an interpreter",
}


# DSPy's other attributes of `dspy.settings` that structio does not have, and what to use.
_NOT_HERE = {
    "save": "save an LM with lm.to_dict() or a Predict with predict.save(path)",
    "load": "build the LM again: LM.from_dict(data), or Predict.load(path)",
    "thread_local_overrides": (
        "a structio.context block holds in its thread and tasks; run a thread of your own "
        "in contextvars.copy_context().run(...) to carry it, as Predict.batch and "
        "structio.asyncify do"
    ),
}


def __getattr__(name: str) -> Any:
    """``structio.settings.lm`` (``.adapter``, ``.track_usage``...): what is in effect here.

    The innermost `context`, else what `configure` set; ``None`` when nothing is set.
    DSPy's settings that mean nothing here (`IGNORED`) read back as they were set, else
    as DSPy's default. ``structio.settings.config`` is every setting, as `copy` gives.
    """
    if name in _CURRENT:
        return getattr(current_settings(), name)
    if name in IGNORED:
        return dict(current_settings().ignored).get(name, IGNORED[name][0])
    if name == "config":
        return copy()
    hint = REFUSED.get(name) or _NOT_HERE.get(name)
    shown = f": {hint}" if hint else ""
    raise AttributeError(f"module 'structio.settings' has no attribute {name!r}{shown}")


def copy() -> dict[str, Any]:
    """Every setting in effect here, by name, as DSPy's ``dspy.settings.copy()``.

    The settings `configure` takes, and DSPy's that are kept but ignored (`IGNORED`).
    """
    settings = current_settings()
    values = {name: getattr(settings, name) for name in _CURRENT}
    kept = dict(settings.ignored)
    return {**values, **{name: kept.get(name, IGNORED[name][0]) for name in IGNORED}}


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


def _refuse_unknown(where: str, unknown: dict[str, Any]) -> dict[str, Any]:
    """DSPy's settings of ``unknown`` that mean nothing here (`IGNORED`); refuse any other.

    Raises:
        UnknownSettingError: For the first key that is neither a setting nor ignored: a key
            of DSPy's that structio does not take says what to write instead; any other
            names the settings and the closest one (whose structio way is given when it is
            one of DSPy's).
    """
    refused = [name for name in unknown if name not in IGNORED]
    if not refused:
        return unknown
    name = refused[0]
    if name in REFUSED:
        raise UnknownSettingError(
            f"{where}() does not take DSPy's setting `{name}`: {REFUSED[name]}"
        )
    import difflib

    listed = ", ".join(f"`{n}`" for n in _CURRENT)
    close = difflib.get_close_matches(name, (*_CURRENT, *IGNORED, *REFUSED), n=1, cutoff=0.6)
    hint = suggestion(name, close)
    if close and close[0] in REFUSED:
        hint = f"{hint} (DSPy's; in structio: {REFUSED[close[0]]})"
    raise UnknownSettingError(
        f"{where}() has no setting `{name}`{hint or '.'} The settings are {listed} (and "
        f"DSPy's {', '.join(f'`{n}`' for n in IGNORED)}, accepted and ignored); request "
        "parameters (temperature, max_tokens...) belong to the LM: "
        "structio.LM('openai/gpt-4o-mini', temperature=0)"
    )


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigurationError(f"{name}= must be True or False, not {value!r}")
    return value


def _conversion_flag(name: str, value: Any) -> bool:
    """`_flag`; set to ``True``, tools are given how to read it (`_sync_conversion`).

    Tools sit below the settings and read this one through the function given them here,
    once, when it is first turned on: importing tools loads pydantic, which ``import
    structio`` does not. Until then no setting allows it, and tools refuse.
    """
    flag = _flag(name, value)
    if flag:
        from structio.tools.tool import set_sync_conversion_reader

        set_sync_conversion_reader(_sync_conversion)
    return flag


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"{name}= must be a whole number of 1 or more, not {value!r}")
    return value


# How each setting's value is checked before it is set.
_CHECKS: dict[str, Any] = {
    "lm": lambda name, value: check_lm(value),
    "adapter": lambda name, value: check_adapter(value),
    "callbacks": lambda name, value: _check_callbacks(value),
    "track_usage": _flag,
    "warn_on_type_mismatch": _flag,
    "async_max_workers": _count,
    "num_threads": _count,
    "allow_tool_async_sync_conversion": _conversion_flag,
}


def _updated(base: Settings, given: dict[str, Any], ignored: dict[str, Any]) -> Settings:
    changes = {
        name: _CHECKS[name](name, value) for name, value in given.items() if value is not _UNSET
    }
    if ignored:
        changes["ignored"] = tuple({**dict(base.ignored), **ignored}.items())
    return replace(base, **changes)


def configure(
    *,
    lm: BaseLM | None = _UNSET,
    adapter: Adapter | None = _UNSET,
    callbacks: Sequence[Any] | None = _UNSET,
    track_usage: bool = _UNSET,
    warn_on_type_mismatch: bool = _UNSET,
    async_max_workers: int = _UNSET,
    num_threads: int = _UNSET,
    allow_tool_async_sync_conversion: bool = _UNSET,
    **unknown: Any,
) -> None:
    r"""Set the process-wide default LM, adapter and/or callbacks (arguments not given are kept).

    Args:
        lm: The default model (``None``: none).
        adapter: The default adapter (``None``: `ChatAdapter`).
        callbacks: A list of `structio.Callback` objects told of every call, in order
            (``None`` or ``[]``: none).
        track_usage: DSPy's switch; predictions carry their usage whatever it says
            (``pred.get_lm_usage()``, ``pred.meta.usage``).
        warn_on_type_mismatch: ``False`` sends input values without checking their types
            (see `Settings`).
        async_max_workers: How many programs `structio.asyncify` runs at once.
        num_threads: How many calls at once `Predict.batch` makes by default.
        allow_tool_async_sync_conversion: ``True`` lets a sync call of an async tool run
            it to its end (see `Settings`).
        **unknown: DSPy's settings that mean nothing here (`IGNORED`) are kept and
            ignored; any other is refused.

    Raises:
        UnknownSettingError: A keyword names no setting (``adaptor=``): the message names
            those that exist; or one of DSPy's that structio does not take (`REFUSED`):
            the message says what to write instead.
        ConfigurationError: A value of the wrong kind (``track_usage="yes"``).

    Example:
        >>> import structio as sio
        >>> sio.configure(lm=sio.FakeLM(["[[ ## answer ## ]]\\n4"]))
        >>> sio.configure(lm=None)  # back to no default
    """
    global _global
    given = {name: value for name, value in locals().items() if name in _CHECKS}
    ignored = _refuse_unknown("configure", unknown)
    with _global_lock:
        _global = _updated(_global, given, ignored)


@contextlib.contextmanager
def context(
    *,
    lm: BaseLM | None = _UNSET,
    adapter: Adapter | None = _UNSET,
    callbacks: Sequence[Any] | None = _UNSET,
    track_usage: bool = _UNSET,
    warn_on_type_mismatch: bool = _UNSET,
    async_max_workers: int = _UNSET,
    num_threads: int = _UNSET,
    allow_tool_async_sync_conversion: bool = _UNSET,
    **unknown: Any,
) -> Iterator[Settings]:
    """Use another LM, adapter and/or callbacks inside a ``with`` block, in this thread or task.

    ``callbacks=`` replaces the callbacks in effect for the block, as DSPy's does (so
    ``callbacks=[]`` silences them); to add one, pass the ones in effect too:
    ``callbacks=[*structio.settings.current_settings().callbacks, extra]``.

    Takes the settings `configure` takes.

    Raises:
        UnknownSettingError: A keyword names no setting, as for `configure`.

    Example:
        >>> import structio as sio
        >>> with sio.context(adapter=sio.JSONAdapter()):
        ...     pass  # Predict calls here use JSONAdapter unless they name another
    """
    given = {name: value for name, value in locals().items() if name in _CHECKS}
    ignored = _refuse_unknown("context", unknown)
    token = _scoped.set(_updated(current_settings(), given, ignored))
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


# The calls a `structio.streamify` listens to here: a signature class, and what hears the
# stream events of its calls. A scoped value, as DSPy's `send_stream` setting is, so that
# only the streamed program's calls (in its thread, its tasks, `asyncify`'s worker) stream.
_listening: contextvars.ContextVar[Mapping[Any, Callable[[Any], None]]] = contextvars.ContextVar(
    "structio_listening", default=MappingProxyType({})
)


def listener_of(signature: Any) -> Callable[[Any], None] | None:
    """What hears the stream events of a call of ``signature`` here, if anything does.

    The call layer streams such a call (its result is the same) and tells each event.
    """
    hearers = _listening.get()
    return hearers.get(signature) if hearers else None


@contextlib.contextmanager
def listening(hearers: Mapping[Any, Callable[[Any], None]]) -> Iterator[None]:
    """Inside the block, calls of each signature class stream, each event told to its hearer.

    Used by `structio.streamify` for the Predicts inside a program.
    """
    token = _listening.set(MappingProxyType({**_listening.get(), **hearers}))
    try:
        yield
    finally:
        _listening.reset(token)
