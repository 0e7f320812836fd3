"""What a profile adds to ANALYZE's one pass: the pass as ANALYZE runs it (every column's statistics, KLL sketches
and frequent items, per partition) with and without the figures a profile needs beyond them (each number's sum and
sum of squared deviations; an HLL sketch of each whole row's hash), over the same files, interleaved, medians;
Spark's own ANALYZE ... FOR ALL COLUMNS beside them as the yardstick. Then `profile()`'s time on a table of many
partitions, from the metastore alone.

    .venv/bin/python bench/profile_cost.py [--rows 10000000] [--partitions 30] [--runs 5]
    .venv/bin/python bench/profile_cost.py --profile-partitions 10000

Target: the extra figures cost at most 5 % of the pass; profile() at 10,000 partitions at most 1 s.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import time

from common import DDL, alternated_medians, bench_lab, generated

from colstats_lab.analyze.runner import column_plans
from colstats_lab.sql import parse_one
from colstats_lab.stats import aggregate_stats


def pass_cost(lab, rows: int, partitions: int, runs: int, warmups: int) -> None:
    spark = lab.spark
    folder = os.path.join(lab.home, "profile-cost")
    generated(spark, rows, partitions).write.mode("overwrite").partitionBy("ds").parquet(folder)
    lab.sql(DDL.format(name="costed").replace("CREATE TABLE", "CREATE EXTERNAL TABLE") +
            f" STORED AS PARQUET LOCATION '{folder}'")
    lab.sql("MSCK REPAIR TABLE costed")
    lab.sql("ALTER TABLE costed SET TBLPROPERTIES ('colstats.kll.enable'='true', "
            "'colstats.frequent.items.columns'='*')")
    spark.sql("DROP TABLE IF EXISTS costed_native")
    spark.sql(f"CREATE TABLE costed_native USING parquet LOCATION '{folder}'")
    spark.sql("MSCK REPAIR TABLE costed_native")
    table = lab.resolve("costed")
    statement = parse_one("ANALYZE TABLE costed COMPUTE STATISTICS FOR ALL COLUMNS")
    plans, _ = column_plans(table, statement, kll=True, frequent_items=lab.metastore.settings.frequent_items)
    without = [dataclasses.replace(p, moments=False) for p in plans]
    frame = spark.read.parquet(folder)
    keys = table.partition_key_names
    works = {
        "spark": lambda: spark.sql("ANALYZE TABLE costed_native COMPUTE STATISTICS FOR ALL COLUMNS").collect(),
        "pass without": lambda: aggregate_stats(frame, keys, without),
        "pass with": lambda: aggregate_stats(frame, keys, plans, rows_sketched=True),
    }
    print(f"{rows:,} rows, {partitions} partitions, 11 columns (KLL sketches and frequent items kept); "
          f"{warmups} warm-up round(s), then {runs} alternated")
    times = alternated_medians(runs, works, warmups)
    for name, seconds in times.items():
        print(f"  {name:13s} median {seconds:6.2f} s  {seconds / times['spark']:5.3f} of Spark's")
    extra = times["pass with"] / times["pass without"] - 1
    print(f"  the profile's figures add {extra:+.1%} to the pass (target <= 5 %)")


def profile_time(lab, partitions: int) -> None:
    """A table of `partitions` partitions whose statistics are stored directly (no Spark): a number with its KLL
    sketch and sums, a string with its frequent items, a row sketch each; then profile() timed: it merges every
    partition's sketches (the table level keeps no merged frequent items or row sketch)."""
    from datasketches import PyStringsSerDe, frequent_items_sketch, hll_sketch, kll_doubles_sketch

    from colstats_lab.column_statistics.model import (
        ColumnStatistics,
        ColumnStatisticsData,
        ColumnStatisticsDesc,
        ColumnStatisticsObj,
        DoubleColumnStatsData,
        FieldSchema,
        Moments,
        Partition,
        StringColumnStatsData,
        Table,
    )
    from colstats_lab.metastore import COLUMN_STATS_ACCURATE
    from colstats_lab.metastore.changes import merge_table_level
    from colstats_lab.metastore.repositories.row_sketches import RowSketch
    from colstats_lab.metastore.rows.column_stats_accurate import StatsAccuracy

    ms = lab.metastore
    name = f"wide{partitions}"
    names = [f"ds=p{i:06d}" for i in range(partitions)]
    if not ms.catalog.table_exists("default", name):  # not transactional: its statistics are stored without write IDs
        ms.catalog.create_table(Table("default", name, [FieldSchema("amount", "double"), FieldSchema("city", "string")],
                              [FieldSchema("ds", "string")], location=f"/tmp/{name}",
                              parameters={"transactional": "false"}))
        flags = StatsAccuracy(True, {"amount", "city"}).to_param()
        ms.catalog.add_partitions([Partition("default", name, [n.split("=")[1]],
                                     parameters={"numRows": "100", COLUMN_STATS_ACCURATE: flags}) for n in names])
        stats, row_sketches = [], {}
        for i, part in enumerate(names):
            kll = kll_doubles_sketch(200)
            hll = hll_sketch(12)
            rows = hll_sketch(12)
            for v in range(100):
                kll.update(float(i + v))
                hll.update(float(i + v))
                rows.update(f"{i}-{v}")
            cities = frequent_items_sketch(10)
            for v in range(100):
                cities.update(("Koeln", "Berlin", "Muenchen")[v % 3] if v % 10 else f"town-{i}")
            amount = DoubleColumnStatsData(float(i), float(i + 99), 0, 100, hll.serialize_compact(), kll.serialize(),
                                           0, Moments(float(sum(i + v for v in range(100))), 83325.0))
            city = StringColumnStatsData(6, 6.0, 0, 3, None)
            desc = ColumnStatisticsDesc(False, "default", name, part, int(time.time()))
            stats.append(ColumnStatistics(desc, [
                ColumnStatisticsObj("amount", "double", ColumnStatisticsData.of(amount)),
                ColumnStatisticsObj("city", "string", ColumnStatisticsData.of(city),
                                    cities.serialize(PyStringsSerDe()))]))
            row_sketches[part] = rows.serialize_compact()
        ms.column_stats.set_aggr_stats_for(stats)
        merge_table_level(ms, ms.catalog.get_table("default", name), ["amount", "city"], int(time.time()))
        ms.catalog.alter_table_params("default", name, {"numRows": str(100 * partitions),
                                                "COLUMN_STATS_ACCURATE": StatsAccuracy(True, set()).to_param()})
        ms.row_sketches.set_row_sketches("default", name, {part: RowSketch(sketch, 100, 0, 0) for part,
                                                           sketch in row_sketches.items()})
    handle = lab.tables[name]
    shown = handle.profile()  # warm: the first read of a table's segments builds them
    amount = shown.columns.set_index("column").loc["amount"]
    print(f"  its amount: {amount['rows']:,} rows, mean {amount['mean']}, histogram of "
          f"{len(amount['histogram']['counts']) if amount['histogram'] else 0} bins; duplicates {shown.duplicates}")
    seconds = []
    for _ in range(3):
        started = time.perf_counter()
        handle.profile()
        seconds.append(time.perf_counter() - started)
    print(f"profile() of a table of {partitions:,} partitions: {sorted(seconds)[1]:.3f} s (median of 3, no Spark; "
          "target <= 1 s)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=30)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warmups", type=int, default=1)
    parser.add_argument("--profile-partitions", type=int, default=0,
                        help="time profile() on a table of this many partitions instead")
    args = parser.parse_args()
    lab = bench_lab(fresh=True)
    if args.profile_partitions:
        profile_time(lab, args.profile_partitions)
    else:
        pass_cost(lab, args.rows, args.partitions, args.runs, args.warmups)


if __name__ == "__main__":
    main()
