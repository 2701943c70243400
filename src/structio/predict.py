"""`Predict`: a signature, demos, an adapter and an LM, called like a function."""

from __future__ import annotations

import contextvars
import os
import pathlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from structio._demos import checked_demos, demo_from_data, demo_to_data
from structio._progress import Progress
from structio._text_prompt import prompt_string
from structio.adapters.base import Adapter, AdapterResult, Path, SignatureLike
from structio.exceptions import BatchError, ConfigurationError, SignatureError
from structio.lm.base import BaseLM
from structio.lm.types import LMResponse, Usage
from structio.prompt import Truncation, TruncationStep
from structio.saved import (
    FORMAT_VERSION,
    adapter_from_dict,
    adapter_to_dict,
    check_name,
    lm_from_dict,
    lm_to_dict,
    public_settings,
    read_json,
    write_json,
)
from structio.settings import chosen_adapter, current_settings
from structio.signatures.signature import Signature, SignatureMeta, make_signature

__all__ = ["Predict", "Prediction"]

# Keyword arguments of a call that are not inputs of the signature.
_CALL_OPTIONS = ("adapter", "lm", "config")


class Prediction(Mapping[str, Any]):
    """The outputs of one call, read as attributes (``pred.answer``) or keys.

    Attributes:
        completions: The outputs of every choice (``n=``); the first is this prediction.
        path: How the outputs were read: ``"chat"``, ``"json"``, ``"json_reparse"``
            (ChatAdapter's completion read as JSON, no new request) or ``"json_request"``
            (a second request in JSON was needed).
        usage: Tokens of every request made (zero for cache hits).
        cost: Cost in USD when litellm knows the price (0.0 for cache hits), else ``None``.
        responses: The raw model responses, in order.
        truncation: What was cut from the prompt to fit (``max_prompt_tokens``, or the
            model's context window after the provider refused the prompt), or ``None``.
    """

    __slots__ = ("_values", "completions", "cost", "path", "responses", "truncation", "usage")

    _values: dict[str, Any]
    completions: list[dict[str, Any]]
    path: Path
    usage: Usage
    cost: float | None
    responses: list[LMResponse]
    truncation: Truncation | None

    def __init__(
        self,
        values: Mapping[str, Any],
        *,
        completions: Sequence[Mapping[str, Any]] | None = None,
        path: Path = "chat",
        usage: Usage | None = None,
        cost: float | None = None,
        responses: Sequence[LMResponse] = (),
        truncation: Truncation | None = None,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "_values", dict(values))
        set_(self, "completions", [dict(c) for c in completions] if completions else [dict(values)])
        set_(self, "path", path)
        set_(self, "usage", usage or Usage())
        set_(self, "cost", cost)
        set_(self, "responses", list(responses))
        set_(self, "truncation", truncation)

    @classmethod
    def from_result(cls, result: AdapterResult) -> Prediction:
        """Build a prediction from what an adapter call returned."""
        return cls(
            result.outputs[0] if result.outputs else {},
            completions=result.outputs,
            path=result.path,
            usage=result.usage,
            cost=result.cost,
            responses=result.responses,
            truncation=result.truncation,
        )

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            fields = ", ".join(self._values) or "none"
            raise AttributeError(
                f"Prediction has no field {name!r}; its fields: {fields}"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Prediction is read-only")

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Prediction):
            return self._values == other._values
        if isinstance(other, Mapping):
            return self._values == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"Prediction({body})"

    def to_dict(self) -> dict[str, Any]:
        """The output values as a plain dict."""
        return dict(self._values)


