"""Whether stored statistics are accurate for a reader (HIVE-19416's reader rule: write IDs for
managed tables, the files as analyzed for external ones), and the files each ANALYZE of an external
table read (ANALYZED_FILES)."""
from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ...column_statistics.model import Table
from ...files import FileState, describe_changes, file_changes
from ...storage import storage_for
from ..db import Database
from ..rows import hive_rows
from ..rows.column_stats_accurate import PARAM as ACCURATE_PARAM
from ..rows.column_stats_accurate import StatsAccuracy
from ..rows.hive_rows import NO_FILES, is_transactional
from ..rows.write_ids import ValidWriteIdList
from ..settings import MetastoreSettings
from .catalog import CatalogRepository
from .repository import Repository
from .snapshot_files import SnapshotFilesRepository, describe_snapshot_changes, is_snapshot_table, unfollowed_commit
from .stats_segments import SegmentRepository
from .transactions import TxnRepository


@dataclass
class ComplianceSummary:
    """Whether statistics are accurate for a reader, over many owners: how many were judged, how many
    are not accurate, and the first of those (by name) with the reason."""

    owners: int
    not_accurate: int = 0
    first: tuple[str | None, str] | None = None

    @property
    def accurate(self) -> bool:
        """Accurate for every owner judged (and there was one)."""
        return self.owners > 0 and self.not_accurate == 0


