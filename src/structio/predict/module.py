"""DSPy's program spellings: `Module` (a program calling predictors), `Parallel`, refusals.

A structio program is Python calling predictors; `Module` gives such a program DSPy's
shape (``forward``, ``acall``, ``named_predictors``, ``set_lm``), so DSPy code that
subclasses ``dspy.Module`` runs unchanged. DSPy's modules that run a loop of their own
(``ReAct``, ``Refine``, ``BestOfN``...) have no structio counterpart: naming one gives a
`UsageError` that says what to write instead.
"""

from __future__ import annotations

import contextvars
import copy
import os
import pathlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from structio._util.files import write_json
from structio.example import Example
from structio.exceptions import UsageError
from structio.predict.saving import (
    load_data_into,
    load_program_into,
    program_data,
    read_program,
    refuse_program,
)

__all__ = [
    "BestOfN",
    "CodeAct",
    "Module",
    "MultiChainComparison",
    "Parallel",
    "PredictorModule",
    "ProgramOfThought",
    "ReAct",
    "Refine",
]


class Module:
    """A program that calls predictors, as DSPy's ``dspy.Module`` is.

    Subclass it and define ``forward`` (and ``aforward`` for ``await program.acall(...)``);
    calling the program calls ``forward``. `Predict` is a Module of one predictor. No
    ``super().__init__()`` is needed: a Module keeps no state of its own.

        class QA(structio.Module):
            def __init__(self):
                self.answer = structio.ChainOfThought("question -> answer")

            def forward(self, question):
                return self.answer(question=question)
    """

    # A Module that is itself one predictor (`Predict` sets it).
    _is_predictor: ClassVar[bool] = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the program: its ``forward``."""
        return self.forward(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """What the program does; a subclass defines it.

        Raises:
            UsageError: The subclass does not define it.
        """
        if self._is_predictor:  # a Predict's forward is the call itself, as in DSPy
            return self(*args, **kwargs)
        raise UsageError(f"{type(self).__name__} must define forward(self, ...) to be called")

    async def acall(self, *args: Any, **kwargs: Any) -> Any:
        """Run the program asynchronously: its ``aforward`` (by default ``forward`` in a thread)."""
        return await self.aforward(*args, **kwargs)

    async def aforward(self, *args: Any, **kwargs: Any) -> Any:
        """The asynchronous ``forward``; by default ``forward`` runs in a thread."""
        import asyncio  # here: asyncio imports logging, which `import structio` never loads

        # to_thread copies the context: the caller's `structio.context` holds in the thread.
        return await asyncio.to_thread(self.forward, *args, **kwargs)

    def named_predictors(self) -> list[tuple[str, Any]]:
        """Each predictor the program holds, with its attribute path (``"qa.answer"``)."""
        if self._is_predictor:
            return [("self", self)]
        return list(_walk(vars(self), "", set()))

    def predictors(self) -> list[Any]:
        """The predictors the program holds (see `named_predictors`)."""
        return [predictor for _, predictor in self.named_predictors()]

    def named_parameters(self) -> list[tuple[str, Any]]:
        """DSPy's name for `named_predictors`: a program's parameters are its predictors."""
        return self.named_predictors()

    def parameters(self) -> list[Any]:
        """DSPy's name for `predictors`."""
        return self.predictors()

    def map_named_predictors(self, func: Callable[[Any], Any]) -> Any:
        """Replace each predictor with ``func(predictor)``; returns the program (DSPy's name)."""
        if self._is_predictor:
            raise UsageError("map_named_predictors maps the predictors of a program: call func")
        _replace(self, func, set())
        return self

    def named_sub_modules(
        self, type_: type | None = None, skip_compiled: bool = False
    ) -> Iterator[tuple[str, Any]]:
        """The program and every module in it, breadth first (DSPy's name).

        ``("self", program)``, then ``("self.qa", ...)``... ``type_``: only modules of that
        class (default `Module`). ``skip_compiled`` is DSPy's and means nothing here.
        """
        del skip_compiled
        wanted = Module if type_ is None else type_
        queue: list[tuple[str, Any]] = [("self", self)]
        seen: set[int] = set()
        while queue:
            name, module = queue.pop(0)
            if id(module) in seen:
                continue
            seen.add(id(module))
            if isinstance(module, wanted):
                yield name, module
            if isinstance(module, Module) and not module._is_predictor:
                queue.extend(
                    (f"{name}.{path}", sub)
                    for path, sub in _children(vars(module), "")
                    if isinstance(sub, Module)
                )

    def inspect_history(self, n: int = 1) -> None:
        """Print the last ``n`` calls, as `structio.inspect_history` does (DSPy's name).

        DSPy prints this program's own calls; structio's history is the LMs', so this
        prints the last ``n`` calls of any LM, the program's included.
        """
        from structio.lm.base import inspect_history

        inspect_history(n)

    def batch(
        self,
        examples: Sequence[Any],
        num_threads: int | None = None,
        max_errors: int | None = None,
        return_failed_examples: bool = False,
        **options: Any,
    ) -> Any:
        """Run the program on each example on threads, results in order (DSPy's ``batch``).

        As `Parallel`: an `Example` is passed as its inputs; a failed example gives
        ``None`` until more than ``max_errors`` have failed (default: none may), when its
        error is raised. ``return_failed_examples=True`` returns ``(results, failed
        examples, their errors)``. DSPy's other options (progress bar, timeouts) are
        accepted and not used. A `Predict`'s own ``batch`` is structio's, with progress
        and concurrency of its own.
        """
        parallel = Parallel(
            num_threads, max_errors, return_failed_examples=return_failed_examples, **options
        )
        return parallel([(self, example) for example in examples])

    def set_lm(self, lm: Any) -> None:
        """Use ``lm`` for every predictor of the program."""
        for predictor in self.predictors():
            predictor.lm = lm

    def get_lm(self) -> Any:
        """The one LM the program's predictors use (``None``: the configured one).

        Raises:
            UsageError: Its predictors use different LMs.
        """
        models = {id(p.lm): p.lm for p in self.predictors()}
        if len(models) > 1:
            raise UsageError("the predictors use different LMs: ask each, predictor.lm")
        return next(iter(models.values()), None)

    def deepcopy(self) -> Any:
        """A deep copy of the program (DSPy's name for ``copy.deepcopy(program)``)."""
        return copy.deepcopy(self)

    def reset_copy(self) -> Any:
        """A deep copy whose predictors have no demos."""
        copied = copy.deepcopy(self)
        for predictor in copied.predictors():
            predictor.demos = []
        return copied

    # -- saving: the prompts of every predictor, as DSPy's state -----------------------------

    def dump_state(self) -> dict[str, Any]:
        """Every predictor as data (`Predict.to_dict`), by its attribute path (DSPy's name)."""
        return {name: predictor.dump_state() for name, predictor in self.named_predictors()}

    def load_state(self, state: Mapping[str, Any]) -> Any:
        """Put data `dump_state` made into the program's predictors; returns the program.

        Raises:
            ConfigurationError: ``state`` is of other predictors or fields; nothing changed.
        """
        load_program_into(dict(self.named_predictors()), state, "the state")
        return self

    def save(self, path: str | os.PathLike[str], save_program: bool = False) -> None:
        """Write every predictor's prompt to one readable JSON file, atomically.

        JSON whatever the name's suffix, as `Predict.save`; the program's code stays in
        your module (``save_program=True``, DSPy's pickled program, is refused). Load it
        with ``program.load(path)`` into the program built as it was.

        Raises:
            UsageError: ``save_program=True``.
            SaveError: The file cannot be written; a file already there is left as it was.
        """
        refuse_program(save_program)
        data = program_data(dict(self.named_predictors()))
        write_json(pathlib.Path(path), data, what="the program")

    def load(
        self,
        path: str | os.PathLike[str],
        *,
        allow_pickle: bool = False,
        allow_unsafe_lm_state: bool = False,
        lm: Any = None,
        trust_endpoint: bool = False,
        allowed_modules: Iterable[str] | None = None,
        trust_types: bool = False,
    ) -> Any:
        """Put the prompts `save` wrote into this program's predictors; returns the program.

        All or none: each predictor is read before any changes. A file `Predict.save`
        wrote loads into a program of one predictor. The keywords are `Predict.load`'s;
        ``allow_pickle`` has nothing to allow (the file is JSON) and
        ``allow_unsafe_lm_state`` is ``trust_endpoint=True``, as in DSPy.

        Raises:
            ConfigurationError: The file cannot be read, is not a saved program, or is of
                other predictors or fields (what differs is named); nothing changed.
        """
        predictors = dict(self.named_predictors())
        states = read_program(pathlib.Path(path), list(predictors))
        load_program_into(
            predictors,
            states,
            repr(str(path)),
            lm=lm,
            trust_endpoint=trust_endpoint or allow_unsafe_lm_state,
            allowed_modules=allowed_modules,
            trust_types=trust_types,
        )
        return self


