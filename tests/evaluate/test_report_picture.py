"""The documentation's picture of a report: committed, a whole PNG, of a plausible size.

`scripts/report_screenshot.py` renders it in headless Chromium (not in CI: no Chromium
there) and checks the page shows its plots; this checks what was committed.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PICTURE = ROOT / "docs" / "images" / "evaluation_report.png"


def test_the_committed_picture_is_a_whole_png_of_a_page() -> None:
    data = PICTURE.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks = []
    pos = 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"chunk {kind!r} is damaged"
        chunks.append((kind, body))
        pos += 12 + length
    assert chunks[0][0] == b"IHDR"
    assert chunks[-1][0] == b"IEND"
    width, height = struct.unpack(">II", chunks[0][1][:8])
    assert 800 <= width <= 4000
    assert 800 <= height <= 6000
    assert 20_000 < len(data) < 2_000_000  # a page with plots, not a blank one


def test_the_evaluation_page_shows_it() -> None:
    page = (ROOT / "docs" / "how-to" / "evaluation.md").read_text(encoding="utf-8")
    assert "](../images/evaluation_report.png)" in page
