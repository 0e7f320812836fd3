"""Runs in its own process (a Hive-enabled session can't share the test session's JVM): exports a lab
table's statistics into Spark's Hive catalog, imports Spark's own, and prints what Spark then reports
as JSON for tests/test_spark_catalog_hive.py to check."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import sys

from colstats_lab import Lab
from colstats_lab.engine import build_session
from colstats_lab.interop import plan_statistics, read_table_statistics
from colstats_lab.stats.spark_properties import stats_from_properties

COLUMNS = ["id", "x", "amount", "f", "price", "note", "flag", "day", "ts"]
SCHEMA = ("id BIGINT, x INT, amount DOUBLE, f FLOAT, price DECIMAL(10,2), note STRING, flag BOOLEAN, day DATE, "
          "ts TIMESTAMP")


def table_params(spark, home: str, table: str) -> dict[str, str]:
    """What the Hive metastore (embedded Derby) holds for the table, read through Spark's JDBC source."""
    rows = (spark.read.format("jdbc").option("url", f"jdbc:derby:{home}/metastore_db")
            .option("driver", "org.apache.derby.jdbc.EmbeddedDriver")
            .option("query", "SELECT P.PARAM_KEY, CAST(P.PARAM_VALUE AS VARCHAR(4000)) AS V FROM TABLE_PARAMS P "
                             f"JOIN TBLS T ON T.TBL_ID = P.TBL_ID WHERE T.TBL_NAME = '{table}'").load().collect())
    return {r[0]: r[1] for r in rows}


def describe(spark, table: str, column: str) -> dict[str, str]:
    return {r.info_name: r.info_value for r in spark.sql(f"DESCRIBE EXTENDED {table} {column}").collect()}


