"""The data files of an Iceberg or Delta table's current snapshot, per partition, as its source last recorded
them (SNAPSHOT_FILES): what a reader of that snapshot reads, and what the freshness rule compares the files
an ANALYZE read with. A directory listing cannot stand in for them: a table format's directories also hold
the files of older snapshots (an overwrite or a copy-on-write delete leaves the files it replaced)."""
from __future__ import annotations

import hashlib
import json
import re

from ...column_statistics.model import Table
from ...errors import StorageError
from ...files import VECTOR_MARK, ColumnFigures, DataFile, FileKeys, FileState
from ...storage import files_by_location, is_local, join, name_of, parent, states_by_location, storage_for
from ..db import Database
from ..rows import hive_rows
from ..rows.metadata_units import decode_value, encode_value
from ..settings import MetastoreSettings
from .catalog import CatalogRepository
from .repository import Repository

FORMAT_PARAM = "colstats.source.format"      # "iceberg" or "delta": the table's files are its snapshot's
SNAPSHOT_PARAM = "colstats.source.snapshot"  # the snapshot id (Delta: log version) the recorded files are of
LOG_STATISTICS_PARAM = "colstats.source.logStatistics"  # Delta: JSON {column: files whose log entry has figures}
# Delta: JSON of the rules that say which columns the log keeps figures of (indexed columns, stats columns, the
# columns in stats order) and liquid clustering's columns
LOG_RULES_PARAM = "colstats.source.logRules"
OPERATIONS_PARAM = "colstats.source.operations"  # JSON {version: operation}: Delta's commits that deleted rows
METADATA_PARAM = "colstats.source.metadata"  # an Iceberg catalog's table: the metadata file followed
FIELD_IDS_PARAM = "colstats.source.fieldIds"  # JSON {column: field id, or physical path}: how files name a column
SNAPSHOT_FORMATS = ("iceberg", "delta")


def is_snapshot_table(table: Table) -> bool:
    """A table whose files are those of a table format's snapshot, not those its directories hold."""
    return table.parameters.get(FORMAT_PARAM) in SNAPSHOT_FORMATS


def unfollowed_commit(table: Table) -> str | None:
    """Why the snapshot the lab follows may no longer be the table's, told from the file system alone (the
    lab follows a table whenever a command uses it; a reader of the metastore only, such as the dashboard's
    landing, relies on this): Delta's log has the next version, or Iceberg's metadata folder holds a newer
    metadata file than the one followed. None when neither shows."""
    fmt, followed = table.parameters.get(FORMAT_PARAM), table.parameters.get(SNAPSHOT_PARAM) or ""
    if fmt == "delta" and followed.isdigit():
        following = join(table.location, "_delta_log", f"{int(followed) + 1:020d}.json")
        if storage_for(following).exists(following):
            return f"the Delta log has versions after {followed}, not followed yet: use the table through the lab"
    metadata = table.parameters.get(METADATA_PARAM)
    if fmt == "iceberg" and metadata:
        number = _metadata_number(name_of(metadata))
        folder = parent(metadata)
        try:
            names = storage_for(folder).child_names(folder)
        except (OSError, StorageError):
            return f"the table's metadata folder {folder} cannot be read"
        if number is not None and any((_metadata_number(n) or -1) > number for n in names):
            return (f"the table has commits after snapshot {followed}, not followed yet: use the table through "
                    "the lab")
    return None


def _metadata_number(name: str) -> int | None:
    """The version in an Iceberg metadata file's name: `00007-<uuid>.metadata.json` or `v7.metadata.json`."""
    match = re.match(r"^v?(\d+)[-.].*\.metadata\.json$", name)
    return int(match.group(1)) if match else None


def field_ids_of(table: Table) -> dict[str, int]:
    """The field id of each column of the table by which its files are read (empty for tables whose files name
    their columns)."""
    return {name: key for name, key in file_keys_of(table).items() if isinstance(key, int)}


