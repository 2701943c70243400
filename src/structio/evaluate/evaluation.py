"""One system's evaluation: per-field metrics, failures, usage and calibration, as counts.

`Evaluation.add` takes a row at a time (labelled outputs, predicted outputs, and what is
known of the call: confidence, tokens, cost, requests) and keeps only counts: memory does
not grow with the rows. `Evaluation.summary` gives every figure as JSON data, the one
shape the table, the JSON output and the HTML report are written from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from structio.evaluate.calibration import Calibration
from structio.evaluate.metrics import FieldMetric, UserMetric, kind_of, leaves, make_metric

__all__ = ["Evaluation", "reason_of"]


def reason_of(error: str) -> str:
    """The reason a row failed, from its error text (``"ParseError: ..."`` -> ``ParseError``)."""
    head, colon, _ = error.partition(":")
    return head.strip() if colon and head.strip().isidentifier() else "error"


class Evaluation:
    """The running figures of one system (a prediction file, a model, an adapter).

    Args:
        name: What the system is called in tables and plots.
        types: Each output field's declared type (from a signature); a field not here is
            scored by its labelled JSON value's type.
        metrics: A user metric per output field (``(labelled, predicted) -> float``).
        tolerance: The absolute tolerance of number fields (one value, or one per field).
        bins: Confidence bins of the calibration figures.
    """

    def __init__(
        self,
        name: str,
        *,
        types: Mapping[str, Any] | None = None,
        metrics: Mapping[str, UserMetric] | None = None,
        tolerance: float | Mapping[str, float] = 0.0,
        bins: int = 10,
    ) -> None:
        self.name = name
        self.types = dict(types or {})
        self.user_metrics = dict(metrics or {})
        self.tolerance = tolerance
        self.bins = bins
        self.fields: dict[str, FieldMetric] = {}
        self.calibration: dict[str, Calibration] = {}
        self.rows = 0
        self.rows_correct = 0
        self.failed: Counter[str] = Counter()
        self.missing = 0
        #: Data rows whose labels could not be read (not JSON, a value not of its type).
        self.unreadable = 0
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "rows": 0}
        self.cost = {"total": 0.0, "rows": 0}
        self.requests = {"total": 0, "rows": 0}

    def _metric(self, path: str, field: str, annotation: Any, gold: Any) -> FieldMetric:
        metric = self.fields.get(path)
        if metric is None:
            tolerance = self.tolerance
            if isinstance(tolerance, Mapping):
                tolerance = tolerance.get(path, tolerance.get(field, 0.0))
            user = self.user_metrics.get(path, self.user_metrics.get(field))
            kind = "text" if user is not None else kind_of(annotation, gold)
            metric = make_metric(kind, metric=user, tolerance=float(tolerance))
            self.fields[path] = metric
        return metric

    def add(
        self,
        gold: Mapping[str, Any],
        pred: Mapping[str, Any],
        *,
        confidence: Mapping[str, Any] | None = None,
        usage: Mapping[str, Any] | None = None,
        cost: float | None = None,
        requests: int | None = None,
    ) -> dict[str, float]:
        """Score one row: each labelled field (a path per leaf of a model); the scores."""
        scores: dict[str, float] = {}
        for field, want in gold.items():
            annotation = self.types.get(field)
            field_scores = []
            for path, sub, want_leaf, got_leaf in leaves(field, annotation, want, pred.get(field)):
                score = self._metric(path, field, sub, want_leaf).add(want_leaf, got_leaf)
                scores[path] = score
                field_scores.append(score)
            sure = _number((confidence or {}).get(field))
            if sure is not None:
                correct = all(score >= 1.0 for score in field_scores)
                self.calibration.setdefault(field, Calibration(self.bins)).add(sure, correct)
        self.rows += 1
        self.rows_correct += all(score >= 1.0 for score in scores.values())
        self._count_usage(usage, cost, requests)
        return scores

    def _count_usage(
        self, usage: Mapping[str, Any] | None, cost: float | None, requests: int | None
    ) -> None:
        if usage:
            self.usage["rows"] += 1
            for key in ("prompt_tokens", "completion_tokens"):
                self.usage[key] += int(_number(usage.get(key)) or 0)
        if _number(cost) is not None:
            self.cost["rows"] += 1
            self.cost["total"] += float(cost or 0.0)
        if _number(requests) is not None:
            self.requests["rows"] += 1
            self.requests["total"] += int(requests or 0)

    def fail(self, reason: str) -> None:
        """Count a row that has no prediction because its call failed (or was refused)."""
        self.failed[reason] += 1

    @property
    def total(self) -> int:
        """Every row: scored, failed and missing."""
        return self.rows + sum(self.failed.values()) + self.missing

    def summary(self) -> dict[str, Any]:
        """Every figure as JSON data (`structio eval --json` prints it)."""
        total = self.total
        field_scores = [m.score_sum / m.count for m in self.fields.values() if m.count]

        def per_row(amount: float, rows: float) -> float | None:
            return amount / rows if rows else None

        return {
            "name": self.name,
            "rows": {
                "total": total,
                "scored": self.rows,
                "failed": sum(self.failed.values()),
                "missing": self.missing,
                "unreadable_labels": self.unreadable,
            },
            "failed_by_reason": dict(self.failed.most_common()),
            "score": sum(field_scores) / len(field_scores) if field_scores else None,
            "rows_correct": self.rows_correct / total if total else None,
            "fields": {path: metric.summary() for path, metric in self.fields.items()},
            "calibration": {name: cal.summary() for name, cal in self.calibration.items()},
            "usage": {
                "prompt_tokens_per_row": per_row(self.usage["prompt_tokens"], self.usage["rows"]),
                "completion_tokens_per_row": per_row(
                    self.usage["completion_tokens"], self.usage["rows"]
                ),
                "cost_per_row": per_row(self.cost["total"], self.cost["rows"]),
                "cost_total": self.cost["total"] if self.cost["rows"] else None,
                "requests_per_row": per_row(self.requests["total"], self.requests["rows"]),
            },
        }


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)
