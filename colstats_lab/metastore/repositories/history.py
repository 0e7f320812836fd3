"""Statistics over time: every state of a (table or partition, column)'s statistics, kept in
COL_STATS_HISTORY as each store writes them (`keep_states`). This module keeps and reads them, completes the
states a commit stored with the rows they describe, and settles what a commit leaves of them.

A REFRESH METADATA's figures (Drill's units, which are replaced wholesale) are kept
here too, as states of engine DRILL: the TABLE unit's and each partition's, the finer units (files, row
groups) being the metadata's working detail rather than what a person watches.
"""
from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ...column_statistics.frequent_items import TopValues
from ...column_statistics.model import ColumnStatisticsObj
from ...column_statistics.stats_rows import ROW_COLUMNS, row_to_obj
from ...errors import InvalidInputException
from ..db import Database
from ..rows import hive_rows
from ..rows.hive_rows import DRILL, HIVE
from ..settings import DEFAULT_SKETCHES, MetastoreSettings
from .catalog import CatalogRepository
from .repository import Repository

if TYPE_CHECKING:
    from ..rows.write_ids import ValidWriteIdList

DEFAULT_KEEP = 100  # colstats.history.keep: states kept per (owner, column) by lab.clean()
STATE_OVERHEAD_BYTES = 160  # a kept state's row and index entries beside its sketches and texts, about
SOURCES = {"statistics": HIVE, "metadata": DRILL}  # how inspect.history and inspect.compare name them


def engine_of(source: str) -> str:
    """The engine of the states a source names; raises InvalidInputException naming an unknown one."""
    if source not in SOURCES:
        raise InvalidInputException(f"source {source!r} is not one of {', '.join(SOURCES)} (the statistics of "
                                    "ANALYZE and writes, or the metadata of REFRESH METADATA)")
    return SOURCES[source]


@dataclass(frozen=True)
class StatsState:
    """One stored state of one column's statistics: the figures (with their sketches), the rows they
    describe, the transaction and write ID that stored them (None for a direct metastore call), what that
    commit did, and when (seconds since the epoch, UTC)."""

    history_id: int
    stats: ColumnStatisticsObj
    rows: int | None
    txn_id: int | None
    write_id: int | None
    cause: str | None
    recorded_at: int
    last_analyzed: int
    top_values: TopValues | None = None  # where a skew report counted the rows this state describes
    quantiles: dict | None = None  # a state whose sketches were thinned: its quartiles, deciles and shares
    confirmed_at: int | None = None  # the last time the same figures were stored again

    @property
    def kept_psi(self) -> float | None:
        """A thinned state's PSI against the state before it, measured while it still had its sketch."""
        return self.quantiles.get("psi_before") if self.quantiles else None

    @property
    def bins(self) -> tuple[list, list[float]] | None:
        """A thinned state's decile edges and its shares of them (what a PSI against it needs)."""
        if not self.quantiles:
            return None
        return self.quantiles["edges"], self.quantiles["shares"]


# the figures a kept state copies from its statistics row (the table's columns of migrations 10, 18, 24, 26 and 30);
# not a string's sketch of its lengths, which a profile reads of the statistics now and no drift check compares
_STATE_COLUMNS = ("COLUMN_TYPE", "LOW_VALUE", "HIGH_VALUE", "LONG_LOW_VALUE", "LONG_HIGH_VALUE", "DOUBLE_LOW_VALUE",
                  "DOUBLE_HIGH_VALUE", "BIG_DECIMAL_LOW_VALUE", "BIG_DECIMAL_HIGH_VALUE", "NUM_NULLS", "NUM_DISTINCTS",
                  "BIT_VECTOR", "AVG_COL_LEN", "MAX_COL_LEN", "NUM_TRUES", "NUM_FALSES", "LOW_VALUE_MICROS",
                  "HIGH_VALUE_MICROS", "HISTOGRAM", "NUM_VALUES", "NUM_NANS", "SUM_VALUES", "SUM_SQUARED_DEVIATIONS",
                  "NUM_ZEROS", "LAST_ANALYZED")
