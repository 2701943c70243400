"""`Predict`: a signature, demos, an adapter and an LM, called like a function."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import json
import os
import pathlib
import re
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast, overload

from structio import call as calling
from structio._demos import DemoList, checked_demos, demo_from_data, demo_to_data
from structio._text_prompt import prompt_string
from structio._util.data import jsonable
from structio._util.files import write_json
from structio._util.log import logger
from structio._util.progress import Progress
from structio._util.secrets import ENDPOINT_PARAMS, check_endpoints, public_params
from structio.adapters.base import Adapter, SignatureLike
from structio.call import Attempt, CallResult, Route, StreamOut
from structio.example import Example, to_plain
from structio.exceptions import (
    BatchError,
    ConfigurationError,
    FormatError,
    SignatureError,
    UsageError,
)
from structio.lm.base import BaseLM
from structio.lm.lm import LM
from structio.lm.types import LMResponse, Usage
from structio.parsing.clean import drafts
from structio.parsing.stream import StreamEvent
from structio.rendering.prompt import Truncation, TruncationStep
from structio.settings import check_adapter, check_lm, resolve_adapter, resolve_lm
from structio.signatures.field import OutputField, SignatureField
from structio.signatures.signature import (
    Signature,
    SignatureMeta,
    from_portable,
    make_signature,
    portable,
)
from structio.streams import AsyncStream, Stream

if TYPE_CHECKING:
    from structio.batch import BatchJob

__all__ = [
    "FORMAT_VERSION",
    "ChainOfThought",
    "Completions",
    "Predict",
    "Prediction",
    "PredictionMeta",
    "check_name",
    "check_outputs",
    "read_saved",
]

# Keyword arguments of a call that are not inputs of the signature.
_CALL_OPTIONS = ("adapter", "lm", "params", "config", "max_retries")

FORMAT_VERSION = 1
_P = TypeVar("_P", bound="Predict")
_P_co = TypeVar("_P_co", bound="Predict", covariant=True)
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def check_outputs(signature: type[Signature], who: str) -> None:
    """Refuse a signature with no outputs before any request: the model would have no task.

    A class may declare none (a base class for others); a module built with it may not.

    Raises:
        SignatureError: ``signature`` has no output fields.
    """
    if not signature.output_fields:
        raise SignatureError(
            f"{signature.__name__} has no output fields, so a {who} built with it has nothing "
            "to ask the model for: declare at least one, e.g. answer: str = "
            "structio.OutputField() (a signature without outputs can only be a base class)"
        )


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
        ConfigurationError: The file cannot be read or is not a saved prompt.
    """
    try:
        data = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigurationError(f"cannot read saved prompt {str(path)!r}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"saved prompt {str(path)!r} is not valid JSON (line {exc.lineno}): {exc.msg}"
        ) from None
    if not isinstance(data, dict) or "signature" not in data:
        raise ConfigurationError(f"{str(path)!r} is not a saved structio prompt")
    version = data.get("structio_prompt")
    if version != FORMAT_VERSION:
        raise ConfigurationError(
            f"{str(path)!r} is saved prompt format {version!r}; this structio reads "
            f"format {FORMAT_VERSION}"
        )
    return data


@dataclasses.dataclass(frozen=True)
class PredictionMeta:
    """How a prediction was made: the route, the tokens, the cost, the raw responses.

    ``pred.meta`` holds it (``Prediction.meta_of(pred)`` when an output is named ``meta``).

    Attributes:
        route: How the outputs were read: ``"chat"``, ``"json"``, ``"json_reparse"``
            (ChatAdapter's completion read as JSON, no new request) or ``"json_request"``
            (a second request in JSON was needed).
        usage: Tokens of every request made (zero for cache hits).
        cost: Cost in USD when the price is known (0.0 for cache hits), else ``None``.
        responses: The raw model responses, in order.
        truncation: What was cut from the prompt to fit (``max_prompt_tokens``, or the
            model's context window after the provider refused the prompt), or ``None``.
        max_tokens_reached: The model stopped at its token limit (finish reason ``length``)
            after every output was closed, so the values are whole; a cut inside an output
            raises `ParseError` instead of giving a value.
        attempts: The answers sent back to the model before this one (``max_retries``),
            each with its response, error and the feedback sent; `usage` and `cost`
            include them.
    """

    route: Route = "chat"
    usage: Usage = dataclasses.field(default_factory=Usage)
    cost: float | None = None
    responses: tuple[LMResponse, ...] = ()
    truncation: Truncation | None = None
    max_tokens_reached: bool = False
    attempts: tuple[Attempt, ...] = ()

    @classmethod
    def from_result(cls, result: CallResult) -> PredictionMeta:
        """What a call's result says about how it was made."""
        return cls(
            route=result.route,
            usage=result.usage,
            cost=result.cost,
            responses=tuple(result.responses),
            truncation=result.truncation,
            max_tokens_reached=result.max_tokens_reached,
            attempts=tuple(result.attempts),
        )

    def lm_usage(self) -> dict[str, dict[str, Any]]:
        """Tokens per model, as DSPy's ``get_lm_usage()`` gives them (cache hits left out)."""
        totals: dict[str, Usage] = {}
        for response in self.responses:
            if not response.cached:  # as DSPy: a cache hit bills nothing
                before = totals.get(response.model)
                totals[response.model] = (
                    response.usage if before is None else before + response.usage
                )
        return {model: usage.as_openai() for model, usage in totals.items()}


_NO_META = PredictionMeta()


