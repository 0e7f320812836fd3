"""Runs in its own process (a Hive-enabled session needs a JVM of its own): a Spark session whose catalog is
the test's Hive Metastore (`hive.metastore.uris`) reads what the lab published there, and makes and
analyzes a table of its own in that metastore, as a Spark user would. Prints JSON for tests/test_hms.py."""
from __future__ import annotations

import json
import re
import sys

from colstats_lab.engine import build_session


def describe(spark, table: str, column: str) -> dict[str, str]:
    return {r.info_name: r.info_value for r in spark.sql(f"DESCRIBE EXTENDED {table} {column}").collect()}


def plan_rows(spark, query: str) -> str:
    plan = spark.sql(f"EXPLAIN COST {query}").collect()[0][0]
    return re.findall(r"Statistics\(([^)]*)\)", plan)[-1]


def main(home: str, uri: str, table: str, columns: str) -> None:
    spark = build_session(home, master="local[1]", conf={
        "spark.sql.catalogImplementation": "hive", "spark.hadoop.hive.metastore.uris": uri,
        "spark.sql.warehouse.dir": f"{home}/spark-warehouse", "spark.sql.shuffle.partitions": "1",
        "spark.sql.cbo.enabled": "true"})
    out = {"described": {c: describe(spark, table, c) for c in columns.split(",")},
           "plan": plan_rows(spark, f"SELECT * FROM {table}"),
           "partition": {r.col_name: r.data_type for r in
                         spark.sql(f"DESCRIBE TABLE EXTENDED {table} PARTITION (ds = '2026-01-02')").collect()}
           .get("Partition Statistics")}
    db = table.split(".")[0]
    spark.sql(f"CREATE TABLE {db}.spark_made (k BIGINT, s STRING) USING parquet")
    spark.sql(f"INSERT INTO {db}.spark_made VALUES (1, 'a'), (2, 'bb'), (2, NULL), (7, 'a'), (9, 'cccc')")
    spark.sql(f"ANALYZE TABLE {db}.spark_made COMPUTE STATISTICS FOR ALL COLUMNS")
    out["spark_made_location"] = spark.sql(f"DESCRIBE TABLE EXTENDED {db}.spark_made").where("col_name = 'Location'") \
        .collect()[0][1]
    print(json.dumps(out))
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:5])
