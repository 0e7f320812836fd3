"""`lab.tables`: the lab's tables as a mapping of handles. A handle holds a table's name only, so every use
reads the table again (Iceberg and Delta snapshots are followed as they move); its actions run Spark or
change the metastore, its read-only figures sit under `.inspect` and read the metastore alone."""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from . import frames
from .analyze.stale import staleness_frame
from .column_statistics.estimators import METADATA_TIER, WHOLE_TIER, Tier
from .column_statistics.names import DEFAULT_PARTITION_NAME, make_part_name, split_table_name
from .commands import analyze as analyze_commands
from .commands import catalogs, reads
from .commands import join_skew as join_skew_commands
from .commands import skew as skew_commands
from .commands import tables as table_commands
from .commands.runs import runs_frame
from .deprecated import moved_to_handle, renamed_argument
from .errors import InvalidArgument, NoSuchObjectException, did_you_mean
from .frames import DEFAULT_LIMIT
from .interop import exchange
from .interop.delta_source import deletion_vectors_frame, delta_audit_frame
from .metastore import Partition, Table, ValidWriteIdList
from .metastore.changes import AddExpectation
from .metastore.repositories.snapshot_files import FORMAT_PARAM
from .metastore.rows.levels import TABLE_LEVEL
from .skew import DEFAULT_MODE
from .sql.parser import column_key, parse_table_name
from .sql.statements import Analyze, AnalyzeMode, PartitionSpecItem
from .storage import listed_by
from .tables import kind_of, read_snapshot
from .tables.snapshot import spelled_columns

if TYPE_CHECKING:
    import datetime as dt

    from pyspark.sql import DataFrame
    from sqlglot import exp

    from .column_statistics.quantiles import Distribution
    from .facade import LabFacade
    from .profiles import Profile
    from .pruning import PruningReport
    from .result import Result
    from .skew import SkewReport
    from .skew.join import ShuffleSkewReport
    from .tables.snapshot import PartitionFiles
    from .tables.writer import WriteResult
    from .transaction import Transaction

REPR_NAMES = 20  # names a printed mapping shows; a metastore may hold thousands


@listed_by(lambda tables: tables._lab.listing)
class Tables(Mapping):
    """The lab's tables by name: `lab.tables["sales"]` (the current database), `lab.tables["db.sales"]`,
    `lab.tables["hms.shop.orders"]` (an attached catalog's), or `lab.tables.sales` where the name is an
    identifier. Iterating gives the current database's tables by name, then other databases' as `db.table`;
    both complete on Tab in IPython."""

    def __init__(self, lab: LabFacade):
        self._lab = lab

    def __getitem__(self, name: str) -> TableHandle:
        """The handle of table `name`.

        Raises NoSuchObjectException naming an unknown table (with the closest name), InvalidArgument for a
        name that is not `table`, `db.table` or `catalog.db.table`."""
        if isinstance(name, TableHandle):
            return name
        in_catalog = catalogs.split_catalog_name(self._lab, name) if isinstance(name, str) else None
        if in_catalog is not None:  # the catalog names a table it lacks when the handle is used: one call, not two
            return TableHandle(self._lab, str(in_catalog))
        db, table = split_table_name(name, self._lab.current_db)
        if not self._lab.metastore.catalog.table_exists(db, table):
            raise NoSuchObjectException(f"table {db}.{table} does not exist" + did_you_mean(table, self))
        return TableHandle(self._lab, f"{db}.{table}")

    def get(self, name: str, default: Any = None) -> Any:
        """The handle of a table, or `default` when there is none.

        Args:
            name: the table (`db.table`, or in the current database).
            default: what to return when there is no such table.

        Returns:
            A TableHandle, or `default`."""
        try:
            return self[name]
        except (NoSuchObjectException, InvalidArgument):
            return default

    def __contains__(self, name: object) -> bool:
        try:
            self[name]  # type: ignore[index]
        except (NoSuchObjectException, InvalidArgument):
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        metastore, current = self._lab.metastore, self._lab.current_db
        yield from metastore.catalog.get_tables(current)
        for db in metastore.catalog.get_all_databases():
            if db != current:
                yield from (f"{db}.{name}" for name in metastore.catalog.get_tables(db))

    def __len__(self) -> int:
        metastore = self._lab.metastore
        return sum(len(metastore.catalog.get_tables(db)) for db in metastore.catalog.get_all_databases())

    def __getattr__(self, name: str) -> TableHandle:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except (NoSuchObjectException, InvalidArgument):
            raise AttributeError(f"the lab has no table {name!r} in database {self._lab.current_db}") from None

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {name for name in self if name.isidentifier()})

    def _ipython_key_completions_(self) -> list[str]:
        return list(self)

    def overview(self) -> pd.DataFrame:
        """Every table of every database at a glance, the stalest first (the dashboard's landing). No Spark.

        Returns:
            A DataFrame: kind, size, columns accurate now, partitions that are not with the first reason, when
            last analyzed and written."""
        return frames.tables_frame(self._lab.metastore)

    def __repr__(self) -> str:
        names = list(self)
        shown = ", ".join(names[:REPR_NAMES]) + (f", ... ({len(names):,} in all)" if len(names) > REPR_NAMES else "")
        return f"<Tables of {self._lab.metastore.path}: {shown}>"


