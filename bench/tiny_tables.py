"""Tiny tables, as a new user's first ones are: a 4-row pandas file, and `--partitions` partitions of 3 rows.
For each, the lab's register + ANALYZE FOR ALL COLUMNS beside Spark's own CREATE TABLE + (partition
recovery) + ANALYZE FOR ALL COLUMNS over the same files, in the same session: the first run of each (cold:
Spark's JIT and the lab's caches fresh, Spark itself already started) and the median of the warm ones.

    .venv/bin/python bench/tiny_tables.py [--partitions 3000] [--runs 3]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time

import pandas as pd
from common import BENCH_HOME, bench_lab


def write_files(root: str, partitions: int) -> tuple[str, str]:
    shutil.rmtree(root, ignore_errors=True)
    tiny = os.path.join(root, "tiny")
    os.makedirs(tiny)
    pd.DataFrame({"userId": [1, 2, 3, 4], "eventType": ["a", "b", None, "a"], "x": [1.0, 2.0, 3.0, 4.0]}
                 ).to_parquet(os.path.join(tiny, "part-0.parquet"))
    many = os.path.join(root, "many")
    for i in range(partitions):
        folder = os.path.join(many, f"p={i}")
        os.makedirs(folder)
        pd.DataFrame({"id": [3 * i, 3 * i + 1, 3 * i + 2], "name": ["a", "b", None], "v": [0.5, None, 1.5]}
                     ).to_parquet(os.path.join(folder, "data.parquet"))
    return tiny, many


def ours(lab, name: str, path: str) -> float:
    start = time.perf_counter()
    lab.sql(f"DROP TABLE IF EXISTS {name}")
    lab.register_external(name, path)
    lab.sql(f"ANALYZE TABLE {name} COMPUTE STATISTICS FOR ALL COLUMNS")
    return time.perf_counter() - start


def native(spark, name: str, path: str, partitioned: bool) -> float:
    start = time.perf_counter()
    spark.sql(f"DROP TABLE IF EXISTS native_{name}")
    spark.sql(f"CREATE TABLE native_{name} USING parquet LOCATION '{path}'")
    if partitioned:
        spark.sql(f"ALTER TABLE native_{name} RECOVER PARTITIONS")
    spark.sql(f"ANALYZE TABLE native_{name} COMPUTE STATISTICS FOR ALL COLUMNS")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--native-first", action="store_true", help="the cold runs: Spark's command before ours")
    args = parser.parse_args()
    lab = bench_lab(fresh=True)
    tiny, many = write_files(os.path.join(BENCH_HOME, "files"), args.partitions)
    lab.spark.range(1).count()  # Spark started: its start is not what is compared
    for name, path, partitioned in (("tiny", tiny, False), ("many", many, True)):
        if args.native_first:  # the first command of a JVM pays for its JIT: each order is one process's
            cold_native = native(lab.spark, name, path, partitioned)
            cold_ours = ours(lab, name, path)
        else:
            cold_ours, cold_native = ours(lab, name, path), native(lab.spark, name, path, partitioned)
        warm_ours, warm_native = [], []
        for _ in range(args.runs):
            warm_native.append(native(lab.spark, name, path, partitioned))
            warm_ours.append(ours(lab, name, path))
        w_ours, w_native = statistics.median(warm_ours), statistics.median(warm_native)
        print(f"{name}: cold ours {cold_ours:.2f} s, native {cold_native:.2f} s ({cold_ours / cold_native:.2f}); "
              f"warm ours {w_ours:.2f} s, native {w_native:.2f} s ({w_ours / w_native:.2f})")


if __name__ == "__main__":
    main()
