"""Statistics over time: every state of a (table or partition, column)'s statistics, as the schema's
triggers keep them in COL_STATS_HISTORY when each is stored (migration 10). This module reads them,
completes the states a commit stored with the rows they describe, and keeps the last N per cell.

A REFRESH METADATA's figures (Drill's units, which no trigger sees: they are replaced wholesale) are kept
here too, as states of engine DRILL: the TABLE unit's and each partition's, the finer units (files, row
groups) being the metadata's working detail rather than what a person watches.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from .exceptions import InvalidInputException
from .model import ColumnStatisticsObj
from .stats_rows import ROW_COLUMNS, figures_to_values, row_to_obj

if TYPE_CHECKING:
    from .table_metadata import MetadataUnit
    from .txn import ValidWriteIdList

DEFAULT_KEEP = 100  # colstats.history.keep: states kept per (owner, column) by lab.clean()
HIVE, DRILL = "hive", "drill"  # the engines of kept states: statistics (ANALYZE, writes), REFRESH METADATA
SOURCES = {"statistics": HIVE, "metadata": DRILL}  # how lab.history and lab.compare name them


def engine_of(source: str) -> str:
    """The engine of the states a source names; raises InvalidInputException naming an unknown one."""
    if source not in SOURCES:
        raise InvalidInputException(f"source {source!r} is not one of {', '.join(SOURCES)} (the statistics of "
                                    "ANALYZE and writes, or the metadata of REFRESH METADATA)")
    return SOURCES[source]


@dataclass(frozen=True)
class TopValues:
    """The most frequent non-null values a skew report counted on the rows a state describes: each value
    as text with its count, most frequent first; the rows and nulls it counted; its mode (exact, or
    approx: each count within 2 * rows / max_items) and k."""

    values: tuple[tuple[str, int], ...]
    rows: int
    nulls: int
    mode: str
    k: int

    @property
    def shares(self) -> dict[str, float]:
        """Each value's share of the non-null values."""
        present = self.rows - self.nulls
        return {value: count / present for value, count in self.values} if present > 0 else {}

    def to_json(self) -> str:
        return json.dumps({"values": [list(v) for v in self.values], "rows": self.rows, "nulls": self.nulls,
                           "mode": self.mode, "k": self.k})

    @classmethod
    def from_json(cls, text: str | None) -> "TopValues | None":
        if text is None:
            return None
        kept = json.loads(text)
        return cls(tuple((str(v), int(c)) for v, c in kept["values"]), kept["rows"], kept["nulls"], kept["mode"],
                   kept["k"])


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


def record_history_rows(conn, txn_id: int) -> None:
    """Gives the statistics states commit `txn_id` stored the rows their owners hold once its changes are
    applied (the triggers fire before a write's numRows lands), inside the commit's SQLite transaction; a
    DRILL state keeps the rows its unit counted."""
    conn.execute(
        "UPDATE COL_STATS_HISTORY SET NUM_ROWS = COALESCE(CASE WHEN PART_NAME IS NULL THEN "
        "(SELECT CAST(PARAM_VALUE AS INTEGER) FROM TABLE_PARAMS TP WHERE TP.TBL_ID = COL_STATS_HISTORY.TBL_ID "
        " AND TP.PARAM_KEY = 'numRows') ELSE "
        "(SELECT CAST(PP.PARAM_VALUE AS INTEGER) FROM PARTITIONS P JOIN PARTITION_PARAMS PP ON PP.PART_ID = P.PART_ID "
        " AND PP.PARAM_KEY = 'numRows' WHERE P.TBL_ID = COL_STATS_HISTORY.TBL_ID "
        " AND P.PART_NAME = COL_STATS_HISTORY.PART_NAME) END, NUM_ROWS) WHERE TXN_ID = ? AND ENGINE = ?",
        (txn_id, HIVE))


