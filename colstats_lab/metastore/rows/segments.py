"""Partition statistics merged per segment of partitions (PART_STATS_SEGMENTS), and what the
partitions of each segment are for judging accuracy (PART_STATE_SEGMENTS): the only reader and writer
of those tables and of STALE_STATS_SEGMENTS, whose rows the schema's triggers add.

A segment of level L covers the partitions whose PART_ID lies in [index << bits*L,
(index + 1) << bits*L). Refreshing re-merges the stale level-1 segments from their partitions and
then, level by level, the segments above them from the level below, so a change of k partitions
costs O(k · FANOUT · LEVELS) merges whatever the table's size. The merging itself is the caller's
(`stats.merge`): this module moves `SegmentStats` in and out of rows.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...coltypes import StatsKind, parse_type
from ...column_statistics.merge import SegmentStats
from ...column_statistics.stats_rows import StatsColumn, row_moments, text_to_value, value_to_text
from .column_stats_accurate import PARAM as _ACCURATE

if TYPE_CHECKING:
    from ..db import Database

BITS = 6  # 64 partitions (or segments) a segment
LEVELS = 3  # 64 ** 3 = 262,144 partition IDs under a top segment; the table level merges the top ones


_SEGMENT_COLUMNS = ("COLUMN_TYPE", "NUM_PARTS", "NUM_ROWS", "NUM_NULLS", "LOW_VALUE", "HIGH_VALUE", "BIT_VECTOR",
                    "ALL_SKETCHED", "MAX_NUM_DISTINCTS", "TOTAL_COL_LEN", "MAX_COL_LEN", "NUM_TRUES", "NUM_FALSES",
                    "HISTOGRAM", "NUM_NANS", "SUM_VALUES", "SUM_SQUARED_DEVIATIONS", "NUM_ZEROS", "LENGTH_HISTOGRAM")

# the statistics rows of one column in partitions, as StatsColumn.from_rows reads them
PARTITION_STATS_SELECT = (
    "SELECT S.COLUMN_NAME, S.COLUMN_TYPE, COALESCE(S.NUM_VALUES, CAST(COALESCE(PP.PARAM_VALUE, '0') AS INTEGER)), "
    "S.NUM_NULLS, "
    "S.LOW_VALUE, COALESCE(S.LOW_VALUE_MICROS, S.LONG_LOW_VALUE), S.HIGH_VALUE, "
    "COALESCE(S.HIGH_VALUE_MICROS, S.LONG_HIGH_VALUE), S.NUM_DISTINCTS, S.BIT_VECTOR, "
    "S.AVG_COL_LEN, S.MAX_COL_LEN, S.NUM_TRUES, S.NUM_FALSES, S.PART_NAME, S.HISTOGRAM, S.NUM_VALUES IS NOT NULL, "
    "S.NUM_NANS, S.SUM_VALUES, S.SUM_SQUARED_DEVIATIONS, S.NUM_ZEROS, S.LENGTH_HISTOGRAM "
    "FROM PART_COL_STATS S "
    "LEFT JOIN PARTITION_PARAMS PP ON PP.PART_ID = S.PART_ID AND PP.PARAM_KEY = 'numRows' ")


def _to_row(stats: SegmentStats) -> tuple:
    return (stats.col_type, stats.parts, stats.rows, stats.nulls, value_to_text(stats.kind, stats.low),
            value_to_text(stats.kind, stats.high), stats.sketch, int(stats.all_sketched), stats.max_ndv,
            stats.total_len, stats.max_len, stats.trues, stats.falses, stats.histogram, stats.nans,
            *((stats.moments.sumValues, stats.moments.sumSquaredDeviations, stats.moments.zeros) if stats.moments
              else (None, None, None)), stats.lengths)


def _from_row(row) -> SegmentStats:
    kind = parse_type(row["COLUMN_TYPE"]).stored_stats_kind
    ranged = kind not in (StatsKind.STRING, StatsKind.BINARY, StatsKind.BOOLEAN, StatsKind.STRUCT)
    decode = (lambda text: text_to_value(kind, text)) if ranged else (lambda text: None)
    return SegmentStats(row["COLUMN_TYPE"], kind, row["NUM_PARTS"], row["NUM_ROWS"], row["NUM_NULLS"],
                        decode(row["LOW_VALUE"]), decode(row["HIGH_VALUE"]), row["BIT_VECTOR"],
                        bool(row["ALL_SKETCHED"]), row["MAX_NUM_DISTINCTS"], row["TOTAL_COL_LEN"],
                        row["MAX_COL_LEN"], row["NUM_TRUES"], row["NUM_FALSES"], row["HISTOGRAM"], row["NUM_NANS"],
                        row_moments(row["SUM_VALUES"], row["SUM_SQUARED_DEVIATIONS"], row["NUM_ZEROS"]),
                        row["LENGTH_HISTOGRAM"])


@dataclass
class StateGroup:
    """The partitions of a segment (or of the table) that hold one COLUMN_STATS_ACCURATE text ('' when
    absent): how many, the range of their writers' IDs, and the first by name with its writer."""

    flags: str
    parts: int
    min_write_id: int
    max_write_id: int
    first_name: str
    first_write_id: int


