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
    assert model_capabilities("gpt-4o-mini").context_window == 128000


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


@pytest.mark.parametrize("option", ["default", "error"])
def test_a_litellm_call_writes_nothing_on_stderr_and_raises_no_warning(
    tmp_path: Path, option: str
) -> None:
    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    env.pop("PYTHONWARNINGS", None)
    # "default": the filters a user's program has; "error": every warning raised.
    flags = [] if option == "default" else ["-W", "error"]
    done = subprocess.run(
        [sys.executable, *flags, "-c", CALLS],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env=env,
    )
    assert "calls made" in done.stdout, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    if option == "default":
        # Only the caller's own warning comes out.
        assert done.returncode == 0, done.stderr[-3000:]
        assert lines[0].endswith("UserWarning: the caller's own warning"), done.stderr
        # Then the line of source that warned, where Python can show it (3.13 does for -c).
        assert all("warnings.warn(" in line for line in lines[1:]), done.stderr
        assert len(lines) <= 2, done.stderr
    else:
        # Every call went through; then the caller's own warning was raised. (litellm up to
        # 1.106 leaves an event loop unclosed, which Python reports at exit as an "ignored"
        # ResourceWarning that no filter can tell from another's.)
        assert done.returncode == 1
        assert "UserWarning: the caller's own warning" in lines, done.stderr[-3000:]
        assert not any("litellm" in line for line in lines), done.stderr