def record_metadata_history(conn, tbl_id: int, units: list["MetadataUnit"], analyzed_at: int) -> None:
    """Keeps, as DRILL states, the column figures of the TABLE unit and of each partition's unit (a PARTITION
    unit, else the SEGMENT of the partition's whole path) a REFRESH METADATA stored, with the commit that
    stored them (STATS_HISTORY_CONTEXT) and the rows each unit counted."""
    owners: dict[str | None, MetadataUnit] = {}
    for unit in units:
        if unit.type == "TABLE":
            owners[None] = unit
        elif unit.type in ("PARTITION", "SEGMENT") and unit.part_name is not None:
            owners.setdefault(unit.part_name, unit)
    context = conn.execute("SELECT C.TXN_ID, C.CAUSE, (SELECT T2W_WRITEID FROM TXN_TO_WRITE_ID W JOIN TBLS T "
                           "ON T.TBL_ID = ? JOIN DBS D ON D.DB_ID = T.DB_ID WHERE W.T2W_TXNID = C.TXN_ID "
                           "AND W.T2W_DATABASE = D.NAME AND W.T2W_TABLE = T.TBL_NAME) "
                           "FROM (SELECT 1) LEFT JOIN STATS_HISTORY_CONTEXT C ON C.ID = 1", (tbl_id,)).fetchone()
    recorded_at = int(dt.datetime.now(dt.timezone.utc).timestamp())
    placeholders = ", ".join("?" * (len(ROW_COLUMNS) + 9))
    conn.executemany(
        f"INSERT INTO COL_STATS_HISTORY (TBL_ID, PART_NAME, ENGINE, {', '.join(ROW_COLUMNS)}, LAST_ANALYZED, "
        f"NUM_ROWS, TXN_ID, WRITE_ID, CAUSE, RECORDED_AT) VALUES ({placeholders})",
        [(tbl_id, part_name, DRILL, *figures_to_values(column.as_statistics()), analyzed_at, unit.rows,
          context[0], context[2], context[1], recorded_at)
         for part_name, unit in owners.items() for column in unit.columns.values()])


_SELECT = (f"SELECT PART_NAME, HISTORY_ID, {', '.join(ROW_COLUMNS)}, NUM_ROWS, TXN_ID, WRITE_ID, CAUSE, "
           "RECORDED_AT, LAST_ANALYZED, TOP_VALUES FROM COL_STATS_HISTORY ")


def read_history(conn, tbl_id: int, column: str | None, part_name: str | None | bool = False,
                 engine: str = HIVE) -> list[tuple[str | None, StatsState]]:
    """(owner, state) pairs of the kept states, oldest first: of one column (every column with None), of
    one owner (the table level with None; every owner with False)."""
    where, args = ["TBL_ID = ?", "ENGINE = ?"], [tbl_id, engine]
    if column is not None:
        where.append("COLUMN_NAME = ?")
        args.append(column.lower())
    if part_name is not False:
        where.append("PART_NAME IS ?")
        args.append(part_name)
    rows = conn.execute(_SELECT + "WHERE " + " AND ".join(where) + " ORDER BY HISTORY_ID", args).fetchall()
    return [(r["PART_NAME"], _state(r)) for r in rows]


def _state(r) -> StatsState:
    return StatsState(r["HISTORY_ID"], row_to_obj(r), r["NUM_ROWS"], r["TXN_ID"], r["WRITE_ID"], r["CAUSE"],
                      r["RECORDED_AT"], r["LAST_ANALYZED"], TopValues.from_json(r["TOP_VALUES"]))


def read_states_up_to(conn, tbl_id: int, column: str, part_name: str | None, engine: str, history_id: int,
                      count: int) -> list[StatsState]:
    """The last `count` kept states of one cell stored at or before `history_id`, newest first: a state and
    the ones before it without reading the cell's whole history."""
    rows = conn.execute(_SELECT + "WHERE TBL_ID = ? AND COLUMN_NAME = ? AND PART_NAME IS ? AND ENGINE = ? AND "
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
        "FROM COL_STATS_HISTORY) WHERE N > ?)", (keep,)).rowcount


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
        moment = moment.replace(tzinfo=dt.timezone.utc)
    seconds = moment.timestamp()
    return lambda states: next((s for s in reversed(states) if s.recorded_at <= seconds), None)


