"""Our ANALYZE ... FOR ALL COLUMNS (which also yields per-partition stats and sketches, frequent items of every
integer, date and string column among them) against Spark's native ANALYZE ... FOR ALL COLUMNS on the same data, in
the same run; then both again with distributions: our KLL sketches (hive.stats.kll.enable) against Spark's
equi-height histograms (spark.sql.statistics.histogram.enabled).

    .venv/bin/python bench/analyze_vs_spark.py [--shape bench|zipf-strings|trial] [--rows 10000000] [--partitions 30]
                                                [--runs 3] [--warmups 1]

Shapes: `bench`, 11 columns of every kind written by the lab (one file a partition); `zipf-strings`, a string of
200,000 Zipf-distributed values, each partition one file of 4 row groups; `trial`, pandas' and pyarrow's files as
the issue's new user wrote them (6 partitions of 3 files, NaN beside NULL, a Zipf id, non-ASCII notes).

At 1M rows the JIT needs about five rounds to settle (`--warmups 5`); at 10M one does.
"""
from __future__ import annotations

from common import alternated_medians, bench_arguments, bench_lab, bench_table, footers_lack, median_of, peak_rss_mib


def every_figure_scanned(lab, sql: str) -> None:
    """The same ANALYZE with no column's figures taken from footers: what it cost before they were."""
    from colstats_lab.analyze import runner

    served = runner._footer_plans
    runner._footer_plans = lambda table, files, plans: (plans, {})
    try:
        lab.sql(sql)
    finally:
        runner._footer_plans = served


def floors(lab, kll: bool = False, key: str = "ds") -> dict:
    """The floors below ANALYZE, as plain Spark jobs over the table's files grouped by ds: one cheap aggregate per
    column, and what footers cannot give (`footers_lack`, with `kll` KLL sketches too). As ANALYZE does, each
    job computes its per-row inputs in a projection below the aggregation (generated code)."""
    from pyspark.sql import functions as F

    from colstats_lab.column_statistics.frequent_items import DEFAULT_FREQUENT_ITEMS

    frame = lab.tables["bench"].to_spark()
    types = {f.name: f.dataType.simpleString() for f in frame.schema.fields if f.name != key}
    inputs, lacking = footers_lack(frame.schema, [key], kll=kll)
    with_items, with_items_lacking = footers_lack(frame.schema, [key], kll=kll, frequent_items=DEFAULT_FREQUENT_ITEMS)
    cheap = frame.select(key, *[F.length(c).alias(c) if t == "string" else F.col(c) for c, t in types.items()])
    return {"cheap": lambda: cheap.groupBy(key).agg(*[F.max(c) for c in types]).collect(),
            "lacking": lambda: frame.select(key, *inputs).groupBy(key).agg(*lacking).collect(),
            "lacking+items": lambda: frame.select(key, *with_items).groupBy(key).agg(*with_items_lacking).collect()}


def first_read(lab, sql: str) -> None:
    """The ANALYZE as the first command over this snapshot runs it: Spark resolves its read of every file."""
    from colstats_lab.tables import resolved_reads

    resolved_reads._reads.pop(lab.spark, None)
    lab.sql(sql)


