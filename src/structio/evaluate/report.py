"""Evaluations as one self-contained HTML file: tables and inline SVG plots, no script.

Everything is in the file (styles, plots drawn here as SVG): it opens from disk, with no
server and no network. Plots: the headline figure of each field per system (bars), each
label field's confusion matrix (a heatmap), each calibrated field's reliability diagram,
and cost per row against mean field score (one point per system). Every number shown is
also in a table, and the data of the report is embedded as JSON (``<script
type="application/json" id="evaluation-data">``), inert, for tools that read it back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from structio.evaluate.table import field_figure, table_rows

__all__ = ["html_report"]

_COLOURS = ("#3b6fb6", "#e07b39", "#3a9a5b", "#b5443c", "#7b5ea7", "#8c6d3f")
_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:.25em .6em;border:1px solid #ddd;
text-align:right}th:first-child,td:first-child{text-align:left;white-space:pre}
.plots{display:flex;flex-wrap:wrap;gap:1.5em}figure{margin:0}figcaption{font-size:.9em;color:#555}
svg text{font-family:system-ui,sans-serif;font-size:11px;fill:#333}
"""


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _text(x: float, y: float, label: str, anchor: str = "middle", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{escape(label)}</text>'


def _figure(svg: str, caption: str, kind: str) -> str:
    return f'<figure data-plot="{kind}">{svg}<figcaption>{escape(caption)}</figcaption></figure>'


def _field_bars(summaries: Sequence[dict[str, Any]]) -> str:
    """The headline figure of each field, one bar per system."""
    paths = list(dict.fromkeys(p for s in summaries for p in s["fields"]))
    if not paths:
        return ""
    group = 22 * len(summaries) + 14
    width, height, left = 520, 40 + group * len(paths), 150
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">']
    scale = width - left - 60
    for tick in (0, 0.5, 1):
        x = left + tick * scale
        parts.append(f'<line x1="{x}" y1="10" x2="{x}" y2="{height - 20}" stroke="#ccc"/>')
        parts.append(_text(x, height - 6, _pct(tick)))
    for row, path in enumerate(paths):
        top = 14 + row * group
        parts.append(_text(left - 8, top + group / 2, path, "end"))
        for index, summary in enumerate(summaries):
            field = summary["fields"].get(path)
            value = field_figure(field)[1] if field is not None else None
            y = top + index * 22
            bar = (value or 0.0) * scale
            colour = _COLOURS[index % len(_COLOURS)]
            parts.append(
                f'<rect class="bar" x="{left}" y="{y}" width="{bar:.1f}" height="18" '
                f'fill="{colour}" data-system="{escape(summary["name"])}" '
                f'data-field="{escape(path)}" data-value="{value}"/>'
            )
            parts.append(_text(left + bar + 4, y + 13, _pct(value), "start"))
    parts.append("</svg>")
    return _figure("".join(parts), "Headline figure per field (longer is better)", "bars")


def _heatmap(name: str, field: str, data: dict[str, Any]) -> str:
    """A confusion matrix: rows the labels, columns the predictions, darker the more."""
    labels: list[str] = data["labels"]
    matrix: list[list[int]] = data["confusion"]
    cell = max(18, min(48, 360 // max(1, len(labels))))
    left, top = 110, 30
    size = cell * len(labels)
    width, height = left + size + 20, top + size + 60
    peak = max((max(row) for row in matrix if row), default=0) or 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">']
    for i, want in enumerate(labels):
        parts.append(_text(left - 6, top + i * cell + cell / 2 + 4, want[:18], "end"))
        for j, got in enumerate(labels):
            count = matrix[i][j]
            shade = int(255 - 200 * count / peak)
            fill = f"rgb({shade},{shade},255)" if i != j else f"rgb({shade},255,{shade})"
            parts.append(
                f'<rect class="cell" x="{left + j * cell}" y="{top + i * cell}" width="{cell}" '
                f'height="{cell}" fill="{fill}" stroke="#fff" data-label="{escape(want)}" '
                f'data-predicted="{escape(got)}" data-count="{count}"/>'
            )
            if cell >= 24:
                parts.append(
                    _text(left + j * cell + cell / 2, top + i * cell + cell / 2 + 4, str(count))
                )
    for j, got in enumerate(labels):
        x, y = left + j * cell + cell / 2, top + size + 12
        parts.append(_text(x, y, got[:18], "end", f' transform="rotate(-35 {x:.1f} {y:.1f})"'))
    parts.append(_text(left + size / 2, 16, "predicted →"))
    parts.append("</svg>")
    return _figure("".join(parts), f"{name}: confusion of {field} (rows: labelled)", "confusion")


def _plot_axes(
    parts: list[str], size: int, left: int, top: int, x: str, y: str, x_peak: float = 1.0
) -> None:
    parts.append(
        f'<rect x="{left}" y="{top}" width="{size}" height="{size}" fill="none" stroke="#999"/>'
    )
    for tick in (0, 0.5, 1):
        parts.append(_text(left + tick * size, top + size + 14, f"{tick * x_peak:.3g}"))
        parts.append(_text(left - 6, top + size - tick * size + 4, f"{tick:g}", "end"))
    parts.append(_text(left + size / 2, top + size + 30, x))
    parts.append(
        _text(14, top + size / 2, y, "middle", f' transform="rotate(-90 14 {top + size / 2:.1f})"')
    )


def _reliability(name: str, field: str, data: dict[str, Any]) -> str:
    """A reliability diagram: accuracy against confidence per bin, the diagonal perfect."""
    size, left, top = 240, 50, 14
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size + 70}" height="{size + 56}">']
    _plot_axes(parts, size, left, top, "confidence", "accuracy")
    parts.append(
        f'<line x1="{left}" y1="{top + size}" x2="{left + size}" y2="{top}" '
        'stroke="#bbb" stroke-dasharray="4 3"/>'
    )
    for item in data["bins"]:
        if item["accuracy"] is None:
            continue
        x = left + item["low"] * size
        bar = item["accuracy"] * size
        parts.append(
            f'<rect class="bin" x="{x:.1f}" y="{top + size - bar:.1f}" '
            f'width="{(item["high"] - item["low"]) * size - 2:.1f}" height="{bar:.1f}" '
            f'fill="#3b6fb6" fill-opacity="0.75" data-rows="{item["rows"]}" '
            f'data-accuracy="{item["accuracy"]}" data-confidence="{item["confidence"]}"/>'
        )
    parts.append("</svg>")
    caption = f"{name}: calibration of {field}, ECE {_pct(data['ece'])}"
    return _figure("".join(parts), caption, "calibration")


def _cost_plot(summaries: Sequence[dict[str, Any]]) -> str:
    """Cost per row against mean field score, one point per system with a known cost."""
    points = [
        (s["name"], s["usage"]["cost_per_row"], s["score"])
        for s in summaries
        if s["usage"]["cost_per_row"] is not None and s["score"] is not None
    ]
    if not points:
        return ""
    size, left, top = 240, 50, 14
    peak = max(cost for _, cost, _ in points) or 1.0
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size + 160}" height="{size + 56}">']
    _plot_axes(parts, size, left, top, "cost per row (USD)", "mean field score", peak)
    for index, (name, cost, score) in enumerate(points):
        x, y = left + cost / peak * size, top + size - score * size
        colour = _COLOURS[index % len(_COLOURS)]
        parts.append(
            f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="6" fill="{colour}" '
            f'data-system="{escape(name)}" data-cost="{cost}" data-score="{score}"/>'
        )
        parts.append(_text(x + 9, y + 4, name, "start"))
    parts.append("</svg>")
    return _figure("".join(parts), "Cost against accuracy (up and left is better)", "cost")


def _summary_table(summaries: Sequence[dict[str, Any]]) -> str:
    """The terminal table's cells as an HTML table: one layout, two renderings."""
    header, *rows = table_rows(summaries)
    head = "".join(f"<th>{escape(cell)}</th>" for cell in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f'<table id="summary"><tr>{head}</tr>{body}</table>'


def html_report(summaries: Sequence[dict[str, Any]], *, title: str = "Evaluation") -> str:
    """One self-contained HTML page of one or more `Evaluation.summary` results."""
    plots = [_field_bars(summaries), _cost_plot(summaries)]
    confusion, calibration, thresholds = [], [], []
    for summary in summaries:
        for path, field in summary["fields"].items():
            if field["kind"] == "label" and field["labels"]:
                confusion.append(_heatmap(summary["name"], path, field))
        for field_name, data in summary["calibration"].items():
            calibration.append(_reliability(summary["name"], field_name, data))
            rows = "".join(
                f"<tr><td>{t['threshold']:.1f}</td><td>{_pct(t['coverage'])}</td>"
                f"<td>{_pct(t['accuracy'])}</td></tr>"
                for t in data["thresholds"]
            )
            thresholds.append(
                f"<h3>{escape(summary['name'])}: {escape(field_name)}</h3>"
                '<table class="thresholds"><tr><th>confidence ≥</th><th>rows kept</th>'
                f"<th>accuracy</th></tr>{rows}</table>"
            )
    data = json.dumps(list(summaries), ensure_ascii=False).replace("</", "<\\/")
    sections = [
        f"<h1>{escape(title)}</h1>",
        "<h2>Summary</h2>",
        _summary_table(summaries),
        '<h2>Fields</h2><div class="plots">',
        *[p for p in plots if p],
        "</div>",
    ]
    if confusion:
        sections += ['<h2>Confusion</h2><div class="plots">', *confusion, "</div>"]
    if calibration:
        sections += ['<h2>Calibration</h2><div class="plots">', *calibration, "</div>"]
        sections += ["<h2>Accuracy by confidence threshold</h2>", *thresholds]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>"
        + "\n".join(sections)
        + f'<script type="application/json" id="evaluation-data">{data}</script>'
        + "</body></html>\n"
    )