def _merged_groups(groups: Iterable[StateGroup]) -> dict[str, StateGroup]:
    out: dict[str, StateGroup] = {}
    for group in groups:
        seen = out.get(group.flags)
        if seen is None:
            out[group.flags] = StateGroup(**vars(group))
            continue
        seen.parts += group.parts
        seen.min_write_id = min(seen.min_write_id, group.min_write_id)
        seen.max_write_id = max(seen.max_write_id, group.max_write_id)
        if group.first_name < seen.first_name:
            seen.first_name, seen.first_write_id = group.first_name, group.first_write_id
    return out


_STATE_COLUMNS = "FLAGS, NUM_PARTS, MIN_WRITE_ID, MAX_WRITE_ID, FIRST_NAME, FIRST_WRITE_ID"


def _state_leaf(conn: Database, tbl_id: int, low: int, high: int) -> Iterable[StateGroup]:
    for flags, write_id, name in conn.execute(
            "SELECT COALESCE(PP.PARAM_VALUE, ''), P.WRITE_ID, P.PART_NAME FROM PARTITIONS P "
            f"LEFT JOIN PARTITION_PARAMS PP ON PP.PART_ID = P.PART_ID AND PP.PARAM_KEY = '{_ACCURATE}' "
            "WHERE P.PART_ID >= ? AND P.PART_ID < ? AND +P.TBL_ID = ?", (low, high, tbl_id)):
        yield StateGroup(flags, 1, write_id, write_id, name, write_id)


def _state_children(conn: Database, tbl_id: int, level: int, low: int, high: int
                    ) -> Iterable[StateGroup]:
    for row in conn.execute(f"SELECT {_STATE_COLUMNS} FROM PART_STATE_SEGMENTS WHERE TBL_ID = ? AND SEG_LEVEL = ? "
                            "AND SEG_INDEX >= ? AND SEG_INDEX < ?", (tbl_id, level, low, high)):
        yield StateGroup(*row)