class Prediction(Mapping[str, Any]):
    """The outputs of one call, read as attributes (``pred.answer``) or keys.

    Every output reads back as itself, whatever its name: an output named ``cost``,
    ``route``, ``items`` or ``keys`` is ``pred.cost``, ``pred.route``... How the call went
    (route, usage, cost, raw responses, truncation, re-asks) is ``pred.meta``, a
    `PredictionMeta`; if an output is itself named ``meta``, ``pred.meta`` is that output
    and ``Prediction.meta_of(pred)`` the call's. A method is always reachable from the
    class: ``Prediction.to_dict(pred)`` even with an output named ``to_dict``.

    ``pred.reasoning`` is the model's native reasoning (`lm_reasoning`) unless the
    signature has an output of that name. Built by keywords too, as DSPy's:
    ``Prediction(answer="4")``.

    Attributes:
        meta: How the call was made (`PredictionMeta`).
        completions: The outputs of every choice (``n=``): ``pred.completions[1]`` is the
            second one's prediction, ``pred.completions.answer`` the list of every choice's
            ``answer``.
        route: ``meta.route``, unless an output has that name (so are ``path``, ``usage``,
            ``cost``, ``responses``, ``truncation``, ``max_tokens_reached`` and
            ``attempts``: each its `PredictionMeta` attribute).
    """

    __slots__ = ("_completions", "_meta", "_values")

    _values: dict[str, Any]
    _completions: list[dict[str, Any]] | None
    _meta: PredictionMeta

    def __init__(self, values: Mapping[str, Any] | None = None, /, **fields: Any) -> None:
        set_ = object.__setattr__
        merged = dict(values) if values is not None else {}
        merged.update(fields)
        set_(self, "_values", merged)
        set_(self, "_completions", None)  # the one choice: the values themselves
        set_(self, "_meta", _NO_META)

    @classmethod
    def from_result(cls, result: CallResult) -> Prediction:
        """Build a prediction from what a call returned."""
        return _made(
            cls,
            result.outputs[0] if result.outputs else {},
            result.outputs if len(result.outputs) > 1 else None,
            PredictionMeta.from_result(result),
        )

    # An output's name always reads the output: looked up before the class's attributes,
    # so no method or metadata property can hide one. Private names skip the lookup.
    def __getattribute__(self, name: str) -> Any:
        if name[:1] != "_":
            values = object.__getattribute__(self, "_values")
            if name in values:
                return values[name]
        return object.__getattribute__(self, name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # copy and pickle probe hooks on bare instances
            raise AttributeError(name)
        if name == "reasoning":  # no output of that name: the model's own reasoning
            return self.lm_reasoning
        fields = ", ".join(self._values) or "none"
        raise AttributeError(f"Prediction has no field {name!r}; its fields: {fields}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Prediction is read-only")

    def __dir__(self) -> list[str]:
        return sorted({*object.__dir__(self), *self._values})

    # -- what the call was --------------------------------------------------------------------

    @property
    def meta(self) -> PredictionMeta:
        """How the call was made: route, usage, cost, responses, truncation, re-asks."""
        return self._meta

    @staticmethod
    def meta_of(prediction: Prediction) -> PredictionMeta:
        """``prediction.meta``, also when an output is named ``meta``."""
        return prediction._meta

    @property
    def route(self) -> Route:
        """``meta.route``: how the outputs were read."""
        return self._meta.route

    @property
    def path(self) -> Route:
        """The former name of `route`."""
        return self._meta.route

    @property
    def usage(self) -> Usage:
        """``meta.usage``: tokens of every request made."""
        return self._meta.usage

    @property
    def cost(self) -> float | None:
        """``meta.cost``: cost in USD, when known."""
        return self._meta.cost

    @property
    def responses(self) -> list[LMResponse]:
        """``meta.responses``, as a list."""
        return list(self._meta.responses)

    @property
    def truncation(self) -> Truncation | None:
        """``meta.truncation``: what was cut from the prompt, if anything."""
        return self._meta.truncation

    @property
    def max_tokens_reached(self) -> bool:
        """``meta.max_tokens_reached``."""
        return self._meta.max_tokens_reached

    @property
    def attempts(self) -> list[Attempt]:
        """``meta.attempts``, as a list."""
        return list(self._meta.attempts)

    def get_lm_usage(self) -> dict[str, dict[str, Any]]:
        """Tokens per model string, as DSPy's ``Prediction.get_lm_usage()`` gives them.

        Each model's counts are OpenAI's usage names (``prompt_tokens``,
        ``completion_tokens``, ``total_tokens`` and their details); cache hits are left out.
        ``meta.cost`` is the cost.
        """
        return self._meta.lm_usage()

    @property
    def lm_reasoning(self) -> str | None:
        """The model's native reasoning for this answer, kept apart from the outputs.

        The reply's ``reasoning_content`` (or thinking blocks), else the ``<think>`` drafts
        the parser set aside; ``None`` when the model gave neither. ``pred.reasoning`` is
        this too, unless the signature has an output named ``reasoning``.
        """
        responses = self._meta.responses
        if not responses or not responses[-1].completions:
            return None
        completion = responses[-1].completions[0]
        return completion.reasoning or drafts(completion.text)

    @property
    def completions(self) -> Completions:
        """The outputs of every choice (``n=``); the first is this prediction."""
        items = self._completions
        return Completions([self._values] if items is None else items, self._meta)

    # -- the values ---------------------------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Prediction):
            return self._values == other._values
        if isinstance(other, Mapping):
            return self._values == {key: other[key] for key in other}
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"Prediction({body})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_made, (type(self), self._values, self._completions, self._meta))

    def to_dict(self) -> dict[str, Any]:
        """The output values as a plain dict."""
        return dict(self._values)

    def toDict(self) -> dict[str, Any]:  # noqa: N802 - DSPy's name
        """The output values as a plain dict, models in them as dicts too (as DSPy's)."""
        return {key: to_plain(value) for key, value in self._values.items()}


def _made(
    cls: type[Prediction],
    values: Mapping[str, Any],
    completions: Sequence[Mapping[str, Any]] | None,
    meta: PredictionMeta,
) -> Prediction:
    """A prediction with its call's metadata (and its other choices, if ``n`` > 1)."""
    prediction = cls.__new__(cls)
    set_ = object.__setattr__
    set_(prediction, "_values", dict(values))
    set_(prediction, "_completions", [dict(c) for c in completions] if completions else None)
    set_(prediction, "_meta", meta)
    return prediction


class Completions(Sequence[Prediction]):
    """The outputs of every choice of a call: ``completions[i]`` or ``completions.answer``.

    Indexing gives a choice's `Prediction`; an output's name gives that output of every
    choice, in order (as DSPy's ``pred.completions.answer``). Equal to a list of dicts of
    the same outputs.
    """

    __slots__ = ("_items", "_meta")

    _items: list[dict[str, Any]]
    _meta: PredictionMeta

    def __init__(self, items: list[dict[str, Any]], meta: PredictionMeta) -> None:
        object.__setattr__(self, "_items", items)
        object.__setattr__(self, "_meta", meta)

    def __getattribute__(self, name: str) -> Any:
        if name[:1] != "_":
            items = object.__getattribute__(self, "_items")
            if items and name in items[0]:
                return [item.get(name) for item in items]
        return object.__getattribute__(self, name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        fields = ", ".join(self._items[0]) if self._items else "none"
        raise AttributeError(f"Completions has no field {name!r}; the fields: {fields}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Completions is read-only")

    @overload
    def __getitem__(self, index: int) -> Prediction: ...

    @overload
    def __getitem__(self, index: slice) -> list[Prediction]: ...

    def __getitem__(self, index: int | slice) -> Prediction | list[Prediction]:
        if isinstance(index, slice):
            return [_made(Prediction, item, None, self._meta) for item in self._items[index]]
        return _made(Prediction, self._items[index], None, self._meta)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Prediction]:
        for item in self._items:
            yield _made(Prediction, item, None, self._meta)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Completions):
            return self._items == other._items
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(other) == len(self._items) and all(
                mine == theirs for mine, theirs in zip(self._items, other, strict=True)
            )
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Completions({self._items!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Completions, (self._items, self._meta))


class _Loader(Protocol[_P_co]):
    def __call__(
        self,
        path: str | os.PathLike[str],
        *,
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

    def __get__(self, obj: _P | None, owner: type[_P]) -> _Loader[_P]:
        if obj is None:
            return cast("_Loader[_P]", owner._load_new)
        return cast("_Loader[_P]", obj._load_into)


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


def _load_advice(cls: type[Predict], data: Mapping[str, Any]) -> str:
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


def _without_endpoints(params: Mapping[str, Any], lm: BaseLM) -> dict[str, Any]:
    """A file's parameters without the settings that choose where requests go.

    With an LM given, the LM says where requests go; what the file says is logged, not used.
    """
    dropped = sorted(name for name in params if name in ENDPOINT_PARAMS)
    if dropped:
        logger().warning(
            "the saved prompt's %s not used: %r, given to load, says where requests go",
            ", ".join(f"{name}={params[name]!r}" for name in dropped)
            + (" is" if len(dropped) == 1 else " are"),
            lm,
        )
    return {name: value for name, value in params.items() if name not in ENDPOINT_PARAMS}


def _spec(names: tuple[tuple[str, ...], tuple[str, ...]]) -> str:
    return f"'{', '.join(names[0])} -> {', '.join(names[1])}'"


# DSPy Module methods a Predict does not have, and what to write instead.
_DSPY_INSTEAD = {
    "forward": "call the predictor, predict(**inputs)",
    "aforward": "await predict.acall(**inputs)",
    "reset": "predict.demos = []",
    "dump_state": "predict.to_dict() (and Predict.from_dict(data)), or predict.save(path)",
    "load_state": "Predict.from_dict(data), or predict.load(path)",
    "named_predictors": "a Predict is one predictor; a program is Python calling several",
    "predictors": "a Predict is one predictor; a program is Python calling several",
    "named_parameters": "a Predict is one predictor; a program is Python calling several",
    "deepcopy": "copy.deepcopy(predict)",
    "reset_copy": "copy.deepcopy(predict), then .demos = []",
    "inspect_history": "structio.inspect_history(n)",
    "map_named_predictors": "a Predict is one predictor; a program is Python calling several",
}


class Predict:
    """Call a model with a signature: ``Predict(sig, lm=lm)(question="...")``.

    Args:
        signature: A signature class or a string spec (``"question -> answer: int"``).
        lm: The model (an `LM`, `FakeLM`...; a model string is refused: wrap it in
            ``structio.LM(...)``); by default the one set with `structio.configure` /
            `structio.context`. Checked the same way when assigned or given to a call.
        adapter: The adapter instance; by default the configured one, else `ChatAdapter`.
        demos: Few-shot examples, each a dict of field name to value. They are checked here,
            and again whenever `demos` is assigned or added to (``predict.demos = [...]``,
            ``predict.demos.append(...)``): every key must be a field of the signature and
            every value of the field's type (converted as pydantic does, e.g. a dict to a
            model); a demo may leave fields out.
        name: A name for saving the prompt (`structio.save_prompt`): letters, digits,
            ``_``, ``.`` and ``-``.
        max_prompt_tokens: Truncate the conversation history, oldest turns first, so that
            the prompt fits this many tokens (o200k_base count) before calling the model.
        truncation_step: With ``max_prompt_tokens``: 0 drops just enough; a step fixes the
            cut point so consecutive prompts share their prefix (the provider's prefix cache
            stays warm); ``"auto"`` picks one (see `Prompt.truncate`).
        max_retries: When an answer cannot be used (unreadable, a missing output, a value
            that fails its type, constraints or validators, a call to an unknown tool), send
            it back to the model with what was wrong, up to this many times (per call:
            ``predict(..., max_retries=2)``). Provider errors are never re-asked. With
            re-asking on, ChatAdapter's JSON fallback still reads each answer as JSON but
            makes no blind request of its own: the re-ask, with feedback, replaces it.
        check_inputs: Check each input value against its declared type on every call: one
            that does not fit (``3`` for a ``str`` input, ``"many"`` for an ``int``) is a
            `FormatError` naming the field, the type and the value. ``False`` sends values
            as they are (DSPy only warns), for code that relies on duck typing.
        **params: Request parameters for every call (``temperature``, ``n``...), kept in
            `params` (formerly ``lm_kwargs``).

    When the provider says the prompt exceeds the context window, the history is cut to the
    model's input limit and the request is sent once more; ``prediction.truncation`` says so.
    """

    def __init__(
        self,
        signature: SignatureLike,
        *,
        lm: BaseLM | None = None,
        adapter: Adapter | None = None,
        demos: Iterable[Mapping[str, Any]] = (),
        name: str | None = None,
        max_prompt_tokens: int | None = None,
        truncation_step: TruncationStep = 0,
        max_retries: int = 0,
        check_inputs: bool = True,
        **params: Any,
    ) -> None:
        calling.check_retries(max_retries)
        if isinstance(signature, str):
            signature = make_signature(signature)
        if not isinstance(signature, SignatureMeta):
            raise ConfigurationError(
                f"Predict needs a Signature class or a string spec, not {type(signature).__name__}"
            )
        if not signature.instructions.strip():
            raise SignatureError(
                f"{signature.__name__} has empty instructions; write a docstring or use "
                ".with_instructions('...') (they tell the model its task)"
            )
        check_outputs(signature, type(self).__name__)
        self.signature: type[Signature] = signature
        self.name = None if name is None else check_name(name)
        self.lm = lm
        self.adapter = adapter
        self.demos = demos
        self.params: dict[str, Any] = dict(params)
        self.max_prompt_tokens = max_prompt_tokens
        self.truncation_step: TruncationStep = truncation_step
        self.max_retries = max_retries
        self.check_inputs = check_inputs
        clash = [name for name in _CALL_OPTIONS if name in signature.input_fields]
        if clash:
            raise ConfigurationError(
                f"{signature.__name__} has input(s) named {clash}, which Predict uses for call "
                "options (adapter, lm, params, config, max_retries); rename them"
            )

    # `lm`, `adapter` and `demos` are checked whenever they are set, as by the constructor:
    # DSPy code assigns them (``predict.demos = [...]``), and a wrong one must fail there,
    # not deep inside a later call (or, for a misspelled demo field, never).

    @property
    def lm(self) -> BaseLM | None:
        """The model of this predictor's calls; ``None``: the configured one."""
        return self._lm

    @lm.setter
    def lm(self, lm: BaseLM | None) -> None:
        self._lm: BaseLM | None = check_lm(lm)

    @property
    def adapter(self) -> Adapter | None:
        """The adapter of this predictor's calls; ``None``: the configured one."""
        return self._adapter

    @adapter.setter
    def adapter(self, adapter: Adapter | None) -> None:
        self._adapter: Adapter | None = check_adapter(adapter)

    @property
    def demos(self) -> DemoList:
        """The few-shot examples, checked against the signature when set or added.

        Assigning a list checks every demo as the constructor does (``FormatError``
        naming the demo and the field) and stores them converted to their fields' types;
        ``predict.demos.append(...)`` (``extend``, ``insert``...) checks what it adds.
        """
        return self._demos

    @demos.setter
    def demos(self, demos: Iterable[Mapping[str, Any]]) -> None:
        self._demos = DemoList(self.signature, checked_demos(self.signature, demos))

    @property
    def lm_kwargs(self) -> dict[str, Any]:
        """The former name of `params`."""
        return self.params

    def set_lm(self, lm: BaseLM | None) -> None:
        """Use ``lm`` for this predictor's calls (DSPy's name for ``predict.lm = lm``)."""
        self.lm = lm

    def get_lm(self) -> BaseLM | None:
        """The predictor's own LM, ``None`` when it calls the configured one (DSPy's name)."""
        return self.lm

    def __getattr__(self, name: str) -> Any:
        # Only for names normal lookup did not find: DSPy's module methods get a pointer
        # to structio's way instead of a bare AttributeError.
        instead = _DSPY_INSTEAD.get(name)
        if instead is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        raise AttributeError(
            f"Predict has no {name!r} (DSPy's Module has it; structio has no Module): {instead}"
        )

    # -- pickling ---------------------------------------------------------------------------
    #
    # A Predict travels to worker processes (multiprocessing, Ray, Spark): its signature, demos,
    # adapter, LM and options, each pickling itself (the LM without its history or clients).

    def __getstate__(self) -> dict[str, Any]:
        """The attributes to pickle; the signature as `portable` makes it for any pickler."""
        state = dict(self.__dict__)
        state["signature"] = portable(self.signature)
        state["_demos"] = list(self._demos)  # rebuilt bound to the signature on unpickling
        return state

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        """Restore a pickled (or copied) Predict."""
        attrs = dict(state)
        attrs["signature"] = from_portable(attrs["signature"])
        attrs.setdefault("check_inputs", True)  # pickled before the option existed
        # Pickled before lm, adapter and demos were checked properties: the old names.
        for name in ("lm", "adapter", "demos"):
            if name in attrs:
                attrs[f"_{name}"] = attrs.pop(name)
        # Checked when they were set: bound to the signature again, not checked again.
        attrs["_demos"] = DemoList(attrs["signature"], attrs.get("_demos") or ())
        self.__dict__.update(attrs)

    def __repr__(self) -> str:
        named = f", name={self.name!r}" if self.name else ""
        return f"Predict({self.signature!r}{named})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Predict):
            return NotImplemented
        return self._state() == other._state()

    __hash__ = None  # type: ignore[assignment]

    def _state(self) -> tuple[Any, ...]:
        return (
            self.name,
            self.signature,
            self.demos,
            self.adapter,
            type(self.lm),
            self.lm.to_dict() if isinstance(self.lm, LM) else None,
            self.params,
            self.max_prompt_tokens,
            self.truncation_step,
            self.max_retries,
            self.check_inputs,
        )

    # -- saving -----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The prompt as JSON-ready data (what `save` writes); never API keys.

        The signature is saved with `Signature.to_dict`, which records the module it was
        defined in (a load allows that module's classes once the loading program has
        imported it); the adapter with `Adapter.to_dict` (a custom adapter by its import
        path); an `LM` with `LM.to_dict`; other models are not saved (pass ``lm=`` after
        loading).

        Raises:
            SignatureError: A type has no text form.
            ConfigurationError: The adapter cannot be saved (a class defined in a function).
        """
        return {
            "structio_prompt": FORMAT_VERSION,
            "name": self.name,
            "signature": self.signature.to_dict(),
            "demos": [demo_to_data(self.signature, demo) for demo in self.demos],
            "adapter": self.adapter.to_dict() if self.adapter is not None else None,
            "lm": self.lm.to_dict() if isinstance(self.lm, LM) else None,
            "params": {k: jsonable(v) for k, v in public_params(self.params).items()},
            "max_prompt_tokens": self.max_prompt_tokens,
            "truncation_step": self.truncation_step,
            # Only when set, so files saved without re-asking stay as they were.
            **({"max_retries": self.max_retries} if self.max_retries else {}),
            **({} if self.check_inputs else {"check_inputs": False}),
        }

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        *,
        lm: BaseLM | None = None,
        trust_endpoint: bool = False,
        allowed_modules: Iterable[str] | None = None,
        trust_types: bool = False,
    ) -> Predict:
        """Rebuild a Predict from `to_dict`'s data, importing only the modules allowed.

        The types and the adapter class the data names are imported only from structio,
        the standard modules of plain types, the module the signature was saved from when
        this program has imported it, and ``allowed_modules`` (see `Signature.from_dict`);
        anything else is refused before it is imported.

        Args:
            data: What `to_dict` returned.
            lm: The model, rather than the one the data describes. Then where requests go
                is yours to say: the data's endpoint settings (its LM's, and ``api_base``...
                among its parameters) are not used, and need no ``trust_endpoint``.
            trust_endpoint: Use the endpoint (``api_base``, ``base_url``...) the data sets
                for its LM. Off by default, so that a file cannot send your requests, and
                the API key from your environment, to an address of its choosing.
            allowed_modules: More modules whose classes the data may name; each name
                allows its submodules (``["myapp"]`` allows ``myapp.models``).
            trust_types: Allow any module: only for data you trust as you trust code.

        Raises:
            SignatureError: A type names a module that is not allowed, or cannot be
                imported; the message names it.
            FormatError: A saved demo no longer fits the signature.
            ConfigurationError: The data sets an endpoint, no ``lm`` is given and
                ``trust_endpoint`` is False, or it names an adapter that is not allowed or
                cannot be loaded.
        """
        return cls._from_data(
            data,
            lm=lm,
            types=None,
            trust_endpoint=trust_endpoint,
            allowed_modules=allowed_modules,
            trust_types=trust_types,
        )

    @classmethod
    def _from_data(
        cls,
        data: Mapping[str, Any],
        *,
        lm: BaseLM | None,
        types: Mapping[str, Any] | None,
        trust_endpoint: bool,
        allowed_modules: Iterable[str] | None,
        trust_types: bool,
    ) -> Predict:
        """`from_dict`, with the fields' types taken from ``types`` where it names them."""
        check_lm(lm)
        signature = Signature.from_dict(
            data["signature"], allowed_modules=allowed_modules, trust_types=trust_types, types=types
        )
        lm_data = data.get("lm")
        adapter_data = data.get("adapter")
        # "lm_kwargs" is what files written before the rename hold.
        params = dict(data.get("params", data.get("lm_kwargs")) or {})
        if lm is None or trust_endpoint:
            check_endpoints(params, what="the saved prompt", trusted=trust_endpoint)
        else:
            params = _without_endpoints(params, lm)
        adapter = (
            Adapter.from_dict(
                adapter_data, allowed_modules=allowed_modules, trust_types=trust_types
            )
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
            max_retries=data.get("max_retries", 0),
            check_inputs=data.get("check_inputs", True),
            **params,
        )

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the prompt to one readable JSON file, atomically (see `to_dict`)."""
        write_json(pathlib.Path(path), self.to_dict())

    load = _ClassOrInstanceLoad()

    @classmethod
    def _load_new(
        cls,
        path: str | os.PathLike[str],
        *,
        lm: BaseLM | None = None,
        trust_endpoint: bool = False,
        allowed_modules: Iterable[str] | None = None,
        trust_types: bool = False,
    ) -> Predict:
        """``Predict.load(path)``: a new predictor from a file `save` wrote (see `load`)."""
        return cls.from_dict(
            read_saved(pathlib.Path(path)),
            lm=lm,
            trust_endpoint=trust_endpoint,
            allowed_modules=allowed_modules,
            trust_types=trust_types,
        )

    def _load_into(
        self,
        path: str | os.PathLike[str],
        *,
        lm: BaseLM | None = None,
        trust_endpoint: bool = False,
        allowed_modules: Iterable[str] | None = None,
        trust_types: bool = False,
    ) -> Predict:
        """``predictor.load(path)``: the file's prompt put into this predictor (see `load`)."""
        data = read_saved(pathlib.Path(path))
        mine, theirs = _field_names(self.signature), _saved_field_names(data["signature"])
        if theirs is not None and mine != theirs:
            raise ConfigurationError(
                f"{str(path)!r} holds a prompt for {_spec(theirs)}, not for this "
                f"{type(self).__name__}'s {_spec(mine)}; {_load_advice(type(self), data)}"
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
        loaded = self._from_data(
            data,
            lm=lm if lm is not None else self._lm,
            types={
                name: field.annotation
                for name, field in self.signature.fields.items()
                if name in in_script
            },
            trust_endpoint=trust_endpoint,
            allowed_modules=allowed_modules,
            trust_types=trust_types,
        )
        self.__dict__.update(loaded.__dict__)
        return self

    # -- showing the prompt -----------------------------------------------------------------

    def format(self, *, adapter: Adapter | None = None, **inputs: Any) -> list[dict[str, Any]]:
        """The chat messages a call with ``inputs`` sends (no model call)."""
        return resolve_adapter(adapter, self.adapter).format(self.signature, self.demos, inputs)

    def to_string(self, **inputs: Any) -> str:
        """The whole prompt as one plain string, for completion models and for reading.

        The instructions; each demo (and each turn of a `History` input) as ``field: value``
        lines; then the inputs and the first output's label, empty, for the model to
        continue. Blocks are separated by ``---`` lines.

        Raises:
            FormatError: An input is unknown.
        """
        return prompt_string(self.signature, self.demos, inputs)

    def _resolve(
        self,
        adapter: Adapter | None,
        lm: BaseLM | None,
        params: Mapping[str, Any] | None,
        config: Mapping[str, Any] | None,
    ) -> tuple[Adapter, BaseLM, Mapping[str, Any]]:
        if lm is not None:
            check_lm(lm)
        if adapter is not None:
            check_adapter(adapter)
        chosen_lm = lm or self._lm
        if chosen_lm is None:  # the message is built only when it is needed
            chosen_lm = resolve_lm(who=f"Predict({self.signature.__name__})")
        merged = (
            {**self.params, **(config or {}), **(params or {})} if config or params else self.params
        )
        return resolve_adapter(adapter, self._adapter), chosen_lm, merged

    def __call__(
        self,
        example: Mapping[str, Any] | None = None,
        /,
        *,
        adapter: Adapter | None = None,
        lm: BaseLM | None = None,
        params: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
        max_retries: int | None = None,
        **inputs: Any,
    ) -> Prediction:
        """Run the model on ``inputs`` and return the typed outputs.

        Args:
            example: The inputs as one `Example` (only the inputs `Example.with_inputs`
                marked are sent) or dict, besides or instead of keywords.
            adapter: Use this adapter for this call only.
            lm: Use this model for this call only.
            params: Request parameters for this call only (``{"temperature": 1.0, "n": 3}``).
            config: The same as ``params``, as DSPy names it.
            max_retries: Re-asks for this call only (see the class).
            **inputs: The signature's inputs.

        Raises:
            FormatError: An input is missing or unknown, or given both in ``example`` and
                as a keyword.
            ParseError: The completion cannot be read (after the fallback, or the last
                re-ask: ``error.attempts`` holds the earlier errors).
            LMError: The provider failed.
        """
        chosen_adapter, chosen_lm, merged = self._resolve(adapter, lm, params, config)
        if example is not None:
            inputs = _example_inputs(self.signature, example, inputs)
        result = calling.call(
            chosen_adapter,
            chosen_lm,
            self.signature,
            self.demos,
            inputs,
            merged,
            max_prompt_tokens=self.max_prompt_tokens,
            truncation_step=self.truncation_step,
            max_retries=self.max_retries if max_retries is None else max_retries,
            check_inputs=self.check_inputs,
        )
        return Prediction.from_result(result)

    async def acall(
        self,
        example: Mapping[str, Any] | None = None,
        /,
        *,
        adapter: Adapter | None = None,
        lm: BaseLM | None = None,
        params: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
        max_retries: int | None = None,
        **inputs: Any,
    ) -> Prediction:
        """Async form of calling the predictor."""
        chosen_adapter, chosen_lm, merged = self._resolve(adapter, lm, params, config)
        if example is not None:
            inputs = _example_inputs(self.signature, example, inputs)
        result = await calling.acall(
            chosen_adapter,
            chosen_lm,
            self.signature,
            self.demos,
            inputs,
            merged,
            max_prompt_tokens=self.max_prompt_tokens,
            truncation_step=self.truncation_step,
            max_retries=self.max_retries if max_retries is None else max_retries,
            check_inputs=self.check_inputs,
        )
        return Prediction.from_result(result)

    def stream(
        self,
        example: Mapping[str, Any] | None = None,
        /,
        *,
        adapter: Adapter | None = None,
        lm: BaseLM | None = None,
        params: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
        max_retries: int | None = None,
        **inputs: Any,
    ) -> Stream[Prediction]:
        """Run the model on ``inputs``, reading the outputs as it writes them.

        Iterate the result: `FieldDelta` events carry each ``str`` output's new text,
        `FieldValue` each output's typed value once its text is complete (never before,
        and never changed after), and the last item is the `Prediction`, equal to what
        calling the predictor gives for the same completion (also in ``stream.result``).
        If the answer has to be read again (the adapter's fallback), a `Reread` event says
        so and the outputs follow anew. Events are those of the first choice (``n=``).

        Example:
            >>> with qa.stream(question="Why is the sky blue?") as stream:  # doctest: +SKIP
            ...     for event in stream.field("answer"):
            ...         if isinstance(event, sio.FieldDelta):
            ...             print(event.delta, end="", flush=True)
            >>> stream.result.answer                                      # doctest: +SKIP

        Raises:
            FormatError: An input is missing or unknown (at once).
            ParseError: The completion cannot be read (after the fallback), when iterating.
            LMError: The provider failed, when iterating; a failure after text was
                streamed is not retried.
        """
        chosen_adapter, chosen_lm, merged = self._resolve(adapter, lm, params, config)
        if example is not None:
            inputs = _example_inputs(self.signature, example, inputs)
        source = calling.stream(
            chosen_adapter,
            chosen_lm,
            self.signature,
            self.demos,
            inputs,
            merged,
            max_prompt_tokens=self.max_prompt_tokens,
            truncation_step=self.truncation_step,
            max_retries=self.max_retries if max_retries is None else max_retries,
            check_inputs=self.check_inputs,
        )
        return Stream(_predictions(source), tuple(self.signature.output_fields))

    def astream(
        self,
        example: Mapping[str, Any] | None = None,
        /,
        *,
        adapter: Adapter | None = None,
        lm: BaseLM | None = None,
        params: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
        max_retries: int | None = None,
        **inputs: Any,
    ) -> AsyncStream[Prediction]:
        """Async form of `stream`: ``async for item in predictor.astream(...)``."""
        chosen_adapter, chosen_lm, merged = self._resolve(adapter, lm, params, config)
        if example is not None:
            inputs = _example_inputs(self.signature, example, inputs)
        source = calling.astream(
            chosen_adapter,
            chosen_lm,
            self.signature,
            self.demos,
            inputs,
            merged,
            max_prompt_tokens=self.max_prompt_tokens,
            truncation_step=self.truncation_step,
            max_retries=self.max_retries if max_retries is None else max_retries,
            check_inputs=self.check_inputs,
        )
        return AsyncStream(_apredictions(source), tuple(self.signature.output_fields))

    def batch(
        self,
        inputs: Iterable[Mapping[str, Any]],
        *,
        max_concurrency: int | None = None,
        num_threads: int | None = None,
        progress: bool = True,
        return_exceptions: bool = True,
        **call_options: Any,
    ) -> list[Prediction | BaseException]:
        """Run many calls in threads; results come back in input order.

        ``inputs`` is read as the calls go, in the calling thread: at most
        ``2 * max_concurrency`` items are taken ahead of their results, so a generator of a
        million rows costs the memory of its results, never of every input at once.

        A list or tuple is checked before any call: an item that is not a dict raises
        `ConfigurationError` naming its index. Any other iterable is checked as it is read:
        such an item fails in its place (a `ConfigurationError` naming its index, counted as
        a failed item), so the work done around it is kept. An exception raised by
        ``inputs`` itself (or ``KeyboardInterrupt``) ends the batch: no new call starts,
        the calls running finish, and it propagates.

        Args:
            inputs: One dict (or `Example`) of inputs per call: a list, or any iterable
                such as a generator (the progress bar shows a total when it has a
                ``len()``).
            max_concurrency: How many calls run at once (default 8).
            num_threads: DSPy's name for ``max_concurrency``.
            progress: Show a progress bar (only when standard error is a terminal).
            return_exceptions: Put a failed item's exception in its place in the results
                (default). If False, every item still runs, then a `BatchError` holding all
                results is raised when any failed, so no finished work is lost.
            **call_options: ``adapter=``, ``lm=``, ``params=`` (or ``config=``) or
                ``max_retries=`` for every call.

        Raises:
            BatchError: ``return_exceptions=False`` and at least one item failed.
            UsageError: A keyword is none of these (checked before any call), or both
                ``max_concurrency`` and ``num_threads`` are given.
            ConfigurationError: ``max_concurrency`` is not a positive int, ``inputs`` is a
                single dict, or a list or tuple holds an item that is not a dict.
        """
        import threading
        from concurrent.futures import ThreadPoolExecutor

        max_concurrency = _concurrency(max_concurrency, num_threads)
        _check_call_options(self.signature, call_options, "batch")
        total = _check_batch(inputs, max_concurrency)
        bar = Progress(total, label=self.signature.__name__, enabled=progress)
        results: list[Prediction | BaseException] = []
        # A slot is taken before an item is read and given back once its result is stored:
        # this bounds the items read ahead, and keeps the pool's queue short, without
        # holding a future per item.
        slots = threading.Semaphore(_AHEAD_PER_CALL * max_concurrency)
        fatal: list[BaseException] = []

        def run(index: int, item: Mapping[str, Any] | ConfigurationError) -> None:
            try:
                if isinstance(item, ConfigurationError):
                    raise item
                results[index] = self(item, **call_options)
                bar.advance()
            except Exception as exc:
                results[index] = exc
                bar.advance(failed=True)
            except BaseException as exc:  # SystemExit and the like from user code end the batch
                fatal.append(exc)
            finally:
                slots.release()

        workers = min(max_concurrency, total) if total else max_concurrency
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            items = enumerate(_checked(inputs))
            while True:
                slots.acquire()
                if fatal:
                    raise fatal[0]
                try:
                    index, item = next(items)
                except StopIteration:
                    break
                results.append(_PENDING)
                # Each call runs in a copy of the caller's context, so structio.context()
                # settings apply inside the worker threads too.
                pool.submit(contextvars.copy_context().run, run, index, item)
        except BaseException:
            # Items read but not started are dropped: the batch is ending with an error.
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            pool.shutdown(wait=True)
            bar.close()
        if fatal:  # the last calls ended it
            raise fatal[0]
        return _finish_batch(results, return_exceptions)

    def submit_batch(
        self,
        rows: Iterable[Mapping[str, Any]],
        *,
        state: str | os.PathLike[str] | None = None,
        adapter: Adapter | None = None,
        lm: BaseLM | None = None,
        params: Mapping[str, Any] | None = None,
        max_requests: int = 50_000,
        max_bytes: int = 200 * 1024 * 1024,
        progress: bool = True,
    ) -> BatchJob[Prediction]:
        """Submit ``rows`` to the provider's batch API (half price at OpenAI, within 24h).

        Each row is one request, exactly the one a call would send (``custom_id``: the
        row's number, from 1); rows answered in the response cache are read from it and
        not sent. The estimated cost is printed first (with ``progress``). Answers are read
        as a call reads them (ChatAdapter's JSON re-read included), but no second request is
        made: a row whose answer cannot be read fails. Re-asking (``max_retries``) does not
        apply.

        Example:
            >>> job = triage.submit_batch([{"ticket": t} for t in tickets])  # doctest: +SKIP
            >>> job.wait(poll_interval=60)                                  # doctest: +SKIP
            >>> predictions = job.results()  # a Prediction or an exception per row

        Args:
            rows: One dict of inputs per request.
            state: A file to record the batches in as soon as each exists: a job submitted
                again with the same file (after Ctrl-C or a crash) polls those batches
                rather than paying for them twice. Removed when every batch has been read.
            adapter: The adapter for these calls; by default the predictor's.
            lm: The model; by default the predictor's or the configured one. It must be an
                `LM` of a provider with a batch API (see the README).
            params: Request parameters for every row.
            max_requests: Requests per batch; more rows make several batches.
            max_bytes: Bytes per batch's request file.
            progress: Print the estimate, the provider's counts and the cost to stderr.

        Raises:
            ConfigurationError: The model has no batch API structio can reach, a row is not
                a dict, or ``state`` belongs to another model or signature.
            LMError: The provider refused the upload or the batch.
        """
        from structio.batch import BatchCall, BatchLimits, submit

        items = list(rows)
        for index, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise _not_a_dict(index, item)
        chosen_adapter, chosen_lm, merged = self._resolve(adapter, lm, params, None)
        call = BatchCall(
            chosen_adapter,
            chosen_lm,
            self.signature,
            self.demos,
            merged,
            self.max_prompt_tokens,
            self.truncation_step,
            self.check_inputs,
        )
        return submit(
            call,
            {
                number: _example_inputs(self.signature, item, {})
                for number, item in enumerate(items, 1)
            },
            wrap=Prediction.from_result,
            state=None if state is None else pathlib.Path(state),
            limits=BatchLimits(max_requests, max_bytes),
            progress=progress,
        )

    async def abatch(
        self,
        inputs: Iterable[Mapping[str, Any]],
        *,
        max_concurrency: int | None = None,
        num_threads: int | None = None,
        progress: bool = True,
        return_exceptions: bool = True,
        **call_options: Any,
    ) -> list[Prediction | BaseException]:
        """Async form of `batch`: at most ``max_concurrency`` calls in flight.

        ``inputs`` is read as the calls go (at most ``max_concurrency`` items ahead of
        their results) and checked as `batch` checks it, as are its keywords. An exception
        raised by ``inputs`` itself, or the cancellation of the batch, cancels the calls in
        flight and propagates.
        """
        import asyncio

        max_concurrency = _concurrency(max_concurrency, num_threads)
        _check_call_options(self.signature, call_options, "abatch")
        total = _check_batch(inputs, max_concurrency)
        bar = Progress(total, label=self.signature.__name__, enabled=progress)
        results: list[Prediction | BaseException] = []
        items = enumerate(_checked(inputs))

        # A fixed set of workers, each reading the next item when its call is done: no task
        # per item, and never more than max_concurrency items read ahead.
        async def worker() -> None:
            for index, item in items:
                # Reading and appending happen with no await between them, so the item's
                # place is its index.
                results.append(_PENDING)
                try:
                    if isinstance(item, ConfigurationError):
                        raise item
                    # A task of its own gives each call its own copy of the context, as
                    # `batch` does.
                    results[index] = await asyncio.ensure_future(self.acall(item, **call_options))
                except Exception as exc:
                    results[index] = exc
                    bar.advance(failed=True)
                else:
                    bar.advance()

        count = min(max_concurrency, total) if total else max_concurrency
        tasks = [asyncio.ensure_future(worker()) for _ in range(count)]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            # gather leaves the other workers running when one raises: stop them too.
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            bar.close()
        return _finish_batch(results, return_exceptions)


class ChainOfThought(Predict):
    """A `Predict` that has the model reason before it answers, as DSPy's ``ChainOfThought``.

    The signature gets a ``reasoning: str`` output first, with DSPy's description
    (``${reasoning}``), so the prompt is DSPy's byte for byte and ``pred.reasoning`` holds
    the model's steps. A signature that already has an output named ``reasoning`` is kept
    as it is (so a saved `ChainOfThought` loads back unchanged).

    Example:
        >>> import structio as sio
        >>> cot = sio.ChainOfThought("question -> answer: int")
        >>> list(cot.signature.output_fields)
        ['reasoning', 'answer']

    Args:
        signature: A signature class or a string spec.
        rationale_field: The reasoning field, an `OutputField(...)`, instead of DSPy's.
        rationale_field_type: Its type, when ``rationale_field`` gives none (``str``).
        **options: What `Predict` takes: ``lm=``, ``adapter=``, ``demos=``, request
            parameters...
    """

    def __init__(
        self,
        signature: SignatureLike,
        *,
        rationale_field: SignatureField | None = None,
        rationale_field_type: Any = str,
        **options: Any,
    ) -> None:
        if isinstance(signature, str):
            signature = make_signature(signature)
        if isinstance(signature, SignatureMeta):
            # Before the reasoning is added: a signature of no outputs gets no answer.
            check_outputs(signature, type(self).__name__)
        if isinstance(signature, SignatureMeta) and "reasoning" not in signature.output_fields:
            if rationale_field is None:
                rationale_field = OutputField(desc="${reasoning}")
            elif rationale_field.type_given:
                rationale_field_type = rationale_field.annotation
            signature = signature.prepend("reasoning", rationale_field, rationale_field_type)
        super().__init__(signature, **options)


_PENDING: Any = object()


def _predictions(
    source: Generator[StreamOut, None, None],
) -> Iterator[StreamEvent | Prediction]:
    with contextlib.closing(source):
        for item in source:
            yield Prediction.from_result(item) if isinstance(item, CallResult) else item


async def _apredictions(
    source: AsyncGenerator[StreamOut, None],
) -> AsyncIterator[StreamEvent | Prediction]:
    try:
        async for item in source:
            yield Prediction.from_result(item) if isinstance(item, CallResult) else item
    finally:
        await source.aclose()


# How many items `Predict.batch` reads ahead of their results, per call allowed at once:
# the second one waits in the pool's queue, so a worker never idles while the next item
# is read.
_AHEAD_PER_CALL = 2


def _check_batch(inputs: Iterable[Mapping[str, Any]], max_concurrency: int) -> int | None:
    """Check what can be checked before any call; the number of items, if known.

    A list or tuple is checked item by item here (it costs no copy); other iterables are
    checked as they are read, by `_checked`.
    """
    if (
        isinstance(max_concurrency, bool)
        or not isinstance(max_concurrency, int)
        or max_concurrency < 1
    ):
        raise ConfigurationError(f"max_concurrency must be a positive int, not {max_concurrency!r}")
    if isinstance(inputs, Mapping):
        raise ConfigurationError(
            "batch takes one dict of inputs per call (a list of dicts), not a single dict"
        )
    if isinstance(inputs, Sequence):
        for index, item in enumerate(inputs):
            if not isinstance(item, Mapping):
                raise _not_a_dict(index, item)
    try:
        return len(inputs)  # type: ignore[arg-type]
    except TypeError:
        return None


def _checked(
    inputs: Iterable[Mapping[str, Any]],
) -> Iterator[Mapping[str, Any] | ConfigurationError]:
    """The items of ``inputs``, read lazily; one that is not a dict as the error it is."""
    for index, item in enumerate(inputs):
        yield item if isinstance(item, Mapping) else _not_a_dict(index, item)


def _not_a_dict(index: int, item: object) -> ConfigurationError:
    return ConfigurationError(
        f"batch item {index} must be a dict of inputs, not {type(item).__name__}"
    )


def _finish_batch(
    results: list[Prediction | BaseException], return_exceptions: bool
) -> list[Prediction | BaseException]:
    if not return_exceptions and any(isinstance(r, BaseException) for r in results):
        raise BatchError(results)
    return results


# DSPy's keywords of `Module.batch` that have no counterpart of the same name here.
_DSPY_BATCH_KEYWORDS = {
    "disable_progress_bar": "use progress=False",
    "max_errors": (
        "every item runs; a failed one holds its exception in its place "
        "(return_exceptions=False raises a BatchError at the end instead)"
    ),
    "return_failed_examples": "a failed item holds its exception in its place in the results",
    "provide_traceback": "a failed item holds its exception, traceback included",
    "timeout": "set timeout= on the LM",
}


def _concurrency(max_concurrency: int | None, num_threads: int | None) -> int:
    """How many calls at once, from either name of the setting (8 by default)."""
    if max_concurrency is not None and num_threads is not None:
        raise UsageError(
            "batch got both max_concurrency and num_threads, which are one setting (num_threads "
            "is DSPy's name); pass only one"
        )
    chosen = max_concurrency if max_concurrency is not None else num_threads
    return 8 if chosen is None else chosen


def _check_call_options(signature: type[Signature], options: Mapping[str, Any], what: str) -> None:
    """Refuse, before any call, a keyword that is not a call option.

    Anything else would reach every call as an input and fail each item the same way.
    """
    for name in options:
        if name in _CALL_OPTIONS:
            continue
        if name in signature.input_fields:
            hint = f"`{name}` is an input: put it in each item's dict"
        else:
            hint = _DSPY_BATCH_KEYWORDS.get(name, "")
        accepted = ", ".join(
            ["max_concurrency", "num_threads", "progress", "return_exceptions", *_CALL_OPTIONS]
        )
        raise UsageError(
            f"Predict.{what}() got an unexpected keyword argument {name!r}"
            f"{f' ({hint})' if hint else ''}; it takes {accepted}"
        )


def _example_inputs(
    signature: type[Signature], example: object, inputs: Mapping[str, Any]
) -> dict[str, Any]:
    """The inputs of a call given one `Example` or dict (and maybe keywords too).

    An example whose inputs are marked gives those only; one without marks gives all its
    values, and a value that is no input of the signature is an error that says to mark
    them (a label must never reach the model as an input).
    """
    if isinstance(example, Example):
        marked = example.input_keys
        if marked is not None:
            given = {key: value for key, value in example.items() if key in marked}
        else:
            given = dict(example.items())
            extra = [key for key in given if key not in signature.input_fields]
            if extra:
                names = ", ".join(repr(n) for n in given if n in signature.input_fields)
                raise FormatError(
                    f"the Example holds {', '.join(repr(n) for n in extra)}, which "
                    f"{'is' if len(extra) == 1 else 'are'} not an input of "
                    f"{signature.__name__}: mark its inputs with "
                    f"example.with_inputs({names}) and only those are sent"
                )
    elif isinstance(example, Mapping):
        given = {key: example[key] for key in example}
    else:
        raise FormatError(
            f"{signature.__name__}: a Predict takes its inputs as keywords, or as one Example "
            f"or dict, not {type(example).__name__}"
        )
    twice = [name for name in given if name in inputs]
    if twice:
        raise FormatError(
            f"{', '.join(repr(n) for n in twice)} given both in the example and as a keyword; "
            "give each input once"
        )
    return {**given, **inputs} if inputs else given
