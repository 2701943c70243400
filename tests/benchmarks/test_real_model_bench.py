"""`benchmarks/real_model.py` against a loopback server that stands in for the real model.

The benchmark's own machinery: the proxy that counts requests and keeps answers by request,
a cell per adapter and ``constrain=``, the resume from its results, and both tables. The
real model itself is `tests/test_real_model.py`'s (opt-in).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.wire.server import OpenAIServer, Reply

ROOT = Path(__file__).resolve().parents[2]


def _run(server: OpenAIServer, state: Path, *args: str) -> str:
    pid = state / "server.pid"
    pid.write_text(str(os.getpid()))  # the CPU read is this process's: any live pid will do
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "real_model.py"),
            "--base",
            server.base_url,
            "--pid-file",
            str(pid),
            *args,
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "STRUCTIO_REALMODEL_STATE": str(state), "PYTHONPATH": str(ROOT / "src")},
    )
    return result.stdout


def test_the_benchmark_counts_scores_and_resumes(server: OpenAIServer, tmp_path: Path) -> None:
    # Right, then wrong; then a note copied after the value, read as the value before it.
    server.reply(
        Reply('{"sentiment": "negative"}'),
        Reply('{"sentiment": "negative"}'),
        Reply(
            '{"sentiment": "negative  # note: the value you produce must exactly match '
            '(no extra characters) one of: positive; negative"}'
        ),
    )
    server.default = Reply("no JSON here")
    out = _run(server, tmp_path, "--cells", "json,json+g", "--signatures", "label", "--limit", "2")
    assert "| label | json | 2 | 2 | 1 | 0 | 1 | 1.00 |" in out
    assert "| label | json+g | 2 | 1 | 1 | 1 | 0 | 1.00 |" in out
    assert "| json | 1/2 (0) | - | - | 1.00 |" in out
    constrained = [r.body for r in server.requests if "response_format" in r.body]
    assert len(constrained) == 2
    assert constrained[0]["response_format"]["type"] == "json_object"  # llama.cpp's form
    assert "schema" in constrained[0]["response_format"]
    asked = len(server.requests)
    # A second run resumes: every answer is kept, nothing is asked again.
    again = _run(
        server, tmp_path, "--cells", "json,json+g", "--signatures", "label", "--limit", "2"
    )
    assert len(server.requests) == asked
    assert "| label | json | 2 | 2 | 1 | 0 | 1 | 1.00 |" in again
    kept = [json.loads(line) for line in (tmp_path / "answers.jsonl").read_text().splitlines()]
    assert len(kept) == asked
