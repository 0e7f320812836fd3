"""The metastore's database: one connection, its transactions, and the statements run on it.

Every statement of the metastore goes through `Database.execute` / `executemany`, and every transaction
through `transaction()` (a writer's) or `snapshot()` (a consistent read); nested scopes join the outer one, so
a command that makes many calls commits all of them or none. Two databases stand behind the same calls:
a SQLite file, the embedded default (WAL mode, a busy timeout, `BEGIN IMMEDIATE` for writers, so several
processes share it), and a team's PostgreSQL server (`postgres.py`). `open_database` takes a path or a URL.
"""
from __future__ import annotations

import errno
import os
import re
import sqlite3
import threading
import time
import warnings
from contextlib import contextmanager
from typing import Any, Collection, Iterable, Iterator, Sequence
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from ..errors import InvalidArgument, MetaException, MetastoreUnavailable
from .common import BUSY_TIMEOUT_MS
from .dialect import SQLITE, Dialect

PAGE_CACHE_KIB = 64 * 1024
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


def open_database(location: str) -> "Database":
    """The metastore's database at `location`: a PostgreSQL URL, a `sqlite:///` URL, or a SQLite file's path."""
    check_location(location)
    if is_server_url(location):
        from .postgres import PostgresDatabase

        return PostgresDatabase(location)
    if location.startswith(SQLITE_URL):
        location = location[len(SQLITE_URL):]
    return SqliteDatabase(location)


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
    """The SQLite file at `path` (made when missing), opened for the metastore; read-only where the file or its
    folder cannot be written (a mounted snapshot, a shared volume, a dashboard's account): every read works,
    a write is refused in one line. SQLite's own errors come out as MetastoreUnavailable naming the file and
    the cause (its disk full, its file system read-only, another writer holding it)."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.file = self.path = os.path.abspath(path)
        exists = os.path.exists(self.file)
        if not exists:
            try:
                os.makedirs(os.path.dirname(self.file), exist_ok=True)
            except OSError as error:
                raise self._unavailable("create", error) from None
        if exists and not _writable(self.file):
            self._open_read_only()
            return
        if exists and os.path.isdir(self.file):
            raise MetaException(f"the metastore at {self.file} is a folder, not a SQLite file")
        try:
            self._open()
        except sqlite3.OperationalError as error:
            self._conn.close()
            raise self._unavailable("open", error) from None
        except sqlite3.DatabaseError as error:  # not SQLite's format at all, or cut short
            self._conn.close()
            raise self._not_a_metastore(error) from None

    def _open(self) -> None:
        self._conn = sqlite3.connect(self.file, isolation_level=None, timeout=self.wait_s, check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute(f"PRAGMA busy_timeout = {int(self.wait_s * 1000)}")
        # statistics rows carry sketches of up to 2 KiB: 16 KiB pages hold them with less slack than 4 KiB
        # (measured: 5-25 % smaller files, bulk updates a tenth faster); a no-op on an existing file
        self._conn.execute("PRAGMA page_size = 16384")
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        # the WAL checkpointed past 1 MiB (SQLite's default of 1,000 pages is 16 MiB of these) and cut back to
        # that size: a 3 MiB home held a 2.26 MB WAL after a close, and the next ANALYZE found the disk full
        self._conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}")
        self._conn.execute(f"PRAGMA journal_size_limit = {WAL_LIMIT_BYTES}")
        self._settings()

    def _open_read_only(self) -> None:
        """Opens the file for reading only (SQLite's mode=ro); a WAL whose shared index cannot be made here
        is read as it stands when it holds nothing (immutable), and refused by name when it holds commits."""
        self.read_only = True
        location = f"file:{quote(self.file)}?mode=ro"
        try:
            self._connect_uri(location)
            return
        except sqlite3.OperationalError as error:
            wal = self.file + "-wal"
            if os.path.exists(wal) and os.path.getsize(wal) > 0:
                raise MetastoreUnavailable(
                    f"cannot read the metastore at {self.file}: it is read-only here and its write-ahead log "
                    f"({wal}) holds commits a reader needs the folder's write access for ({error})") from None
        try:
            self._connect_uri(location + "&immutable=1")
        except sqlite3.OperationalError as error:
            raise self._unavailable("open", error) from None

    def set_wait(self, seconds: float) -> None:
        super().set_wait(seconds)
        self._conn.execute(f"PRAGMA busy_timeout = {int(self.wait_s * 1000)}")

    def _connect_uri(self, uri: str) -> None:
        self._conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=self.wait_s, check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        try:
            self._conn.execute("PRAGMA user_version").fetchone()  # SQLite opens lazily: read once to know it can
            self._settings()
        except sqlite3.OperationalError:
            self._conn.close()
            raise

    def _settings(self) -> None:
        self._conn.execute("PRAGMA foreign_keys = ON")
        # SQLite's default 2 MiB of pages: at 100,000 partitions each commit's index walks (a statistics row's
        # key, a history state's cell) went to the OS for most pages; the cache grows only as far as it is used
        self._conn.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")

    def _unavailable(self, doing: str, error: BaseException) -> MetastoreUnavailable:
        """SQLite's (or the OS's) error as one line naming the file and what lies behind it."""
        return MetastoreUnavailable(f"cannot {doing} the metastore at {self.file}: {_cause(self.file, error)}")

    @property
    def url(self) -> str:
        return f"sqlite:///{self.file}"

    @property
    def display_url(self) -> str:
        return str(self.file)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        try:
            return self._conn.execute(sql, params)
        except (sqlite3.OperationalError, sqlite3.DataError) as error:
            raise self._translated(error) from None
        except sqlite3.DatabaseError as error:
            if isinstance(error, sqlite3.IntegrityError):  # the callers' to name (a duplicate, a foreign key)
                raise
            raise self._translated(error) from None

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
        try:
            return self._conn.executemany(sql, rows)
        except (sqlite3.OperationalError, sqlite3.DataError) as error:
            raise self._translated(error) from None
        except sqlite3.DatabaseError as error:
            if isinstance(error, sqlite3.IntegrityError):
                raise
            raise self._translated(error) from None

    def execute_script_statement(self, sql: str) -> None:
        self.execute(sql)

    def _not_a_metastore(self, error: sqlite3.DatabaseError) -> MetaException:
        return MetaException(f"the metastore at {self.file} is not a SQLite database SQLite can read "
                             f"({str(error).splitlines()[0] if str(error) else type(error).__name__}): a copy cut "
                             "short or another file; restore it from a backup, or point the lab at another")

    def _translated(self, error: sqlite3.DatabaseError) -> Exception:
        """The errors a full or read-only disk and a held lock give, named; a damaged file named; any other as
        SQLite said it."""
        if not isinstance(error, sqlite3.OperationalError):
            return self._not_a_metastore(error)
        text = str(error).lower()
        if any(sign in text for sign in ("disk is full", "disk i/o error", "readonly database", "read-only")):
            return self._unavailable("write" if self._writing else "read", error)
        if "database is locked" in text:
            return MetastoreUnavailable(f"the metastore at {self.file} is busy: another writer held its write lock "
                                        f"for {self.wait_s:.0f} s{_holders(self)}")
        return error

    def schema_version(self) -> int:
        return int(self.execute("PRAGMA user_version").fetchone()[0])

    def set_schema_version(self, version: int) -> None:
        self.execute(f"PRAGMA user_version = {int(version)}")

    def _begin(self, writing: bool) -> None:
        if not writing:
            self.execute("BEGIN")
            return
        if self.read_only:
            raise MetastoreUnavailable(f"the metastore at {self.file} is read-only here ({_why_read_only(self.file)}):"
                                       f" its statistics can be read, not changed")
        # a moment's wait, then one line saying for what and whom the writer waits, and how long it will
        self._conn.execute(f"PRAGMA busy_timeout = {0 if self._no_wait else WAIT_QUIETLY_MS}")
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as error:
            if "database is locked" not in str(error).lower():
                raise self._translated(error) from None
        finally:
            self._conn.execute(f"PRAGMA busy_timeout = {int(self.wait_s * 1000)}")
        if self._no_wait:
            raise WouldWait(self.file)
        warnings.warn(f"waiting up to {self.wait_s:.0f} s for the metastore at {self.file}: another writer holds its "
                      f"write lock{_holders(self)}", MetastoreWaitWarning, stacklevel=4)
        self.execute("BEGIN IMMEDIATE")

    def _end(self, commit: bool) -> None:
        try:
            self._conn.execute("COMMIT" if commit else "ROLLBACK")
        except sqlite3.OperationalError as error:
            if self._conn.in_transaction:  # still open (SQLite undoes some failures itself): the file keeps its past
                self._conn.execute("ROLLBACK")
            raise self._translated(error) from None

    def compact(self) -> None:
        """Rewrites the file without its free pages (VACUUM), so space that deleted rows freed returns to the
        disk; waits for other connections' transactions, as a write does. Not inside a transaction."""
        with self._lock:
            if self._depth:
                raise MetaException("the metastore is compacted outside a transaction")
            self.execute("VACUUM")
            self.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        """Closes the file, its write-ahead log checkpointed into it and cut to nothing first (where no other
        connection reads meanwhile): the WAL does not keep the disk's space after a lab closes."""
        with self._lock:
            if not self.read_only:
                try:
                    self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except sqlite3.Error:  # another connection reads: the last to close checkpoints
                    pass
            self._conn.close()


