"""Lab tables as Spark plans them with the lab's statistics: a table of the session's catalog over the same
files (database `colstats_plan`), holding the lab's accurate statistics as Spark's own ANALYZE would leave
them, so that a query's join order and join kinds are those Spark picks from statistics.

A lab table is read this way only where the catalog table reads exactly the files the lab's snapshot holds
and the statistics are provably fresh for them: an external Parquet table (each partition at its own
location), every column's statistics accurate now, no column the lab leaves out and no list bucketing; a
nanosecond timestamp is read as the long its files hold and made a timestamp by a view above
(`planned_view`). Everything else is read as files, as before, and the plan report's `statistics` says
"sizes only" and why. The catalog table is made again only when the table's
statistics, partitions or files changed (its token), and dropped with the lab."""
from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

import pandas as pd
from pyspark.sql import functions as F

from ..analyze.stale import staleness_frame
from ..column_statistics.names import parse_part_name
from ..file_columns import SKIPPED_PARAM, nanos_columns
from ..interop.exchange import spark_statistics_properties
from ..interop.spark_catalog import SparkTable
from ..metastore import Table
from ..quoting import column_ref, identifier, string_literal
from ..storage import spark_uri
from ..storage.spark_paths import prefixes_for
from ..tables.kinds import kind_of
from ..tables.snapshot import PartitionFiles, file_schema, spark_type, table_columns

if TYPE_CHECKING:
    from .session import Session

PLAN_DATABASE = "colstats_plan"
PLAN_STATISTICS = "colstats.plan.statistics"  # the lab's setting: false reads every lab table as files
COLUMN_STATS_PREFIX = "spark.sql.statistics.colStats."


def why_not_planned(session: Session, table: Table, parts: list[PartitionFiles],
                    staleness: dict[str, pd.DataFrame] | None = None) -> str | None:
    """Why Spark cannot plan `table`, read as `parts`, with the lab's statistics (None: it can); the staleness
    frame it judged by is kept in `staleness` by the table's name (a listing a caller need not make again)."""
    if not hasattr(session.spark, "_jsparkSession"):
        return "over Spark Connect the lab's statistics are not handed to Spark's catalog yet"
    kind = kind_of(table).name
    if kind != "external":
        return f"a {kind} table: the files of its snapshot are not those of one catalog table's directories"
    if table.storedAsSubDirectories or table.skewedInfo:
        return "list bucketing: its directories are not partitions Spark knows"
    if table.parameters.get(SKIPPED_PARAM):
        return "the lab leaves some of its columns out (types Spark cannot read)"
    if any(p.partition is None or not p.partition.location or None in p.partition.values for p in parts) \
            and table.is_partitioned:
        return "a partition without a location or with a NULL value"
    frame = staleness_frame(session.metastore, table)
    if staleness is not None:
        staleness[table.qualified_name] = frame
    accurate = frame["accurate"].astype(bool)
    if frame.empty or not accurate.all():
        return "the lab's statistics of it are not all accurate now"
    return None


def plan_table(session: Session, table: Table, parts: list[PartitionFiles]) -> str:
    """The catalog table (`colstats_plan.<name>`, unquoted) over `table`'s files with the lab's statistics,
    made now unless the one made for the same statistics, partitions and files is there."""
    plain = f"{session.plan_tables.prefix}__{table.dbName}__{table.tableName}"
    name = f"{PLAN_DATABASE}.{identifier(plain)}"
    histograms = (session.spark.conf.get("spark.sql.statistics.histogram.enabled", "false"),
                  session.spark.conf.get("spark.sql.statistics.histogram.numBins", "254"))
    token = _token(table, parts, histograms)
    made = session.plan_tables.made
    if made.get(name) == token:
        return f"{PLAN_DATABASE}.{plain}"
    spark = session.spark
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {PLAN_DATABASE}")
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    prefixes = prefixes_for(spark, [table.location])
    columns = ", ".join(f"{identifier(name)} {kind}" for name, kind in _file_types(table).items())
    partitioned = f" PARTITIONED BY ({', '.join(identifier(k) for k in table.partition_key_names)})" \
        if table.is_partitioned else ""
    location = spark_uri(table.location, prefixes)
    spark.sql(f"CREATE TABLE {name} ({columns}) USING parquet{partitioned} LOCATION {string_literal(location)}")
    specs = [f"PARTITION ({_spec(p.partition.partName)}) LOCATION {string_literal(spark_uri(p.partition.location, prefixes))}"
             for p in parts if p.partition is not None and p.partition.location]
    for start in range(0, len(specs), 500):
        spark.sql(f"ALTER TABLE {name} ADD IF NOT EXISTS " + " ".join(specs[start:start + 500]))
    _set_statistics(session, table, plain)
    made[name] = token
    return f"{PLAN_DATABASE}.{plain}"


