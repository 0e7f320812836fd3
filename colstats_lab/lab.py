"""Lab: the one object a user holds. It wires the Spark engine, the metastore and the statements."""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Any, Iterator

import pandas as pd
from pyspark.sql import DataFrame, SparkSession

from . import engine, frames
from .analyze.autoanalyze import worker_queue
from .analyze.stale import staleness_frame
from .interop import exchange
from .metastore import (
    DEFAULT_DB,
    InvalidInputException,
    Metastore,
    Partition,
    Table,
    ValidWriteIdList,
)
from .metastore.changes import AddExpectation
from .metastore.levels import TABLE_LEVEL
from .column_statistics.names import split_table_name
from .metastore.table_metadata import LEVELS, level_depth
from .column_statistics.frequent_items import MAX_FREQUENT_ITEMS
from .metastore.history import DEFAULT_KEEP
from .column_statistics.quantiles import Distribution
from .result import Result
from .skew import DEFAULT_MODE, SkewReport
from .skew.join import ShuffleSkewReport
from .sql import parse
from .sql.statements import Statement
from .commands import execute, reads
from .commands import explain as explain_command
from .commands.plan_tables import PLAN_STATISTICS, PlanTables, drop_plan_tables
from .commands import analyze as analyze_commands
from .commands import catalogs
from .commands import join_skew as join_skew_commands
from .commands import skew as skew_commands
from .commands import tables as table_commands
from .storage import SPARK_PREFIXES, STORAGE_LISTING, format_prefixes, list_through_spark, parse_prefixes
from .pruning import PruningReport, StatsAnswer
from .plans import PlanReport
from .tables import kind_of, read_snapshot
from .tables.snapshot import PartitionFiles
from .tables.writer import WriteResult
from .transaction import HEARTBEAT_INTERVAL_S, Transaction

_DEFAULT_OPTIONS = {"hive.txn.heartbeat.interval": HEARTBEAT_INTERVAL_S, "hive.compute.query.using.stats": True,
                    "hive.stats.column.autogather": True, STORAGE_LISTING: "auto",
                    # list bucketing on by default (Hive's defaults are false: it is the lab's point)
                    "hive.optimize.listbucketing": True, "hive.mapred.supports.subdirectories": True,
                    # Drill's metastore options, with Drill's defaults
                    "metastore.enabled": False, "metastore.metadata.store.depth_level": "ROW_GROUP",
                    "metastore.metadata.use_schema": True, "metastore.metadata.use_statistics": True,
                    "metastore.metadata.fallback_to_file_metadata": True, "metastore.retrieval.retry_attempts": 5,
                    "colstats.history.keep": DEFAULT_KEEP, "colstats.history.max_bytes": None,
                    # a query's lab tables planned by Spark with the lab's statistics where they can be
                    PLAN_STATISTICS: True}
_BOOLEAN_OPTIONS = (PLAN_STATISTICS, "hive.txn.stats.enabled", "hive.compute.query.using.stats", "hive.stats.column.autogather",
                    "hive.metastore.stats.ndv.densityfunction", "hive.stats.kll.enable",
                    "hive.optimize.listbucketing", "hive.mapred.supports.subdirectories",
                    "metastore.enabled", "metastore.metadata.use_schema", "metastore.metadata.use_statistics",
                    "metastore.metadata.fallback_to_file_metadata", "colstats.history.enabled")
# settings the metastore itself reads, as Hive's metastore-side configuration
_METASTORE_OPTIONS = {"hive.txn.stats.enabled": "txn_stats_enabled", "hive.txn.timeout": "txn_timeout_s",
                      "hive.metastore.stats.ndv.densityfunction": "ndv_density_function",
                      "hive.stats.kll.enable": "kll_enabled", "colstats.history.enabled": "history_enabled",
                      "colstats.history.sketches": "history_sketches", "colstats.frequent.items": "frequent_items"}
DEFAULT_HOME = ".colstats"
ENV_HOME = "COLSTATS_HOME"
ENV_METASTORE = "COLSTATS_METASTORE"


def lab_home(home: str | None = None) -> str:
    """The folder a Lab on `home` uses: `home`, else $COLSTATS_HOME, else ./.colstats."""
    return os.path.abspath(home or os.environ.get(ENV_HOME) or DEFAULT_HOME)


def metastore_location(home: str, metastore: str | None = None) -> str:
    """Where a Lab on `home` keeps its metastore: `metastore` (a PostgreSQL URL, a team's, or a SQLite file),
    else $COLSTATS_METASTORE, else the SQLite file `home/metastore.db`."""
    return metastore or os.environ.get(ENV_METASTORE) or os.path.join(home, "metastore.db")


