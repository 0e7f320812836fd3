"""What an Iceberg table costs the lab against the same rows as a Hive-layout Parquet table, and what a Puffin
publish costs after one partition changed against rescanning the whole table.

The same pyarrow tables (R rows over P days: bigint, two ints one of them Zipf-skewed, double with NULLs,
string, date, timestamp) are written as `ds=<day>/` Parquet files and appended day by day to an Iceberg
table in a SQL catalog (pyiceberg). Prints, medians of N runs:
- ANALYZE ... FOR ALL COLUMNS of each, and the ratio Iceberg / Hive layout (issue 37's target: <= 1.1); and of
  the Iceberg table's own data files registered as a Hive-layout table (pyiceberg writes its files its own way,
  partition column included: this ratio is the lab's Iceberg path alone);
- Drill's REFRESH METADATA at FILE level of each: footers for the Hive layout, the manifests for Iceberg
  (footers read only for what the manifests cut or lack: the double, whose bounds leave NaN out);
- the first publish (every partition's sketches), a full rescan (sketches dropped, statistics fresh: what
  Trino's ANALYZE and Iceberg's compute_table_stats do), and a publish after one day was overwritten
  (that day analyzed again and sketched, the others' sketches reused), with the ratio against the rescan.

    .venv/bin/python bench/table_formats.py --rows 10000000 --partitions 30
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import BENCH_HOME, median_of, timed  # noqa: E402
from pyiceberg.catalog import load_catalog  # noqa: E402
from pyiceberg.expressions import EqualTo  # noqa: E402
from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.transforms import IdentityTransform  # noqa: E402
from pyiceberg.types import DateType, DoubleType, IntegerType, LongType, NestedField, StringType, TimestampType  # noqa: E402

from colstats_lab import Lab  # noqa: E402

SCHEMA = Schema(*[NestedField(i + 1, name, kind(), required=False) for i, (name, kind) in enumerate([
    ("id", LongType), ("x", IntegerType), ("y", IntegerType), ("amount", DoubleType), ("note", StringType),
    ("day", DateType), ("ts", TimestampType), ("ds", StringType)])])


def day_rows(index: int, rows: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = np.arange(index * rows, (index + 1) * rows, dtype=np.int64)
    amount = rng.random(rows) * 1000 - 100
    return pa.table({
        "id": ids,
        "x": pa.array(np.floor(100000.0 ** (rng.random(rows) ** 2)).astype(np.int32)),
        "y": pa.array(rng.integers(0, 1_000_000, rows, dtype=np.int32)),
        "amount": pa.array(amount, mask=rng.random(rows) < 0.05),
        "note": pa.array(np.char.add("note-", rng.integers(0, 200_000, rows).astype(str))),
        "day": pa.array((np.datetime64("2020-01-01") + rng.integers(0, 2000, rows)).astype("datetime64[D]")),
        "ts": pa.array((np.datetime64("2023-11-14T22:13:20") + rng.integers(0, 10**8, rows).astype("timedelta64[s]"))
                       .astype("datetime64[us]")),
        "ds": pa.array([f"2026-10-{index + 1:02d}"] * rows),
    })


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    home = os.path.join(BENCH_HOME, "formats")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    layout, warehouse = os.path.join(home, "hive_layout"), os.path.join(home, "warehouse")
    properties = {"type": "sql", "uri": f"sqlite:///{home}/iceberg.db", "warehouse": f"file://{warehouse}"}
    catalog = load_catalog("ice", **properties)
    catalog.create_namespace("bench")
    table = catalog.create_table("bench.events", schema=SCHEMA,
                                 partition_spec=PartitionSpec(PartitionField(8, 1000, IdentityTransform(), "ds")))
    per_day = args.rows // args.partitions
    for index in range(args.partitions):
        rows = day_rows(index, per_day, index)
        directory = os.path.join(layout, f"ds=2026-10-{index + 1:02d}")
        os.makedirs(directory)
        # the codec pyiceberg writes (zstd), so that both tables are the same files but for their layout
        pq.write_table(rows.drop_columns(["ds"]), os.path.join(directory, "part-0.parquet"), compression="zstd")
        table.append(rows)
    lab = Lab(home=os.path.join(home, "lab"), spark_conf={"spark.driver.memory": "4g",
                                                          "spark.sql.shuffle.partitions": "8"})
    lab.register_external("hive_layout", layout, partition_types={"ds": "string"})
    lab.register_external("iceberg_files", os.path.join(warehouse, "bench", "events", "data"),
                          partition_types={"ds": "string"})
    lab.attach("ice", properties)
    analyze = "ANALYZE TABLE {} COMPUTE STATISTICS FOR ALL COLUMNS"
    lab.sql(analyze.format("hive_layout"))  # warm-up: Spark's start and first plans
    times: dict[str, list[float]] = {}
    for _ in range(args.runs):  # interleaved, so that a slower minute of the machine weighs on each alike
        for name in ("hive_layout", "iceberg_files", "ice.bench.events"):
            times.setdefault(name, []).append(timed(lambda: lab.sql(analyze.format(name))))
    hive_s, files_s, iceberg_s = (sorted(times[n])[len(times[n]) // 2]
                                  for n in ("hive_layout", "iceberg_files", "ice.bench.events"))
    print(f"{args.rows:,} rows, {args.partitions} partitions")
    print(f"ANALYZE FOR ALL COLUMNS: Hive layout {hive_s:.2f} s, Iceberg {iceberg_s:.2f} s, ratio "
          f"{iceberg_s / hive_s:.2f}; the Iceberg table's files as a Hive layout {files_s:.2f} s, ratio "
          f"{iceberg_s / files_s:.2f}")

    lab.set("metastore.enabled", True)

    def refresh(name: str):
        lab.sql(f"ANALYZE TABLE {name} DROP METADATA IF EXISTS")
        return lab.sql(f"ANALYZE TABLE {name} REFRESH METADATA 'FILE' LEVEL").details
    footers_s, _ = median_of(args.runs, lambda: refresh("hive_layout"))
    manifests_s, _ = median_of(args.runs, lambda: refresh("ice.bench.events"))
    outcome = refresh("ice.bench.events")
    print(f"REFRESH METADATA 'FILE' LEVEL: Hive layout (footers) {footers_s:.2f} s, Iceberg {manifests_s:.2f} s "
          f"(from the manifests: {', '.join(outcome.metadata_columns)}; scanned: {', '.join(outcome.scan_columns)})")

    first = timed(lambda: lab.tables["ice.bench.events"].publish())

    def full_rescan():
        with lab.metastore.transaction() as conn:
            conn.execute("DELETE FROM THETA_SKETCHES")
        outcome = lab.tables["ice.bench.events"].publish().details
        assert len(outcome.scanned) == args.partitions, outcome.message
    rescan_s, _ = median_of(args.runs, full_rescan)

    def one_day_changed(run=[0]):  # noqa: B006 - a counter across calls
        run[0] += 1
        changed = day_rows(0, per_day, 1000 + run[0])
        catalog.load_table("bench.events").overwrite(changed, overwrite_filter=EqualTo("ds", "2026-10-01"))
        outcome = lab.tables["ice.bench.events"].publish().details
        assert outcome.scanned == ["ds=2026-10-01"] and outcome.analyzed_first == ["ds=2026-10-01"], outcome.message
        return outcome
    changed_times = []
    for _ in range(args.runs):
        changed_times.append(timed(one_day_changed))
    changed_s = sorted(changed_times)[len(changed_times) // 2]
    print(f"Puffin publish: first {first:.2f} s (analyze + sketches of every partition); full rescan of sketches "
          f"{rescan_s:.2f} s; after one day overwritten {changed_s:.2f} s (that day analyzed and sketched), "
          f"ratio {changed_s / rescan_s:.2f}")
    lab.close()


if __name__ == "__main__":
    main()