@listed_by(lambda namespace: namespace._lab.listing)
class TableHandle:
    """One table of a lab: its actions (`analyze`, `write`, `skew`, `publish`, ...) and, under `.inspect`,
    its read-only figures. Holds the name only: every use reads the table again."""

    def __init__(self, lab: LabFacade, name: str):
        self._lab = lab
        self.name = name
        self.inspect = Inspect(lab, name)

    def __repr__(self) -> str:
        return f"<TableHandle {self.name}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TableHandle) and other._lab is self._lab and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def metastore_table(self) -> Table:
        """The metastore's record of the table, read now.

        Returns:
            The Table: columns, partition keys, location, parameters (Hive's Thrift shape)."""
        return self._lab.resolve(self.name)

    def stats_level(self, level: str = TABLE_LEVEL) -> frames.StatsLevel:
        """One level as the statistics view shows it: a row per column.

        Args:
            level: the table (the default), or a partition by name.

        Returns:
            A StatsLevel: `.frame` a row per column, `.parameters` its basic statistics read now, `.rows` and its
            rows changed since analyze.

        Raises:
            NoSuchObjectException: naming a partition the table does not have."""
        return frames.stats_level(self._lab.metastore, self.metastore_table(), level)

    def freshness_basis(self) -> str:
        """What proves the table's statistics fresh, in words.

        Returns:
            The basis as the Freshness tab says it: write IDs; each file's ETag, or its size and modification time;
            an Iceberg snapshot or a Delta version."""
        table = self.metastore_table()
        return kind_of(table).freshness_basis(table)

    def distribution(self, column: str, partition: str | None = None) -> Distribution | None:
        """A column's KLL sketch, to ask for quantiles and ranks.

        Args:
            column: the column (a struct's leaf by its path).
            partition: a partition by name; None for the table level (merged over the partitions).

        Returns:
            A Distribution, or None where no sketch was gathered."""
        return frames.distribution(self._lab.metastore, self.metastore_table(), column, partition)

    def partition_record(self, spec: dict | str) -> Partition:
        """One partition's metastore record.

        Args:
            spec: its name (`ds=2026-11-21/hr=3`) or a dict giving every key a value.

        Returns:
            Hive's Thrift Partition: values, location, parameters.

        Raises:
            NoSuchObjectException: naming a partition the table does not have.
            InvalidArgument: for a spec that is not one."""
        return reads.partition(self._lab, self.name, spec)

    def valid_write_ids(self) -> ValidWriteIdList:
        """The write IDs a reader of the table sees now.

        Returns:
            Hive's ValidWriteIdList (`default.sales:8:9223372036854775807::`), what `to_spark(snapshot=...)` and
            `files(snapshot=...)` read as of."""
        return reads.valid_write_ids(self._lab, self.name)

    def files(self, snapshot: ValidWriteIdList | None = None, txn: Transaction | None = None,
              partitions: list[Partition] | None = None) -> tuple[Table, list[PartitionFiles]]:
        """The directories and files a snapshot of the table admits, per partition.

        Args:
            snapshot: a ValidWriteIdList to read as of (default: now).
            txn: a transaction whose snapshot to read (its own writes included).
            partitions: the partitions to list (default: every one).

        Returns:
            The table and a PartitionFiles per partition."""
        return reads.snapshot_parts(self._lab, self.name, snapshot, txn, partitions)

    def planned_read(self, where: str | exp.Expression | None, alias: str | None = None, txn: Transaction | None = None
                     ) -> tuple[Table, list[PartitionFiles], PruningReport]:
        """What a SELECT with the condition `where` reads, after every pruning level.

        Args:
            where: the condition, as text or sqlglot's tree.
            alias: the table's alias in that condition.
            txn: a transaction whose snapshot to read.

        Returns:
            The table, the files kept and the PruningReport.

        Raises:
            ParseError: for text that does not parse.
            NoSuchObjectException: for a column the table does not have."""
        return reads.planned_read(self._lab, self.name, where, alias, txn)

    def analyze(self, columns: list[str] | str | None = None, partition: dict | str | None = None,
                noscan: bool = False, txn: Transaction | None = None, *, sample: float | None = None,
                metadata_only: bool = False) -> Result:
        """Computes statistics: the ANALYZE statement `lab.sql` would parse, built from the arguments and run.

        Args:
            columns: every column (None) or the named ones (a struct's leaf by its path, `payload.user.id`).
            partition: a name (`ds=2026-11-21`) or a dict, whose None values stand for every value of that key.
            noscan: files and bytes only (`COMPUTE STATISTICS NOSCAN`).
            txn: a transaction to run in (else one of its own).
            sample: a fraction (0.05 for 5 %): that share of each partition's row groups is read, chosen at
                random (`FOR COLUMNS ... SAMPLE 5 PERCENT`).
            metadata_only: no value read: rows, NULLs, minimum and maximum from footers, NDV from dictionary
                pages (`FOR COLUMNS ... NOSCAN`). After a sample or metadata alone, `inspect.bounds()` says which
                figures are exact and the band of each estimate.

        Returns:
            The statement's Result (`.message` says what was analyzed, from what, in how long).

        Raises:
            NoSuchObjectException: naming an unknown column, partition or key.
            InvalidArgument: columns, a sample or metadata alone with `noscan`; a sample outside (0, 1]; both a
                sample and metadata alone."""
        stmt = analyze_statement(self.name, columns, partition, noscan, sample, metadata_only)
        return self._lab.run(stmt, txn)

    def analyze_stale(self, threshold: float = 0.3, txn: Transaction | None = None) -> Result:
        """Analyzes the partitions whose statistics went stale, in one Spark job and one transaction.

        Args:
            threshold: those not accurate whose rows changed by this fraction or more since they were (or by an
                unknown amount) are analyzed, every column.
            txn: a transaction to analyze in.

        Returns:
            A Result whose `.details` (StaleAnalysis) has the staleness before and the partitions chosen."""
        return analyze_commands.analyze_stale(self._lab, self.name, threshold, txn)

    def write(self, data: pd.DataFrame | DataFrame, partition: dict | None = None, mode: str = "append",
              txn: Transaction | None = None) -> WriteResult:
        """Writes a Spark or pandas DataFrame into this managed table under one write ID.

        A pandas frame's missing values (None, NaN, NaT, NA) are NULL, and timestamps are kept to the
        microsecond, as Spark keeps them.

        Args:
            data: a Spark or pandas DataFrame with the table's columns.
            partition: every key's value; without it the rows carry the keys (dynamic partitions).
            mode: "append" or "overwrite" (of the partitions written).
            txn: a transaction to write in (else one of its own).

        Returns:
            A WriteResult: the write ID, the partitions written, and `notes` (how many values lost nanoseconds).

        Raises:
            InvalidArgument: rows that do not fit the table, naming the column; an unknown partition key.
            QueryError: a value Spark's write cannot cast, naming the table and the value."""
        return table_commands.write(self._lab, self.name, data, partition, mode, txn)

    def skew(self, columns: list[str] | str, partition: dict | str | None = None, top: int = 20,
             min_share: float = 0.02, mode: str = DEFAULT_MODE, max_keys: int = 10,
             max_items: int | None = None, *, k: int | None = None) -> SkewReport:
        """Heavy hitters of `columns`, from the frequent-items sketches kept with fresh statistics, else one
        Spark aggregation over the current snapshot.

        Args:
            columns: a column or several (their values counted together).
            partition: one partition (a spec dict or a name); default every one, and the table.
            top: the most frequent values each level lists (`k`, its name in 0.1, still works for one release).
            min_share: the least share of rows a value to declare skewed holds.
            mode: "exact" counts every value; "approx" reads the kept sketches of one column where they are accurate
                (no scan), else keeps a frequent-items sketch of `max_items` values, counting within
                2 * rows / max_items.
            max_keys: at most this many values to declare skewed.
            max_items: the sketch's size in approx mode (10,000 by default; more than the kept sketches track asks
                for a scan).

        Returns:
            A SkewReport: per partition and for the table, the top values, their drift, the values standing out of
            the column's spread, and the ALTER TABLE ... SKEWED BY statement.

        Raises:
            NoSuchObjectException: for an unknown column.
            InvalidArgument: for a bad partition, mode or count."""
        if k is not None:
            top = renamed_argument("lab.tables[name].skew", "k", "top", k)
        return skew_commands.skew(self._lab, self.name, columns, partition, top, min_share, mode, max_keys, max_items)

    def join_skew(self, other: TableHandle | str, key: str | list[str], other_key: str | list[str] | None = None,
                  where: str | None = None, how: str = "inner", run: bool = False) -> ShuffleSkewReport:
        """The shuffle of `this JOIN other ON key = other_key`, predicted before it runs, from statistics accurate
        now, else one aggregation a side.

        Args:
            other: the other table (a handle or a name).
            key: this table's join column(s).
            other_key: the other's (default: `key`).
            where: a condition on the partition keys choosing the partitions read.
            how: inner, left, right or full.
            run: also count each task's rows as Spark places them.

        Returns:
            A ShuffleSkewReport: each hot key's rows on both sides and its task, each task's rows (`.tasks`), whether
            AQE would split it, a `.recommendation`.

        Raises:
            NoSuchObjectException: for an unknown table or column.
            InvalidArgument: for a bad argument."""
        other_name = other.name if isinstance(other, TableHandle) else other
        return join_skew_commands.join_skew(self._lab, self.name, key, other_name,
                                            key if other_key is None else other_key, where, how, run)

    def group_skew(self, key: str, where: str | None = None, run: bool = False) -> ShuffleSkewReport:
        """The shuffle of `groupBy(key)`, predicted from statistics.

        Args:
            key: the grouping column.
            where: a condition on the partition keys choosing the partitions read.
            run: also count each task's rows as Spark places them.

        Returns:
            A ShuffleSkewReport, as `join_skew`'s: each hot key's rows and task, each task's rows before map-side
            combining, a `.recommendation`."""
        return join_skew_commands.group_skew(self._lab, self.name, key, where, run)

    def expect(self, column: str, **rules: Any) -> pd.DataFrame:
        """Stores rules on a column's statistics, checked on every state kept from now on, from statistics
        alone.

        Args:
            column: the column.
            **rules: `nulls_below`, `ndv_between` ((low, high)), `psi_below`, `min_at_least`, `max_at_most`, and
                Deequ's anomaly detection over the kept states: `anomaly="relative_change"` (the change against
                the state before at most `threshold`) or `anomaly="baseline"` (within `threshold` standard
                deviations of the last `window` states' mean), of `figure` (rows, nulls, null_fraction, ndv, mean,
                min, max; rows by default).

        Returns:
            Their outcomes on the latest states now (`inspect.expectations()`'s columns).

        Raises:
            InvalidArgument: naming an unknown or malformed rule."""
        table = self._lab.resolve(self.name)
        expectation_id = self._lab.metastore.apply([AddExpectation(table, column, tuple(rules.items()))])[0]
        return frames.expectations_frame(self._lab.metastore, table, expectation_id)

    def profile(self, partition: dict | str | None = None) -> Profile:
        """The table's profile, read from the statistics it keeps: no Spark job.

        Args:
            partition: one partition (a spec dict or a name); default the table level, merged over every partition.

        Returns:
            A Profile: `.columns` a row per column (rows, NULLs, NaNs, NDV, min, max, mean and standard deviation,
            quantiles, a histogram from the KLL sketch, top values with their shares, alerts), `.alerts`,
            `.suggest()`, `.to_great_expectations(path)`, `.to_html(path)`. A figure from a sample says so in
            `sampled`.

        Raises:
            NoSuchObjectException: naming an unknown partition.
            InvalidArgument: a partition of a table that is not partitioned."""
        from .profiles import table_profile

        table = self._lab.resolve(self.name)
        if partition is not None and not table.is_partitioned:
            raise InvalidArgument(f"{table.qualified_name} is not partitioned: its profile is the table's, "
                                  "profile() without a partition")
        return table_profile(self._lab.metastore, table, None if partition is None else _partition_name(partition))

    def publish(self) -> Result:
        """Publishes the lab's statistics accurate now where other engines read them: an attached HMS table's
        into that Hive Metastore (what went stale is withdrawn); an Iceberg table's NDV into a Puffin file on its
        current snapshot.

        Returns:
            A Result whose `.details` is a PublishOutcome or PuffinOutcome.

        Raises:
            InvalidArgument: for a table of no attached catalog."""
        return catalogs.publish(self._lab, self.name)

    def engines(self, partition: str | None = None) -> pd.DataFrame:
        """What each engine sees of this attached table's statistics, beside the lab's. Reads the catalog.

        Args:
            partition: a partition by name, or "*" for every one; default the table level.

        Returns:
            A DataFrame: per column (and partition), whether the engines agree and are stale; one row per Puffin
            blob of an Iceberg table; per column the Delta log's file figures."""
        return catalogs.engines(self._lab, self.name, partition)

    def partition_statistics(self) -> pd.DataFrame:
        """The Iceberg partition statistics file registered on this attached table's current snapshot, whoever
        wrote it (`publish()` writes one; Java's `PartitionStatsHandler` another).

        Returns:
            A DataFrame, a row per partition: `partition`, `spec_id`, data records, files and bytes, position and
            equality delete records and files, `last_updated_at` (ms) and its snapshot; empty where none is
            registered.

        Raises:
            InvalidArgument: for a table that is not Iceberg's."""
        return catalogs.partition_statistics(self._lab, self.name)

    def export_spark_stats(self, spark_table: str) -> Result:
        """Writes this table's accurate statistics into Spark's catalog table `spark_table`, as the
        `spark.sql.statistics.*` properties Spark's optimizer reads.

        Args:
            spark_table: the catalog table's name.

        Returns:
            A Result with the plan statistics before and after.

        Raises:
            UnsupportedCatalog: without a Hive-enabled session."""
        return exchange.export_spark_stats(self._lab.spark, self._lab.metastore, self._lab.resolve(self.name),
                                           spark_table)

    def report(self, path: str | None = None) -> str:
        """Writes the table's report: a standalone page, or its data as JSON. No Spark.

        Args:
            path: where, ending .html (one page, plotly inlined, no server) or .json (`report_data()`'s).

        Returns:
            The path written.

        Raises:
            InvalidArgument: for another ending, or a path that cannot be written (naming it); without a path,
                saying that `report_data()` gives the data."""
        return reads.report(self._lab, self.name, path)

    def report_data(self) -> dict:
        """The table's report as plain data, what a `.json` report holds. No Spark.

        Returns:
            A dict: its kind, size, freshness, staleness, each column's figures and bands."""
        return frames.report_data(self._lab.metastore, self.metastore_table())

    def relayout(self, partition: dict | str | None = None) -> list[WriteResult]:
        """Rewrites partitions under the table's current skew spec, in one transaction.

        Args:
            partition: every partition (None), or one by a spec dict or its name.

        Returns:
            A WriteResult a partition rewritten."""
        return table_commands.relayout(self._lab, self.name, partition)

    def to_spark(self, snapshot: ValidWriteIdList | None = None, txn: Transaction | None = None) -> DataFrame:
        """The table's rows as a Spark DataFrame: exactly the files the snapshot admits, columns named as the
        files spell them (`userId`).

        Args:
            snapshot: a ValidWriteIdList to read as of (default: now).
            txn: a transaction whose snapshot to read (its own writes included).

        Returns:
            A Spark DataFrame."""
        table, parts = reads.snapshot_parts(self._lab, self.name, snapshot, txn)
        return spelled_columns(read_snapshot(self._lab.spark, table, parts), table)

    def view(self, kind: str = "stats", *args: Any, **kwargs: Any) -> Any:
        """A workbench view of this table, as an ipywidgets object.

        Args:
            kind: "stats", "profile", "freshness", "skew" (give the columns), "drift" (a column), "metadata",
                "transactions", "engines" or "puffin".
            *args: the view's own arguments (a skew view's columns, a drift view's column).
            **kwargs: the view's own options.

        Returns:
            The view.

        Raises:
            InvalidArgument: naming an unknown kind."""
        return self._lab.views(kind, self.name, *args, **kwargs)


