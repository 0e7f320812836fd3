"""Moving statistics between the lab's metastore and Spark's catalog (`Lab.import_spark_stats` / `export_spark_stats`)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from pyspark.sql import SparkSession

from ..coltypes import parse_type
from ..column_statistics.estimators import tiers_by_column
from ..errors import InvalidArgument, spark_errors
from ..metastore import ColumnStatistics, ColumnStatisticsDesc, Metastore, Table
from ..metastore.changes import FollowUp, Repositories
from ..metastore.rows.column_stats_accurate import PARAM as ACCURATE_PARAM
from ..metastore.rows.column_stats_accurate import StatsAccuracy
from ..result import Result
from ..stats.spark_properties import (
    DEFAULT_NUM_BINS,
    STATISTICS_PREFIX,
    CatalogColumnStat,
    CatalogStatistics,
    NotConvertible,
    column_stat_from_hive,
    hive_stats_from_spark,
    partition_column_stat,
    rows_by_key_value,
    stats_to_properties,
)
from ..storage import list_data_files
from ..tables.external import follow_partitions
from .hms_publish import not_exported
from .spark_catalog import (
    SparkTable,
    plan_statistics,
    read_table_statistics,
    write_partition_statistics,
    write_table_statistics,
)


def lab_table_of(metastore: Metastore, source: SparkTable, register_external: Callable[..., Table]) -> Table:
    """The lab's table for Spark's table `source`: an external table on Spark's location, registered now
    (with its database) when the metastore does not know it; raises when the lab's table of that name
    is another table, or Spark's files are not Parquet."""
    if metastore.catalog.table_exists(source.database, source.name):
        table = metastore.catalog.get_table(source.database, source.name)
        if table.tableType != "EXTERNAL_TABLE" or table.location.rstrip("/") != (source.location or "").rstrip("/"):
            raise InvalidArgument(
                f"lab table {table.qualified_name} is not Spark's table: it is {table.tableType} at "
                f"{table.location}, Spark's is at {source.location}")
        if table.is_partitioned:
            follow_partitions(metastore, table, source.partition_names, source.partition_locations)
        return table
    if not source.location:
        raise InvalidArgument(f"Spark's table {source.qualified_name} has no location to register")
    if (source.provider or "parquet").lower() not in ("parquet", "hive"):
        raise InvalidArgument(f"Spark's table {source.qualified_name} is stored as {source.provider}: "
                                    "only Parquet tables can be read by the lab")
    if source.database not in metastore.catalog.get_all_databases():
        metastore.catalog.create_database(source.database)
    table = register_external(source.qualified_name, source.location,
                              partition_types={c: source.columns[c] for c in source.partition_columns})
    if table.is_partitioned:  # what the directories under its location do not say: partitions placed elsewhere
        follow_partitions(metastore, table, source.partition_names, source.partition_locations)
    return table


@dataclass(frozen=True)
class SparkStatsImport:
    """`import_spark_stats`'s details: the lab table, the columns imported and those skipped (why), the
    table's rows and bytes as Spark keeps them (None: Spark has no row count), and the partitions imported."""
    table: str
    columns: list[str]
    skipped: dict[str, str]
    rows: int | None
    bytes: int | None
    partitions: list[str]


# the exported columns a tiered ANALYZE computed: `amount=5 %;note=metadata` (their bands: inspect.bounds())
SAMPLED_PROPERTY = STATISTICS_PREFIX + "colstats.tiers"


@dataclass(frozen=True)
class SparkStatsExport:
    """`export_spark_stats`'s details: Spark's table and partition properties written (how many), the
    columns skipped (why), and the optimizer's plan statistics before and after."""
    properties: dict[str, str]
    partition_properties: dict[str, dict[str, str]]
    written: int
    skipped: dict[str, str]
    plan_before: str
    plan_after: str


