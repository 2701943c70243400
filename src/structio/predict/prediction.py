"""What a call returns: `Prediction` (typed outputs and how they were made) and `Completions`."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from typing import Any, overload

from structio.call import Attempt, CallResult, Fallback, Route, StreamOut
from structio.example import to_plain
from structio.exceptions import SignatureError
from structio.lm.types import LMResponse, Usage
from structio.parsing.clean import drafts
from structio.parsing.stream import StreamEvent
from structio.rendering.prompt import Truncation

__all__ = [
    "UNNAMEABLE_OUTPUTS",
    "Completions",
    "Prediction",
    "PredictionMeta",
    "apredictions",
    "predictions",
    "unnameable_output",
]

#: What no output of a `Prediction` may be named: ``dict(pred)``, ``{**pred}``, ``f(**pred)``
#: and ``d.update(pred)`` call ``pred.keys()`` on the instance (CPython does, for any mapping
#: that is not a dict), where an output of that name would answer instead of the method.
#: Every other name works: the mapping protocol reaches the rest through ``__iter__`` and
#: ``__getitem__``, and structio calls the methods through the class.
UNNAMEABLE_OUTPUTS = frozenset({"keys"})


def unnameable_output(names: Iterable[str], where: str) -> SignatureError | None:
    """The `SignatureError` for an output no prediction can hold, or ``None`` if none is.

    Args:
        names: The output names.
        where: What has them (``"QA, the signature of this Predict,"``), for the message.
    """
    found = sorted(set(names) & UNNAMEABLE_OUTPUTS)
    if not found:
        return None
    name = found[0]
    return SignatureError(
        f"{where} has an output named {name!r}, which a Prediction cannot hold: its outputs "
        f"read as attributes, and dict(pred) and {{**pred}} call pred.{name}(), which the "
        f"output would hide. Rename it (e.g. {name[:-1]}_list or {name}_found: the model "
        "sees the field's name, so say what it holds); its description can keep the word"
    )


@dataclasses.dataclass(frozen=True)
class PredictionMeta:
    """How a prediction was made: the route, the tokens, the cost, the raw responses.

    ``pred.meta`` holds it (``Prediction.meta_of(pred)`` when an output is named ``meta``).

    Attributes:
        route: How the outputs were read: the adapter's own route (``"chat"``,
            ``"json"``, ``"xml"``, a custom adapter's), ``"json_reparse"`` (the completion
            read again as JSON, no new request) or ``"json_request"`` (a second request in
            JSON was needed); the one list is `structio.call.Route`.
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
        fallback: Whether and how the adapter's fallback was used: ``None``,
            ``"reparse"`` (the same completion read in its format) or ``"request"``.
        confidences: With ``confidence=True``, each choice's output confidences (see
            `confidence`), in the order of ``pred.completions``; else ``None``.
        choice: Which choice of the call this prediction is (``pred.completions[i]``'s
            meta says ``i``): the one `confidence` speaks of.
        lm_usage_total: What ``get_lm_usage()`` gives when it was set
            (``pred.set_lm_usage(...)``: a program's usage, all its calls); ``None``: this
            call's own, from `responses`.
    """

    route: Route = "chat"
    usage: Usage = dataclasses.field(default_factory=Usage)
    cost: float | None = None
    responses: tuple[LMResponse, ...] = ()
    truncation: Truncation | None = None
    max_tokens_reached: bool = False
    attempts: tuple[Attempt, ...] = ()
    fallback: Fallback | None = None
    confidences: tuple[dict[str, float | None], ...] | None = None
    choice: int = 0
    lm_usage_total: Mapping[str, Mapping[str, Any]] | None = None

    @property
    def confidence(self) -> dict[str, float | None] | None:
        """Each output's confidence in [0, 1] for this choice, ``None`` where unknown.

        Asked for with ``Predict(..., confidence=True)``; ``None`` when it was not. For a
        label (``Literal``, ``Enum``, ``bool``) the probability of the chosen option
        against the others; for any other value the geometric mean of its tokens'
        probabilities. The details: `structio.parsing.confidence`.
        """
        if self.confidences is None or self.choice >= len(self.confidences):
            return None
        return self.confidences[self.choice]

    def of_choice(self, index: int) -> PredictionMeta:
        """This meta as choice ``index``'s (the same when no confidence was asked)."""
        if self.confidences is None or index == self.choice:
            return self
        return dataclasses.replace(self, choice=index)

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
            fallback=result.fallback,
            confidences=result.confidence,
        )

    def lm_usage(self) -> dict[str, dict[str, Any]]:
        """Tokens per model, as DSPy's ``get_lm_usage()`` gives them (cache hits left out)."""
        if self.lm_usage_total is not None:
            return {model: dict(counts) for model, counts in self.lm_usage_total.items()}
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
    ``route``, ``items``, ``values`` or ``get`` is ``pred.cost``, ``pred.route``,
    ``pred.items``... How the call went (route, usage, cost, raw responses, truncation,
    re-asks) is ``pred.meta``, a `PredictionMeta`; if an output is itself named ``meta``,
    ``pred.meta`` is that output and ``Prediction.meta_of(pred)`` the call's. A method is
    always reachable from the class: ``Prediction.to_dict(pred)`` even with an output named
    ``to_dict``, ``Prediction.items(pred)`` with one named ``items``; structio calls them
    so, and ``dict(pred)``, ``{**pred}``, ``json.dumps(dict(pred))``, pickling and copying
    work whatever the names. Code of others that calls ``pred.items()`` on the instance
    (pydantic validating a prediction as a dict, `collections.Counter`) meets the output
    instead: give it ``dict(pred)``.

    One name is refused (`UNNAMEABLE_OUTPUTS`): ``keys``, which ``dict(pred)`` and
    ``{**pred}`` call on the instance. `Predict` refuses a signature with such an output,
    and so does ``Prediction(keys=...)``, with a `SignatureError` that says to rename it.

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
        refused = unnameable_output(merged, "Prediction(...)")
        if refused is not None:
            raise refused
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

    @classmethod
    def from_completions(
        cls,
        completions: Sequence[Mapping[str, Any]] | Mapping[str, Sequence[Any]],
        signature: Any = None,
    ) -> Prediction:
        """A prediction of several choices, the first its values (DSPy's name).

        ``completions`` is a list of output dicts, or a dict of lists (DSPy's other form:
        ``{"answer": ["4", "four"]}``, every list as long). ``signature`` is DSPy's and
        unused: a structio prediction reads its values without one.

        Raises:
            SignatureError: There is no choice, or the dict's lists differ in length.
        """
        del signature
        if isinstance(completions, Mapping):
            lengths = {name: len(values) for name, values in completions.items()}
            if len(set(lengths.values())) > 1:
                raise SignatureError(
                    f"Prediction.from_completions: each output's list gives one value per "
                    f"choice, and these differ in length: {lengths}"
                )
            count = next(iter(lengths.values()), 0)
            rows = [{name: values[i] for name, values in completions.items()} for i in range(count)]
        else:
            rows = [dict(choice) for choice in completions]
        if not rows:
            raise SignatureError("Prediction.from_completions needs one choice at least")
        for row in rows:
            refused = unnameable_output(row, "Prediction.from_completions(...)")
            if refused is not None:
                raise refused
        return _made(cls, rows[0], rows if len(rows) > 1 else None, _NO_META)

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
            return _reasoning_of(self._meta)  # not self.lm_reasoning: an output may be so named
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

    def set_lm_usage(self, value: Mapping[str, Mapping[str, Any]]) -> None:
        """Make ``get_lm_usage()`` give ``value``, as DSPy's ``Prediction.set_lm_usage``.

        For a program that returns one of its predictions: the usage of all its calls
        (``usage.get_total_tokens()`` of a `structio.track_usage` block around them). The
        outputs stay read-only; ``meta.usage`` stays this call's own.
        """
        object.__setattr__(
            self, "_meta", dataclasses.replace(self._meta, lm_usage_total=dict(value))
        )

    @property
    def lm_reasoning(self) -> str | None:
        """The model's native reasoning for this answer, kept apart from the outputs.

        The reply's ``reasoning_content`` (or thinking blocks), else the ``<think>`` drafts
        the parser set aside; ``None`` when the model gave neither. ``pred.reasoning`` is
        this too, unless the signature has an output named ``reasoning``.
        """
        return _reasoning_of(self._meta)

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

    def copy(self, **changes: Any) -> Prediction:
        """A copy with ``changes`` to its values (DSPy's name); the call's metadata stays.

        Changed values are this choice's only: the copy has no other choices.

        Raises:
            SignatureError: A change names ``keys`` (see `UNNAMEABLE_OUTPUTS`).
        """
        refused = unnameable_output(changes, "Prediction.copy(...)")
        if refused is not None:
            raise refused
        completions = None if changes else self._completions
        return _made(type(self), {**self._values, **changes}, completions, self._meta)

    def without(self, *keys: str) -> Prediction:
        """A copy without the outputs ``keys`` (DSPy's name); it has no other choices."""
        kept = {name: value for name, value in self._values.items() if name not in keys}
        return _made(type(self), kept, None, self._meta)

    def toDict(self) -> dict[str, Any]:  # noqa: N802 - DSPy's name
        """The output values as a plain dict, models in them as dicts too.

        DSPy's name (``dspy.Prediction.toDict``), kept for DSPy code.
        """
        return {key: to_plain(value) for key, value in self._values.items()}


