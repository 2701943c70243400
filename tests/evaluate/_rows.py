"""Labelled data and prediction files as `structio run` writes them, for the tests."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import structio as sio


class Triage(sio.Signature):
    """Route a support ticket."""

    ticket: str = sio.InputField()
    category: Literal["billing", "bug", "other"] = sio.OutputField()
    urgency: int = sio.OutputField()
    tags: list[str] = sio.OutputField()


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def data_rows(count: int) -> list[dict[str, Any]]:
    categories = ["billing", "bug", "other"]
    return [
        {
            "ticket": f"ticket {n}",
            "category": categories[n % 3],
            "urgency": n % 5 + 1,
            "tags": [f"t{n % 2}", "x"],
        }
        for n in range(count)
    ]


def prediction(line: int, outputs: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    """A row of `structio run` output (line numbers from 1), with optional extra keys."""
    return {
        "line": line,
        "inputs": {"ticket": f"ticket {line - 1}"},
        "outputs": dict(outputs),
        "model": "fake",
        "adapter": "ChatAdapter",
        **extra,
    }
