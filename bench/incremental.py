"""Drill-style metadata at 10M rows, 30 partitions, in one run:

- full `ANALYZE TABLE bench REFRESH METADATA 'FILE' LEVEL COMPUTE STATISTICS` against the incremental
  refresh after one partition is written again (ratio; target at most 0.1), the same refresh against a
  plain Spark read of just the changed files (target at most 1.5) and against its floor (one job
  computing only each changed file's HLL sketches), and the up-to-date check,
  each also against Spark's own `ANALYZE TABLE ... COMPUTE STATISTICS FOR ALL COLUMNS` on the same rows;
- FILE-level min/max/nulls from Parquet footers alone (the refresh without a STATISTICS clause, over
  footer-servable columns) against one Spark scan computing the same per file (ratio; target at most
  0.05), and Spark's own aggregate push-down to Parquet (DataSource V2) as the other footer reader.

    .venv/bin/python bench/incremental.py [--rows 10000000] [--partitions 30] [--runs 3]
"""
from __future__ import annotations

import contextlib
import io

from common import alternated_medians, bench_arguments, bench_lab, bench_table, median_of, peak_rss_mib, timed
from pyspark.sql import functions as F

from colstats_lab.stats.sketches import ndv_input

FULL = "ANALYZE TABLE bench REFRESH METADATA 'FILE' LEVEL COMPUTE STATISTICS"
FOOTER_COLUMNS = ["id", "x", "y", "price", "note", "category", "flag", "day", "ts"]
FOOTERS_ONLY = f"ANALYZE TABLE bench COLUMNS ({', '.join(FOOTER_COLUMNS)}) REFRESH METADATA 'FILE' LEVEL"


