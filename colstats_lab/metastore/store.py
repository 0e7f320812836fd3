"""The metastore: Hive's catalog and column-statistics API over one database (`db/`).

The calls are kept by repositories, one per family of Hive's tables (`repository.py`), each over the metastore's
one database object; `Metastore` composes them and answers each of their public calls under its own name, as
Hive's one client interface does over its stores. Every call runs in one database transaction, or joins the one
opened by `transaction()`, so a command that makes many calls commits all of them or none; commands write
through `apply` (changes as data).
"""
from __future__ import annotations

import os
from collections.abc import Collection

from ..column_statistics.frequent_items import DEFAULT_FREQUENT_ITEMS
from ..storage import is_local, normalized
from . import hive_rows, segments
from .analyze_claims import AutoAnalyzeRepository
from .catalog import CatalogRepository
from .column_stats import ColumnStatisticsRepository
from .db import connect, is_server_url, migrate
from .expectations import ExpectationsRepository, evaluate_commit
from .history import DEFAULT_SKETCHES, HistoryRepository
from .hive_rows import DEFAULT_DB
from .metadata_store import TableMetadataRepository
from .repository import forward
from .row_sketches import RowSketchRepository
from .run_records import RunRepository
from .skewed_info import SkewRepository
from .snapshot_files import SnapshotFilesRepository
from .stats_accuracy import StatsAccuracyRepository
from .transactions import TxnRepository


