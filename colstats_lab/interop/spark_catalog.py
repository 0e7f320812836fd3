"""Reading the statistics Spark keeps in its session catalog, and writing ours into a Hive catalog.

Reading goes through `DESCRIBE EXTENDED` (the table's `Statistics` row and one row set per column),
so it works with any catalog Spark has — in-memory or Hive — and over Spark Connect.

Writing needs a Hive-enabled session. Spark refuses `spark.sql.*` keys in `ALTER TABLE ... SET
TBLPROPERTIES` ("table property keys may not start with 'spark.sql.'"), and its in-memory catalog
keeps statistics only from its own ANALYZE, so the properties are written into the Hive
metastore's `TABLE_PARAMS` through Spark's JDBC source (each statement as the source's
`sessionInitStatement`, in the driver's JVM, where the embedded Derby database is open) — the
same rows Spark's own ANALYZE writes there — and then `REFRESH TABLE` makes Spark read them.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from pyspark.sql import SparkSession

from ..column_statistics.names import parse_part_name
from ..errors import ColstatsError, spark_errors
from ..quoting import identifier, qualified, string_literal
from ..quoting import standard_string_literal as _derby
from ..stats.spark_histogram import HistogramBin, SparkHistogram
from ..stats.spark_properties import STATISTICS_PREFIX, CatalogColumnStat, CatalogStatistics, to_external_string

_STATISTICS_ROW = re.compile(r"^(\d+) bytes(?:, (\d+) rows)?")
_NUMBER = r"(-?[0-9.]+(?:E-?[0-9]+)?|NaN|-?Infinity)"
_HISTOGRAM_ROW = re.compile(rf"^height: {_NUMBER}, num_of_bins: (\d+)$")
_BIN_ROW = re.compile(rf"^lower_bound: {_NUMBER}, upper_bound: {_NUMBER}, distinct_count: (\d+)$")
_PLAN_STATISTICS = re.compile(r"Statistics\(sizeInBytes=([^,)]+)(?:, rowCount=([^,)]+))?")
_DEFAULT_METASTORE_URL = "jdbc:derby:;databaseName=metastore_db;create=true"
_DEFAULT_METASTORE_DRIVER = "org.apache.derby.jdbc.EmbeddedDriver"


class UnsupportedCatalog(ColstatsError):
    """The session's catalog cannot take statistics from outside."""


@dataclass
class SparkTable:
    """A table of Spark's session catalog: its columns (lower-case, as Hive names them) with Spark's type
    names, each column's name as Spark's schema spells it, and its statistics."""

    database: str
    name: str
    location: str | None
    provider: str | None
    columns: dict[str, str]
    partition_columns: list[str]
    statistics: CatalogStatistics | None
    spelled: dict[str, str] = field(default_factory=dict)  # lower-case name -> Spark's spelling
    # partition name (Hive's escaping) -> the partition's statistics, for those Spark keeps any of
    partitions: dict[str, CatalogStatistics] = field(default_factory=dict)
    partition_names: list[str] = field(default_factory=list)  # every partition Spark's catalog has
    partition_locations: dict[str, str] = field(default_factory=dict)  # partition name -> its directory

    @property
    def qualified_name(self) -> str:
        return f"{self.database}.{self.name}"


def _split_name(spark: SparkSession, name: str) -> tuple[str, str]:
    db, _, table = name.lower().rpartition(".")
    return db or spark.catalog.currentDatabase(), table


def read_table_statistics(spark: SparkSession, name: str) -> SparkTable:
    """The statistics Spark keeps for `name` (`db.table` or a table of the current database); raises
    QueryError naming it when Spark's catalog does not have it."""
    with spark_errors(f"cannot read Spark's table {name}"):
        return _read_table_statistics(spark, name)


def _read_table_statistics(spark: SparkSession, name: str) -> SparkTable:
    database, table = _split_name(spark, name)
    table_ref = qualified(database, table)
    columns, partition_columns, spelled = {}, [], {}
    for column in spark.catalog.listColumns(f"{database}.{table}"):
        columns[column.name.lower()] = column.dataType
        spelled[column.name.lower()] = column.name
        if column.isPartition:
            partition_columns.append(column.name.lower())
    info = {r[0]: r[1] for r in spark.sql(f"DESCRIBE TABLE EXTENDED {table_ref}").collect()}
    location = info.get("Location")
    if location and location.startswith("file:"):
        location = re.sub(r"^file:(//)?", "", location)
    statistics = None
    match = _STATISTICS_ROW.match(info.get("Statistics") or "")
    if match:
        col_stats = {}
        for name, type_name in columns.items():
            stat = _describe_column(spark, table_ref, name, type_name)
            if stat is not None:
                col_stats[name] = stat
        statistics = CatalogStatistics(int(match.group(1)), None if match.group(2) is None else int(match.group(2)),
                                       col_stats)
    partitions, partition_names, partition_locations = {}, [], {}
    if partition_columns:
        for (name,) in spark.sql(f"SHOW PARTITIONS {table_ref}").collect():
            partition_names.append(name)
            spec = ", ".join(f"{identifier(k)} = {'NULL' if v is None else string_literal(v)}"
                             for k, v in parse_part_name(name))
            described = spark.sql(f"DESCRIBE TABLE EXTENDED {table_ref} PARTITION ({spec})").collect()
            rows = {r[0]: r[1] for r in described}
            # the partition's Location comes first; the table's own follows in its storage information
            where = next((r[1] for r in described if r[0] == "Location"), None)
            if where:
                partition_locations[name] = _local(where)
            found = _STATISTICS_ROW.match(rows.get("Partition Statistics") or "")
            if found:
                partitions[name] = CatalogStatistics(int(found.group(1)),
                                                     None if found.group(2) is None else int(found.group(2)))
    return SparkTable(database, table, location, info.get("Provider"), columns, partition_columns, statistics,
                      spelled, partitions, partition_names, partition_locations)