def main() -> None:
    args = bench_arguments(runs=3)
    lab = bench_lab(fresh=True)
    spark = lab.spark
    source = bench_table(lab, args.rows, args.partitions)
    lab.set("metastore.enabled", True)
    changed = "2026-10-07"
    one_partition = source.where(F.col("ds") == changed).drop("ds").cache()
    one_partition.count()

    def full():
        lab.sql("ANALYZE TABLE bench DROP METADATA IF EXISTS")
        assert lab.sql(FULL).details.kind == "full"

    full()  # warm
    full_s, full_runs = median_of(args.runs, full)
    source.write.partitionBy("ds").format("parquet").saveAsTable("bench_native")
    native_s, native_runs = median_of(
        args.runs, lambda: spark.sql("ANALYZE TABLE bench_native COMPUTE STATISTICS FOR ALL COLUMNS").collect())
    incremental_runs, scanned = [], []
    for _ in range(args.runs):
        lab.tables["bench"].write(one_partition, partition={"ds": changed}, mode="overwrite")
        outcome = None

        def refresh():
            nonlocal outcome
            outcome = lab.sql(FULL).details
        incremental_runs.append(timed(refresh))
        assert outcome.kind == "incremental"
        scanned.append((len(outcome.scanned_files), len(outcome.reused_files)))
    incremental_s = sorted(incremental_runs)[len(incremental_runs) // 2]
    changed_files = list(outcome.scanned_files)

    def plain_read():  # every column of just the files the refresh had to read
        spark.read.parquet(*changed_files).write.format("noop").mode("overwrite").save()

    def sketches_per_file():  # the floor: the least a FILE-level refresh with NDV must compute from those files
        frame = spark.read.parquet(*changed_files)
        types = {f.name: f.dataType.simpleString() for f in frame.schema.fields}
        frame.groupBy(F.col("_metadata.file_path")).agg(
            *[F.hll_sketch_agg(ndv_input(F.col(c), t)) for c, t in types.items()]).collect()

    reads = alternated_medians(args.runs, {"plain": plain_read, "sketches": sketches_per_file})
    plain_read_s, floor_s = reads["plain"], reads["sketches"]
    up_to_date_s, _ = median_of(args.runs, lambda: lab.sql(FULL))
    files = [f.path for p in lab.tables["bench"].files()[1] for f in p.files]
    print(f"table: {args.rows:,} rows, {args.partitions} partitions, {len(files)} files")
    print(f"full refresh (FILE level, every column, NDV): {full_s:.2f} s  runs {[round(t, 2) for t in full_runs]}")
    print(f"incremental after one partition was overwritten: {incremental_s:.2f} s  "
          f"runs {[round(t, 2) for t in incremental_runs]}  (files read, reused: {scanned[-1]})  "
          f"ratio {incremental_s / full_s:.3f} (target <= 0.1)")
    print(f"  against a plain Spark read of the {len(changed_files)} changed files: {plain_read_s:.2f} s  "
          f"ratio {incremental_s / plain_read_s:.2f} (target <= 1.5)")
    print(f"  its floor: one Spark job computing only an HLL sketch of every column per changed file: "
          f"{floor_s:.2f} s, ratio {floor_s / plain_read_s:.2f}; the refresh / its floor {incremental_s / floor_s:.2f}")
    print(f"up-to-date check: {up_to_date_s * 1000:.1f} ms  ratio {up_to_date_s / full_s:.4f}")
    print(f"Spark's ANALYZE TABLE ... COMPUTE STATISTICS FOR ALL COLUMNS on the same rows: {native_s:.2f} s  "
          f"runs {[round(t, 2) for t in native_runs]}; full refresh / Spark {full_s / native_s:.2f}, incremental / "
          f"Spark {incremental_s / native_s:.3f}, up-to-date / Spark {up_to_date_s / native_s:.4f}")

    def footers_only():
        lab.sql("ANALYZE TABLE bench DROP METADATA IF EXISTS")
        outcome = lab.sql(FOOTERS_ONLY).details
        assert not outcome.spark_job, outcome.message

    frame = spark.read.parquet(*files)
    aggregates = []
    for c in FOOTER_COLUMNS:
        aggregates += [F.min(c), F.max(c), F.count_if(F.col(c).isNull())]

    def scan():
        frame.groupBy(F.col("_metadata.file_path")).agg(F.count(F.lit(1)), *aggregates) \
            .write.format("noop").mode("overwrite").save()

    footers_only()
    scan()  # warm both
    footer_s, _ = median_of(args.runs, footers_only)
    scan_s, _ = median_of(args.runs, scan)
    print(f"FILE-level min/max/nulls of {len(FOOTER_COLUMNS)} columns: footers (pyarrow) {footer_s:.3f} s, "
          f"one Spark scan {scan_s:.2f} s  ratio {footer_s / scan_s:.4f} (target <= 0.05)")

    spark.conf.set("spark.sql.parquet.aggregatePushdown", "true")
    spark.conf.set("spark.sql.sources.useV1SourceList", "avro,csv,json,kafka,orc,text")
    numeric = ["id", "x", "y", "day"]
    pushed = spark.read.parquet(*files).agg(F.count(F.lit(1)), *[f(c) for c in numeric for f in (F.min, F.max, F.count)])
    plan = io.StringIO()
    with contextlib.redirect_stdout(plan):
        pushed.explain()
    plan = plan.getvalue()
    pushed.collect()
    push_all_s, _ = median_of(args.runs, pushed.collect)

    def per_file():
        for path in files:
            spark.read.parquet(path).agg(F.count(F.lit(1)), *[f(c) for c in numeric for f in (F.min, F.max, F.count)]).collect()

    per_file_s = timed(per_file)
    print(f"Spark aggregate push-down (V2 Parquet, numeric columns only, no strings or per-file grouping): "
          f"whole table {push_all_s:.2f} s, per file ({len(files)} queries) {per_file_s:.2f} s "
          f"{'(PushedAggregation in the plan)' if 'PushedAggregation' in plan else ''}")
    print(f"pyarrow footers: {footer_s / push_all_s:.3f} of one pushed-down query, {footer_s / per_file_s:.4f} "
          "of the per-file queries: footers are read with pyarrow")
    print(f"peak memory of the Python process: {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