class Metastore:
    """A Hive-schema metastore at `location`, a SQLite file's path or a PostgreSQL URL (created and migrated on
    open; a server's database must exist). `warehouse` is where a new database keeps its managed tables (by
    default `warehouse` beside a SQLite file, or in the current folder for a server's)."""

    def __init__(self, location: str, warehouse: str | None = None):
        self.db = connect(location)
        self._engine = None
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
        self.sample_seed: int | None = None  # colstats.sample.seed: the row groups a SAMPLE chooses (None: at random)
        self.missing_as_empty = False  # colstats.analyze.missing_as_empty: a gone folder analyzed as empty
        # 64 partitions a statistics segment; a file's segments are built with one value (tests use 1
        # on a new file, to build deep segment trees from a few partitions)
        self.segment_bits = segments.BITS
        self.catalog = CatalogRepository(self)
        self.skews = SkewRepository(self)
        self.column_stats = ColumnStatisticsRepository(self)
        self.accuracy = StatsAccuracyRepository(self)
        self.table_metadata = TableMetadataRepository(self)
        self.txns = TxnRepository(self, on_states_kept=evaluate_commit)
        self.stats_history = HistoryRepository(self, on_states_kept=evaluate_commit)
        self.stats_expectations = ExpectationsRepository(self)
        self.snapshot_files = SnapshotFilesRepository(self)
        self.autoanalyze_claims = AutoAnalyzeRepository(self)
        self.row_sketches = RowSketchRepository(self)
        self.runs = RunRepository(self)
        migrate(self.db)
        with self.snapshot():  # read first: a metastore that has it opens beside a writer holding the file
            made = hive_rows.db_id(self.db, DEFAULT_DB, required=False)
        if not made:
            with self.transaction():
                if not hive_rows.db_id(self.db, DEFAULT_DB, required=False):
                    hive_rows.insert_db(self.db, DEFAULT_DB, self.warehouse, "Default Hive database")

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

    # catalog
    create_database = forward("catalog", CatalogRepository.create_database)
    get_all_databases = forward("catalog", CatalogRepository.get_all_databases)
    get_database_location = forward("catalog", CatalogRepository.get_database_location)
    drop_database = forward("catalog", CatalogRepository.drop_database)
    locations_inside = forward("catalog", CatalogRepository.locations_inside)
    create_table = forward("catalog", CatalogRepository.create_table)
    get_table = forward("catalog", CatalogRepository.get_table)
    get_tables = forward("catalog", CatalogRepository.get_tables)
    table_exists = forward("catalog", CatalogRepository.table_exists)
    drop_table = forward("catalog", CatalogRepository.drop_table)
    alter_table_params = forward("catalog", CatalogRepository.alter_table_params)
    add_partitions = forward("catalog", CatalogRepository.add_partitions)
    get_partition = forward("catalog", CatalogRepository.get_partition)
    get_partitions = forward("catalog", CatalogRepository.get_partitions)
    get_partitions_by_filter = forward("catalog", CatalogRepository.get_partitions_by_filter)
    get_partition_values = forward("catalog", CatalogRepository.get_partition_values)
    get_partition_names_by_values = forward("catalog", CatalogRepository.get_partition_names_by_values)
    find_partition_names = forward("catalog", CatalogRepository.find_partition_names)
    get_partition_params = forward("catalog", CatalogRepository.get_partition_params)
    partitions_holding = forward("catalog", CatalogRepository.partitions_holding)
    changed_rows_summed = forward("catalog", CatalogRepository.changed_rows_summed)
    count_partitions = forward("catalog", CatalogRepository.count_partitions)
    get_partition_names = forward("catalog", CatalogRepository.get_partition_names)
    drop_partition = forward("catalog", CatalogRepository.drop_partition)
    set_partition_locations = forward("catalog", CatalogRepository.set_partition_locations)
    alter_partition_params = forward("catalog", CatalogRepository.alter_partition_params)
    alter_partitions_params = forward("catalog", CatalogRepository.alter_partitions_params)
    refresh_partitioned_table_params = forward("catalog", CatalogRepository.refresh_partitioned_table_params)

    # skews
    alter_table_skew = forward("skews", SkewRepository.alter_table_skew)
    alter_partition_skew = forward("skews", SkewRepository.alter_partition_skew)
    add_skewed_locations = forward("skews", SkewRepository.add_skewed_locations)

    # column_stats
    update_table_column_statistics = forward("column_stats", ColumnStatisticsRepository.update_table_column_statistics)
    store_merged_table_statistics = forward("column_stats", ColumnStatisticsRepository.store_merged_table_statistics)
    update_partition_column_statistics = forward("column_stats", ColumnStatisticsRepository.update_partition_column_statistics)
    set_aggr_stats_for = forward("column_stats", ColumnStatisticsRepository.set_aggr_stats_for)
    columns_with_frequent_items = forward("column_stats", ColumnStatisticsRepository.columns_with_frequent_items)
    get_frequent_items = forward("column_stats", ColumnStatisticsRepository.get_frequent_items)
    set_row_sketches = forward("row_sketches", RowSketchRepository.set_row_sketches)
    carry_row_sketches = forward("row_sketches", RowSketchRepository.carry_row_sketches)
    get_row_sketches = forward("row_sketches", RowSketchRepository.get_row_sketches)
    get_table_column_statistics = forward("column_stats", ColumnStatisticsRepository.get_table_column_statistics)
    get_table_statistics = forward("column_stats", ColumnStatisticsRepository.get_table_statistics)
    get_partition_column_statistics = forward("column_stats", ColumnStatisticsRepository.get_partition_column_statistics)
    get_partitions_statistics = forward("column_stats", ColumnStatisticsRepository.get_partitions_statistics)
    analyzed_partition_columns = forward("column_stats", ColumnStatisticsRepository.analyzed_partition_columns)
    partition_stats_columns = forward("column_stats", ColumnStatisticsRepository.partition_stats_columns)
    segment_statistics = forward("column_stats", ColumnStatisticsRepository.segment_statistics)
    get_aggr_stats_for = forward("column_stats", ColumnStatisticsRepository.get_aggr_stats_for)
    partition_state = forward("column_stats", ColumnStatisticsRepository.partition_state)
    delete_table_column_statistics = forward("column_stats", ColumnStatisticsRepository.delete_table_column_statistics)
    delete_partition_column_statistics = forward("column_stats", ColumnStatisticsRepository.delete_partition_column_statistics)

    # accuracy
    stats_compliance = forward("accuracy", StatsAccuracyRepository.stats_compliance)
    per_column_compliance = forward("accuracy", StatsAccuracyRepository.per_column_compliance)
    stats_compliance_summary = forward("accuracy", StatsAccuracyRepository.stats_compliance_summary)
    column_compliance = forward("accuracy", StatsAccuracyRepository.column_compliance)
    partitions_accuracy = forward("accuracy", StatsAccuracyRepository.partitions_accuracy)
    summary_and_flags = forward("accuracy", StatsAccuracyRepository.summary_and_flags)
    record_analyzed_files = forward("accuracy", StatsAccuracyRepository.record_analyzed_files)
    external_file_changes = forward("accuracy", StatsAccuracyRepository.external_file_changes)

    # table_metadata
    get_table_metadata = forward("table_metadata", TableMetadataRepository.get_table_metadata)
    get_metadata_analysis = forward("table_metadata", TableMetadataRepository.get_metadata_analysis)
    replace_table_metadata = forward("table_metadata", TableMetadataRepository.replace_table_metadata)
    drop_table_metadata = forward("table_metadata", TableMetadataRepository.drop_table_metadata)
    get_metadata_version = forward("table_metadata", TableMetadataRepository.get_metadata_version)
    information_schema = forward("table_metadata", TableMetadataRepository.information_schema)

    # txns
    open_txn = forward("txns", TxnRepository.open_txn)
    heartbeat = forward("txns", TxnRepository.heartbeat)
    abort_expired_txns = forward("txns", TxnRepository.abort_expired_txns)
    allocate_table_write_id = forward("txns", TxnRepository.allocate_table_write_id)
    commit_txn = forward("txns", TxnRepository.commit_txn)
    apply = forward("txns", TxnRepository.apply)
    abort_txn = forward("txns", TxnRepository.abort_txn)
    get_valid_write_ids = forward("txns", TxnRepository.get_valid_write_ids)
    add_txn_components = forward("txns", TxnRepository.add_txn_components)
    table_write_ids = forward("txns", TxnRepository.table_write_ids)
    last_writes = forward("txns", TxnRepository.last_writes)
    table_transactions = forward("txns", TxnRepository.table_transactions)
    txn_state = forward("txns", TxnRepository.txn_state)

    # stats_history
    get_stats_history = forward("stats_history", HistoryRepository.get_stats_history)
    get_latest_partition_states = forward("stats_history", HistoryRepository.get_latest_partition_states)
    keep_top_values = forward("stats_history", HistoryRepository.keep_top_values)
    prune_stats_history = forward("stats_history", HistoryRepository.prune_stats_history)
    thin_stats_history = forward("stats_history", HistoryRepository.thin_stats_history)
    history_bytes = forward("stats_history", HistoryRepository.history_bytes)

    # stats_expectations
    add_expectation = forward("stats_expectations", ExpectationsRepository.add_expectation)
    expectation_results = forward("stats_expectations", ExpectationsRepository.expectation_results)

    # snapshot_files
    replace_snapshot_files = forward("snapshot_files", SnapshotFilesRepository.replace_snapshot_files)
    snapshot_file_states = forward("snapshot_files", SnapshotFilesRepository.snapshot_file_states)
    owner_file_states = forward("snapshot_files", SnapshotFilesRepository.owner_file_states)
    owner_files = forward("snapshot_files", SnapshotFilesRepository.owner_files)
    files_digest = forward("snapshot_files", SnapshotFilesRepository.files_digest)
    theta_sketches = forward("snapshot_files", SnapshotFilesRepository.theta_sketches)
    store_theta_sketches = forward("snapshot_files", SnapshotFilesRepository.store_theta_sketches)

    # autoanalyze_claims
    claim_for_analyze = forward("autoanalyze_claims", AutoAnalyzeRepository.claim_for_analyze)
    release_claims = forward("autoanalyze_claims", AutoAnalyzeRepository.release_claims)
    claims = forward("autoanalyze_claims", AutoAnalyzeRepository.claims)
    open_writes = forward("autoanalyze_claims", AutoAnalyzeRepository.open_writes)
    analyzed_columns = forward("autoanalyze_claims", AutoAnalyzeRepository.analyzed_columns)
    start_autoanalyze_round = forward("autoanalyze_claims", AutoAnalyzeRepository.start_autoanalyze_round)
    end_autoanalyze_round = forward("autoanalyze_claims", AutoAnalyzeRepository.end_autoanalyze_round)
    autoanalyze_rounds = forward("autoanalyze_claims", AutoAnalyzeRepository.autoanalyze_rounds)

    # runs
    keep_run = forward("runs", RunRepository.keep_run)
    get_runs = forward("runs", RunRepository.get_runs)
