"""Our ANALYZE ... FOR ALL COLUMNS (which also yields per-partition stats and sketches) against
Spark's native ANALYZE ... FOR ALL COLUMNS on the same data, in the same run; then both again with
distributions: our KLL sketches (hive.stats.kll.enable) against Spark's equi-height histograms
(spark.sql.statistics.histogram.enabled).

    .venv/bin/python bench/analyze_vs_spark.py [--rows 10000000] [--partitions 30] [--runs 3]
"""
from __future__ import annotations

from common import alternated_medians, bench_arguments, bench_lab, bench_table, median_of, peak_rss_mib


def every_figure_scanned(lab, sql: str) -> None:
    """The same ANALYZE with no column's figures taken from footers: what it cost before they were."""
    from colstats_lab.analyze import runner

    served = runner._footer_plans
    runner._footer_plans = lambda table, files, plans: (plans, {})
    try:
        lab.sql(sql)
    finally:
        runner._footer_plans = served


def scan_floors(lab, runs: int) -> dict[str, float]:
    """Median seconds of the two floors below ANALYZE, as plain Spark jobs over the table's files: one cheap
    aggregate per column, and the aggregates footers cannot give (HLL of every column, string lengths). As
    ANALYZE does, each job computes its per-row inputs in a projection below the aggregation (generated code)."""
    from pyspark.sql import functions as F

    from colstats_lab.stats.sketches import ndv_input

    frame = lab.table("bench")
    types = {f.name: f.dataType.simpleString() for f in frame.schema.fields if f.name != "ds"}
    strings = [c for c, t in types.items() if t == "string"]
    inputs = frame.select("ds", *[ndv_input(F.col(c), t).alias(f"h_{c}") for c, t in types.items()],
                          *[F.length(c).alias(f"len_{c}") for c in strings])
    lacking = [F.hll_sketch_agg(f"h_{c}") for c in types]
    lacking += [agg(f"len_{c}") for c in strings for agg in (F.max, F.sum)]
    cheap = frame.select("ds", *[F.length(c).alias(c) if t == "string" else F.col(c) for c, t in types.items()])
    return alternated_medians(runs, {
        "cheap": lambda: cheap.groupBy("ds").agg(*[F.max(c) for c in types]).collect(),
        "lacking": lambda: inputs.groupBy("ds").agg(*lacking).collect()})


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
    lab.sql(ours_sql)  # warm both paths once (JIT, file cache)
    spark.sql(native_sql)
    ours, ours_runs = median_of(args.runs, lambda: lab.sql(ours_sql))
    native, native_runs = median_of(args.runs, lambda: spark.sql(native_sql))
    print(f"ours   (per-partition + table stats, sketches): median {ours:.2f} s  runs {['%.2f' % t for t in ours_runs]}")
    print(f"native (Spark ANALYZE, table level only):      median {native:.2f} s  runs {['%.2f' % t for t in native_runs]}")
    print(f"ratio ours / native: {ours / native:.2f}  (target <= 0.6)")
    print(f"  minimum, maximum and NULLs from footers for: {', '.join(lab.sql(ours_sql).details.footer_columns)}")
    floors = scan_floors(lab, args.runs)
    print(f"the scan's floor, one Spark job grouped by ds: one cheap aggregate per column {floors['cheap']:.2f} s "
          f"({floors['cheap'] / native:.2f} of native, a string's length for a string); what footers lack (an HLL "
          f"sketch of every column, string lengths) {floors['lacking']:.2f} s ({floors['lacking'] / native:.2f} of native)")
    scanned, scanned_runs = median_of(args.runs, lambda: every_figure_scanned(lab, ours_sql))
    print(f"ours, every figure scanned (before footers served them): median {scanned:.2f} s  "
          f"runs {['%.2f' % t for t in scanned_runs]}  ratio {scanned / native:.2f}")

    # with distributions: our KLL sketches against Spark's equi-height histograms, on the same rows
    lab.set("hive.stats.kll.enable", True)
    spark.conf.set("spark.sql.statistics.histogram.enabled", "true")
    lab.sql(ours_sql)
    spark.sql(native_sql)
    kll, kll_runs = median_of(args.runs, lambda: lab.sql(ours_sql))
    histograms, histogram_runs = median_of(args.runs, lambda: spark.sql(native_sql))
    spark.conf.set("spark.sql.statistics.histogram.enabled", "false")
    lab.set("hive.stats.kll.enable", False)
    print(f"ours with KLL sketches:                          median {kll:.2f} s  runs {['%.2f' % t for t in kll_runs]}")
    print(f"native with histograms (numBins 254):            median {histograms:.2f} s  "
          f"runs {['%.2f' % t for t in histogram_runs]}")
    print(f"ratio ours / native with distributions: {kll / histograms:.2f}  (target <= 0.35)")
    print(f"KLL's extra cost over our run without it: {kll / ours:.2f}x")
    print(f"peak memory of the Python process: {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
