"""The response cache: in memory, in front of an SQLite file that processes can share.

The disk tier is a small store of structio's own on the standard library's `sqlite3`
(`_SQLiteStore`): one table of JSON text by key, in WAL mode so readers never wait for a
writer, each operation its own short transaction, every connection closed by structio (not
left to the garbage collector), and nothing ever unpickled.

A cache is never a reason for a call to fail: a disk that cannot be written (full, over its
quota, read-only, failing) makes `ResponseCache.set` keep the answer in memory only and
`ResponseCache.get` read a miss. The first such failure is logged as a warning (the
``structio`` logger), the next ones only at debug level, and the first write that succeeds
again is logged at info level and starts the count anew. A file that is not a cache (not
an SQLite database, or a damaged one) is still a `ConfigurationError` that says to delete
it: that is found when the cache is first read, before any request is paid for.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from structio._util.log import logger
from structio._util.secrets import public_params
from structio.exceptions import ConfigurationError
from structio.lm.types import LMResponse

if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

__all__ = [
    "DATABASE_NAME",
    "DEFAULT_MEMORY_TTL",
    "ResponseCache",
    "cache_key",
    "configure_cache",
    "configured_cache",
    "default_cache",
    "public_params",
]

# Seconds a response is served from a process's memory before the shared disk is read
# again: how long a value another process replaced or cleared can still be seen here.
DEFAULT_MEMORY_TTL = 60.0

#: The file in a cache's directory that holds its responses (beside it, SQLite's ``-wal``
#: and ``-shm`` files).
DATABASE_NAME = "responses.sqlite3"

# Seconds a process waits for another one's write to finish before the operation fails;
# writes are one short statement, so only a stuck process makes anyone wait this long.
_BUSY_TIMEOUT = 60.0

# What an OSError says when the disk, not the cache, is at fault: no space, over quota, a
# read-only file system, a file-size limit, a failing device.
_STORAGE_ERRNOS = frozenset(
    code
    for code in (
        getattr(errno, name, None) for name in ("ENOSPC", "EDQUOT", "EROFS", "EFBIG", "EIO")
    )
    if code is not None
)
# The same from SQLite (primary result codes): SQLITE_BUSY, SQLITE_LOCKED (after the busy
# timeout), SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL.
_STORAGE_CODES = frozenset({5, 6, 8, 10, 13})
_STORAGE_WORDS = ("disk is full", "disk i/o error", "readonly", "read-only", "locked", "busy")


class _StorageError(Exception):
    """The disk under a cache failed a read or a write; never raised out of `ResponseCache`."""


def _is_storage_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is the disk failing (space, quota, read-only, I/O), not a bad file."""
    if isinstance(exc, OSError):
        return exc.errno in _STORAGE_ERRNOS
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if isinstance(code, int):
        return code & 0xFF in _STORAGE_CODES
    text = str(exc).lower()
    return any(word in text for word in _STORAGE_WORDS)


# Request parameters that never change a response: they are left out of the key.
_NOT_IN_KEY = frozenset(
    {
        "cache",
        "num_retries",
        "max_retries",
        "timeout",
        "request_timeout",
        "metadata",
        "stream",
        "stream_options",
    }
)


def cache_key(model: str, messages: Any, params: Mapping[str, Any]) -> str:
    """A stable key for a request: model, messages and parameters, never credentials."""
    keyed = {k: v for k, v in public_params(params).items() if k not in _NOT_IN_KEY}
    payload = {"model": model, "messages": messages, "params": keyed}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=_key_default)
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _key_default(value: Any) -> Any:
    schema = getattr(value, "model_json_schema", None)
    if callable(schema):  # a pydantic class given as response_format
        return {"schema": schema()}
    return repr(value)


