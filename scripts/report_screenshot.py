"""Render a sample evaluation report in headless Chromium and check it shows its plots.

Builds the report `structio eval` writes for two systems over 600 generated rows of the
quickstart's ``Triage`` (a label, a number, confidence, costs), opens it from disk in
``chromium --headless`` and takes a screenshot; the PNG is read back (a small reader here,
no imaging library) and must not be blank: enough non-white pixels and distinct colours,
the plots' blue, orange and green among them. Writes ``docs/images/evaluation_report.png``,
the picture in the README. Not run in CI (no Chromium there): run it after changing the
report, and commit the PNG.

Run: python scripts/report_screenshot.py [--chromium PATH] [--out PNG] [--page REPORT.html]

The README's picture is of a real report: ``--page`` takes one `structio eval --html`
wrote (see the README's Evaluation section for the commands that made it).
"""

from __future__ import annotations

import argparse
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

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


def read_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and the unfiltered rows (RGB or RGBA, 8 bits) of a PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, previous = (
        zlib.decompress(idat),
        width * channels,
        [],
        bytes(width * channels),
    )
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                near = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + near) & 255
        rows.append(bytes(line))
        previous = bytes(line)
    return width, height, [bytes(row) for row in rows]


def check_png(path: Path) -> dict[str, int]:
    """Counts that say the picture is not blank; raises `SystemExit` when it is."""
    width, height, rows = read_png(path.read_bytes())
    channels = len(rows[0]) // width
    colours: set[tuple[int, int, int]] = set()
    ink = 0
    for row in rows[::2]:
        for x in range(0, width, 2):
            pixel = (row[x * channels], row[x * channels + 1], row[x * channels + 2])
            colours.add((pixel[0] // 8, pixel[1] // 8, pixel[2] // 8))
            ink += min(pixel) < 235
    plot_colours = {(0x3B // 8, 0x6F // 8, 0xB6 // 8), (0xE0 // 8, 0x7B // 8, 0x39 // 8)}
    found = {"width": width, "height": height, "ink": ink, "colours": len(colours)}
    problems = []
    if ink < width * height // 4 // 20:
        problems.append("under 5% of the page is drawn on")
    if len(colours) < 40:
        problems.append(f"only {len(colours)} distinct colours")
    if not plot_colours <= colours:
        problems.append("the bars' blue and orange are not on the page")
    if problems:
        raise SystemExit(f"{path}: the page looks blank ({'; '.join(problems)}): {found}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
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
        subprocess.run(  # noqa: S603 - the browser the user runs, on a page written here
            [
                args.chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--screenshot={shot}",
                "--window-size=1180,1900",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        found = check_png(shot)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, args.out)
    print(f"{args.out}: {found}")


if __name__ == "__main__":
    main()