# a partition's row names its table through PARTITIONS, a table's row directly
_OWNERS = {"PART_COL_STATS": ("(SELECT TBL_ID FROM PARTITIONS P WHERE P.PART_ID = S.PART_ID)", "S.PART_NAME",
                              "SELECT CAST(PARAM_VALUE AS INTEGER) FROM PARTITION_PARAMS WHERE PART_ID = S.PART_ID "
                              "AND PARAM_KEY = 'numRows'"),
           "TAB_COL_STATS": ("S.TBL_ID", "NULL",
                             "SELECT CAST(PARAM_VALUE AS INTEGER) FROM TABLE_PARAMS WHERE TBL_ID = S.TBL_ID "
                             "AND PARAM_KEY = 'numRows'")}


def last_stats_row(conn, stats_table: str) -> int:
    """The newest row id of TAB_COL_STATS or PART_COL_STATS: rows a store adds after it have larger ids (SQLite
    numbers a row past the largest before the insert, a replaced one included), which `keep_states` keeps."""
    if stats_table not in _OWNERS:  # a name of Hive's schema, never one from outside: checked before it is SQL
        raise ValueError(f"not a statistics table: {stats_table!r}")
    return conn.execute(f"SELECT coalesce(max(CS_ID), 0) FROM {stats_table}").fetchone()[0]


def keep_states(conn, stats_table: str, after: int, tables) -> None:
    """Keeps in COL_STATS_HISTORY, as states, the statistics rows of `stats_table` of `tables` ((db, table)
    pairs) stored since row id `after`, with the commit that stored them (STATS_HISTORY_CONTEXT: its transaction,
    hence the write ID, what it did, and whether it keeps history at all; a direct call has none) and the rows
    their owner holds now. One statement a table for a whole store: a trigger per row cost a round of auto-analyze
    1.3-1.5x its store. The table is named because on PostgreSQL commits of other tables store rows meanwhile,
    whose ids may be past `after` too."""
    for db_name, table_name in sorted(set(tables)):
        _keep_states_of(conn, stats_table, after, db_name, table_name)


def _keep_states_of(conn, stats_table: str, after: int, db_name: str, table_name: str) -> None:
    tbl_id, part_name, rows = _OWNERS[stats_table]
    # SQLite's writers follow each other: no other table's rows come past `after`, and naming the table there
    # would lead its planner to the table's index instead of the row ids' range (a 1-partition ANALYZE at
    # 100,000 partitions 55 ms -> 240 ms, measured)
    table_filter, table_args = ("S.DB_NAME = ? AND S.TABLE_NAME = ? AND ", (db_name, table_name)) \
        if conn.dialect.concurrent_writers else ("", ())
    figures = ", ".join(_STATE_COLUMNS)
    conn.execute(
        f"INSERT INTO COL_STATS_HISTORY (TBL_ID, PART_NAME, COLUMN_NAME, ENGINE, {figures}, NUM_ROWS, TXN_ID, "
        f"WRITE_ID, CAUSE, RECORDED_AT) "
        f"SELECT {tbl_id}, {part_name}, S.COLUMN_NAME, S.ENGINE, {', '.join('S.' + c for c in _STATE_COLUMNS)}, "
        f"({rows}), C.TXN_ID, (SELECT T2W_WRITEID FROM TXN_TO_WRITE_ID WHERE T2W_TXNID = C.TXN_ID "
        f"AND T2W_DATABASE = S.DB_NAME AND T2W_TABLE = S.TABLE_NAME), C.CAUSE, ? "
        f"FROM {stats_table} S LEFT JOIN STATS_HISTORY_CONTEXT C ON C.ID = {conn.dialect.history_context} "
        f"WHERE S.CS_ID > ? AND {table_filter}COALESCE(C.KEEP, 1) <> 0", (int(time.time()), after, *table_args))


def last_state(conn) -> int:
    """The newest state's id: a commit's states are those past it when the commit starts (it holds SQLite's
    write lock, so no other commit's states come between), found by their ids' range instead of an index on
    TXN_ID that every kept state would also have to update."""
    return conn.execute("SELECT coalesce(max(HISTORY_ID), 0) FROM COL_STATS_HISTORY").fetchone()[0]