@listed_by(lambda namespace: namespace._lab.listing)
class Inspect:
    """A table's read-only figures: each reads the metastore (and, for an external table, a listing of its
    files) and starts no Spark. Methods returning a DataFrame are named for what their rows are."""

    def __init__(self, lab: LabFacade, name: str):
        self._lab = lab
        self._name = name

    def _table(self) -> Table:
        return self._lab.resolve(self._name)

    def stats(self) -> pd.DataFrame:
        """Every statistic of the table, one row per partition and column.

        Returns:
            A DataFrame (`frames.FRAME_COLUMNS`); partition None is the table level; `accurate` and `reason` say
            whether each is accurate for a reader now; `tier` how it was computed: "every value", "metadata" (no
            value read) or "5 % sample (4.9 % of rows read)", with each figure's band in `bounds()`."""
        return frames.stats_frame(self._lab.metastore, self._table())

    def bounds(self) -> pd.DataFrame:
        """The band of every figure a tiered ANALYZE (`analyze(metadata_only=True)`, `analyze(sample=...)`)
        computed. Exact figures come from the files' metadata; the others hold the truth with the confidence their
        method says.

        Returns:
            A DataFrame, a row per partition, column and figure (rows, nulls, min, max, ndv, avg_len, max_len,
            trues, falses, nans): `value`, `low`, `high`, `exact`, the `method` behind it, the `tier` and the share
            of rows `read`. Columns last analyzed from every value have no rows: all theirs are exact."""
        return frames.bounds_frame(self._lab.metastore, self._table())

    def delta(self) -> pd.DataFrame:
        """What Delta's own log keeps of each column of this Delta table, beside the lab's statistics.

        Returns:
            A DataFrame per column and struct leaf: `log_keeps` (the log has its minimum, maximum and NULL count in
            every file: what Databricks, Trino and Spark skip files with), in how many `files`, `why_not` (past the
            first `delta.dataSkippingNumIndexedCols`, not in `delta.dataSkippingStatsColumns`, a type Delta keeps no
            bounds for), `clustering` (a liquid clustering column) and `lab_accurate` (the lab's statistics of it
            accurate in every partition; None never analyzed).

        Raises:
            InvalidArgument: for a table of another kind."""
        table = self._table()
        if table.parameters.get(FORMAT_PARAM) != "delta":
            raise InvalidArgument(f"{table.qualified_name} is not a Delta table: inspect.delta() describes Delta's log")
        fresh = frames.freshness_frame(self._lab.metastore, table)
        accurate = {}
        for column, verdicts in fresh.groupby("column")["accurate"]:
            known = [v for v in verdicts if v is not None and v == v]
            accurate[str(column).lower()] = None if not known else all(bool(v) for v in known)
        return delta_audit_frame(table, accurate)

    def deletion_vectors(self) -> pd.DataFrame:
        """The deletion vectors of this Delta table's followed version.

        Returns:
            A DataFrame per partition (None: the table): data `files`, `files_with_vectors`, the rows the files hold
            (`rows_in_files`, the log's numRecords), the rows the vectors delete, and the `live_rows` a reader sees."""
        table = self._table()
        return frames.spelled_frame(deletion_vectors_frame(self._lab.metastore, table), table)

    def freshness(self) -> pd.DataFrame:
        """Whether each partition's and column's statistics are accurate for a reader now.

        Returns:
            A DataFrame: partition, column, `accurate` (None: never analyzed) and `reason`."""
        return frames.freshness_frame(self._lab.metastore, self._table())

    def staleness(self) -> pd.DataFrame:
        """How much changed since each partition's statistics were accurate.

        Returns:
            A DataFrame per partition (or for the table): rows, rows changed, that fraction (None: unknown),
            accurate now, and why not."""
        return frames.spelled_frame(staleness_frame(self._lab.metastore, self._table()), self._table())

    def history(self, column: str, partition: str | None = None, source: str = "statistics") -> pd.DataFrame:
        """Every kept state of a column's statistics, oldest first.

        Args:
            column: the column.
            partition: a partition by name; None for the table level.
            source: "statistics" (ANALYZE's and writes' states) or "metadata" (REFRESH METADATA's).

        Returns:
            A DataFrame: when (UTC), transaction, write ID and cause, rows, nulls, NDV, min, max, quartiles, top
            values, PSI against the state before."""
        return frames.history_frame(self._lab.metastore, self._table(), column, partition, source)

    def runs(self, operators: bool = False, limit: int | None = DEFAULT_LIMIT) -> pd.DataFrame:
        """The kept runs of queries that read this table, newest first.

        Args:
            operators: a row per operator of each run instead of one per run.
            limit: at most this many runs (None: every one kept).

        Returns:
            A DataFrame with `Lab.runs`' columns, the write IDs and statistics state this table's own."""
        return runs_frame(self._lab, self._table(), operators, limit)

    def across_partitions(self, column: str, limit: int = DEFAULT_LIMIT) -> pd.DataFrame:
        """A column's latest kept state in each of the last `limit` partitions.

        Args:
            column: the column.
            limit: at most this many partitions, the last by name.

        Returns:
            A DataFrame in name order, with `psi` against the partition before.

        Raises:
            InvalidArgument: for a table that is not partitioned."""
        table = self._table()
        if not table.is_partitioned:
            raise InvalidArgument(f"{table.qualified_name} is not partitioned: inspect.history shows its "
                                  "statistics over time")
        return frames.across_partitions_frame(self._lab.metastore, table, column, limit)

    def compare(self, then: int | str | dt.datetime, now: int | str | dt.datetime | None = None,
                source: str = "statistics") -> pd.DataFrame:
        """What changed in the statistics between two moments, per partition and column.

        Args:
            then: a write ID, or a time (datetime or ISO text, UTC when naive).
            now: the same; None is the latest.
            source: "statistics" or "metadata" (REFRESH METADATA's states).

        Returns:
            A DataFrame: null fraction, NDV, min and max, the PSI of the two sketches, the heavy hitters entering
            and leaving."""
        return frames.compare_frame(self._lab.metastore, self._table(), then, now, source)

    def frequent_values(self, column: str, partition: str | None = None) -> pd.DataFrame:
        """The most frequent values the statistics keep a sketch of, most rows first, with no scan.

        Args:
            column: the column.
            partition: a partition by name; None for the table level (merged over the partitions).

        Returns:
            A DataFrame: value, rows (an estimate), the lower and upper bound of its true count, its share of the
            non-NULL values counted; empty when no such sketch is kept of the column (a near-unique one keeps none)."""
        return frames.frequent_values_frame(self._lab.metastore, self._table(), column, partition)

    def quartiles(self, column: str, limit: int = DEFAULT_LIMIT) -> pd.DataFrame:
        """A column's quartiles per partition, from its KLL sketches.

        Args:
            column: the column.
            limit: the last this many partitions.

        Returns:
            A DataFrame: partition, rows, min, 5th percentile, Q1, median, Q3, 95th percentile and max, in the
            column's type."""
        return frames.quartiles_frame(self._lab.metastore, self._table(), column, limit)

    def expectations(self) -> pd.DataFrame:
        """Every outcome of the table's rules (`expect`), oldest state first.

        Returns:
            A DataFrame: rule, threshold, the state checked, the figure and whether it passed."""
        return frames.expectations_frame(self._lab.metastore, self._table())

    def transactions(self, limit: int = DEFAULT_LIMIT) -> pd.DataFrame:
        """The latest transactions that took a write ID of the table, newest first.

        Args:
            limit: at most this many.

        Returns:
            A DataFrame: what each wrote and what it is still the statistics writer of."""
        return frames.transactions_frame(self._lab.metastore, self._table(), limit)

    def metadata(self, level: str | None = None) -> pd.DataFrame:
        """The table's Drill metadata from its last `ANALYZE ... REFRESH METADATA`.

        Args:
            level: keeps one level: TABLE, SEGMENT, PARTITION, FILE or ROW_GROUP (default every one).

        Returns:
            A DataFrame, a row per unit and column.

        Raises:
            NoSuchObjectException: when there is none.
            InvalidArgument: naming an unknown level."""
        return reads.metadata(self._lab, self._name, level)

    def metadata_changes(self) -> pd.DataFrame:
        """The files changed since the last REFRESH METADATA.

        Returns:
            A DataFrame: `file`, `change` ("added or rewritten" or "removed"); empty when up to date or when
            REFRESH METADATA never ran. `.attrs["state"]` says which in words, `.attrs["refreshed"]` whether it ran."""
        return reads.metadata_changes(self._lab, self._name)

    def information_schema(self, view: str, limit: int = DEFAULT_LIMIT) -> pd.DataFrame:
        """The table's rows of Drill's INFORMATION_SCHEMA `view`.

        Args:
            view: TABLES, COLUMNS or PARTITIONS.
            limit: at most this many rows.

        Returns:
            A DataFrame with the view's columns."""
        table = self._table()
        return pd.DataFrame(self._lab.metastore.table_metadata.information_schema(table.dbName, table.tableName, view, limit))

    def partitions(self, text: str = "", limit: int = DEFAULT_LIMIT) -> pd.DataFrame:
        """The partitions whose names hold `text` (any case), in name order.

        Args:
            text: part of a partition's name, its keys spelled as the files spell them (`eventDate=2026-01`).
            limit: at most this many rows.

        Returns:
            A DataFrame with one column, `partition` (named as the files spell their keys, as every figure's
            partition is), and `attrs["total"]`: how many partitions hold `text`. Empty for a table that is not
            partitioned."""
        table = self._table()
        names: list[str] = []
        total = 0
        if table.is_partitioned:
            for key in table.partition_key_names:  # a key as the files spell it, as the names are shown
                text = re.sub(re.escape(table.spelled(key)) + "(?==)", key, text, flags=re.IGNORECASE)
            found, total = self._lab.metastore.catalog.find_partition_names(table.dbName, table.tableName, text, limit)
            spell = table.partition_speller()
            names = [spell(name) or name for name in found]
        frame = pd.DataFrame({"partition": pd.Series(names, dtype=object)})
        frame.attrs["total"] = total
        return frame

    # release 0.2's object accessors, now the handle's (`lab.tables[name].valid_write_ids()`, ...)
    snapshot = moved_to_handle("snapshot", "valid_write_ids")
    partition = moved_to_handle("partition", "partition_record")
    files = moved_to_handle("files", "files")
    planned_read = moved_to_handle("planned_read", "planned_read")
    stats_level = moved_to_handle("stats_level", "stats_level")
    distribution = moved_to_handle("distribution", "distribution")
    freshness_basis = moved_to_handle("freshness_basis", "freshness_basis")

    def __dir__(self) -> list[str]:
        return [name for name in super().__dir__()
                if not name.startswith("_") and not getattr(getattr(type(self), name, None), "deprecated", False)]



