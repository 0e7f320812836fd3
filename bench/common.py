"""Shared set-up for benchmarks: a lab on a scratch folder, the benchmark table, timing helpers."""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from pyspark.sql import functions as F  # noqa: E402

from colstats_lab import Lab  # noqa: E402

BENCH_HOME = os.environ.get("COLSTATS_BENCH_HOME", "/tmp/colstats-bench")


def bench_lab(fresh: bool = False, driver_memory: str = "4g") -> Lab:
    if fresh:
        shutil.rmtree(BENCH_HOME, ignore_errors=True)
    return Lab(home=BENCH_HOME, spark_conf={"spark.driver.memory": driver_memory,
                                            "spark.sql.shuffle.partitions": "8"})


def generated(spark, rows: int, partitions: int):
    """`rows` rows over `partitions` ds values: 11 columns of every kind, x zipf-skewed."""
    base = spark.range(rows)
    uniform = F.rand(seed=1)
    zipf = F.floor(F.pow(F.lit(100000.0), uniform * uniform)).cast("int")  # a few values hold most rows
    return base.select(
        F.col("id"),
        zipf.alias("x"),
        (F.rand(seed=2) * 1_000_000).cast("int").alias("y"),
        F.when(F.rand(seed=3) < 0.05, F.lit(None)).otherwise(F.rand(seed=4) * 1000 - 100).alias("amount"),
        (F.rand(seed=5) * 10).cast("float").alias("f"),
        (F.rand(seed=6) * 100000).cast("decimal(10,2)").alias("price"),
        F.concat(F.lit("note-"), (F.rand(seed=7) * 200000).cast("int").cast("string")).alias("note"),
        F.element_at(F.array(*[F.lit(c) for c in ("red", "green", "blue", "")]),
                     (F.rand(seed=8) * 4).cast("int") + 1).alias("category"),
        (F.rand(seed=9) < 0.4).alias("flag"),
        F.date_add(F.lit("2020-01-01").cast("date"), (F.rand(seed=10) * 2000).cast("int")).alias("day"),
        F.timestamp_seconds(F.lit(1_700_000_000) + (F.rand(seed=11) * 1e8).cast("long")).alias("ts"),
        F.format_string("2026-10-%02d", (F.col("id") % partitions).cast("int") + 1).alias("ds"),
    )


DDL = ("CREATE TABLE {name} (id BIGINT, x INT, y INT, amount DOUBLE, f FLOAT, price DECIMAL(10,2), note STRING, "
       "category STRING, flag BOOLEAN, day DATE, ts TIMESTAMP) PARTITIONED BY (ds STRING)")


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_of(runs: int, fn) -> tuple[float, list[float]]:
    times = [timed(fn) for _ in range(runs)]
    return statistics.median(times), times


def alternated_medians(runs: int, works: dict, warmups: int = 1) -> dict[str, float]:
    """Median seconds of each named work over `runs` rounds, one run of each per round, so every work sees
    the same machine (`warmups` rounds first: the JVM's JIT speeds a job up over its first few runs, at 1M rows
    for about five)."""
    for _ in range(warmups):
        for work in works.values():
            work()
    times: dict[str, list[float]] = {name: [] for name in works}
    for _ in range(runs):
        for name, work in works.items():
            times[name].append(timed(work))
    return {name: statistics.median(ts) for name, ts in times.items()}


def peak_rss_mib() -> float:
    """Peak resident memory of this Python process (the JVM is a separate process)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_arguments(runs: int = 3, tables: tuple[str, ...] = ()) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    if tables:
        parser.add_argument("--table", choices=tables, default=tables[0])
        parser.add_argument("--sf", type=float, default=3.0, help="the TPC-DS-derived data's scale factor")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=30)
    parser.add_argument("--runs", type=int, default=runs)
    parser.add_argument("--warmups", type=int, default=1, help="rounds of every timed work before the timed ones")
    return parser.parse_args()


def zipf_strings(spark, rows: int, partitions: int):
    """The issue's second shape: a string column of 200,000 Zipf-distributed values beside a few others, every
    partition written as 1 file of 4 row groups (`write_shape`)."""
    uniform = F.rand(seed=21)
    return spark.range(rows).select(
        F.col("id"),
        F.concat(F.lit("user-"), F.floor(F.pow(F.lit(200_000.0), uniform * uniform)).cast("string")).alias("user"),
        (F.rand(seed=22) * 1000).alias("amount"),
        F.element_at(F.array(*[F.lit(c) for c in ("click", "view", "buy", "scroll")]),
                     (F.rand(seed=23) * 4).cast("int") + 1).alias("event"),
        F.format_string("2026-10-%02d", (F.col("id") % partitions).cast("int") + 1).alias("ds"))


def trial_frames(rows: int, partitions: int = 6, files: int = 3):
    """The issue's trial as pandas and pyarrow write it: `partitions` days of `files` files, row groups of about
    27,000 rows (37 a partition at 3M rows), NaN beside NULL, a Zipf user id, a 5,000-value sku, non-ASCII notes,
    a flag; yields (partition folder name, file index, pyarrow table)."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(7)
    per_file = rows // (partitions * files)
    for day in range(partitions):
        for index in range(files):
            n = per_file
            price = rng.uniform(0, 5355.67, n)
            price[rng.random(n) < 0.01] = np.nan
            yield (f"eventDate=2026-11-0{day + 1}", index, pa.table({
                "userId": pa.array(rng.zipf(1.3, n) % 100_000, pa.int64()),
                "eventType": pa.array(rng.choice(["click", "view", "buy", "sçroll"], n, p=[0.4, 0.4, 0.1, 0.1])),
                "price": pa.array(price, pa.float64(), mask=rng.random(n) < 0.02),
                "note": pa.array([f"nöte-{v % 200_000}" for v in rng.integers(0, 10**6, n)]),
                "flag": pa.array(rng.random(n) < 0.35),
                "sku": pa.array(rng.integers(0, 5000, n), pa.int64())}))