def commit_states(conn, alias: str, since: int, txn_id: int | None) -> tuple[str, tuple]:
    """A condition (and its arguments) selecting, as `alias`, the states commit `txn_id` stored: past `since`
    (the newest state's id when it began) and up to the newest now. Bounded on both sides so that a planner
    without statistics of the history yet (a server's fresh metastore, before its first ANALYZE) takes the ids'
    index for a range as it does for equality: open at the top, PostgreSQL's guess was a third of the table,
    scanned whole twice a commit (70 ms each at 200,000 states, measured)."""
    return (f"{alias}.HISTORY_ID BETWEEN ? AND ? AND {alias}.TXN_ID = ?", (since + 1, last_state(conn), txn_id))


def record_history_rows(conn, txn_id: int, since: int = 0) -> None:
    """Gives the statistics states commit `txn_id` stored the rows their owners hold once its changes are
    applied (a state is kept as it is stored, before a write's numRows lands), inside the commit's SQLite
    transaction; a DRILL state keeps the rows its unit counted."""
    rows = ("CASE WHEN PART_NAME IS NULL THEN (SELECT CAST(PARAM_VALUE AS INTEGER) FROM TABLE_PARAMS TP "
            "WHERE TP.TBL_ID = COL_STATS_HISTORY.TBL_ID AND TP.PARAM_KEY = 'numRows') ELSE "
            "(SELECT CAST(PP.PARAM_VALUE AS INTEGER) FROM PARTITIONS P JOIN PARTITION_PARAMS PP ON PP.PART_ID = P.PART_ID "
            "AND PP.PARAM_KEY = 'numRows' WHERE P.TBL_ID = COL_STATS_HISTORY.TBL_ID "
            "AND P.PART_NAME = COL_STATS_HISTORY.PART_NAME) END")
    states, args = commit_states(conn, "COL_STATS_HISTORY", since, txn_id)
    # only the states whose rows changed: an UPDATE rewrites a state's sketches with it
    conn.execute(f"UPDATE COL_STATS_HISTORY SET NUM_ROWS = {rows} WHERE {states} "
                 f"AND ENGINE = ? AND {rows} IS NOT NULL AND NUM_ROWS IS NOT {rows}", (*args, HIVE))


_SELECT = (f"SELECT PART_NAME, HISTORY_ID, {', '.join(ROW_COLUMNS)}, NUM_ROWS, TXN_ID, WRITE_ID, CAUSE, "
           "RECORDED_AT, LAST_ANALYZED, TOP_VALUES, QUANTILES, CONFIRMED_AT FROM COL_STATS_HISTORY ")
# what makes two states the same: every figure, and the rows described (not when it was analyzed); their
# sketches are compared apart, by what they hold (`_same_sketches`); a number's sums as the same within a double's
# rounding (a scan's sums and a merge of two writes' ones differ in their last bits)
_SUMS = ("SUM_VALUES", "SUM_SQUARED_DEVIATIONS")
_SAME_FIGURES = " AND ".join(
    f"(P.{c} IS N.{c} OR abs(P.{c} - N.{c}) <= 1e-9 * (abs(N.{c}) + 1))" if c in _SUMS else f"P.{c} IS N.{c}"
    for c in (*ROW_COLUMNS, "NUM_ROWS", "ENGINE") if c not in ("BIT_VECTOR", "HISTOGRAM", "LENGTH_HISTOGRAM"))
def _same_cell(conn, t: str) -> str:
    """State Q is of the same cell (table or partition, column, engine) as state `t`, through the cell index."""
    return (f"Q.TBL_ID = {t}.TBL_ID AND Q.COLUMN_NAME = {t}.COLUMN_NAME AND "
            f"{conn.dialect.same_partition('Q.PART_NAME', f'{t}.PART_NAME')} AND Q.ENGINE = {t}.ENGINE")