class HistoryAPI:
    """The metastore's calls over the statistics history (a mixin of Metastore)."""

    def get_stats_history(self, db_name: str, table_name: str, col_name: str | None = None,
                          part_name: str | None | bool = None, engine: str = HIVE
                          ) -> list[tuple[str | None, StatsState]]:
        """(owner, state) pairs of every kept state of a column's statistics (every column's with None), oldest
        first: at the table level (part_name None), in one partition, or everywhere (part_name False).
        Raises NoSuchObjectException naming an unknown table, partition or column."""
        with self.snapshot() as conn:
            table = self.get_table(db_name, table_name)
            if col_name is not None:
                self._check_columns_exist(table, [col_name])
            if isinstance(part_name, str):
                self.get_partition(db_name, table_name, part_name)
            tbl_id = self._table_row(table.dbName, table.tableName)["TBL_ID"]
            return read_history(conn, tbl_id, col_name, part_name, engine)

    def get_latest_partition_states(self, db_name: str, table_name: str, col_name: str, limit: int = 365
                                    ) -> list[tuple[str | None, StatsState]]:
        """(partition, state) pairs: the latest kept state of a column's statistics in each of the last
        `limit` partitions by name, in name order. Raises NoSuchObjectException naming an unknown table or
        column, InvalidInputException for a limit that is not a positive whole number."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInputException(f"limit takes a whole number of at least 1, not {limit!r}")
        with self.snapshot() as conn:
            table = self.get_table(db_name, table_name)
            self._check_columns_exist(table, [col_name])
            tbl_id = self._table_row(table.dbName, table.tableName)["TBL_ID"]
            return read_latest_states(conn, tbl_id, col_name, limit)

    def keep_top_values(self, db_name: str, table_name: str, col_name: str, counted: dict[str | None, TopValues],
                        snapshot: "ValidWriteIdList") -> list[str | None]:
        """Keeps the top values a skew report counted over `snapshot`, per owner (None: the table level), on
        the owner's latest statistics state of the column when that state describes the same rows and its
        writer is in the snapshot (the caller has judged the statistics accurate for it: a commit since then
        stored a newer state, which keeps none); returns the owners they were kept for. One transaction."""
        kept = []
        with self.transaction() as conn:
            tbl_id = self._table_row(db_name, table_name)["TBL_ID"]
            for owner, top in counted.items():
                latest = conn.execute(
                    "SELECT HISTORY_ID, NUM_ROWS, WRITE_ID FROM COL_STATS_HISTORY WHERE TBL_ID = ? AND "
                    "COLUMN_NAME = ? AND PART_NAME IS ? AND ENGINE = ? ORDER BY HISTORY_ID DESC LIMIT 1",
                    (tbl_id, col_name.lower(), owner, HIVE)).fetchone()
                if latest is not None and latest["NUM_ROWS"] == top.rows and (
                        latest["WRITE_ID"] is None or snapshot.is_write_id_valid(latest["WRITE_ID"])):
                    conn.execute("UPDATE COL_STATS_HISTORY SET TOP_VALUES = ? WHERE HISTORY_ID = ?",
                                 (top.to_json(), latest["HISTORY_ID"]))
                    kept.append((owner, latest["HISTORY_ID"]))
            if kept and conn.execute("SELECT 1 FROM STATS_EXPECTATIONS WHERE TBL_ID = ? AND COLUMN_NAME = ?",
                                     (tbl_id, col_name.lower())).fetchone():
                from .expectations import evaluate_commit  # imported here: expectations builds on this module
                evaluate_commit(conn, None, [history_id for _, history_id in kept])  # a PSI is measurable now
        return [owner for owner, _ in kept]

    def prune_stats_history(self, keep: int = DEFAULT_KEEP) -> int:
        """Keeps the last `keep` states of every (owner, column) in every table; returns how many went."""
        with self.transaction() as conn:
            return prune_history(conn, keep)
