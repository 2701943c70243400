"""Screenshots in headless Chromium, and a check that a screenshot shows content.

Shared by `scripts/report_screenshot.py` (the evaluation report) and
`scripts/docs_screenshot.py` (the documentation site). The PNG is read back by a small
reader here, no imaging library: a page that failed to render (blank, one colour, a bare
error line) is told apart from one that shows its content by counting the pixels drawn on,
the rows that hold any, and the distinct colours.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

# A pixel is ink when its darkest channel is below this: anything but white or near-white.
INK_BELOW = 235


def find_chromium() -> str:
    """The Chromium to run: on PATH, else Debian's `/usr/bin/chromium`, else the bare name."""
    return shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"


def screenshot(chromium: str, url: str, out: Path, width: int, height: int) -> None:
    """Render `url` in headless Chromium at `width` x `height` into the PNG `out`."""
    subprocess.run(  # noqa: S603 - the browser the user runs, on a page they chose
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            # Time for scripts and styles to settle before the picture is taken.
            "--virtual-time-budget=5000",
            f"--screenshot={out}",
            f"--window-size={width},{height}",
            url,
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )


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


def write_png(path: Path, rows: list[list[tuple[int, int, int]]]) -> None:
    """Write RGB pixels (rows of (r, g, b)) as a PNG: synthetic pictures for tests."""
    height, width = len(rows), len(rows[0])
    raw = b"".join(b"\x00" + bytes(c for pixel in row for c in pixel) for row in rows)

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body)
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


@dataclass(frozen=True)
class Survey:
    """What a picture holds, counted on every second pixel of every second row.

    Attributes:
        width: The picture's width in pixels.
        height: Its height.
        ink: Pixels counted that are drawn on (darker than near-white).
        sampled: Pixels counted in all.
        ink_rows: Rows counted that hold any ink.
        rows: Rows counted in all.
        colours: Distinct colours, each channel in steps of 8.
        dominant: The share of the pixels counted that have the most common colour.
        palette: The distinct colours themselves, as (r // 8, g // 8, b // 8).
    """

    width: int
    height: int
    ink: int
    sampled: int
    ink_rows: int
    rows: int
    colours: int
    dominant: float
    palette: frozenset[tuple[int, int, int]]

    def counts(self) -> dict[str, object]:
        """The figures as a dict to print (the palette left out)."""
        return {
            "width": self.width,
            "height": self.height,
            "ink": f"{self.ink / self.sampled:.1%}",
            "ink_rows": f"{self.ink_rows / self.rows:.1%}",
            "colours": self.colours,
            "dominant": f"{self.dominant:.1%}",
        }


def survey(path: Path) -> Survey:
    """Count what the PNG at `path` shows."""
    width, height, rows = read_png(path.read_bytes())
    channels = len(rows[0]) // width
    seen: Counter[tuple[int, int, int]] = Counter()
    ink = ink_rows = 0
    for row in rows[::2]:
        row_ink = 0
        for x in range(0, width, 2):
            pixel = (row[x * channels], row[x * channels + 1], row[x * channels + 2])
            seen[(pixel[0] // 8, pixel[1] // 8, pixel[2] // 8)] += 1
            row_ink += min(pixel) < INK_BELOW
        ink += row_ink
        ink_rows += row_ink > 0
    sampled = sum(seen.values())
    return Survey(
        width=width,
        height=height,
        ink=ink,
        sampled=sampled,
        ink_rows=ink_rows,
        rows=len(rows[::2]),
        colours=len(seen),
        dominant=seen.most_common(1)[0][1] / sampled,
        palette=frozenset(seen),
    )


def blank_reasons(
    found: Survey,
    *,
    min_ink: float = 0.02,
    min_ink_rows: float = 0.15,
    min_colours: int = 8,
    max_dominant: float = 0.98,
) -> list[str]:
    """Why the picture looks blank: empty when it shows content by every measure."""
    problems = []
    if found.ink < found.sampled * min_ink:
        problems.append(f"under {min_ink:.0%} of the picture is drawn on")
    if found.ink_rows < found.rows * min_ink_rows:
        problems.append(f"under {min_ink_rows:.0%} of its rows hold any ink")
    if found.colours < min_colours:
        problems.append(f"only {found.colours} distinct colours")
    if found.dominant > max_dominant:
        problems.append(f"one colour covers {found.dominant:.1%} of it")
    return problems


def quantized(rgb: int) -> tuple[int, int, int]:
    """A colour written 0xRRGGBB, in the palette's steps of 8."""
    return ((rgb >> 16) // 8, ((rgb >> 8) & 255) // 8, (rgb & 255) // 8)