class Lab:
    """A workbench over one metastore and warehouse. The metastore is the SQLite file `home/metastore.db`, or
    `metastore` (else $COLSTATS_METASTORE): `postgresql://user:password@host:5432/database`, a team's, shared
    by its notebooks, workers and dashboards. The warehouse is `home/warehouse`, or `warehouse`: where a new
    metastore's databases keep their managed tables, an object store's prefix too.

    Spark starts on first use: `spark` (a session of your own), `master` (a master URL) or
    `remote` (a Spark Connect URL, `sc://host:port`); otherwise `COLSTATS_SPARK_REMOTE`,
    `COLSTATS_SPARK_MASTER`, or an embedded `local[*]` session.
    """

    _current: "Lab | None" = None

    def __init__(self, home: str | None = None, spark: SparkSession | None = None, master: str | None = None,
                 remote: str | None = None, spark_conf: dict[str, str] | None = None, warehouse: str | None = None,
                 metastore: str | None = None):
        self.home = lab_home(home)
        os.makedirs(self.home, exist_ok=True)
        # where a new metastore's databases keep their managed tables: home/warehouse, or an object store's prefix
        self.metastore = Metastore(metastore_location(self.home, metastore),
                                   warehouse or os.path.join(self.home, "warehouse"))
        self._spark = spark
        self._master, self._remote, self._spark_conf = master, remote, spark_conf
        self.current_db = DEFAULT_DB
        self._options: dict[str, Any] = {}
        self.catalogs: dict[str, catalogs.AttachedCatalog] = {}
        self.plan_tables = PlanTables()
        # an object store this process has no credentials for is listed through this lab's Spark
        list_through_spark(lambda: self.spark, "auto")
        Lab._current = self

    @classmethod
    def current(cls, home: str | None = None) -> "Lab":
        """The last Lab created, or a new one on `home` (default $COLSTATS_HOME or ./.colstats)."""
        return cls._current or cls(home=home)

    @classmethod
    def start_spark_early(cls) -> "engine.BackgroundStart | None":
        """Starts, on a thread, the Spark session the magics' lab will ask for: the last Lab created's,
        or a default Lab's (without creating that Lab). A Lab that then asks for other settings gets
        its own session; see engine.build_session."""
        lab = cls._current
        if lab is None:
            return engine.start_in_background(lab_home())
        if lab._spark is None:
            return engine.start_in_background(lab.home, lab._master, lab._remote, lab._spark_conf)
        return None

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            self._spark = engine.build_session(self.home, self._master, self._remote, self._spark_conf)
            if self._options.get(SPARK_PREFIXES):  # set before Spark started: Spark's reads take it from the session
                self._spark.conf.set(SPARK_PREFIXES, self._options[SPARK_PREFIXES])
        return self._spark

    @property
    def spark_started(self) -> bool:
        """Whether this lab's Spark session runs already (reading `spark` starts it)."""
        return self._spark is not None

    @property
    def metastore_path(self) -> str:
        """Where the metastore is: its SQLite file, or its server's URL without the password."""
        return self.metastore.path

    @property
    def metastore_url(self) -> str:
        """A SQLAlchemy URL of the metastore, for `%sql {lab.metastore_url}`."""
        return self.metastore.url

    @property
    def metastore_engine(self):
        """A SQLAlchemy engine on the metastore: `metastore = lab.metastore_engine` then `%sql metastore`
        (jupysql takes an engine variable; it does not expand `{...}` in connection strings)."""
        if getattr(self, "_engine", None) is None:
            import sqlalchemy

            self._engine = sqlalchemy.create_engine(self.metastore_url)
        return self._engine

    # ---- statements ---------------------------------------------------------------------

    def sql(self, text: str, txn: Transaction | None = None, as_of=None) -> Result:
        """Runs one or more `;`-separated statements; returns the last one's Result.

        Raises ParseError (with a caret under the bad token) before anything runs, and the
        metastore's exceptions (NoSuchObjectException, InvalidInputException, ...) naming what
        is wrong; each statement commits in one metastore transaction or not at all. With `txn`,
        statements read its snapshot and their statistics are stored when it commits. With `as_of`
        (a write ID, or a time: datetime or ISO text, UTC when naive), `DESCRIBE [FORMATTED] t
        [PARTITION (...)] col` answers from the statistics kept as they stood then (`lab.history`).
        """
        if as_of is not None:
            return reads.describe_as_of(self, self.parse(text), as_of)
        results = [self.run(stmt, txn) for stmt in self.parse(text)]  # parse never returns none
        return results[-1]

    def parse(self, text: str) -> list[Statement]:
        """The `;`-separated statements of `text`, parsed and not run; ParseError with its caret."""
        if not isinstance(text, str):
            raise InvalidInputException(f"lab.sql takes the text of statements, not {type(text).__name__}")
        return parse(text)

    def run(self, stmt: Statement, txn: Transaction | None = None) -> Result:
        """Runs one parsed statement (`parse`'s), as `sql` runs each of its statements."""
        return execute(self, stmt, txn)

    def transaction(self) -> Transaction:
        """A transaction: `with lab.transaction() as txn:` commits on success and aborts on an exception."""
        return Transaction(self.metastore, float(self.get("hive.txn.heartbeat.interval")))

    @contextmanager
    def txn_scope(self, txn: Transaction | None) -> Iterator[Transaction]:
        """The given transaction, or a new one that commits when the block succeeds."""
        if txn is not None:
            yield txn
            return
        with self.transaction() as own:
            yield own

    def get(self, key: str) -> Any:
        """A setting: `hive.txn.stats.enabled`, `hive.txn.timeout` (s), `hive.txn.heartbeat.interval` (s),
        `hive.compute.query.using.stats`, `hive.stats.column.autogather`, `hive.stats.kll.enable`,
        `hive.metastore.stats.ndv.densityfunction`, and Drill's `metastore.enabled`,
        `metastore.metadata.store.depth_level`, `metastore.metadata.use_schema`,
        `metastore.metadata.use_statistics`, `metastore.metadata.fallback_to_file_metadata`,
        `metastore.retrieval.retry_attempts`, `colstats.history.keep` (states of each column's
        statistics history `clean()` keeps), `colstats.storage.spark_prefixes` (what Spark reads for
        an object store's prefix: `s3://lake/=file:///mnt/lake/`, pairs separated by commas, or a dict), and
        `colstats.storage.listing` (`auto`: object stores this process has no credentials for are listed through
        Spark; `store`: always through the store's client; `spark`: always through Spark)."""
        if key in _METASTORE_OPTIONS:
            return getattr(self.metastore, _METASTORE_OPTIONS[key])
        return self._options.get(key, _DEFAULT_OPTIONS.get(key))

    def set(self, key: str, value: Any) -> None:
        """Changes a setting for this lab (as Hive's SET does for a session); raises
        InvalidInputException naming the key for a value it cannot take."""
        if not isinstance(key, str) or not key.strip():
            raise InvalidInputException(f"a setting's key is a name such as hive.txn.timeout, not {key!r}")
        if key in _BOOLEAN_OPTIONS:
            value = _as_bool(key, value)
        elif key == "metastore.metadata.store.depth_level":
            value = LEVELS[level_depth(str(value))] if str(value).upper() != "ALL" else "ALL"
        elif key in ("metastore.retrieval.retry_attempts", "colstats.history.keep"):
            value = _as_count(key, value)
        elif key == "colstats.history.sketches":
            value = max(1, _as_count(key, value))  # the latest state keeps its sketches: it is the one in force
            if value < self.metastore.history_sketches:  # a commit thins only the cells it touches
                self.metastore.thin_stats_history(value)
        elif key == "colstats.frequent.items":
            value = _as_count(key, value)
            if value > MAX_FREQUENT_ITEMS:
                raise InvalidInputException(f"{key} takes at most {MAX_FREQUENT_ITEMS:,} (Spark's bound on the values "
                                            f"a frequent-items sketch tracks), not {value:,}")
        elif key == "colstats.history.max_bytes":
            value = None if value is None else _as_count(key, value)
        elif key in ("hive.txn.timeout", "hive.txn.heartbeat.interval"):
            value = _as_seconds(key, value)
        elif key == STORAGE_LISTING:
            list_through_spark(lambda: self.spark, str(value))
        elif key == SPARK_PREFIXES:
            value = format_prefixes(parse_prefixes(value))
            if self._spark is not None:
                self._spark.conf.set(key, value)
        if key in _METASTORE_OPTIONS:
            setattr(self.metastore, _METASTORE_OPTIONS[key], value)
        else:
            self._options[key] = value

    # ---- data ---------------------------------------------------------------------------

    def resolve(self, name: str | Table) -> Table:
        """The metastore's table for `name` (`table` in the current database, or `db.table`), read now; a
        Table is read again by its name. Raises NoSuchObjectException naming an unknown one."""
        if isinstance(name, Table):
            return self.metastore.get_table(name.dbName, name.tableName)
        in_catalog = catalogs.split_catalog_name(self, name)
        if in_catalog is not None:
            return catalogs.catalog_table(self, in_catalog)
        return catalogs.followed(self, self.metastore.get_table(*split_table_name(name, self.current_db)))

    def write(self, name: str, data, partition: dict | None = None, mode: str = "append",
              txn: Transaction | None = None) -> WriteResult:
        """Writes a Spark or pandas DataFrame into a managed table under the transaction's write ID
        (a transaction of its own when none is given).

        `partition` gives every partition key a value (static); without it the data carries the
        key columns (dynamic partitions). `mode` is "append" or "overwrite" (of the partitions written).
        """
        return table_commands.write(self, name, data, partition, mode, txn)

    def skew(self, table: str, columns: list[str] | str, partition: dict | str | None = None, k: int = 20,
             min_share: float = 0.02, mode: str = DEFAULT_MODE, max_keys: int = 10,
             max_items: int = 10_000) -> SkewReport:
        """A skew report of `columns` (heavy hitters per partition and for the table, drift across partitions,
        the values to declare skewed and the ALTER statement), from one Spark aggregation over the current
        snapshot (of one partition with `partition`). `mode` "exact" counts every value; "approx" uses a
        frequent-items sketch whose counts are within 2 * rows / max_items. Raises NoSuchObjectException
        for an unknown column, InvalidInputException for a partition key."""
        return skew_commands.skew(self, table, columns, partition, k, min_share, mode, max_keys, max_items)

    def join_skew(self, left: str, left_key: str | list[str], right: str, right_key: str | list[str],
                  where: str | None = None, how: str = "inner", run: bool = False) -> ShuffleSkewReport:
        """The shuffle of `left JOIN right ON left_key = right_key` predicted before it runs: each hot key's
        rows on both sides and output rows, the shuffle partition Spark hashes it to, each task's predicted
        rows (`.tasks`), whether AQE's skew join would split it, and a one-sentence `.recommendation`. From
        statistics (frequent values, rows, NULLs and NDV of the partitions `where` keeps) where they are
        accurate now, else counted by one aggregation per side. `where` chooses partitions by their keys
        (qualify a key both tables have: `orders.ds = '2026-11-21'`); `how` is inner, left, right or full;
        `run=True` also counts each task's rows as Spark places them (`.tasks.actual_rows`). A composite key
        (a list of columns on each side) is counted by one aggregation per side. Raises
        NoSuchObjectException for an unknown table or column, InvalidInputException for a bad argument."""
        return join_skew_commands.join_skew(self, left, left_key, right, right_key, where, how, run)

    def group_skew(self, table: str, key: str, where: str | None = None, run: bool = False) -> ShuffleSkewReport:
        """The shuffle of `groupBy(key)` predicted from statistics, as `join_skew` predicts a join's: each hot
        key's rows and task, each task's rows before map-side combining (`.tasks`; `run=True` adds
        `actual_rows` as Spark places them) and a `.recommendation`."""
        return join_skew_commands.group_skew(self, table, key, where, run)

    def staleness(self, table: str):
        """Per partition (or for the table): rows, rows changed since every column's statistics were
        last accurate, that fraction (None: unknown, e.g. an external table's files changed), whether
        the statistics are accurate now and why not. No Spark job."""
        return staleness_frame(self.metastore, self.resolve(table))

    def analyze_stale(self, table: str, threshold: float = 0.3, txn: Transaction | None = None) -> Result:
        """Analyzes every column of the partitions (or the table) whose statistics are not accurate and
        whose rows changed by `threshold` or more since they were (Impala's rule of thumb, 30 %), or by
        an unknown amount; all of them in one Spark job, one transaction. `.details` (StaleAnalysis) has
        the staleness frame before, the partitions chosen and the ANALYZE outcome."""
        return analyze_commands.analyze_stale(self, table, threshold, txn)

    def autoanalyze(self, databases: list[str] | str | None = None, mode: str = "all", threshold: float = 0.3,
                    budget: str | float = "15m", columns: str = "all") -> Result:
        """One round of auto-analyze (`colstats-lab autoanalyze` runs them on a schedule): over the tables of
        `databases` (all by default) not marked `skip.stats.autoupdate=true`, the partitions whose statistics
        are not accurate and whose rows changed by `threshold` or more (any change where rows cannot be
        counted; never analyzed too, in mode "all"), most stale first, one ANALYZE a table within the
        `budget` ("15m", "90s" or seconds); mode "existing" (or columns "analyzed") refreshes only the columns
        analyzed before. Partitions with an open write wait for it. `details` is the round (`.due`,
        `.analyzed`, `.left`, `.held_back`, `to_pandas()`)."""
        return analyze_commands.autoanalyze(self, databases, mode, threshold, budget, columns)

    def autoanalyze_rounds(self, limit: int = 10) -> list[dict]:
        """The latest auto-analyze rounds any worker ran on this metastore, newest first (what each did)."""
        return self.metastore.autoanalyze_rounds(limit)

    def autoanalyze_queue(self):
        """What the next auto-analyze round would analyze, most stale first, under the options of the latest
        round any worker ran, with those options: (options, due); None when no worker ever ran. No Spark."""
        return worker_queue(self.metastore)

    def partition(self, table: str, partition: dict | str) -> Partition:
        """One partition of a table, by name (`ds=2026-11-21/hr=3`) or by a dict giving every key a value;
        raises NoSuchObjectException naming it, InvalidInputException for a spec that is not one."""
        return reads.partition(self, table, partition)

    def relayout(self, name: str, partition: dict | str | None = None) -> list[WriteResult]:
        """Rewrites partitions (all, a spec dict, or a name like `ds=2026-11-21`) under the table's current
        skew spec, as one transaction of overwrites: list-bucketing directories after `ALTER TABLE ...
        SKEWED BY ... STORED AS DIRECTORIES`, flat files after `NOT STORED AS DIRECTORIES`."""
        return table_commands.relayout(self, name, partition)

    def table(self, name: str, snapshot: ValidWriteIdList | None = None, txn: Transaction | None = None) -> DataFrame:
        """The table's data as a Spark DataFrame: exactly the files the snapshot admits (the given
        one, the transaction's, or the current one)."""
        table, parts = self.snapshot_parts(name, snapshot, txn)
        return read_snapshot(self.spark, table, parts)

    def snapshot_parts(self, name: str, snapshot: ValidWriteIdList | None = None,
                       txn: Transaction | None = None, partitions: list[Partition] | None = None
                       ) -> tuple[Table, list[PartitionFiles]]:
        """The table and, per partition (all, or those given), the directories and files the snapshot
        admits (no Spark job)."""
        return reads.snapshot_parts(self, name, snapshot, txn, partitions)

    def planned_read(self, name: str, where, alias: str | None = None, txn: Transaction | None = None
                     ) -> tuple[Table, list[PartitionFiles], PruningReport]:
        """What a SELECT over one table with the condition `where` reads: the partitions its key terms keep
        are chosen in the metastore first, only those are listed, then every pruning level decides."""
        return reads.planned_read(self, name, where, alias, txn)

    def stats_answer(self, query: str | Any, txn: Transaction | None = None) -> StatsAnswer:
        """Whether statistics answer `query` without a scan (`.frame`; None: Spark runs it) and why, for the
        snapshot the query reads (`hive.compute.query.using.stats` must be on); no Spark job."""
        return reads.stats_answer(self, query, txn)

    def explain(self, query: str, txn: Transaction | None = None, run: bool = False) -> PlanReport:
        """How Spark plans `query` (any query over lab tables, Spark's catalog tables and attached catalogs'):
        `.operators`, one row per operator of the optimized plan, root first (node, estimated_rows and
        estimated_bytes under the session's settings, actual_rows, q_error, statistics: whose figures a scan
        had, cause: why an operator is off by 10x or more) and `.fixes`, what to run about it. With `run`, the
        query runs once, under the session's settings but for the adaptive rules that drop operators (they would
        drop the metrics of what lies above an empty stage), while its plan is read, and each operator's rows
        are counted from its metrics. A SELECT over one lab table gives a
        PruningReport, a PlanReport with what pruning reads too: a decision, the rows and bytes of every
        segment, partition, list-bucketing directory, file and row group, and `estimated_rows`, the rows its
        WHERE keeps by the lab's statistics accurate for the reader (`.estimate.how` says what it used;
        `actual_rows` once run); it starts no Spark, so its operators come with `run` or once Spark runs.
        Raises ParseError, InvalidInputException for a statement that is not a query, QueryError when Spark
        cannot plan it."""
        return explain_command.explain(self, query, txn, run)

    def metadata(self, name: str, level: str | None = None) -> pd.DataFrame:
        """The table's metadata from its last `ANALYZE ... REFRESH METADATA` as a DataFrame (one row per
        unit and column; `level` keeps one level, by Drill's name: TABLE, SEGMENT, PARTITION, FILE or
        ROW_GROUP, any case); raises NoSuchObjectException if it has none, InvalidInputException naming
        an unknown level."""
        return reads.metadata(self, name, level)

    def metadata_changes(self, name: str) -> tuple[list[str], list[str]] | None:
        """The files added or rewritten, and those removed, since the table's last REFRESH METADATA (both
        empty: its metadata is up to date, as Drill's check finds it); None when it has none. No Spark."""
        return reads.metadata_changes(self, name)

    def tables_frame(self) -> pd.DataFrame:
        """Every table of every database at a glance, the stalest first (the dashboard's landing). No Spark."""
        return frames.tables_frame(self.metastore)

    def stats_level(self, name: str, level: str = TABLE_LEVEL) -> frames.StatsLevel:
        """One level (the table, or a partition by name) as the statistics view shows it: a row per column,
        its rows and basic parameters read now, and its rows changed since analyze. No Spark."""
        return frames.stats_level(self.metastore, self.resolve(name), level)

    def distribution(self, name: str, column: str, partition: str | None = None) -> Distribution | None:
        """The column's KLL sketch (`hive.stats.kll.enable`) at the table level or in one partition, to ask
        for quantiles, ranks and quartiles (values in days for dates, microseconds for timestamps); None
        where none was gathered. No Spark."""
        return frames.distribution(self.metastore, self.resolve(name), column, partition)

    def quartiles(self, name: str, column: str, limit: int = 60) -> pd.DataFrame:
        """Per partition (the last `limit` by name) its rows and the column's min, 5th percentile, Q1, median,
        Q3, 95th percentile and max from its sketch, in the column's type, quartiles as Hive defines them.
        No Spark."""
        return frames.quartiles_frame(self.metastore, self.resolve(name), column, limit)

    def history(self, name: str, column: str, partition: str | None = None, source: str = "statistics"
                ) -> pd.DataFrame:
        """Every kept state of a column's statistics at the table level or in one partition (by name), oldest
        first: when it was stored (UTC), by which transaction and write ID and why, the rows it describes,
        nulls, null fraction, NDV, min, max, quartiles, and the top values (value, count) where a skew report
        counted the rows the state describes (`lab.skew` of that column, its statistics accurate then), and
        the PSI against the state before. The metastore keeps each state as it is stored (writes, ANALYZE,
        merges); `lab.clean()` keeps the last `colstats.history.keep` per cell. With `source="metadata"`, the
        states each REFRESH METADATA kept (its TABLE unit and each partition's). No Spark."""
        return frames.history_frame(self.metastore, self.resolve(name), column, partition, source)

    def across_partitions(self, name: str, column: str, limit: int = 365) -> pd.DataFrame:
        """A column's latest kept state in each of the table's last `limit` partitions by name, in name
        order: `history`'s columns with the partition first, and `psi` against the partition before (a day
        against the day before, for daily partitions). No Spark."""
        table = self.resolve(name)
        if not table.is_partitioned:
            raise InvalidInputException(f"{table.qualified_name} is not partitioned: lab.history shows its "
                                        "statistics over time")
        return frames.across_partitions_frame(self.metastore, table, column, limit)

    def compare(self, name: str, then, now=None, source: str = "statistics") -> pd.DataFrame:
        """What changed in the table's statistics between two moments, per partition and column, from the
        kept states alone: `then` and `now` are write IDs (int) or times (datetime or ISO text, UTC when
        naive); `now` None is the latest. Columns: the null fraction then, now and its change, the NDV and
        its relative change, min and max and whether a new one appeared, the PSI of the two KLL sketches (or,
        for strings, of the top values skew reports kept), and the heavy hitters entering and leaving
        (column_statistics/drift.py); `source="metadata"` compares the states REFRESH METADATA kept. No Spark."""
        return frames.compare_frame(self.metastore, self.resolve(name), then, now, source)

    def expect(self, name: str, column: str, **rules) -> pd.DataFrame:
        """Stores rules on a column's statistics, checked from statistics alone (no scan) on every state the
        history keeps of it from now on, inside the commit that stores it (each write and ANALYZE): `nulls_below`
        (a null fraction), `ndv_between` ((low, high)), `psi_below` (against the cell's previous state, or a
        partition's first state against the partition before it), `min_at_least`, `max_at_most`. Checks
        them at once on each partition's and the table's latest state; returns those outcomes (the frame of
        `lab.expectations`). Raises InvalidInputException naming an unknown or malformed rule."""
        table = self.resolve(name)
        expectation_id = self.metastore.apply([AddExpectation(table, column, tuple(rules.items()))])[0]
        return frames.expectations_frame(self.metastore, table, expectation_id)

    def expectations(self, name: str) -> pd.DataFrame:
        """Every outcome of the table's rules (`lab.expect`), oldest state first: rule, threshold, the state
        checked (partition, write ID, when stored), the figure and whether it passed. No Spark."""
        return frames.expectations_frame(self.metastore, self.resolve(name))

    def find_partitions(self, name: str, text: str = "", limit: int = 50) -> tuple[list[str], int]:
        """The table's partition names holding `text`, at most `limit`, and how many hold it."""
        table = self.resolve(name)
        if not table.is_partitioned:
            return [], 0
        return self.metastore.find_partition_names(table.dbName, table.tableName, text, limit)

    def freshness(self, name: str) -> pd.DataFrame:
        """Per partition and column: whether its statistics are accurate for a reader now (None: never
        analyzed) and why not (the freshness view's heat map). No Spark."""
        return frames.freshness_frame(self.metastore, self.resolve(name))

    def freshness_basis(self, name: str) -> str:
        """What proves the table's statistics fresh: write IDs, each file's ETag (an object store), size and
        modification time (a local directory, or an object store listed through Spark without credentials), or
        the snapshot of an Iceberg or Delta table. No Spark."""
        return kind_of(self.resolve(name)).freshness_basis(self.resolve(name))

    def transactions(self, name: str, limit: int = 200) -> pd.DataFrame:
        """The latest `limit` transactions that took a write ID of the table, newest first, with what they
        wrote and what they are still the statistics writer of."""
        return frames.transactions_frame(self.metastore, self.resolve(name), limit)

    def information_schema(self, name: str, view: str, limit: int = 500) -> pd.DataFrame:
        """The table's rows of Drill's INFORMATION_SCHEMA `view` (TABLES, COLUMNS or PARTITIONS)."""
        table = self.resolve(name)
        return pd.DataFrame(self.metastore.information_schema(table.dbName, table.tableName, view, limit))

    def stats_frame(self, name: str) -> pd.DataFrame:
        """Every statistic of the table as a tidy DataFrame: one row per partition and column (partition
        None for the table level), with whether each is accurate now and why not. No Spark."""
        return frames.stats_frame(self.metastore, self.resolve(name))

    def analyze_frame(self, frame, by: list[str] | str | None = None) -> pd.DataFrame:
        """Statistics of any DataFrame (Spark's, or pandas' brought into Spark) by ANALYZE's one-pass
        aggregation: stats_frame's columns, one row per column, or per value of the `by` columns and
        column. Stored nowhere: a DataFrame has no files or writes to judge freshness by."""
        return analyze_commands.analyze_frame(self, frame, by)

    def report(self, name: str, path: str | None = None) -> dict | str:
        """The table's report: with a path ending .html, a standalone page of its statistics and their
        freshness (plotly inlined: no server, no network); ending .json, the same as data. Writes the
        file and returns its path; without a path, returns the data. No Spark."""
        return reads.report(self, name, path)

    def snapshot(self, name: str) -> ValidWriteIdList:
        table = self.resolve(name)
        return self.metastore.get_valid_write_ids(table.dbName, table.tableName)

    def register_external(self, name: str, path: str, format: str = "parquet",
                          partition_types: dict[str, str] | None = None) -> Table:
        """Registers existing Parquet files (with `k=v` partition directories) as an external table; with
        `format="delta"`, the Delta table at `path`; with `format="iceberg"`, the Iceberg table of the
        metadata file `path` (read-only: pinned to the snapshot that file names).

        Partition key types are int when every value is an integer, else string, unless
        `partition_types` says otherwise (a format's tables carry their own). Basic stats count files and
        bytes; rows stay unknown (numRows 0, no accuracy flag) until ANALYZE, as Hive leaves loaded files.
        A Delta or Iceberg table is followed to its current snapshot whenever the lab uses it: statistics
        of partitions a later commit changed are stale, and the reason names the commit.
        """
        return table_commands.register_external(self, name, path, format, partition_types)
    # ---- attached catalogs ----------------------------------------------------------------

    def attach(self, name: str, uri: str | dict) -> None:
        """Attaches the Hive Metastore at `uri` (`thrift://host:9083`), or the Iceberg catalog pyiceberg opens
        with the properties `uri` (a dict: `load_catalog(name, **uri)`), as catalog `name`: its tables are then
        `name.db.t` in statements (`SHOW TABLES IN name.db`, `DESCRIBE FORMATTED name.db.t c`, `ANALYZE TABLE
        name.db.t ...`) and methods. The lab reads their schema, partitions and locations from the catalog (an
        HMS partition's location only when it is used; an Iceberg table's current snapshot on each use), their
        rows with Spark, and keeps their statistics as an external table's in the lab database `name_db`.
        Raises MetastoreUnreachable naming an HMS's URI that does not answer."""
        catalogs.attach(self, name, uri)

    def publish(self, table: str) -> Result:
        """Writes the lab's statistics of an attached HMS table (`hms.db.t`, or its lab name) into that HMS:
        partition and table column statistics, `numRows`/`totalSize`/`numFiles`, `COLUMN_STATS_ACCURATE`
        and Spark's `spark.sql.statistics.*` parameters, of what is accurate now only; what it published
        before and knows to be stale is withdrawn. Batched calls; nothing written when nothing changed.
        `.details` is a PublishOutcome (partitions published, withdrawn, unchanged, write calls).

        For an attached Iceberg catalog's table (`ice.db.t`): partitions whose files changed since they were
        analyzed are analyzed first, then a Puffin file for the current snapshot with one theta-sketch blob per
        column (its `ndv` property) is written and registered on that snapshot, which Trino and Spark's Iceberg
        scan read. Each partition's sketch is kept, so only partitions whose files changed are scanned again.
        `.details` is a PuffinOutcome."""
        return catalogs.publish(self, table)

    def engines(self, table: str, partition: str | None = None) -> pd.DataFrame:
        """What each engine sees of an attached HMS table's statistics: one row per column at the table level
        (`partition` None), or per partition and column (a partition name, or "*" for every partition): the
        lab's figures and whether they are accurate (`lab_*`), the column statistics the HMS holds and who
        wrote them (`hms_*`), Spark's parameters' figures (`spark_*`), whether the HMS's agree with the lab's
        (`agrees`), and whether the lab's evidence shows them `stale`, with the `reason`.

        For an Iceberg table: one row per theta blob of every Puffin file registered on it (the lab's and
        other engines'), its `puffin_ndv`, who wrote it, its snapshot and whether that is the current one,
        beside the lab's own NDV and whether that is accurate now. For a Delta table: per column, how many of
        its files the log keeps minimum, maximum and NULL count for (Delta keeps no distinct counts)."""
        return catalogs.engines(self, table, partition)

    # ---- Spark's catalog ------------------------------------------------------------------

    def import_spark_stats(self, spark_table: str) -> Result:
        """Reads the statistics Spark keeps for `spark_table` (after Spark's own ANALYZE TABLE) into the
        lab's table of the same database and name, registering it as external if the lab doesn't know it.

        Raises InvalidInputException when Spark has no row count for it or the lab's table of that name
        is another table."""
        return exchange.import_spark_stats(self.spark, self.metastore, spark_table, self.register_external)

    def export_spark_stats(self, table: str, spark_table: str) -> Result:
        """Writes this lab's accurate statistics of `table` into Spark's catalog table `spark_table` as
        `spark.sql.statistics.*` properties, so Spark's optimizer uses them; needs a Hive-enabled
        session (UnsupportedCatalog otherwise). `.details` has the plan statistics before and after."""
        return exchange.export_spark_stats(self.spark, self.metastore, self.resolve(table), spark_table)

    def clean(self, max_bytes: int | None = None) -> list[str]:
        """Removes the files of aborted writes (never read before) and staging left by ended
        transactions, in every managed table; keeps the last `colstats.history.keep` states of each
        column's statistics history, and (with `max_bytes`, else `colstats.history.max_bytes`) drops the
        oldest states until the history takes at most that many bytes, a cell's latest state always kept;
        compacts the file when states went, so the space returns to the disk. Returns the directories removed."""
        return table_commands.clean(self, max_bytes)

    # ---- views --------------------------------------------------------------------------

    def view(self, name: str, *args, **kwargs):
        """A registered workbench view by name ("stats", "skew", ...), as an ipywidgets object."""
        from .ui import VIEWS

        if name not in VIEWS:
            raise InvalidInputException(f"no view named {name!r}; there are {', '.join(sorted(VIEWS))}")
        return VIEWS[name](self, *args, **kwargs)

    def view_stats(self, table: str, partition: str | None = None):
        """The statistics view of a table (table level, or the given partition first)."""
        return self.view("stats", table, partition=partition)

    def view_pruning(self, query: str):
        """The pruning view of a SELECT over one table: what it reads and skips at every level, and why."""
        return self.view("pruning", query)

    def view_metadata(self, table: str, level: str | None = None):
        """The metadata view of a table's last REFRESH METADATA, one level at a time."""
        return self.view("metadata", table, level=level)

    def view_skew(self, table: str, column: str | list[str], k: int = 10, partition: str | None = None,
                  min_share: float = 0.02, mode: str | None = None):
        """The skew view of one or more columns: the k most frequent values per partition with the
        list-bucketing recommendation, the shares over partitions and the scan saved (one Spark aggregation)."""
        return self.view("skew", table, column, k=k, partition=partition, min_share=min_share, mode=mode)

    def close(self) -> None:
        for client in self.catalogs.values():
            client.close()
        if self.plan_tables.made:
            drop_plan_tables(self)
        self.metastore.close()
        if getattr(self, "_engine", None) is not None:
            self._engine.dispose()
        if Lab._current is self:
            Lab._current = None


def _as_bool(key: str, value) -> bool:
    if isinstance(value, str):
        if value.strip().lower() not in ("true", "false"):
            raise InvalidInputException(f"{key} takes true or false, not {value!r}")
        return value.strip().lower() == "true"
    return bool(value)


def _as_seconds(key: str, value) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise InvalidInputException(f"{key} takes a number of seconds, not {value!r}") from None
    if not seconds > 0 or seconds == float("inf"):
        raise InvalidInputException(f"{key} takes a positive number of seconds, not {value!r}")
    return seconds


def _as_count(key: str, value) -> int:
    try:
        count = int(value)
    except (TypeError, ValueError):
        raise InvalidInputException(f"{key} takes a whole number, not {value!r}") from None
    if count < 0:
        raise InvalidInputException(f"{key} takes 0 or more, not {count}")
    return count
