"""The HTML report, read back with a real HTML parser: its tables and its plots' data."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any

from structio.evaluate.evaluation import Evaluation
from structio.evaluate.report import html_report


class _Page(HTMLParser):
    """The parts of a page the tests look at: elements by tag, table cells, the JSON data."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.tables: dict[str, list[list[str]]] = {}
        self.external: list[str] = []
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._script = False
        self.data = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.elements.append((tag, found))
        for key in ("src", "href"):
            if found.get(key):
                self.external.append(str(found[key]))
        if tag == "table":
            self._table = found.get("id") or found.get("class") or f"t{len(self.tables)}"
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "script":
            self._script = found.get("type") == "application/json"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._table is not None:
            self.tables[self._table][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "table":
            self._table = None
        elif tag == "script":
            self._script = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._script:
            self.data += data

    def tagged(self, tag: str, **wanted: str) -> list[dict[str, str | None]]:
        return [
            attrs
            for name, attrs in self.elements
            if name == tag and all(attrs.get(k) == v for k, v in wanted.items())
        ]


def _summaries() -> list[dict[str, Any]]:
    chat = Evaluation("chat <1>", types={"label": bool})
    for gold, pred, sure in [(True, True, 0.9), (True, False, 0.8), (False, False, 0.3)]:
        chat.add(
            {"label": gold, "n": 2}, {"label": pred, "n": 2}, confidence={"label": sure}, cost=0.002
        )
    chat.fail("ParseError")
    json_ = Evaluation("json")
    json_.add({"label": True, "n": 2}, {"label": True, "n": 3}, cost=0.001)
    return [chat.summary(), json_.summary()]


def _page() -> _Page:
    page = _Page()
    page.feed(html_report(_summaries(), title="Tickets"))
    page.close()
    return page


def test_the_summary_table_has_a_column_per_system() -> None:
    table = _page().tables["summary"]
    assert table[0] == ["", "chat <1>", "json"]
    rows = {row[0]: row[1:] for row in table[1:]}
    assert rows["    ParseError"] == ["1", "0"]
    assert rows["label (label)"] == ["66.7% accuracy", "100.0% accuracy"]


def test_bars_show_each_field_of_each_system() -> None:
    bars = _page().tagged("rect", **{"class": "bar"})
    found = {(b["data-system"], b["data-field"]): float(b["data-value"] or 0) for b in bars}
    assert found[("chat <1>", "label")] == 2 / 3
    assert found[("json", "n")] == 0.0
    assert len(bars) == 4


def test_the_confusion_heatmap_holds_the_counts() -> None:
    cells = _page().tagged("rect", **{"class": "cell"})
    counts = {(c["data-label"], c["data-predicted"]): int(c["data-count"] or 0) for c in cells}
    assert counts[("true", "false")] == 1
    assert counts[("true", "true")] == 1
    assert counts[("false", "false")] == 1
    assert len(cells) == 4 + 1  # chat: a 2x2 matrix; json: one label seen


def test_calibration_and_thresholds_are_drawn_when_there_is_confidence() -> None:
    page = _page()
    plots = [attrs["data-plot"] for attrs in page.tagged("figure")]
    assert plots.count("calibration") == 1
    assert "cost" in plots
    bins = page.tagged("rect", **{"class": "bin"})
    assert sum(int(b["data-rows"] or 0) for b in bins) == 3
    thresholds = page.tables["thresholds"]
    assert thresholds[0] == ["confidence ≥", "rows kept", "accuracy"]
    assert thresholds[1] == ["0.0", "100.0%", "66.7%"]
    points = page.tagged("circle", **{"class": "point"})
    assert {p["data-system"] for p in points} == {"chat <1>", "json"}


def test_the_page_is_self_contained_and_carries_its_data() -> None:
    page = _page()
    assert page.external == []  # no script, style sheet or image from elsewhere
    assert page.tagged("script", type="application/json")
    assert [s["name"] for s in json.loads(page.data)] == ["chat <1>", "json"]
    assert not [attrs for tag, attrs in page.elements if tag == "script" and not attrs]


def test_a_name_cannot_break_out_of_the_data() -> None:
    summary = Evaluation("</script><script>alert(1)</script>").summary()
    text = html_report([summary])
    assert text.count("</script>") == 1
    page = _Page()
    page.feed(text)
    assert json.loads(page.data)[0]["name"] == summary["name"]