def _set_statistics(session: Session, table: Table, name: str) -> None:
    """The lab's accurate statistics as those of catalog table `name` (of PLAN_DATABASE): what Spark's ANALYZE
    ... FOR ALL COLUMNS would write."""
    spark = session.spark
    target = SparkTable(PLAN_DATABASE, name, table.location, "parquet", _file_types(table),
                        list(table.partition_key_names), None)
    num_bins = int(spark.conf.get("spark.sql.statistics.histogram.numBins", "254") or 254)
    histograms = spark.conf.get("spark.sql.statistics.histogram.enabled", "false") == "true"
    properties, _, col_stats = spark_statistics_properties(session.metastore, table, target, num_bins, histograms)
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # a classic session (why_not_planned)
    per_column = jvm.java.util.HashMap()
    for key, value in properties.items():
        if key.startswith(COLUMN_STATS_PREFIX):
            per_column.put(key[len(COLUMN_STATS_PREFIX):], value)
    as_scala = jvm.org.apache.spark.api.python.PythonUtils.toScalaMap
    stats = jvm.java.util.HashMap()
    for column in col_stats:
        parsed = jvm.org.apache.spark.sql.catalyst.catalog.CatalogColumnStat.fromMap(name, column, as_scala(per_column))
        if parsed.isDefined():
            stats.put(column, parsed.get())
    statistics = _catalog_statistics(spark, int(table.parameters.get("totalSize", 0)),
                                     int(table.parameters.get("numRows", 0)), as_scala(stats))
    identifier = jvm.org.apache.spark.sql.catalyst.TableIdentifier(name, jvm.scala.Some(PLAN_DATABASE))
    spark._jsparkSession.sessionState().catalog().alterTableStats(identifier, jvm.scala.Some(statistics))


def _file_types(table: Table) -> dict[str, str]:
    """The catalog table's columns as its files hold them (a nanosecond timestamp is the long it is: Spark reads
    no TIMESTAMP(NANOS) as a timestamp; `planned_view` makes it one), then the partition keys."""
    return {**{f.name: f.dataType.simpleString() for f in file_schema(table).fields},
            **{k.name: spark_type(k.type).simpleString() for k in table.partitionKeys}}


def planned_view(session: Session, table: Table, catalog_name: str) -> str | None:
    """A temporary view over the catalog table in the lab table's types where its files keep nanosecond
    timestamps (each truncated to its microsecond, as the lab reads them); None where the catalog table is
    read as it is. Spark's estimates keep the row count and every other column's statistics through it."""
    if not nanos_columns(table.parameters):
        return None
    view = f"{catalog_name.split('.', 1)[1]}__timestamps"
    session.spark.table(catalog_name).select(*table_columns(table, unpushed_doubles=False),
                                             *[F.col(column_ref(k.name)) for k in table.partitionKeys]) \
        .createOrReplaceTempView(view)
    return view


def _catalog_statistics(spark, size: int, rows: int, col_stats):
    """Spark's CatalogStatistics(size, Some(rows), col_stats). py4j hands a Scala BigInt back as a Python int,
    so the two are made on the JVM's side, by Spark's own parser of statistics properties
    (`CatalogColumnStat.fromMap` reads a distinct count into Some(BigInt)), and the constructor is called by
    reflection with an argument array filled there."""
    jvm, gateway = spark.sparkContext._jvm, spark.sparkContext._gateway
    as_scala = jvm.org.apache.spark.api.python.PythonUtils.toScalaMap

    def some_bigint(value: int):
        properties = jvm.java.util.HashMap()
        properties.put("n.distinctCount", str(value))
        properties.put("n.version", "2")
        return jvm.org.apache.spark.sql.catalyst.catalog.CatalogColumnStat.fromMap(
            "colstats", "n", as_scala(properties)).get().distinctCount()

    arguments = gateway.new_array(jvm.java.lang.Object, 3)
    size_alone = jvm.scala.jdk.javaapi.CollectionConverters.asJava(some_bigint(size).toList()).toArray()
    jvm.java.lang.System.arraycopy(size_alone, 0, arguments, 0, 1)
    arguments[1] = some_bigint(rows)
    arguments[2] = col_stats
    constructors = jvm.java.lang.Class.forName("org.apache.spark.sql.catalyst.catalog.CatalogStatistics") \
        .getConstructors()
    return next(c for c in constructors if c.getParameterCount() == 3).newInstance(arguments)


def _token(table: Table, parts: list[PartitionFiles], histograms: tuple) -> str:
    """What the catalog table depends on: the table's columns and parameters (its statistics' flags and
    counts), each partition's place, the state of every file read, and Spark's histogram settings."""
    described = [histograms, [(c.name, c.type) for c in table.cols + table.partitionKeys], sorted(table.parameters.items()),
                 [(p.part_name, p.partition.location if p.partition else table.location,
                   sorted(str(f.state) for f in p.files)) for p in parts]]
    return hashlib.sha1(json.dumps(described, default=str).encode()).hexdigest()


def _spec(part_name: str) -> str:
    return ", ".join(f"{identifier(key)} = {string_literal(value or '')}" for key, value in parse_part_name(part_name))


def drop_plan_tables(session: Session) -> None:
    """Drops the catalog tables this lab made (at close: a Hive-backed catalog would keep them)."""
    for name in list(session.plan_tables.made):
        try:
            session.spark.sql(f"DROP TABLE IF EXISTS {name}")
        except Exception:  # a session already stopped keeps nothing to drop
            pass
        session.plan_tables.made.pop(name, None)
