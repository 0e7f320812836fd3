"""Queries answered from statistics against the same queries run by Spark, and the cost of
gathering statistics during a write against a plain write, on the same data in the same run.

    .venv/bin/python bench/answers_from_stats.py [--rows 10000000] [--partitions 30] [--runs 5]
                                                 [--external-only | --dynamic-only]

External tables: another job may change their files at any time, so statistics answer only after a
listing of the partitions asked about shows the files ANALYZE read. The last section measures that
listing (and the answer that includes it) for 30 and 3,000 partitions, against Spark running the query.
"""
from __future__ import annotations

import os
import shutil
import statistics
import sys

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from common import DDL, alternated_medians, bench_lab, bench_table, footers_lack, median_of, peak_rss_mib, timed

QUERIES = [
    "SELECT count(*) FROM bench",
    "SELECT count(*), min(x), max(x) FROM bench",
    "SELECT count(*), min(amount), max(amount), count(note) FROM bench WHERE ds >= '2026-10-10' AND ds < '2026-10-20'",
]


def main() -> None:
    args = _arguments()
    lab = bench_lab(fresh=True)
    if args.dynamic_only:
        lab.set("hive.stats.column.autogather", False)
        dynamic_writes(lab, bench_table(lab, args.rows, args.partitions), args)
        return
    if not args.external_only:
        managed(lab, args)
    for partitions in (30, 3000):
        external_listing(lab, partitions, args.runs)
    print(f"peak memory of the Python process: {peak_rss_mib():.0f} MiB")


def _arguments():
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=30)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--external-only", action="store_true")
    parser.add_argument("--dynamic-only", action="store_true")
    return parser.parse_args()


def managed(lab, args) -> None:
    source = bench_table(lab, args.rows, args.partitions)
    lab.sql("ANALYZE TABLE bench COMPUTE STATISTICS FOR ALL COLUMNS")
    print(f"table: {args.rows:,} rows, {args.partitions} partitions")

    def from_stats(query):
        result = lab.sql(query)
        assert result.answered_from == "stats", result.reason
        return result

    def by_spark(query):
        lab.set("hive.compute.query.using.stats", False)
        try:
            result = lab.sql(query)
        finally:
            lab.set("hive.compute.query.using.stats", True)
        assert result.answered_from == "scan"
        return result

    for query in QUERIES:
        ours_result, theirs_result = from_stats(query), by_spark(query)  # warm both, and compare
        def shown(frame):
            return [None if pd.isna(frame[c].iloc[0]) else str(frame[c].iloc[0]) for c in frame.columns]

        assert shown(ours_result.df) == shown(theirs_result.df), (shown(ours_result.df), shown(theirs_result.df))
        ours, _ = median_of(args.runs, lambda: from_stats(query))
        theirs, _ = median_of(args.runs, lambda: by_spark(query))
        print(f"{query}\n  from stats {ours * 1000:.1f} ms, Spark {theirs * 1000:.0f} ms, ratio {ours / theirs:.4f}")

    one_day = source.where("ds = '2026-10-01'").drop("ds").cache()
    day_rows = one_day.count()
    lab.sql(DDL.format(name="target"))

    def write(gather: bool, slot: list[int]):
        lab.set("hive.stats.column.autogather", gather)
        slot[0] += 1
        lab.tables["target"].write(one_day, partition={"ds": f"{'g' if gather else 'p'}{slot[0]}"})

    plain_slot, gather_slot = [0], [0]
    times = alternated_medians(args.runs, {"plain": lambda: write(False, plain_slot),
                                           "gathered": lambda: write(True, gather_slot)})
    plain, gathered = times["plain"], times["gathered"]
    print(f"write of {day_rows:,} rows into one partition: plain {plain:.2f} s, with statistics gathered "
          f"{gathered:.2f} s, overhead ratio {gathered / plain:.2f}")
    write_floor(lab, one_day, args.runs)
    dynamic_writes(lab, source, args)


def write_floor(lab, rows, runs: int) -> None:
    """The floor below a gathered write: Spark writing the same rows to Parquet, bare and with the aggregates
    footers cannot give (`footers_lack`) observed on the write."""
    import uuid

    from pyspark.sql import Observation

    inputs, lacking = footers_lack(rows.schema)
    root = os.path.join(lab.home, "write_floor")

    def write(observed: bool):
        frame = rows.select("*", *inputs).observe(Observation(uuid.uuid4().hex), *lacking).select(*rows.columns) \
            if observed else rows
        frame.write.parquet(os.path.join(root, uuid.uuid4().hex))

    times = alternated_medians(runs, {"bare": lambda: write(False), "observed": lambda: write(True)})
    shutil.rmtree(root, ignore_errors=True)
    print(f"  its floor: Spark's own Parquet write of those rows {times['bare']:.2f} s, with what footers lack "
          f"(HLL sketches, string lengths, true/false counts, floats' min/max) observed {times['observed']:.2f} s, "
          f"ratio {times['observed'] / times['bare']:.2f}")