def settle_history(conn, txn_id: int, sketches: int = DEFAULT_SKETCHES, since: int = 0) -> tuple[int, int]:
    """What a commit's states leave of the history, in the commit's SQLite transaction: a state equal to its
    cell's previous one is dropped, the previous one noting when it was confirmed; in the cells the commit
    touched, the states past the latest `sketches` lose their sketches, keeping their quartiles, decile
    edges and shares of them (drift checks against them stay what they were). Returns (dropped, thinned)."""
    states, args = commit_states(conn, "N", since, txn_id)
    candidates = conn.execute(
        f"SELECT N.HISTORY_ID, P.HISTORY_ID, N.RECORDED_AT, N.LAST_ANALYZED, N.COLUMN_TYPE, N.BIT_VECTOR, "
        f"P.BIT_VECTOR, N.HISTOGRAM, P.HISTOGRAM FROM COL_STATS_HISTORY N "
        f"JOIN COL_STATS_HISTORY P ON P.HISTORY_ID = (SELECT max(Q.HISTORY_ID) FROM COL_STATS_HISTORY Q WHERE "
        f"{_same_cell(conn, 'N')} AND Q.HISTORY_ID < N.HISTORY_ID) WHERE {states} "
        f"AND {_SAME_FIGURES}", args).fetchall()
    same = [r[:4] for r in candidates if _same_sketches(r[4], r[5], r[6], r[7], r[8])]
    # a statement per time (a commit's states share one or a few), not per state: one round trip on a server
    confirmed: dict[tuple[int, int], list[int]] = {}
    for _, previous, recorded, analyzed in same:
        confirmed.setdefault((recorded, analyzed), []).append(previous)
    for (recorded, analyzed), previous_ids in confirmed.items():
        conn.execute("UPDATE COL_STATS_HISTORY SET CONFIRMED_AT = ?, LAST_ANALYZED = ? WHERE HISTORY_ID IN "
                     "(SELECT CAST(value AS INTEGER) FROM json_each(?))", (recorded, analyzed, json.dumps(previous_ids)))
    if same:
        conn.execute("DELETE FROM COL_STATS_HISTORY WHERE HISTORY_ID IN (SELECT CAST(value AS INTEGER) FROM json_each(?))",
                     (json.dumps([new for new, *_ in same]),))
    # once every commit is settled, a cell holds at most `sketches` states with sketches before a commit, so the
    # one `sketches` back from each new state is the one to thin: a short walk back a state, not every older
    # state of every touched cell (a lowered setting thins the whole history at once: thin_history)
    old = conn.execute(
        f"SELECT T.HISTORY_ID, T.COLUMN_TYPE, T.HISTOGRAM, T.TBL_ID, T.COLUMN_NAME, T.PART_NAME, T.ENGINE "
        f"FROM COL_STATS_HISTORY N JOIN COL_STATS_HISTORY T ON T.HISTORY_ID = (SELECT Q.HISTORY_ID "
        f"FROM COL_STATS_HISTORY Q WHERE {_same_cell(conn, 'N')} AND Q.HISTORY_ID < N.HISTORY_ID "
        f"ORDER BY Q.HISTORY_ID DESC LIMIT 1 OFFSET ?) WHERE {states} "
        f"AND (T.BIT_VECTOR IS NOT NULL OR T.HISTOGRAM IS NOT NULL) ORDER BY T.HISTORY_ID",
        (max(1, sketches) - 1, *args)).fetchall()
    _drop_sketches(conn, old)
    return len(same), len(old)


def thin_history(conn, sketches: int) -> int:
    """Drops the sketches of every state past its cell's latest `sketches` (as settle_history does for the cells
    a commit touches), keeping what drift checks need of them; returns how many states were thinned."""
    old = conn.execute(
        f"SELECT H.HISTORY_ID, H.COLUMN_TYPE, H.HISTOGRAM, H.TBL_ID, H.COLUMN_NAME, H.PART_NAME, H.ENGINE "
        f"FROM COL_STATS_HISTORY H WHERE (H.BIT_VECTOR IS NOT NULL OR H.HISTOGRAM IS NOT NULL) "
        f"AND H.HISTORY_ID < (SELECT Q.HISTORY_ID FROM COL_STATS_HISTORY Q WHERE {_same_cell(conn, 'H')} "
        f"ORDER BY Q.HISTORY_ID DESC LIMIT 1 OFFSET ?) ORDER BY H.HISTORY_ID", (max(1, sketches) - 1,)).fetchall()
    _drop_sketches(conn, old)
    return len(old)