def main(home: str, rows_file: str) -> None:
    spark = build_session(home, master="local[1]", conf={
        "spark.sql.catalogImplementation": "hive", "spark.sql.shuffle.partitions": "1", "spark.sql.cbo.enabled": "true",
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={home}/metastore_db;create=true"})
    lab = Lab(home=os.path.join(home, "lab"), spark=spark)
    lab.sql(f"CREATE TABLE sales ({SCHEMA})")
    data = spark.read.json(rows_file, schema=SCHEMA)
    lab.tables["sales"].write(data)
    lab.sql("ANALYZE TABLE sales COMPUTE STATISTICS FOR ALL COLUMNS")
    lab.tables["sales"].to_spark().write.format("parquet").saveAsTable("default.sales_spark")
    exported = lab.tables["sales"].export_spark_stats("default.sales_spark")
    spark.sql("CREATE TABLE sales_native USING parquet AS SELECT * FROM sales_spark")
    spark.sql("ANALYZE TABLE sales_native COMPUTE STATISTICS FOR ALL COLUMNS")
    native_params = table_params(spark, home, "sales_native")
    from_params = stats_from_properties(native_params, COLUMNS)
    described = read_table_statistics(spark, "sales_native").statistics
    imported = lab.import_spark_stats("default.sales_native")
    # a column Spark spells in mixed case: its statistics must be keyed as Spark's schema spells it
    spark.sql("CREATE TABLE users_spark (userId BIGINT) USING parquet")
    lab.sql("CREATE TABLE users (userid BIGINT)")
    lab.tables["users"].write(spark.range(40).selectExpr("id % 4 AS userid"))
    lab.sql("ANALYZE TABLE users COMPUTE STATISTICS FOR ALL COLUMNS")
    lab.tables["users"].to_spark().selectExpr("userid AS userId").write.insertInto("users_spark")
    plan_filter_before = _filter_plan(spark)
    users = lab.tables["users"].export_spark_stats("default.users_spark")
    # a partitioned table both ways: partition statistics as Spark's alterPartitions keeps them
    lab.sql("CREATE TABLE daily (v INT) PARTITIONED BY (ds STRING)")
    days = spark.range(30).selectExpr("CAST(id AS INT) AS v", "IF(id < 10, 'a', 'b') AS ds")
    lab.tables["daily"].write(days)
    lab.tables["daily"].to_spark().write.format("parquet").partitionBy("ds").saveAsTable("default.daily_spark")
    daily = lab.tables["daily"].export_spark_stats("default.daily_spark")
    spark.sql("CREATE TABLE daily_native USING parquet PARTITIONED BY (ds) AS SELECT * FROM daily_spark")
    spark.sql("ANALYZE TABLE daily_native PARTITION (ds) COMPUTE STATISTICS")
    imported_daily = lab.import_spark_stats("default.daily_native")
    histograms = _histograms_both_ways(spark, lab)
    tiered = _tiered_export(spark, lab, home)
    filtered = _partition_filter_plans(spark, lab)
    print(json.dumps({
        "filtered": filtered,
        "tiered": tiered,
        "histograms": histograms,
        "daily_partition_properties": daily.details.partition_properties,
        "daily_spark_partitions": {name: [s.sizeInBytes, s.rowCount] for name, s in
                                   read_table_statistics(spark, "daily_spark").partitions.items()},
        "daily_imported": imported_daily.details.partitions,
        "daily_native_rows": {p.partName: p.parameters.get("numRows") for p in
                              lab.metastore.catalog.get_partitions("default", "daily_native")},
        "plan_before": exported.details.plan_before, "plan_after": exported.details.plan_after,
        "plan_now": plan_statistics(spark, "sales_spark"),
        "exported": exported.details.properties, "skipped": exported.details.skipped,
        "stored_after_export": {k: v for k, v in table_params(spark, home, "sales_spark").items()
                                if k.startswith("spark.sql.statistics.")},
        "spark_describes_export": {c: describe(spark, "sales_spark", c) for c in COLUMNS},
        "native_from_params": repr(from_params), "native_described": repr(described),
        "imported": dataclasses.asdict(imported.details),
        "imported_x": repr(lab.metastore.column_stats.get_table_column_statistics("default", "sales_native", "x").obj("x")),
        "mixed_case_keys": sorted(k for k in users.details.properties if "colStats" in k),
        "mixed_case_described": describe(spark, "users_spark", "userId"),
        "mixed_case_filter_before": plan_filter_before, "mixed_case_filter_after": _filter_plan(spark),
    }))


HISTOGRAM_ROWS = 2_000  # x: 90 % in [0, 100), the rest spread over [100, 10000)


def _tiered_export(spark, lab, home: str) -> dict:
    """Figures from the files' metadata alone exported: Spark's properties name them; Spark's own ANALYZE drops
    that mark with the figures it replaces."""
    lab.sql("CREATE TABLE tiered (v INT, s STRING)")
    lab.tables["tiered"].write(spark.range(30).selectExpr("CAST(id AS INT) AS v", "CAST(id % 4 AS STRING) AS s"))
    lab.tables["tiered"].analyze(["s"], metadata_only=True)
    lab.tables["tiered"].to_spark().write.format("parquet").saveAsTable("default.tiered_spark")
    lab.tables["tiered"].export_spark_stats("default.tiered_spark")
    exported = table_params(spark, home, "tiered_spark")
    described = describe(spark, "tiered_spark", "s")
    spark.sql("ANALYZE TABLE tiered_spark COMPUTE STATISTICS FOR ALL COLUMNS")
    return {"exported": {k: v for k, v in exported.items() if k.startswith("spark.sql.statistics.")},
            "described": described,
            "after_spark_analyze": {k: v for k, v in table_params(spark, home, "tiered_spark").items()
                                    if k.startswith("spark.sql.statistics.")}}


def _histograms_both_ways(spark, lab) -> dict:
    """Our KLL sketch exported as Spark's histogram, and Spark's own histogram imported as a sketch."""
    lab.sql("CREATE TABLE hist (x BIGINT)")
    lab.tables["hist"].write(spark.range(HISTOGRAM_ROWS).selectExpr(
        "IF(id % 10 = 0, 100 + id * 9900 DIV 2000, id % 100) AS x"))
    lab.tables["hist"].to_spark().write.format("parquet").saveAsTable("default.hist_spark")
    lab.tables["hist"].export_spark_stats("default.hist_spark")  # gathered on write without a sketch
    without = _row_estimate(spark, "hist_spark")
    lab.set("hive.stats.kll.enable", True)
    lab.sql("ANALYZE TABLE hist COMPUTE STATISTICS FOR COLUMNS")
    spark.conf.set("spark.sql.statistics.histogram.enabled", "true")  # the export writes histograms as Spark would
    lab.tables["hist"].export_spark_stats("default.hist_spark")
    spark.conf.set("spark.sql.cbo.planStats.enabled", "true")
    spark.sql("CREATE TABLE hist_native USING parquet AS SELECT * FROM hist_spark")
    spark.sql("ANALYZE TABLE hist_native COMPUTE STATISTICS FOR ALL COLUMNS")
    lab.import_spark_stats("default.hist_native")
    imported = lab.tables["hist_native"].distribution("x")
    return {"described": describe(spark, "hist_spark", "x"), "estimate_without": without,
            "estimate_with": _row_estimate(spark, "hist_spark"), "native_estimate": _row_estimate(spark, "hist_native"),
            "actual": spark.sql("SELECT count(*) FROM hist_spark WHERE x < 100").collect()[0][0],
            "imported_quartiles": imported.quartiles() if imported is not None else None,
            "exact_quartiles": [r[0] for r in spark.sql(
                "SELECT x FROM (SELECT x, row_number() OVER (ORDER BY x) - 1 AS i FROM hist_spark) "
                f"WHERE i IN ({HISTOGRAM_ROWS // 4}, {HISTOGRAM_ROWS // 2}, {3 * HISTOGRAM_ROWS // 4}) ORDER BY i").collect()]}


def _partition_filter_plans(spark, lab) -> dict:
    """One partitioned table's files read by two Spark tables: one with the lab's exported statistics, one with
    Spark's own ANALYZE (table and partitions); the optimizer's statistics of a one-partition filter on each."""
    rows = spark.range(300).selectExpr("id", "CAST(id % 3 AS STRING) AS p")
    rows.write.format("parquet").partitionBy("p").saveAsTable("default.parts_lab")
    location = spark.sql("DESCRIBE TABLE EXTENDED parts_lab").where("col_name = 'Location'").collect()[0][1]
    spark.sql(f"CREATE TABLE parts_native (id BIGINT, p STRING) USING parquet PARTITIONED BY (p) LOCATION '{location}'")
    spark.sql("ALTER TABLE parts_native RECOVER PARTITIONS")
    spark.sql("ANALYZE TABLE parts_native COMPUTE STATISTICS FOR ALL COLUMNS")
    spark.sql("ANALYZE TABLE parts_native PARTITION (p) COMPUTE STATISTICS")
    lab.register_external("parts", location.removeprefix("file:"))
    lab.sql("ANALYZE TABLE parts COMPUTE STATISTICS FOR ALL COLUMNS")
    lab.tables["parts"].export_spark_stats("default.parts_lab")

    def plan(table: str) -> list[str]:
        text = spark.sql(f"EXPLAIN COST SELECT id FROM {table} WHERE p = '2'").collect()[0][0]
        return re.findall(r"Statistics\([^)]*\)", text.split("== Physical Plan ==")[0])

    return {"lab": plan("parts_lab"), "native": plan("parts_native")}


def _row_estimate(spark, table: str) -> int | None:
    """The optimizer's rows for `x < 100` over `table` (cbo on), from EXPLAIN COST."""
    plan = spark.sql(f"EXPLAIN COST SELECT * FROM {table} WHERE x < 100").collect()[0][0]
    found = re.search(r"rowCount=([0-9.E+]+)", plan)  # the first: the filter's, at the plan's top
    return int(float(found.group(1))) if found else None


def _filter_plan(spark) -> str:
    """The optimizer's row estimate for an equality on the mixed-case column (cbo on)."""
    plan = spark.sql("EXPLAIN COST SELECT * FROM users_spark WHERE userId = 2").collect()[0][0]
    return plan.split("== Physical Plan ==")[0]


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
