"""The statistics segments of a partitioned table as a repository: each column's partition statistics merged
into segments of 64 partitions, and of 64 segments above them (`segments.py` builds and reads them), kept fresh
as partitions change; what the column statistics, their accuracy and the catalog's partition count read when a
table has many partitions (a few rows at any number of them)."""
from __future__ import annotations

from ...column_statistics.merge import merge_partitions, merge_segments
from ..db import WouldWait
from ..rows import hive_rows, segments
from .repository import Repository


class SegmentRepository(Repository):
    """The segments' calls: re-merged where stale, read as each column's top segments or as the partitions'
    COLUMN_STATS_ACCURATE groups."""

    def segment_statistics(self, db_name: str, table_name: str, col_names: list[str], merge: segments.Merge,
                           merge_partitions: segments.MergePartitions, engine: str = "hive"
                           ) -> dict[str, list[segments.SegmentStats]]:
        """Each column's partition statistics as the merges of its top segments, after re-merging the
        segments that partition changes left stale (one write transaction; see metastore.segments)."""
        with self.transaction() as conn:
            tbl_id = hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"]
            segments.refresh(conn, tbl_id, merge, merge_partitions, self.settings.segment_bits)
            return segments.top_segments(conn, tbl_id, col_names, engine)

    def refresh_segments(self, db_name: str, table_name: str) -> None:
        """Re-merges the segments a change of partitions left stale (a short write transaction); inside a
        read snapshot, which cannot write, on a metastore opened read-only, or while another writer holds the
        lock (a reader never waits for one), nothing: readers then judge from the partitions."""

        if self.db.reading_only or self.db.read_only:
            return
        with self.snapshot() as conn:
            tbl_id = hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"]
            if not conn.execute("SELECT 1 FROM STALE_STATS_SEGMENTS WHERE TBL_ID = ? LIMIT 1", (tbl_id,)).fetchone():
                return
        try:
            with self.db.without_waiting():
                self.segment_statistics(db_name, table_name, [], merge_segments, merge_partitions)
        except WouldWait:
            return

    def partition_state(self, db_name: str, table_name: str) -> list[segments.StateGroup] | None:
        """The table's partitions grouped by their COLUMN_STATS_ACCURATE text, from the segments (a few
        rows at any number of partitions); None while some partition's change is not merged yet."""
        self.refresh_segments(db_name, table_name)
        with self.snapshot() as conn:
            return segments.table_state(conn, hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"])
