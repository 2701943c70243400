"""A `Predict` on disk: saved prompt files, their checks, and loading into a predictor."""

from __future__ import annotations

import functools
import json
import os
import pathlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar, cast

from structio._demos import demo_from_data, demo_to_data
from structio._util.data import jsonable
from structio._util.files import TEXT_ENCODING
from structio._util.log import logger
from structio._util.secrets import (
    MAX_FILE_RETRIES,
    check_file_settings,
    public_params,
    shown_setting,
)
from structio.adapters.base import Adapter
from structio.call import CallOptions
from structio.exceptions import (
    ConfigurationError,
    UsageError,
)
from structio.lm.base import BaseLM
from structio.lm.client import is_client_setting
from structio.lm.lm import LM
from structio.settings import check_lm
from structio.signatures.signature import (
    Signature,
)

__all__ = [
    "FORMAT_VERSION",
    "NAME_PATTERN",
    "check_name",
    "from_data",
    "load_data_into",
    "load_into",
    "load_program_into",
    "program_data",
    "prompt_data",
    "read_program",
    "read_saved",
]

FORMAT_VERSION = 1


class Saved(Protocol):
    """What saving reads of a predictor (`Predict`, without importing it: it imports this)."""

    name: str | None
    signature: type[Signature]
    params: dict[str, Any]

    @property
    def demos(self) -> Sequence[Mapping[str, Any]]: ...

    @property
    def adapter(self) -> Adapter | None: ...

    @property
    def lm(self) -> BaseLM | None: ...

    @property
    def options(self) -> CallOptions: ...


_P = TypeVar("_P", bound=Saved)
_P_co = TypeVar("_P_co", covariant=True)
_T = TypeVar("_T")
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def check_name(name: Any) -> str:
    """A prompt name: letters, digits, ``_``, ``.`` and ``-`` (it names a file).

    Raises:
        ConfigurationError: The name is not of that form.
    """
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name) or ".." in name:
        raise ConfigurationError(
            f"a prompt name is letters, digits, '_', '.' and '-' (it names a file), "
            f"not {name!r}; e.g. name='question_generation'"
        )
    return name


def read_saved(path: pathlib.Path) -> dict[str, Any]:
    """Read a saved prompt file.

    Raises:
        ConfigurationError: The file cannot be read (its path names no file, or one that
            is not UTF-8 text) or is not a saved prompt; the reading's error is the cause.
    """
    return _prompt_data(path, _read_json(path))


def _prompt_data(path: pathlib.Path, data: Any) -> dict[str, Any]:
    """A saved prompt's data, read from ``path`` (see `read_saved`)."""
    if isinstance(data, dict) and PROGRAM_KEY in data:
        raise ConfigurationError(
            f"{str(path)!r} is a saved program (the prompts of its predictors), not one "
            "prompt: load it with program.load(path) into the Module that saved it"
        )
    if not isinstance(data, dict) or "signature" not in data:
        raise ConfigurationError(f"{str(path)!r} is not a saved structio prompt")
    _check_version(path, data.get("structio_prompt"))
    return data


def _check_version(path: pathlib.Path, version: Any) -> None:
    if version != FORMAT_VERSION:
        raise ConfigurationError(
            f"{str(path)!r} is saved prompt format {version!r}; this structio reads "
            f"format {FORMAT_VERSION}"
        )


def _read_json(path: pathlib.Path) -> Any:
    """A saved file's JSON (`read_saved` says what the errors are)."""
    try:
        text = pathlib.Path(path).read_text(encoding=TEXT_ENCODING)
    except OSError as exc:
        raise ConfigurationError(f"cannot read saved prompt {str(path)!r}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigurationError(
            f"cannot read saved prompt {str(path)!r}: it is not UTF-8 text (byte "
            f"{exc.object[exc.start]:#04x} at offset {exc.start:,}); give the file save wrote"
        ) from exc
    except ValueError as exc:  # a path Python refuses: a NUL character in it
        raise ConfigurationError(
            f"cannot read saved prompt {str(path)!r}: its path cannot name a file ({exc}); "
            "give the path save wrote"
        ) from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"saved prompt {str(path)!r} is not valid JSON (line {exc.lineno}): {exc.msg}"
        ) from exc


# -- programs: the prompts of a Module's predictors, in one file ------------------------

#: The key that marks a program's file (its value: the format version).
PROGRAM_KEY = "structio_program"


def program_data(predictors: Mapping[str, Any]) -> dict[str, Any]:
    """A program's predictors as one JSON-ready dict, each under its attribute path."""
    return {
        PROGRAM_KEY: FORMAT_VERSION,
        "predictors": {name: predict.to_dict() for name, predict in predictors.items()},
    }


