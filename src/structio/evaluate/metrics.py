"""How good one output field is, by its type: one streaming metric per kind of value.

Each metric sees a (labelled, predicted) pair at a time, gives the pair a score in
``[0, 1]`` and keeps only counts, so memory stays flat however many rows there are:

- ``label`` (``Literal``, ``enum``, ``bool``): exact match, with a confusion matrix (its
  labels capped at `MAX_LABELS`; the rest are counted as ``(other)``);
- ``text`` (``str``): normalised match (case, punctuation and spacing ignored), or a user
  metric ``(labelled, predicted) -> float | bool``;
- ``set`` (``list``, ``set``, ``tuple``): precision, recall and F1 over the items;
- ``number`` (``int``, ``float``): a match within a tolerance, and the mean absolute error;
- ``exact`` (anything else): equal as JSON.

Nested models and dicts are not a kind: `leaves` walks them, and each leaf is scored
under its path (``address.city``).
"""

from __future__ import annotations

import enum
import json
import math
import re
import types
import typing
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal, Union, get_args, get_origin

__all__ = [
    "MAX_LABELS",
    "FieldMetric",
    "Kind",
    "UserMetric",
    "kind_of",
    "leaves",
    "make_metric",
    "normalize_text",
]

Kind = Literal["label", "text", "set", "number", "exact"]
#: A user's own score of a text field: ``(labelled, predicted) -> float | bool``.
UserMetric = Callable[[Any, Any], "float | bool"]
#: The most labels a confusion matrix keeps; further ones are counted as ``OTHER``.
MAX_LABELS = 50
OTHER = "(other)"
MISSING = "(none)"

_PUNCTUATION = re.compile(r"[^\w\s]", re.UNICODE)
_SPACES = re.compile(r"\s+")


def normalize_text(text: object) -> str:
    """``text`` compared as people read it: case, accents' forms, punctuation, spacing out."""
    value = unicodedata.normalize("NFKC", str(text)).casefold()
    return _SPACES.sub(" ", _PUNCTUATION.sub(" ", value)).strip()


def _bare(annotation: Any) -> Any:
    """``annotation`` without ``Optional``/``| None`` (the value's own type)."""
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(rest) == 1:
            return _bare(rest[0])
    if get_origin(annotation) is typing.Annotated:
        return _bare(get_args(annotation)[0])
    return annotation


def kind_of(annotation: Any = None, value: Any = None) -> Kind:
    """The kind of metric for a declared type, or, with none, for a labelled JSON value."""
    bare = _bare(annotation)
    if bare is not None:
        origin = get_origin(bare)
        if bare is bool or origin is Literal:
            return "label"
        if isinstance(bare, type) and issubclass(bare, enum.Enum):
            return "label"
        if bare in (int, float):
            return "number"
        if bare is str:
            return "text"
        if origin in (list, set, tuple, frozenset) or bare in (list, set, tuple, frozenset):
            return "set"
        return "exact"
    if isinstance(value, bool):
        return "label"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (list, tuple, set, frozenset)):
        return "set"
    return "exact"


def _fields_of(annotation: Any) -> Mapping[str, Any] | None:
    """The fields of a pydantic model or dataclass annotation (name -> type), else ``None``."""
    bare = _bare(annotation)
    model_fields = getattr(bare, "model_fields", None)
    if isinstance(bare, type) and isinstance(model_fields, Mapping):
        return {name: info.annotation for name, info in model_fields.items()}
    return None


def _as_data(value: Any) -> Any:
    """A model instance as its dict (as a prediction file holds it); anything else as is."""
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) and not isinstance(value, type) else value


# Labelled values that are leaves whatever their declared type (only a dict is walked).
_PLAIN = frozenset((str, int, float, bool, list, type(None)))