def _drop_sketches(conn, states: list) -> None:
    """Drops the sketches of `states` (oldest first, with their cells), each keeping its quartiles, decile
    edges, shares of them and its PSI against the state before it."""
    kept: dict[int, str | None] = {}  # what each state thinned here keeps (QUANTILES), its sketches gone
    for r in states:  # oldest first: a state's previous one is thinned (its bins kept) before it
        text = None
        if r["HISTOGRAM"] is not None:  # only a KLL sketch leaves figures to keep
            before = _previous_state(conn, r)
            previous = ({"HISTOGRAM": None, "QUANTILES": kept[before]} if before in kept else
                        conn.execute("SELECT HISTOGRAM, QUANTILES FROM COL_STATS_HISTORY WHERE HISTORY_ID = ?",
                                     (before,)).fetchone() if before is not None else None)
            text = _quantiles_text(r["HISTOGRAM"], r["COLUMN_TYPE"], previous)
        kept[r["HISTORY_ID"]] = text
    conn.dialect.update_rows(conn, "COL_STATS_HISTORY", ("HISTORY_ID", "BIT_VECTOR", "HISTOGRAM", "QUANTILES"),
                             ("HISTORY_ID",), [(history_id, None, None, text) for history_id, text in kept.items()])


def _previous_state(conn, state) -> int | None:
    """The id of the state kept before `state` in its cell (a row with HISTORY_ID and its cell's columns)."""
    return conn.execute("SELECT max(HISTORY_ID) FROM COL_STATS_HISTORY WHERE TBL_ID = ? AND COLUMN_NAME = ? "
                        f"AND {conn.dialect.same_partition('PART_NAME', '?')} AND ENGINE = ? AND HISTORY_ID < ?",
                        (state["TBL_ID"], state["COLUMN_NAME"], state["PART_NAME"], state["ENGINE"],
                         state["HISTORY_ID"])).fetchone()[0]


def _same_sketches(type_name: str, ndv_now: bytes | None, ndv_then: bytes | None, kll_now: bytes | None,
                   kll_then: bytes | None) -> bool:
    """Two states' sketches hold the same: HLL coupons or registers whatever the order values came in; a KLL
    sketch the same bytes, or (exact, before it compacts) the same values. An estimating KLL sketch of the
    same values differs from run to run (its compactions are random): such a state is kept again."""
    from ...column_statistics.quantiles import Distribution, compacted
    from ...column_statistics.sketches import same_sketch

    if not same_sketch(ndv_now, ndv_then):
        return False
    if kll_now == kll_then:
        return True
    if kll_now is None or kll_then is None or compacted(kll_now) or compacted(kll_then):
        return False  # told without loading them: a long's sketch is read a value at a time, through Python
    now, then = Distribution.of(kll_now, type_name), Distribution.of(kll_then, type_name)
    if now is None or then is None:
        return False
    exact_now, exact_then = now.exact_values(), then.exact_values()
    return exact_now is not None and exact_then is not None and sorted(exact_now) == sorted(exact_then)


def _quantiles_text(histogram: bytes | None, type_name: str, previous) -> str | None:
    """What a thinned state keeps of its KLL sketch: quartiles, the decile edges a PSI bins by, its own shares
    of those bins, and its PSI against the state before it (`previous`: its sketch, or what it kept of it)."""
    from ...column_statistics.drift import bin_edges, psi, shares, sketch_psi  # drift reads states of this module
    from ...column_statistics.quantiles import Distribution

    distribution = Distribution.of(histogram, type_name)
    if distribution is None or distribution.is_empty:
        return None
    edges = bin_edges(distribution)
    before = None
    if previous is not None and previous["HISTOGRAM"] is not None:
        before = sketch_psi(Distribution.of(previous["HISTOGRAM"], type_name), distribution)
    elif previous is not None and previous["QUANTILES"]:
        kept = json.loads(previous["QUANTILES"])
        before = psi(kept["shares"], shares(distribution, kept["edges"]))
    return json.dumps({"quartiles": distribution.quartiles(), "edges": edges, "shares": shares(distribution, edges),
                       "psi_before": before})


