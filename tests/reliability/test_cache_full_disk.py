"""A cache that cannot write never fails a call: the answer comes, the failure is logged once."""

from __future__ import annotations

import json
import logging
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from structio.lm import cache as cache_module
from structio.lm.cache import ResponseCache
from structio.lm.mock import MockTransport
from tests.reliability.file_size_limit import needs_rlimit, run_limited


def test_a_full_disk_logs_once_answers_every_call_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    requests: list[str] = []
    lm = sio.LM(
        "openai/test",
        transport=MockTransport(lambda r: requests.append(r.text) or f"re {r.text}"),  # type: ignore[func-returns-value]
        cache=ResponseCache(tmp_path / "c"),
    )
    lm([{"role": "user", "content": "before"}])  # the cache opens and works
    full = True
    patiently = cache_module._patiently

    def writes_fail(operation: Callable[[], Any]) -> Any:
        if full:
            raise sqlite3.OperationalError("database or disk is full")
        return patiently(operation)

    monkeypatch.setattr(cache_module, "_patiently", writes_fail)
    caplog.set_level(logging.DEBUG, logger="structio")
    answers = [lm([{"role": "user", "content": f"q{i}"}]).text for i in range(5)]
    assert answers == [f"re q{i}" for i in range(5)]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "could not" in warnings[0].getMessage()
    assert "delete" not in warnings[0].getMessage()  # a full disk is not a damaged file
    full = False
    lm([{"role": "user", "content": "after"}])
    assert any("written to again" in r.getMessage() for r in caplog.records)
    fresh = ResponseCache(tmp_path / "c")
    key = lm._prepare([{"role": "user", "content": "after"}], {}).key
    assert fresh.get(key) is not None  # caching resumed on disk
    fresh.close()


CHILD = r"""
import json, logging, os, sys
import structio as sio
from structio.lm.cache import ResponseCache, DATABASE_NAME
from structio.lm.mock import MockTransport

records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append((record.levelname, record.getMessage()))
logging.getLogger("structio").addHandler(Keep())
logging.getLogger("structio").setLevel(logging.DEBUG)

directory = sys.argv[1]
paid = []
def handler(request):
    paid.append(request.text)
    return request.text.upper() * 200  # 1 KB or more per answer
lm = sio.LM("openai/test", transport=MockTransport(handler), cache=ResponseCache(directory))
lm([{"role": "user", "content": "first"}])
sizes = [os.path.getsize(os.path.join(directory, n)) for n in os.listdir(directory)]
limit_file_size(max(sizes))  # no file may grow now
answers = [lm([{"role": "user", "content": f"q{i}"}]).text for i in range(20)]
warned = sum(level == "WARNING" for level, _ in records)
lift_file_size_limit()  # space is free again
lm([{"role": "user", "content": "later"}])
print(json.dumps({"answers": answers, "paid": len(paid), "warned": warned, "records": records}))
"""

READ_BACK = r"""
import json, sys
import structio as sio
from structio.lm.cache import ResponseCache
from structio.lm.mock import MockTransport
paid = []
lm = sio.LM("openai/test", transport=MockTransport(lambda r: paid.append(1) or "new"),
            cache=ResponseCache(sys.argv[1]))
texts = [lm([{"role": "user", "content": t}]).text for t in ("first", "later")]
print(json.dumps({"texts": texts, "paid": len(paid)}))
"""


@needs_rlimit
def test_a_file_size_limit_never_fails_a_call(tmp_path: Path) -> None:
    directory = str(tmp_path / "c")
    result = run_limited(CHILD, directory)
    assert result["answers"] == [f"Q{i}" * 200 for i in range(20)]
    assert result["paid"] == 22
    assert result["warned"] == 1, result["records"]
    assert any("written to again" in message for _, message in result["records"])
    back = subprocess.run(
        [sys.executable, "-c", READ_BACK, directory], capture_output=True, text=True, check=False
    )
    assert back.returncode == 0, back.stderr
    # Both answers written while there was room are on disk: nothing new paid for.
    assert json.loads(back.stdout) == {"texts": ["FIRST" * 200, "LATER" * 200], "paid": 0}
