"""Queries answered from statistics against the same queries run by Spark, and the cost of
gathering statistics during a write against a plain write, on the same data in the same run.

    .venv/bin/python bench/answers_from_stats.py [--rows 10000000] [--partitions 30] [--runs 5]
"""
from __future__ import annotations

import pandas as pd
from common import DDL, bench_arguments, bench_lab, bench_table, median_of, peak_rss_mib

QUERIES = [
    "SELECT count(*) FROM bench",
    "SELECT count(*), min(x), max(x) FROM bench",
    "SELECT count(*), min(amount), max(amount), count(note) FROM bench WHERE ds >= '2026-10-10' AND ds < '2026-10-20'",
]


def main() -> None:
    args = bench_arguments(runs=5)
    lab = bench_lab(fresh=True)
    source = bench_table(lab, args.rows, args.partitions)
    lab.sql("ANALYZE TABLE bench COMPUTE STATISTICS FOR ALL COLUMNS")
    print(f"table: {args.rows:,} rows, {args.partitions} partitions")

    def from_stats(query):
        result = lab.sql(query)
        assert result.answered_from == "stats", result.reason
        return result

    def by_spark(query):
        lab.set("hive.compute.query.using.stats", False)
        try:
            result = lab.sql(query)
        finally:
            lab.set("hive.compute.query.using.stats", True)
        assert result.answered_from == "scan"
        return result

    for query in QUERIES:
        ours_result, theirs_result = from_stats(query), by_spark(query)  # warm both, and compare
        def shown(frame):
            return [None if pd.isna(frame[c].iloc[0]) else str(frame[c].iloc[0]) for c in frame.columns]

        assert shown(ours_result.df) == shown(theirs_result.df), (shown(ours_result.df), shown(theirs_result.df))
        ours, _ = median_of(args.runs, lambda: from_stats(query))
        theirs, _ = median_of(args.runs, lambda: by_spark(query))
        print(f"{query}\n  from stats {ours * 1000:.1f} ms, Spark {theirs * 1000:.0f} ms, ratio {ours / theirs:.4f}")

    one_day = source.where("ds = '2026-10-01'").drop("ds").cache()
    day_rows = one_day.count()
    lab.sql(DDL.format(name="target"))

    def write(gather: bool, slot: list[int]):
        lab.set("hive.stats.column.autogather", gather)
        slot[0] += 1
        lab.write("target", one_day, partition={"ds": f"{'g' if gather else 'p'}{slot[0]}"})

    plain_slot, gather_slot = [0], [0]
    write(False, plain_slot)
    write(True, gather_slot)
    plain, _ = median_of(args.runs, lambda: write(False, plain_slot))
    gathered, _ = median_of(args.runs, lambda: write(True, gather_slot))
    print(f"write of {day_rows:,} rows into one partition: plain {plain:.2f} s, with statistics gathered "
          f"{gathered:.2f} s, overhead ratio {gathered / plain:.2f}")
    print(f"peak memory of the Python process: {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