def _replace_state(conn: Database, tbl_id: int, level: int, index: int, groups: Iterable[StateGroup]) -> None:
    conn.execute("DELETE FROM PART_STATE_SEGMENTS WHERE TBL_ID = ? AND SEG_LEVEL = ? AND SEG_INDEX = ?",
                 (tbl_id, level, index))
    conn.executemany(f"INSERT INTO PART_STATE_SEGMENTS (TBL_ID, SEG_LEVEL, SEG_INDEX, {_STATE_COLUMNS}) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     [(tbl_id, level, index, *vars(g).values()) for g in _merged_groups(groups).values()])


def table_state(conn: Database, tbl_id: int) -> list[StateGroup] | None:
    """The table's partitions grouped by COLUMN_STATS_ACCURATE text, from the top segments; None while
    any of its partitions is stale (the caller reads the partitions instead, or refreshes first)."""
    if conn.execute("SELECT 1 FROM STALE_STATS_SEGMENTS WHERE TBL_ID = ? LIMIT 1", (tbl_id,)).fetchone():
        return None
    return list(_merged_groups(_state_children(conn, tbl_id, LEVELS, 0, 2 ** 62)).values())


Key = tuple[str, str]  # (column name, engine)
Merge = Callable[[list[SegmentStats]], SegmentStats]
MergePartitions = Callable[[StatsColumn], SegmentStats]


def mark_stale(conn: Database, tbl_id: int, part_ids: Iterable[int]) -> None:
    """Marks partitions whose statistics were inserted stale (the schema's triggers mark every other change)."""
    # WHERE true: SQLite would read the ON of the upsert as a join's
    conn.execute("INSERT INTO STALE_STATS_SEGMENTS (TBL_ID, PART_ID) SELECT ?, CAST(value AS INTEGER) "
                 "FROM json_each(?) WHERE true ON CONFLICT DO NOTHING", (tbl_id, json.dumps(sorted(set(part_ids)))))


def refresh(conn: Database, tbl_id: int, merge: Merge, merge_partitions: MergePartitions,
            bits: int = BITS) -> bool:
    """Re-merges the segments above the table's stale partitions, bottom-up, inside the caller's write
    transaction; returns whether anything was stale. `bits` must stay the same for a metastore file."""
    stale = {r[0] >> bits for r in conn.execute("SELECT PART_ID FROM STALE_STATS_SEGMENTS WHERE TBL_ID = ?",
                                                (tbl_id,))}
    if not stale:
        return False
    for leaf in stale:
        low, high = leaf << bits, (leaf + 1) << bits
        by_key: dict[Key, list[tuple]] = {}
        for row in conn.execute(
                # the leaf's PART_ID range through the primary key, not every partition of the table
                "SELECT S.ENGINE, " + PARTITION_STATS_SELECT.removeprefix("SELECT ")
                + "JOIN PARTITIONS P ON P.PART_ID = S.PART_ID "
                "WHERE P.PART_ID >= ? AND P.PART_ID < ? AND +P.TBL_ID = ? ORDER BY S.PART_NAME", (low, high, tbl_id)):
            by_key.setdefault((row[1], row[0]), []).append(tuple(row)[1:])
        _replace(conn, tbl_id, 1, leaf, {key: merge_partitions(StatsColumn.from_rows(rows))
                                         for key, rows in by_key.items()})
        _replace_state(conn, tbl_id, 1, leaf, _state_leaf(conn, tbl_id, low, high))
    indexes = set(stale)
    for level in range(2, LEVELS + 1):
        indexes = {i >> bits for i in indexes}
        for index in indexes:
            children: dict[Key, list[SegmentStats]] = {}
            for row in conn.execute(
                    f"SELECT COLUMN_NAME, ENGINE, {', '.join(_SEGMENT_COLUMNS)} FROM PART_STATS_SEGMENTS "
                    "WHERE TBL_ID = ? AND SEG_LEVEL = ? AND SEG_INDEX >= ? AND SEG_INDEX < ? ORDER BY SEG_INDEX",
                    (tbl_id, level - 1, index << bits, (index + 1) << bits)):
                children.setdefault((row["COLUMN_NAME"], row["ENGINE"]), []).append(_from_row(row))
            _replace(conn, tbl_id, level, index, {key: merge(parts) for key, parts in children.items()})
            _replace_state(conn, tbl_id, level, index,
                           _state_children(conn, tbl_id, level - 1, index << bits, (index + 1) << bits))
    conn.execute("DELETE FROM STALE_STATS_SEGMENTS WHERE TBL_ID = ?", (tbl_id,))
    return True


def top_segments(conn: Database, tbl_id: int, col_names: Iterable[str], engine: str
                 ) -> dict[str, list[SegmentStats]]:
    """The top-level segments of each of `col_names` that has statistics in any partition."""
    out: dict[str, list[SegmentStats]] = {}
    for row in conn.execute(
            f"SELECT COLUMN_NAME, {', '.join(_SEGMENT_COLUMNS)} FROM PART_STATS_SEGMENTS "
            "WHERE TBL_ID = ? AND SEG_LEVEL = ? AND ENGINE = ? AND COLUMN_NAME IN (SELECT value FROM json_each(?)) "
            "ORDER BY SEG_INDEX", (tbl_id, LEVELS, engine, _json([c.lower() for c in col_names]))):
        out.setdefault(row["COLUMN_NAME"], []).append(_from_row(row))
    return out


def _replace(conn: Database, tbl_id: int, level: int, index: int, merged: dict[Key, SegmentStats]) -> None:
    conn.execute("DELETE FROM PART_STATS_SEGMENTS WHERE TBL_ID = ? AND SEG_LEVEL = ? AND SEG_INDEX = ?",
                 (tbl_id, level, index))
    conn.executemany(
        f"INSERT INTO PART_STATS_SEGMENTS (TBL_ID, SEG_LEVEL, SEG_INDEX, COLUMN_NAME, ENGINE, "
        f"{', '.join(_SEGMENT_COLUMNS)}) VALUES ({', '.join('?' * (5 + len(_SEGMENT_COLUMNS)))})",
        [(tbl_id, level, index, name, engine, *_to_row(stats)) for (name, engine), stats in merged.items()])


def _json(items) -> str:
    return json.dumps(list(items))