class Predict:
    """Call a model with a signature: ``Predict(sig, lm=lm)(question="...")``.

    Args:
        signature: A signature class or a string spec (``"question -> answer: int"``).
        lm: The model; by default the one set with `structio.configure` / `structio.context`.
        adapter: The adapter; by default the configured one, else `ChatAdapter`.
        demos: Few-shot examples, each a dict of field name to value. They are checked here:
            every key must be a field of the signature and every value of the field's type
            (converted as pydantic does, e.g. a dict to a model); a demo may leave fields out.
        name: A name for saving the prompt (`structio.save_prompt`): letters, digits,
            ``_``, ``.`` and ``-``.
        max_prompt_tokens: Truncate the conversation history, oldest turns first, so that
            the prompt fits this many tokens (o200k_base count) before calling the model.
        truncation_step: With ``max_prompt_tokens``: 0 drops just enough; a step fixes the
            cut point so consecutive prompts share their prefix (the provider's prefix cache
            stays warm); ``"auto"`` picks one (see `Prompt.truncate`).
        **lm_kwargs: Request parameters for every call (``temperature``, ``n``...).

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
        **lm_kwargs: Any,
    ) -> None:
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
        self.signature: type[Signature] = signature
        self.name = None if name is None else check_name(name)
        self.lm = lm
        self.adapter = adapter
        self.demos: list[dict[str, Any]] = checked_demos(signature, demos)
        self.lm_kwargs: dict[str, Any] = dict(lm_kwargs)
        self.max_prompt_tokens = max_prompt_tokens
        self.truncation_step: TruncationStep = truncation_step
        clash = [name for name in _CALL_OPTIONS if name in signature.input_fields]
        if clash:
            raise ConfigurationError(
                f"{signature.__name__} has input(s) named {clash}, which Predict uses for call "
                "options (adapter, lm, config); rename them"
            )

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
            repr(self.adapter),
            type(self.lm),
            lm_to_dict(self.lm) if self.lm is not None else None,
            self.lm_kwargs,
            self.max_prompt_tokens,
            self.truncation_step,
        )

    # -- saving -----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The prompt as JSON-ready data (what `save` writes); never API keys.

        Raises:
            SignatureError: Something cannot be saved (a type with no text form, an adapter
                other than ChatAdapter / JSONAdapter).
        """
        return {
            "structio_prompt": FORMAT_VERSION,
            "name": self.name,
            "signature": self.signature.to_dict(),
            "demos": [demo_to_data(self.signature, demo) for demo in self.demos],
            "adapter": adapter_to_dict(self.adapter),
            "lm": lm_to_dict(self.lm),
            "lm_kwargs": public_settings(self.lm_kwargs),
            "max_prompt_tokens": self.max_prompt_tokens,
            "truncation_step": self.truncation_step,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Predict:
        """Rebuild a Predict from `to_dict`'s data (importing the classes it names).

        Raises:
            SignatureError: A type cannot be imported; the message names it.
            FormatError: A saved demo no longer fits the signature.
        """
        signature = Signature.from_dict(data["signature"])
        return cls(
            signature,
            lm=lm_from_dict(data.get("lm")),
            adapter=adapter_from_dict(data.get("adapter")),
            demos=[demo_from_data(signature, demo) for demo in data.get("demos") or []],
            name=data.get("name"),
            max_prompt_tokens=data.get("max_prompt_tokens"),
            truncation_step=data.get("truncation_step", 0),
            **dict(data.get("lm_kwargs") or {}),
        )

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the prompt to one readable JSON file, atomically (see `to_dict`)."""
        write_json(pathlib.Path(path), self.to_dict())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Predict:
        """Read a prompt that `save` wrote.

        Raises:
            ConfigurationError: The file cannot be read or is not a saved prompt.
            SignatureError: A type it names cannot be imported; the message names it.
        """
        return cls.from_dict(read_json(pathlib.Path(path)))

    # -- showing the prompt -----------------------------------------------------------------

    def format(self, *, adapter: Adapter | None = None, **inputs: Any) -> list[dict[str, Any]]:
        """The chat messages a call with ``inputs`` sends (no model call)."""
        return chosen_adapter(adapter, self.adapter).format(self.signature, self.demos, inputs)

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
        self, adapter: Adapter | None, lm: BaseLM | None, config: Mapping[str, Any] | None
    ) -> tuple[Adapter, BaseLM, dict[str, Any]]:
        settings = current_settings()
        chosen_lm = lm or self.lm or settings.lm
        if chosen_lm is None:
            raise ConfigurationError(
                "no LM to call: pass lm= to Predict or to the call, or set one with "
                "structio.configure(lm=structio.LM('openai/gpt-4o-mini'))"
            )
        return (
            chosen_adapter(adapter, self.adapter),
            chosen_lm,
            {**self.lm_kwargs, **(config or {})},
        )

    def __call__(
        self,
        *,
        adapter: Adapter | None = None,
        lm: BaseLM | None = None,
        config: Mapping[str, Any] | None = None,
        **inputs: Any,
    ) -> Prediction:
        """Run the model on ``inputs`` and return the typed outputs.

        Args:
            adapter: Use this adapter for this call only.
            lm: Use this model for this call only.
            config: Request parameters for this call only (``{"temperature": 1.0, "n": 3}``).
            **inputs: The signature's inputs.

        Raises:
            FormatError: An input is missing or unknown.
            ParseError: The completion cannot be read (after the fallback).
            LMError: The provider failed.
        """
        chosen_adapter, chosen_lm, kwargs = self._resolve(adapter, lm, config)
        result = chosen_adapter(
            chosen_lm, kwargs, self.signature, self.demos, inputs, **self._truncation_options()
        )
        return Prediction.from_result(result)

    async def acall(
        self,
        *,
        adapter: Adapter | None = None,
        lm: BaseLM | None = None,
        config: Mapping[str, Any] | None = None,
        **inputs: Any,
    ) -> Prediction:
        """Async form of calling the predictor."""
        chosen_adapter, chosen_lm, kwargs = self._resolve(adapter, lm, config)
        result = await chosen_adapter.acall(
            chosen_lm, kwargs, self.signature, self.demos, inputs, **self._truncation_options()
        )
        return Prediction.from_result(result)

    def _truncation_options(self) -> dict[str, Any]:
        return {
            "max_prompt_tokens": self.max_prompt_tokens,
            "truncation_step": self.truncation_step,
        }

    def batch(
        self,
        inputs: Iterable[Mapping[str, Any]],
        *,
        max_concurrency: int = 8,
        progress: bool = True,
        return_exceptions: bool = True,
        **call_options: Any,
    ) -> list[Prediction | BaseException]:
        """Run many calls in threads; results come back in input order.

        Args:
            inputs: One dict of inputs per call.
            max_concurrency: How many calls run at once.
            progress: Show a progress bar (only when standard error is a terminal).
            return_exceptions: Put a failed item's exception in its place in the results
                (default). If False, every item still runs, then a `BatchError` holding all
                results is raised when any failed, so no finished work is lost.
            **call_options: ``adapter=``, ``lm=`` or ``config=`` for every call.

        Raises:
            BatchError: ``return_exceptions=False`` and at least one item failed.
        """
        from concurrent.futures import ThreadPoolExecutor

        items = _check_batch(inputs, max_concurrency)
        bar = Progress(len(items), label=self.signature.__name__, enabled=progress)
        results: list[Prediction | BaseException] = [_PENDING] * len(items)

        def run(index: int) -> None:
            try:
                results[index] = self(**call_options, **items[index])
                bar.advance()
            except Exception as exc:
                results[index] = exc
                bar.advance(failed=True)

        try:
            with ThreadPoolExecutor(max_workers=min(max_concurrency, len(items) or 1)) as pool:
                # Each task runs in a copy of the caller's context, so structio.context()
                # settings apply inside the worker threads too.
                futures = [
                    pool.submit(contextvars.copy_context().run, run, i) for i in range(len(items))
                ]
                for future in futures:
                    future.result()
        finally:
            bar.close()
        return _finish_batch(results, return_exceptions)

    async def abatch(
        self,
        inputs: Iterable[Mapping[str, Any]],
        *,
        max_concurrency: int = 8,
        progress: bool = True,
        return_exceptions: bool = True,
        **call_options: Any,
    ) -> list[Prediction | BaseException]:
        """Async form of `batch`: at most ``max_concurrency`` calls in flight."""
        import asyncio

        items = _check_batch(inputs, max_concurrency)
        bar = Progress(len(items), label=self.signature.__name__, enabled=progress)
        gate = asyncio.Semaphore(max_concurrency)

        async def run(item: Mapping[str, Any]) -> Prediction | BaseException:
            async with gate:
                try:
                    prediction = await self.acall(**call_options, **item)
                except Exception as exc:
                    bar.advance(failed=True)
                    return exc
                bar.advance()
                return prediction

        try:
            results = list(await asyncio.gather(*(run(item) for item in items)))
        finally:
            bar.close()
        return _finish_batch(results, return_exceptions)


_PENDING: Any = object()


def _check_batch(
    inputs: Iterable[Mapping[str, Any]], max_concurrency: int
) -> list[Mapping[str, Any]]:
    if (
        isinstance(max_concurrency, bool)
        or not isinstance(max_concurrency, int)
        or max_concurrency < 1
    ):
        raise ConfigurationError(f"max_concurrency must be a positive int, not {max_concurrency!r}")
    items = list(inputs)
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise ConfigurationError(
                f"batch item {index} must be a dict of inputs, not {type(item).__name__}"
            )
    return items


def _finish_batch(
    results: list[Prediction | BaseException], return_exceptions: bool
) -> list[Prediction | BaseException]:
    if not return_exceptions and any(isinstance(r, BaseException) for r in results):
        raise BatchError(results)
    return results
