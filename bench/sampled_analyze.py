"""The tiered ANALYZE against Spark's own: Spark's ANALYZE ... FOR ALL COLUMNS, the lab's full ANALYZE, metadata
alone (FOR ALL COLUMNS NOSCAN), SAMPLE 5 PERCENT and SAMPLE 1 PERCENT over the same files, interleaved, medians;
then, per figure the tiers estimate, the error against the truth (the full ANALYZE's exact figures, Spark's
count(DISTINCT) for NDV) and the band's width, and how many bands held.

    .venv/bin/python bench/sampled_analyze.py [--rows 10000000] [--runs 3] [--warmups 1]
    .venv/bin/python bench/sampled_analyze.py --table store_sales [--sf 3]

The generated table is the benchmark's 11 columns in Parquet files Spark writes with 4 MiB row groups (about a
hundred at 10M rows): the sample's unit is the row group, so a 1 % sample needs a hundred of them to be 1 %.
store_sales is the fact table derived from TPC-DS (bench/tpcds.py), as DuckDB writes it (row groups of 122,880
rows: 70 at SF 3), 23 columns of keys, counts and decimals with NULLs.
"""
from __future__ import annotations

import os

import pyarrow.parquet as pq
from common import alternated_medians, bench_arguments, bench_lab, generated
from tpcds import generate

from colstats_lab.column_statistics.estimators import tiered_columns

TIERS = {"metadata": "NOSCAN", "5 %": "SAMPLE 5 PERCENT", "1 %": "SAMPLE 1 PERCENT"}


def main() -> None:
    args = bench_arguments(runs=3, tables=("generated", "store_sales"))
    lab = bench_lab(fresh=True)
    spark = lab.spark
    folder = os.path.join(lab.home, "sampled")
    if args.table == "store_sales":
        tpcds_folder = os.path.join(os.path.dirname(lab.home.rstrip("/")), f"colstats-tpcds-sf{args.sf:g}")
        generate(tpcds_folder, args.sf, [])
        folder = os.path.join(tpcds_folder, "store_sales")
        described = f"store_sales derived from TPC-DS at SF {args.sf:g} (DuckDB's Parquet)"
    else:
        (generated(spark, args.rows, 1).drop("ds").coalesce(2).write.mode("overwrite")
         .option("parquet.block.size", 4 * 2**20).parquet(folder))
        described = f"{args.rows:,} rows, 11 columns"
    lab.sql(f"CREATE EXTERNAL TABLE sampled LOCATION '{folder}'")
    spark.sql("DROP TABLE IF EXISTS sampled_native")
    spark.sql(f"CREATE TABLE sampled_native USING parquet LOCATION '{folder}'")
    lab.set("colstats.sample.seed", 1)
    full = "ANALYZE TABLE sampled COMPUTE STATISTICS FOR ALL COLUMNS"
    works = {"spark": lambda: spark.sql("ANALYZE TABLE sampled_native COMPUTE STATISTICS FOR ALL COLUMNS").collect(),
             "lab full": lambda: lab.sql(full),
             **{name: (lambda clause=clause: lab.sql(f"{full} {clause}")) for name, clause in TIERS.items()}}
    files = [os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".parquet")]
    groups = sum(pq.ParquetFile(f).metadata.num_row_groups for f in files)
    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    print(f"table: {described}, {rows:,} rows, {groups} row groups in {len(files)} file(s); {args.warmups} warm-up "
          f"round(s), then {args.runs} alternated")
    times = alternated_medians(args.runs, works, args.warmups)
    spark_time = times["spark"]
    targets = {"metadata": 0.05, "1 %": 0.1, "5 %": 0.2, "lab full": None}
    for name, seconds in times.items():
        target = targets.get(name)
        print(f"  {name:9s} median {seconds:6.2f} s  {seconds / spark_time:5.3f} of Spark's"
              + (f"  (target <= {target})" if target is not None else ""))

    lab.sql(full)
    truth = _truth(lab, spark)
    print("\nper figure, each tier against the truth (error as a share of the truth; band width likewise):")
    held = cases = 0
    for name, clause in TIERS.items():
        lab.sql(f"{full} {clause}")
        entries = tiered_columns(lab.metastore.catalog.get_table("default", "sampled").parameters)
        for column, entry in sorted(entries.items()):
            for figure, (value, low, high, exact, method) in sorted(entry["figures"].items()):
                real = truth.get((column, figure))
                if real is None or value is None or isinstance(real, str):
                    continue
                inside = (low is None or low <= real + 1e-9) and (high is None or real <= high + 1e-9)
                if not exact:
                    cases += 1
                    held += inside
                if real:
                    error, width = f"{abs(value - real) / abs(real):8.3%}", (
                        "" if low is None or high is None else f"band {(high - low) / abs(real):8.2%}")
                else:  # a truth of 0 (no NaN): the error and band in the figure's own units
                    error = f"{abs(value - real):8,}"
                    width = "" if low is None or high is None else f"band 0..{high:,}"
                print(f"  {name:8s} {column:9s} {figure:8s} {'exact ' if exact else 'estim.'} "
                      f"error {error} {width:17s} {'held' if inside else 'MISSED'}  {method}")
    print(f"\nbands held the truth in {held} of {cases} estimated figures ({held / max(cases, 1):.1%})")


def _truth(lab, spark) -> dict:
    """Each figure's true value: the full ANALYZE's (exact but for NDV), Spark's count(DISTINCT) for NDV."""
    stats = lab.tables["sampled"].inspect.stats().set_index("column")
    frame = lab.tables["sampled"].to_spark()
    names = [f.name for f in frame.schema.fields]
    # a job a column: Spark expands every row once per DISTINCT aggregate of one query (11 columns: minutes)
    distinct = {c: frame.selectExpr(f"count(DISTINCT `{c}`)").first()[0] for c in names}
    out = {}
    for column in names:
        row = stats.loc[column]
        out[(column, "ndv")] = distinct[column]
        out[(column, "nulls")] = row["nulls"]
        out[(column, "rows")] = row["rows"]
        for figure in ("avg_len", "max_len", "trues", "falses", "nans"):
            if row[figure] is not None:
                out[(column, figure)] = row[figure]
        for figure in ("min", "max"):
            if isinstance(row[figure], (int, float)):
                out[(column, figure)] = row[figure]
    return out


if __name__ == "__main__":
    main()
