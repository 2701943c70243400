"""Preference pairs from wrong predictions, in OpenAI's and TRL's formats, that validate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from structio.evaluate.preference import write_pairs
from structio.exceptions import ConfigurationError
from structio.finetune import validate
from tests.evaluate._rows import Triage, data_rows, prediction, write_jsonl


def _files(tmp_path: Path) -> tuple[Path, Path]:
    rows = data_rows(3)
    outputs = [{k: row[k] for k in ("category", "urgency", "tags")} for row in rows]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    preds = write_jsonl(
        tmp_path / "preds.jsonl",
        [
            prediction(1, outputs[0]),  # right: no pair
            prediction(2, {**outputs[1], "category": "other"}),
            prediction(3, {**outputs[2], "tags": ["x"]}),
        ],
    )
    return data, preds


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_openai_pairs_hold_the_prompt_the_label_and_the_wrong_answer(tmp_path: Path) -> None:
    data, preds = _files(tmp_path)
    out = tmp_path / "pairs.jsonl"
    summary = write_pairs(Triage, data, preds, out)
    assert (summary.written, summary.right, summary.skipped) == (2, 1, 0)
    first = _read(out)[0]
    assert set(first) == {"input", "preferred_output", "non_preferred_output"}
    prompt = sio.ChatAdapter().format(Triage, inputs={"ticket": "ticket 1"})
    assert first["input"]["messages"] == prompt
    chosen = first["preferred_output"][0]["content"]
    rejected = first["non_preferred_output"][0]["content"]
    assert sio.ChatAdapter().parse(Triage, chosen)["category"] == "bug"
    assert sio.ChatAdapter().parse(Triage, rejected)["category"] == "other"
    assert validate(out, signature=Triage).problem_count == 0
    assert "2 preference pairs" in summary.report()


def test_trl_pairs_are_conversational(tmp_path: Path) -> None:
    data, preds = _files(tmp_path)
    out = tmp_path / "dpo.jsonl"
    write_pairs(Triage, data, preds, out, format="trl", adapter=sio.JSONAdapter())
    rows = _read(out)
    assert [set(row) for row in rows] == [{"prompt", "chosen", "rejected"}] * 2
    assert rows[1]["prompt"][-1]["role"] == "user"
    assert json.loads(rows[1]["rejected"][0]["content"])["tags"] == ["x"]
    assert validate(out, signature=Triage, adapter=sio.JSONAdapter()).problem_count == 0


def test_an_unknown_format_is_refused(tmp_path: Path) -> None:
    data, preds = _files(tmp_path)
    with pytest.raises(ConfigurationError, match="'openai' or 'trl'"):
        write_pairs(Triage, data, preds, tmp_path / "x.jsonl", format="kto")  # type: ignore[arg-type]
