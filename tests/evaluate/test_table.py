"""The terminal table: one column per system, the figures of each field."""

from __future__ import annotations

from structio.evaluate.evaluation import Evaluation
from structio.evaluate.table import table, table_rows


def _systems() -> list[dict[str, object]]:
    one = Evaluation("chat", types={"n": int})
    one.add({"n": 1, "tags": ["a", "b"]}, {"n": 1, "tags": ["a"]}, cost=0.001)
    one.fail("ParseError")
    two = Evaluation("json", types={"n": int})
    two.add({"n": 1, "tags": ["a"]}, {"n": 2, "tags": ["a"]}, confidence={"n": 0.5})
    return [one.summary(), two.summary()]


def test_a_row_per_figure_and_a_column_per_system() -> None:
    rows = table_rows(_systems())
    assert rows[0] == ["", "chat", "json"]
    by_label = {row[0]: row[1:] for row in rows}
    assert by_label["    ParseError"] == ["1", "0"]
    assert by_label["n (number)"] == ["100.0% exact", "0.0% exact"]
    assert by_label["tags (set)"] == ["66.7% F1", "100.0% F1"]
    assert by_label["n ECE"] == ["-", "50.0%"]
    assert by_label["cost/row (USD)"] == ["0.001000", "-"]


def test_the_text_lines_up() -> None:
    text = table(_systems())
    lines = text.splitlines()
    assert lines[1].startswith("---")
    assert len({len(line) for line in lines[:3]}) == 1  # header, rule and first row align
    assert "mean field score" in text
