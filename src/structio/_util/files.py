"""Files: atomic writes, and JSON Lines read with line numbers.

`atomic_write` is the one way structio writes a file. It never leaves a half-written target,
and it does its best never to leave its temporary file behind either:

- an exception, Ctrl-C included, removes the temporary file at once;
- SIGTERM or SIGHUP while the main thread is writing removes it, then the process dies of
  the signal exactly as it would have (see `atomic_write`);
- what nothing can clean up at the time (``kill -9``, a power cut, a signal during a write
  in another thread) is removed by the next write to the same target, once it is older than
  `STALE_TEMPORARY_AGE` and no live writer holds it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import FrameType
from typing import IO, Any, NamedTuple

__all__ = [
    "JSONLine",
    "STALE_TEMPORARY_AGE",
    "atomic_write",
    "read_jsonl",
    "remove_stale_temporaries",
    "write_json",
]

# A temporary file of ours this old (seconds since it was last written) whose writer holds
# no lock on it is left over from a killed process. An hour is far longer than the gap
# between two writes of any live writer (a buffered writer flushes every few kilobytes), so
# age alone already spares them; the lock check spares even a writer that stalls longer.
STALE_TEMPORARY_AGE = 3600.0

# `tempfile.mkstemp` names a file prefix + 8 characters of this alphabet + suffix; matching
# exactly that (no dots in the random part) means the sweep of target ``a`` never takes a
# temporary file of target ``a.b`` (``.a.b.XXXXXXXX.tmp``), nor a file of anyone else unless
# it is named exactly like ours. The tests check that mkstemp still names files this way.
_RANDOM_PART = "[a-z0-9_]{8}"
_SUFFIX = ".tmp"

# Signals whose default action ends the process without running any Python code, so that
# nothing but a handler of ours can remove the temporary file. (SIGINT raises
# KeyboardInterrupt, which the ``except BaseException`` of `atomic_write` handles.)
_TERMINATING_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)

# Temporary files being written right now, by any thread. Only `set.add`, `set.discard` and
# `list(set)` touch it, each atomic, so the signal handler (which runs in the main thread,
# possibly between two bytecodes of code holding a lock) needs no lock to read it.
_LIVE: set[str] = set()


def atomic_write(path: Path, write: Callable[[IO[str]], None]) -> None:
    """Write a text file so that readers see the old file or the new, never half of one.

    ``write`` fills a temporary file beside ``path`` (``.<name>.<8 random characters>.tmp``);
    it replaces ``path`` only when ``write`` returns. On any error (Ctrl-C included) the
    temporary file is removed and ``path`` is left as it was.

    The new file keeps the permission bits of the file it replaces (a new file gets
    ``0o666 & ~umask``, as ``open()`` gives). A symbolic link as ``path`` is followed: the
    file it points to is replaced and the link stays. The data is flushed to disk
    (``fsync``) before the rename, and the folder after it where the system allows, so a
    power cut leaves the old file or the new one.

    Termination: while the main thread is in here and SIGTERM (or SIGHUP) has its default
    action, a handler is installed that removes the live temporary files of this process,
    puts the default action back and sends the signal again, so the process still ends
    killed by that signal (exit status 143 in a shell, ``-15`` to `subprocess`), running no
    other code of the program than the default action would have. This is deliberate rather
    than raising an exception: it works however ``write`` handles exceptions, and callers
    that wait for the process see the signal they sent. Where the program installed its own
    handler (or ignores the signal), it is left alone: that handler decides, and if it
    raises, the ``except`` clause here removes the file. Threads other than the main one
    cannot install handlers; their leftovers are swept by the next write, as below. The
    previous handler is put back when the write ends.

    Leftovers: each call first removes temporary files of ``path`` (exactly the name
    pattern above, regular files only) that are older than `STALE_TEMPORARY_AGE` and that
    no writer holds: a writer keeps an exclusive `flock` on its temporary file, which the
    kernel releases when the writer dies, ``kill -9`` included. Nothing else is touched.
    """
    # A link given as the target is followed: the file it points to is replaced, and the
    # link stays a link (replacing it would cut it from what it shared).
    path = _followed(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    mode = _mode_for(path)
    installed = _guard_termination()
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=_SUFFIX, dir=path.parent)
        _LIVE.add(temporary)
        try:
            _hold(fd)
            _set_mode(fd, temporary, mode)
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                write(handle)
                handle.flush()
                # On disk before the rename: after a power cut the target is the old file
                # or the whole new one, never a renamed empty file.
                os.fsync(handle.fileno())
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        finally:
            _LIVE.discard(temporary)
        _sync_directory(path.parent)
    finally:
        _unguard_termination(installed)


def _followed(path: Path) -> Path:
    """``path`` with symbolic links resolved (a dangling link gives the file it names)."""
    if not path.is_symlink():
        return path
    return Path(os.path.realpath(path))


def _mode_for(path: Path) -> int:
    """The permission bits the written file gets: the old file's, else ``0o666 & ~umask``.

    `tempfile.mkstemp` creates ``0o600`` files; a file that other users could read must
    stay readable after it is rewritten, and a new one gets what ``open()`` would give it.
    """
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without changing it where the system allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    # Elsewhere the only way to read it is to set it: set it back at once.
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


_UMASK_LOCK = threading.Lock()


def _set_mode(fd: int, name: str, mode: int) -> None:
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    else:  # Windows: only the read-only bit means anything
        os.chmod(name, mode)


def _sync_directory(folder: Path) -> None:
    """Flush the rename to disk (the directory entry); skipped where directories cannot be."""
    if sys.platform == "win32":
        return
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse fsync on a directory: the file is synced
        pass
    finally:
        os.close(fd)


def remove_stale_temporaries(path: Path, *, older_than: float = STALE_TEMPORARY_AGE) -> list[Path]:
    """Remove the temporary files that killed writers of ``path`` left beside it.

    A file is removed only when all of these hold: its name is exactly
    ``.<path name>.<8 random characters>.tmp`` (what `atomic_write` creates for ``path``);
    it is a regular file, not a link or a folder; it was last modified ``older_than``
    seconds ago or more (a time in the future, as a skewed network clock may give, is not
    old); and no process holds a lock on it (a live writer does). Errors (a file that
    vanished, no permission) are skipped: sweeping never makes a write fail.

    Returns:
        The files removed.
    """
    pattern = re.compile(re.escape(f".{path.name}.") + _RANDOM_PART + re.escape(_SUFFIX))
    now = time.time()
    removed: list[Path] = []
    try:
        entries = os.scandir(path.parent)
    except OSError:
        return removed
    with entries:
        for entry in entries:
            if pattern.fullmatch(entry.name) is None:
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode) or now - info.st_mtime < older_than:
                continue
            if _remove_unheld(entry.path, info):
                removed.append(Path(entry.path))
    return removed


def _hold(fd: int) -> None:
    """Take an exclusive lock on a new temporary file, so no sweep removes it while alive."""
    if sys.platform == "win32":
        return
    import fcntl

    # On a file system without locks this fails, and the age rule alone protects the file.
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _remove_unheld(name: str, info: os.stat_result) -> bool:
    """Remove the file ``name`` unless a writer holds its lock; whether it was removed."""
    if sys.platform == "win32":
        try:
            os.unlink(name)
        except OSError:
            return False
        return True
    import fcntl

    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags)
    except OSError:
        return False
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
            return False  # replaced since it was listed: judge it next time
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a live writer holds it, however old it looks
        except OSError:
            pass  # no locks on this file system: the age rule decides
        try:
            os.unlink(name)
        except OSError:
            return False
        return True
    finally:
        os.close(fd)


def _guard_termination() -> list[signal.Signals]:
    """Install `_on_termination` for each terminating signal still at its default action.

    Only in the main thread (Python runs signal handlers there and nowhere else, and
    `signal.signal` refuses other threads). A signal already handled by the program, by
    an outer `atomic_write` or ignored keeps its disposition.

    Returns:
        The signals whose handler was installed, for `_unguard_termination`.
    """
    if threading.current_thread() is not threading.main_thread():
        return []
    installed: list[signal.Signals] = []
    for signum in _TERMINATING_SIGNALS:
        try:
            if signal.getsignal(signum) == signal.SIG_DFL:
                signal.signal(signum, _on_termination)
                installed.append(signum)
        except (OSError, ValueError):  # not the main interpreter, or not allowed here
            continue
    return installed


def _unguard_termination(installed: list[signal.Signals]) -> None:
    """Put back the default action of the signals `_guard_termination` installed for."""
    for signum in installed:
        try:
            # Someone may have installed a handler of their own meanwhile: keep it.
            if signal.getsignal(signum) is _on_termination:
                signal.signal(signum, signal.SIG_DFL)
        except (OSError, ValueError):
            continue


def _on_termination(signum: int, frame: FrameType | None) -> None:
    """Remove the live temporary files, then end the process by the signal as before."""
    for temporary in list(_LIVE):
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    signal.signal(signum, signal.SIG_DFL)
    signal.raise_signal(signum)
    # Only reached if the signal is blocked in this thread: end the way a handler may, and
    # the `except BaseException` of `atomic_write` cleans up what was not yet listed.
    raise SystemExit(128 + signum)


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON, atomically."""
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    def write(handle: IO[str]) -> None:
        handle.write(text)

    atomic_write(path, write)


