"""Which texts came before, and where: duplicates found in flat memory."""

from __future__ import annotations

import hashlib
import sqlite3

__all__ = ["SeenTexts"]


class SeenTexts:
    """Texts already seen, by their hash, in a temporary SQLite table.

    On disk rather than in a set, so memory does not grow with the row count.
    """

    def __init__(self) -> None:
        self._db = sqlite3.connect("")  # a private temporary database, deleted on close
        self._db.execute("CREATE TABLE seen (hash INTEGER PRIMARY KEY, line INTEGER)")

    def first_line(self, text: str, line: int) -> int | None:
        """``None`` the first time ``text`` is seen; then the line it was first seen on."""
        digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
        key = int.from_bytes(digest, "big", signed=True)
        inserted = self._db.execute(
            "INSERT OR IGNORE INTO seen (hash, line) VALUES (?, ?)", (key, line)
        ).rowcount
        if inserted:
            return None
        row = self._db.execute("SELECT line FROM seen WHERE hash = ?", (key,)).fetchone()
        return int(row[0])

    def close(self) -> None:
        self._db.close()
