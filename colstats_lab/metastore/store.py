"""The metastore: Hive's catalog and column-statistics API over one database (`db/`).

The calls are kept by repositories, one per family of Hive's tables (`repository.py`), each over the metastore's
one database object and built here with the siblings it calls, bottom up: the statistics segments and the
catalog first, transactions, snapshot files and accuracy over the catalog, column statistics over them. The
`Metastore` exposes each repository by name (`metastore.catalog.get_table`, `metastore.column_stats.
get_aggr_stats_for`, `metastore.txns.open_txn`), as pyiceberg's Table exposes `inspect`. Every call runs in one
database transaction, or joins the one opened by `transaction()`, so a command that makes many calls commits
all of them or none; commands write through `apply` (changes as data, `commits.py`).
"""
from __future__ import annotations

import os
from collections.abc import Collection, Sequence

from ..storage import is_local, normalized
from . import commits
from .changes import Change
from .db import connect, is_server_url, migrate
from .repositories.analyze_claims import AutoAnalyzeRepository
from .repositories.catalog import CatalogRepository
from .repositories.column_stats import ColumnStatisticsRepository
from .repositories.expectations import ExpectationsRepository, evaluate_commit
from .repositories.history import HistoryRepository
from .repositories.metadata_store import TableMetadataRepository
from .repositories.row_sketches import RowSketchRepository
from .repositories.run_records import RunRepository
from .repositories.skewed_info import SkewRepository
from .repositories.snapshot_files import SnapshotFilesRepository
from .repositories.stats_accuracy import StatsAccuracyRepository
from .repositories.stats_segments import SegmentRepository
from .repositories.transactions import TxnRepository
from .rows import hive_rows
from .rows.hive_rows import DEFAULT_DB
from .settings import MetastoreSettings


class Metastore:
    """A Hive-schema metastore at `location`, a SQLite file's path or a PostgreSQL URL (created and migrated on
    open; a server's database must exist). `warehouse` is where a new database keeps its managed tables (by
    default `warehouse` beside a SQLite file, or in the current folder for a server's).

    Its settings (`metastore.settings`, Hive's and the lab's, which `lab.set` changes) are one object every
    repository reads; a setting is never an attribute of the Metastore itself, which takes no new attribute
    (so a stale `metastore.txn_stats_enabled = False` fails instead of changing nothing)."""

    __slots__ = ("db", "_engine", "path", "settings", "segments", "catalog", "skews", "txns", "snapshot_files",
                 "accuracy", "column_stats", "table_metadata", "stats_history", "stats_expectations",
                 "autoanalyze_claims", "row_sketches", "runs")

    def __init__(self, location: str, warehouse: str | None = None):
        db = self.db = connect(location)
        self._engine = None
        # a SQLite file's path, or a server's URL without its password: where a person is told it is
        self.path = db.display_url
        warehouse = warehouse or ("warehouse" if is_server_url(location) else
                                  os.path.join(os.path.dirname(self.path), "warehouse"))
        settings = self.settings = MetastoreSettings(
            warehouse=os.path.abspath(warehouse) if is_local(warehouse) else normalized(warehouse))
        self.segments = SegmentRepository(db, settings)
        self.catalog = CatalogRepository(db, settings, self.segments)
        self.skews = SkewRepository(db, settings, self.catalog)
        self.txns = TxnRepository(db, settings, self.catalog)
        self.snapshot_files = SnapshotFilesRepository(db, settings, self.catalog)
        self.accuracy = StatsAccuracyRepository(db, settings, self.catalog, self.txns, self.snapshot_files,
                                                self.segments)
        self.catalog.reader_rule = self.accuracy.strip_for_reader
        self.column_stats = ColumnStatisticsRepository(db, settings, self.catalog, self.txns, self.accuracy,
                                                       self.segments)
        self.table_metadata = TableMetadataRepository(db, settings, self.catalog)
        self.stats_history = HistoryRepository(db, settings, self.catalog, on_states_kept=evaluate_commit)
        self.stats_expectations = ExpectationsRepository(db, settings, self.catalog)
        self.autoanalyze_claims = AutoAnalyzeRepository(db, settings, self.txns)
        self.row_sketches = RowSketchRepository(db, settings)
        self.runs = RunRepository(db, settings)
        migrate(db)
        with self.snapshot():  # read first: a metastore that has it opens beside a writer holding the file
            made = hive_rows.db_id(db, DEFAULT_DB, required=False)
        if not made:
            with self.transaction():
                if not hive_rows.db_id(db, DEFAULT_DB, required=False):
                    hive_rows.insert_db(db, DEFAULT_DB, settings.warehouse, "Default Hive database")

    def __getattr__(self, name: str):
        # only names that are no attribute get here: one line naming where a former flat call lives now
        for attribute, repository in _REPOSITORIES.items():
            if not name.startswith("_") and callable(getattr(repository, name, None)):
                raise AttributeError(f"Metastore has no {name}: it is metastore.{attribute}.{name}")
        if name in MetastoreSettings.__dataclass_fields__:
            raise AttributeError(f"Metastore has no {name}: it is metastore.settings.{name}")
        raise AttributeError(f"'Metastore' object has no attribute {name!r}")

    @property
    def warehouse(self) -> str:
        """Where a new database keeps its managed tables."""
        return self.settings.warehouse

    @property
    def url(self) -> str:
        """A SQLAlchemy URL of the database (for jupysql's `%sql`)."""
        return self.db.url

    @property
    def engine(self):
        """A SQLAlchemy engine on the database, made on first use: `metastore = lab.metastore.engine`, then
        `%sql metastore` (jupysql takes an engine variable; it does not expand `{...}` in a connection string)."""
        if self._engine is None:
            import sqlalchemy

            self._engine = sqlalchemy.create_engine(self.url)
        return self._engine

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
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

    def apply(self, changes: Sequence[Change], txn_id: int | None = None) -> list:
        """Applies a command's `changes` in one database transaction, committing Hive transaction `txn_id`
        with them (`commits.apply`); returns what each change returned."""
        return commits.apply(self, changes, txn_id)


# the repositories by the Metastore's attribute for each, for the message of a former flat name
_REPOSITORIES: dict[str, type] = {
    "catalog": CatalogRepository, "segments": SegmentRepository, "skews": SkewRepository, "txns": TxnRepository,
    "snapshot_files": SnapshotFilesRepository, "accuracy": StatsAccuracyRepository,
    "column_stats": ColumnStatisticsRepository, "table_metadata": TableMetadataRepository,
    "stats_history": HistoryRepository, "stats_expectations": ExpectationsRepository,
    "autoanalyze_claims": AutoAnalyzeRepository, "row_sketches": RowSketchRepository, "runs": RunRepository}
