"""Skew detection and list bucketing at 10M rows, 30 partitions (x zipf-skewed), in one run:

- exact and approximate detection (`TableHandle.skew`) over one plain `groupBy(ds, x).count()` scan, as ratios
  (alternated runs), and exact detection of the unique `id`, where the table is counted a second time;
- `TableHandle.relayout` of every partition against a plain overwrite of the same partitions (`TableHandle.write` of the
  table's rows, mode overwrite), both gathering statistics as the lab does by default;
- bytes (and rows) a query `x = <skewed>` and `x = <not skewed>` reads without list bucketing and after
  `ALTER TABLE ... SKEWED BY ... STORED AS DIRECTORIES` + `TableHandle.relayout`, from the pruning report,
  and the queries' times.

    .venv/bin/python bench/skew.py [--rows 10000000] [--partitions 30] [--runs 3] [--warmups 1]
"""
from __future__ import annotations

from common import alternated_medians, bench_arguments, bench_lab, bench_table, median_of, peak_rss_mib, timed

from colstats_lab.metastore.rows.levels import Level


def main() -> None:
    args = bench_arguments(runs=3)
    lab = bench_lab(fresh=True)
    bench_table(lab, args.rows, args.partitions)
    frame = lab.tables["bench"].to_spark()

    def plain(column):
        frame.groupBy("ds", column).count().write.format("noop").mode("overwrite").save()

    # x is zipf-skewed: the table's top values merge from the partitions' lists; id is unique, so the lists
    # prove nothing and exact mode counts every value for the table too
    times = alternated_medians(args.runs, {
        "plain x": lambda: plain("x"), "exact x": lambda: lab.tables["bench"].skew("x", mode="exact"),
        "approx x": lambda: lab.tables["bench"].skew("x", mode="approx"),
        "plain id": lambda: plain("id"), "exact id": lambda: lab.tables["bench"].skew("id", mode="exact")}, args.warmups)
    base = times["plain x"]
    print(f"table: {args.rows:,} rows, {args.partitions} partitions")
    print(f"plain groupBy(ds, x).count(): {base:.2f} s")
    print(f"exact skew report:   {times['exact x']:.2f} s  ratio {times['exact x'] / base:.2f} (target <= 1.3)")
    print(f"approx skew report:  {times['approx x']:.2f} s  ratio {times['approx x'] / base:.2f} (target <= 0.85)")
    print(f"unique id: plain groupBy(ds, id).count() {times['plain id']:.2f} s, exact skew report "
          f"{times['exact id']:.2f} s, ratio {times['exact id'] / times['plain id']:.2f}")

    report = lab.tables["bench"].skew("x", mode="exact", min_share=0.02, max_keys=10)
    skewed = report.recommended[0]
    not_skewed = 5000  # far in the zipf tail
    print(f"recommended: {report.recommended} (hold {report.covered_share:.1%} of the rows)")
    queries = {"skewed": f"SELECT count(*) FROM bench WHERE x = {skewed}",
               "not skewed": f"SELECT count(*) FROM bench WHERE x = {not_skewed}"}
    before = {name: lab.explain(q) for name, q in queries.items()}
    spark_before = {name: median_of(args.runs, lambda q=q: lab.sql(q))[0] for name, q in queries.items()}
    bench = lab.tables["bench"]
    overwrite = timed(lambda: bench.write(bench.to_spark(), mode="overwrite"))  # same rows, same layout
    lab.sql(report.statement)
    relayout = timed(lambda: lab.tables["bench"].relayout())
    after = {name: lab.explain(q) for name, q in queries.items()}
    spark_after = {name: median_of(args.runs, lambda q=q: lab.sql(q))[0] for name, q in queries.items()}
    total_bytes = sum(int(p.parameters.get("totalSize", 0)) for p in lab.metastore.catalog.get_partitions("default", "bench"))
    print(f"relayout of {args.partitions} partitions: {relayout:.1f} s; a plain overwrite of the same partitions "
          f"{overwrite:.1f} s; ratio {relayout / overwrite:.2f} (target <= 1.3)")
    for name in queries:
        kept = after[name].totals(Level.LIST_BUCKETING)
        print(f"x = {'%s' % (skewed if name == 'skewed' else not_skewed):>6} ({name:>10}): "
              f"bytes read without list bucketing {total_bytes / 2**20:.1f} MiB (every file of every partition), "
              f"with {kept['bytes_kept'] / 2**20:.1f} MiB -> {kept['bytes_kept'] / total_bytes:.3f}; "
              f"rows {kept['rows_kept']:,} of {kept['rows']:,}; query {spark_before[name]:.2f} s -> "
              f"{spark_after[name]:.2f} s")
    assert Level.LIST_BUCKETING not in before["skewed"].levels  # no directories to prune before the relayout
    print(f"peak memory of the Python process: {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
