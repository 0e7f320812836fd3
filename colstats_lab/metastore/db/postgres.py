"""The metastore on a PostgreSQL server: a team's, shared by its notebooks, workers and dashboards.

One psycopg connection in autocommit mode, whose transactions the metastore's scopes open and close. A writer's
transaction takes the metastore's write lock first (a transaction-scoped advisory lock, held to its commit or
rollback, so a killed process lets go with its connection): writers follow each other as on SQLite, which is
what the metastore's read-then-write steps (the next write ID, a commit's history states, a partitioned table's
sums) rely on, as Hive serializes opening and committing transactions with its TXN_LOCK_TBL. A read snapshot
is REPEATABLE READ, so its statements see one state and wait for no writer.
"""
from __future__ import annotations

import collections
import functools
import itertools
import re
import time
import warnings
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types.string import StrDumper

from ...errors import MetaException, MetastoreUnavailable
from .database import BUSY_TIMEOUT_MS, Database, MetastoreWaitWarning, WouldWait, redacted
from .dialect import POSTGRESQL

# pg_advisory_xact_lock keys: one for writers, one for migrations ("colstats" in ASCII, and +1)
WRITE_LOCK = 0x636F6C7374617473
MIGRATION_LOCK = WRITE_LOCK + 1
TABLE_LOCKS = 0x636F6C73  # the first key of a table's lock, pg_advisory_xact_lock(int, int); the second hashes its name
_VERSION_TABLE = "COLSTATS_SCHEMA_VERSION"
# a commit that grew a table by this many rows, and by this share of the rows its planner statistics know of,
# analyzes it: a metastore filled in one go is otherwise planned as empty until autovacuum comes round (a
# minute or more), and a query of 20 partitions' statistics among 2,000 took 150 ms instead of 1.2 ms (measured)
_GROWTH_ROWS = 1000
_GROWTH_SHARE = 0.2
_INSERT_INTO = re.compile(r"^\s*INSERT\s+(?:OR\s+\w+\s+)?INTO\s+(\w+)", re.I)


@functools.lru_cache(maxsize=1024)
def _inserted_table(sql: str) -> str | None:
    match = _INSERT_INTO.match(sql)
    return match.group(1).lower() if match else None


class _Row(tuple):
    """A result row read by position or by column name in any case, as sqlite3.Row is (PostgreSQL folds
    unquoted names to lower case)."""

    _index: dict[str, int] = {}
    _names: list[str] = []

    def __getitem__(self, key):
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self._index[key.upper()])
            except KeyError:
                raise IndexError(f"no such column: {key}") from None
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


def _rows(cursor: Any):
    if cursor.description is None:
        return tuple
    names = [d.name for d in cursor.description]
    row_type = type("Row", (_Row,), {"_index": {n.upper(): i for i, n in enumerate(names)}, "_names": names})
    return row_type


class _BoolAsInteger(Dumper):
    """Flags are integers in the metastore's schema (0/1), as in SQLite's."""

    format = Format.TEXT
    oid = psycopg.postgres.types["int8"].oid

    def dump(self, obj: Any) -> bytes:
        return b"1" if obj else b"0"


class _NumericAsNumber(Loader):
    """A sum of integers is a NUMERIC in PostgreSQL: read back as an int, as SQLite gives it (a float when it
    has a fraction)."""

    format = Format.TEXT

    def load(self, data: Any) -> Any:
        text = bytes(data).decode()
        return float(text) if any(c in text for c in ".eEN") else int(text)


# psycopg's words for a connection the server closed under it: stopped, restarted, or its backend killed
_SERVER_GONE = ("the connection is closed", "server closed the connection", "terminating connection",
                "connection lost", "consuming input failed", "sending query failed", "ssl syscall error")