def history_bytes(conn) -> int:
    """About how many bytes the kept states take: their sketches and texts, and a row's overhead each."""
    return int(conn.execute(
        "SELECT COALESCE(sum(COALESCE(length(BIT_VECTOR), 0) + COALESCE(length(HISTOGRAM), 0) + "
        "COALESCE(length(TOP_VALUES), 0) + COALESCE(length(QUANTILES), 0) + COALESCE(length(LOW_VALUE), 0) + "
        f"COALESCE(length(HIGH_VALUE), 0) + {STATE_OVERHEAD_BYTES}), 0) FROM COL_STATS_HISTORY").fetchone()[0])


def bound_history(conn, max_bytes: int) -> int:
    """Drops the oldest states (never a cell's latest) until the kept ones take at most `max_bytes`, about;
    returns how many went."""
    over = history_bytes(conn) - max_bytes
    if over <= 0:
        return 0
    dropped = 0
    rows = conn.execute(
        "SELECT HISTORY_ID, COALESCE(length(BIT_VECTOR), 0) + COALESCE(length(HISTOGRAM), 0) + "
        "COALESCE(length(TOP_VALUES), 0) + COALESCE(length(QUANTILES), 0) + COALESCE(length(LOW_VALUE), 0) + "
        f"COALESCE(length(HIGH_VALUE), 0) + {STATE_OVERHEAD_BYTES} FROM COL_STATS_HISTORY H WHERE EXISTS "
        f"(SELECT 1 FROM COL_STATS_HISTORY Q WHERE {_same_cell(conn, 'H')} AND Q.HISTORY_ID > H.HISTORY_ID) "
        "ORDER BY HISTORY_ID")
    doomed = []
    for history_id, size in rows:
        if over <= 0:
            break
        doomed.append((history_id,))
        over -= size
        dropped += 1
    conn.executemany("DELETE FROM COL_STATS_HISTORY WHERE HISTORY_ID = ?", doomed)
    return dropped


def read_history(conn, tbl_id: int, column: str | None, part_name: str | None | bool = False,
                 engine: str = HIVE) -> list[tuple[str | None, StatsState]]:
    """(owner, state) pairs of the kept states, oldest first: of one column (every column with None), of
    one owner (the table level with None; every owner with False)."""
    where, args = ["TBL_ID = ?", "ENGINE = ?"], [tbl_id, engine]
    if column is not None:
        where.append("COLUMN_NAME = ?")
        args.append(column.lower())
    if part_name is not False:
        where.append(conn.dialect.same_partition("PART_NAME", "?"))
        args.append(part_name)
    rows = conn.execute(_SELECT + "WHERE " + " AND ".join(where) + " ORDER BY HISTORY_ID", args).fetchall()
    return [(r["PART_NAME"], _state(r)) for r in rows]


def _state(r) -> StatsState:
    return StatsState(r["HISTORY_ID"], row_to_obj(r), r["NUM_ROWS"], r["TXN_ID"], r["WRITE_ID"], r["CAUSE"],
                      r["RECORDED_AT"], r["LAST_ANALYZED"], TopValues.from_json(r["TOP_VALUES"]),
                      json.loads(r["QUANTILES"]) if r["QUANTILES"] else None, r["CONFIRMED_AT"])


def read_states_up_to(conn, tbl_id: int, column: str, part_name: str | None, engine: str, history_id: int,
                      count: int) -> list[StatsState]:
    """The last `count` kept states of one cell stored at or before `history_id`, newest first: a state and
    the ones before it without reading the cell's whole history."""
    rows = conn.execute(_SELECT + "WHERE TBL_ID = ? AND COLUMN_NAME = ? AND "
                        f"{conn.dialect.same_partition('PART_NAME', '?')} AND ENGINE = ? AND "
                        "HISTORY_ID <= ? ORDER BY HISTORY_ID DESC LIMIT ?",
                        (tbl_id, column.lower(), part_name, engine, history_id, count)).fetchall()
    return [_state(r) for r in rows]


