"""Render a sample evaluation report in headless Chromium and check it shows its plots.

Builds the report `structio eval` writes for two systems over 600 generated rows of the
quickstart's ``Triage`` (a label, a number, confidence, costs), opens it from disk in
``chromium --headless`` and takes a screenshot; the PNG is read back (`scripts/screenshots.py`,
no imaging library) and must not be blank: enough non-white pixels and distinct colours,
the plots' blue and orange among them. Writes ``docs/images/evaluation_report.png``, the
picture on the documentation's Evaluation page (``docs/how-to/evaluation.md``). Not run in
CI (no Chromium there): run it after changing the report, and commit the PNG.

Run: python scripts/report_screenshot.py [--chromium PATH] [--out PNG] [--page REPORT.html]

That picture is of a real report: ``--page`` takes one `structio eval --html` wrote (see
that page for the commands that made it).
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from screenshots import blank_reasons, find_chromium, quantized, screenshot, survey  # noqa: E402

from structio.evaluate.evaluation import Evaluation  # noqa: E402 - after the path is set
from structio.evaluate.report import html_report  # noqa: E402

CATEGORIES = ("billing", "bug", "other")


def sample_summaries(rows: int = 600) -> list[dict[str, object]]:
    """Two systems over the same generated rows: a careful one and a cheap one."""
    rng = random.Random(11)  # noqa: S311 - sample data, not secrets
    systems = [("gpt-4o-mini, chat", 0.86, 0.00004), ("llama-3.2-3b, json", 0.68, 0.00001)]
    summaries = []
    for name, skill, cost in systems:
        types = {"category": Literal["billing", "bug", "other"], "urgency": int}
        result = Evaluation(name, types=types, tolerance=0)
        for line in range(rows):
            if rng.random() < (0.01 if skill > 0.8 else 0.04):
                result.fail(rng.choice(("ParseError", "ParseError", "BadRequestError")))
                continue
            category = CATEGORIES[line % 3]
            sure = min(1.0, max(0.0, rng.gauss(skill, 0.15)))
            right = rng.random() < sure * 0.9 + 0.05
            guess = category if right else rng.choice(CATEGORIES)
            urgency = line % 5 + 1
            result.add(
                {"category": category, "urgency": urgency},
                {"category": guess, "urgency": urgency if rng.random() < skill else urgency + 1},
                confidence={"category": sure},
                usage={"prompt_tokens": 180, "completion_tokens": 12},
                cost=cost,
                requests=1,
            )
        summaries.append(result.summary())
    return summaries


def check_png(path: Path) -> dict[str, object]:
    """Counts that say the picture is not blank; raises `SystemExit` when it is."""
    found = survey(path)
    problems = blank_reasons(found, min_ink=0.05, min_ink_rows=0.0, min_colours=40, max_dominant=1)
    if not {quantized(0x3B6FB6), quantized(0xE07B39)} <= found.palette:
        problems.append("the bars' blue and orange are not on the page")
    if problems:
        raise SystemExit(f"{path}: the page looks blank ({'; '.join(problems)}): {found.counts()}")
    return found.counts()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chromium", default=find_chromium())
    parser.add_argument("--out", type=Path, default=ROOT / "docs/images/evaluation_report.png")
    parser.add_argument(
        "--page",
        type=Path,
        help="a report `structio eval --html` wrote (of real predictions) instead of the sample",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        if args.page is not None:
            shutil.copyfile(args.page, page)
        else:
            page.write_text(html_report(sample_summaries(), title="Evaluation of tickets.jsonl"))
        shot = Path(tmp) / "shot.png"
        screenshot(args.chromium, page.as_uri(), shot, 1180, 1900)
        found = check_png(shot)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, args.out)
    print(f"{args.out}: {found}")


if __name__ == "__main__":
    main()
