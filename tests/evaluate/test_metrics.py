"""Each kind of field is scored by its type, in [0, 1], with counts only."""

from __future__ import annotations

import enum
from typing import Literal, Optional

import pydantic
from hypothesis import given
from hypothesis import strategies as st

from structio.evaluate.metrics import (
    MAX_LABELS,
    LabelMetric,
    NumberMetric,
    SetMetric,
    TextMetric,
    kind_of,
    leaves,
    make_metric,
    normalize_text,
)


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(pydantic.BaseModel):
    city: str
    zip: int


def test_kinds_follow_the_declared_type() -> None:
    assert kind_of(Literal["a", "b"]) == "label"
    assert kind_of(Colour) == "label"
    assert kind_of(bool) == "label"
    assert kind_of(Optional[bool]) == "label"  # noqa: UP045 - the spelling users write too
    assert kind_of(int | None) == "number"
    assert kind_of(float) == "number"
    assert kind_of(str) == "text"
    assert kind_of(list[str]) == "set"
    assert kind_of(set[int]) == "set"
    assert kind_of(dict[str, int]) == "exact"


def test_without_a_type_the_labelled_value_decides() -> None:
    assert [kind_of(None, v) for v in (True, 3, 2.5, "x", [1], {"a": 1})] == [
        "label",
        "number",
        "number",
        "text",
        "set",
        "exact",
    ]


def test_labels_count_a_confusion_matrix() -> None:
    metric = LabelMetric()
    for gold, pred in [("a", "a"), ("a", "b"), ("b", "b"), ("b", "b"), ("a", None)]:
        metric.add(gold, pred)
    summary = metric.summary()
    assert summary["accuracy"] == 3 / 5
    labels = summary["labels"]
    assert labels == ["a", "b", "(none)"]
    matrix = summary["confusion"]
    assert matrix[labels.index("a")][labels.index("b")] == 1
    assert matrix[labels.index("b")][labels.index("b")] == 2
    assert summary["per_label"]["b"]["precision"] == 2 / 3
    assert summary["per_label"]["a"]["recall"] == 1 / 3
    assert summary["missing"] == 1


def test_enum_and_its_value_are_the_same_label() -> None:
    metric = make_metric(kind_of(Colour))
    assert metric.add("red", Colour.RED) == 1.0
    assert metric.add(Colour.BLUE, "red") == 0.0


def test_the_confusion_matrix_keeps_at_most_max_labels() -> None:
    metric = LabelMetric()
    for number in range(MAX_LABELS + 30):
        metric.add(f"l{number}", f"l{number}")
    summary = metric.summary()
    assert len(summary["labels"]) == MAX_LABELS + 1
    assert summary["labels"][-1] == "(other)"
    assert sum(map(sum, summary["confusion"])) == MAX_LABELS + 30


def test_text_is_matched_normalised_or_by_the_users_metric() -> None:
    assert normalize_text("  Hello,   WORLD! ") == "hello world"
    metric = TextMetric()
    assert metric.add("Paris.", "paris") == 1.0
    assert metric.add("Paris", "Lyon") == 0.0
    own = TextMetric(lambda gold, pred: len(set(gold) & set(pred)) / len(set(gold)))
    assert own.add("ab", "a") == 0.5
    assert own.summary()["measure"] == "user metric"


def test_sets_give_precision_recall_and_f1() -> None:
    metric = SetMetric()
    assert metric.add(["a", "b"], ["b", "a"]) == 1.0
    metric.add(["a", "b", "c", "d"], ["a", "x"])
    summary = metric.summary()
    # micro: 3 hits of 4 predicted items and 6 labelled ones
    assert summary["precision"] == 3 / 4
    assert summary["recall"] == 3 / 6
    assert metric.add([], []) == 1.0


def test_numbers_match_within_the_tolerance() -> None:
    metric = NumberMetric(tolerance=0.5)
    assert metric.add(3, 3.4) == 1.0
    assert metric.add(3, 4) == 0.0
    assert metric.add(3, "three") == 0.0
    assert metric.summary()["mean_absolute_error"] == (0.4 + 1.0) / 2
    assert NumberMetric().add(True, 1) == 0.0  # a bool is not a number


def test_models_are_walked_by_path() -> None:
    found = list(
        leaves("address", Address, Address(city="Oslo", zip=1), {"city": "oslo", "zip": 2})
    )
    assert [(path, gold, pred) for path, _, gold, pred in found] == [
        ("address.city", "Oslo", "oslo"),
        ("address.zip", 1, 2),
    ]
    assert [kind_of(t, g) for _, t, g, _ in found] == ["text", "number"]
    untyped = list(leaves("a", None, {"b": {"c": 1}}, None))
    assert [(path, pred) for path, _, _, pred in untyped] == [("a.b.c", None)]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(json_values, json_values)
def test_every_score_is_between_zero_and_one(gold: object, pred: object) -> None:
    for kind in ("label", "text", "set", "number", "exact"):
        metric = make_metric(kind)  # type: ignore[arg-type]
        score = metric.add(gold, pred)
        assert 0.0 <= score <= 1.0
        summary = metric.summary()
        assert 0.0 <= summary["score"] <= 1.0


@given(json_values)
def test_a_value_scores_one_against_itself(value: object) -> None:
    assert make_metric(kind_of(None, value)).add(value, value) == 1.0


@given(st.lists(st.text(max_size=5), max_size=8))
def test_identical_lists_have_precision_and_recall_one(items: list[str]) -> None:
    metric = SetMetric()
    metric.add(items, list(reversed(items)))
    summary = metric.summary()
    assert (summary["precision"], summary["recall"], summary["f1"]) == (1.0, 1.0, 1.0)