WAL_LIMIT_BYTES = 1024 * 1024  # a checkpointed WAL is cut back to this
WAL_CHECKPOINT_PAGES = 64  # 1 MiB of 16 KiB pages: a commit past it checkpoints
WAIT_QUIETLY_MS = 200  # a writer waits this long for another's write lock before it says so


class WouldWait(MetastoreUnavailable):
    """A write in `Database.without_waiting` found another writer holding the lock: the caller skips it."""


class MetastoreWaitWarning(UserWarning):
    """A writer waits for another's write lock on the metastore: for what, whom and how long."""


def _writable(path: str) -> bool:
    """Whether the file and its folder can be written (its file system mounted writable, its permissions)."""
    folder = os.path.dirname(path)
    return not _read_only_file_system(folder) and os.access(path, os.W_OK) and os.access(folder, os.W_OK)


def _read_only_file_system(folder: str) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _why_read_only(path: str) -> str:
    folder = os.path.dirname(path)
    if _read_only_file_system(folder):
        return f"{folder} is on a read-only file system"
    return f"this account cannot write {path if not os.access(path, os.W_OK) else folder}"


def _cause(path: str, error: BaseException) -> str:
    """What lies behind a file's error: no space left, a read-only file system, or the error itself."""
    folder = os.path.dirname(path)
    try:
        stats = os.statvfs(folder)
        free = stats.f_bavail * stats.f_frsize
    except OSError:
        free = None
    if isinstance(error, OSError) and error.errno == errno.ENOSPC or "full" in str(error).lower() \
            or (free is not None and free < FULL_BELOW_BYTES and "i/o" in str(error).lower()):
        shown = f"{free:,} bytes free" if free is not None else "no space left"
        return f"no space left on its file system ({shown} in {folder}); the statistics stored before stay as they were"
    if _read_only_file_system(folder) or (isinstance(error, OSError) and error.errno in (errno.EROFS, errno.EACCES)):
        return f"{folder} cannot be written ({_why_read_only(path)})"
    return str(error).splitlines()[0] if str(error) else type(error).__name__


FULL_BELOW_BYTES = 1024 * 1024  # an I/O error on a file system with less free: the disk is full


def _holders(db: "SqliteDatabase") -> str:
    """The lab's open transactions, from its own table: ": transaction 42 of host:pid, open 3 s" (the write lock's
    holder is one of them, or a process opening or migrating the file)."""
    try:
        rows = db._conn.execute("SELECT TXN_ID, TXN_HOST, TXN_PID, TXN_STARTED FROM TXNS WHERE TXN_STATE = 'o' "
                                "ORDER BY TXN_LAST_HEARTBEAT DESC LIMIT 3").fetchall()
    except sqlite3.Error:
        return ""
    if not rows:
        return ": no transaction of the lab is open (another process opening, migrating or compacting the file)"
    now = time.time()
    return ": " + "; ".join(f"transaction {r[0]} of {r[1]}:{r[2]}, open {now - float(r[3]):.0f} s" for r in rows)