class PredictorModule(Module):
    """DSPy's methods of one predictor (``dspy.Predict``), for `Predict` to inherit."""

    _is_predictor = True

    def reset(self) -> None:
        """Forget the demos and the predictor's own LM, as DSPy's ``Predict.reset``."""
        predict: Any = self
        predict.demos = []
        predict.lm = None

    @property
    def config(self) -> dict[str, Any]:
        """The request parameters of every call: DSPy's name for ``params``."""
        return self._params()

    def get_config(self) -> dict[str, Any]:
        """The request parameters of every call (DSPy's name; structio's ``params``)."""
        return self._params()

    def update_config(self, **params: Any) -> None:
        """Add or change request parameters of every call (DSPy's name)."""
        predict: Any = self
        predict.params = {**predict.params, **params}

    def dump_state(self) -> dict[str, Any]:
        """The predictor as data: DSPy's name for ``to_dict()``."""
        predict: Any = self
        return dict(predict.to_dict())

    def load_state(self, state: Mapping[str, Any]) -> Any:
        """Put data `dump_state` made into this predictor (DSPy's name); returns it."""
        return load_data_into(self, state, "the state")  # type: ignore[type-var]

    def _params(self) -> dict[str, Any]:
        predict: Any = self
        return dict(predict.params)


def _children(attrs: Mapping[Any, Any], prefix: str) -> Iterator[tuple[str, Any]]:
    """The values of a module's attributes, lists, tuples and dicts opened, with their paths."""
    for key, value in attrs.items():
        name = f"{prefix}{key}"
        if isinstance(value, (list, tuple)):
            yield from _children({f"{name}[{i}]": v for i, v in enumerate(value)}, "")
        elif isinstance(value, dict):
            yield from _children({f"{name}[{k!r}]": v for k, v in value.items()}, "")
        else:
            yield name, value


