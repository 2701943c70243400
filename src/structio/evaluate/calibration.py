"""How far a model's confidence can be trusted: reliability bins, ECE, accuracy by threshold.

Confidences in ``[0, 1]`` fall into equal-width bins (the last one closed: 1.0 is in it);
each bin keeps three numbers, so memory is the same for ten rows or ten million. Accuracy
at a threshold ``t`` (a bin edge) is read from the bins at or above it, exactly.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["Calibration"]


class Calibration:
    """Confidence bins of one field: rows, summed confidence and correct rows per bin."""

    def __init__(self, bins: int = 10) -> None:
        if bins < 1:
            raise ValueError(f"bins must be at least 1, not {bins}")
        self.bins = bins
        self.count = [0] * bins
        self.confidence = [0.0] * bins
        self.correct = [0] * bins

    def add(self, confidence: float, correct: bool) -> None:
        """Count one prediction made with ``confidence`` (clamped to ``[0, 1]``)."""
        value = min(1.0, max(0.0, confidence)) if math.isfinite(confidence) else 0.0
        index = min(self.bins - 1, int(value * self.bins))
        self.count[index] += 1
        self.confidence[index] += value
        self.correct[index] += bool(correct)

    @property
    def total(self) -> int:
        """Rows counted."""
        return sum(self.count)

    def ece(self) -> float | None:
        """Expected calibration error: the rows' share times |accuracy - confidence| per bin."""
        total = self.total
        if not total:
            return None
        return sum(
            abs(self.correct[i] - self.confidence[i]) / total
            for i in range(self.bins)
            if self.count[i]
        )

    def reliability(self) -> list[dict[str, Any]]:
        """Each bin: its range, rows, mean confidence and accuracy (``None`` when empty)."""
        rows = []
        for i in range(self.bins):
            count = self.count[i]
            rows.append(
                {
                    "low": i / self.bins,
                    "high": (i + 1) / self.bins,
                    "rows": count,
                    "confidence": self.confidence[i] / count if count else None,
                    "accuracy": self.correct[i] / count if count else None,
                }
            )
        return rows

    def thresholds(self) -> list[dict[str, Any]]:
        """At each bin edge ``t``: the share of rows with confidence >= t and their accuracy."""
        total = self.total
        rows = []
        for i in range(self.bins):
            kept = sum(self.count[i:])
            right = sum(self.correct[i:])
            rows.append(
                {
                    "threshold": i / self.bins,
                    "coverage": kept / total if total else None,
                    "accuracy": right / kept if kept else None,
                }
            )
        return rows

    def summary(self) -> dict[str, Any]:
        """ECE, reliability bins and accuracy by threshold, as JSON data."""
        return {
            "rows": self.total,
            "ece": self.ece(),
            "bins": self.reliability(),
            "thresholds": self.thresholds(),
        }