class ResponseCache:
    """Model responses by request: an in-memory LRU in front of an SQLite file on disk.

    The disk tier is one SQLite database in ``directory`` (`DATABASE_NAME`), safe when
    several processes (or threads) share the directory: WAL mode, a busy timeout, and each
    read or write one short transaction. Entries are JSON text, so nothing is unpickled from
    disk. The directory is created private to its owner (``0700``) and the database files are
    ``0600``; files of an older run that are looser are tightened when this user owns them.

    The rule between processes: the disk tier is what processes share; the memory tier is
    a copy private to each process. A response served from memory was on disk (this process
    read it from there, or wrote it there) at most ``memory_ttl`` seconds before. Past that,
    `get` reads the disk again and serves what is there now, or a miss if the entry is gone.
    So a value another process replaced or cleared is seen within ``memory_ttl`` seconds: at
    once with ``memory_ttl=0`` (every hit reads the disk), never with ``None`` (a memory copy
    then lasts until the LRU evicts it). `clear` empties this process's memory at once.

    Why a bound on age rather than a check on every hit: the disk cannot tell an entry's
    version without an SQLite query, the very cost the memory tier is there to save. Why a
    bounded staleness is acceptable: the key is the whole request (model, messages,
    parameters), so every value stored under it answers that same request. When two
    processes miss at once and both call the model, each keeps serving its own answer for a
    while, and either is as good as the other. What must not linger is a value someone meant
    to remove (a cache cleared, an entry overwritten on purpose): it lingers ``memory_ttl``
    seconds at most.

    Sharing one directory is how worker processes share responses: give every worker's LM
    ``cache=ResponseCache(directory)``, or pickle one LM to them all (multiprocessing, Ray,
    Spark). A pickled cache is its absolute directory and options, nothing of its memory;
    unpickled, it is the cache this process already has open on that directory with those
    options, or a new one. On several machines the directory must be on a file system they
    share (SQLite over a network file system is only as safe as its locking).

    Args:
        directory: Where the disk tier lives; ``None`` keeps the cache in memory only (then
            the memory tier is the only copy, and ``memory_ttl`` does not apply).
        memory_size: How many responses the in-memory tier keeps.
        memory_ttl: Seconds a memory copy is served before the disk is read again; ``0``
            reads the disk on every hit, ``None`` never does while the copy is in memory.
    """

    def __init__(
        self,
        directory: str | Path | None = None,
        *,
        memory_size: int = 4096,
        memory_ttl: float | None = DEFAULT_MEMORY_TTL,
    ) -> None:
        from pathlib import Path

        if memory_ttl is not None and memory_ttl < 0:
            raise ValueError(f"memory_ttl must be 0 or more seconds, or None, not {memory_ttl}")
        self.directory = Path(directory).expanduser() if directory is not None else None
        self.memory_size = memory_size
        self.memory_ttl = memory_ttl
        # key -> (JSON text, time.monotonic() when it was last read from or written to disk)
        self._memory: OrderedDict[str, tuple[str, float]] = OrderedDict()
        self._lock = threading.Lock()
        self._disk: Any = None
        # Whether the disk has failed since its last good write (then failures log quietly).
        self._failing = False

    def __repr__(self) -> str:
        return f"ResponseCache(directory={str(self.directory) if self.directory else None!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # A cache travels as where it is and how it keeps things; its memory, lock and
        # SQLite connection belong to this process. The directory goes as an absolute
        # path: a worker started elsewhere (another working directory) opens this one.
        directory = str(self.directory.absolute()) if self.directory is not None else None
        return (_unpickled, (directory, self.memory_size, self.memory_ttl))

    def _disk_cache(self) -> Any:
        if self.directory is None:
            return None
        if self._disk is None:
            with self._lock:
                if self._disk is None:
                    self._disk = _SQLiteStore(self.directory)
        return self._disk

    def get(self, key: str) -> LMResponse | None:
        """The cached response for ``key``, or ``None``.

        From memory while the copy there is younger than ``memory_ttl``; otherwise from
        disk (refreshing the memory copy, or dropping it when the disk no longer has it).
        """
        text: str | None = None
        with self._lock:
            entry = self._memory.get(key)
            if entry is not None and (self.directory is None or self._fresh(entry[1])):
                text = entry[0]
                self._memory.move_to_end(key)
        if text is None:
            disk = self._disk_cache()
            if disk is None:
                return None
            try:
                stored = disk.get(key)
            except _StorageError as failure:
                self._failed("read", failure)
                # The memory copy (however old) is better than a miss: it was on disk once.
                stored = entry[0] if entry is not None else None
            if not isinstance(stored, str):
                with self._lock:  # cleared or replaced by another process: forget our copy
                    self._memory.pop(key, None)
                return None
            text = stored
            self._remember(key, text)
        try:
            return LMResponse.from_dict(json.loads(text))
        except (ValueError, KeyError, TypeError):
            return None  # an entry from an incompatible version: treat as a miss

    def _fresh(self, confirmed: float) -> bool:
        """Whether a memory copy last confirmed on disk at ``confirmed`` may still be served."""
        ttl = self.memory_ttl
        return ttl is None or time.monotonic() - confirmed < ttl

    def set(self, key: str, response: LMResponse) -> None:
        """Store a response under ``key`` in memory and on disk.

        A disk that cannot be written (full, over quota, read-only) leaves the response in
        memory only: the failure is logged (once, until a write succeeds again), not raised.

        Raises:
            ConfigurationError: The cache's file is not a cache (not SQLite, or damaged),
                or its directory cannot be made.
        """
        text = json.dumps(response.to_dict(), ensure_ascii=False)
        self._remember(key, text)
        disk = self._disk_cache()
        if disk is None:
            return
        try:
            disk.set(key, text)
        except _StorageError as failure:
            self._failed("write", failure)
            return
        if self._failing:
            with self._lock:
                failing, self._failing = self._failing, False
            if failing:
                logger().info("the response cache %s is written to again", self.directory)

    def _failed(self, what: str, failure: _StorageError) -> None:
        """Log a failure of the disk: a warning the first time, until a write succeeds."""
        with self._lock:
            first, self._failing = not self._failing, True
        cause = failure.__cause__ or failure
        if first:
            logger().warning(
                "the response cache %s could not %s (%s: %s); answers are kept in memory "
                "only until it can (the calls go on; later failures are logged at debug "
                "level)",
                self.directory,
                what,
                type(cause).__name__,
                cause,
            )
        else:
            logger().debug("the response cache %s could not %s (%s)", self.directory, what, cause)

    def _remember(self, key: str, text: str) -> None:
        with self._lock:
            self._memory[key] = (text, time.monotonic())
            self._memory.move_to_end(key)
            while len(self._memory) > self.memory_size:
                self._memory.popitem(last=False)

    def clear(self) -> None:
        """Forget every response, in memory and on disk.

        Other processes sharing the directory see it within their ``memory_ttl``.
        """
        with self._lock:
            self._memory.clear()
        disk = self._disk_cache()
        if disk is not None:
            try:
                disk.clear()
            except _StorageError as failure:
                raise ConfigurationError(
                    f"the response cache {self.directory} could not be cleared ({failure})"
                ) from failure

    def close(self) -> None:
        """Close the disk tier's connection (it reopens on next use)."""
        with self._lock:
            if self._disk is not None:
                self._disk.close()
                self._disk = None