def _walk(attrs: Mapping[Any, Any], prefix: str, seen: set[int]) -> Iterator[tuple[str, Any]]:
    """The predictors in a program's attributes, depth first, each once."""
    for name, value in _children(attrs, prefix):
        if not isinstance(value, Module) or id(value) in seen:
            continue
        seen.add(id(value))
        if value._is_predictor:
            yield name, value
        else:
            yield from _walk(vars(value), f"{name}.", seen)


def _replace(module: Module, func: Callable[[Any], Any], seen: set[int]) -> None:
    """Put ``func(predictor)`` in the place of each predictor of ``module``, depth first."""

    def mapped(value: Any) -> Any:
        if isinstance(value, Module) and id(value) not in seen:
            seen.add(id(value))
            if value._is_predictor:
                return func(value)
            _replace(value, func, seen)
        elif isinstance(value, list):
            value[:] = [mapped(v) for v in value]
        elif isinstance(value, tuple):
            return tuple(map(mapped, value))
        elif isinstance(value, dict):
            value.update({k: mapped(v) for k, v in value.items()})
        return value

    for key, value in list(vars(module).items()):
        setattr(module, key, mapped(value))


class Parallel:
    """Run ``(program, example)`` pairs on threads, results in order (DSPy's ``Parallel``).

    An `Example` is passed as its inputs (``program(**example.inputs())``), a dict as
    keywords, a tuple as positional arguments. A pair that raises gives ``None`` until
    more than ``max_errors`` have, when the error is raised. For many rows of one
    predictor, `Predict.batch` is structio's way.

    Args:
        num_threads: Threads at most (default 8).
        max_errors: Errors tolerated before one is raised (default: none).
        **options: DSPy's other options (progress bar, timeouts); accepted, not used.
    """

    def __init__(
        self,
        num_threads: int | None = None,
        max_errors: int | None = None,
        return_failed_examples: bool = False,
        **options: Any,
    ) -> None:
        self.num_threads = num_threads or 8
        self.max_errors = 0 if max_errors is None else max_errors
        self.return_failed_examples = return_failed_examples

    def __call__(
        self, exec_pairs: Sequence[tuple[Any, Any]], num_threads: int | None = None
    ) -> Any:
        """The results of each pair, in order.

        With ``return_failed_examples``: ``(results, failed examples, their errors)``, the
        failures in the order of the pairs.
        """
        failed: dict[int, tuple[Any, BaseException]] = {}

        def run(index: int, pair: tuple[Any, Any]) -> Any:
            program, example = pair
            try:
                if isinstance(example, Example):
                    return program(**example.inputs())
                if isinstance(example, Mapping):
                    return program(**example)
                if isinstance(example, tuple):
                    return program(*example)
                return program(example)
            except Exception as exc:
                failed[index] = (example, exc)
                if len(failed) > self.max_errors:
                    raise
                return None

        from concurrent.futures import ThreadPoolExecutor  # its import loads logging

        workers = num_threads or self.num_threads
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [
                pool.submit(contextvars.copy_context().run, run, i, pair)
                for i, pair in enumerate(exec_pairs)
            ]
            results = [future.result() for future in futures]
        if not self.return_failed_examples:
            return results
        order = sorted(failed)
        return results, [failed[i][0] for i in order], [failed[i][1] for i in order]

    def forward(self, exec_pairs: Sequence[tuple[Any, Any]], num_threads: int | None = None) -> Any:
        """DSPy's name for calling it."""
        return self(exec_pairs, num_threads)


