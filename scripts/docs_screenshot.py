"""Render the documentation site in headless Chromium and check each page shows content.

Builds the site (``mkdocs build --strict``, as `scripts/docs` does) into a temporary folder,
or takes one already built (``--site``), serves it on 127.0.0.1 on a free port, and takes a
screenshot of the home page and of one API reference page. Each PNG is read back
(`scripts/screenshots.py`) and must show content: enough of it drawn on, enough rows with
ink, several colours, no one colour covering it, and the theme's header colour present (the
stylesheet loaded, not bare HTML). Prints what each picture holds and exits non-zero if one
looks blank. Not run in CI (no Chromium there); the checker is tested on synthetic pictures.

Run: python scripts/docs_screenshot.py [--site DIR] [--out-dir DIR] [--chromium PATH]
"""

from __future__ import annotations

import argparse
import functools
import os
import subprocess
import sys
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from screenshots import blank_reasons, find_chromium, quantized, screenshot, survey

ROOT = Path(__file__).resolve().parents[1]
# The pages rendered: the home page and the API page of `Predict`, by their site paths.
PAGES = {"docs_home.png": "", "docs_api_predict.png": "reference/predict/"}
# Material's default primary colour (indigo), the header's: present only when styled.
HEADER = quantized(0x4051B5)


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves files without a log line per request."""

    def log_message(self, format: str, *args: object) -> None:
        """Say nothing."""


def build(site: Path) -> None:
    """Build the site into `site`, with --strict; exits with mkdocs' output if it fails."""
    done = subprocess.run(  # noqa: S603 - this interpreter, on this repository's config
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"mkdocs build failed:\n{done.stderr}")


def check(path: Path) -> dict[str, object]:
    """What the picture holds; raises `SystemExit` when it looks blank or unstyled."""
    found = survey(path)
    problems = blank_reasons(found)
    if HEADER not in found.palette:
        problems.append("the theme's header colour is missing (no stylesheet?)")
    if problems:
        raise SystemExit(f"{path}: the page looks blank ({'; '.join(problems)}): {found.counts()}")
    return found.counts()


def shoot(site: Path, out_dir: Path, chromium: str) -> None:
    """Serve `site` on loopback and screenshot each page of `PAGES` into `out_dir`."""
    handler = functools.partial(QuietHandler, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, page in PAGES.items():
            url = f"http://127.0.0.1:{server.server_port}/{page}"
            out = out_dir / name
            screenshot(chromium, url, out, 1280, 1000)
            counts = check(out)
            print(f"{out} ({url}, {out.stat().st_size:,} bytes): {counts}")
    finally:
        server.shutdown()
        server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a site already built (default: build one)")
    parser.add_argument("--out-dir", type=Path, default=ROOT / "docs" / "images")
    parser.add_argument("--chromium", default=find_chromium())
    args = parser.parse_args()
    if args.site is not None:
        shoot(args.site, args.out_dir, args.chromium)
        return
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp))
        shoot(Path(tmp), args.out_dir, args.chromium)


if __name__ == "__main__":
    main()
