"""Evaluations as a terminal table: one column per system, one line per figure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["field_figure", "table", "table_rows"]


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _amount(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def field_figure(field: dict[str, Any]) -> tuple[str, float | None]:
    """The one headline figure of a field's summary: its name and value."""
    kind = field["kind"]
    if kind == "label":
        return "accuracy", field["accuracy"]
    if kind == "set":
        return "F1", field["f1"]
    if kind == "number":
        return (f"within {field['tolerance']:g}" if field["tolerance"] else "exact"), field["exact"]
    if kind == "text":
        return "score" if field.get("measure") == "user metric" else "match", field["score"]
    return "exact", field["exact"]


def table_rows(summaries: Sequence[dict[str, Any]]) -> list[list[str]]:
    """The cells of the table: a header row (the systems), then one row per figure."""
    lines: list[list[str]] = [["", *[summary["name"] for summary in summaries]]]

    def add(label: str, values: list[str]) -> None:
        lines.append([label, *values])

    add("rows", [f"{s['rows']['total']:,}" for s in summaries])
    add("  scored", [f"{s['rows']['scored']:,}" for s in summaries])
    add("  failed", [f"{s['rows']['failed']:,}" for s in summaries])
    reasons = sorted({r for s in summaries for r in s["failed_by_reason"]})
    for reason in reasons:
        add(f"    {reason}", [f"{s['failed_by_reason'].get(reason, 0):,}" for s in summaries])
    add("  missing", [f"{s['rows']['missing']:,}" for s in summaries])
    if any(s["rows"]["unreadable_labels"] for s in summaries):
        add("unreadable labels", [f"{s['rows']['unreadable_labels']:,}" for s in summaries])
    add("mean field score", [_percent(s["score"]) for s in summaries])
    add("rows all right", [_percent(s["rows_correct"]) for s in summaries])
    paths = list(dict.fromkeys(p for s in summaries for p in s["fields"]))
    for path in paths:
        cells = []
        for summary in summaries:
            field = summary["fields"].get(path)
            if field is None:
                cells.append("-")
                continue
            measure, value = field_figure(field)
            cells.append(f"{_percent(value)} {measure}")
        add(f"{path} ({_kind(summaries, path)})", cells)
    names = list(dict.fromkeys(n for s in summaries for n in s["calibration"]))
    for name in names:
        add(
            f"{name} ECE",
            [_percent((s["calibration"].get(name) or {}).get("ece")) for s in summaries],
        )
    usage = [s["usage"] for s in summaries]
    add("prompt tokens/row", [_amount(u["prompt_tokens_per_row"]) for u in usage])
    add("completion tokens/row", [_amount(u["completion_tokens_per_row"]) for u in usage])
    add("requests/row", [_amount(u["requests_per_row"], 2) for u in usage])
    add("cost/row (USD)", [_amount(u["cost_per_row"], 6) for u in usage])
    return lines


def table(summaries: Sequence[dict[str, Any]]) -> str:
    """The figures of one or more `Evaluation.summary` results, side by side, as text."""
    lines = table_rows(summaries)
    widths = [max(len(row[i]) for row in lines) for i in range(len(lines[0]))]
    text = []
    for number, row in enumerate(lines):
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        text.append("  ".join(cells).rstrip())
        if number == 0:
            text.append("-" * len(text[0]))
    return "\n".join(text)


def _kind(summaries: Sequence[dict[str, Any]], path: str) -> str:
    for summary in summaries:
        if path in summary["fields"]:
            return str(summary["fields"][path]["kind"])
    return "?"