# Every store of this process, so that none carries an open connection into a forked child:
# SQLite forbids using a connection in a child (both processes would think they hold the
# same locks). Each is closed before a fork and reopens on its next use, in parent and child.
_STORES: weakref.WeakSet[_SQLiteStore] = weakref.WeakSet()
_STORES_LOCK = threading.Lock()
# Connections a child inherited all the same (opened by another thread while the process
# forked): never used, never closed, only kept from the garbage collector.
_INHERITED: list[sqlite3.Connection] = []


class _SQLiteStore:
    """JSON text by key in one SQLite file, shared safely by processes and threads.

    One connection per store (opened on first use, serialised by a lock, in autocommit:
    every statement is its own short transaction), closed by `close`, when the store is
    garbage-collected, at exit, and before the process forks. WAL mode lets readers go on
    while one process writes; the busy timeout makes a writer wait its turn instead of
    failing.

    Args:
        directory: The cache's directory (created ``0700`` when missing).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / DATABASE_NAME
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._closer: weakref.finalize[Any, Any] | None = None
        with _STORES_LOCK:
            _STORES.add(self)

    def _connect(self) -> sqlite3.Connection:
        """The open connection, opened (and the database made private) on first use."""
        if self._connection is not None:
            return self._connection
        import sqlite3  # imported on first use: `import structio` stays light

        _private_files(self.directory, self.path)
        try:
            connection = sqlite3.connect(
                self.path,
                timeout=_BUSY_TIMEOUT,
                isolation_level=None,  # autocommit: no transaction outlives its statement
                check_same_thread=False,  # threads take turns through self._lock
            )
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        # From here on the connection is closed whatever happens to this store.
        closer = weakref.finalize(self, connection.close)
        try:
            _patiently(lambda: _prepare(connection))
        except sqlite3.Error as exc:
            closer()
            raise self._error(exc) from exc
        self._connection, self._closer = connection, closer
        return connection

    def _error(self, exc: Exception) -> Exception:
        """What a failed operation raises: the disk failing, or the file not being a cache."""
        if _is_storage_failure(exc):
            return _StorageError(str(exc))
        return ConfigurationError(
            f"the response cache {self.path} could not be used ({type(exc).__name__}: {exc}). "
            "If the file is damaged, delete it (the cache starts empty); to do without a disk "
            "cache, pass cache=False or cache=ResponseCache() (memory only)"
        )

    def _run(self, sql: str, parameters: tuple[str, ...] = ()) -> list[Any]:
        """Run one statement as its own transaction; its rows, read to the end."""
        import sqlite3

        with self._lock:
            connection = self._connect()
            try:
                # Reading every row ends the statement, and with it the read transaction:
                # an unfinished SELECT would hold a snapshot and keep the WAL from shrinking.
                return _patiently(lambda: connection.execute(sql, parameters).fetchall())
            except sqlite3.Error as exc:
                raise self._error(exc) from exc

    def get(self, key: str) -> str | None:
        """The text stored under ``key``, or ``None``."""
        rows = self._run("SELECT value FROM responses WHERE key = ?", (key,))
        value = rows[0][0] if rows else None
        return value if isinstance(value, str) else None

    def set(self, key: str, text: str) -> None:
        """Store ``text`` under ``key``, replacing what was there."""
        self._run("INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)", (key, text))

    def clear(self) -> None:
        """Remove every entry."""
        self._run("DELETE FROM responses")

    def close(self) -> None:
        """Close the connection (the next operation opens a new one)."""
        with self._lock:
            self._close_locked()

    def _close_locked(self) -> None:
        closer, self._connection, self._closer = self._closer, None, None
        if closer is not None:
            closer()


def _prepare(connection: sqlite3.Connection) -> None:
    """Put a new connection's database in WAL mode and make sure its table exists."""
    # WAL persists in the file: switching needs every other process out of the way, so it
    # is asked for only while the file is not in WAL mode yet.
    (mode,) = connection.execute("PRAGMA journal_mode").fetchone()
    if str(mode).lower() != "wal":
        connection.execute("PRAGMA journal_mode=WAL").fetchall()
    # NORMAL in WAL mode never corrupts the file; a power cut may lose the last writes,
    # which for a cache is only a few more requests.
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute(
        "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
    )