class StatsAccuracyRepository(Repository):
    """Accuracy of stored statistics for a reader, and the files external tables' statistics came from. A repository of
    the Metastore (store.py)."""

    def __init__(self, db: Database, settings: MetastoreSettings, catalog: CatalogRepository, txns: TxnRepository,
                 snapshot_files: SnapshotFilesRepository, segments: SegmentRepository) -> None:
        super().__init__(db, settings)
        self.catalog = catalog
        self.txns = txns
        self.snapshot_files = snapshot_files
        self.segments = segments

    # ---- stats accuracy -----------------------------------------------------------------

    def stats_compliance(self, db_name: str, table_name: str, col_names: list[str],
                         valid_write_ids: ValidWriteIdList | None = None,
                         part_names: list[str] | None = None) -> dict[str | None, tuple[bool, str]]:
        """Whether the basic statistics and those of `col_names` are accurate for a reader with
        `valid_write_ids` (default: the current snapshot), with the reason when not. Keyed by
        partition name (all or `part_names`), or None for an unpartitioned table. Nothing is
        written: a read never changes the stored state (HIVE-19416's reader rule)."""
        judged = self.per_column_compliance(db_name, table_name, [col_names], valid_write_ids, part_names)
        return {owner: verdicts[0] for owner, verdicts in judged.items()}

    def per_column_compliance(self, db_name: str, table_name: str, column_sets: list[list[str]],
                              valid_write_ids: ValidWriteIdList | None = None,
                              part_names: list[str] | None = None) -> dict[str | None, list[tuple[bool, str]]]:
        """stats_compliance for each set of columns, from one reading of the owners (and one listing of an
        external table's files): per owner, one (accurate, reason) for each set, in order."""
        with self.snapshot():
            table = self.catalog.get_table(db_name, table_name)
            valid = valid_write_ids or self.txns.get_valid_write_ids(db_name, table_name)
            owners, changed = self._owners_and_changes(table, part_names)
            what = "partition" if table.is_partitioned else "table"
            # owners with the same flags, writer and file changes are judged alike: judged once each
            judged: dict[tuple, list[tuple[bool, str]]] = {}
            out = {}
            for name, params, write_id, _ in owners:
                key = (params.get(ACCURATE_PARAM), write_id, changed.get(name))
                if key not in judged:
                    judged[key] = [self.compliance(table, params, write_id, what, columns, valid, changed.get(name))
                                   for columns in column_sets]
                out[name] = judged[key]
            return out

    def stats_compliance_summary(self, db_name: str, table_name: str, col_names: list[str],
                                 valid_write_ids: ValidWriteIdList | None = None,
                                 part_names: list[str] | None = None) -> ComplianceSummary:
        """stats_compliance in brief: how many owners (partitions, or the table) are judged, how many are
        not accurate and the first of those with its reason."""
        return self.column_compliance(db_name, table_name, [col_names], valid_write_ids, part_names)[0]

    def column_compliance(self, db_name: str, table_name: str, column_sets: list[list[str]],
                          valid_write_ids: ValidWriteIdList | None = None,
                          part_names: list[str] | None = None) -> list[ComplianceSummary]:
        """stats_compliance in brief for each set of columns, from one reading of the owners (see
        _owner_groups)."""
        self.segments.refresh_segments(db_name, table_name)
        with self.snapshot():
            table = self.catalog.get_table(db_name, table_name)
            valid = valid_write_ids or self.txns.get_valid_write_ids(db_name, table_name)
            groups, what = self._owner_groups(table, part_names, valid)
            return [self._summary(table, groups, what, columns, valid) for columns in column_sets]

    def _summary(self, table: Table, groups: list[tuple], what: str, columns: list[str],
                 valid: ValidWriteIdList) -> ComplianceSummary:
        summary = ComplianceSummary(sum(g[2] for g in groups))
        for params, write_id, count, sample, files_changed in groups:
            ok, why = self.compliance(table, params, write_id, what, columns, valid, files_changed)
            if not ok:
                summary.not_accurate += count
                if summary.first is None or (sample or "") < (summary.first[0] or ""):
                    summary.first = (sample, why)
        return summary

    def summary_and_flags(self, db_name: str, table_name: str, col_names: list[str]
                          ) -> tuple[ComplianceSummary, StatsAccuracy]:
        """stats_compliance_summary and partitions_accuracy of a partitioned table for a reader now, from one reading
        of its owners: an external table's files are listed once (DESCRIBE of a column says both)."""
        self.segments.refresh_segments(db_name, table_name)
        with self.snapshot():
            table = self.catalog.get_table(db_name, table_name)
            valid = self.txns.get_valid_write_ids(db_name, table_name)
            groups, what = self._owner_groups(table, None, valid)
            return self._summary(table, groups, what, col_names, valid), self._flags(table, groups, what, valid)

    def partitions_accuracy(self, db_name: str, table_name: str,
                            valid_write_ids: ValidWriteIdList | None = None) -> StatsAccuracy:
        """The flags that hold in every partition of a partitioned table for a reader with `valid_write_ids`
        (default: now): Hive keeps them on the partitions."""
        self.segments.refresh_segments(db_name, table_name)
        with self.snapshot():
            table = self.catalog.get_table(db_name, table_name)
            valid = valid_write_ids or self.txns.get_valid_write_ids(db_name, table_name)
            groups, what = self._owner_groups(table, None, valid)
            return self._flags(table, groups, what, valid)

    def _flags(self, table: Table, groups: list[tuple], what: str, valid: ValidWriteIdList) -> StatsAccuracy:
        held = [StatsAccuracy.parse(params.get(ACCURATE_PARAM))
                if self.compliance(table, params, write_id, what, [], valid, files_changed)[0] else StatsAccuracy()
                for params, write_id, _, _, files_changed in groups]
        if not held:
            return StatsAccuracy()
        return StatsAccuracy(all(h.basic for h in held), set.intersection(*(h.columns for h in held)))

    def _owner_groups(self, table: Table, part_names: list[str] | None,
                      valid: ValidWriteIdList) -> tuple[list[tuple], str]:
        """The owners of the table's statistics (its partitions, all or `part_names`, or the table) as
        groups judged alike: (params, writer, how many, first name, why its files changed). A managed
        table's partitions group by distinct (flags, writer): all of them come from the segments'
        summary when it is fresh and every writer in it is visible to `valid` (a few rows whatever the
        number of partitions), else from one grouped query; an external table's are one a group, each
        needing a listing of its files."""
        if table.is_partitioned and table.tableType != "EXTERNAL_TABLE" and part_names is None:
            state = self.segments.partition_state(table.dbName, table.tableName)
            if state is not None and all(valid.are_all_valid(g.min_write_id, g.max_write_id) for g in state):
                return [({} if not g.flags else {ACCURATE_PARAM: g.flags}, g.first_write_id, g.parts, g.first_name,
                         None) for g in state], "partition"
        if table.is_partitioned and table.tableType != "EXTERNAL_TABLE":
            sql = ("SELECT PP.PARAM_VALUE, P.WRITE_ID, count(*), min(P.PART_NAME) FROM PARTITIONS P "
                   "LEFT JOIN PARTITION_PARAMS PP ON PP.PART_ID = P.PART_ID AND PP.PARAM_KEY = ? WHERE P.TBL_ID = ?")
            args: list = [ACCURATE_PARAM, hive_rows.table_row(self.db, table.dbName, table.tableName)["TBL_ID"]]
            if part_names is not None:
                sql += " AND P.PART_NAME IN (SELECT value FROM json_each(?))"
                args.append(json.dumps(list(part_names)))
            return [({} if text is None else {ACCURATE_PARAM: text}, write_id, count, sample, None)
                    for text, write_id, count, sample in self.db.execute(sql + " GROUP BY 1, 2", args)], "partition"
        owners, changed = self._owners_and_changes(table, part_names)
        return ([(params, write_id, 1, name, changed.get(name)) for name, params, write_id, _ in owners],
                "partition" if table.is_partitioned else "table")

    def _owners_and_changes(self, table: Table, part_names: list[str] | None
                            ) -> tuple[list[tuple], dict[str | None, str]]:
        """The owners of the table's statistics, each (name, parameters, write ID, location): its partitions (every
        one, or those named) or the table itself; and what changed in each one's files since they were analyzed
        (an external table's; one listing of the whole table when every partition is asked for)."""
        if table.is_partitioned:
            owners = self._partition_owners(table, part_names)
        else:
            owners = [(None, table.parameters, table.writeId, table.location)]
        changed = self.external_file_changes(table, {name: location for name, _, _, location in owners},
                                             every_partition=table.is_partitioned and part_names is None)
        return owners, changed

    def _partition_owners(self, table: Table, part_names: list[str] | None) -> list[tuple]:
        """(name, params, writer, location) of the table's partitions, all or `part_names`, in name order,
        with only the accuracy parameter: one query, no Partition objects."""
        sql = ("SELECT P.PART_NAME, PP.PARAM_VALUE, P.WRITE_ID, S.LOCATION FROM PARTITIONS P "
               "LEFT JOIN SDS S ON S.SD_ID = P.SD_ID "
               "LEFT JOIN PARTITION_PARAMS PP ON PP.PART_ID = P.PART_ID AND PP.PARAM_KEY = ? WHERE P.TBL_ID = ?")
        args: list = [ACCURATE_PARAM, hive_rows.table_row(self.db, table.dbName, table.tableName)["TBL_ID"]]
        if part_names is not None:
            sql += " AND P.PART_NAME IN (SELECT value FROM json_each(?))"
            args.append(json.dumps(list(part_names)))
        shared: dict[str | None, dict] = {}  # one dict a distinct flags text, read only: 10,000 partitions share few
        return [(name, shared.get(text) or shared.setdefault(text, {} if text is None else {ACCURATE_PARAM: text}),
                 write_id, location)
                for name, text, write_id, location in self.db.execute(sql + " ORDER BY P.PART_NAME", args)]

    def strip_for_reader(self, table: Table, owners: list[tuple], valid: ValidWriteIdList) -> None:
        """Removes COLUMN_STATS_ACCURATE from the parameters of `owners` (partition name or None, parameters,
        write ID, location) whose statistics are not accurate for a reader with `valid`: Hive strips the flag
        rather than showing it. The catalog's rule for a reader (`CatalogRepository.reader_rule`)."""
        changed = self.external_file_changes(table, {name: location for name, _, _, location in owners})
        for name, params, write_id, _ in owners:
            if not self.compliance(table, params, write_id, "", [], valid, changed.get(name))[0]:
                params.pop(ACCURATE_PARAM, None)

    def compliance(self, table: Table, params: dict, write_id: int, what: str, col_names: list[str],
                    valid: ValidWriteIdList, files_changed: str | None = None) -> tuple[bool, str]:
        if files_changed and StatsAccuracy.parse(params.get(ACCURATE_PARAM)).basic:
            return False, files_changed
        transactional = is_transactional(table)
        if transactional and not self.settings.txn_stats_enabled:
            return False, "transactional statistics are turned off (hive.txn.stats.enabled=false)"
        flags = StatsAccuracy.parse(params.get(ACCURATE_PARAM))
        if not flags.basic:
            return False, (f"{what} changed by write {write_id} and its statistics were not kept accurate"
                           if write_id else f"{what} statistics were never computed")
        missing = [c for c in col_names if c.lower() not in flags.columns]
        if missing:
            return False, f"{what} changed by write {write_id} after the last analyze of {', '.join(missing)}"
        if transactional and not valid.is_write_id_valid(write_id):
            return False, f"written by write {write_id}, not visible in your snapshot ({valid})"
        return True, ""

    # ---- the files an external table's statistics were computed from ---------------------

    def record_analyzed_files(self, db_name: str, table_name: str,
                              files: dict[str | None, list[FileState]]) -> None:
        """Keeps the files an ANALYZE read, per partition name (None: an unpartitioned table), in place
        of those of the previous one."""
        with self.transaction() as conn:
            tbl_id = hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"]
            for part_name, states in files.items():
                part_id = None if part_name is None else hive_rows.part_id(self.db, db_name, table_name, part_name)
                conn.execute("DELETE FROM ANALYZED_FILES WHERE TBL_ID = ? AND PART_ID IS ?", (tbl_id, part_id))
                # an owner analyzed with no files keeps one row with an empty path, so that it reads as
                # "analyzed empty", not "never recorded"
                conn.executemany(
                    "INSERT INTO ANALYZED_FILES (TBL_ID, PART_ID, FILE_PATH, FILE_SIZE, MODIFIED_MS, ETAG) "
                    "VALUES (?, ?, ?, ?, ?, ?)", [(tbl_id, part_id, path, size, *_token_columns(token))
                                                  for path, size, token in states or [NO_FILES]])

    def external_file_changes(self, table: Table, locations: dict[str | None, str],
                              every_partition: bool = False) -> dict[str | None, str]:
        """For an external table: the owners (partition name or None, with their directory) whose files
        are no longer those their statistics were computed from, with the reason. Other tables' files
        change only through the lab's writes, which write IDs track: for them this is empty."""
        if table.tableType != "EXTERNAL_TABLE" or not locations:
            return {}
        with _no_collection_while(len(locations) > 1000):
            return self._external_file_changes(table, locations, every_partition)

    def _external_file_changes(self, table: Table, locations: dict[str | None, str],
                               every_partition: bool) -> dict[str | None, str]:
        with self.snapshot() as conn:
            tbl_id = hive_rows.table_row(self.db, table.dbName, table.tableName)["TBL_ID"]
            seen: dict[str | None, set[FileState]] = {}
            if table.is_partitioned and every_partition:  # `locations` holds them all
                sql = ("SELECT P.PART_NAME, F.FILE_PATH, F.FILE_SIZE, F.ETAG, F.MODIFIED_MS FROM PARTITIONS P "
                       "JOIN ANALYZED_FILES F ON F.PART_ID = P.PART_ID WHERE P.TBL_ID = ?")
                args: tuple = (tbl_id,)
            elif table.is_partitioned:  # the named partitions' files only: one day of 100,000 reads one
                sql = ("SELECT P.PART_NAME, F.FILE_PATH, F.FILE_SIZE, F.ETAG, F.MODIFIED_MS FROM PARTITIONS P "
                       "JOIN ANALYZED_FILES F ON F.PART_ID = P.PART_ID WHERE P.TBL_ID = ? "
                       "AND P.PART_NAME IN (SELECT value FROM json_each(?))")
                args = (tbl_id, json.dumps([name for name in locations if name is not None]))
            else:
                sql = ("SELECT NULL AS PART_NAME, FILE_PATH, FILE_SIZE, ETAG, MODIFIED_MS FROM ANALYZED_FILES "
                       "WHERE TBL_ID = ? AND PART_ID IS NULL")
                args = (tbl_id,)
            for name, path, size, etag, modified in conn.execute(sql, args):
                files = seen.setdefault(name, set())
                if path:  # an object store's file is known by its ETag, a local one by its modification time
                    files.add((path, size, modified if etag is None else etag))
        out = {}
        snapshot = is_snapshot_table(table)
        for name, now in self.snapshot_files.owner_file_states(table, locations).items():
            before = seen.get(name)
            if not now and not snapshot and locations.get(name) and not storage_for(locations[name]).is_dir(locations[name]):
                out[name] = f"its folder {locations[name]} no longer exists"
            elif before is None:
                out[name] = "the files it was analyzed from were not recorded: ANALYZE it again"
            elif before != now:
                out[name] = (describe_snapshot_changes(table, name, before, now) if snapshot
                             else describe_changes(*file_changes(before, now)))
        moved = unfollowed_commit(table) if snapshot else None
        if moved:
            out = {name: out.get(name) or moved for name in locations}
        return out


@contextmanager
def _no_collection_while(bulk: bool) -> Iterator[None]:
    """Python's garbage collector held off while a freshness check builds a set of file states a partition:
    at 10,000 partitions those short-lived containers set off a full collection of the process's objects
    (Spark's and pandas' among them) on nearly every check, 65 ms of its 205. It runs as usual afterwards."""
    paused = bulk and gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _token_columns(token: int | str) -> tuple[int, str | None]:
    """(MODIFIED_MS, ETAG) of a file state's token: an object store's ETag in ETAG, else the time (or the
    snapshot that added a table format's file) in MODIFIED_MS."""
    return (0, token) if isinstance(token, str) else (token, None)