def _one_line(error: psycopg.Error, url: str) -> MetaException:
    """A connection's failure as one line naming the URL (without its password) and what to do."""
    message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    lowered = message.lower()
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        return MetaException(f"the metastore's PostgreSQL server at {url} refused the user's password")
    if "does not exist" in lowered and "database" in lowered:
        database = urlsplit(url).path.lstrip("/")
        return MetaException(f"database {database} does not exist on the metastore's PostgreSQL server at {url}: "
                             f"create it (createdb {database}); the lab makes its tables")
    if any(sign in lowered for sign in ("connection refused", "could not connect", "timeout", "timed out",
                                        "resolve host", "translate host name", "no route")):
        reason = message.split("failed: ")[-1]
        return MetastoreUnavailable(f"cannot reach the metastore's PostgreSQL server at {url}: {reason}")
    if any(sign in lowered for sign in _SERVER_GONE):
        return MetastoreUnavailable(f"the metastore's PostgreSQL server at {url} went away ({message}): the "
                                    "statistics stored before stay as they were and this command stored nothing; "
                                    "run it again when the server is back")
    return MetaException(f"the metastore's PostgreSQL server at {url}: {message}")


class PostgresDatabase(Database):
    """The PostgreSQL database named by `url` (postgresql://user:password@host:port/database)."""

    dialect = POSTGRESQL

    def __init__(self, url: str) -> None:
        super().__init__()
        self._url = url.replace("postgresql+psycopg://", "postgresql://", 1).replace("postgres://", "postgresql://", 1)
        try:
            # custom plans: a generic plan of `CS_ID > $1` guesses a third of the table and scans it; no JIT: it
            # compiled 0.32 s of a 0.35 s history insert of 400 rows whose estimate was stale (measured)
            self._conn = psycopg.connect(self._url, autocommit=True, connect_timeout=10,
                                         options=f"-c lock_timeout={BUSY_TIMEOUT_MS} -c TimeZone=UTC "
                                                 "-c plan_cache_mode=force_custom_plan -c jit=off")
        except psycopg.Error as error:
            raise _one_line(error, self.display_url) from None
        self._conn.adapters.register_dumper(bool, _BoolAsInteger)
        # a string parameter is text (psycopg sends it untyped, which `? IS NULL` cannot resolve)
        self._conn.adapters.register_dumper(str, StrDumper)
        self._conn.adapters.register_loader("numeric", _NumericAsNumber)
        self._conn.row_factory = _rows
        self._conn.prepare_threshold = 2
        self._inserted: collections.Counter[str] = collections.Counter()  # rows this transaction added, by table
        self._types: dict[tuple[str, tuple[str, ...]], list[str]] = {}  # COPY's column types, by table and columns

    @property
    def url(self) -> str:
        return self._url.replace("postgresql://", "postgresql+psycopg://", 1)

    @property
    def display_url(self) -> str:
        return redacted(self._url)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor:
        if table := _inserted_table(sql):
            self._inserted[table] += 1
        try:
            return self._conn.execute(self.dialect.statement(sql), tuple(params))
        except psycopg.OperationalError as error:  # the server went away, or a lock waited too long
            raise _one_line(error, self.display_url) from None

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> psycopg.Cursor:
        if table := _inserted_table(sql):
            rows = rows if isinstance(rows, (list, tuple)) else list(rows)
            self._inserted[table] += len(rows)
        statement = self.dialect.statement(sql)
        cursor = self._conn.cursor()
        try:
            # each row's execute in one pipeline: psycopg's executemany stalled for ~200 ms in every other call
            # of 400 statistics rows on a local server (240 ms against 25-48 ms, measured)
            with self._conn.pipeline():
                for row in rows:
                    cursor.execute(statement, tuple(row))
        except psycopg.OperationalError as error:
            raise _one_line(error, self.display_url) from None
        return cursor

    def insert_rows(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        # COPY: 400 statistics rows in 15-23 ms, against 25-48 ms as one pipeline of INSERTs; binary, in the
        # columns' own types: 20,000 statistics rows (their sketches ~1 KB) in 0.16 s against 0.33 s as text.
        # Rows made as they are sent are stored by the server while the next are made, on another core.
        rows = iter(rows)
        first = next(rows, None)
        if first is None:
            return
        count = 0
        try:
            types = self._column_types(table, tuple(columns))  # asked before the COPY, which holds the connection
            with self._conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(types)
                for row in itertools.chain((first,), rows):
                    copy.write_row(row)
                    count += 1
        except psycopg.OperationalError as error:
            raise _one_line(error, self.display_url) from None
        self._inserted[table.lower()] += count

    def _column_types(self, table: str, columns: tuple[str, ...]) -> list[str]:
        key = (table.lower(), columns)
        if key not in self._types:
            found: dict[str, str] = dict(self._conn.execute(
                "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = CAST(%s AS regclass) "
                "AND attnum > 0 AND NOT attisdropped", (table.lower(),)).fetchall())
            self._types[key] = [found[column.lower()] for column in columns]
        return self._types[key]

    def batches(self, sql: str, size: int) -> Iterator[tuple[list[str], list[Any]]]:
        # a server-side cursor, inside the caller's transaction: the rows come `size` at a time
        with self._conn.cursor(name=f"batches_{id(self)}") as cursor:
            cursor.execute(self.dialect.statement(sql))
            columns: list[str] = []
            while rows := cursor.fetchmany(size):
                columns = columns or [d.name.upper() for d in cursor.description or ()]
                yield columns, rows

    def continue_ids_past_copied(self) -> None:
        identities = self.execute("SELECT table_name, column_name FROM information_schema.columns "
                                  "WHERE table_schema = current_schema() AND is_identity = 'YES'").fetchall()
        for table, column in identities:
            self.execute(f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                         f"COALESCE((SELECT max({column}) FROM {table}), 0) + 1, false)")

    def clock(self) -> float:
        (seconds,) = self.execute("SELECT extract(epoch FROM clock_timestamp())").fetchone() or (None,)
        return float(seconds)

    def execute_script_statement(self, sql: str) -> None:
        self._conn.execute(sql.encode())  # bytes: no parameters, so a % in the statement is itself

    def schema_version(self) -> int:
        """A read: a database whose version table is not made yet is of version 0."""
        found = self._conn.execute("SELECT to_regclass(%s) IS NOT NULL", (_VERSION_TABLE.lower(),)).fetchone()
        if not found or not found[0]:
            return 0
        row = self._conn.execute(f"SELECT MIGRATIONS FROM {_VERSION_TABLE}").fetchone()
        return int(row[0]) if row else 0

    def set_schema_version(self, version: int) -> None:
        self._conn.execute(f"CREATE TABLE IF NOT EXISTS {_VERSION_TABLE} (MIGRATIONS INTEGER NOT NULL)")
        self._conn.execute(f"DELETE FROM {_VERSION_TABLE}")
        self._conn.execute(f"INSERT INTO {_VERSION_TABLE} (MIGRATIONS) VALUES (%s)", (int(version),))

    def transaction(self, tables: Collection[tuple[str, str]] = ()):
        return self._scope(writing=True, tables=tables)

    def beside_others(self):
        return self._scope(writing=True, shared=True)

    def migration(self):
        return self._scope(writing=True, lock=MIGRATION_LOCK)

    def _scope(self, writing: bool, lock: int = WRITE_LOCK, tables: Collection[tuple[str, str]] = (),
               shared: bool = False):
        self._next_lock, self._next_tables = lock, sorted(set(tables))
        self._next_shared = shared or bool(self._next_tables)
        return super()._scope(writing)

    def _begin(self, writing: bool) -> None:
        try:
            if writing:
                self._conn.execute("BEGIN")
                try:
                    self._take_write_locks()
                except BaseException:  # the caller's scope never opened: the transaction must not stay behind
                    self._end(commit=False)
                    raise
            else:
                self._conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        except psycopg.errors.LockNotAvailable:
            raise MetastoreUnavailable(f"the metastore at {self.display_url} is busy: another writer held it for "
                                       f"{self.wait_s:.0f} s") from None
        except psycopg.OperationalError as error:
            raise _one_line(error, self.display_url) from None

    def _take_write_locks(self) -> None:
        if self._next_shared:  # the write lock shared with other tables' writers, each table's its own
            self._lock_or_wait("pg_advisory_xact_lock_shared(%s)", (self._next_lock,))
            for db_name, table_name in self._next_tables:  # in one order: two writers never wait in a ring
                self._lock_or_wait("pg_advisory_xact_lock(%s, hashtext(%s))", (TABLE_LOCKS, f"{db_name}.{table_name}"))
        else:
            self._lock_or_wait("pg_advisory_xact_lock(%s)", (self._next_lock,))

    def set_wait(self, seconds: float) -> None:
        super().set_wait(seconds)
        with self._lock:
            self._conn.execute(f"SET lock_timeout = {int(self.wait_s * 1000)}")

    def _lock_or_wait(self, lock: str, arguments: tuple) -> None:
        """Takes an advisory lock; when another writer holds it, says for what, whom and how long this one waits
        (the lab's open transactions), then waits up to the lock timeout."""
        taken = self._conn.execute(f"SELECT {lock.replace('pg_advisory', 'pg_try_advisory', 1)}",
                                   arguments).fetchone()
        if taken and taken[0]:
            return
        if self._no_wait:
            raise WouldWait(self.display_url)
        rows = self._conn.execute("SELECT TXN_ID, TXN_HOST, TXN_PID, TXN_STARTED FROM TXNS WHERE TXN_STATE = 'o' "
                                  "ORDER BY TXN_LAST_HEARTBEAT DESC LIMIT 3").fetchall()
        now = time.time()
        holders = ("; ".join(f"transaction {r[0]} of {r[1]}:{r[2]}, open {now - float(r[3]):.0f} s" for r in rows)
                   or "no transaction of the lab is open (another process opening or migrating it)")
        warnings.warn(f"waiting up to {self.wait_s:.0f} s for the metastore at {self.display_url}: another "
                      f"writer holds its write lock: {holders}", MetastoreWaitWarning, stacklevel=7)
        self._conn.execute(f"SELECT {lock}", arguments)

    def _end(self, commit: bool) -> None:
        inserted, self._inserted = self._inserted, collections.Counter()
        if self._conn.closed:
            return
        try:
            self._conn.execute("COMMIT" if commit else "ROLLBACK")
        except psycopg.OperationalError as error:
            if commit:
                raise _one_line(error, self.display_url) from None
            return  # a server gone rolled the transaction back itself; the error that ended it is the one to say
        if commit:
            self._analyze_grown(inserted)

    def _analyze_grown(self, inserted: collections.Counter[str]) -> None:
        tables = [table for table, rows in inserted.items() if rows >= _GROWTH_ROWS]
        if not tables:
            return
        known: dict[str, float] = dict(self._conn.execute(
            "SELECT relname, reltuples FROM pg_class WHERE relname = ANY(%s) "
            "AND relnamespace = current_schema()::regnamespace", (tables,)).fetchall())
        grown = [table for table in tables if inserted[table] >= _GROWTH_SHARE * max(known.get(table, 0), 0)]
        if grown:
            self._conn.execute(f"ANALYZE {', '.join(sorted(grown))}")

    def compact(self) -> None:
        """VACUUM of the metastore's tables: their freed space is reused (the server keeps its files)."""
        with self._lock:
            if self._depth:
                raise MetaException("the metastore is compacted outside a transaction")
            self._conn.execute("VACUUM")

    def close(self) -> None:
        with self._lock:
            self._conn.close()
