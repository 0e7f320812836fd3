"""Work on one partition of a many-partition external table, end to end through Spark and the lab, as a
new user meets it: against the same work on a 30-partition table of the same 20 columns, in one run.

Both tables are Parquet directories (`ds=YYYY-MM-DD`, one file of 100 rows each, written with pyarrow
so that building them measures nothing of ours), registered external and analyzed FOR ALL COLUMNS.
Measured (median of 3 after a warm-up): ANALYZE of one partition, a one-day `count(*), min, max`
answered from statistics, `lab.explain` and a scanned SELECT of one day, DESCRIBE FORMATTED of a
column at table level (which lists every partition's directory: an external table's statistics are
fresh only while its files are those analyzed) and at the one partition.

    .venv/bin/python bench/partitions_end_to_end.py [--partitions 10000]

The first run builds the tables (about 2 minutes at 10,000 partitions, most of it the ANALYZE of every
partition); later runs with the same --partitions reuse them.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from common import BENCH_HOME, bench_lab, peak_rss_mib, timed

ROWS = 100
FIRST_DAY = dt.date(2000, 1, 1)


def write_days(root: str, days: int) -> None:
    """One Parquet file of ROWS rows a day: 10 bigint, 4 double, 4 string and 2 date columns."""
    rng = np.random.default_rng(7)
    for i in range(days):
        directory = os.path.join(root, f"ds={FIRST_DAY + dt.timedelta(days=i)}")
        os.makedirs(directory)
        columns = {f"n{c}": rng.integers(0, 1000, ROWS) + i for c in range(10)}
        columns |= {f"d{c}": rng.random(ROWS) * 100 for c in range(4)}
        columns |= {f"s{c}": [f"s{v}" for v in rng.integers(0, 97, ROWS)] for c in range(4)}
        columns |= {f"day{c}": pa.array(rng.integers(18000, 18300, ROWS).astype("int32"), pa.date32()) for c in range(2)}
        pq.write_table(pa.table(columns), os.path.join(directory, "part-0.parquet"))


def prepared(lab, name: str, days: int) -> None:
    root = os.path.join(BENCH_HOME, "end_to_end", f"{name}_{days}")
    if lab.metastore.catalog.table_exists("default", name) and os.path.isdir(root):
        return
    if lab.metastore.catalog.table_exists("default", name):
        lab.sql(f"DROP TABLE {name}")
    if not os.path.isdir(root):
        write_days(root, days)
    lab.register_external(name, root, partition_types={"ds": "string"})
    lab.sql(f"ANALYZE TABLE {name} COMPUTE STATISTICS FOR ALL COLUMNS")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", type=int, default=10_000)
    args = parser.parse_args()
    lab = bench_lab()
    big, small = f"days_{args.partitions}", "days_30"
    prepared(lab, small, 30)
    prepared(lab, big, args.partitions)
    day = FIRST_DAY + dt.timedelta(days=15)
    work = {
        "ANALYZE of one partition FOR ALL COLUMNS":
            lambda t: lab.sql(f"ANALYZE TABLE {t} PARTITION (ds='{day}') COMPUTE STATISTICS FOR ALL COLUMNS"),
        "count(*), min, max WHERE ds = one day (from statistics)":
            lambda t: lab.sql(f"SELECT count(*), min(n0), max(n0) FROM {t} WHERE ds = '{day}'"),
        "lab.explain of a one-day query":
            lambda t: lab.explain(f"SELECT n0 FROM {t} WHERE ds = '{day}' AND n1 > 500"),
        "scanned SELECT of one day":
            lambda t: lab.sql(f"SELECT sum(n0 + n1) FROM {t} WHERE ds = '{day}' AND n1 > 500"),
        "DESCRIBE FORMATTED t n0 (table level)": lambda t: lab.sql(f"DESCRIBE FORMATTED {t} n0"),
        "DESCRIBE FORMATTED t PARTITION (one day) n0":
            lambda t: lab.sql(f"DESCRIBE FORMATTED {t} PARTITION (ds='{day}') n0"),
    }
    answer = lab.sql(f"SELECT count(*), min(n0), max(n0) FROM {big} WHERE ds = '{day}'")
    print(f"external Parquet tables of 20 columns, {ROWS} rows a partition: {args.partitions:,} against 30 partitions")
    print(f"  (the one-day answer came from {answer.answered_from})")
    for what, run in work.items():
        medians = []
        for table in (big, small):
            run(table)
            medians.append(statistics.median(timed(lambda: run(table)) for _ in range(3)))
        print(f"  {what:<52} {medians[0] * 1000:9.1f} ms vs {medians[1] * 1000:8.1f} ms = {medians[0] / medians[1]:6.2f}x")
    describe_vs_listing(lab, big)
    print(f"  peak RSS of this Python process: {peak_rss_mib():.0f} MiB")


def bare_listing(root: str) -> None:
    """What proving an external table fresh cannot do without: every partition directory listed, each file's
    size and time read."""
    for partition in os.scandir(root):
        for entry in os.scandir(partition.path):
            entry.stat()


def describe_vs_listing(lab, table: str, runs: int = 7) -> None:
    """Issue 38's target: the table-level DESCRIBE FORMATTED (which proves every partition's statistics fresh
    by a listing) against a bare listing of the same directories, alternated, medians of `runs`."""
    root = lab.metastore.catalog.get_table("default", table).location
    times: dict[str, list[float]] = {"describe": [], "listing": []}
    for _ in range(runs):
        times["describe"].append(timed(lambda: lab.sql(f"DESCRIBE FORMATTED {table} n0")))
        times["listing"].append(timed(lambda: bare_listing(root)))
    describe, listing = (statistics.median(times[k]) for k in ("describe", "listing"))
    print(f"  DESCRIBE FORMATTED {table} n0 {describe * 1000:.1f} ms against a bare listing (scandir + stat) of its "
          f"directories {listing * 1000:.1f} ms = {describe / listing:.2f}x (target <= 2)")


if __name__ == "__main__":
    main()