def shaped_table(lab, args) -> str:
    """Writes the table of `args.shape` (the lab's `bench`, or Parquet files registered as external table `bench`)
    and Spark's own table `bench_native` over the same rows; returns the partition key's name."""
    import os
    import shutil

    import pyarrow.parquet as pq
    from common import trial_frames, zipf_strings

    spark = lab.spark
    spark.sql("DROP TABLE IF EXISTS bench_native")
    shutil.rmtree(os.path.join(lab.home, "spark-warehouse", "bench_native"), ignore_errors=True)
    if args.shape == "bench":
        source = bench_table(lab, args.rows, args.partitions)
        source.write.partitionBy("ds").format("parquet").saveAsTable("bench_native")
        return "ds"
    folder = os.path.join(lab.home, f"files-{args.shape}")
    shutil.rmtree(folder, ignore_errors=True)
    if args.shape == "zipf-strings":
        rows = zipf_strings(spark, args.rows, args.partitions)
        per_partition = max(1, args.rows // args.partitions // 4)
        rows.repartition("ds").write.partitionBy("ds").option("parquet.block.size", 1) \
            .option("maxRecordsPerFile", per_partition * 4).parquet(folder)
        # Spark writes a row group a block: rewrite each file as 4 row groups, as the writer did
        for root, _, files in os.walk(folder):
            for name in files:
                if name.endswith(".crc"):  # Hadoop's checksum of the file as Spark wrote it: stale once rewritten
                    os.remove(os.path.join(root, name))
                elif name.endswith(".parquet"):
                    path = os.path.join(root, name)
                    table = pq.read_table(path)
                    pq.write_table(table, path, row_group_size=max(1, -(-table.num_rows // 4)))
        key = "ds"
    else:
        for part, index, table in trial_frames(args.rows):
            os.makedirs(os.path.join(folder, part), exist_ok=True)
            pq.write_table(table, os.path.join(folder, part, f"part-{index}.parquet"), row_group_size=27_000)
        key = "eventDate"
    lab.register_external("bench", folder, partition_types={key: "string"})
    spark.sql(f"CREATE TABLE bench_native USING parquet LOCATION '{folder}'")
    spark.sql("MSCK REPAIR TABLE bench_native")
    return key


def main() -> None:
    import argparse
    import sys

    shape = argparse.ArgumentParser(add_help=False)
    shape.add_argument("--shape", choices=("bench", "zipf-strings", "trial"), default="bench")
    known, rest = shape.parse_known_args()
    sys.argv = [sys.argv[0], *rest]
    args = bench_arguments(runs=3)
    args.shape = known.shape
    lab = bench_lab(fresh=True)
    spark = lab.spark
    key = shaped_table(lab, args)
    size = int(lab.metastore.catalog.get_table("default", "bench").parameters["totalSize"])
    print(f"table ({args.shape}): {args.rows:,} rows, {size / 2**20:.0f} MiB of Parquet; "
          f"{args.warmups} warm-up round(s), then {args.runs} alternated")

    ours_sql = "ANALYZE TABLE bench COMPUTE STATISTICS FOR ALL COLUMNS"
    native_sql = "ANALYZE TABLE bench_native COMPUTE STATISTICS FOR ALL COLUMNS"
    # alternated, all in the same rounds, warmed up first: the JVM's JIT speeds up whichever runs later
    times = alternated_medians(args.runs, {"ours": lambda: lab.sql(ours_sql), "native": lambda: spark.sql(native_sql),
                                           "first read": lambda: first_read(lab, ours_sql), **floors(lab, key=key)},
                               args.warmups)
    ours, native, lacking = times["ours"], times["native"], times["lacking"]
    print(f"ours   (per-partition + table stats, sketches): median {ours:.2f} s")
    print(f"native (Spark ANALYZE, table level only):      median {native:.2f} s")
    print(f"ratio ours / native: {ours / native:.2f}  (target <= 0.6)")
    print(f"  minimum, maximum and NULLs from footers for: {', '.join(lab.sql(ours_sql).details.footer_columns)}")
    print(f"  the first ANALYZE of a snapshot, its read resolved: {times['first read']:.2f} s "
          f"({times['first read'] / native:.2f} of native)")
    print(f"the scan's floor, one Spark job grouped by ds: one cheap aggregate per column {times['cheap']:.2f} s "
          f"({times['cheap'] / native:.2f} of native, a string's length for a string); what footers lack (row "
          f"count, HLL sketches, string lengths, true/false counts, floats' min/max) {lacking:.2f} s "
          f"({lacking / native:.2f} of native); with the frequent items ANALYZE keeps by default "
          f"{times['lacking+items']:.2f} s ({times['lacking+items'] / native:.2f} of native); ours / that floor "
          f"{ours / times['lacking+items']:.2f}")
    scanned, scanned_runs = median_of(args.runs, lambda: every_figure_scanned(lab, ours_sql))
    print(f"ours, every figure scanned (before footers served them): median {scanned:.2f} s  "
          f"runs {[f'{t:.2f}' for t in scanned_runs]}  ratio {scanned / native:.2f}")

    # with distributions: our KLL sketches against Spark's equi-height histograms, on the same rows
    lab.set("hive.stats.kll.enable", True)
    spark.conf.set("spark.sql.statistics.histogram.enabled", "true")
    times = alternated_medians(args.runs, {"ours": lambda: lab.sql(ours_sql), "native": lambda: spark.sql(native_sql),
                                           "floor": floors(lab, kll=True, key=key)["lacking+items"]}, args.warmups)
    kll, histograms = times["ours"], times["native"]
    spark.conf.set("spark.sql.statistics.histogram.enabled", "false")
    lab.set("hive.stats.kll.enable", False)
    print(f"ours with KLL sketches:                          median {kll:.2f} s")
    print(f"native with histograms (numBins 254):            median {histograms:.2f} s")
    print(f"ratio ours / native with distributions: {kll / histograms:.2f}  (target <= 0.35)")
    print(f"  the floor, what footers lack, frequent items and KLL sketches: {times['floor']:.2f} s "
          f"({times['floor'] / histograms:.2f} of native; ours / that floor {kll / times['floor']:.2f})")
    print(f"KLL's extra cost over our run without it: {kll / ours:.2f}x")
    print(f"peak memory of the Python process: {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