def analyze_statement(name: str, columns: list[str] | str | None = None, partition: dict | str | None = None,
                      noscan: bool = False, sample: float | None = None, metadata_only: bool = False) -> Analyze:
    """The ANALYZE statement `TableHandle.analyze` runs for these arguments: the one the parser reads from its
    SQL (`ANALYZE TABLE name PARTITION (...) COMPUTE STATISTICS FOR COLUMNS ... SAMPLE n PERCENT`), built
    without text. Raises InvalidArgument naming a bad argument or a contradiction."""
    names = [columns] if isinstance(columns, str) else columns
    if names is not None and (not isinstance(names, (list, tuple)) or not all(isinstance(c, str) for c in names)):
        raise InvalidArgument(f"columns are a column's name or a list of names, not {columns!r}")
    if metadata_only and sample is not None:
        raise InvalidArgument("analyze(metadata_only=True) reads no value, so it takes no sample: "
                              "give one or the other")
    try:
        tier = METADATA_TIER if metadata_only else WHOLE_TIER if sample is None else Tier.sampled(sample)
    except ValueError:
        raise InvalidArgument(f"sample is the fraction of row groups to read, above 0 and at most 1 "
                              f"(0.05 for 5 %), not {sample!r}") from None
    stmt = Analyze(table=parse_table_name(name), partition=partition_items(partition),
                   mode=AnalyzeMode.NOSCAN if noscan else AnalyzeMode.COLUMNS,
                   columns=[(column_key(c), 0) for c in names] if names else None, tier=tier)
    if stmt.problem():  # the statement's one rule, said in the arguments' words
        raise InvalidArgument("analyze(noscan=True) counts files and bytes only: give no columns, sample or "
                              "metadata_only")
    return stmt