def _reasoning_of(meta: PredictionMeta) -> str | None:
    """The model's native reasoning for the answer of ``meta``'s last response (see above)."""
    responses = meta.responses
    if not responses or not responses[-1].completions:
        return None
    completion = responses[-1].completions[0]
    return completion.reasoning or drafts(completion.text)


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
    choice, in order (as DSPy's ``pred.completions.answer``), whatever the name: an output
    named ``count`` or ``index`` hides the method, which the class still reaches
    (``Completions.index(pred.completions, ...)``); ``list()``, ``len()``, ``in`` and
    iteration use only dunder methods, which no output can hide. Equal to a list of dicts
    of the same outputs.
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
            chosen = range(len(self._items))[index]
            return [
                _made(Prediction, self._items[i], None, self._meta.of_choice(i)) for i in chosen
            ]
        item = self._items[index]  # an index out of range raises here
        return _made(Prediction, item, None, self._meta.of_choice(index % len(self._items)))

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Prediction]:
        for i, item in enumerate(self._items):
            yield _made(Prediction, item, None, self._meta.of_choice(i))

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


def predictions(
    source: Generator[StreamOut, None, None],
) -> Iterator[StreamEvent | Prediction]:
    """A streamed call's items, its result as a `Prediction`."""
    with contextlib.closing(source):
        for item in source:
            yield Prediction.from_result(item) if isinstance(item, CallResult) else item


async def apredictions(
    source: AsyncGenerator[StreamOut, None],
) -> AsyncIterator[StreamEvent | Prediction]:
    """Async form of `predictions`."""
    try:
        async for item in source:
            yield Prediction.from_result(item) if isinstance(item, CallResult) else item
    finally:
        await source.aclose()
