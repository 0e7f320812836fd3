"""The embedded default: a SQLite file (WAL mode, a busy timeout, `BEGIN IMMEDIATE` for writers, so several
processes share it), read-only where it cannot be written."""
from __future__ import annotations

import errno
import os
import sqlite3
import time
import warnings
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import quote

from ...errors import MetaException, MetastoreUnavailable
from .database import Database, MetastoreWaitWarning, WouldWait

PAGE_CACHE_KIB = 64 * 1024
WAL_LIMIT_BYTES = 1024 * 1024  # a checkpointed WAL is cut back to this
WAL_CHECKPOINT_PAGES = 64  # 1 MiB of 16 KiB pages: a commit past it checkpoints
WAIT_QUIETLY_MS = 200  # a writer waits this long for another's write lock before it says so


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


def _holders(db: SqliteDatabase) -> str:
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
