"""The metastore at 100,000 partitions x 20 columns of statistics (no Spark: the metastore alone, a SQLite file
or, with --metastore-server, a PostgreSQL database;
the Spark side of an ANALYZE reads one partition's files whatever the table's size).

Measures: adding the partitions; a bulk update of all 2,000,000 statistics rows (from a generator), and with
--floor the least any design of it can take (the same rows and their history states, built beforehand, inserted in
bulk into a fresh metastore);
the bytes per statistics row; the first table-level merge, which builds every segment; listing 1 %
of the partitions by filter and their get_aggr_stats_for. Then, against the same on a 30-partition
table of the same 20 columns (issue 13's targets: at most 2x): storing one partition's new
statistics with the table-level merge that follows (an ANALYZE of one partition without its Spark
job), get_aggr_stats_for over every partition, DESCRIBE FORMATTED of a column at table level, and a
one-day `count(*), min, max` answered from statistics. Prints the peak RSS (target < 1 GiB) and the
SQLite plan of the by-filter listing.

Then (issue 34's history at Hive scale) `--rounds` daily rounds of auto-analyze where `--changed` of the
partitions change each day: each round commits the changed partitions' new statistics as a worker's ANALYZE
does (its AnalyzeChange through Metastore.apply, without the Spark job: statistics rows, flags, the table's
parameters and merged level, the states settled: equal ones dropped, sketches thinned past the latest
`colstats.history.sketches`), and the same commit with history off is timed beside it; then the statistics
rows alone (set_aggr_stats_for), with history and without. Prints the file's size
after the first full ANALYZE and after the rounds (target <= 1.3x), and each round's store time with history
over without (target <= 1.2x).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import sqlite3
import time

from common import peak_rss_mib, timed
from datasketches import hll_sketch, tgt_hll_type

from colstats_lab.analyze.runner import AnalyzeChange, AnalyzeOutcome
from colstats_lab.column_statistics.sketches import NDV_LG_K, compact
from colstats_lab.column_statistics.stats_rows import ROW_COLUMNS, obj_to_values
from colstats_lab.commands.describe import describe
from colstats_lab.metastore import (
    COLUMN_STATS_ACCURATE,
    ColumnStatistics,
    ColumnStatisticsData,
    ColumnStatisticsDesc,
    ColumnStatisticsObj,
    Date,
    DateColumnStatsData,
    DoubleColumnStatsData,
    FieldSchema,
    LongColumnStatsData,
    Metastore,
    Partition,
    StatsAccuracy,
    StringColumnStatsData,
    Table,
)
from colstats_lab.metastore.changes import merge_table_level
from colstats_lab.metastore.repositories.history import _STATE_COLUMNS as STATE_COLUMNS
from colstats_lab.metastore.repositories.history import last_state, settle_history
from colstats_lab.metastore.rows.hive_rows import PART_STATS_INSERT as PART_STATS_INSERT
from colstats_lab.pruning.answers import answer_from_stats
from colstats_lab.sql.parser import parse_one
from colstats_lab.stats.aggregate import ColumnPlan, GroupStats
from colstats_lab.stats.partition_results import PartitionResults
from colstats_lab.tables.snapshot import PartitionFiles

COLUMNS = ([(f"n{i}", "bigint") for i in range(10)] + [(f"d{i}", "double") for i in range(4)]
           + [(f"s{i}", "string") for i in range(4)] + [(f"day{i}", "date") for i in range(2)])


def sketch_pool(size: int, seed: int = 7) -> list[bytes]:
    """Distinct HLL sketches (50-400 values each) shared by the partitions, stored as the lab stores
    Spark's (compact HLL_4): building 2M real ones would measure datasketches, not the metastore."""
    rnd = random.Random(seed)
    pool = []
    for _ in range(size):
        sketch = hll_sketch(NDV_LG_K, tgt_hll_type.HLL_8)
        start = rnd.randint(0, 1_000_000)
        for value in range(start, start + rnd.randint(50, 400)):
            sketch.update(value)
        pool.append(compact(sketch.serialize_compact()))
    return pool


