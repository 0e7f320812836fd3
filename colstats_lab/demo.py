"""The demo table: a week of sales with a skewed key, built with Spark in the lab's warehouse."""
from __future__ import annotations

from pyspark.sql import functions as F

from .lab import Lab

DEMO_TABLE = "sales"
DEMO_DAYS = 7
DEMO_ROWS_PER_DAY = 20_000


def build_demo(lab: Lab, rows_per_day: int = DEMO_ROWS_PER_DAY, days: int = DEMO_DAYS) -> bool:
    """Creates and fills the demo table unless it exists; returns True when it was built. The lab gathers
    KLL sketches from here on (hive.stats.kll.enable), so the demo shows distributions."""
    lab.set("hive.stats.kll.enable", True)
    if lab.metastore.catalog.table_exists(lab.current_db, DEMO_TABLE):
        return False
    lab.sql(f"CREATE TABLE {DEMO_TABLE} (id BIGINT, x INT, amount DOUBLE, price DECIMAL(10,2), note STRING, "
            "flag BOOLEAN, day DATE, ts TIMESTAMP) PARTITIONED BY (ds STRING)")
    # the frequent values of every key-like column, kept in ANALYZE's pass: the profile's top values
    lab.sql(f"ALTER TABLE {DEMO_TABLE} SET TBLPROPERTIES ('colstats.frequent.items.columns'='*')")
    rows = lab.spark.range(rows_per_day * days)

    def uniform_for(seed: int):
        # a hash of the row id, so the data is the same whatever Spark's parallelism
        return F.pmod(F.xxhash64(F.col("id"), F.lit(seed)), F.lit(1_000_000)) / 1_000_000.0

    # x: a key with 1,000 values where ten hot ones hold about 70 % of the rows, with geometric
    # weights; which ten are hot shifts from day to day, as in Hive's list-bucketing story.
    day = (F.col("id") % days).cast("int")
    hot_rank = F.least(F.floor(-F.log(uniform_for(17) + 1e-9) / 0.5), F.lit(9)).cast("int")
    skewed = F.when(uniform_for(7) < 0.7, (day * 7 + hot_rank * 37) % 1000).otherwise(
        F.floor(uniform_for(19) * 1000).cast("int"))
    data = rows.select(
        F.col("id"),
        F.when(uniform_for(11) < 0.02, F.lit(None)).otherwise(skewed).cast("int").alias("x"),
        # amounts spread exponentially, their mean growing 20 % a day: a shift the quartiles show
        F.round(-F.log(uniform_for(3) + 1e-9) * (40 + 8 * day), 2).alias("amount"),
        (uniform_for(5) * 100).cast("decimal(10,2)").alias("price"),
        F.when(uniform_for(13) < 0.1, F.lit(None))
         .otherwise(F.concat(F.lit("note-"), (F.col("id") % 97).cast("string"))).alias("note"),
        (F.col("id") % 3 == 0).alias("flag"),
        F.date_add(F.lit("2026-11-01").cast("date"), day).alias("day"),
        F.timestamp_seconds(F.lit(1_795_000_000) + F.col("id")).alias("ts"),
        F.format_string("2026-11-%02d", day + 15).alias("ds"),
    )
    lab.tables[DEMO_TABLE].write(data)
    return True
