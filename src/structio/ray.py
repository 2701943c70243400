"""Run a `Predict` over a Ray Dataset: every row answered, failures kept as a column.

``pip install 'structio[ray]'``. Nothing here is imported by ``import structio``, and Ray
itself is imported only by `predict_dataset`: `PredictBatches` works on the batches Ray
hands it (pandas DataFrames or dicts of NumPy arrays) and needs only NumPy.

    >>> import ray, structio as sio                                    # doctest: +SKIP
    >>> from structio.ray import predict_dataset
    >>> def build() -> sio.Predict:    # runs once on each worker
    ...     return sio.Predict(Triage, lm=sio.LM("openai/gpt-4o-mini"))
    >>> ds = ray.data.read_json("tickets.jsonl")
    >>> out = predict_dataset(ds, build, workers=4, max_concurrency=16)
    >>> out.write_json("predictions/")

Each output row is its input row (every column, ids included), then one column per output
field of the signature (the values as JSON data: a pydantic model as a dict), then
``error``: ``None`` when the row was answered, else ``"ExceptionType: message"`` with the
output columns ``None``. A failed row never fails its batch, so no row is lost.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from structio._util.data import jsonable
from structio.exceptions import ConfigurationError
from structio.predict import Predict, Prediction

if TYPE_CHECKING:
    from ray.data import Dataset

__all__ = ["PredictBatches", "PredictSource", "predict_dataset"]

#: What a worker builds its `Predict` from: a `Predict` (Ray pickles it to each worker), the
#: data of `Predict.to_dict` (loaded with `Predict.from_dict` on the worker; API keys come
#: from the worker's environment, as with `Predict.load`), or a function of no arguments
#: that returns the `Predict` (called once on each worker: the LM, its key and its client
#: are made there, and only the function travels).
PredictSource: TypeAlias = Predict | Mapping[str, Any] | Callable[[], Predict]


class PredictBatches:
    """A callable class for ``Dataset.map_batches``: runs a `Predict` on each row of a batch.

    The `Predict` is built once per worker (an actor), when Ray constructs the class; each
    batch then runs with `Predict.batch`, at most ``max_concurrency`` calls at once, its
    results in input order. A row whose call fails (a provider error, an answer that cannot
    be read, a missing input) gets ``None`` in every output column and the error in
    ``error_column``; the other rows of its batch are kept. Every input row gives exactly
    one output row, in order.

    Batches may be pandas DataFrames (``batch_format="pandas"``) or dicts of NumPy arrays
    (``"numpy"``, Ray's default); the result has the form of the batch. Only columns named
    like an input field of the signature are passed to the model; a missing cell (``None``
    or NaN) is left out, so the field's default applies (or the row fails as missing).
    Every column is kept in the result.

    Example:
        >>> ds.map_batches(                                              # doctest: +SKIP
        ...     PredictBatches,
        ...     fn_constructor_kwargs={"predict": build, "max_concurrency": 16},
        ...     compute=ray.data.ActorPoolStrategy(size=4),
        ...     batch_size=256,
        ...     batch_format="pandas",
        ... )

    Args:
        predict: What to build the `Predict` from (see `PredictSource`). Its LM must be
            set on it (``lm=``): settings made with `structio.configure` in the driver do
            not reach the workers.
        max_concurrency: How many calls run at once in each worker.
        error_column: The name of the column that holds each row's error.
        output_prefix: Put before each output field's name to name its column, when the
            data already has a column of that name (a labelled answer, say).
        trust_endpoint: With saved data: use the endpoint it sets (see `Predict.from_dict`).
        allowed_modules: With saved data: more modules its types may name.
        trust_types: With saved data: allow any module.
        **call_options: ``adapter=``, ``params=`` or ``max_retries=`` for every call.

    Raises:
        ConfigurationError: ``predict`` is none of the three forms, the `Predict` has no
            LM, or a result column would replace a column of the data (when the batch
            comes).
    """

    def __init__(
        self,
        predict: PredictSource,
        *,
        max_concurrency: int = 8,
        error_column: str = "error",
        output_prefix: str = "",
        trust_endpoint: bool = False,
        allowed_modules: Iterable[str] | None = None,
        trust_types: bool = False,
        **call_options: Any,
    ) -> None:
        self.predict = _build(
            predict,
            trust_endpoint=trust_endpoint,
            allowed_modules=allowed_modules,
            trust_types=trust_types,
        )
        if self.predict.lm is None and call_options.get("lm") is None:
            raise ConfigurationError(
                "the Predict run on Ray workers needs its own LM (Predict(..., lm=...)): "
                "structio.configure() in the driver does not reach the workers"
            )
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
            raise ConfigurationError(
                f"max_concurrency must be a positive int, not {max_concurrency!r}"
            )
        if max_concurrency < 1:
            raise ConfigurationError(
                f"max_concurrency must be a positive int, not {max_concurrency!r}"
            )
        self.max_concurrency = max_concurrency
        self.error_column = error_column
        self.outputs = {
            f"{output_prefix}{name}": name for name in self.predict.signature.output_fields
        }
        if error_column in self.outputs:
            raise ConfigurationError(
                f"error_column {error_column!r} is also the column of an output; choose "
                "another name"
            )
        self.call_options = call_options

    def __repr__(self) -> str:
        return f"PredictBatches({self.predict!r}, max_concurrency={self.max_concurrency})"

    def __call__(self, batch: Any) -> Any:
        """Answer every row of one batch: the batch with the output and error columns added.

        Args:
            batch: A pandas DataFrame or a dict of column name to NumPy array.

        Returns:
            A batch of the same form and length, its rows in the same order.

        Raises:
            ConfigurationError: The batch is of another form, or already has a column the
                results would replace.
        """
        columns = _columns(batch)
        clash = sorted(set(columns) & {*self.outputs, self.error_column})
        if clash:
            raise ConfigurationError(
                f"the data already has column(s) {clash}, which the results would replace; "
                "pass output_prefix='pred_' (or error_column='...') to name the results apart"
            )
        size = _length(batch, columns)
        inputs_of = self.predict.signature.input_fields
        values = {name: _values(batch[name]) for name in columns if name in inputs_of}
        rows = [
            {name: column[index] for name, column in values.items() if not _missing(column[index])}
            for index in range(size)
        ]
        results = (
            self.predict.batch(
                rows,
                max_concurrency=self.max_concurrency,
                progress=False,
                **self.call_options,
            )
            if rows
            else []
        )
        added = self._result_columns(results)
        if isinstance(batch, dict):
            return {**batch, **added}
        # pandas is loaded (the batch is a DataFrame) and ships no types: imported by name.
        series = importlib.import_module("pandas").Series
        # A copy that shares the data, with the new columns set on it. Object columns, so
        # that None stays None (pandas would read a column of text and None as text, NaN).
        out = batch.copy(deep=False)
        for name, column in added.items():
            out[name] = series(column, index=batch.index, dtype=object)
        return out

    def _result_columns(self, results: list[Prediction | BaseException]) -> dict[str, Any]:
        """The output columns and the error column, each an object array of ``results``."""
        added = {name: _objects(len(results)) for name in [*self.outputs, self.error_column]}
        for index, result in enumerate(results):
            if isinstance(result, BaseException):
                added[self.error_column][index] = f"{type(result).__name__}: {result}"
                continue
            for column, field in self.outputs.items():
                added[column][index] = jsonable(result[field])
        return added


def predict_dataset(
    dataset: Dataset,
    predict: PredictSource,
    *,
    workers: int = 1,
    max_concurrency: int = 8,
    batch_size: int = 256,
    batch_format: str = "pandas",
    error_column: str = "error",
    output_prefix: str = "",
    trust_endpoint: bool = False,
    allowed_modules: Iterable[str] | None = None,
    trust_types: bool = False,
    call_options: Mapping[str, Any] | None = None,
    **map_batches_options: Any,
) -> Dataset:
    """The rows of ``dataset`` with the outputs of ``predict`` (lazy, as Ray Data is).

    A pool of ``workers`` actors, each building the `Predict` once and running up to
    ``max_concurrency`` calls at once: ``workers * max_concurrency`` calls in flight in all.
    Model calls wait on the network, not the CPU, so each actor asks for a quarter of a CPU
    unless ``num_cpus=`` says otherwise. See `PredictBatches` for the columns of the result.

    Args:
        dataset: The rows; columns named like the signature's inputs are its inputs.
        predict: What each worker builds its `Predict` from (see `PredictSource`).
        workers: How many actors run batches at once.
        max_concurrency: Calls at once in each actor.
        batch_size: Rows per batch: a batch is the unit Ray retries if a worker dies.
        batch_format: ``"pandas"`` or ``"numpy"``: the form the batches take.
        error_column: The column of each row's error (see `PredictBatches`).
        output_prefix: Put before each output field's name to name its column.
        trust_endpoint: With saved data: use the endpoint it sets.
        allowed_modules: With saved data: more modules its types may name.
        trust_types: With saved data: allow any module.
        call_options: ``adapter=``, ``params=`` or ``max_retries=`` for every call.
        **map_batches_options: Passed on to ``Dataset.map_batches`` (``num_cpus=``,
            ``runtime_env=`` for API keys in the workers' environment...).

    Raises:
        ImportError: Ray is not installed (``pip install 'structio[ray]'``).
        ConfigurationError: ``workers`` is not a positive int, or ``batch_format`` is
            neither ``"pandas"`` nor ``"numpy"``.
    """
    try:
        from ray.data import ActorPoolStrategy
    except ImportError as missing:
        raise ImportError(
            "structio.ray.predict_dataset needs Ray Data: pip install 'structio[ray]'"
        ) from missing
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigurationError(f"workers must be a positive int, not {workers!r}")
    if batch_format not in ("pandas", "numpy"):
        raise ConfigurationError(f"batch_format must be 'pandas' or 'numpy', not {batch_format!r}")
    map_batches_options.setdefault("num_cpus", 0.25)
    return dataset.map_batches(
        PredictBatches,
        fn_constructor_kwargs={
            "predict": predict,
            "max_concurrency": max_concurrency,
            "error_column": error_column,
            "output_prefix": output_prefix,
            "trust_endpoint": trust_endpoint,
            "allowed_modules": None if allowed_modules is None else list(allowed_modules),
            "trust_types": trust_types,
            **(call_options or {}),
        },
        compute=ActorPoolStrategy(size=workers),
        batch_size=batch_size,
        batch_format=batch_format,
        **map_batches_options,
    )


def _build(
    source: PredictSource,
    *,
    trust_endpoint: bool,
    allowed_modules: Iterable[str] | None,
    trust_types: bool,
) -> Predict:
    """The `Predict` a worker runs, from any of the three forms of `PredictSource`."""
    if isinstance(source, Predict):
        return source
    if isinstance(source, Mapping):
        return Predict.from_dict(
            source,
            trust_endpoint=trust_endpoint,
            allowed_modules=allowed_modules,
            trust_types=trust_types,
        )
    if callable(source):
        built = source()
        if isinstance(built, Predict):
            return built
        raise ConfigurationError(
            f"the function given as predict returned {type(built).__name__}, not a Predict"
        )
    raise ConfigurationError(
        "predict must be a Predict, the dict of Predict.to_dict(), or a function that "
        f"returns a Predict, not {type(source).__name__}"
    )


def _columns(batch: Any) -> list[str]:
    """The column names of a batch of either form."""
    if isinstance(batch, dict):
        return [str(name) for name in batch]
    # pandas is imported by whoever made the batch; it is named, not imported, here.
    if type(batch).__module__.startswith("pandas") and type(batch).__name__ == "DataFrame":
        return [str(name) for name in batch.columns]
    raise ConfigurationError(
        "PredictBatches takes a pandas DataFrame or a dict of NumPy arrays (batch_format="
        f"'pandas' or 'numpy'), not {type(batch).__name__}"
    )


def _length(batch: Any, columns: list[str]) -> int:
    if isinstance(batch, dict):
        return len(batch[columns[0]]) if columns else 0
    return len(batch)


def _values(column: Any) -> list[Any]:
    """A column's cells as Python values (``numpy.int64`` -> ``int``, arrays -> lists)."""
    return list(column.tolist()) if hasattr(column, "tolist") else list(column)


def _missing(value: Any) -> bool:
    """An empty cell: ``None``, or the NaN pandas and NumPy write for one."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _objects(size: int) -> Any:
    """An object array of ``size`` Nones: each cell holds one value, even a list or dict."""
    import numpy

    return numpy.full(size, None, dtype=object)
