"""The metastore's database: one connection, its transactions, and the statements run on it.

Every statement of the metastore goes through `Database.execute` / `executemany`, and every transaction
through `transaction()` (a writer's) or `snapshot()` (a consistent read): the one place a second database
(PostgreSQL, a team's) stands behind the same calls. Today it is SQLite's file: WAL mode, a busy timeout,
`BEGIN IMMEDIATE` for writers, so several processes share it; nested scopes join the outer one, so a
command that makes many calls commits all of them or none.
"""
from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Sequence

from .common import BUSY_TIMEOUT_MS
from .exceptions import MetaException

PAGE_CACHE_KIB = 64 * 1024


class Database:
    """The SQLite file at `path` (made when missing), opened for the metastore."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
                                     check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        # statistics rows carry sketches of up to 2 KiB: 16 KiB pages hold them with less slack than 4 KiB
        # (measured: 5-25 % smaller files, bulk updates a tenth faster); a no-op on an existing file
        self._conn.execute("PRAGMA page_size = 16384")
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self._conn.execute("PRAGMA foreign_keys = ON")
        # SQLite's default 2 MiB of pages: at 100,000 partitions each commit's index walks (a statistics row's
        # key, a history state's cell) went to the OS for most pages; the cache grows only as far as it is used
        self._conn.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
        self._lock = threading.RLock()
        self._depth = 0
        self._writing = False

    @property
    def url(self) -> str:
        """A SQLAlchemy URL of the database (for jupysql's `%sql`)."""
        return f"sqlite:///{self.path}"

    @property
    def reading_only(self) -> bool:
        """Inside a read snapshot, which cannot write."""
        return bool(self._depth) and not self._writing

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self._conn.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
        return self._conn.executemany(sql, rows)

    def transaction(self):
        """One write transaction (BEGIN IMMEDIATE); nested calls join the outer one."""
        return self._scope("BEGIN IMMEDIATE", writing=True)

    def snapshot(self):
        """A consistent read of several statements; joins an open transaction."""
        return self._scope("BEGIN", writing=False)

    @contextmanager
    def _scope(self, begin: str, writing: bool) -> Iterator["Database"]:
        with self._lock:
            if self._depth:
                if writing and not self._writing:
                    raise MetaException("cannot write inside a read-only metastore snapshot")
                self._depth += 1
                try:
                    yield self
                finally:
                    self._depth -= 1
                return
            self._conn.execute(begin)
            self._depth, self._writing = 1, writing
            try:
                yield self
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")
            finally:
                self._depth, self._writing = 0, False

    def compact(self) -> None:
        """Rewrites the file without its free pages (VACUUM), so space that deleted rows freed returns to the
        disk; waits for other connections' transactions, as a write does. Not inside a transaction."""
        with self._lock:
            if self._depth:
                raise MetaException("the metastore is compacted outside a transaction")
            self._conn.execute("VACUUM")
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        with self._lock:
            self._conn.close()
