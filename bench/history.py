"""The cost of keeping statistics history on a one-partition overwrite and on an ANALYZE of the whole
table, against the same operations with keeping off (`colstats.history.enabled=false`), alternating
run by run in the same lab; and how much the metastore grows per kept state. Then what keeping costs on
the other two paths that store history: a skew report keeping its top values (against the same report
with the keeping left out) and a REFRESH METADATA keeping its table and partition figures (against the
same refresh with the recording left out).

    .venv/bin/python bench/history.py [--rows 10000000] [--partitions 30] [--runs 3]
"""
from __future__ import annotations

import os
import sqlite3
import statistics

from common import bench_arguments, bench_lab, bench_table, timed


def set_history(lab, on: bool) -> None:
    """Turns keeping history on or off for the lab's commits (colstats.history.enabled)."""
    lab.set("colstats.history.enabled", on)


def store_keeping(ms, on: bool, store) -> float:
    """Seconds of `store()`, a direct metastore call, in a commit context that keeps history or not."""
    def run():
        with ms.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO STATS_HISTORY_CONTEXT (ID, KEEP) VALUES (1, ?)", (int(on),))
            store()
            conn.execute("DELETE FROM STATS_HISTORY_CONTEXT")
    return timed(run)


def history_rows(path: str) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT count(*) FROM COL_STATS_HISTORY").fetchone()[0]


def checkpointed_size(path: str) -> int:
    """The metastore file's size once its write-ahead log is folded in."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return os.path.getsize(path)


def metastore_only(lab, runs: int) -> None:
    """The metastore's share alone: storing one ANALYZE's partition statistics again (the states the last
    ANALYZE stored, re-stored through the metastore's bulk call), keeping history and not."""
    from colstats_lab.column_statistics.model import ColumnStatistics, ColumnStatisticsDesc

    ms = lab.metastore
    names = ms.catalog.get_partition_names("default", "bench")
    columns = [c.name for c in ms.catalog.get_table("default", "bench").cols]
    stored = ms.column_stats.get_partitions_statistics("default", "bench", names, columns)
    batch = [ColumnStatistics(ColumnStatisticsDesc(False, "default", "bench", name, 0), stored[name].statsObj)
             for name in names]
    spent: dict[bool, list[float]] = {True: [], False: []}
    txn = lab.transaction()  # a transactional table's statistics are stored under a write ID
    table = ms.catalog.get_table("default", "bench")
    write_id, valid = txn.write_id(table), txn.snapshot(table)
    for run in range(runs * 3):
        for on in ((True, False) if run % 2 == 0 else (False, True)):
            spent[on].append(store_keeping(ms, on, lambda: ms.column_stats.set_aggr_stats_for(batch, write_id, valid)))
    txn.abort("the benchmark's")
    with_history, without = statistics.median(spent[True]), statistics.median(spent[False])
    print(f"metastore only: storing {len(batch) * len(columns)} column states takes {with_history * 1000:.0f} ms "
          f"with history, {without * 1000:.0f} ms without (ratio {with_history / without:.2f})")


def alternated(runs: int, with_history, without) -> tuple[float, float]:
    """Median seconds of `with_history()` and `without()` over `runs` alternated pairs."""
    spent: dict[bool, list[float]] = {True: [], False: []}
    for run in range(runs):
        for on in ((True, False) if run % 2 == 0 else (False, True)):
            spent[on].append(timed(with_history if on else without))
    return statistics.median(spent[True]), statistics.median(spent[False])


def other_paths(lab, runs: int) -> None:
    """A skew report keeping its top values, and a REFRESH METADATA keeping its figures, each against the
    same work with the keeping replaced by nothing."""
    from colstats_lab.commands import skew as skew_command
    from colstats_lab.metastore.rows import metadata_units

    keep, record = skew_command.keep_top_values, metadata_units.record_metadata_history

    def report(keeping: bool) -> None:
        skew_command.keep_top_values = keep if keeping else (lambda *args: [])
        lab.tables["bench"].skew("category", mode="exact")

    def refresh(keeping: bool) -> None:  # dropped first: a full refresh, not one that finds nothing changed
        metadata_units.record_metadata_history = record if keeping else (lambda *args: None)
        lab.sql("ANALYZE TABLE bench DROP METADATA IF EXISTS")
        lab.sql("ANALYZE TABLE bench REFRESH METADATA 'partition' LEVEL")

    lab.set("metastore.enabled", True)
    for what, work in (("skew report (category, exact)", report), ("REFRESH METADATA 'partition'", refresh)):
        work(True)  # warm
        with_history, without = alternated(runs, lambda: work(True), lambda: work(False))
        print(f"{what:30} keeping {with_history:.2f} s, without {without:.2f} s: ratio {with_history / without:.3f}")
    skew_command.keep_top_values, metadata_units.record_metadata_history = keep, record


def main() -> None:
    args = bench_arguments(runs=3)
    lab = bench_lab(fresh=True)
    lab.set("hive.stats.kll.enable", True)
    source = bench_table(lab, args.rows, args.partitions)
    day = source.where("ds = '2026-10-01'").drop("ds").cache()
    day.count()
    path = lab.metastore.path
    analyze = "ANALYZE TABLE bench COMPUTE STATISTICS FOR ALL COLUMNS"
    print(f"table: {args.rows:,} rows, {args.partitions} partitions, 11 columns, KLL sketches on")
    lab.sql(analyze)  # warm the paths once
    lab.tables["bench"].write(day, partition={"ds": "2026-10-01"}, mode="overwrite")
    times: dict[tuple[str, bool], list[float]] = {}
    for run in range(args.runs):
        for on in ((True, False) if run % 2 == 0 else (False, True)):  # neither side always goes first
            set_history(lab, on)
            times.setdefault(("write", on), []).append(
                timed(lambda: lab.tables["bench"].write(day, partition={"ds": "2026-10-01"}, mode="overwrite")))
            times.setdefault(("analyze", on), []).append(timed(lambda: lab.sql(analyze)))
    set_history(lab, True)
    for operation in ("write", "analyze"):
        with_history = statistics.median(times[(operation, True)])
        without = statistics.median(times[(operation, False)])
        print(f"{operation:8} with history {with_history:.2f} s, without {without:.2f} s: "
              f"ratio {with_history / without:.3f} (target <= 1.05); runs with "
              f"{[f'{t:.2f}' for t in times[(operation, True)]]}, without "
              f"{[f'{t:.2f}' for t in times[(operation, False)]]}")
    metastore_only(lab, args.runs)

    before_rows = history_rows(path)
    before_bytes = checkpointed_size(path)
    lab.sql(analyze)
    added = history_rows(path) - before_rows
    with sqlite3.connect(path) as conn:
        sizes = conn.execute("SELECT avg(length(BIT_VECTOR)), avg(length(HISTOGRAM)) FROM COL_STATS_HISTORY "
                             "WHERE HISTORY_ID > (SELECT max(HISTORY_ID) FROM COL_STATS_HISTORY) - ?",
                             (added,)).fetchone()
    grown = checkpointed_size(path) - before_bytes
    other_paths(lab, args.runs)
    print(f"one ANALYZE kept {added} states ({args.partitions} partitions and the table, 11 columns); the file grew "
          f"{grown / 1024:.0f} KiB: {grown / max(added, 1):.0f} bytes a state (HLL sketch {sizes[0] or 0:.0f} B, "
          f"KLL sketch {sizes[1] or 0:.0f} B on average)")


if __name__ == "__main__":
    main()
