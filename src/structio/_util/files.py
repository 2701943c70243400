"""Files: atomic writes, and JSON Lines read with line numbers."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, NamedTuple

__all__ = ["JSONLine", "atomic_write", "read_jsonl", "write_json"]


def atomic_write(path: Path, write: Callable[[IO[str]], None]) -> None:
    """Write a text file so that readers see the old file or the new, never half of one.

    ``write`` fills a temporary file beside ``path``; it replaces ``path`` only when
    ``write`` returns. On any error (Ctrl-C included) the temporary file is removed and
    ``path`` is left as it was.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            write(handle)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


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
    decoder's reason and column rather than raised, so a caller can list every bad line.
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
        yield JSONLine(number, value, None, complete)