def import_spark_stats(spark: SparkSession, metastore: Metastore, spark_table: str,
                       register_external: Callable[..., Table]) -> Result:
    """Reads Spark's statistics of `spark_table` into the metastore's table of the same database and
    name, registering it as external on Spark's location (with `register_external`) when the metastore
    doesn't know it. Columns whose Hive statistics don't follow from Spark's are listed in
    `details.skipped` with the reason (details: SparkStatsImport)."""
    source = read_table_statistics(spark, spark_table)
    stats = source.statistics
    row_count = stats.rowCount if stats is not None else None
    table_rows = row_count is not None
    if not table_rows and not any(p.rowCount is not None for p in source.partitions.values()):
        raise InvalidArgument(
            f"Spark keeps no row count for {source.qualified_name} or its partitions: run ANALYZE TABLE {source.qualified_name} "
            "COMPUTE STATISTICS FOR ALL COLUMNS in Spark first")
    table = lab_table_of(metastore, source, register_external)
    objs, skipped = [], {}
    table_params: tuple[tuple[str, str | None], ...] = ()
    table_files: tuple = ()
    if stats is not None and row_count is not None:
        for column in table.cols:
            stat = stats.colStats.get(column.name)
            if stat is None:
                skipped[column.name] = "Spark keeps no statistics for it"
                continue
            try:
                objs.append(hive_stats_from_spark(column.name, column.type, stat, row_count))
            except NotConvertible as exc:
                skipped[column.name] = str(exc)
        flags = StatsAccuracy(True, {o.colName for o in objs})
        table_params = (("numRows", str(row_count)), ("totalSize", str(stats.sizeInBytes)),
                        (ACCURATE_PARAM, flags.to_param()))
        if not table.is_partitioned:  # Spark's statistics are taken to describe the files as they are now
            table_files = tuple(f.state for f in list_data_files(table.location))
    partitions = _partition_statistics(metastore, table, source)
    metastore.apply([ImportSparkStatistics(table, tuple(objs), table_params, table_files, partitions)])
    imported_partitions = [p.name for p in partitions]
    imported = [o.colName for o in objs]
    rows = row_count
    return Result(message=f"Imported Spark's statistics of {source.qualified_name}: "
                          + (f"{rows} rows, " if table_rows else "")
                          + f"{len(imported)} column(s), {len(imported_partitions):,} partition(s)"
                          + (f"; skipped {', '.join(skipped)}" if skipped else ""),
                  details=SparkStatsImport(table.qualified_name, imported, skipped, rows,
                                           stats.sizeInBytes if stats else None, imported_partitions))


@dataclass(frozen=True)
class PartitionImport:
    """Spark's rows and bytes of one partition, with the files of its directory now."""
    name: str
    rows: int
    size: int | None  # None: Spark keeps no totalSize for it, and the partition's stays as listed
    files: tuple


def _partition_statistics(metastore: Metastore, table: Table, source: SparkTable) -> tuple[PartitionImport, ...]:
    """Spark's partition statistics (rows and bytes) of the lab's partitions of the same names, each with the
    files there now (listed here, before anything is written)."""
    known = {p.partName: p for p in metastore.catalog.get_partitions(table.dbName, table.tableName)}
    return tuple(PartitionImport(name, rows, stats.sizeInBytes,
                                 tuple(f.state for f in list_data_files(known[name].location)))
                 for name, stats in sorted(source.partitions.items())
                 if name in known and (rows := stats.rowCount) is not None)


@dataclass(frozen=True)
class ImportSparkStatistics:
    """Spark's statistics of a table taken as the lab's (a `metastore.changes.Change`): the table level's
    column statistics and parameters, and each partition's rows and bytes as accurate basic statistics, all of
    them of the files listed before (a later change of the files shows)."""
    table: Table
    columns: tuple
    table_params: tuple[tuple[str, str | None], ...]
    table_files: tuple
    partitions: tuple[PartitionImport, ...]
    kind: ClassVar[str] = "statistics"

    def apply(self, metastore: Repositories) -> None:
        t = self.table
        if self.columns:
            metastore.column_stats.update_table_column_statistics(ColumnStatistics(
                ColumnStatisticsDesc(True, t.dbName, t.tableName), list(self.columns), engine="hive"))
        if self.table_params:
            metastore.catalog.alter_table_params(t.dbName, t.tableName, dict(self.table_params))
        if self.table_files:
            metastore.accuracy.record_analyzed_files(t.dbName, t.tableName, {None: list(self.table_files)})
        if self.partitions:
            accurate = StatsAccuracy(True).to_param()
            metastore.catalog.alter_partitions_params(t.dbName, t.tableName, {p.name: {
                "numRows": str(p.rows), ACCURATE_PARAM: accurate,
                **({} if p.size is None else {"totalSize": str(p.size)})} for p in self.partitions})
            metastore.accuracy.record_analyzed_files(t.dbName, t.tableName, {p.name: list(p.files) for p in self.partitions})

    def describe(self) -> str:
        return (f"Spark's statistics of {self.table.qualified_name}: {len(self.columns)} column(s), "
                f"{len(self.partitions):,} partition(s)")

    def follow_up(self) -> FollowUp | None:
        return FollowUp(self.table, sums=True) if self.partitions else None


