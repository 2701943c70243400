"""Calibration bins: ECE, the reliability diagram and accuracy at each threshold."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from structio.evaluate.calibration import Calibration


def test_perfectly_calibrated_bins_have_no_error() -> None:
    cal = Calibration(bins=10)
    # 0.25 confident: 1 of 4 right; 0.75 confident: 3 of 4 right.
    for right in (True, False, False, False):
        cal.add(0.25, right)
    for right in (True, True, True, False):
        cal.add(0.75, right)
    assert cal.ece() == pytest.approx(0.0)


def test_overconfidence_is_the_gap() -> None:
    cal = Calibration(bins=10)
    for right in (True, False):
        cal.add(0.95, right)
    assert cal.ece() == pytest.approx(0.45)
    top = cal.reliability()[9]
    assert (top["rows"], top["accuracy"], top["confidence"]) == (2, 0.5, pytest.approx(0.95))
    assert cal.reliability()[0]["accuracy"] is None


def test_accuracy_at_each_threshold_counts_the_rows_above_it() -> None:
    cal = Calibration(bins=10)
    cal.add(0.1, False)
    cal.add(0.5, True)
    cal.add(1.0, True)  # the last bin is closed: 1.0 is in it
    at = {round(t["threshold"], 1): t for t in cal.thresholds()}
    assert at[0.0]["coverage"] == 1.0
    assert at[0.0]["accuracy"] == pytest.approx(2 / 3)
    assert at[0.5]["coverage"] == pytest.approx(2 / 3)
    assert at[0.5]["accuracy"] == 1.0
    assert at[0.9]["coverage"] == pytest.approx(1 / 3)


def test_no_rows_no_figures() -> None:
    cal = Calibration()
    assert cal.ece() is None
    assert cal.thresholds()[0]["accuracy"] is None
    with pytest.raises(ValueError, match="bins"):
        Calibration(bins=0)


@given(st.lists(st.tuples(st.floats(-1, 2), st.booleans()), max_size=40))
def test_ece_is_between_zero_and_one(rows: list[tuple[float, bool]]) -> None:
    cal = Calibration()
    for confidence, right in rows:
        cal.add(confidence, right)
    ece = cal.ece()
    assert ece is None if not rows else 0.0 <= ece <= 1.0 + 1e-9
    assert cal.total == len(rows)
