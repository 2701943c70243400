"""How good is each output field? Evaluation of predictions against labels.

``sio.evaluate(predict, examples)`` calls a `Predict` on labelled examples and scores each
output field by its type (`structio.evaluate.metrics`); ``structio eval DATA PREDICTIONS``
does the same for the files `structio run` writes (`structio.evaluate.files`), one or more
systems side by side. The figures come as a terminal table (`structio.evaluate.table`),
JSON (`Evaluation.summary`) and one self-contained HTML report with plots
(`structio.evaluate.report`); wrong predictions become preference pairs for fine-tuning
(`structio.evaluate.preference`).

    >>> result = sio.evaluate(triage, examples)                       # doctest: +SKIP
    >>> print(table([result]))                                        # doctest: +SKIP

This module imports only what `import structio` already pays for; the rest loads on use.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from structio.evaluate.evaluation import Evaluation
    from structio.evaluate.metrics import UserMetric
    from structio.example import Example
    from structio.predict import Predict

__all__ = ["evaluate"]

_T = TypeVar("_T")


def evaluate(
    predict: Predict,
    examples: Iterable[Mapping[str, Any] | Example],
    *,
    name: str | None = None,
    metrics: Mapping[str, UserMetric] | None = None,
    tolerance: float | Mapping[str, float] = 0.0,
    bins: int = 10,
    max_concurrency: int = 8,
    progress: bool = False,
) -> Evaluation:
    """Call ``predict`` on each labelled example and score every output field.

    Each example holds the signature's inputs and its labelled outputs (a field left out is
    not scored). A call that fails with a structio error (a completion that cannot be read,
    a refusal, a provider error) is counted under its error's class, not raised. The
    confidence a prediction carries (``pred.meta.confidence``, field -> number) feeds the
    calibration figures; its tokens, cost and requests the usage figures.

    Args:
        predict: The `Predict` (or `ChainOfThought`) to evaluate.
        examples: Dicts or `Example` objects of inputs and labelled outputs.
        name: What to call the system in tables and plots (by default the signature's name).
        metrics: A user metric per output field: ``(labelled, predicted) -> float | bool``.
        tolerance: The absolute tolerance of number fields (one value, or one per field).
        bins: Confidence bins for calibration.
        max_concurrency: Calls at once (`Predict.batch`, over chunks of the examples, so
            memory holds a chunk's results, never every row's).
        progress: Show a progress bar on a terminal.

    Returns:
        The `Evaluation`: ``summary()`` gives every figure as JSON data.
    """
    from structio._util.progress import Progress
    from structio.evaluate.evaluation import Evaluation, reason_of
    from structio.exceptions import StructioError
    from structio.predict import Prediction

    sig = predict.signature
    types = {field: spec.annotation for field, spec in sig.output_fields.items()}
    result = Evaluation(
        name or sig.__name__, types=types, metrics=metrics, tolerance=tolerance, bins=bins
    )
    bar = Progress.over(examples, label="evaluate", enabled=progress)
    try:
        for chunk in _chunks(examples, _CHUNK_PER_CALL * max_concurrency):
            rows = [dict(example.items()) for example in chunk]
            inputs = [{k: v for k, v in row.items() if k in sig.input_fields} for row in rows]
            results = predict.batch(inputs, max_concurrency=max_concurrency, progress=False)
            for row, pred in zip(rows, results, strict=True):
                gold = {k: v for k, v in row.items() if k in sig.output_fields}
                if isinstance(pred, StructioError):
                    result.fail(reason_of(f"{type(pred).__name__}: {pred}"))
                    bar.advance(failed=True)
                    continue
                if isinstance(pred, BaseException):
                    raise pred  # not a failed call but a bug: as a plain call would raise it
                meta = Prediction.meta_of(pred)
                usage = meta.usage
                result.add(
                    gold,
                    Prediction.to_dict(pred),
                    confidence=getattr(meta, "confidence", None),
                    usage={
                        "prompt_tokens": usage.prompt_tokens,
                        "completion_tokens": usage.completion_tokens,
                    },
                    cost=meta.cost,
                    requests=len(meta.responses) or None,
                )
                bar.advance()
    finally:
        bar.close()
    return result


# Examples taken per call in flight: enough to keep every call busy, few enough that a
# chunk's results are all the memory holds.
_CHUNK_PER_CALL = 16


def _chunks(items: Iterable[_T], size: int) -> Iterator[list[_T]]:
    chunk: list[_T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