def export_spark_stats(spark: SparkSession, metastore: Metastore, table: Table, spark_table: str) -> Result:
    """Writes the metastore's accurate table-level statistics of `table` into Spark's (Hive) catalog table
    `spark_table` as Spark's properties; `details` (SparkStatsExport) has the optimizer's plan statistics
    before and after.
    Columns whose stats are not accurate for the current snapshot, or that Spark's table lacks, are skipped."""
    target = read_table_statistics(spark, spark_table)
    basic_ok = metastore.accuracy.stats_compliance_summary(table.dbName, table.tableName, []).not_accurate == 0
    if not basic_ok:
        raise InvalidArgument(f"the statistics of {table.qualified_name} are not accurate; ANALYZE it first")
    num_bins = int(spark.conf.get("spark.sql.statistics.histogram.numBins", str(DEFAULT_NUM_BINS)) or DEFAULT_NUM_BINS)
    histograms = spark.conf.get("spark.sql.statistics.histogram.enabled", "false") == "true"
    properties, skipped, col_stats = spark_statistics_properties(metastore, table, target, num_bins, histograms)
    partition_properties = _partition_properties(metastore, table, target)
    with spark_errors(f"cannot write statistics into Spark's table {target.qualified_name}"):
        before = plan_statistics(spark, target.qualified_name)
        written = write_table_statistics(spark, target.qualified_name, properties)
        written += write_partition_statistics(spark, target.qualified_name, partition_properties)
        after = plan_statistics(spark, target.qualified_name)
    cbo = spark.conf.get("spark.sql.cbo.enabled", "false") == "true"
    return Result(message=f"Exported {len(col_stats)} column(s) of {table.qualified_name} to Spark's "
                          f"{target.qualified_name}: {after}"
                          + ("" if cbo else " (spark.sql.cbo.enabled is false: Spark's optimizer uses only the size)"),
                  details=SparkStatsExport(properties, partition_properties, written, skipped, before, after))


def spark_statistics_properties(metastore: Metastore, table: Table, target: SparkTable, num_bins: int,
                                histograms: bool) -> tuple[dict[str, str], dict[str, str], dict[str, CatalogColumnStat]]:
    """The `spark.sql.statistics.*` properties Spark's own ANALYZE ... FOR ALL COLUMNS would write for Spark's
    table `target` on the lab table's files: its size and rows, each data column's accurate statistics and
    each partition column's (from the partitions: every row of one holds its value), with histograms of
    `num_bins` bins when `histograms` (Spark's spark.sql.statistics.histogram.enabled). Returns the
    properties, the columns skipped with why, and the column statistics by Spark's spelling."""
    skipped = not_exported(table)
    column_names = [c.name for c in table.cols if c.name not in skipped]
    stored = metastore.column_stats.get_table_statistics(table.dbName, table.tableName, column_names)
    rows = int(table.parameters.get("numRows", 0))
    col_stats: dict = {}
    for obj in (stored.statsObj if stored else []):
        reason = _export_blocker(metastore, table, obj, target.columns)
        if reason:
            skipped[obj.colName] = reason
            continue
        # Spark's optimizer looks a column's statistics up by the name its schema spells (userId, not userid)
        col_stats[target.spelled.get(obj.colName, obj.colName)] = column_stat_from_hive(obj, rows, num_bins, histograms)
    parts = metastore.catalog.get_partitions(table.dbName, table.tableName) if table.is_partitioned else []
    for index, key in enumerate(table.partitionKeys):
        if key.name not in target.columns:
            continue
        # by Spark's type of the key: the lab may have taken `p=0` directories for an int where Spark has a string
        col_stats[target.spelled.get(key.name, key.name)] = partition_column_stat(
            target.columns[key.name], rows_by_key_value(parts, index), num_bins, histograms)
    statistics = CatalogStatistics(int(table.parameters.get("totalSize", 0)), rows, col_stats)
    properties = stats_to_properties(statistics, [target.spelled.get(c, c) for c in target.columns])
    exported = [o.colName for o in (stored.statsObj if stored else []) if o.colName not in skipped]
    tiers = tiers_by_column([p.parameters for p in parts] if table.is_partitioned else [table.parameters], exported)
    if tiers:
        # under Spark's prefix, where Spark reads no such key and its own ANALYZE drops it with the figures it marks
        properties[SAMPLED_PROPERTY] = ";".join(f"{target.spelled.get(c, c)}={tier}" for c, tier in sorted(tiers.items()))
    return properties, skipped, col_stats


def _partition_properties(metastore, table, target) -> dict[str, dict[str, str]]:
    """Spark's partition statistics (size and rows, as its `alterPartitions` keeps them) of every partition
    of a partitioned table whose basic statistics are accurate, for the partitions Spark's table has."""
    if not table.is_partitioned or target.partition_columns != table.partition_key_names:
        return {}
    compliance = metastore.accuracy.stats_compliance(table.dbName, table.tableName, [])
    return {p.partName: stats_to_properties(CatalogStatistics(int(p.parameters.get("totalSize", 0) or 0),
                                                              int(p.parameters.get("numRows", 0) or 0)), [])
            for p in metastore.catalog.get_partitions(table.dbName, table.tableName)
            if compliance[p.partName][0] and p.partName in target.partitions}


def _export_blocker(metastore, table, obj, spark_columns: dict[str, str]) -> str | None:
    spark_type = spark_columns.get(obj.colName)
    if spark_type is None:
        return "Spark's table has no such column"
    if spark_type != "timestamp_ntz" and parse_type(spark_type).stats_kind is not parse_type(obj.colType).stats_kind:
        return f"Spark's column is {spark_type}, ours is {obj.colType}"
    stale = metastore.accuracy.stats_compliance_summary(table.dbName, table.tableName, [obj.colName]).first
    return stale[1] if stale else None

