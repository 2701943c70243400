"""litellm's own warnings never reach the caller: not on stderr, not as errors under -W error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

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


# A fresh interpreter (litellm's lazy imports happen once per process) calls a model through
# the litellm transport in every way, then warns once itself: that warning, and only it,
# must come out. litellm 1.108+ with pydantic 2.12+ printed 7 "ReadOnly qualifier" warnings
# (14 lines) on stderr at the first completion, and -W error made the call fail.
CALLS = """
import asyncio, warnings
import structio as sio
from tests.wire.server import OpenAIServer, Reply

server = OpenAIServer().start()
server.default = Reply(content="[[ ## answer ## ]]\\nhello")
lm = sio.LM("openai/test", api_base=server.base_url, api_key="k", cache=False,
            transport="litellm")
messages = [{"role": "user", "content": "hi"}]


async def both():
    text = (await lm.acall(messages)).text
    async for item in lm.astream(messages):
        last = item
    return text, last.text


texts = [lm(messages).text, list(lm.stream(messages))[-1].text, *asyncio.run(both())]
assert texts == ["[[ ## answer ## ]]\\nhello"] * 4, texts
assert sio.Predict("question -> answer", lm=lm)(question="?").answer == "hello"
assert len(server.requests) == 5
server.stop()
print("calls made")
warnings.warn("the caller's own warning", UserWarning, stacklevel=1)
"""


@pytest.mark.parametrize("option", ["always", "error"])
def test_a_litellm_call_writes_nothing_on_stderr_and_raises_no_warning(
    tmp_path: Path, option: str
) -> None:
    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, "-W", option, "-c", CALLS],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env=env,
    )
    assert "calls made" in done.stdout, done.stderr[-3000:]
    # Only the caller's own warning comes out: shown under -W always, raised under -W error.
    lines = done.stderr.strip().splitlines()
    if option == "always":
        assert done.returncode == 0, done.stderr[-3000:]
        assert len(lines) == 2, done.stderr
        assert lines[0].endswith("UserWarning: the caller's own warning")
    else:
        assert done.returncode == 1
        assert lines[-1] == "UserWarning: the caller's own warning", done.stderr[-3000:]
        assert "Traceback" in lines[0]
        assert not any("litellm" in line for line in lines), done.stderr
