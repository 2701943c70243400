"""Doubling a degenerate completion at most about doubles the work of reading it.

Every adapter's `parse` and its stream reader read each generator of degenerate text in
`_linear_work.py` at two sizes, one twice the other, and the work is counted, not timed:
the Python lines run and the characters each regular expression is handed (see that
module). A step that rereads the text once per line, per marker or per character grows
four-fold and fails here. Each group of generators is counted in a fresh interpreter, so
what other tests left in caches, loggers or monitoring tools cannot change a count.

What a count cannot see is the backtracking inside one regular expression call; the
shapes that once did that (a fence, a newline, then spaces) are also parsed at a megabyte
under a time limit in `test_parse_limits.py`, and `test_a_fence_then_spaces_is_read_in_one_pass`
checks the fence reader directly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from structio._util import scan
from tests.reliability._linear_work import GROUPS, GROWTH

WORKER = Path(__file__).with_name("_linear_work.py")


def _counted(argument: str) -> object:
    done = subprocess.run(
        [sys.executable, str(WORKER), argument],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("group", range(len(GROUPS)), ids=[name for name, _ in GROUPS])
def test_twice_the_text_costs_at_most_about_twice_the_work(group: int) -> None:
    assert _counted(str(group)) == {}


def test_the_counter_sees_a_quadratic_step() -> None:
    # A reader that searches the rest of the text once per 50 characters must fail the check.
    counts = _counted("selftest")
    assert isinstance(counts, list)
    before, after = counts
    assert after > GROWTH * before


def test_a_fence_then_spaces_is_read_in_one_pass() -> None:
    # `\n?[ \t]*```\s*$`, searched from every position, read a run of n spaces n times
    # (4.1 s at 100 KB, 36 s at 300 KB); the closing fence is now found from the end.
    assert scan.strip_fence("```\n" + " " * 10 + "x") == " " * 10 + "x"
    assert scan.strip_fence("```json\n{}\n  \t```  \n") == "{}"
    assert scan.strip_fence("```\n{}```") == "{}"
    assert scan.strip_fence("```\n\n```") == ""
    assert scan.strip_fence("```\n```") == ""
    assert scan.strip_fence("```\nx\n\n```") == "x\n"
    assert scan.strip_fence("```\nx``````") == "x```"
    assert "_FENCE_CLOSE" not in vars(scan)
