"""The documentation site builds with ``mkdocs build --strict`` and holds what it should.

One build per test session (a few seconds: the API reference reads every public module):
every page under docs/ is in the site, the API reference documents every name of
`structio.__all__`, and nothing in a page fetches from another host. Two small projects
built in a temporary folder show that a broken link or a missing API symbol fails the build.
The Python blocks of the pages are run by tests/test_readme.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import structio

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of a config into ``site``, as `scripts/docs` builds it."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        cwd=config.parent,
        env=env,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole site, built once for this file's tests."""
    out = tmp_path_factory.mktemp("site")
    done = mkdocs_build(ROOT / "mkdocs.yml", out)
    assert done.returncode == 0, done.stderr
    return out


def built(site: Path, page: Path) -> Path:
    """Where mkdocs writes a page (directory URLs: `a/b.md` is `a/b/index.html`)."""
    relative = page.relative_to(DOCS).with_suffix("")
    if relative.name == "index":
        return site / relative.parent / "index.html"
    return site / relative / "index.html"


def test_every_page_is_in_the_site(site: Path) -> None:
    pages = sorted(DOCS.rglob("*.md"))
    assert len(pages) >= 30
    missing = [str(p.relative_to(DOCS)) for p in pages if not built(site, p).is_file()]
    assert not missing, f"pages not built: {missing}"
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "Structured input and output for language models" in home


def test_the_api_reference_documents_every_public_name(site: Path) -> None:
    ids: set[str] = set()
    for page in (site / "reference").rglob("index.html"):
        ids |= set(re.findall(r'id="(structio\.[\w.]+)"', page.read_text(encoding="utf-8")))
    names = {identifier.rsplit(".", 1)[-1] for identifier in ids}
    undocumented = sorted(set(structio.__all__) - names)
    assert not undocumented, f"names of structio.__all__ not in the API reference: {undocumented}"
    predict = (site / "reference" / "predict" / "index.html").read_text(encoding="utf-8")
    assert 'id="structio.Predict"' in predict
    assert 'id="structio.Predict.batch"' in predict  # members, from the docstrings
    adapters = (site / "reference" / "adapters" / "index.html").read_text(encoding="utf-8")
    assert 'id="structio.ChatAdapter"' in adapters


def test_nothing_is_fetched_from_another_host(site: Path) -> None:
    # Assets a page loads (stylesheets, scripts, fonts); links a reader follows are fine.
    loads = re.compile(r'<(?:link|script)[^>]+(?:href|src)="(https?://[^"]+)"')
    for page in site.rglob("*.html"):
        fetched = loads.findall(page.read_text(encoding="utf-8"))
        assert not fetched, f"{page.relative_to(site)} loads {fetched}"


def test_the_contributing_page_states_the_readme_figures() -> None:
    def measured(text: str) -> str:
        return text[text.index("Measured on a 2-core machine") :].split("\n\n", 1)[0].strip()

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    page = (DOCS / "how-to" / "contributing.md").read_text(encoding="utf-8")
    assert measured(page) == measured(readme)


def test_the_readme_links_lead_to_files() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [target for target in targets if "://" not in target]
    assert len(local) >= 20  # a link to each page
    missing = [target for target in local if not (ROOT / target).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


SMALL_CONFIG = """\
site_name: t
strict: true
validation: {unrecognized_links: warn, anchors: warn}
plugins:
  - mkdocstrings:
      handlers: {python: {paths: [%s]}}
"""


@pytest.mark.parametrize(
    ("page", "complaints"),
    [
        # Both warnings in one build (mkdocs reports every warning, then aborts).
        ("See [the guide](guide.md) and [the top](#no-such-heading).", "guide.md no-such-heading"),
        ("::: structio.NoSuchName", "structio.NoSuchName"),
    ],
    ids=["link-and-anchor", "api-symbol"],
)
def test_a_broken_page_fails_the_strict_build(tmp_path: Path, page: str, complaints: str) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text(f"# Home\n\n{page}\n", encoding="utf-8")
    config = tmp_path / "mkdocs.yml"
    config.write_text(SMALL_CONFIG % (ROOT / "src").as_posix(), encoding="utf-8")
    done = mkdocs_build(config, tmp_path / "site")
    assert done.returncode != 0
    for complaint in complaints.split():
        assert complaint in done.stderr


def _table_after(text: str, header: str) -> list[str]:
    """The rows of the Markdown table that starts with ``header``."""
    start = text.index(header)
    end = text.find("\n\n", start)
    return text[start : len(text) if end < 0 else end].splitlines()


def test_the_readme_and_the_tutorial_list_the_same_dspy_differences() -> None:
    # One table in two places (the README's section, the docs' tutorial): never two stories.
    header = "| DSPy 3.4 | structio | note |"
    readme = _table_after((ROOT / "README.md").read_text(encoding="utf-8"), header)
    page = ROOT / "docs" / "tutorials" / "coming-from-dspy.md"
    tutorial = _table_after(page.read_text(encoding="utf-8"), header)
    assert len(readme) > 20
    assert readme == tutorial