_T = TypeVar("_T")


def _patiently(operation: Callable[[], _T]) -> _T:
    """Run ``operation``, again while SQLite says the database is busy, for the busy timeout.

    SQLite's own busy handler does not cover every case: a switch to WAL mode, and a
    connection that meets another process recovering the WAL index, fail at once with
    "database is locked" when several processes open one new cache together. Every
    statement run here is idempotent, so running it again is safe.
    """
    import sqlite3

    deadline = time.monotonic() + _BUSY_TIMEOUT
    pause = 0.002
    while True:
        try:
            return operation()
        except sqlite3.OperationalError as exc:
            busy = "locked" in str(exc) or "busy" in str(exc)
            if not busy or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def _private_files(directory: Path, database: Path) -> None:
    """Create the directory ``0700`` and the database ``0600``; tighten looser old files.

    The database is created here, before SQLite opens it, because SQLite gives the ``-wal``
    and ``-shm`` files it makes the permissions of the database file.
    """
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.close(os.open(database, flags, 0o600))
    except OSError as exc:
        if _is_storage_failure(exc):
            raise _StorageError(str(exc)) from exc
        raise ConfigurationError(
            f"the response cache {database} could not be created ({exc}); give "
            "ResponseCache a directory of your own that you can write to, set "
            "STRUCTIO_CACHE_DIR, or pass cache=False"
        ) from exc
    if not hasattr(os, "geteuid"):  # not POSIX: no permission bits to tighten
        return
    for path in (
        database,
        database.with_name(database.name + "-wal"),
        database.with_name(database.name + "-shm"),
    ):
        with contextlib.suppress(OSError):  # missing, or someone else's: left as it is
            status = path.lstat()
            if status.st_mode & 0o077 and status.st_uid == os.geteuid():
                path.chmod(0o600)


