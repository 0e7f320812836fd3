"""The metastore's database: one connection, its transactions, and the statements run on it.

Every statement of the metastore goes through `Database.execute` / `executemany`, and every transaction
through `transaction()` (a writer's) or `snapshot()` (a consistent read); nested scopes join the outer one, so
a command that makes many calls commits all of them or none. Two databases stand behind the same calls:
a SQLite file, the embedded default (WAL mode, a busy timeout, `BEGIN IMMEDIATE` for writers, so several
processes share it), and a team's PostgreSQL server (`postgres.py`). `open_database` takes a path or a URL.
"""
from __future__ import annotations

import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from typing import Any, Collection, Iterable, Iterator, Sequence
from urllib.parse import urlsplit, urlunsplit

from .common import BUSY_TIMEOUT_MS
from .dialect import SQLITE, Dialect
from ..errors import MetaException

PAGE_CACHE_KIB = 64 * 1024
POSTGRESQL_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")


def is_server_url(location: str) -> bool:
    """A metastore on a database server (PostgreSQL), not a SQLite file."""
    return location.startswith(POSTGRESQL_SCHEMES)


def redacted(url: str) -> str:
    """`url` without its password."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}@" if parts.username else ""
    return urlunsplit((parts.scheme, user + host, parts.path, parts.query, parts.fragment))


def open_database(location: str) -> "Database":
    """The metastore's database at `location`: a PostgreSQL URL, a `sqlite:///` URL, or a SQLite file's path."""
    if is_server_url(location):
        from .postgres import PostgresDatabase

        return PostgresDatabase(location)
    if location.startswith("sqlite:///"):
        location = location[len("sqlite:///"):]
    return SqliteDatabase(location)


class Database:
    """What every database of the metastore offers; the scopes' bookkeeping is shared."""

    dialect: Dialect = SQLITE
    path: str | None = None  # a SQLite file's; None for a server

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._depth = 0
        self._writing = False

    @property
    def url(self) -> str:
        """A SQLAlchemy URL of the database (for jupysql's `%sql`)."""
        raise NotImplementedError

    @property
    def display_url(self) -> str:
        """Where the database is, to show a person: a file's path, a server's URL without its password."""
        raise NotImplementedError

    @property
    def reading_only(self) -> bool:
        """Inside a read snapshot, which cannot write."""
        return bool(self._depth) and not self._writing

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        raise NotImplementedError

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any:
        raise NotImplementedError

    def insert_rows(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        """New rows of `table` (values in `columns` order, a list or rows made as they are taken), as fast as the
        database takes them in bulk."""
        self.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", rows)

    def execute_script_statement(self, sql: str) -> None:
        """One schema statement, as written (no parameters)."""
        raise NotImplementedError

    def batches(self, sql: str, size: int) -> Iterator[tuple[list[str], list[Any]]]:
        """The rows of a query without parameters, `size` at a time, with the column names (upper case): a
        table of millions of rows is never held whole."""
        cursor = self.execute(sql)
        columns = [d[0].upper() for d in cursor.description]
        while rows := cursor.fetchmany(size):
            yield columns, rows

    def continue_ids_past_copied(self) -> None:
        """After rows were inserted with their ids: new rows take ids past them (SQLite's rowids always do)."""

    def schema_version(self) -> int:
        raise NotImplementedError

    def set_schema_version(self, version: int) -> None:
        raise NotImplementedError

    def clock(self) -> float:
        """Seconds since the epoch by the database's clock: heartbeats written and judged by processes on several
        hosts compare on one clock (Hive's getDbTime). A SQLite file's processes share their host's."""
        return time.time()

    def transaction(self, tables: Collection[tuple[str, str]] = ()):
        """One write transaction; nested calls join the outer one. `tables` ((db, table) pairs): it writes those
        tables' own rows only (their statistics, parameters, history), so a database whose writers can run side
        by side (PostgreSQL) lets writers of other tables run beside it; SQLite's writers follow each other."""
        return self._scope(writing=True)

    def beside_others(self):
        """A write transaction of rows no other writer reads to decide what it writes (a Hive transaction's own
        row: opening it, its heartbeat), so a database whose writers can run side by side (PostgreSQL) runs it
        beside writers of tables; SQLite's writers follow each other."""
        return self._scope(writing=True)

    def snapshot(self):
        """A consistent read of several statements; joins an open transaction."""
        return self._scope(writing=False)

    def migration(self):
        """The write transaction migrations run in, which holds other processes' migrations off."""
        return self._scope(writing=True)

    def _begin(self, writing: bool) -> None:
        raise NotImplementedError

    def _end(self, commit: bool) -> None:
        raise NotImplementedError

    @contextmanager
    def _scope(self, writing: bool) -> Iterator["Database"]:
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
            self._begin(writing)
            self._depth, self._writing = 1, writing
            try:
                yield self
            except BaseException:
                self._end(commit=False)
                raise
            else:
                self._end(commit=True)
            finally:
                self._depth, self._writing = 0, False

    def compact(self) -> None:
        """Returns the space deleted rows freed; not inside a transaction."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class SqliteDatabase(Database):
    """The SQLite file at `path` (made when missing), opened for the metastore."""

    def __init__(self, path: str) -> None:
        super().__init__()
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

    @property
    def url(self) -> str:
        return f"sqlite:///{self.path}"

    @property
    def display_url(self) -> str:
        return str(self.path)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self._conn.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
        return self._conn.executemany(sql, rows)

    def execute_script_statement(self, sql: str) -> None:
        self._conn.execute(sql)

    def schema_version(self) -> int:
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    def set_schema_version(self, version: int) -> None:
        self._conn.execute(f"PRAGMA user_version = {int(version)}")

    def _begin(self, writing: bool) -> None:
        self._conn.execute("BEGIN IMMEDIATE" if writing else "BEGIN")

    def _end(self, commit: bool) -> None:
        self._conn.execute("COMMIT" if commit else "ROLLBACK")

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