def _local(location: str) -> str:
    """Spark's `file:` location of a directory as a path. It is Hadoop's Path text, not a URI: `ds=a%3Ab` is
    the directory's own name (Hive's escape of `a:b`), never decoded."""
    return re.sub(r"^file:(//)?", "", location) if location.startswith("file:") else location


def _describe_column(spark: SparkSession, table_ref: str, column: str, type_name: str) -> CatalogColumnStat | None:
    rows = {r.info_name: r.info_value for r in spark.sql(f"DESCRIBE TABLE EXTENDED {table_ref} {identifier(column)}")
            .collect()}

    def value(key):
        text = rows.get(key)
        return None if text in (None, "NULL") else text

    counts = {key: value(key) for key in ("distinct_count", "num_nulls", "avg_col_len", "max_col_len")}
    if all(v is None for v in counts.values()):
        return None  # Spark has no statistics for this column (no `.version` marker)

    def integer(key):
        return None if counts[key] is None else int(counts[key])

    low, high = (_property_bound(value(key), type_name) for key in ("min", "max"))
    histogram = _described_histogram(rows)
    return CatalogColumnStat(distinctCount=integer("distinct_count"), nullCount=integer("num_nulls"),
                             avgLen=integer("avg_col_len"), maxLen=integer("max_col_len"), min=low, max=high,
                             histogram=histogram.serialize() if histogram is not None else None)


def _described_histogram(rows: dict[str, str]) -> SparkHistogram | None:
    """The histogram DESCRIBE EXTENDED spells out (`histogram: height: H, num_of_bins: N` and a `bin_i` row
    `lower_bound: L, upper_bound: U, distinct_count: D` per bin), as Spark keeps it."""
    head = _HISTOGRAM_ROW.match(rows.get("histogram") or "")
    if not head:
        return None
    bins = []
    for i in range(int(head.group(2))):
        found = _BIN_ROW.match(rows.get(f"bin_{i}") or "")
        if not found:
            return None
        bins.append(HistogramBin(float(found.group(1)), float(found.group(2)), int(found.group(3))))
    return SparkHistogram(float(head.group(1)), tuple(bins))


def _property_bound(text: str | None, type_name: str) -> str | None:
    """DESCRIBE prints timestamps in the session time zone with an offset; the property is UTC."""
    if text is None or type_name.lower() != "timestamp":
        return text
    moment = dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f %z")
    return to_external_string(moment, "timestamp")


def plan_statistics(spark: SparkSession, name: str) -> str:
    """The `Statistics(sizeInBytes=..., rowCount=...)` Spark's optimizer gives a scan of `name`."""
    database, table = _split_name(spark, name)
    plan = spark.sql(f"EXPLAIN COST SELECT * FROM {qualified(database, table)}").collect()[0][0]
    found = [m.group(0) + ")" for m in _PLAN_STATISTICS.finditer(plan)]
    return found[-1] if found else ""


