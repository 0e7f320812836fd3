"""Our ANALYZE ... FOR ALL COLUMNS (which also yields per-partition stats and sketches) against
Spark's native ANALYZE ... FOR ALL COLUMNS on the same data, in the same run; then both again with
distributions: our KLL sketches (hive.stats.kll.enable) against Spark's equi-height histograms
(spark.sql.statistics.histogram.enabled).

    .venv/bin/python bench/analyze_vs_spark.py [--rows 10000000] [--partitions 30] [--runs 3]
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


def scan_floors(lab, runs: int, ours_sql: str) -> dict[str, float]:
    """Median seconds of the two floors below ANALYZE, as plain Spark jobs over the table's files, alternated
    with our ANALYZE: one cheap aggregate per column, and what footers cannot give (`footers_lack`). As ANALYZE
    does, each job computes its per-row inputs in a projection below the aggregation (generated code)."""
    from pyspark.sql import functions as F

    frame = lab.table("bench")
    types = {f.name: f.dataType.simpleString() for f in frame.schema.fields if f.name != "ds"}
    inputs, lacking = footers_lack(frame.schema, ["ds"])
    cheap = frame.select("ds", *[F.length(c).alias(c) if t == "string" else F.col(c) for c, t in types.items()])
    return alternated_medians(runs, {
        "ours": lambda: lab.sql(ours_sql),
        "cheap": lambda: cheap.groupBy("ds").agg(*[F.max(c) for c in types]).collect(),
        "lacking": lambda: frame.select("ds", *inputs).groupBy("ds").agg(*lacking).collect()})


def main() -> None:
    args = bench_arguments(runs=3)
    lab = bench_lab(fresh=True)
    spark = lab.spark
    source = bench_table(lab, args.rows, args.partitions)
    spark.sql("DROP TABLE IF EXISTS bench_native")
    source.write.partitionBy("ds").format("parquet").saveAsTable("bench_native")
    size = int(lab.metastore.get_table("default", "bench").parameters["totalSize"])
    print(f"table: {args.rows:,} rows, {args.partitions} partitions, {size / 2**20:.0f} MiB of Parquet")

    ours_sql = "ANALYZE TABLE bench COMPUTE STATISTICS FOR ALL COLUMNS"
    native_sql = "ANALYZE TABLE bench_native COMPUTE STATISTICS FOR ALL COLUMNS"
    # alternated, one round of each to warm up first: the JVM's JIT speeds up whichever runs later
    times = alternated_medians(args.runs, {"ours": lambda: lab.sql(ours_sql), "native": lambda: spark.sql(native_sql)})
    ours, native = times["ours"], times["native"]
    print(f"ours   (per-partition + table stats, sketches): median {ours:.2f} s")
    print(f"native (Spark ANALYZE, table level only):      median {native:.2f} s")
    print(f"ratio ours / native: {ours / native:.2f}  (target <= 0.6)")
    print(f"  minimum, maximum and NULLs from footers for: {', '.join(lab.sql(ours_sql).details.footer_columns)}")
    floors = scan_floors(lab, args.runs, ours_sql)
    print(f"the scan's floor, one Spark job grouped by ds: one cheap aggregate per column {floors['cheap']:.2f} s "
          f"({floors['cheap'] / native:.2f} of native, a string's length for a string); what footers lack (row "
          f"count, HLL sketches, string lengths, true/false counts, floats' min/max) {floors['lacking']:.2f} s "
          f"({floors['lacking'] / native:.2f} of native); ours alternated with them {floors['ours']:.2f} s "
          f"({floors['ours'] / native:.2f} of native, {floors['ours'] / floors['lacking']:.2f} of the floor)")
    scanned, scanned_runs = median_of(args.runs, lambda: every_figure_scanned(lab, ours_sql))
    print(f"ours, every figure scanned (before footers served them): median {scanned:.2f} s  "
          f"runs {['%.2f' % t for t in scanned_runs]}  ratio {scanned / native:.2f}")

    # with distributions: our KLL sketches against Spark's equi-height histograms, on the same rows
    lab.set("hive.stats.kll.enable", True)
    spark.conf.set("spark.sql.statistics.histogram.enabled", "true")
    times = alternated_medians(args.runs, {"ours": lambda: lab.sql(ours_sql), "native": lambda: spark.sql(native_sql)})
    kll, histograms = times["ours"], times["native"]
    spark.conf.set("spark.sql.statistics.histogram.enabled", "false")
    lab.set("hive.stats.kll.enable", False)
    print(f"ours with KLL sketches:                          median {kll:.2f} s")
    print(f"native with histograms (numBins 254):            median {histograms:.2f} s")
    print(f"ratio ours / native with distributions: {kll / histograms:.2f}  (target <= 0.35)")
    print(f"KLL's extra cost over our run without it: {kll / ours:.2f}x")
    print(f"peak memory of the Python process: {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
