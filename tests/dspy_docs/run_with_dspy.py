"""Run the corpus under real DSPy against the same loopback server (opt-in, not CI).

Usage, from the repository root, with a Python that has DSPy installed:

    PYTHONPATH=. /path/to/dspy-venv/bin/python -m tests.dspy_docs.run_with_dspy

Each program runs with ``import structio as dspy`` changed back to ``import dspy`` (and
``from structio import`` to ``from dspy import``), in its
own folder and home, and its outcome is printed beside what structio's test expects.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.dspy_docs.server import FormatServer

DOCS = Path(__file__).parent


def main() -> int:
    """Run every program under DSPy; print each outcome and the share that runs."""
    helpers = ("server", "run_with_dspy", "__init__")
    programs = sorted(p for p in DOCS.glob("*.py") if p.stem not in helpers)
    runs = 0
    with FormatServer() as server, tempfile.TemporaryDirectory() as tmp:
        for program in programs:
            folder = Path(tmp) / program.stem
            folder.mkdir()
            script = folder / "program.py"
            text = program.read_text().replace("import structio as dspy", "import dspy")
            script.write_text(text.replace("from structio import", "from dspy import"))
            env = {
                **os.environ,
                "OPENAI_API_BASE": server.base,
                "OPENAI_BASE_URL": server.base,
                "OPENAI_API_KEY": "sk-loopback",
                "HOME": str(folder),
                "DSPY_CACHEDIR": str(folder / "cache"),
                "PYTHONWARNINGS": "ignore",
            }
            env.pop("PYTHONPATH", None)
            result = subprocess.run(
                [sys.executable, str(script)],
                cwd=folder,
                env=env,
                input="What is the capital of France?\nfinish\n",
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            lines = result.stderr.strip().splitlines()
            runs += result.returncode == 0
            error = "" if result.returncode == 0 else (lines[-1] if lines else "")
            print(f"{program.stem:38} {result.returncode:3} {error[:150]}")
    print(f"DSPy runs {runs} of {len(programs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