def _close_before_fork() -> None:
    """Close every store's connection, so that no child inherits one."""
    with _STORES_LOCK:
        stores = list(_STORES)
    for store in stores:
        store.close()


def _after_fork_in_child() -> None:
    """Make the child's stores usable: fresh locks, and no connection of the parent's."""
    global _STORES_LOCK
    # A lock another thread held at the fork stays held in the child, where that thread is
    # gone: every lock is made anew.
    _STORES_LOCK = threading.Lock()
    for store in list(_STORES):
        store._lock = threading.Lock()
        if store._closer is not None and store._connection is not None:
            store._closer.detach()  # closing it would touch the parent's locks
            _INHERITED.append(store._connection)
        store._connection = store._closer = None


if hasattr(os, "register_at_fork"):  # POSIX; elsewhere processes are spawned, never forked
    os.register_at_fork(before=_close_before_fork, after_in_child=_after_fork_in_child)


_DEFAULT: dict[Path, ResponseCache] = {}
_DEFAULT_LOCK = threading.Lock()

# The caches unpickled in this process, by directory and options: every LM unpickled here
# that used one directory (one per task, under Ray) shares one memory tier and one
# connection to the disk, for as long as one of them is in use.
_UNPICKLED: weakref.WeakValueDictionary[tuple[str, int, float | None], ResponseCache] = (
    weakref.WeakValueDictionary()
)


def _unpickled(directory: str | None, memory_size: int, memory_ttl: float | None) -> ResponseCache:
    """A pickled `ResponseCache` in this process: the one already open on its directory.

    A cache in memory only is a new, empty one: its memory stayed in the process it left.
    """
    if directory is None:
        return ResponseCache(None, memory_size=memory_size, memory_ttl=memory_ttl)
    key = (directory, memory_size, memory_ttl)
    with _DEFAULT_LOCK:
        cache = _UNPICKLED.get(key)
        if cache is None:
            cache = ResponseCache(directory, memory_size=memory_size, memory_ttl=memory_ttl)
            _UNPICKLED[key] = cache
        return cache


def _default_root() -> Path:
    from pathlib import Path

    return Path(os.environ.get("STRUCTIO_CACHE_DIR") or "~/.cache/structio").expanduser()


