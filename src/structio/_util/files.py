"""Files: atomic writes, appends of whole records, users' text files, JSON Lines read.

`atomic_write` is the one way structio writes a file whole, `Appender` the one way it adds
records to one (a run's output). Neither ever leaves a half-written file, and a file that
cannot be written (a path no file can have, no permission, a full disk, a file size limit)
is a `SaveError` that says which file, why and what to do (`save_error`), the error of the
system its cause. `atomic_write` does its best never to leave its temporary file behind
either:

- an exception, Ctrl-C included, removes the temporary file at once;
- SIGTERM or SIGHUP while the main thread is writing removes it, then the process dies of
  the signal exactly as it would have (see `atomic_write`);
- what nothing can clean up at the time (``kill -9``, a power cut, a signal during a write
  in another thread) is removed by the next write to the same target, once it is older than
  `STALE_TEMPORARY_AGE` and no live writer holds it.
"""

from __future__ import annotations

import contextlib
import errno
import io
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
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from structio.exceptions import SaveError, StructioError

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

__all__ = [
    "JSONLine",
    "STALE_TEMPORARY_AGE",
    "TEXT_ENCODING",
    "Appender",
    "atomic_write",
    "open_text",
    "read_jsonl",
    "read_text",
    "remove_stale_temporaries",
    "save_error",
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
# What the temporary file's name adds to the target's: two dots, the random part, the suffix.
_TEMPORARY_EXTRA = 2 + 8 + len(_SUFFIX)

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


def atomic_write(path: Path, write: Callable[[IO[str]], None], *, what: str = "the file") -> None:
    """Write a text file so that readers see the old file or the new, never half of one.

    ``write`` fills a temporary file beside ``path`` (``.<name>.<8 random characters>.tmp``);
    it replaces ``path`` only when ``write`` returns. On any error (Ctrl-C included) the
    temporary file is removed and ``path`` is left as it was.

    Errors: a file that cannot be written raises `SaveError` (see `save_error`; ``what``
    names the file in its message, ``"the prompt"``), with the system's error as its
    cause: a path no file can have (a NUL character), no permission, a folder in the way,
    a full disk or a file size limit, whether the failure comes while ``write`` runs (its
    writes to the file) or after. Any other exception ``write`` raises (its own, or one of
    reading another file) propagates unchanged, and what it had written is discarded
    unflushed.

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

    Raises:
        SaveError: The file cannot be written; nothing was.
    """
    given = path
    try:
        # A link given as the target is followed: the file it points to is replaced, and
        # the link stays a link (replacing it would cut it from what it shared).
        path = _followed(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(path)
        mode = _mode_for(path)
    except (OSError, ValueError) as exc:  # ValueError: a path Python refuses (a NUL in it)
        raise save_error(given, what, exc) from exc
    installed = _guard_termination()
    try:
        try:
            fd, temporary = tempfile.mkstemp(
                prefix=f".{path.name}.", suffix=_SUFFIX, dir=path.parent
            )
        except (OSError, ValueError) as exc:
            shorter = _temporary_too_long(path, exc)
            raise save_error(given, what, exc, shorter_by=shorter) from exc
        _LIVE.add(temporary)
        target = _Target(fd, "w")
        in_write = False
        try:
            _hold(fd)
            _set_mode(fd, temporary, mode)
            handle = io.TextIOWrapper(io.BufferedWriter(target), encoding="utf-8", newline="\n")
            in_write = True
            write(handle)
            in_write = False
            handle.flush()
            # On disk before the rename: after a power cut the target is the old file or
            # the whole new one, never a renamed empty file.
            os.fsync(fd)
            handle.close()
            os.replace(temporary, path)
        except BaseException as exc:
            # Closed under the buffers: what they hold is dropped, never flushed (a second
            # failure of a full disk would hide the first error, and the file goes anyway).
            target.close()
            Path(temporary).unlink(missing_ok=True)
            if _is_write_failure(exc, target, in_write):
                raise save_error(given, what, exc, temporary=temporary) from exc
            raise
        finally:
            _LIVE.discard(temporary)
        _sync_directory(path.parent)
    finally:
        _unguard_termination(installed)


def _temporary_too_long(path: Path, exc: BaseException) -> int:
    """How much shorter ``path``'s name must be for its temporary file's to fit; else 0.

    A name that fits may still fail here: the temporary file beside it (see `atomic_write`)
    is ``.<name>.<8 random characters>.tmp``, `_TEMPORARY_EXTRA` characters longer.
    """
    if not isinstance(exc, OSError) or exc.errno != errno.ENAMETOOLONG:
        return 0
    try:
        limit = os.pathconf(path.parent, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # AttributeError: no pathconf (Windows)
        limit = 255
    length = len(os.fsencode(path.name))
    return length + _TEMPORARY_EXTRA - limit if length <= limit else 0


class _Target(io.FileIO):
    """The temporary file's bytes: a failed write is remembered, whoever's code made it.

    ``write`` reaches the file through text and buffer layers that may flush at any of its
    calls; the failure that comes out of one is known by identity as the file's own.
    """

    failure: BaseException | None = None

    def write(self, data: ReadableBuffer, /) -> int:
        try:
            return super().write(data)
        except OSError as exc:
            self.failure = exc
            raise


def _is_write_failure(exc: BaseException, target: _Target, in_write: bool) -> bool:
    """Whether ``exc`` is the file failing to be written (rather than an error of ``write``)."""
    if isinstance(exc, StructioError) or not isinstance(exc, (OSError, ValueError)):
        return False
    return not in_write or exc is target.failure


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


def write_json(path: Path, data: Any, *, what: str = "the file") -> None:
    """Write ``data`` as indented JSON, atomically (see `atomic_write`).

    Raises:
        SaveError: The file cannot be written; nothing was.
    """
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    def write(handle: IO[str]) -> None:
        handle.write(text)

    atomic_write(path, write, what=what)


class Appender:
    """A file that records are added to, each whole or not at all (a run's output).

    Opened for appending (created, with its folder, if missing). Each `write` reaches the
    file at once (no buffer to lose in a crash); one that fails (a full disk, a file size
    limit) takes back the part of it that was written, so the file always ends with the
    last whole record, and raises `SaveError`.

    Args:
        path: The file.
        what: The file in error messages (``"the output"``).
        kept: What a failed `write` leaves, in its error message.

    Raises:
        SaveError: The file cannot be opened for appending.
    """

    def __init__(
        self,
        path: Path,
        *,
        what: str = "the file",
        kept: str = "this record was not written; those before it are kept",
    ) -> None:
        self.path = path
        self.what = what
        self.kept = kept
        flags = (
            os.O_WRONLY
            | os.O_APPEND
            | os.O_CREAT
            | getattr(os, "O_BINARY", 0)  # Windows: bytes as they are, no \r added
            | getattr(os, "O_CLOEXEC", 0)
        )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd: int | None = os.open(path, flags, 0o666)
        except (OSError, ValueError) as exc:
            raise save_error(path, what, exc, kept="nothing was written") from exc

    def write(self, text: str) -> None:
        """Append ``text`` whole, or raise `SaveError` with the file as it was before.

        Raises:
            SaveError: The text could not be written (none of it is left in the file).
        """
        if self._fd is None:
            raise ValueError(f"{self.what} {str(self.path)!r} is closed")
        data = memoryview(text.encode("utf-8"))
        start: int | None = None
        try:
            start = os.fstat(self._fd).st_size
            while data:
                written = os.write(self._fd, data)
                if written <= 0:  # never for a file; a loop forever if it were
                    raise OSError(errno.EIO, os.strerror(errno.EIO))
                data = data[written:]
        except OSError as exc:
            if start is not None:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, start)  # the part written is taken back
            raise save_error(self.path, self.what, exc, kept=self.kept) from exc

    def close(self) -> None:
        """Close the file (again: nothing)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> Appender:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# Why a file cannot be written, by the system's error number, and what to do about it.
_PROBLEMS: dict[int, tuple[str, str]] = {
    errno.ENOSPC: ("the disk is full", "free some space, or write to another disk"),
    errno.EFBIG: (
        "the file would pass the largest size allowed (a file size limit)",
        "raise the limit (ulimit -f), or write to another file",
    ),
    errno.EROFS: ("the file system is read-only", "write to another folder"),
    errno.EACCES: (
        "permission denied",
        "write to a folder you may write to, or change the permissions",
    ),
    errno.EISDIR: ("it is a folder", "give the path of a file"),
    errno.ENOTDIR: ("a part of its path is a file, not a folder", "give another path"),
    errno.EEXIST: ("a part of its path is a file, not a folder", "give another path"),
    errno.ENAMETOOLONG: ("the name is too long", "give a shorter path"),
}
_PROBLEMS[errno.EPERM] = _PROBLEMS[errno.EACCES]
if hasattr(errno, "EDQUOT"):  # not on Windows
    _PROBLEMS[errno.EDQUOT] = ("the disk quota is used up", _PROBLEMS[errno.ENOSPC][1])


def save_error(
    path: str | os.PathLike[str],
    what: str,
    cause: BaseException,
    *,
    doing: str = "write",
    kept: str = "nothing was written (a file already there is as it was)",
    temporary: str | None = None,
    shorter_by: int = 0,
) -> SaveError:
    """The `SaveError` for ``path``, which could not be written: what was wrong, what to do.

    Raise it ``from cause``.

    Args:
        path: The file.
        what: The file as the message names it (``"the prompt"``).
        cause: The system's error (an `OSError`), or the `ValueError` of a path Python
            refuses.
        doing: What could not be done to the file (``"write"``, ``"read"``).
        kept: What became of the file.
        temporary: The temporary file written in its place (`atomic_write`): the system's
            words name it, the message names ``path`` instead (the file the user knows).
        shorter_by: How much shorter a name that fits must be for the temporary file's
            name beside it to fit (`atomic_write`), else 0.
    """
    shown = os.fsdecode(path)
    number = cause.errno if isinstance(cause, OSError) else None
    strerror = cause.strerror if isinstance(cause, OSError) else None
    if isinstance(cause, ValueError) and "\x00" in shown:
        reason, advice = (
            "its path holds a NUL character ('\\x00'), which no file name can hold",
            "take it out of the path",
        )
    elif isinstance(cause, ValueError):
        reason, advice = f"its path cannot name a file ({cause})", "give another path"
    else:
        reason, advice = _PROBLEMS.get(
            number if number is not None else -1,
            (
                strerror or str(cause) or type(cause).__name__,
                "check the path, its folder and the permissions",
            ),
        )
    if shorter_by:
        reason = (
            "the name is too long for the temporary file written beside it first (the "
            f"name and {_TEMPORARY_EXTRA} characters)"
        )
        advice = f"give a name at least {shorter_by} characters shorter"
    if temporary is not None:
        reason = reason.replace(os.fsdecode(temporary), shown)
    return SaveError(
        f"cannot {doing} {what} {shown!r}: {reason}; {advice}. {kept[:1].upper()}{kept[1:]}",
        path=shown,
        errno=number,
        strerror=strerror,
    )


# The encoding of every text file a user gives structio (data, demos, JSON arguments): UTF-8,
# a byte-order mark at its start skipped. Excel's "CSV UTF-8" and Windows editors write one;
# read as plain UTF-8 it would stay glued to the first header name or the first JSON line.
TEXT_ENCODING = "utf-8-sig"

# The byte-order mark, as text (a file read as plain UTF-8) and as its bytes.
_BOM = "\ufeff"
_BOM_BYTES = _BOM.encode("utf-8")


def open_text(path: str | os.PathLike[str], *, newline: str | None = "") -> IO[str]:
    """A user's text file open for reading, as UTF-8 with a byte-order mark skipped.

    ``newline=""`` (the default) keeps line endings as written, which CSV needs; ``None``
    reads every ending as a newline.

    Raises:
        OSError: The file cannot be opened.
    """
    return open(path, encoding=TEXT_ENCODING, newline=newline)


def read_text(path: str | os.PathLike[str]) -> str:
    """A user's whole text file, as UTF-8 with a byte-order mark skipped (see `open_text`).

    Raises:
        OSError: The file cannot be read.
        UnicodeDecodeError: The file is not UTF-8.
    """
    with open_text(path, newline=None) as handle:
        return handle.read()


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
    digits). A byte-order mark before the first line is skipped, however the file was
    opened (see `TEXT_ENCODING`).
    """
    for number, raw in enumerate(lines, 1):
        if number == 1:
            raw = raw.removeprefix(_BOM_BYTES) if isinstance(raw, bytes) else raw.removeprefix(_BOM)
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
