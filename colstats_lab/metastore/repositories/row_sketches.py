"""Sketches of whole rows (ROW_SKETCHES): per partition, or for an unpartitioned table, an HLL sketch of each row's
hash, from which a profile reads the table's distinct and duplicate rows with no scan."""
from __future__ import annotations

from dataclasses import dataclass

from ..rows import hive_rows
from ..rows.hive_rows import json_list
from .repository import Repository


@dataclass(frozen=True)
class RowSketch:
    """One owner's row sketch: the compact HLL of its rows' hashes, the rows it counted, and the owner's write ID
    when it was made (a later write leaves it describing other rows)."""

    sketch: bytes
    rows: int
    write_id: int
    analyzed_at: int


class RowSketchRepository(Repository):
    """The row sketches of tables and partitions: the Metastore's row-sketch calls. A repository of the Metastore
    (store.py)."""

    def set_row_sketches(self, db_name: str, table_name: str, sketches: dict[str | None, RowSketch]) -> None:
        """Keeps each owner's sketch (partition name, or None for an unpartitioned table) in place of its last."""
        with self.transaction() as conn:
            tbl_id = hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"]
            for part_name, kept in sketches.items():
                part_id = None if part_name is None else hive_rows.part_id(self.db, db_name, table_name, part_name)
                conn.execute("DELETE FROM ROW_SKETCHES WHERE TBL_ID = ? AND PART_ID IS ?", (tbl_id, part_id))
                conn.execute("INSERT INTO ROW_SKETCHES (TBL_ID, PART_ID, SKETCH, NUM_ROWS, WRITE_ID, LAST_ANALYZED) "
                             "VALUES (?, ?, ?, ?, ?, ?)",
                             (tbl_id, part_id, kept.sketch, kept.rows, kept.write_id, kept.analyzed_at))

    def carry_row_sketches(self, db_name: str, table_name: str, write_ids: dict[str | None, tuple[int, int]]) -> None:
        """Moves each owner's sketch from its write ID before a command that changed no row (an ANALYZE) to the one
        after, (before, after) per owner; a sketch of an older write ID stays behind, describing other rows."""
        with self.transaction() as conn:
            tbl_id = hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"]
            for part_name, (before, after) in write_ids.items():
                part_id = None if part_name is None else hive_rows.part_id(self.db, db_name, table_name, part_name)
                conn.execute("UPDATE ROW_SKETCHES SET WRITE_ID = ? WHERE TBL_ID = ? AND PART_ID IS ? AND WRITE_ID = ?",
                             (after, tbl_id, part_id, before))

    def get_row_sketches(self, db_name: str, table_name: str, part_names: list[str] | None = None
                         ) -> dict[str | None, RowSketch]:
        """The row sketches that still describe their owner's rows (no write since they were made: the owner's
        write ID is the sketch's), by partition name (of `part_names`, or every one), or under None an
        unpartitioned table's. Whether the owner's statistics are accurate for a reader is the caller's to check."""
        with self.snapshot() as conn:
            tbl_id = hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"]
            chosen = "" if part_names is None else " AND P.PART_NAME IN (SELECT value FROM json_each(?))"
            rows = conn.execute(
                "SELECT P.PART_NAME, R.SKETCH, R.NUM_ROWS, R.WRITE_ID, R.LAST_ANALYZED FROM ROW_SKETCHES R "
                "JOIN TBLS T ON T.TBL_ID = R.TBL_ID LEFT JOIN PARTITIONS P ON P.PART_ID = R.PART_ID "
                f"WHERE R.TBL_ID = ? AND R.WRITE_ID = COALESCE(P.WRITE_ID, T.WRITE_ID){chosen}",
                (tbl_id, *([] if part_names is None else [json_list(part_names)]))).fetchall()
        return {r[0]: RowSketch(bytes(r[1]), r[2], r[3], r[4]) for r in rows}