class JSONLine(NamedTuple):
    """One non-blank line of a JSON Lines file.

    Attributes:
        line: Its line number, from 1.
        value: The decoded value (``None`` when ``error`` is set).
        error: Why the line is not valid JSON, or ``None``.
        complete: Whether the line ended with a newline (a file cut off while it was being
            written has an incomplete last line).
    """

    line: int
    value: Any
    error: str | None = None
    complete: bool = True


def read_jsonl(lines: Iterable[str | bytes]) -> Iterator[JSONLine]:
    """Decode JSON Lines (an open file, or any iterable of lines), keeping line numbers.

    Blank lines are skipped (and counted). A line that is not JSON is reported with the
    decoder's reason and column rather than raised, so a caller can list every bad line; so
    is JSON that Python cannot hold (brackets nested too deeply, a number of thousands of
    digits).
    """
    for number, raw in enumerate(lines, 1):
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        complete = text.endswith("\n")
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            error = f"not valid JSON ({exc.msg}, column {exc.colno})"
            yield JSONLine(number, None, error, complete)
            continue
        except RecursionError:  # the decoder recurses once per bracket
            yield JSONLine(number, None, "not readable (nested too deeply)", complete)
            continue
        except ValueError as exc:  # valid JSON Python refuses, such as a 5,000-digit number
            yield JSONLine(number, None, f"not readable ({exc})", complete)
            continue
        yield JSONLine(number, value, None, complete)
