"""The metastore: Hive's catalog and column-statistics API over one SQLite file.

Every public method runs in one SQLite transaction, or joins the one opened by
`transaction()`, so a command that makes many calls commits all of them or none.
Writers take `BEGIN IMMEDIATE`; several processes may share the file (WAL mode).
"""
from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import contextmanager
from typing import Iterator

from ..storage import is_local, normalized
from . import segments
from .autoanalyze import AutoAnalyzeAPI
from .catalog import CatalogAPI
from .column_stats import ColumnStatisticsAPI
from .common import BUSY_TIMEOUT_MS, DEFAULT_DB
from .exceptions import MetaException
from .expectations import ExpectationsAPI
from .frequent_items import DEFAULT_FREQUENT_ITEMS
from .history import DEFAULT_SKETCHES, HistoryAPI
from .metadata_store import TableMetadataAPI
from .schema import migrate
from .skew import SkewAPI
from .snapshot_files import SnapshotFilesAPI
from .stats_accuracy import StatsAccuracyAPI
from .txns import TxnAPI


PAGE_CACHE_KIB = 64 * 1024


class Metastore(CatalogAPI, SkewAPI, ColumnStatisticsAPI, StatsAccuracyAPI, TableMetadataAPI, TxnAPI, HistoryAPI,
                ExpectationsAPI, SnapshotFilesAPI, AutoAnalyzeAPI):
    """A Hive-schema metastore in the SQLite file at `path` (created and migrated on open)."""

    def __init__(self, path: str, warehouse: str | None = None):
        self.path = os.path.abspath(path)
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        warehouse = warehouse or os.path.join(os.path.dirname(self.path), "warehouse")
        self.warehouse = os.path.abspath(warehouse) if is_local(warehouse) else normalized(warehouse)
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
        self.txn_stats_enabled = True  # Hive's hive.txn.stats.enabled
        self.txn_timeout_s = 300.0  # Hive's hive.txn.timeout
        self.history_enabled = True  # colstats.history.enabled: commits keep states of their statistics
        self.history_sketches = DEFAULT_SKETCHES  # colstats.history.sketches
        self.ndv_density_function = False  # Hive's hive.metastore.stats.ndv.densityfunction
        self.kll_enabled = False  # Hive's hive.stats.kll.enable: statistics gathered with a KLL sketch
        self.frequent_items = DEFAULT_FREQUENT_ITEMS  # colstats.frequent.items: values each sketch tracks (0: none)
        # 64 partitions a statistics segment; a file's segments are built with one value (tests use 1
        # on a new file, to build deep segment trees from a few partitions)
        self.segment_bits = segments.BITS
        self._depth = 0
        self._writing = False
        migrate(self._conn)
        with self.transaction():
            if not self._db_id(DEFAULT_DB, required=False):
                self._insert_db(DEFAULT_DB, self.warehouse, "Default Hive database")

    @property
    def url(self) -> str:
        """A SQLAlchemy URL for the file (for jupysql's `%sql`)."""
        return f"sqlite:///{self.path}"

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def compact(self) -> None:
        """Rewrites the file without its free pages (VACUUM), so space that deleted rows freed returns to the
        disk; waits for other connections' transactions, as a write does. Not inside a transaction."""
        with self._lock:
            if self._depth:
                raise MetaException("the metastore is compacted outside a transaction")
            self._conn.execute("VACUUM")
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # ---- transactions -------------------------------------------------------------------

    def transaction(self):
        """One write transaction (BEGIN IMMEDIATE); nested calls join the outer one."""
        return self._scope("BEGIN IMMEDIATE", writing=True)

    def snapshot(self):
        """A consistent read of several statements; joins an open transaction."""
        return self._scope("BEGIN", writing=False)

    @contextmanager
    def _scope(self, begin: str, writing: bool) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._depth:
                if writing and not self._writing:
                    raise MetaException("cannot write inside a read-only metastore snapshot")
                self._depth += 1
                try:
                    yield self._conn
                finally:
                    self._depth -= 1
                return
            self._conn.execute(begin)
            self._depth, self._writing = 1, writing
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")
            finally:
                self._depth, self._writing = 0, False
