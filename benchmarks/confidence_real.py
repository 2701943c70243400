"""How far a real model's label confidence can be trusted: calibration on a local server.

The real instruction-tuned model of `real_model.py` (Qwen2.5-Coder-1.5B-Instruct, served by
llama-cpp-python, whose chat answers carry log probabilities in the legacy completions
shape) classifies the 20 product reviews of `real_model_data.py` with
``Predict(..., confidence=True)``: the sentiment label with two options (the benchmark's
signature) and with three (``neutral`` added, which no review is, so the model can be
wrong). For each signature and adapter (Chat, JSON): accuracy, the mean confidence of the
chosen label, expected calibration error over ten bins (`structio.evaluate.calibration`),
and accuracy among the rows at or above 0.9. One request per row, cache off.

Run (the server first: bash benchmarks/real_model_setup.sh, or ../shared/realmodel):
    python benchmarks/confidence_real.py [--base-url http://127.0.0.1:8765/v1] [--limit N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_model_data import REVIEWS

import structio as sio
from structio.evaluate.calibration import Calibration

MODEL = "openai/qwen2.5-coder-1.5b-instruct"


class Sentiment(sio.Signature):
    """Classify the sentiment of a product review."""

    review: str = sio.InputField()
    sentiment: Literal["positive", "negative"] = sio.OutputField()


class Sentiment3(sio.Signature):
    """Classify the sentiment of a product review."""

    review: str = sio.InputField()
    sentiment: Literal["positive", "negative", "neutral"] = sio.OutputField()


SIGNATURES: dict[str, type[sio.Signature]] = {"2 labels": Sentiment, "3 labels": Sentiment3}
ADAPTERS: dict[str, sio.Adapter] = {"chat": sio.ChatAdapter(), "json": sio.JSONAdapter()}


@dataclass
class Cell:
    """One signature and adapter over the rows."""

    rows: int = 0
    correct: int = 0
    failed: int = 0
    unknown: int = 0  # answers with no confidence (tokens that did not spell the text)
    confidences: list[float] | None = None
    seconds: float = 0.0

    def __post_init__(self) -> None:
        self.confidences = []
        self.calibration = Calibration()


def measure(
    base_url: str, model: str, rows: list[tuple[str, str]], api_key: str = "local"
) -> dict[tuple[str, str], Cell]:
    """Each (signature, adapter) cell's figures over ``rows`` (review, right label)."""
    lm = sio.LM(model, api_base=base_url, api_key=api_key, cache=False, temperature=0.0)
    cells: dict[tuple[str, str], Cell] = {}
    for sig_name, signature in SIGNATURES.items():
        for adapter_name, adapter in ADAPTERS.items():
            cell = cells.setdefault((sig_name, adapter_name), Cell())
            predict = sio.Predict(signature, lm=lm, adapter=adapter, confidence=True)
            for review, gold in rows:
                cell.rows += 1
                start = time.perf_counter()
                try:
                    prediction = predict(review=review)
                except sio.StructioError:
                    cell.failed += 1
                    continue
                finally:
                    cell.seconds += time.perf_counter() - start
                right = prediction.sentiment == gold
                cell.correct += right
                confidence = (prediction.meta.confidence or {}).get("sentiment")
                if confidence is None:
                    cell.unknown += 1
                    continue
                assert cell.confidences is not None
                cell.confidences.append(confidence)
                cell.calibration.add(confidence, right)
    return cells


def report(cells: dict[tuple[str, str], Cell]) -> str:
    """The table of every cell."""
    lines = [
        "| signature | adapter | correct | mean confidence | ECE | accuracy at ≥ 0.9 "
        "(rows) | no confidence | failed | s / row |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (sig_name, adapter_name), cell in cells.items():
        ece = cell.calibration.ece()
        high = cell.calibration.thresholds()[-1]
        mean = statistics.fmean(cell.confidences) if cell.confidences else None
        kept = round((high["coverage"] or 0) * cell.calibration.total)
        at_high = "-" if high["accuracy"] is None else f"{high['accuracy']:.2f}"
        lines.append(
            f"| {sig_name} | {adapter_name} | {cell.correct}/{cell.rows} | "
            f"{'-' if mean is None else f'{mean:.3f}'} | "
            f"{'-' if ece is None else f'{ece:.3f}'} | {at_high} ({kept}) | "
            f"{cell.unknown} | {cell.failed} | {cell.seconds / max(cell.rows, 1):.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:8765/v1")
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--limit", type=int, default=len(REVIEWS))
    args = parser.parse_args(argv)
    cells = measure(args.base_url, args.model, REVIEWS[: args.limit])
    print(report(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
