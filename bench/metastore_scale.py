"""The metastore at 100,000 partitions x 20 columns of statistics (no Spark: the SQLite file alone).

Measures: adding the partitions; a bulk update of 100,000 partition stats rows (one column of every
partition) and of all 2,000,000; get_partitions_by_filter for 1 % of the partitions; one column's
stats for every partition; the merge of table-level stats from partition stats (one column, all
columns); Hive's get_aggr_stats_for over every partition and over the 1 % subset; and a one-day
`count(*), min, max` answered from statistics, against the same on a 30-partition table. Prints the SQLite query plans of the reads. Targets (issue 7): bulk update of 100k rows
< 10 s, by-filter listing < 100 ms, table-level merge < 2 s.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import shutil
import sqlite3
import time

from common import peak_rss_mib, timed
from datasketches import hll_sketch, tgt_hll_type

from colstats_lab.metastore import (COLUMN_STATS_ACCURATE, ColumnStatistics, ColumnStatisticsData,
                                    ColumnStatisticsDesc, ColumnStatisticsObj, Date, DateColumnStatsData,
                                    DoubleColumnStatsData, FieldSchema, LongColumnStatsData, Metastore, Partition,
                                    StatsAccuracy, StringColumnStatsData, Table)
from colstats_lab.pruning.answers import answer_from_stats
from colstats_lab.stats.merge import merge_table_level
from colstats_lab.stats.sketches import NDV_LG_K

COLUMNS = ([(f"n{i}", "bigint") for i in range(10)] + [(f"d{i}", "double") for i in range(4)]
           + [(f"s{i}", "string") for i in range(4)] + [(f"day{i}", "date") for i in range(2)])


def sketch_pool(size: int, seed: int = 7) -> list[bytes]:
    """Distinct HLL sketches (50-400 values each) shared by the partitions: building 2M real ones would
    measure datasketches, not the metastore."""
    rnd = random.Random(seed)
    pool = []
    for _ in range(size):
        sketch = hll_sketch(NDV_LG_K, tgt_hll_type.HLL_8)
        start = rnd.randint(0, 1_000_000)
        for value in range(start, start + rnd.randint(50, 400)):
            sketch.update(value)
        pool.append(sketch.serialize_compact())
    return pool


def column_stats(name: str, kind: str, index: int, pool: list[bytes]) -> ColumnStatisticsObj:
    sketch = pool[index % len(pool)]
    if kind == "bigint":
        data = LongColumnStatsData(index, index + 1000, index % 7, 200, sketch)
    elif kind == "double":
        data = DoubleColumnStatsData(index / 3, index + 0.5, index % 5, 150, sketch)
    elif kind == "string":
        data = StringColumnStatsData(40, 12.5, index % 3, 300, sketch)
    else:
        data = DateColumnStatsData(Date(18000 + index % 300), Date(19000 + index % 300), 0, 90, sketch)
    return ColumnStatisticsObj(name, kind, ColumnStatisticsData.of(data))


def partition_values(count: int) -> list[tuple[str, str]]:
    first = dt.date(2015, 1, 1)
    return [((first + dt.timedelta(days=i // 24)).isoformat(), str(i % 24)) for i in range(count)]


def stats_for(values, columns, pool, now) -> list[ColumnStatistics]:
    return [ColumnStatistics(ColumnStatisticsDesc(False, "default", "wide", f"ds={ds}/hr={hr}", now),
                             [column_stats(name, kind, i, pool) for name, kind in columns])
            for i, (ds, hr) in enumerate(values)]


def query_plan(path: str, sql: str, args=()) -> str:
    conn = sqlite3.connect(path)
    try:
        return "; ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, args))
    finally:
        conn.close()


def build_wide(ms: Metastore, values, columns, pool, now) -> None:
    """The table `wide` with a partition per value and every partition's statistics of `columns`, marked
    accurate (a non-transactional table, so answers need no write IDs)."""
    ms.create_table(Table("default", "wide", [FieldSchema(n, t) for n, t in COLUMNS],
                          [FieldSchema("ds", "string"), FieldSchema("hr", "int")], location="/tmp/wide",
                          parameters={"transactional": "false"}))
    flags = StatsAccuracy(True, {n for n, _ in columns}).to_param()
    ms.add_partitions([Partition("default", "wide", [ds, hr], parameters={"numRows": "1000", COLUMN_STATS_ACCURATE: flags})
                       for ds, hr in values])
    ms.set_aggr_stats_for(stats_for(values, columns, pool, now))


def answer_seconds(ms: Metastore, table: str, runs: int = 5) -> float:
    """The median time of a one-day `count(*), min, max` answered from statistics (no Spark)."""
    day = ms.get_partition_names("default", table)[len(ms.get_partition_names("default", table)) // 2]
    query = f"SELECT count(*), min(n0), max(n0) FROM {table} WHERE ds = '{day.split('/')[0].split('=')[1]}'"
    snapshot = lambda t: ms.get_valid_write_ids(t.dbName, t.tableName)  # noqa: E731
    assert answer_from_stats(ms, query, "default", snapshot).frame is not None
    times = sorted(timed(lambda: answer_from_stats(ms, query, "default", snapshot)) for _ in range(runs))
    return times[runs // 2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--home", default="/tmp/colstats-bench-metastore")
    args = parser.parse_args()
    shutil.rmtree(args.home, ignore_errors=True)
    os.makedirs(args.home)
    path = os.path.join(args.home, "metastore.db")
    ms = Metastore(path)
    ms.create_table(Table("default", "wide", [FieldSchema(n, t) for n, t in COLUMNS],
                          [FieldSchema("ds", "string"), FieldSchema("hr", "int")], location="/tmp/wide",
                          parameters={"transactional": "false"}))
    values = partition_values(args.partitions)
    pool = sketch_pool(256)
    now = int(time.time())
    figures = {}
    flags = StatsAccuracy(True, {n for n, _ in COLUMNS}).to_param()
    figures["add partitions"] = timed(lambda: ms.add_partitions(
        [Partition("default", "wide", [ds, hr], parameters={"numRows": "1000", COLUMN_STATS_ACCURATE: flags})
         for ds, hr in values]))

    one_column = stats_for(values, COLUMNS[:1], pool, now)
    figures[f"bulk update, {len(values):,} rows (1 column)"] = timed(lambda: ms.set_aggr_stats_for(one_column))
    every_column = stats_for(values, COLUMNS, pool, now)
    figures[f"bulk update, {len(values) * len(COLUMNS):,} rows (20 columns)"] = timed(
        lambda: ms.set_aggr_stats_for(every_column))
    del one_column, every_column

    # hr = 3 over 24 % of the days: 1 % of the partitions
    start_day = dt.date.fromisoformat(values[len(values) // 2][0])
    end_day = start_day + dt.timedelta(days=len(values) // 24 * 24 // 100)
    one_percent = f"ds >= '{start_day}' AND ds < '{end_day}' AND hr = 3"
    found = []
    figures["get_partitions_by_filter, 1 %"] = min(
        timed(lambda: found.append(ms.get_partitions_by_filter("default", "wide", one_percent))) for _ in range(5))
    stats_read = []
    figures["one column's stats for every partition"] = timed(
        lambda: stats_read.append(ms.get_partitions_statistics("default", "wide", None, ["n0"])))
    table = ms.get_table("default", "wide")
    figures["table-level merge, 1 column"] = timed(lambda: merge_table_level(ms, table, ["n0"], now))
    figures["table-level merge, 20 columns"] = timed(lambda: merge_table_level(ms, table, [n for n, _ in COLUMNS], now))
    figures["get_aggr_stats_for, 1 column, every partition"] = timed(
        lambda: ms.get_aggr_stats_for("default", "wide", ["n0"]))
    subset = [p.partName for p in found[-1]]
    figures["get_aggr_stats_for, 1 column, the 1 % filter's partitions"] = timed(
        lambda: ms.get_aggr_stats_for("default", "wide", ["n0"], subset))

    big = answer_seconds(ms, "wide")
    small_ms = Metastore(os.path.join(args.home, "small.db"))
    build_wide(small_ms, partition_values(30), COLUMNS[:1], pool, now)
    small = answer_seconds(small_ms, "wide")
    small_ms.close()
    figures[f"count/min/max WHERE ds = one day, from statistics ({args.partitions:,} partitions)"] = big
    figures["count/min/max WHERE ds = one day, from statistics (30 partitions)"] = small

    print(f"metastore: {args.partitions:,} partitions x {len(COLUMNS)} columns, "
          f"{os.path.getsize(path) / 2**20:.0f} MiB")
    for what, seconds in figures.items():
        print(f"  {what:<58} {seconds * 1000:10.1f} ms")
    print(f"  filter {one_percent!r} -> {len(found[-1])} partitions")
    print(f"  stats read for {len(stats_read[-1])} partitions")
    merged = ms.get_table_column_statistics("default", "wide", "n0").obj("n0").statsData.longStats
    print(f"  table-level n0: low {merged.lowValue} high {merged.highValue} nulls {merged.numNulls} ndv {merged.numDVs}")
    print(f"  peak RSS of this process: {peak_rss_mib():.0f} MiB")
    print("query plans:")
    print("  by filter:", query_plan(path,
          "SELECT P.PART_NAME FROM PARTITIONS P JOIN PARTITION_KEY_VALS K0 ON K0.PART_ID = P.PART_ID AND "
          "K0.INTEGER_IDX = 0 JOIN PARTITION_KEY_VALS K1 ON K1.PART_ID = P.PART_ID AND K1.INTEGER_IDX = 1 "
          "WHERE P.TBL_ID = 1 AND K0.PART_KEY_VAL >= '2020' AND K0.PART_KEY_VAL < '2021' AND "
          "CAST(K1.PART_KEY_VAL AS INTEGER) = 3"))
    print("  one column, all partitions:", query_plan(path,
          "SELECT S.PART_NAME FROM PART_COL_STATS S JOIN PARTITIONS P ON P.PART_ID = S.PART_ID "
          "WHERE P.TBL_ID = 1 AND S.ENGINE = 'hive' AND S.COLUMN_NAME IN (SELECT value FROM json_each('[\"n0\"]'))"))
    ms.close()


if __name__ == "__main__":
    main()