def file_keys_of(table: Table) -> FileKeys:
    """How the table's files name each column and struct leaf (by the lab's name): its field id (Iceberg, Delta's
    column mapping in id mode), or the path of physical names it is read by (Delta's name mode, whose files may
    predate field ids); empty for tables whose files name their columns as the table does."""
    return {name: key if isinstance(key, int) else tuple(key)
            for name, key in json.loads(table.parameters.get(FIELD_IDS_PARAM) or "{}").items()}


def snapshot_word(table: Table) -> str:
    return "version" if table.parameters.get(FORMAT_PARAM) == "delta" else "snapshot"


def describe_snapshot_changes(table: Table, owner: str | None, before: set[FileState], now: set[FileState]) -> str:
    """Why an owner's statistics no longer describe the snapshot, naming the snapshots that changed its files:
    "snapshot 8123 appended 2 files to ds=2026-01-02 after the last analyze"."""
    word, where = snapshot_word(table), owner or "the table"
    vectors_before = {path for path, *_ in before if VECTOR_MARK in path}
    new_vectors: dict[int, int] = {}  # a Delta DELETE, UPDATE or MERGE's deletion vectors, by the version adding them
    for path, _, added_in in now:
        if VECTOR_MARK in path and path not in vectors_before:
            new_vectors[int(added_in)] = new_vectors.get(int(added_in), 0) + 1
    before = {state for state in before if VECTOR_MARK not in state[0]}
    now = {state for state in now if VECTOR_MARK not in state[0]}
    before_paths, now_by_path = {path for path, *_ in before}, {path: added for path, _, added in now}
    if new_vectors and before_paths == now_by_path.keys():  # rows deleted, every file left in place
        operations = json.loads(table.parameters.get(OPERATIONS_PARAM) or "{}")
        said = "; ".join(f"{word} {added_in}{_operation(operations.get(str(added_in)))} deleted rows of "
                         f"{_files(count)} by deletion vectors" for added_in, count in sorted(new_vectors.items()))
        return f"{said} in {where} after the last analyze"
    added: dict[int, int] = {}
    for path, added_in in now_by_path.items():
        if path not in before_paths:
            added[int(added_in)] = added.get(int(added_in), 0) + 1  # a table format's token: its snapshot
    removed = len(before_paths - now_by_path.keys())
    if not added and not removed:
        return f"the files of {where} were rewritten after the last analyze"
    if not removed:
        said = "; ".join(f"{word} {added_in} appended {_files(count)}" for added_in, count in sorted(added.items()))
        return f"{said} to {where} after the last analyze"
    current = table.parameters.get(SNAPSHOT_PARAM, "?")
    if set(added) <= {int(current) if current.lstrip("-").isdigit() else None}:
        # one commit replaced files (an overwrite, a copy-on-write delete or update)
        written = f", wrote {_files(sum(added.values()))}" if added else ""
        return f"{word} {current} removed {_files(removed)}{written} in {where} after the last analyze"
    said = "; ".join(f"{word} {added_in} added {_files(count)}" for added_in, count in sorted(added.items()))
    gone = f"{_files(removed)} removed by {word} {current} or an earlier one"
    return f"{said + ' and ' if said else ''}{gone} in {where} after the last analyze"


def _operation(name: str | None) -> str:
    """ " (a MERGE)": the commit's operation as its writer named it, where the log says."""
    return f" (a {name})" if name else ""


def _figures_text(figures: dict[str, ColumnFigures] | None, types: dict[str, str]) -> str | None:
    if figures is None:
        return None
    return json.dumps({name: [f.nulls, encode_value(f.low, types[name]), encode_value(f.high, types[name]), f.exact]
                       for name, f in figures.items() if name in types})