def default_cache() -> ResponseCache:
    """The shared cache in ``$STRUCTIO_CACHE_DIR`` (default ``~/.cache/structio``)."""
    root = _default_root()
    with _DEFAULT_LOCK:
        cache = _DEFAULT.get(root)
        if cache is None:
            cache = _DEFAULT[root] = ResponseCache(root / "responses")
        return cache


# The cache `configure_cache` chose for LMs made with ``cache=True``: empty while it was
# never called (then `default_cache` serves), else one entry, ``None`` for no cache at all.
_CONFIGURED: list[ResponseCache | None] = []


def configure_cache(
    enable_disk_cache: bool = True,
    enable_memory_cache: bool = True,
    disk_cache_dir: str | Path | None = None,
    disk_size_limit_bytes: int | None = None,
    memory_max_entries: float | None = None,
    restrict_pickle: bool = False,
    safe_types: list[type[Any]] | None = None,
) -> None:
    """Choose the cache of every LM made with ``cache=True`` (the default), as DSPy's does.

    DSPy's ``dspy.configure_cache``, mapped onto `ResponseCache`: the disk tier is its
    SQLite file, the memory tier its LRU. It applies to calls made from now on, by LMs made
    before or after; an LM given ``cache=False`` or a `ResponseCache` of its own keeps it.

    Args:
        enable_disk_cache: Keep responses on disk, shared by processes; ``False`` keeps
            them in this process's memory only.
        enable_memory_cache: Keep a copy in memory; ``False`` reads the disk on every hit.
            Both ``False``: no cache at all (every call is a request).
        disk_cache_dir: The cache's directory (default ``$STRUCTIO_CACHE_DIR/responses``,
            ``~/.cache/structio/responses``).
        disk_size_limit_bytes: Refused: structio's disk cache has no size limit.
        memory_max_entries: How many responses the memory tier keeps (default 4096;
            ``math.inf``: no limit).
        restrict_pickle: Accepted and ignored: structio's cache stores JSON and never
            unpickles anything, which is what DSPy's ``restrict_pickle=True`` guards.
        safe_types: Accepted and ignored, for the same reason.

    Raises:
        ConfigurationError: ``disk_size_limit_bytes`` was given, or ``memory_max_entries``
            is negative.

    Example:
        >>> import structio as sio
        >>> sio.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
        >>> sio.configure_cache()  # back to the default cache
    """
    del restrict_pickle, safe_types  # nothing is unpickled: nothing to restrict
    if disk_size_limit_bytes is not None:
        raise ConfigurationError(
            "structio's disk cache has no size limit (disk_size_limit_bytes): leave it out, "
            "and empty the cache with structio.lm.default_cache().clear() or by deleting its "
            "directory ($STRUCTIO_CACHE_DIR, default ~/.cache/structio)"
        )
    size = 4096 if memory_max_entries is None else memory_max_entries
    if size < 0:
        raise ConfigurationError(f"memory_max_entries must be 0 or more, not {size!r}")
    memory_size = int(min(size, sys.maxsize)) if enable_memory_cache else 0
    cache: ResponseCache | None
    if not enable_disk_cache and not enable_memory_cache:
        cache = None
    elif not enable_disk_cache:
        cache = ResponseCache(None, memory_size=memory_size)
    elif disk_cache_dir is None and memory_size == 4096:
        cache = default_cache()
    else:
        directory = disk_cache_dir if disk_cache_dir is not None else _default_root() / "responses"
        cache = ResponseCache(directory, memory_size=memory_size)
    with _DEFAULT_LOCK:
        _CONFIGURED[:] = [cache]


def configured_cache() -> ResponseCache | None:
    """The cache of an LM made with ``cache=True``: `configure_cache`'s, else `default_cache`."""
    with _DEFAULT_LOCK:
        if _CONFIGURED:
            return _CONFIGURED[0]
    return default_cache()
