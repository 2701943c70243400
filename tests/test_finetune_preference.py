"""`finetune.validate` checks preference pairs: OpenAI's preference format and TRL's DPO."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from structio.finetune import validate

USER = {"role": "user", "content": "2+2?"}
RIGHT = [{"role": "assistant", "content": "4"}]
WRONG = [{"role": "assistant", "content": "5"}]


def _check(tmp_path: Path, *rows: dict[str, Any]) -> list[str]:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return [str(problem) for problem in validate(path).problems]


def test_well_formed_pairs_of_both_formats_pass(tmp_path: Path) -> None:
    openai = {
        "input": {"messages": [USER]},
        "preferred_output": RIGHT,
        "non_preferred_output": WRONG,
    }
    trl = {"prompt": [USER], "chosen": RIGHT, "rejected": WRONG}
    assert _check(tmp_path, openai, trl) == []


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"prompt": [USER], "chosen": RIGHT, "rejected": RIGHT}, "TRL DPO pair: the chosen and"),
        ({"prompt": [USER], "chosen": "4", "rejected": WRONG}, "lists of messages"),
        (
            {"input": [USER], "preferred_output": RIGHT, "non_preferred_output": WRONG},
            'OpenAI preference pair: "input" must be an object',
        ),
        (
            {"prompt": [USER], "chosen": RIGHT, "rejected": [{"role": "user", "content": "x"}]},
            "with the rejected answer, message 1 is user",
        ),
        (
            {"prompt": [USER, *RIGHT], "chosen": RIGHT, "rejected": WRONG},
            "with the chosen answer, message 2 is assistant",
        ),
    ],
)
def test_a_bad_pair_is_named(tmp_path: Path, row: dict[str, Any], problem: str) -> None:
    (found,) = _check(tmp_path, row)
    assert found.startswith("line 1: ")
    assert problem in found


def test_a_duplicate_pair_is_found(tmp_path: Path) -> None:
    row = {"prompt": [USER], "chosen": RIGHT, "rejected": WRONG}
    assert _check(tmp_path, row, row) == ["line 2: duplicate of line 1; remove one"]
