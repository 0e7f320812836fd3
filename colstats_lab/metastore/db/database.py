"""The metastore's database: one connection, its transactions, and the statements run on it.

Every statement of the metastore goes through `Database.execute` / `executemany`, and every transaction
through `transaction()` (a writer's) or `snapshot()` (a consistent read); nested scopes join the outer one, so
a command that makes many calls commits all of them or none. Two databases stand behind the same calls:
a SQLite file, the embedded default (`sqlite.py`), and a team's PostgreSQL server (`postgres.py`); `connect`
(`connect.py`) takes a path or a URL.
"""
from __future__ import annotations

import re
import threading
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit, urlunsplit

from ...errors import InvalidArgument, MetaException, MetastoreUnavailable
from .dialect import SQLITE, Dialect

BUSY_TIMEOUT_MS = 60_000  # how long a writer waits for another's write lock, unless colstats.metastore.wait says
POSTGRESQL_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")


SQLITE_URL = "sqlite:///"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
# query keys whose values are secrets (libpq's password and sslpassword, and what other drivers call them)
_SECRET_KEYS = re.compile(r"pass(word)?$|secret|token|credential", re.IGNORECASE)


def is_server_url(location: str) -> bool:
    """A metastore on a database server (PostgreSQL), not a SQLite file."""
    return location.startswith(POSTGRESQL_SCHEMES)


def redacted(url: str) -> str:
    """`url` with every credential left out: the password of `user:password@`, and `password=`, `sslpassword=` and
    other secret keys of its query (a passfile's path stays: it is where, not what). What remains still connects
    where the password comes from elsewhere ($PGPASSWORD, a passfile)."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL Python can split (a bad IPv6 host): nothing of it is shown
        return "(a metastore URL that does not parse)"
    netloc = parts.netloc
    if "@" in netloc:
        credentials, _, host = netloc.rpartition("@")
        netloc = f"{credentials.partition(':')[0]}@{host}"
    query = "&".join(item for item in parts.query.split("&")
                     if item and not _SECRET_KEYS.search(unquote(item.partition("=")[0])))
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def check_location(location: str) -> str:
    """`location` when it is a metastore the lab opens: a PostgreSQL URL, a `sqlite:///` URL, or a path (which
    stays a SQLite file's, whatever it holds); any other scheme is refused in one line naming those it takes."""
    if not isinstance(location, str) or not location.strip():
        raise InvalidArgument(f"a metastore is a SQLite file's path or a PostgreSQL URL, not {location!r}")
    if "\x00" in location:
        raise InvalidArgument("the metastore's location holds a NUL character")
    scheme = _SCHEME.match(location)
    if scheme and "://" in location[:scheme.end() + 2] and not is_server_url(location) \
            and not location.startswith(SQLITE_URL):
        raise InvalidArgument(
            f"the metastore {redacted(location)} is a {scheme.group(1)}:// URL; the lab takes a PostgreSQL URL "
            f"({', '.join(POSTGRESQL_SCHEMES)}), a {SQLITE_URL} URL or a SQLite file's path")
    return location


class Row(Protocol):
    """A row either database returns: its values by position or by column name."""

    def __getitem__(self, key: int | str) -> Any: ...


class Database:
    """What every database of the metastore offers; the scopes' bookkeeping is shared."""

    dialect: Dialect = SQLITE
    path: str | None = None  # a SQLite file's; None for a server

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._depth = 0
        self._writing = False
        self._no_wait = False  # a write that another writer holding the lock would make wait raises WouldWait
        self.read_only = False  # opened where it cannot be written: reads only
        self.wait_s = BUSY_TIMEOUT_MS / 1000  # how long a writer waits for another's write lock

    def set_wait(self, seconds: float) -> None:
        """How long a writer waits for another's write lock from now on (colstats.metastore.wait)."""
        self.wait_s = float(seconds)

    @contextmanager
    def without_waiting(self) -> Iterator[None]:
        """Writes in the block that would wait for another writer's lock raise WouldWait instead: a reader's own
        bookkeeping (re-merging stale segments) is skipped then, and the reader never waits for a writer."""
        before, self._no_wait = self._no_wait, True
        try:
            yield
        finally:
            self._no_wait = before

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
    def _scope(self, writing: bool) -> Iterator[Database]:
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


class WouldWait(MetastoreUnavailable):
    """A write in `Database.without_waiting` found another writer holding the lock: the caller skips it."""


class MetastoreWaitWarning(UserWarning):
    """A writer waits for another's write lock on the metastore: for what, whom and how long."""