def _figures_of(text: str | None, types: dict[str, str]) -> dict[str, ColumnFigures] | None:
    """The figures recorded of a file, of the table's columns as they are now."""
    if text is None:
        return None
    return {name: ColumnFigures(nulls, decode_value(low, types[name]), decode_value(high, types[name]), bool(exact))
            for name, (nulls, low, high, exact) in json.loads(text).items() if name in types}


def _files(count: int) -> str:
    return f"{count} file{'s' * (count != 1)}"


class SnapshotFilesRepository(Repository):
    """The files of snapshot tables' partitions. A repository of the Metastore (store.py)."""

    def __init__(self, db: Database, settings: MetastoreSettings, catalog: CatalogRepository) -> None:
        super().__init__(db, settings)
        self.catalog = catalog

    def replace_snapshot_files(self, table: Table, files: dict[str | None, list[DataFile]]) -> None:
        """Records the snapshot's files of the owners in `files` (partition name, or None for an unpartitioned
        table) in place of those recorded before, with the figures the format keeps of each."""
        db_name, table_name = table.dbName, table.tableName
        types = {c.name: c.type for c in table.cols}
        with self.transaction() as conn:
            tbl_id = hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"]
            for part_name, data_files in files.items():
                part_id = None if part_name is None else hive_rows.part_id(self.db, db_name, table_name, part_name)
                conn.execute("DELETE FROM SNAPSHOT_FILES WHERE TBL_ID = ? AND PART_ID IS ?", (tbl_id, part_id))
                conn.executemany(
                    "INSERT INTO SNAPSHOT_FILES (TBL_ID, PART_ID, FILE_PATH, FILE_SIZE, ADDED_IN, RECORD_COUNT, CONTENT, "
                    "FIGURES, SEQUENCE_NUMBER, EQUALITY_IDS) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(tbl_id, part_id, f.path, f.size, f.added_in or 0, f.record_count, f.content,
                      _figures_text(f.figures, types), f.sequence_number,
                      json.dumps(list(f.equality_ids)) if f.equality_ids else None) for f in data_files])

    def snapshot_file_states(self, db_name: str, table_name: str) -> dict[str | None, set[FileState]]:
        """Every owner's recorded files as (path, bytes, added in), for a source to tell what a commit changed."""
        with self.snapshot() as conn:
            tbl_id = hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"]
            out: dict[str | None, set[FileState]] = {}
            for name, path, size, added_in in conn.execute(
                    "SELECT P.PART_NAME, F.FILE_PATH, F.FILE_SIZE, F.ADDED_IN FROM SNAPSHOT_FILES F "
                    "LEFT JOIN PARTITIONS P ON P.PART_ID = F.PART_ID WHERE F.TBL_ID = ?", (tbl_id,)):
                out.setdefault(name, set()).add((path, size, added_in))
            return out

    def owner_file_states(self, table: Table, locations: dict[str | None, str]) -> dict[str | None, set[FileState]]:
        """The states of `owner_files`: a directory's straight from its listing (no DataFile a file)."""
        if not is_snapshot_table(table):
            return states_by_location(locations, table.location, self._directories_under(table, locations))
        return {name: {f.state for f in files} for name, files in self.owner_files(table, locations).items()}

    def _directories_under(self, table: Table, locations: dict[str | None, str]) -> int | None:
        """How many partitions a flat listing of an object store's table would take in (a count a metastore
        query); None for a local table, whose directories are listed each anyway."""
        if is_local(table.location) or not table.is_partitioned or len(locations) < 2:
            return None
        return self.catalog.count_partitions(table.dbName, table.tableName)

    def owner_files(self, table: Table, locations: dict[str | None, str]) -> dict[str | None, list[DataFile]]:
        """The data files a reader of the table now sees in each owner of `locations` (partition name or None,
        with its directory): a snapshot table's as its snapshot lists them (its position-delete files among
        them, `content` 1, and equality-delete files, 3), others' as their directories hold them."""
        if not is_snapshot_table(table):
            return files_by_location(locations, table.location, self._directories_under(table, locations))
        out: dict[str | None, list[DataFile]] = {name: [] for name in locations}
        with self.snapshot() as conn:
            tbl_id = hive_rows.table_row(self.db, table.dbName, table.tableName)["TBL_ID"]
            if table.is_partitioned:
                sql = ("SELECT P.PART_NAME, F.FILE_PATH, F.FILE_SIZE, F.ADDED_IN, F.RECORD_COUNT, F.CONTENT, "
                       "F.FIGURES, F.SEQUENCE_NUMBER, F.EQUALITY_IDS FROM PARTITIONS P "
                       "JOIN SNAPSHOT_FILES F ON F.PART_ID = P.PART_ID WHERE P.TBL_ID = ? "
                       "AND P.PART_NAME IN (SELECT value FROM json_each(?)) ORDER BY F.FILE_PATH")
                args: tuple = (tbl_id, json.dumps([name for name in locations if name is not None]))
            else:
                sql = ("SELECT NULL, FILE_PATH, FILE_SIZE, ADDED_IN, RECORD_COUNT, CONTENT, FIGURES, SEQUENCE_NUMBER, "
                       "EQUALITY_IDS FROM SNAPSHOT_FILES "
                       "WHERE TBL_ID = ? AND PART_ID IS NULL ORDER BY FILE_PATH")
                args = (tbl_id,)
            types = {c.name: c.type for c in table.cols}
            for name, path, size, added_in, records, content, figures, sequence, equality in conn.execute(sql, args):
                out.setdefault(name, []).append(DataFile(
                    path, size, 0.0, added_in, records, content, _figures_of(figures, types),
                    sequence_number=sequence, equality_ids=tuple(json.loads(equality)) if equality else ()))
        return out

    # ---- theta sketches for Puffin ------------------------------------------------------

    def files_digest(self, table: Table, owners: list[str | None]) -> dict[str | None, str]:
        """A digest of each owner's snapshot files (their paths, sizes and adding snapshots): what a theta
        sketch of the owner was computed from."""
        files = self.owner_files(table, dict.fromkeys(owners, ""))
        return {owner: hashlib.sha1(json.dumps(sorted(f.state for f in files.get(owner, []))).encode()).hexdigest()
                for owner in owners}

    def theta_sketches(self, table: Table) -> dict[tuple[str | None, str], tuple[str, bytes]]:
        """Every stored theta sketch of the table: (owner, column) -> (files digest, sketch)."""
        with self.snapshot() as conn:
            tbl_id = hive_rows.table_row(self.db, table.dbName, table.tableName)["TBL_ID"]
            return {(name, column): (digest, bytes(sketch)) for name, column, digest, sketch in conn.execute(
                "SELECT P.PART_NAME, T.COLUMN_NAME, T.FILES_DIGEST, T.SKETCH FROM THETA_SKETCHES T "
                "LEFT JOIN PARTITIONS P ON P.PART_ID = T.PART_ID WHERE T.TBL_ID = ?", (tbl_id,))}

    def store_theta_sketches(self, table: Table, sketches: dict[tuple[str | None, str], tuple[str, bytes]]) -> None:
        """Keeps the theta sketches given, in place of those of the same owner and column."""
        with self.transaction() as conn:
            tbl_id = hive_rows.table_row(self.db, table.dbName, table.tableName)["TBL_ID"]
            for (owner, column), (digest, sketch) in sketches.items():
                part_id = None if owner is None else hive_rows.part_id(self.db, table.dbName, table.tableName, owner)
                conn.execute("DELETE FROM THETA_SKETCHES WHERE TBL_ID = ? AND PART_ID IS ? AND COLUMN_NAME = ?",
                             (tbl_id, part_id, column))
                conn.execute("INSERT INTO THETA_SKETCHES (TBL_ID, PART_ID, COLUMN_NAME, FILES_DIGEST, SKETCH) "
                             "VALUES (?, ?, ?, ?, ?)", (tbl_id, part_id, column, digest, sketch))
