"""The screenshot checker of scripts/screenshots.py, on synthetic pictures.

Chromium itself is not run here (CI has none): `scripts/docs_screenshot.py` and
`scripts/report_screenshot.py` run it by hand. What they decide from a picture is tested:
a blank, a one-colour or an unstyled page fails, a page with text and a styled header passes.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def load(name: str) -> ModuleType:
    """A script's module, under the name the other scripts import it by."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


screenshots = load("screenshots")
docs_screenshot = load("docs_screenshot")  # imports `screenshots`, loaded above

Pixel = tuple[int, int, int]
WHITE: Pixel = (255, 255, 255)
INDIGO: Pixel = (0x40, 0x51, 0xB5)


def page(
    width: int = 80, height: int = 60, *, header: bool = True, text: bool = True
) -> list[list[Pixel]]:
    """A page: a header bar, then lines of dark 'text' in a few colours on white."""
    rng = random.Random(3)  # noqa: S311 - a test picture, not a secret
    rows: list[list[Pixel]] = []
    for y in range(height):
        if header and y < 8:
            rows.append([INDIGO] * width)
        elif text and y % 4 in (0, 1):
            line = [WHITE] * width
            for x in range(5, width - 10):
                if rng.random() < 0.5:
                    line[x] = (rng.randrange(120), rng.randrange(120), rng.randrange(200))
            rows.append(line)
        else:
            rows.append([WHITE] * width)
    return rows


def test_a_page_with_text_and_its_header_passes(tmp_path: Path) -> None:
    path = tmp_path / "page.png"
    screenshots.write_png(path, page())
    found = screenshots.survey(path)
    assert screenshots.blank_reasons(found) == []
    counts = docs_screenshot.check(path)
    assert counts["width"] == 80
    assert counts["height"] == 60


def test_a_blank_page_fails_for_each_reason(tmp_path: Path) -> None:
    path = tmp_path / "blank.png"
    screenshots.write_png(path, page(header=False, text=False))
    reasons = screenshots.blank_reasons(screenshots.survey(path))
    assert len(reasons) == 4
    assert "one colour covers 100.0% of it" in reasons
    with pytest.raises(SystemExit, match="looks blank"):
        docs_screenshot.check(path)


def test_an_unstyled_page_fails(tmp_path: Path) -> None:
    path = tmp_path / "bare.png"
    screenshots.write_png(path, page(header=False))
    assert screenshots.blank_reasons(screenshots.survey(path)) == []  # text is there...
    with pytest.raises(SystemExit, match="header colour is missing"):
        docs_screenshot.check(path)  # ...but no stylesheet


def test_a_page_with_only_a_header_fails(tmp_path: Path) -> None:
    path = tmp_path / "header.png"
    screenshots.write_png(path, page(text=False))
    reasons = screenshots.blank_reasons(screenshots.survey(path))
    assert any("colours" in reason for reason in reasons)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, 12).flatmap(
        lambda width: st.lists(
            st.lists(st.tuples(*[st.integers(0, 255)] * 3), min_size=width, max_size=width),
            min_size=1,
            max_size=8,
        )
    )
)
def test_png_pixels_read_back_as_written(rows: list[list[Pixel]]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "p.png"
        screenshots.write_png(path, rows)
        width, height, raw = screenshots.read_png(path.read_bytes())
    assert (width, height) == (len(rows[0]), len(rows))
    assert [list(zip(r[0::3], r[1::3], r[2::3], strict=True)) for r in raw] == rows
