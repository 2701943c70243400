"""`Predict`: a signature, demos, an adapter and an LM, called like a function."""

from __future__ import annotations

import os
import pathlib
from collections.abc import (
    Iterable,
    Mapping,
)
from typing import TYPE_CHECKING, Any, TypeVar

from structio import call as calling
from structio._demos import DemoList, checked_demos
from structio._text_prompt import prompt_string
from structio._util.files import write_json
from structio.adapters.base import Adapter, SignatureLike
from structio.exceptions import (
    ConfigurationError,
    SignatureError,
)
from structio.lm.base import BaseLM
from structio.lm.lm import LM
from structio.predict import saving
from structio.predict.inputs import (
    CALL_OPTIONS,
    example_inputs,
    not_a_dict,
    prediction_inputs,
)
from structio.predict.module import PredictorModule
from structio.predict.prediction import (
    Prediction,
    apredictions,
    predictions,
    unnameable_output,
)
from structio.predict.saving import _ClassOrInstanceLoad, check_name, read_saved
from structio.rendering.prompt import TruncationStep
from structio.settings import check_adapter, check_lm, resolve_adapter, resolve_lm
from structio.signatures.signature import (
    Signature,
    SignatureMeta,
    from_portable,
    make_signature,
    portable,
)
from structio.streams import AsyncStream, Stream, list_outputs

if TYPE_CHECKING:
    from structio.batch import BatchJob

__all__ = ["Predict", "check_outputs"]

_P = TypeVar("_P", bound="Predict")


def check_outputs(signature: type[Signature], who: str) -> None:
    """Refuse outputs a `Prediction` cannot return, before any request.

    A signature with no outputs (the model would have no task: a class may declare none,
    as a base class for others, but a module built with it may not), or with an output
    named as `structio.predict.prediction.UNNAMEABLE_OUTPUTS` says no output may be
    (``keys``, which ``dict(pred)`` calls).

    Raises:
        SignatureError: ``signature`` has no output fields, or one no output may have.
    """
    if not signature.output_fields:
        raise SignatureError(
            f"{signature.__name__} has no output fields, so a {who} built with it has nothing "
            "to ask the model for: declare at least one, e.g. answer: str = "
            "structio.OutputField() (a signature without outputs can only be a base class)"
        )
    refused = unnameable_output(
        signature.output_fields, f"{signature.__name__}, the signature of this {who},"
    )
    if refused is not None:
        raise refused


