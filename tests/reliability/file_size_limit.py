"""A full disk without root: a child Python process under a file size limit (RLIMIT_FSIZE).

A small file system cannot be mounted without root; a limit on the size of any file the
process writes fails the write that would pass it, as a full disk does (``EFBIG`` instead
of ``ENOSPC``; structio treats both alike). The limit holds for the whole process, so it is
set in a child: the test runs `run_limited` with code that calls `limit_file_size` and
`lift_file_size_limit` (defined by `PRELUDE`) and prints its findings as JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

needs_rlimit = pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")

PRELUDE = r'''
import resource, signal
# A write past the limit fails with EFBIG (by default the signal would kill the process).
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
_SOFT, _HARD = resource.getrlimit(resource.RLIMIT_FSIZE)


def limit_file_size(size):
    """From now on no file may grow past ``size`` bytes (a write past it fails, EFBIG)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, _HARD))


def lift_file_size_limit():
    """Space is free again: the limit the process started with."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (_SOFT, _HARD))
'''


def run_limited(code: str, *args: str) -> Any:
    """Run ``code`` after `PRELUDE` in a child Python; the JSON it printed on its last line."""
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + code, *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])