def read_latest_states(conn, tbl_id: int, column: str, limit: int, engine: str = HIVE
                       ) -> list[tuple[str | None, StatsState]]:
    """(partition, state) pairs of the latest kept state of a column in each of the last `limit` partitions
    by name, in name order."""
    rows = conn.execute(
        _SELECT + "WHERE HISTORY_ID IN (SELECT max(HISTORY_ID) FROM COL_STATS_HISTORY WHERE TBL_ID = ? AND "
        "COLUMN_NAME = ? AND ENGINE = ? AND PART_NAME IS NOT NULL GROUP BY PART_NAME ORDER BY PART_NAME DESC "
        "LIMIT ?) ORDER BY PART_NAME", (tbl_id, column.lower(), engine, limit)).fetchall()
    return [(r["PART_NAME"], _state(r)) for r in rows]


def prune_history(conn, keep: int) -> int:
    """Keeps the last `keep` states of every cell; returns how many were removed."""
    return conn.execute(
        "DELETE FROM COL_STATS_HISTORY WHERE HISTORY_ID IN (SELECT HISTORY_ID FROM (SELECT HISTORY_ID, "
        "row_number() OVER (PARTITION BY TBL_ID, PART_NAME, COLUMN_NAME, ENGINE ORDER BY HISTORY_ID DESC) AS N "
        "FROM COL_STATS_HISTORY) R WHERE N > ?)", (keep,)).rowcount


def state_picker(moment) -> Callable[[list[StatsState]], StatsState | None]:
    """A function picking, of a cell's states (oldest first), the one in force at `moment`: the latest when
    None; for a write ID (an int) the last stored by that write or an earlier one; for a time (datetime, or
    ISO text; UTC when naive) the last stored by then. Raises InvalidInputException naming anything else."""
    if moment is None:
        return lambda states: states[-1] if states else None
    if isinstance(moment, bool) or not isinstance(moment, (int, str, dt.datetime)):
        raise InvalidInputException(f"then/now is a write ID (an int) or a time (datetime or ISO text), "
                                    f"not {moment!r}")
    if isinstance(moment, int):
        return lambda states: next((s for s in reversed(states) if s.write_id is not None and s.write_id <= moment),
                                   None)
    if isinstance(moment, str):
        try:
            moment = dt.datetime.fromisoformat(moment)
        except ValueError:
            raise InvalidInputException(f"then/now {moment!r} is not an ISO time such as 2026-11-24T09:00") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    seconds = moment.timestamp()
    return lambda states: next((s for s in reversed(states) if s.recorded_at <= seconds), None)


class StatesKept(Protocol):
    """What runs on the states a commit kept (`txn_id`'s, those after `since`) or on states given more figures
    (`history_ids`), in their transaction: the expectations' rules, handed over by the Metastore so this module
    never imports what builds on it. Returns how many rules it evaluated."""

    def __call__(self, conn: Any, txn_id: int | None, history_ids: list[int] | None = None,
                 since: int = 0) -> int: ...