def read_program(path: pathlib.Path, names: Sequence[str]) -> dict[str, Any]:
    """The saved prompt of each predictor ``names`` names, from a file `program_data` made.

    A saved prompt (`Predict.save`) is read for a program of one predictor.

    Raises:
        ConfigurationError: The file cannot be read or is not a saved program.
    """
    data = _read_json(path)
    if isinstance(data, dict) and PROGRAM_KEY not in data and "signature" in data:
        if len(names) != 1:
            raise ConfigurationError(
                f"{str(path)!r} is one saved prompt, and this program has {len(names)} "
                f"predictors ({', '.join(names) or 'none'}): save the program with "
                "program.save(path), or load the prompt into one predictor, "
                "program.<name>.load(path)"
            )
        return {names[0]: _prompt_data(path, data)}
    if not isinstance(data, dict) or not isinstance(data.get("predictors"), dict):
        raise ConfigurationError(f"{str(path)!r} is not a saved structio program")
    _check_version(path, data[PROGRAM_KEY])
    return dict(data["predictors"])


def load_program_into(
    predictors: Mapping[str, _P], states: Mapping[str, Any], where: str, **options: Any
) -> None:
    """Each predictor's saved prompt put into it (see `load_data_into`), all or none.

    Raises:
        ConfigurationError: ``states`` names other predictors than ``predictors``, or one
            cannot be loaded (as `load_data_into`); no predictor was changed.
    """
    missing = [name for name in predictors if name not in states]
    extra = [name for name in states if name not in predictors]
    if missing or extra:
        said = [f"missing: {', '.join(missing)}"] if missing else []
        said += [f"not in this program: {', '.join(extra)}"] if extra else []
        raise ConfigurationError(
            f"{where} is of another program ({'; '.join(said)}); the program has "
            f"{', '.join(predictors) or 'no predictors'}: load it into the program that saved it"
        )
    options = {
        "lm": None,
        "trust_endpoint": False,
        "allowed_modules": None,
        "trust_types": False,
        **options,
    }
    loaded = {
        name: _loaded(predict, states[name], f"{where}, predictor {name!r}", **options)
        for name, predict in predictors.items()
    }
    for name, predict in predictors.items():
        predict.__dict__.update(loaded[name].__dict__)


class _Loader(Protocol[_P_co]):
    def __call__(
        self,
        path: str | os.PathLike[str],
        *,
        allow_pickle: bool = False,
        allow_unsafe_lm_state: bool = False,
        lm: BaseLM | None = None,
        trust_endpoint: bool = False,
        allowed_modules: Iterable[str] | None = None,
        trust_types: bool = False,
    ) -> _P_co: ...


class _ClassOrInstanceLoad:
    """``Predict.load(path)`` builds a new predictor; ``predictor.load(path)`` fills that one.

    Read a prompt that `save` wrote, importing only the modules allowed. Called on an
    instance (as DSPy's ``program.load(path)`` is), the file's signature, demos, adapter
    and options go into that instance, which is returned; the file must be of the same
    inputs and outputs. A type the file names as a class of the script that saved it
    (``__main__:Person``), which no other program can import, is taken from the instance's
    signature instead: such a file loads into ``structio.Predict(MySignature).load(path)``.

    Which model: ``lm=`` if given, else the instance's own (loading into one that has an
    LM), else the file's. The file's model, and the endpoint settings of the file
    (``api_base``... in its LM or its parameters), are used only when neither is given:
    with an LM of your own, where requests go is yours to say, and a file that sets an
    endpoint loads without ``trust_endpoint``.

    Args:
        path: The file.
        lm: The model to use rather than the file's (see above).
        trust_endpoint: Use the endpoint the file sets (see `Predict.from_dict`).
        allowed_modules: More modules whose classes the file may name (see
            `Predict.from_dict`); each name allows its submodules.
        trust_types: Allow the file to import any module: only for a file you trust as
            you trust code.

    Raises:
        ConfigurationError: The file cannot be read, is not a saved prompt, sets an
            endpoint while no LM is given and ``trust_endpoint`` is False, names an adapter
            class of a module that is not allowed, or (loading into an instance) has other
            fields.
        SignatureError: A type it names is of a module that is not allowed, or cannot
            be imported; the message names it and says how to allow it.
    """

    def __get__(self, obj: _T | None, owner: type[_T]) -> _Loader[_T]:
        # DSPy's keywords taken by every load (`_dspy_load`).
        load = getattr(owner, "_load_new") if obj is None else getattr(obj, "_load_into")  # noqa: B009
        return cast("_Loader[_T]", functools.partial(_dspy_load, load))


