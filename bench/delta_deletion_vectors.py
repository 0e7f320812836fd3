"""What deletion vectors cost an ANALYZE of a Delta table: the same live rows as a table whose DELETE left vectors on a
fifth of its files (as Databricks writes them: tests/delta_commits.py) and as a table rewritten without them, both
written by deltalake (row groups of 32,768 rows) and analyzed FOR ALL COLUMNS, and with SAMPLE 5 PERCENT, in the
same run; then NOSCAN of the first against Spark's own ANALYZE of the rewritten rows (a table of Spark's catalog over
the same rows). Targets (issue 77): applying the vectors costs at most 1.2x; NOSCAN at most 0.05x Spark's ANALYZE.

    .venv/bin/python bench/delta_deletion_vectors.py [--rows 10000000] [--partitions 30] [--runs 3] [--warmups 1]
"""
from __future__ import annotations

import json
import os
import shutil
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from common import alternated_medians, bench_arguments, bench_lab, peak_rss_mib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

DELETED_SHARE = 0.1  # of the rows of each file that gets a vector
FILES_WITH_VECTORS = 0.2
ROW_GROUP_ROWS = 32_768


def rows(count: int, partitions: int) -> pa.Table:
    """`count` rows of eight columns over `partitions` days: a Zipf key, NULLs, strings of 200,000 values."""
    rng = np.random.default_rng(3)
    ids = np.arange(count)
    zipf = np.minimum(rng.zipf(1.3, count), 100_000)
    amount = pa.array(rng.normal(100, 40, count).round(2), mask=rng.random(count) < 0.05)
    note = pc.binary_join_element_wise("note-", pc.cast(pa.array(rng.integers(0, 200_000, count)), pa.string()), "")
    return pa.table({"id": ids, "x": zipf.astype("int32"), "y": rng.integers(0, 10**6, count).astype("int32"),
                     "amount": amount, "note": note,
                     "category": pa.array(np.array(["red", "green", "blue", ""])[rng.integers(0, 4, count)]),
                     "flag": rng.random(count) < 0.4,
                     "ds": pa.array(np.char.add("2026-10-", np.char.zfill((ids % partitions + 1).astype(str), 2)))})


def main() -> None:
    from delta_commits import delete_rows, deltalake_rows, live_adds
    from deltalake import WriterProperties, write_deltalake

    args = bench_arguments()
    lab = bench_lab()
    root = os.path.join(lab.home, "delta-dv")
    shutil.rmtree(root, ignore_errors=True)
    with_vectors, rewritten = os.path.join(root, "with_vectors"), os.path.join(root, "rewritten")
    table = rows(args.rows, args.partitions)
    groups = WriterProperties(max_row_group_size=ROW_GROUP_ROWS)  # several a file: a sample has some to choose from
    write_deltalake(with_vectors, table, partition_by=["ds"], configuration={"delta.enableDeletionVectors": "true"},
                    writer_properties=groups)
    adds = live_adds(with_vectors)
    rng = np.random.default_rng(4)
    chosen = sorted(adds)[: max(1, int(len(adds) * FILES_WITH_VECTORS))]
    deleted: dict[str, set[int]] = {}
    for path in chosen:
        records = int(json.loads(adds[path]["stats"])["numRecords"])
        positions = sorted(set(rng.choice(records, int(records * DELETED_SHARE), replace=False).tolist()))
        deleted[path] = set(positions)
    delete_rows(with_vectors, {path: sorted(p) for path, p in deleted.items()})
    live_rows = deltalake_rows(with_vectors)
    write_deltalake(rewritten, live_rows, partition_by=["ds"], writer_properties=groups)
    for name, path in (("dv", with_vectors), ("rewritten", rewritten)):
        if lab.metastore.catalog.table_exists("default", name):
            lab.sql(f"DROP TABLE {name}")
        lab.register_external(name, path, format="delta")
    spark = lab.spark
    spark.sql("DROP TABLE IF EXISTS bench_native")
    shutil.rmtree(os.path.join(lab.home, "spark-warehouse", "bench_native"), ignore_errors=True)
    spark.read.parquet(*[os.path.join(rewritten, p) for p in live_adds(rewritten)]).write.format("parquet") \
        .saveAsTable("bench_native")
    files = len(adds)
    print(f"{args.rows:,} rows in {files} files over {args.partitions} partitions; vectors on {len(chosen)} files "
          f"deleting {sum(len(p) for p in deleted.values()):,} rows; {len(live_rows):,} live")
    times = alternated_medians(args.runs, {
        "ANALYZE, deletion vectors": lambda: lab.sql("ANALYZE TABLE dv COMPUTE STATISTICS FOR ALL COLUMNS"),
        "ANALYZE, rewritten": lambda: lab.sql("ANALYZE TABLE rewritten COMPUTE STATISTICS FOR ALL COLUMNS"),
        "SAMPLE 5 %, deletion vectors": lambda: lab.sql(
            "ANALYZE TABLE dv COMPUTE STATISTICS FOR ALL COLUMNS SAMPLE 5 PERCENT"),
        "SAMPLE 5 %, rewritten": lambda: lab.sql(
            "ANALYZE TABLE rewritten COMPUTE STATISTICS FOR ALL COLUMNS SAMPLE 5 PERCENT"),
        "NOSCAN, deletion vectors": lambda: lab.sql("ANALYZE TABLE dv COMPUTE STATISTICS FOR ALL COLUMNS NOSCAN"),
        "Spark's ANALYZE, rewritten": lambda: spark.sql(
            "ANALYZE TABLE bench_native COMPUTE STATISTICS FOR ALL COLUMNS").collect(),
    }, warmups=args.warmups)
    for name, seconds in times.items():
        print(f"  {name:<30} {seconds:7.2f} s")
    print(f"deletion vectors / rewritten: {times['ANALYZE, deletion vectors'] / times['ANALYZE, rewritten']:.2f}x "
          f"(target <= 1.2)")
    print(f"SAMPLE 5 %, deletion vectors / rewritten: "
          f"{times['SAMPLE 5 %, deletion vectors'] / times['SAMPLE 5 %, rewritten']:.2f}x")
    spark_analyze = times["Spark's ANALYZE, rewritten"]
    print(f"NOSCAN / Spark's ANALYZE: {times['NOSCAN, deletion vectors'] / spark_analyze:.3f}x (target <= 0.05)")
    print(f"peak resident memory of this process: {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