def dynamic_writes(lab, source, args) -> None:
    """A dynamic-partition write of the whole table (every partition overwritten) with and without
    gathering each partition's column statistics, alternated so both see the same machine."""
    lab.sql(DDL.format(name="dyn_target"))
    times = {False: [], True: []}

    def write(gather: bool):
        lab.set("hive.stats.column.autogather", gather)
        lab.tables["dyn_target"].write(source, mode="overwrite")

    write(False)
    write(True)
    for _ in range(args.runs):
        for gather in (False, True):
            times[gather].append(timed(lambda: write(gather)))
    lab.set("hive.stats.column.autogather", True)
    plain, gathered = statistics.median(times[False]), statistics.median(times[True])
    print(f"dynamic write of {args.rows:,} rows into {args.partitions} partitions: plain {plain:.2f} s, with "
          f"each partition's statistics gathered {gathered:.2f} s, ratio {gathered / plain:.2f}")
    dynamic_floor(lab, source, args.runs)


def dynamic_floor(lab, source, runs: int) -> None:
    """The floor below a gathered dynamic write: Spark's own dynamic-partition Parquet write of the same rows,
    bare and followed by one aggregation of what footers lack over the written files, grouped by partition
    (an observation cannot group by partition, so every single-pass design computes one aggregate per
    partition and column on every row)."""
    import uuid

    keys = ["ds"]
    inputs, lacking = footers_lack(source.schema, keys)
    root = os.path.join(lab.home, "dynamic_floor")

    def write(aggregated: bool):
        path = os.path.join(root, uuid.uuid4().hex)
        source.write.partitionBy(*keys).parquet(path)
        if aggregated:
            lab.spark.read.parquet(path).select(*keys, *inputs).groupBy(*keys).agg(*lacking).collect()

    times = alternated_medians(runs, {"bare": lambda: write(False), "aggregated": lambda: write(True)})
    shutil.rmtree(root, ignore_errors=True)
    print(f"  its floor: Spark's own dynamic-partition write of those rows {times['bare']:.2f} s, then one "
          f"aggregation of what footers lack by partition over the new files "
          f"{times['aggregated']:.2f} s in all, ratio {times['aggregated'] / times['bare']:.2f}")


def external_listing(lab, partitions: int, runs: int) -> None:
    """An external table of `partitions` directories (two small files each, written by pyarrow as
    another job would), analyzed once; then the cost of proving its statistics fresh."""
    name = f"ext{partitions}"
    root = os.path.join(lab.home, name)
    shutil.rmtree(root, ignore_errors=True)
    for k in range(partitions):
        os.makedirs(os.path.join(root, f"k={k}"))
        for part in range(2):
            pq.write_table(pa.table({"v": list(range(k, k + 50))}), os.path.join(root, f"k={k}", f"part-{part}.parquet"))
    lab.register_external(name, root)
    lab.sql(f"ANALYZE TABLE {name} PARTITION (k) COMPUTE STATISTICS FOR COLUMNS v")
    table = lab.metastore.catalog.get_table("default", name)
    parts = lab.metastore.catalog.get_partitions("default", name)
    locations = {p.partName: p.location for p in parts}
    assert lab.metastore.accuracy.external_file_changes(table, locations) == {}
    listing, _ = median_of(runs, lambda: lab.metastore.accuracy.external_file_changes(table, locations))
    print(f"external table, {partitions} partitions x 2 files: listing every partition "
          f"{listing * 1000:.1f} ms ({listing / partitions * 1e6:.0f} us per partition)")
    for query in (f"SELECT count(*), min(v), max(v) FROM {name}", f"SELECT count(*), max(v) FROM {name} WHERE k = 7"):
        stats_result = lab.sql(query)
        assert stats_result.answered_from == "stats", stats_result.reason
        ours, _ = median_of(runs, lambda: lab.sql(query))
        lab.set("hive.compute.query.using.stats", False)
        try:
            scanned = lab.sql(query)
            assert scanned.df.iloc[0].tolist() == stats_result.df.iloc[0].tolist()
            theirs, _ = median_of(runs, lambda: lab.sql(query))
        finally:
            lab.set("hive.compute.query.using.stats", True)
        print(f"  {query}\n    from stats, listing included {ours * 1000:.1f} ms, Spark {theirs * 1000:.0f} ms, "
              f"ratio {ours / theirs:.4f}")
    # the check that catches another job's file
    pq.write_table(pa.table({"v": [10_000]}), os.path.join(root, "k=7", "late.parquet"))
    late = lab.sql(f"SELECT max(v) FROM {name} WHERE k = 7")
    assert late.answered_from == "scan" and late.df.iloc[0, 0] == 10_000, late.reason
    print(f"  after another job adds a file to k=7: {late.reason}")


if __name__ == "__main__":
    sys.exit(main())
