"""The metastore: Hive's catalog and column-statistics API over one database (`database.py`).

Every public method runs in one database transaction, or joins the one opened by `transaction()`, so a
command that makes many calls commits all of them or none; commands write through `apply` (changes as data).
"""
from __future__ import annotations

import os
from typing import Collection

from ..storage import is_local, normalized
from . import segments
from .autoanalyze import AutoAnalyzeAPI
from .catalog import CatalogAPI
from .column_stats import ColumnStatisticsAPI
from .common import DEFAULT_DB
from .database import is_server_url, open_database
from .expectations import ExpectationsAPI
from .frequent_items import DEFAULT_FREQUENT_ITEMS
from .history import DEFAULT_SKETCHES, HistoryAPI
from .metadata_store import TableMetadataAPI
from .schema import migrate
from .skew import SkewAPI
from .snapshot_files import SnapshotFilesAPI
from .stats_accuracy import StatsAccuracyAPI
from .txns import TxnAPI


class Metastore(CatalogAPI, SkewAPI, ColumnStatisticsAPI, StatsAccuracyAPI, TableMetadataAPI, TxnAPI, HistoryAPI,
                ExpectationsAPI, SnapshotFilesAPI, AutoAnalyzeAPI):
    """A Hive-schema metastore at `location`, a SQLite file's path or a PostgreSQL URL (created and migrated on
    open; a server's database must exist). `warehouse` is where a new database keeps its managed tables (by
    default `warehouse` beside a SQLite file, or in the current folder for a server's)."""

    def __init__(self, location: str, warehouse: str | None = None):
        self.db = open_database(location)
        # a SQLite file's path, or a server's URL without its password: where a person is told it is
        self.path = self.db.display_url
        warehouse = warehouse or ("warehouse" if is_server_url(location) else
                                  os.path.join(os.path.dirname(self.path), "warehouse"))
        self.warehouse = os.path.abspath(warehouse) if is_local(warehouse) else normalized(warehouse)
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
        migrate(self.db)
        with self.transaction():
            if not self._db_id(DEFAULT_DB, required=False):
                self._insert_db(DEFAULT_DB, self.warehouse, "Default Hive database")

    @property
    def url(self) -> str:
        """A SQLAlchemy URL of the database (for jupysql's `%sql`)."""
        return self.db.url

    def close(self) -> None:
        self.db.close()

    def compact(self) -> None:
        """Rewrites the database without the space deleted rows freed (SQLite's VACUUM); not inside a
        transaction."""
        self.db.compact()

    def transaction(self, tables: Collection[tuple[str, str]] = ()):
        """One write transaction; nested calls join the outer one (`tables`: see Database.transaction)."""
        return self.db.transaction(tables)

    def snapshot(self):
        """A consistent read of several statements; joins an open transaction."""
        return self.db.snapshot()