def _dspy_load(
    load: Callable[..., Any],
    path: str | os.PathLike[str],
    *,
    allow_pickle: bool = False,
    allow_unsafe_lm_state: bool = False,
    **options: Any,
) -> Any:
    """A load that also takes DSPy's keywords.

    ``allow_pickle``: nothing to allow, a saved prompt is JSON whatever its suffix and is
    never unpickled. ``allow_unsafe_lm_state``: DSPy's consent to the file's LM settings,
    structio's ``trust_endpoint=True``.
    """
    if allow_unsafe_lm_state:
        options.setdefault("trust_endpoint", True)
    return load(path, **options)


def refuse_program(save_program: bool) -> None:
    """Refuse DSPy's ``save(path, save_program=True)``, saying structio's way.

    Raises:
        UsageError: ``save_program`` is True.
    """
    if save_program:
        raise UsageError(
            "structio saves a prompt as data, never a pickled program: "
            "predict.save(path) (save_program=False, the default) and Predict.load(path); "
            "the program's code stays in your module"
        )


def _field_names(signature: type[Signature]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return tuple(signature.input_fields), tuple(signature.output_fields)


def _saved_fields(data: Any) -> list[Mapping[str, Any]] | None:
    """The fields of a saved signature, or None where the data is malformed (the load says)."""
    fields = data.get("fields") if isinstance(data, Mapping) else None
    if not isinstance(fields, list) or not all(isinstance(f, Mapping) for f in fields):
        return None
    return fields


def _saved_field_names(data: Any) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The input and output names of a saved signature, read without importing its types."""
    fields = _saved_fields(data)
    if fields is None:
        return None
    names = [(str(f.get("name")), f.get("kind")) for f in fields]
    return (
        tuple(name for name, kind in names if kind == "input"),
        tuple(name for name, kind in names if kind == "output"),
    )


def _load_advice(cls: type, data: Mapping[str, Any]) -> str:
    """What to do with a file of other fields: load it anew, when its types can be imported."""
    fields = _saved_fields(data["signature"]) or []
    in_script = sorted(
        {ref for f in fields for ref in re.findall(r"__main__:[\w.]+", str(f.get("type", "")))}
    )
    if not in_script:
        return f"load it as a new one with structio.{cls.__name__}.load(path)"
    name = str(data["signature"].get("name") or "MySignature")
    if name == "StringSignature":
        name = "MySignature"
    return (
        f"its types ({', '.join(in_script)}) were defined in the script that saved it, which "
        f"no other program can import, so load it into a {cls.__name__} whose signature has "
        f"its fields and those types: structio.{cls.__name__}({name}).load(path)"
    )


def _without_client(params: Mapping[str, Any], lm: BaseLM) -> dict[str, Any]:
    """A file's parameters without the client settings (where requests go, as whom).

    With an LM given, the LM says where requests go and with which credentials; what the
    file says is logged (without credentials), not used.
    """
    dropped = sorted(name for name in params if is_client_setting(name))
    if dropped:
        logger().warning(
            "the saved prompt's %s not used: %r, given to load, says where requests go",
            ", ".join(shown_setting(name, params[name]) for name in dropped)
            + (" is" if len(dropped) == 1 else " are"),
            lm,
        )
    return {name: value for name, value in params.items() if not is_client_setting(name)}


def _spec(names: tuple[tuple[str, ...], tuple[str, ...]]) -> str:
    return f"'{', '.join(names[0])} -> {', '.join(names[1])}'"


# DSPy Module methods a Predict does not have, and what to write instead.


def prompt_data(predict: Saved) -> dict[str, Any]:
    """The prompt as JSON-ready data: what `Predict.to_dict` returns (see it)."""
    return {
        "structio_prompt": FORMAT_VERSION,
        "name": predict.name,
        "signature": predict.signature.to_dict(),
        "demos": [demo_to_data(predict.signature, demo) for demo in predict.demos],
        "adapter": predict.adapter.to_dict() if predict.adapter is not None else None,
        "lm": predict.lm.to_dict() if isinstance(predict.lm, LM) else None,
        "params": {k: jsonable(v) for k, v in public_params(predict.params).items()},
        "max_prompt_tokens": predict.options.max_prompt_tokens,
        "truncation_step": predict.options.truncation_step,
        # Only when set, so files saved without re-asking stay as they were.
        **({"max_retries": predict.options.max_retries} if predict.options.max_retries else {}),
        **({} if predict.options.check_inputs else {"check_inputs": False}),
        **({"confidence": True} if predict.options.confidence else {}),
    }


def from_data(
    cls: Callable[..., _P],
    data: Mapping[str, Any],
    *,
    lm: BaseLM | None,
    types: Mapping[str, Any] | None,
    trust_endpoint: bool,
    allowed_modules: Iterable[str] | None,
    trust_types: bool,
) -> _P:
    """`Predict.from_dict`, with the fields' types taken from ``types`` where it names them."""
    check_lm(lm)
    signature = Signature.from_dict(
        data["signature"], allowed_modules=allowed_modules, trust_types=trust_types, types=types
    )
    lm_data = data.get("lm")
    adapter_data = data.get("adapter")
    # "lm_kwargs" is what files written before the rename hold.
    params = dict(data.get("params", data.get("lm_kwargs")) or {})
    if lm is not None and not trust_endpoint:
        params = _without_client(params, lm)
    check_file_settings(params, what="the saved prompt", trusted=trust_endpoint)
    max_retries = data.get("max_retries", 0)
    if not trust_endpoint and not (
        isinstance(max_retries, int) and 0 <= max_retries <= MAX_FILE_RETRIES
    ):
        # Each re-ask is a paid request: a file does not ask for more than a few.
        raise ConfigurationError(
            f"the saved prompt sets max_retries={max_retries!r}; from a file, max_retries is "
            f"from 0 to {MAX_FILE_RETRIES}. Load it with trust_endpoint=True if you trust "
            "this file, or set max_retries= on the Predict after loading it"
        )
    adapter = (
        Adapter.from_dict(adapter_data, allowed_modules=allowed_modules, trust_types=trust_types)
        if adapter_data
        else None
    )
    if lm is None and lm_data:
        lm = LM.from_dict(lm_data, trust_endpoint=trust_endpoint)
    return cls(
        signature,
        lm=lm,
        adapter=adapter,
        demos=[demo_from_data(signature, demo) for demo in data.get("demos") or []],
        name=data.get("name"),
        max_prompt_tokens=data.get("max_prompt_tokens"),
        truncation_step=data.get("truncation_step", 0),
        max_retries=max_retries,
        check_inputs=data.get("check_inputs", True),
        confidence=data.get("confidence") is True,
        **params,
    )


def load_into(
    predict: _P,
    path: str | os.PathLike[str],
    *,
    lm: BaseLM | None,
    trust_endpoint: bool,
    allowed_modules: Iterable[str] | None,
    trust_types: bool,
) -> _P:
    """``predictor.load(path)``: the file's prompt put into this predictor (see `load`)."""
    return load_data_into(
        predict,
        read_saved(pathlib.Path(path)),
        repr(str(path)),
        lm=lm,
        trust_endpoint=trust_endpoint,
        allowed_modules=allowed_modules,
        trust_types=trust_types,
    )


def load_data_into(
    predict: _P,
    data: Mapping[str, Any],
    where: str,
    *,
    lm: BaseLM | None = None,
    trust_endpoint: bool = False,
    allowed_modules: Iterable[str] | None = None,
    trust_types: bool = False,
) -> _P:
    """A saved prompt's data (`to_dict`) put into this predictor; ``where`` names it."""
    loaded = _loaded(
        predict,
        data,
        where,
        lm=lm,
        trust_endpoint=trust_endpoint,
        allowed_modules=allowed_modules,
        trust_types=trust_types,
    )
    predict.__dict__.update(loaded.__dict__)
    return predict


def _loaded(
    predict: _P, data: Mapping[str, Any], where: str, *, lm: BaseLM | None, **options: Any
) -> _P:
    """A new predictor of ``predict``'s class from ``data`` (`load_data_into`'s keywords)."""
    mine, theirs = _field_names(predict.signature), _saved_field_names(data.get("signature"))
    if theirs is not None and mine != theirs:
        raise ConfigurationError(
            f"{where} holds a prompt for {_spec(theirs)}, not for this "
            f"{type(predict).__name__}'s {_spec(mine)}; {_load_advice(type(predict), data)}"
        )
    # Checked first, as the constructor would: the instance is left as it was if it fails.
    check_lm(lm)
    # A class of the script that saved the file cannot be imported here: the instance's
    # signature has it.
    in_script = {
        str(field.get("name"))
        for field in _saved_fields(data["signature"]) or []
        if "__main__:" in str(field.get("type", ""))
    }
    loaded = from_data(
        type(predict),
        data,
        lm=lm if lm is not None else predict.lm,
        types={
            name: field.annotation
            for name, field in predict.signature.fields.items()
            if name in in_script
        },
        **options,
    )
    return loaded