def partition_items(partition: dict | str | None) -> list[PartitionSpecItem] | None:
    """A partition given as a spec dict or a name (`ds=2026-11-21/hr=3`, Hive's escapes undone) as a statement's
    PARTITION clause; a key whose value is None stands for every value, Hive's default partition's name for NULL."""
    if partition is None:
        return None
    if isinstance(partition, str):
        pairs: list[tuple[Any, Any]] = [(key, _unescaped(value) if sep else None) for key, sep, value
                                        in (item.partition("=") for item in partition.strip().split("/"))]
    elif isinstance(partition, dict):
        pairs = list(partition.items())
    else:
        raise InvalidArgument(f"a partition is a name like ds=2026-11-21 or a dict, not {partition!r}")
    return [PartitionSpecItem(str(key).lower(), None, 0, is_null=True) if value == DEFAULT_PARTITION_NAME
            else PartitionSpecItem(str(key).lower(), None if value is None else str(value), 0) for key, value in pairs]


def _partition_name(partition: dict | str) -> str:
    """A partition given as a spec dict or a name, as its name (`ds=2026-11-21`)."""
    if isinstance(partition, dict):
        return make_part_name([str(k) for k in partition], [None if v is None else str(v) for v in partition.values()])
    if isinstance(partition, str):
        return partition.strip()
    raise InvalidArgument(f"a partition is a name like ds=2026-11-21 or a dict, not {partition!r}")


def _unescaped(value: str | None) -> str | None:
    from urllib.parse import unquote

    return None if value is None else unquote(value)
