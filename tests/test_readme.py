"""Every Python block of README.md and of each page under docs/ runs as written, offline.

Each page is one session (a test of its own): its blocks run in the order they appear (a
later block may use what an earlier one defined, as a reader going down the page would), in
a temporary working folder with ``STRUCTIO_HOME`` there too, so that what they save stays in
the test's folder. A block that needs what no test has (an API key, a provider, Ray) is
preceded by a comment that says why it is not run::

    <!-- not run: needs an API key -->

Such a block must still compile, and the list stays short (`MAX_NOT_RUN`, over all pages
together): a block that can show its point with ``sio.FakeLM`` does.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# Every Markdown page whose blocks run: the README, then the documentation site's pages.
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]

# The most blocks all pages together may leave unrun; raise it only with a reason. The
# README had 5 (an API key, a local server, worker processes, a 24-hour batch, Ray) before
# its sections moved to docs/, where they still are.
MAX_NOT_RUN = 5

_FENCE = re.compile(r"^```(\w*)\s*$")
_NOT_RUN = re.compile(r"^<!--\s*not run:(.*?)-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced Python block: its first code line in the file, its code, why not run."""

    line: int
    code: str
    not_run: str | None = None


class ReadmeError(Exception):
    """A README block is malformed or failed."""


def python_blocks(text: str) -> list[Block]:
    """The ```python blocks of a Markdown text, each with the reason it is not run, if any."""
    lines = text.splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if fence is None:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end == len(lines):
            raise ReadmeError(f"line {index + 1}: a code block that is never closed")
        if fence.group(1) == "python":
            previous = next((s for s in reversed(lines[:index]) if s.strip()), "")
            marker = _NOT_RUN.match(previous.strip())
            reason = marker.group(1).strip() if marker else None
            if marker and not reason:
                raise ReadmeError(
                    f"line {index}: a `not run` comment must say why: "
                    "<!-- not run: needs an API key -->"
                )
            code = "\n".join(lines[index + 1 : end])
            blocks.append(Block(index + 2, code, reason))
        index = end + 1
    return blocks


def run_blocks(blocks: list[Block], filename: str = "README.md") -> dict[str, object]:
    """Run the blocks in order in one namespace; the first that raises fails, named by line."""
    namespace: dict[str, object] = {"__name__": "readme"}
    for block in blocks:
        # Blank lines before the code give tracebacks the README's own line numbers.
        source = "\n" * (block.line - 1) + block.code
        try:
            compiled = compile(source, filename, "exec")
        except SyntaxError as error:
            raise ReadmeError(f"{filename} line {error.lineno}: {error.msg}") from error
        if block.not_run is not None:
            continue
        try:
            exec(compiled, namespace)  # noqa: S102 - the README's own code, as a reader runs it
        except Exception as error:
            raise ReadmeError(
                f"the block at {filename} line {block.line} raised {type(error).__name__}: {error}"
            ) from error
    return namespace


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder and a STRUCTIO_HOME of the test's own."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STRUCTIO_HOME", str(tmp_path / "home"))
    return tmp_path


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


@pytest.mark.usefixtures("session")
@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_python_block_of_the_page_runs(page: Path) -> None:
    run_blocks(python_blocks(page.read_text(encoding="utf-8")), _name(page))


def test_the_pages_were_found_with_their_blocks() -> None:
    names = {_name(page) for page in PAGES}
    assert {"README.md", "docs/index.md", "docs/tutorials/first-call.md"} <= names
    assert len(names) >= 30  # tutorials, how-to pages and the API reference
    counts = {_name(page): len(python_blocks(page.read_text(encoding="utf-8"))) for page in PAGES}
    assert counts["README.md"] >= 2
    assert sum(counts.values()) >= 40  # the extraction found the blocks


def test_few_blocks_are_left_unrun() -> None:
    not_run = [
        f"{_name(page)} line {block.line} ({block.not_run})"
        for page in PAGES
        for block in python_blocks(page.read_text(encoding="utf-8"))
        if block.not_run
    ]
    assert len(not_run) <= MAX_NOT_RUN, f"{len(not_run)} blocks are not run: {', '.join(not_run)}"


SAMPLE = textwrap.dedent(
    """\
    # Title

    ```python
    x = 1
    ```

    <!-- not run: needs an API key -->

    ```python
    raise RuntimeError("never run")
    ```

    ```bash
    echo not python
    ```

    ```python
    y = x + 1
    assert y == 2
    ```
    """
)


def test_blocks_run_in_order_and_marked_ones_are_skipped() -> None:
    blocks = python_blocks(SAMPLE)
    assert [(b.line, b.not_run) for b in blocks] == [
        (4, None),
        (10, "needs an API key"),
        (18, None),
    ]
    assert run_blocks(blocks)["y"] == 2


def test_a_block_that_raises_fails_with_its_line() -> None:
    text = SAMPLE.replace("y = x + 1", "y = x + undefined")
    with pytest.raises(ReadmeError, match=r"block at README.md line 18 raised NameError"):
        run_blocks(python_blocks(text))
    literal_ellipsis = "```python\nsum([1, ...])\n```\n"
    with pytest.raises(ReadmeError, match="raised TypeError"):
        run_blocks(python_blocks(literal_ellipsis))


def test_a_block_that_does_not_compile_fails_even_when_not_run() -> None:
    text = SAMPLE.replace('raise RuntimeError("never run")', "await thing()")
    with pytest.raises(ReadmeError, match=r"README\.md line 10: 'await' outside function"):
        run_blocks(python_blocks(text))


def test_a_not_run_comment_must_say_why() -> None:
    with pytest.raises(ReadmeError, match="must say why"):
        python_blocks(SAMPLE.replace("not run: needs an API key", "not run:"))
