"""Preference pairs from an evaluation: the labelled answer chosen, a wrong prediction rejected.

Each prediction whose outputs do not all match the labels (as `structio.evaluate` scores
them) gives one pair: the prompt the adapter sends for the row's inputs, the labelled
outputs as the preferred answer and the predicted ones as the other, both written in the
adapter's format (exactly as `structio.finetune` writes answers). Two formats:

- ``"openai"``: OpenAI's preference fine-tuning (DPO) JSONL, ``{"input": {"messages":
  [...]}, "preferred_output": [{assistant}], "non_preferred_output": [{assistant}]}``;
- ``"trl"``: TRL's DPO dataset in conversational form, ``{"prompt": [...], "chosen":
  [{assistant}], "rejected": [{assistant}]}``.

`structio.finetune.validate` (``structio validate``) checks files of either format.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from structio._util.files import atomic_write
from structio.adapters import Adapter
from structio.evaluate.evaluation import Evaluation
from structio.evaluate.files import Labels, prediction_rows
from structio.evaluate.metrics import UserMetric
from structio.exceptions import ConfigurationError, FormatError
from structio.settings import resolve_adapter
from structio.signatures import Signature

__all__ = ["PairFormat", "PairsSummary", "pair_record", "write_pairs"]

PairFormat = Literal["openai", "trl"]


@dataclass
class PairsSummary:
    """What `write_pairs` did: pairs written, predictions right (no pair), rows skipped."""

    path: Path
    written: int = 0
    right: int = 0
    skipped: int = 0

    def report(self) -> str:
        """One line."""
        return (
            f"{self.written:,} preference pairs written to {str(self.path)!r} "
            f"({self.right:,} predictions were right; {self.skipped:,} rows could not be "
            "written: an input or output that does not fit the signature)"
        )


def pair_record(
    messages: list[dict[str, Any]], rejected: str, format: PairFormat
) -> dict[str, Any]:
    """One pair: ``messages`` (the prompt, then the chosen answer) and the rejected answer."""
    prompt, chosen = messages[:-1], [messages[-1]]
    other = [{"role": "assistant", "content": rejected}]
    if format == "openai":
        return {
            "input": {"messages": prompt},
            "preferred_output": chosen,
            "non_preferred_output": other,
        }
    return {"prompt": prompt, "chosen": chosen, "rejected": other}


def write_pairs(
    signature: type[Signature],
    data: str | os.PathLike[str],
    predictions: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    format: PairFormat = "openai",
    adapter: Adapter | None = None,
    metrics: Mapping[str, UserMetric] | None = None,
    tolerance: float | Mapping[str, float] = 0.0,
) -> PairsSummary:
    """Write a preference pair for each wrong prediction of ``predictions``.

    Args:
        signature: The signature predicted (its adapter prompt is the pairs' prompt).
        data: The labelled data file the predictions were made from.
        predictions: A `structio run` output over ``data``.
        output: The JSONL file to write (atomically: all of it or nothing).
        format: ``"openai"`` (preference fine-tuning) or ``"trl"`` (DPO, conversational).
        adapter: The wire format of prompts and answers (by default as `Predict` chooses).
        metrics: User metrics per field, deciding what counts as wrong.
        tolerance: The tolerance of number fields, deciding what counts as wrong.

    Raises:
        ConfigurationError: A file is missing or not in its format, or ``format`` unknown.
        SaveError: ``output`` cannot be written.
    """
    if format not in ("openai", "trl"):
        raise ConfigurationError(f"unknown preference format {format!r}; use 'openai' or 'trl'")
    chosen_adapter = resolve_adapter(adapter)
    types = {name: field.annotation for name, field in signature.output_fields.items()}
    judge = Evaluation("pairs", types=types, metrics=metrics, tolerance=tolerance)
    summary = PairsSummary(Path(output))
    labels = Labels(data, signature)

    def write(handle: IO[str]) -> None:
        for row in prediction_rows(predictions):
            values = labels.get(row["line"])
            if values is None:
                summary.skipped += 1
                continue
            outputs = {k: values[k] for k in signature.output_fields if k in values}
            scores = judge.add(outputs, row["outputs"])
            if all(score >= 1.0 for score in scores.values()):
                summary.right += 1
                continue
            inputs = {k: v for k, v in values.items() if k in signature.input_fields}
            try:
                record = chosen_adapter.format_finetune_data(signature, [], inputs, outputs)
                rejected = chosen_adapter.format_assistant_message_content(
                    signature, row["outputs"]
                )
            except FormatError:
                summary.skipped += 1
                continue
            messages = [dict(message) for message in record["messages"]]
            handle.write(json.dumps(pair_record(messages, rejected, format)) + "\n")
            summary.written += 1

    try:
        atomic_write(Path(output), write, what="the preference pairs")
    finally:
        labels.close()
    return summary