def leaves(path: str, annotation: Any, gold: Any, pred: Any) -> Iterator[tuple[str, Any, Any, Any]]:
    """``(path, annotation, labelled, predicted)`` of each scored leaf of a field.

    A model (declared, or a labelled dict when no type is known) is walked by its fields
    (``address.city``): the labelled value's keys, a predicted key it lacks counted missing.
    """
    if type(gold) in _PLAIN:  # most leaves of most rows: no model to look for
        yield path, annotation, gold, _as_data(pred)
        return
    gold, pred = _as_data(gold), _as_data(pred)
    fields = _fields_of(annotation)
    if isinstance(gold, dict) and (fields is not None or annotation is None):
        got = pred if isinstance(pred, dict) else {}
        for key, value in gold.items():
            sub = fields.get(key) if fields is not None else None
            yield from leaves(f"{path}.{key}", sub, value, got.get(key))
        return
    yield path, annotation, gold, pred


class FieldMetric:
    """Counts for one field (or path): rows seen, the sum of scores, whole matches."""

    kind: Kind = "exact"

    def __init__(self) -> None:
        self.count = 0
        self.score_sum = 0.0
        self.correct = 0
        #: Rows whose prediction has no value where the label has one.
        self.missing = 0

    def score(self, gold: Any, pred: Any) -> float:
        """The pair's score in ``[0, 1]``."""
        return 1.0 if _canonical(gold) == _canonical(pred) else 0.0

    def add(self, gold: Any, pred: Any) -> float:
        """Count one pair; its score."""
        value = min(1.0, max(0.0, float(self.score(gold, pred))))
        self.count += 1
        self.score_sum += value
        self.correct += value >= 1.0
        self.missing += pred is None and gold is not None
        return value

    def summary(self) -> dict[str, Any]:
        """The field's figures as JSON data."""
        return {
            "kind": self.kind,
            "rows": self.count,
            "score": self.score_sum / self.count if self.count else None,
            "exact": self.correct / self.count if self.count else None,
            "missing": self.missing,
        }


def _canonical(value: Any) -> str:
    value = _as_data(value)
    if isinstance(value, enum.Enum):
        value = value.value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _label(value: Any) -> str:
    value = _as_data(value)
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None:
        return MISSING
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class LabelMetric(FieldMetric):
    """Exact match of labels, with the counts of each (labelled, predicted) pair."""

    kind: Kind = "label"

    def __init__(self) -> None:
        super().__init__()
        self.confusion: Counter[tuple[str, str]] = Counter()
        self.labels: dict[str, None] = {}  # in order of first sight

    def _kept(self, label: str) -> str:
        if label in self.labels:
            return label
        if len(self.labels) < MAX_LABELS:
            self.labels[label] = None
            return label
        return OTHER

    def score(self, gold: Any, pred: Any) -> float:
        """1 when the labels are equal, else 0; the pair is counted in the matrix."""
        want, got = _label(gold), _label(pred)
        self.confusion[self._kept(want), self._kept(got)] += 1
        return 1.0 if want == got else 0.0

    def summary(self) -> dict[str, Any]:
        """Accuracy, the confusion matrix (rows: labelled, columns: predicted), per-label F1."""
        data = super().summary()
        labels = list(self.labels) + ([OTHER] if any(OTHER in k for k in self.confusion) else [])
        data["accuracy"] = data["exact"]
        data["labels"] = labels
        data["confusion"] = [[self.confusion[want, got] for got in labels] for want in labels]
        per_label = {}
        for label in labels:
            true_positive = self.confusion[label, label]
            predicted = sum(self.confusion[other, label] for other in labels)
            actual = sum(self.confusion[label, other] for other in labels)
            per_label[label] = _prf(true_positive, predicted, actual)
        data["per_label"] = per_label
        scored = [v["f1"] for k, v in per_label.items() if k != MISSING or self.confusion[k, k]]
        data["macro_f1"] = sum(scored) / len(scored) if scored else None
        return data