def write_table_statistics(spark: SparkSession, name: str, properties: dict[str, str]) -> int:
    """Replaces the `spark.sql.statistics.*` properties of a table in the session's Hive metastore with
    `properties`; returns how many are stored. Raises UnsupportedCatalog without Hive support."""
    _require_hive(spark)
    if any(not key.startswith(STATISTICS_PREFIX) for key in properties):
        raise ValueError("only spark.sql.statistics.* properties are written")
    database, table = _split_name(spark, name)
    url, driver = _metastore_connection(spark)
    table_id = (f"(SELECT T.TBL_ID FROM TBLS T JOIN DBS D ON T.DB_ID = D.DB_ID "
                f"WHERE D.NAME = {_derby(database)} AND T.TBL_NAME = {_derby(table)})")
    count = f"SELECT COUNT(*) AS N FROM TABLE_PARAMS WHERE TBL_ID = {table_id} AND PARAM_KEY LIKE 'spark.sql.statistics.%'"

    def run(init_statement: str | None, query: str) -> int:
        return _jdbc_count(spark, url, driver, query, init_statement)

    if run(None, f"SELECT COUNT(*) AS N FROM TBLS T JOIN DBS D ON T.DB_ID = D.DB_ID WHERE D.NAME = {_derby(database)} "
                 f"AND T.TBL_NAME = {_derby(table)}") != 1:
        raise UnsupportedCatalog(f"table {database}.{table} is not in the Hive metastore at {url}")
    run(f"DELETE FROM TABLE_PARAMS WHERE TBL_ID = {table_id} AND PARAM_KEY LIKE 'spark.sql.statistics.%'", count)
    # Derby types a VALUES column of literals as CHAR(longest), padding shorter keys with blanks
    values = ", ".join(f"(CAST({_derby(k)} AS VARCHAR(256)), CAST({_derby(v)} AS VARCHAR(4000)))"
                       for k, v in sorted(properties.items()))
    stored = run(f"INSERT INTO TABLE_PARAMS (TBL_ID, PARAM_KEY, PARAM_VALUE) SELECT {table_id}, V.K, V.V "
                 f"FROM (VALUES {values}) AS V(K, V)", count) if properties else 0
    spark.sql(f"REFRESH TABLE {qualified(database, table)}")
    return stored


def write_partition_statistics(spark: SparkSession, name: str, properties: dict[str, dict[str, str]]) -> int:
    """Replaces the `spark.sql.statistics.*` parameters of the named partitions (Hive's partition names)
    of a table in the session's Hive metastore, as Spark's `alterPartitions` keeps partition statistics;
    returns how many parameters are stored. Two statements, whatever the number of partitions."""
    _require_hive(spark)
    if any(not key.startswith(STATISTICS_PREFIX) for entries in properties.values() for key in entries):
        raise ValueError("only spark.sql.statistics.* properties are written")
    if not properties:
        return 0
    database, table = _split_name(spark, name)
    url, driver = _metastore_connection(spark)
    names = ", ".join(_derby(p) for p in sorted(properties))
    part_ids = (f"SELECT P.PART_ID FROM PARTITIONS P JOIN TBLS T ON T.TBL_ID = P.TBL_ID JOIN DBS D ON D.DB_ID = "
                f"T.DB_ID WHERE D.NAME = {_derby(database)} AND T.TBL_NAME = {_derby(table)} AND P.PART_NAME IN ({names})")
    count = (f"SELECT COUNT(*) AS N FROM PARTITION_PARAMS WHERE PART_ID IN ({part_ids}) "
             "AND PARAM_KEY LIKE 'spark.sql.statistics.%'")
    _jdbc_count(spark, url, driver, count,
                f"DELETE FROM PARTITION_PARAMS WHERE PART_ID IN ({part_ids}) AND PARAM_KEY LIKE 'spark.sql.statistics.%'")
    values = ", ".join(f"(CAST({_derby(p)} AS VARCHAR(767)), CAST({_derby(k)} AS VARCHAR(256)), "
                       f"CAST({_derby(v)} AS VARCHAR(4000)))"
                       for p, entries in sorted(properties.items()) for k, v in sorted(entries.items()))
    stored = _jdbc_count(spark, url, driver, count,
                         f"INSERT INTO PARTITION_PARAMS (PART_ID, PARAM_KEY, PARAM_VALUE) SELECT P.PART_ID, V.K, V.V "
                         f"FROM (VALUES {values}) AS V(N, K, V) JOIN PARTITIONS P ON P.PART_NAME = V.N "
                         f"WHERE P.PART_ID IN ({part_ids})")
    spark.sql(f"REFRESH TABLE {qualified(database, table)}")
    return stored


def _require_hive(spark: SparkSession) -> None:
    if spark.conf.get("spark.sql.catalogImplementation", "in-memory") != "hive":
        raise UnsupportedCatalog(
            "exporting statistics needs a Hive-enabled Spark session (SparkSession.builder.enableHiveSupport()): "
            "the in-memory catalog keeps only statistics computed by its own ANALYZE")


def _metastore_connection(spark: SparkSession) -> tuple[str, str]:
    return (spark.conf.get("spark.hadoop.javax.jdo.option.ConnectionURL", _DEFAULT_METASTORE_URL) or _DEFAULT_METASTORE_URL,
            spark.conf.get("spark.hadoop.javax.jdo.option.ConnectionDriverName", _DEFAULT_METASTORE_DRIVER)
            or _DEFAULT_METASTORE_DRIVER)


def _jdbc_count(spark: SparkSession, url: str, driver: str, query: str, init_statement: str | None = None) -> int:
    """Runs `init_statement` (if any) in the metastore's database through Spark's JDBC source, then the
    counting `query`; returns the count."""
    reader = spark.read.format("jdbc").option("url", url).option("driver", driver).option("query", query)
    if init_statement:
        reader = reader.option("sessionInitStatement", init_statement)
    first = reader.load().first()
    return int(first[0]) if first is not None else 0