class _Refused:
    """A DSPy module with no structio counterpart: constructing it says what to write."""

    instead: ClassVar[str] = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise UsageError(f"structio has no {type(self).__name__}: {self.instead}")


_NO_LOOP = (
    "it makes single calls and has no agent loop. Ask for tool calls with a "
    "`tools: list[structio.Tool]` input and a `structio.ToolCalls` output, run them with "
    "`call.execute()`, and loop in Python, passing the results back (a History input)"
)


class ReAct(_Refused):
    """DSPy's tool-using agent loop: refused (see the message)."""

    instead = _NO_LOOP


class CodeAct(_Refused):
    """DSPy's code-writing agent: refused (see the message)."""

    instead = _NO_LOOP


class ProgramOfThought(_Refused):
    """DSPy's code-running module: refused (see the message)."""

    instead = (
        "it runs no code the model writes. Ask for the code as an output "
        "(`structio.Predict('question -> code: str')`) and run it yourself, sandboxed"
    )


_NO_SAMPLING = (
    "it writes no feedback between attempts. structio.BestOfN(module, N, reward_fn, "
    "threshold) keeps the best of N attempts; unreadable answers are re-asked with "
    "Predict(..., max_retries=2)"
)


class Refine(_Refused):
    """DSPy's reward-driven retry module: refused (see the message)."""

    instead = _NO_SAMPLING


class BestOfN(Module):
    """Run a program up to ``N`` times and keep the best answer (DSPy's ``BestOfN``).

    Each attempt runs a copy of the program whose predictors sample at temperature 1.0,
    uncached (DSPy gives each attempt its own ``rollout_id`` instead), and is scored by
    ``reward_fn(inputs, prediction)``; the first to reach ``threshold`` is returned, else
    the best. An attempt that raises counts against ``fail_count`` (default ``N``): past
    it, the error is raised.

    Args:
        module: The program (a `Predict`, or a `Module` holding predictors).
        N: Attempts at most.
        reward_fn: The score of one attempt, ``reward_fn(inputs_dict, prediction)``.
        threshold: A score that ends the search.
        fail_count: Failed attempts tolerated.
    """

    def __init__(
        self,
        module: Module,
        N: int,  # noqa: N803 - DSPy's keyword
        reward_fn: Callable[[dict[str, Any], Any], float],
        threshold: float,
        fail_count: int | None = None,
    ) -> None:
        if not isinstance(module, Module):
            raise UsageError(f"BestOfN runs a Predict or a Module, not {type(module).__name__}")
        self.module = module
        self.N = N
        self.reward_fn = reward_fn
        self.threshold = threshold
        self.fail_count = N if fail_count is None else fail_count

    def named_predictors(self) -> list[tuple[str, Any]]:
        """The program's predictors, named as in the program."""
        return self.module.named_predictors()

    def forward(self, **kwargs: Any) -> Any:
        """The first attempt that reaches the threshold, else the best one."""
        best, best_reward, failures = None, -float("inf"), 0
        for _ in range(self.N):
            # A copy of the program that shares its LMs (their clients, cache and history).
            shared = {id(p.lm): p.lm for p in self.module.predictors() if p.lm is not None}
            attempt = copy.deepcopy(self.module, memo=shared)
            for predictor in attempt.predictors():
                predictor.params = {**predictor.params, "temperature": 1.0, "cache": False}
            try:
                prediction = attempt(**kwargs)
                reward = self.reward_fn(kwargs, prediction)
            except Exception:
                failures += 1
                if failures > self.fail_count:
                    raise
                continue
            if reward > best_reward:
                best, best_reward = prediction, reward
            if reward >= self.threshold:
                break
        if best is None:
            raise UsageError(f"BestOfN: all {self.N} attempts failed")
        return best


class MultiChainComparison(_Refused):
    """DSPy's comparison of several reasoning chains: refused (see the message)."""

    instead = (
        "call the predictor several times (or structio.BestOfN) and compare the answers "
        "in Python, or with a Predict that takes them as an input"
    )