class Predict(PredictorModule):
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
        confidence: Give each output's confidence in [0, 1], ``pred.meta.confidence``, from
            the model's token log probabilities (asked for on every call): a
            `ConfigurationError` if the model's profile says it returns none.
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
        confidence: bool = False,
        **params: Any,
    ) -> None:
        options = calling.CallOptions(
            max_prompt_tokens, truncation_step, max_retries, check_inputs, confidence
        )
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
        #: How each call is made (truncation, re-asks, input checks); the four attributes
        #: below read and set it.
        self.options: calling.CallOptions = options
        clash = [name for name in CALL_OPTIONS if name in signature.input_fields]
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
    def max_prompt_tokens(self) -> int | None:
        """``options.max_prompt_tokens``: the prompt's token budget (``None``: none)."""
        return self.options.max_prompt_tokens

    @max_prompt_tokens.setter
    def max_prompt_tokens(self, value: int | None) -> None:
        self.options = self.options.replace(max_prompt_tokens=value)

    @property
    def truncation_step(self) -> TruncationStep:
        """``options.truncation_step``: how the history is cut to the budget."""
        return self.options.truncation_step

    @truncation_step.setter
    def truncation_step(self, value: TruncationStep) -> None:
        self.options = self.options.replace(truncation_step=value)

    @property
    def max_retries(self) -> int:
        """``options.max_retries``: how many times an unusable answer is re-asked."""
        return self.options.max_retries

    @max_retries.setter
    def max_retries(self, value: int) -> None:
        self.options = self.options.replace(max_retries=value)

    @property
    def check_inputs(self) -> bool:
        """``options.check_inputs``: whether input values are checked against their types."""
        return self.options.check_inputs

    @check_inputs.setter
    def check_inputs(self, value: bool) -> None:
        self.options = self.options.replace(check_inputs=value)

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
        if "options" not in attrs:  # pickled before the options were one value
            attrs["options"] = calling.CallOptions(
                attrs.pop("max_prompt_tokens", None),
                attrs.pop("truncation_step", 0),
                attrs.pop("max_retries", 0),
                attrs.pop("check_inputs", True),
            )
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
            self.options,
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
        return saving.prompt_data(self)

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
            trust_endpoint: Use every setting the data gives. Off by default: the data
                then sets only sampling, length and format parameters, with retries, time
                limits, ``n`` and ``max_tokens`` within bounds (`FILE_SETTINGS` of
                ``structio._util.secrets``), so that a file cannot send your requests, and
                the API key from your environment, to an address of its choosing
                (``api_base``, ``aws_bedrock_runtime_endpoint``...), as its own account, to
                be stored by the provider, or with no end to their cost and time.
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
        return saving.from_data(
            cls,
            data,
            lm=lm,
            types=types,
            trust_endpoint=trust_endpoint,
            allowed_modules=allowed_modules,
            trust_types=trust_types,
        )

    def save(self, path: str | os.PathLike[str], save_program: bool = False) -> None:
        """Write the prompt to one readable JSON file, atomically (see `to_dict`).

        JSON whatever the name's suffix (a DSPy ``.pkl`` name too). ``save_program`` is
        DSPy's: False (its default) is this; True (the whole program, pickled) is refused.

        Raises:
            UsageError: ``save_program=True``.
            SignatureError: Something in it cannot be saved (a type with no text form...).
            SaveError: The file cannot be written (a NUL in the path, no permission, a full
                disk...); a file already there is left as it was.
        """
        saving.refuse_program(save_program)
        write_json(pathlib.Path(path), self.to_dict(), what="the prompt")

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
        return saving.load_into(
            self,
            path,
            lm=lm,
            trust_endpoint=trust_endpoint,
            allowed_modules=allowed_modules,
            trust_types=trust_types,
        )

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

    def _call_args(
        self,
        example: Mapping[str, Any] | None,
        adapter: Adapter | None,
        lm: BaseLM | None,
        params: Mapping[str, Any] | None,
        config: Mapping[str, Any] | None,
        max_retries: int | None,
        inputs: dict[str, Any],
    ) -> tuple[tuple[Any, ...], calling.CallOptions]:
        """What every verb passes to the call layer: the call's arguments and its options."""
        chosen_adapter, chosen_lm, merged = self._resolve(adapter, lm, params, config)
        if example is not None:
            inputs = example_inputs(self.signature, example, inputs)
        inputs = prediction_inputs(self.signature, inputs)
        options = self.options
        if max_retries is not None:
            options = options.replace(max_retries=max_retries)
        return (chosen_adapter, chosen_lm, self.signature, self.demos, inputs, merged), options

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
        args, options = self._call_args(example, adapter, lm, params, config, max_retries, inputs)
        return Prediction.from_result(calling.call(*args, options=options))

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
        args, options = self._call_args(example, adapter, lm, params, config, max_retries, inputs)
        return Prediction.from_result(await calling.acall(*args, options=options))

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
        `FieldItem` each element of a list output once it is complete, `FieldValue` each
        output's typed value once its text is complete, `ReasoningDelta` the model's
        reasoning; the last item is the `Prediction`, equal to what calling the predictor
        gives for the same completion (also in ``stream.result``). A value or item shown
        is final: the result holds it, unless a `Reread` voids it (the answer is read
        again: the fallback, a re-ask; the outputs follow anew) or the stream ends with
        `Failed` and raises. `Stream.items` gives a list output's items alone. Events are
        those of the first choice (``n=``).

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
        args, options = self._call_args(example, adapter, lm, params, config, max_retries, inputs)
        source = calling.stream(*args, options=options)
        fields = tuple(self.signature.output_fields)
        return Stream(predictions(source), fields, list_outputs(self.signature))

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
        args, options = self._call_args(example, adapter, lm, params, config, max_retries, inputs)
        source = calling.astream(*args, options=options)
        fields = tuple(self.signature.output_fields)
        return AsyncStream(apredictions(source), fields, list_outputs(self.signature))

    def batch(  # type: ignore[override]  # structio's own, not a program's `Module.batch`
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
        from structio.predict import batching  # threads and progress: loaded when used

        return batching.run_batch(
            self,
            inputs,
            max_concurrency,
            num_threads,
            progress,
            return_exceptions,
            call_options,
        )

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
        """Submit ``rows`` to the provider's batch API (half price at OpenAI, Anthropic; 24h).

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
            SaveError: ``state`` cannot be written (see `structio.batch.submit`).
        """
        from structio.batch import BatchCall, BatchLimits, submit

        items = list(rows)
        for index, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise not_a_dict(index, item)
        chosen_adapter, chosen_lm, merged = self._resolve(adapter, lm, params, None)
        call = BatchCall(
            chosen_adapter,
            chosen_lm,
            self.signature,
            self.demos,
            merged,
            self.options,
        )
        return submit(
            call,
            {
                number: example_inputs(self.signature, item, {})
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
        from structio.predict import batching

        return await batching.arun_batch(
            self,
            inputs,
            max_concurrency,
            num_threads,
            progress,
            return_exceptions,
            call_options,
        )
