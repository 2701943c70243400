"""Programs from DSPy 3.4's documentation, with only the import changed, run on structio.

Each program in `tests/dspy_docs/` runs in its own process, in an empty folder and home
(no response cache carried between programs), against a loopback OpenAI-compatible
server that answers in the format asked (`tests.dspy_docs.server`); the docs'
``dspy.LM("openai/gpt-4o-mini")`` reaches it through ``OPENAI_API_BASE``, which structio's
LM honours as litellm and the OpenAI client do. A program expected to run must exit 0; a
refused one must stop at once with an error that names structio's way.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.dspy_docs.server import FormatServer

DOCS = Path(__file__).parent / "dspy_docs"
SRC = Path(__file__).parents[1] / "src"

# Programs DSPy's meaning of which structio does not have: each must stop at once with an
# error that names structio's way (the error's start, a phrase of the way).
REFUSED = {
    # save_program=True pickles the program's code
    "saving_whole_program": ("structio.UsageError: structio", "predict.save(path)"),
    "streaming_react": ("structio.UsageError: structio has no ReAct", "ToolCalls"),
    "tools_react": ("structio.UsageError: structio has no ReAct", "ToolCalls"),
    "api_refine": ("structio.UsageError: structio has no Refine", "BestOfN"),
    "cheatsheet_refine": ("structio.UsageError: structio has no Refine", "BestOfN"),
    "api_code_generation": ("AttributeError: structio has no 'Code'", "str output"),
}

# The folder's modules that are not programs: the server, the DSPy runner, the package.
HELPERS = ("server", "run_with_dspy", "__init__")
PROGRAMS = sorted(p.stem for p in DOCS.glob("*.py") if p.stem not in HELPERS)
# The share of the corpus that runs unchanged: the goal of issue 36.
TARGET_SHARE = 0.9


def run_program(name: str, base: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    """One program in its own process, folder and home, against the server at ``base``."""
    folder = tmp / name
    folder.mkdir()
    env = {
        **os.environ,
        "OPENAI_API_BASE": base,
        "OPENAI_API_KEY": "sk-loopback",
        "HOME": str(folder),
        "PYTHONPATH": str(SRC),
        "PYTHONWARNINGS": "ignore",
    }
    env.pop("OPENAI_BASE_URL", None)
    return subprocess.run(
        [sys.executable, str(DOCS / f"{name}.py")],
        cwd=folder,
        env=env,
        input="What is the capital of France?\nfinish\n",  # the chat loop's two turns
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[int, str]]]:
    """Every program run once: its exit status and the last line of its stderr."""
    tmp = tmp_path_factory.mktemp("dspy_docs")
    with FormatServer() as server, ThreadPoolExecutor(max_workers=2) as pool:
        done = pool.map(lambda name: run_program(name, server.base, tmp), PROGRAMS)
        results = {}
        for name, result in zip(PROGRAMS, done, strict=True):
            lines = result.stderr.strip().splitlines()
            results[name] = (result.returncode, lines[-1] if lines else "")
        yield results


def test_the_corpus_is_large_enough() -> None:
    assert len(PROGRAMS) >= 30
    for name in PROGRAMS:
        head = (DOCS / f"{name}.py").read_text().split("\n\n", 1)[0]
        assert "docs/docs/" in head, f"{name} does not name its source page"
        assert "import structio as dspy" in (DOCS / f"{name}.py").read_text()


@pytest.mark.parametrize("name", [p for p in PROGRAMS if p not in REFUSED])
def test_program_runs(name: str, outcomes: dict[str, tuple[int, str]]) -> None:
    code, error = outcomes[name]
    assert code == 0, f"{name}: {error}"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_program_is_refused_with_structio_way(
    name: str, outcomes: dict[str, tuple[int, str]]
) -> None:
    code, error = outcomes[name]
    start, way = REFUSED[name]
    assert code != 0
    assert error.startswith(start), error
    assert way in error


def test_share_that_runs(outcomes: dict[str, tuple[int, str]]) -> None:
    runs = {name for name, (code, _) in outcomes.items() if code == 0}
    share = len(runs) / len(PROGRAMS)
    print(f"runs unchanged: {len(runs)}/{len(PROGRAMS)} ({share:.1%})")
    assert share >= TARGET_SHARE
    assert not runs & set(REFUSED)
