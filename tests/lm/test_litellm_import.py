"""litellm's own import-time warnings never break a later request (pytest -W error included)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# Under pytest's warnings-as-errors, litellm imported during one test (here by a model
# lookup) used to leave its response classes half-built, so that every request in a later
# test failed on a pydantic warning about litellm's own types.
TESTS = """
def test_lookup_first():
    from structio.lm._litellm import model_capabilities
    assert model_capabilities("gpt-4o-mini")["max_input_tokens"] == 128000


def test_then_a_response_object():
    from structio.lm._litellm import get_litellm
    get_litellm().types.utils.Message()
"""


def test_a_lookup_then_a_request_under_warnings_as_errors(tmp_path: Path) -> None:
    (tmp_path / "test_order.py").write_text(TESTS, encoding="utf-8")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-W", "error", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert "2 passed" in done.stdout
