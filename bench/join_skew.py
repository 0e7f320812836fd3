"""Join skew predicted from statistics at 10M x 1M rows, in one run:

- `TableHandle.join_skew` of the 10M-row `bench` (x zipf-skewed) against a 1M-row dimension keyed by x: its time
  and the Spark jobs it started (statistics are fresh, so none), and the predicted largest task beside
  Spark's own placement (`run=True`);
- the cost of keeping frequent-items sketches in ANALYZE: `ANALYZE ... FOR ALL COLUMNS` keeping them for
  the join key x (`colstats.frequent.items.columns`), and for every column of a key's type ('*'), against
  keeping none, alternated (target at most 1.1).

    .venv/bin/python bench/join_skew.py [--rows 10000000] [--partitions 30] [--runs 3]
"""
from __future__ import annotations

import time
import uuid

from common import alternated_medians, bench_arguments, bench_lab, bench_table, peak_rss_mib
from pyspark.sql import functions as F

ANALYZE = "ANALYZE TABLE bench COMPUTE STATISTICS FOR ALL COLUMNS"


def main() -> None:
    args = bench_arguments(runs=3)
    lab = bench_lab(fresh=True)
    spark = lab.spark
    bench_table(lab, args.rows, args.partitions)
    lab.sql("CREATE TABLE dim (x INT, label STRING)")
    lab.tables["dim"].write(spark.range(args.rows // 10).select((F.col("id") % 100_000).cast("int").alias("x"),
                                                                F.concat(F.lit("label "), F.col("id")).alias("label")))

    def analyze(columns: str):
        lab.sql(f"ALTER TABLE bench SET TBLPROPERTIES ('colstats.frequent.items.columns'='{columns}')")
        lab.sql(ANALYZE)

    times = alternated_medians(args.runs, {"none": lambda: analyze(""), "x": lambda: analyze("x"),
                                           "every": lambda: analyze("*")})
    print(f"ANALYZE FOR ALL COLUMNS, {args.rows:,} rows: keeping no frequent items {times['none']:.2f} s; for the key "
          f"x {times['x']:.2f} s, ratio {times['x'] / times['none']:.2f} (target <= 1.1); for every integral, string "
          f"and date column (6) {times['every']:.2f} s, ratio {times['every'] / times['none']:.2f}")
    analyze("x")
    lab.sql("ALTER TABLE dim SET TBLPROPERTIES ('colstats.frequent.items.columns'='x')")
    lab.sql("ANALYZE TABLE dim COMPUTE STATISTICS FOR ALL COLUMNS")

    group = f"colstats-bench-{uuid.uuid4().hex}"
    spark.sparkContext.setJobGroup(group, "join skew prediction")
    start = time.perf_counter()
    report = lab.tables["bench"].join_skew("dim", "x", "x")
    predicted_s = time.perf_counter() - start
    jobs = spark.sparkContext.statusTracker().getJobIdsForGroup(group)
    spark.sparkContext.setJobGroup("", "")
    print(f"prediction for bench.x JOIN dim.x ({args.rows:,} x {args.rows // 10:,} rows): {predicted_s * 1000:.0f} ms, "
          f"{len(jobs)} Spark jobs; sources: {report.sides[0].source}; {report.sides[1].source}")
    start = time.perf_counter()
    measured = lab.tables["bench"].join_skew("dim", "x", "x", run=True)
    run_s = time.perf_counter() - start
    tasks = measured.tasks.set_index("partition")
    largest = int(measured.largest["partition"])
    print(f"largest task {largest}: predicted {tasks.loc[largest, 'predicted_rows']:,.0f} output rows, Spark placed "
          f"{int(tasks.loc[largest, 'actual_rows']):,} (counted in {run_s:.1f} s); the actual largest is task "
          f"{int(tasks['actual_rows'].astype('float').idxmax())}; median task predicted "
          f"{measured.median_rows:,.0f}, actual {float(tasks['actual_rows'].astype('float').median()):,.0f}")
    print(f"recommendation: {measured.recommendation}")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    print(f"with broadcasts off: {lab.tables['bench'].join_skew('dim', 'x', 'x').recommendation}")
    spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
    print(f"peak memory of the Python process: {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