def column_stats(name: str, kind: str, index: int, pool: list[bytes]) -> ColumnStatisticsObj:
    sketch = pool[index % len(pool)]
    if kind == "bigint":
        data = LongColumnStatsData(index, index + 1000, index % 7, 200, sketch)
    elif kind == "double":
        data = DoubleColumnStatsData(index / 3, index + 0.5, index % 5, 150, sketch)
    elif kind == "string":
        data = StringColumnStatsData(40, 12.5, index % 3, 300, sketch)
    else:
        data = DateColumnStatsData(Date(18000 + index % 300), Date(19000 + index % 300), 0, 90, sketch)
    return ColumnStatisticsObj(name, kind, ColumnStatisticsData.of(data))


def partition_values(count: int) -> list[tuple[str, str]]:
    first = dt.date(2015, 1, 1)
    return [((first + dt.timedelta(days=i // 24)).isoformat(), str(i % 24)) for i in range(count)]


def stats_for(values, columns, pool, now, first: int = 0, table: str = "wide"):
    """Partition statistics of `columns` for each partition in `values`, made as they are stored (a
    generator: 2,000,000 statistics rows never sit in memory at once)."""
    for i, (ds, hr) in enumerate(values, start=first):
        yield ColumnStatistics(ColumnStatisticsDesc(False, "default", table, f"ds={ds}/hr={hr}", now),
                               [column_stats(name, kind, i, pool) for name, kind in columns])


def query_plan(ms: Metastore, sql: str) -> str:
    if ms.db.path is None:
        return "; ".join(r[0].strip() for r in ms.db.execute("EXPLAIN " + sql))
    conn = sqlite3.connect(ms.db.path)
    try:
        return "; ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql))
    finally:
        conn.close()


def open_metastores(home: str, server: str | None, names: list[str]) -> list[Metastore]:
    """New metastores named `names`: SQLite files under `home`, or databases made afresh on the PostgreSQL
    server whose maintenance database `server` names (postgresql://user:password@host:port/postgres)."""
    if server is None:
        return [Metastore(os.path.join(home, f"{name}.db")) for name in names]
    import psycopg

    with psycopg.connect(server, autocommit=True) as conn:
        for name in names:
            conn.execute(f"DROP DATABASE IF EXISTS colstats_bench_{name}")
            conn.execute(f"CREATE DATABASE colstats_bench_{name}")
    base = server.rsplit("/", 1)[0]
    return [Metastore(f"{base}/colstats_bench_{name}", os.path.join(home, "warehouse")) for name in names]


def size_on_disk(ms: Metastore) -> int:
    """The bytes the metastore takes: a SQLite file with its write-ahead log checkpointed, or the PostgreSQL
    database's size."""
    if ms.db.path is None:
        return int(ms.db.execute("SELECT pg_database_size(current_database())").fetchone()[0])
    ms.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(os.path.getsize(p) for p in (ms.db.path, ms.db.path + "-wal") if os.path.exists(p))


def build_wide(ms: Metastore, values, columns, pool, now, table: str = "wide") -> dict[str, float]:
    """The table `wide` with a partition per value and every partition's statistics of `columns`, marked
    accurate (a non-transactional table, so answers need no write IDs); returns the time of each step."""
    figures = {}
    ms.catalog.create_table(Table("default", table, [FieldSchema(n, t) for n, t in COLUMNS],
                          [FieldSchema("ds", "string"), FieldSchema("hr", "int")], location="/tmp/wide",
                          parameters={"transactional": "false"}))
    flags = StatsAccuracy(True, {n for n, _ in columns}).to_param()
    figures["add partitions"] = timed(lambda: ms.catalog.add_partitions(
        [Partition("default", table, [ds, hr], parameters={"numRows": "1000", COLUMN_STATS_ACCURATE: flags})
         for ds, hr in values]))
    figures[f"bulk update, {len(values) * len(columns):,} statistics rows"] = timed(
        lambda: ms.column_stats.set_aggr_stats_for(stats_for(values, columns, pool, now, table=table)))
    stored = ms.catalog.get_table("default", table)
    figures["first table-level merge (builds every segment)"] = timed(
        lambda: merge_table_level(ms, stored, [n for n, _ in columns], now))
    return figures


def one_partition_seconds(ms: Metastore, values, pool, now, runs: int = 5) -> float:
    """The median time to store one partition's new statistics of every column and re-merge the table
    level, as an ANALYZE of that partition does after its Spark job."""
    table = ms.catalog.get_table("default", "wide")
    names = [n for n, _ in COLUMNS]
    middle = len(values) // 2

    def analyze_one(run: int):
        ms.column_stats.set_aggr_stats_for(stats_for([values[middle]], COLUMNS, pool, now, first=middle + run + 1))
        merge_table_level(ms, table, names, now)
    times = sorted(timed(lambda: analyze_one(run)) for run in range(runs))
    return times[runs // 2]


def describe_seconds(ms: Metastore, runs: int = 5) -> float:
    """The median time of DESCRIBE FORMATTED wide n0 (the table level: every partition's aggregate)."""
    stmt = parse_one("DESCRIBE FORMATTED wide n0")
    times = sorted(timed(lambda: describe(ms, stmt, "default")) for _ in range(runs))
    return times[runs // 2]


def answer_seconds(ms: Metastore, table: str, runs: int = 5) -> float:
    """The median time of a one-day `count(*), min, max` answered from statistics (no Spark)."""
    day = ms.catalog.get_partition_names("default", table)[len(ms.catalog.get_partition_names("default", table)) // 2]
    query = f"SELECT count(*), min(n0), max(n0) FROM {table} WHERE ds = '{day.split('/')[0].split('=')[1]}'"
    snapshot = lambda t: ms.txns.get_valid_write_ids(t.dbName, t.tableName)  # noqa: E731
    assert answer_from_stats(ms, query, "default", snapshot).frame is not None
    times = sorted(timed(lambda: answer_from_stats(ms, query, "default", snapshot)) for _ in range(runs))
    return times[runs // 2]


STATE_INSERT = ("TBL_ID", "PART_NAME", "COLUMN_NAME", "ENGINE", *STATE_COLUMNS, "NUM_ROWS", "RECORDED_AT")


def rows_and_states(values, columns, pool, now, first: int, table: str, tbl_id: int, part_ids: dict[str, int]
                    ) -> tuple[list[tuple], list[tuple]]:
    """The statistics rows (PART_STATS_INSERT order) and history states (STATE_INSERT order) that storing the
    statistics of `values` leaves, built as a floor measurement inserts them."""
    rows, states = [], []
    for stats in stats_for(values, columns, pool, now, first, table=table):
        desc = stats.statsDesc
        for obj in stats.statsObj:
            figures = obj_to_values(obj)
            rows.append((part_ids[desc.partName], desc.partName, desc.catName, "default", table, *figures, now, "hive"))
            named = dict(zip(ROW_COLUMNS, figures, strict=True), LAST_ANALYZED=now)
            states.append((tbl_id, desc.partName, obj.colName, "hive", *(named[c] for c in STATE_COLUMNS), 1000, now))
    return rows, states


def table_ids(ms: Metastore, table: str) -> tuple[int, dict[str, int]]:
    tbl_id = ms.db.execute("SELECT TBL_ID FROM TBLS WHERE TBL_NAME = ?", (table,)).fetchone()[0]
    return tbl_id, dict(ms.db.execute("SELECT PART_NAME, PART_ID FROM PARTITIONS WHERE TBL_ID = ?", (tbl_id,)).fetchall())


def bulk_floor(ms: Metastore, values, columns, pool, now) -> tuple[float, float]:
    """What a database alone takes to store the bulk update's statistics rows and their history states, built
    beforehand and inserted in bulk (COPY on PostgreSQL) into a fresh metastore's tables with their keys and
    indexes: no lookups, flags or sketches' checks. Returns (rows, states) seconds: the floor under the bulk."""
    ms.catalog.create_table(Table("default", "floor", [FieldSchema(n, t) for n, t in COLUMNS],
                          [FieldSchema("ds", "string"), FieldSchema("hr", "int")], location="/tmp/floor",
                          parameters={"transactional": "false"}))
    ms.catalog.add_partitions([Partition("default", "floor", [ds, hr]) for ds, hr in values])
    tbl_id, part_ids = table_ids(ms, "floor")
    stored_rows = stored_states = 0.0
    with ms.transaction():
        for first in range(0, len(values), 2_000):  # in the bulk's batches: the rows never sit in memory at once
            rows, states = rows_and_states(values[first:first + 2_000], columns, pool, now, first, "floor", tbl_id,
                                           part_ids)
            stored_rows += timed(lambda: ms.db.insert_rows("PART_COL_STATS", PART_STATS_INSERT, rows))
            stored_states += timed(lambda: ms.db.insert_rows("COL_STATS_HISTORY", STATE_INSERT, states))
    return stored_rows, stored_states


class _Undone(Exception):
    """Ends a measured transaction by rolling it back."""


def round_floor(ms: Metastore, values, pool, now, first: int) -> float:
    """What a database alone takes for a round's rows on the wide table, built beforehand and written in bulk:
    the statistics rows of `values` deleted and inserted again, their states inserted and as many of the cells'
    older states thinned (their sketches dropped), as a round's commit must at least; rolled back after."""
    tbl_id, part_ids = table_ids(ms, "wide")
    rows, states = rows_and_states(values, COLUMNS, pool, now, first, "wide", tbl_id, part_ids)
    older = [r[0] for r in ms.db.execute(
        "SELECT HISTORY_ID FROM COL_STATS_HISTORY WHERE TBL_ID = ? AND PART_NAME IN (SELECT value FROM json_each(?)) "
        "AND BIT_VECTOR IS NOT NULL ORDER BY HISTORY_ID LIMIT ?",
        (tbl_id, json.dumps(sorted({state[1] for state in states})), len(states))).fetchall()]
    dialect, seconds = ms.db.dialect, 0.0
    try:
        with ms.transaction():
            started = time.perf_counter()
            dialect.delete_rows(ms.db, "PART_COL_STATS", ("PART_ID", "COLUMN_NAME", "ENGINE"),
                                [(row[0], row[PART_STATS_INSERT.index("COLUMN_NAME")], "hive") for row in rows])
            ms.db.insert_rows("PART_COL_STATS", PART_STATS_INSERT, rows)
            ms.db.insert_rows("COL_STATS_HISTORY", STATE_INSERT, states)
            dialect.update_rows(ms.db, "COL_STATS_HISTORY", ("HISTORY_ID", "BIT_VECTOR", "HISTOGRAM", "QUANTILES"),
                                ("HISTORY_ID",), [(history_id, None, None, None) for history_id in older])
            seconds = time.perf_counter() - started
            raise _Undone
    except _Undone:
        pass
    return seconds


def store_round(ms: Metastore, values, pool, now, first: int, keep: bool, table_name: str = "wide") -> float:
    """One worker round's commit, as its ANALYZE stores it (an AnalyzeChange applied by Metastore.apply, so
    without its Spark job): the partitions' basic and column statistics of `values`, their flags, the table's
    parameters and merged level, and the commit's history settled, history kept or not; returns its seconds."""
    table = ms.catalog.get_table("default", table_name)
    parts = {p.partName: p for p in ms.catalog.get_partitions("default", table_name, [f"ds={ds}/hr={hr}" for ds, hr in values])}
    stats = list(stats_for(values, COLUMNS, pool, now, first=first, table=table_name))
    files = tuple(PartitionFiles(parts[s.statsDesc.partName], [], []) for s in stats)
    groups = PartitionResults()
    groups.add_all(GroupStats(tuple(f.partition.values), 1000, s.statsObj) for f, s in zip(files, stats, strict=True))
    ms.settings.history_enabled = keep
    txn = ms.txns.open_txn()
    change = AnalyzeChange(table, "columns", ms.txns.allocate_table_write_id(txn, "default", table_name),
                           ms.txns.get_valid_write_ids("default", table_name, txn), tuple(ColumnPlan(n, t) for n, t in COLUMNS),
                           files, groups, {f.part_name: 0 for f in files},
                           AnalyzeOutcome("default.wide", "columns", [], [], None, []))
    seconds = timed(lambda: ms.apply([change], txn))
    ms.settings.history_enabled = True
    return seconds


def bare_store_round(ms: Metastore, values, pool, now, first: int, keep: bool) -> float:
    """The column statistics rows of that commit alone (set_aggr_stats_for), with its history settled."""
    def commit():
        txn = ms.txns.open_txn()
        with ms.transaction() as conn:
            since = last_state(conn)
            conn.execute("INSERT INTO STATS_HISTORY_CONTEXT (ID, TXN_ID, CAUSE, KEEP) VALUES (1, ?, ?, ?) "
                         "ON CONFLICT (ID) DO UPDATE SET TXN_ID = excluded.TXN_ID, CAUSE = excluded.CAUSE, "
                         "KEEP = excluded.KEEP", (txn, "auto-analyze round", int(keep)))
            ms.column_stats.set_aggr_stats_for(stats_for(values, COLUMNS, pool, now, first=first))
            conn.execute("DELETE FROM STATS_HISTORY_CONTEXT")
            settle_history(conn, txn, ms.settings.history_sketches, since)
        ms.txns.commit_txn(txn)
    return timed(commit)


def history_rounds(ms: Metastore, values, pool, now, rounds: int, changed: float, floor: bool = False) -> None:
    """Daily rounds on the wide table: `changed` of its partitions (a different slice each day) analyzed
    again; the file's growth and each round's store against the same store without history."""
    first_size = size_on_disk(ms)
    per_day = max(1, int(len(values) * changed))
    ratios, seconds = [], []
    for day in range(rounds):
        start = (day * per_day * 7) % (len(values) - per_day)  # spread over the table
        slice_ = values[start:start + per_day]
        first = start + 10_000 * day
        if day % 2:  # neither side always goes first
            with_history = store_round(ms, slice_, pool, now, first=first + 2, keep=True)
            without = store_round(ms, slice_, pool, now, first=first + 1, keep=False)
        else:
            without = store_round(ms, slice_, pool, now, first=first + 1, keep=False)
            with_history = store_round(ms, slice_, pool, now, first=first + 2, keep=True)
        ratios.append(with_history / without)
        seconds.append(with_history)
    last_size = size_on_disk(ms)
    states = ms.db.execute("SELECT count(*), count(BIT_VECTOR) FROM COL_STATS_HISTORY").fetchone()
    print(f"history: {rounds} daily rounds, {per_day:,} partitions x {len(COLUMNS)} columns a round "
          f"({changed:.0%}); file {first_size / 2**20:.0f} MiB after the first full ANALYZE, "
          f"{last_size / 2**20:.0f} MiB after the rounds = {last_size / first_size:.2f}x (target <= 1.3); "
          f"{states[0]:,} kept states, {states[1]:,} with sketches")
    ordered = sorted(ratios)
    print(f"  a round's store with history / without: median {ordered[len(ordered) // 2]:.2f}, "
          f"worst {ordered[-1]:.2f} (target <= 1.2); with history median {sorted(seconds)[len(seconds) // 2]:.3f} s")
    if floor:
        floors = sorted(round_floor(ms, values[start:start + per_day], pool, now, 800_000 + start)
                        for start in (per_day * 3, per_day * 5, per_day * 9))
        print(f"  a round's floor (its rows deleted and inserted again, its states inserted and as many thinned, "
              f"built beforehand, in bulk): median {floors[1]:.3f} s")
    bare = []
    for day in range(5):  # after the file's size is taken: these keep states of their own
        start = (day * per_day * 11 + 3) % (len(values) - per_day)
        slice_, first = values[start:start + per_day], 900_000 + 10 * day
        without = bare_store_round(ms, slice_, pool, now, first=first, keep=False)
        bare.append(bare_store_round(ms, slice_, pool, now, first=first + 1, keep=True) / without)
    bare.sort()
    print(f"  its column statistics rows alone (set_aggr_stats_for), with history / without: median "
          f"{bare[len(bare) // 2]:.2f}, worst {bare[-1]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--home", default="/tmp/colstats-bench-metastore")
    parser.add_argument("--rounds", type=int, default=30, help="daily auto-analyze rounds after the build")
    parser.add_argument("--changed", type=float, default=0.01, help="share of the partitions changed a day")
    parser.add_argument("--metastore-server", metavar="URL",
                        help="measure a PostgreSQL metastore: the server's maintenance database, "
                             "postgresql://user:password@host:port/postgres (databases colstats_bench_* are remade)")
    parser.add_argument("--without-history", action="store_true",
                        help="keep no statistics history while building: what keeping history costs here")
    parser.add_argument("--floor", action="store_true",
                        help="also time the bulk's rows and history states alone, built beforehand and inserted in "
                             "bulk into a fresh metastore: the least any design of the bulk update can take")
    args = parser.parse_args()
    shutil.rmtree(args.home, ignore_errors=True)
    os.makedirs(args.home)
    pool = sketch_pool(256)
    now = int(time.time())
    big_ms, small_ms = open_metastores(args.home, args.metastore_server, ["metastore", "small"])
    if args.without_history:
        for ms in (big_ms, small_ms):  # what direct calls store keeps no history (a commit context saying so)
            ms.db.execute("INSERT INTO STATS_HISTORY_CONTEXT (ID, KEEP) VALUES (1, 0)")
    values = partition_values(args.partitions)
    figures = build_wide(big_ms, values, COLUMNS, pool, now)
    if args.floor:
        floor_ms, = open_metastores(args.home, args.metastore_server, ["floor"])
        stored_rows, stored_states = bulk_floor(floor_ms, values, COLUMNS, pool, now)
        floors = {"  floor: those rows alone, built beforehand, inserted in bulk": stored_rows,
                  "  floor: their history states alone, the same way": stored_states}
        ordered: dict[str, float] = {}
        for what, seconds in figures.items():  # printed under the bulk update's line
            ordered[what] = seconds
            if what.startswith("bulk update"):
                ordered.update(floors)
        figures = ordered
        floor_ms.close()
    build_wide(small_ms, partition_values(30), COLUMNS, pool, now)
    rows = big_ms.db.execute("SELECT count(*) FROM PART_COL_STATS").fetchone()[0]
    size = size_on_disk(big_ms)

    # hr = 3 over 24 % of the days: 1 % of the partitions
    start_day = dt.date.fromisoformat(values[len(values) // 2][0])
    end_day = start_day + dt.timedelta(days=len(values) // 24 * 24 // 100)
    one_percent = f"ds >= '{start_day}' AND ds < '{end_day}' AND hr = 3"
    found = []
    figures["get_partitions_by_filter, 1 %"] = min(
        timed(lambda: found.append(big_ms.catalog.get_partitions_by_filter("default", "wide", one_percent)))
        for _ in range(5))
    subset = [p.partName for p in found[-1]]
    figures["get_aggr_stats_for, 1 column, the 1 % filter's partitions"] = timed(
        lambda: big_ms.column_stats.get_aggr_stats_for("default", "wide", ["n0"], subset))

    compared = {
        "ANALYZE of one partition: store its 20 columns + table-level merge":
            lambda ms, vals: one_partition_seconds(ms, vals, pool, now),
        "get_aggr_stats_for, 1 column, every partition":
            lambda ms, vals: min(timed(lambda: ms.column_stats.get_aggr_stats_for("default", "wide", ["n0"])) for _ in range(3)),
        "DESCRIBE FORMATTED wide n0 (table level)": lambda ms, vals: describe_seconds(ms),
        "count/min/max WHERE ds = one day, from statistics": lambda ms, vals: answer_seconds(ms, "wide"),
    }
    ratios = {}
    for what, measure in compared.items():
        big, small = measure(big_ms, values), measure(small_ms, partition_values(30))
        ratios[what] = (big, small)

    print(f"metastore: {args.partitions:,} partitions x {len(COLUMNS)} columns, {size / 2**20:.0f} MiB, "
          f"{rows:,} statistics rows, {size / rows:.0f} bytes per statistics row, "
          f"{big_ms.db.execute('SELECT count(*) FROM COL_STATS_HISTORY').fetchone()[0]:,} kept history states"
          + (" (history not kept)" if args.without_history else ""))
    for what, seconds in figures.items():
        print(f"  {what:<62} {seconds * 1000:10.1f} ms")
    print(f"  filter {one_percent!r} -> {len(found[-1])} partitions")
    print("against the same on 30 partitions (target <= 2x):")
    for what, (big, small) in ratios.items():
        print(f"  {what:<62} {big * 1000:10.1f} ms vs {small * 1000:8.1f} ms  = {big / small:6.1f}x")
    merged = big_ms.column_stats.get_table_column_statistics("default", "wide", "n0").obj("n0").statsData.longStats
    print(f"  table-level n0: low {merged.lowValue} high {merged.highValue} nulls {merged.numNulls} ndv {merged.numDVs}")
    print(f"  peak RSS of this process: {peak_rss_mib():.0f} MiB")
    if args.rounds and not args.without_history:
        history_rounds(big_ms, values, pool, now, args.rounds, args.changed, args.floor)
    print("query plans:")
    print("  by filter:", query_plan(big_ms,
          "SELECT P.PART_NAME FROM PARTITIONS P JOIN PARTITION_KEY_VALS K0 ON K0.PART_ID = P.PART_ID AND "
          "K0.INTEGER_IDX = 0 JOIN PARTITION_KEY_VALS K1 ON K1.PART_ID = P.PART_ID AND K1.INTEGER_IDX = 1 "
          "WHERE P.TBL_ID = 1 AND K0.PART_KEY_VAL >= '2020' AND K0.PART_KEY_VAL < '2021' AND "
          "CAST(K1.PART_KEY_VAL AS INTEGER) = 3"))
    big_ms.close()
    small_ms.close()


if __name__ == "__main__":
    main()
