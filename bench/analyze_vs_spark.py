"""Our ANALYZE ... FOR ALL COLUMNS (which also yields per-partition stats and sketches) against
Spark's native ANALYZE ... FOR ALL COLUMNS on the same data, in the same run; then both again with
distributions: our KLL sketches (hive.stats.kll.enable) against Spark's equi-height histograms
(spark.sql.statistics.histogram.enabled).

    .venv/bin/python bench/analyze_vs_spark.py [--rows 10000000] [--partitions 30] [--runs 3] [--warmups 1]

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


def floors(lab, kll: bool = False) -> dict:
    """The floors below ANALYZE, as plain Spark jobs over the table's files grouped by ds: one cheap aggregate per
    column, and what footers cannot give (`footers_lack`, with `kll` KLL sketches too). As ANALYZE does, each
    job computes its per-row inputs in a projection below the aggregation (generated code)."""
    from pyspark.sql import functions as F

    frame = lab.tables["bench"].to_spark()
    types = {f.name: f.dataType.simpleString() for f in frame.schema.fields if f.name != "ds"}
    inputs, lacking = footers_lack(frame.schema, ["ds"], kll=kll)
    cheap = frame.select("ds", *[F.length(c).alias(c) if t == "string" else F.col(c) for c, t in types.items()])
    return {"cheap": lambda: cheap.groupBy("ds").agg(*[F.max(c) for c in types]).collect(),
            "lacking": lambda: frame.select("ds", *inputs).groupBy("ds").agg(*lacking).collect()}


def first_read(lab, sql: str) -> None:
    """The ANALYZE as the first command over this snapshot runs it: Spark resolves its read of every file."""
    from colstats_lab.tables import resolved_reads

    resolved_reads._reads.pop(lab.spark, None)
    lab.sql(sql)


def main() -> None:
    args = bench_arguments(runs=3)
    lab = bench_lab(fresh=True)
    spark = lab.spark
    source = bench_table(lab, args.rows, args.partitions)
    spark.sql("DROP TABLE IF EXISTS bench_native")
    source.write.partitionBy("ds").format("parquet").saveAsTable("bench_native")
    size = int(lab.metastore.get_table("default", "bench").parameters["totalSize"])
    print(f"table: {args.rows:,} rows, {args.partitions} partitions, {size / 2**20:.0f} MiB of Parquet; "
          f"{args.warmups} warm-up round(s), then {args.runs} alternated")

    ours_sql = "ANALYZE TABLE bench COMPUTE STATISTICS FOR ALL COLUMNS"
    native_sql = "ANALYZE TABLE bench_native COMPUTE STATISTICS FOR ALL COLUMNS"
    # alternated, all in the same rounds, warmed up first: the JVM's JIT speeds up whichever runs later
    times = alternated_medians(args.runs, {"ours": lambda: lab.sql(ours_sql), "native": lambda: spark.sql(native_sql),
                                           "first read": lambda: first_read(lab, ours_sql), **floors(lab)},
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
          f"({lacking / native:.2f} of native); ours / that floor {ours / lacking:.2f}")
    scanned, scanned_runs = median_of(args.runs, lambda: every_figure_scanned(lab, ours_sql))
    print(f"ours, every figure scanned (before footers served them): median {scanned:.2f} s  "
          f"runs {['%.2f' % t for t in scanned_runs]}  ratio {scanned / native:.2f}")

    # with distributions: our KLL sketches against Spark's equi-height histograms, on the same rows
    lab.set("hive.stats.kll.enable", True)
    spark.conf.set("spark.sql.statistics.histogram.enabled", "true")
    times = alternated_medians(args.runs, {"ours": lambda: lab.sql(ours_sql), "native": lambda: spark.sql(native_sql),
                                           "floor": floors(lab, kll=True)["lacking"]}, args.warmups)
    kll, histograms = times["ours"], times["native"]
    spark.conf.set("spark.sql.statistics.histogram.enabled", "false")
    lab.set("hive.stats.kll.enable", False)
    print(f"ours with KLL sketches:                          median {kll:.2f} s")
    print(f"native with histograms (numBins 254):            median {histograms:.2f} s")
    print(f"ratio ours / native with distributions: {kll / histograms:.2f}  (target <= 0.35)")
    print(f"  the floor, what footers lack and KLL sketches: {times['floor']:.2f} s "
          f"({times['floor'] / histograms:.2f} of native; ours / that floor {kll / times['floor']:.2f})")
    print(f"KLL's extra cost over our run without it: {kll / ours:.2f}x")
    print(f"peak memory of the Python process: {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