def _prf(true_positive: int, predicted: int, actual: int) -> dict[str, float]:
    """Precision, recall and F1 from counts (each 1.0 when there is nothing to get wrong)."""
    precision = true_positive / predicted if predicted else (1.0 if not actual else 0.0)
    recall = true_positive / actual if actual else (1.0 if not predicted else 0.0)
    total = precision + recall
    return {
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / total if total else 0.0,
    }


class TextMetric(FieldMetric):
    """Normalised match of texts, or the user's own metric."""

    kind: Kind = "text"

    def __init__(self, metric: UserMetric | None = None) -> None:
        super().__init__()
        self.metric = metric

    def score(self, gold: Any, pred: Any) -> float:
        """The user metric's score, else 1 when the normalised texts are equal."""
        if self.metric is not None:
            return float(self.metric(gold, pred))
        if pred is None:
            return 1.0 if gold is None else 0.0
        return 1.0 if normalize_text(gold) == normalize_text(pred) else 0.0

    def summary(self) -> dict[str, Any]:
        """The mean score, named by how it was measured."""
        data = super().summary()
        data["measure"] = "user metric" if self.metric is not None else "normalised match"
        return data


class SetMetric(FieldMetric):
    """Precision, recall and F1 of the items of a list (order and repeats ignored)."""

    kind: Kind = "set"

    def __init__(self) -> None:
        super().__init__()
        self.true_positive = 0
        self.predicted = 0
        self.actual = 0

    def score(self, gold: Any, pred: Any) -> float:
        """The row's F1 (1 when both are empty); the counts are kept for micro-averages."""
        want, got = _items(gold), _items(pred)
        hits = len(want & got)
        self.true_positive += hits
        self.predicted += len(got)
        self.actual += len(want)
        return _prf(hits, len(got), len(want))["f1"]

    def summary(self) -> dict[str, Any]:
        """Micro-averaged precision, recall and F1 over every item, beside the mean row F1."""
        data = super().summary()
        data.update(_prf(self.true_positive, self.predicted, self.actual))
        return data


def _items(value: Any) -> set[str]:
    """A list's items, each as canonical JSON; a lone value is a list of one, None of none."""
    if value is None:
        return set()
    if not isinstance(value, (list, tuple, set, frozenset)):
        value = [value]
    return {_canonical(item) for item in value}


class NumberMetric(FieldMetric):
    """A match within ``tolerance`` (absolute), and the mean absolute error."""

    kind: Kind = "number"

    def __init__(self, tolerance: float = 0.0) -> None:
        super().__init__()
        self.tolerance = tolerance
        self.error_sum = 0.0
        self.measured = 0

    def score(self, gold: Any, pred: Any) -> float:
        """1 when the numbers are within the tolerance, else 0 (as is a non-number)."""
        if not _is_number(gold) or not _is_number(pred):
            return 1.0 if gold is None and pred is None else 0.0
        if float(pred) == float(gold):  # infinities too, whose difference is NaN
            self.measured += 1  # an error of 0
            return 1.0
        error = abs(float(pred) - float(gold))
        if math.isfinite(error):
            self.error_sum += error
            self.measured += 1
        return 1.0 if error <= self.tolerance + 1e-12 * abs(float(gold)) else 0.0

    def summary(self) -> dict[str, Any]:
        """The share within tolerance, the tolerance, and the mean absolute error."""
        data = super().summary()
        data["tolerance"] = self.tolerance
        data["mean_absolute_error"] = self.error_sum / self.measured if self.measured else None
        return data


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def make_metric(
    kind: Kind, *, metric: UserMetric | None = None, tolerance: float = 0.0
) -> FieldMetric:
    """A fresh metric of ``kind`` (``metric`` applies to text, ``tolerance`` to numbers)."""
    if kind == "label":
        return LabelMetric()
    if kind == "text":
        return TextMetric(metric)
    if kind == "set":
        return SetMetric()
    if kind == "number":
        return NumberMetric(tolerance)
    return FieldMetric()