def bench_table(lab: Lab, rows: int, partitions: int, name: str = "bench"):
    """Generates the data once into Parquet, writes it into the lab table `name` (one dynamic-partition
    write), and returns the generated data as a DataFrame for other consumers of the same rows."""
    staging = os.path.join(lab.home, "staging")
    generated(lab.spark, rows, partitions).write.mode("overwrite").parquet(staging)
    source = lab.spark.read.parquet(staging)
    lab.sql(DDL.format(name=name))
    lab.tables[name].write(source)
    return source


def footers_lack(schema, keys=(), kll: bool = False, frequent_items: int = 0) -> tuple[list, list]:
    """The aggregates Parquet footers cannot give (every column but the partition `keys`): the row count, an
    HLL sketch of every column, string lengths, true and false counts, and the minimum, maximum and non-NULL
    count of the types whose footers never serve them (floats: a NaN keeps them out); with `kll`, a KLL sketch of
    every column of a type that has one. Their per-row inputs, to compute in a projection below the aggregation
    as the lab does, and the aggregates over those inputs."""
    from pyspark.sql import functions as F

    from colstats_lab.stats.footers import footer_servable
    from colstats_lab.stats.sketches import kll_aggregate, ndv_input

    types = {f.name: f.dataType.simpleString() for f in schema.fields if f.name not in keys}
    strings = [c for c, t in types.items() if t == "string"]
    unserved = [c for c, t in types.items() if not footer_servable(t)]
    booleans = [c for c, t in types.items() if t == "boolean"]
    inputs = [ndv_input(F.col(c), t).alias(f"h_{c}") for c, t in types.items()]
    inputs += [F.length(c).alias(f"len_{c}") for c in strings]
    inputs += [F.col(c).alias(f"v_{c}") for c in unserved + booleans]
    aggregates = [F.count(F.lit(1)).alias("rows")] + [F.hll_sketch_agg(f"h_{c}").alias(f"n_{c}") for c in types]
    aggregates += [agg(f"len_{c}").alias(f"{agg.__name__}_{c}") for c in strings for agg in (F.max, F.sum)]
    aggregates += [agg(f"v_{c}").alias(f"{agg.__name__}_{c}") for c in unserved for agg in (F.min, F.max, F.count)]
    aggregates += [F.count_if(F.col(f"v_{c}")).alias(f"t_{c}") for c in booleans]
    aggregates += [F.count_if(~F.col(f"v_{c}")).alias(f"f_{c}") for c in booleans]
    if frequent_items:  # what ANALYZE keeps by default: a frequent-items sketch of each integer, date and string
        from colstats_lab.column_statistics.frequent_items import sketchable
        from colstats_lab.stats.sketches import frequent_items_input

        kept = [c for c, t in types.items() if sketchable(t)]
        inputs += [frequent_items_input(F.col(c), types[c]).alias(f"fi_{c}") for c in kept]
        aggregates += [F.expr(f"approx_top_k_accumulate(fi_{c}, {int(frequent_items)}).sketch").alias(f"top_{c}")
                       for c in kept]
    if kll:  # in the sketch's units: days for dates, microseconds for timestamps
        units = {"date": F.unix_date, "timestamp": F.unix_micros}
        distributed = {c: t for c, t in types.items() if kll_aggregate(F.col(c), t) is not None}
        inputs += [(units[t](F.col(c)) if t in units else F.col(c)).alias(f"d_{c}") for c, t in distributed.items()]
        aggregates += [kll_aggregate(F.col(f"d_{c}"), t).alias(f"kll_{c}") for c, t in distributed.items()]
    return inputs, aggregates