class HistoryRepository(Repository):
    """The metastore's calls over the statistics history (a repository of the Metastore)."""

    def __init__(self, db: Database, settings: MetastoreSettings, catalog: CatalogRepository,
                 on_states_kept: StatesKept) -> None:
        super().__init__(db, settings)
        self.catalog = catalog
        self.on_states_kept = on_states_kept

    def get_stats_history(self, db_name: str, table_name: str, col_name: str | None = None,
                          part_name: str | None | bool = None, engine: str = HIVE
                          ) -> list[tuple[str | None, StatsState]]:
        """(owner, state) pairs of every kept state of a column's statistics (every column's with None), oldest
        first: at the table level (part_name None), in one partition, or everywhere (part_name False).
        Raises NoSuchObjectException naming an unknown table, partition or column."""
        with self.snapshot() as conn:
            table = self.catalog.get_table(db_name, table_name)
            if col_name is not None:
                hive_rows.require_columns(table, [col_name])
            if isinstance(part_name, str):
                self.catalog.get_partition(db_name, table_name, part_name)
            tbl_id = hive_rows.table_row(self.db, table.dbName, table.tableName)["TBL_ID"]
            return read_history(conn, tbl_id, col_name, part_name, engine)

    def get_latest_partition_states(self, db_name: str, table_name: str, col_name: str, limit: int = 365
                                    ) -> list[tuple[str | None, StatsState]]:
        """(partition, state) pairs: the latest kept state of a column's statistics in each of the last
        `limit` partitions by name, in name order. Raises NoSuchObjectException naming an unknown table or
        column, InvalidInputException for a limit that is not a positive whole number."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInputException(f"limit takes a whole number of at least 1, not {limit!r}")
        with self.snapshot() as conn:
            table = self.catalog.get_table(db_name, table_name)
            hive_rows.require_columns(table, [col_name])
            tbl_id = hive_rows.table_row(self.db, table.dbName, table.tableName)["TBL_ID"]
            return read_latest_states(conn, tbl_id, col_name, limit)

    def keep_top_values(self, db_name: str, table_name: str, col_name: str, counted: dict[str | None, TopValues],
                        snapshot: ValidWriteIdList) -> list[str | None]:
        """Keeps the top values a skew report counted over `snapshot`, per owner (None: the table level), on
        the owner's latest statistics state of the column when that state describes the same rows and its
        writer is in the snapshot (the caller has judged the statistics accurate for it: a commit since then
        stored a newer state, which keeps none); returns the owners they were kept for. One transaction."""
        kept = []
        with self.transaction() as conn:
            tbl_id = hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"]
            for owner, top in counted.items():
                latest = conn.execute(
                    "SELECT HISTORY_ID, NUM_ROWS, WRITE_ID FROM COL_STATS_HISTORY WHERE TBL_ID = ? AND COLUMN_NAME = ? "
                    f"AND {conn.dialect.same_partition('PART_NAME', '?')} AND ENGINE = ? ORDER BY HISTORY_ID DESC LIMIT 1",
                    (tbl_id, col_name.lower(), owner, HIVE)).fetchone()
                if latest is not None and latest["NUM_ROWS"] == top.rows and (
                        latest["WRITE_ID"] is None or snapshot.is_write_id_valid(latest["WRITE_ID"])):
                    conn.execute("UPDATE COL_STATS_HISTORY SET TOP_VALUES = ? WHERE HISTORY_ID = ?",
                                 (top.to_json(), latest["HISTORY_ID"]))
                    kept.append((owner, latest["HISTORY_ID"]))
            if kept and conn.execute("SELECT 1 FROM STATS_EXPECTATIONS WHERE TBL_ID = ? AND COLUMN_NAME = ?",
                                     (tbl_id, col_name.lower())).fetchone():
                self.on_states_kept(conn, None, [history_id for _, history_id in kept])  # a PSI is measurable now
        return [owner for owner, _ in kept]

    def prune_stats_history(self, keep: int = DEFAULT_KEEP, max_bytes: int | None = None) -> int:
        """Keeps the last `keep` states of every (owner, column) in every table and, with `max_bytes`, drops
        the oldest states until the history takes about that many bytes at most (a cell's latest state
        stays); compacts the file when any went (VACUUM: the space returns to the disk). Returns how many
        went."""
        with self.transaction() as conn:
            gone = prune_history(conn, keep)
            if max_bytes is not None:
                gone += bound_history(conn, max_bytes)
        if gone:
            self.db.compact()
        return gone

    def thin_stats_history(self, sketches: int) -> int:
        """Keeps sketches only in each cell's latest `sketches` states (colstats.history.sketches lowered: the
        states past it are thinned at once, as each commit thins those of the cells it touches)."""
        with self.transaction() as conn:
            return thin_history(conn, sketches)

    def history_bytes(self) -> int:
        """About how many bytes the kept states of every table's statistics history take."""
        with self.snapshot() as conn:
            return history_bytes(conn)
