"""Table formats whose files are a snapshot's (Iceberg, Delta), as sources of the lab's tables: the seam each
format's module fills (`iceberg_source`, `delta_source`) and the one way the lab follows a snapshot.

A format's table is kept in the lab as an external table whose parameters name the format, the source and the
snapshot followed (`colstats.source.*`); its partitions are the format's (identity values, or a transform's:
`ts_day=2026-01-02`), and the files of each partition are those the snapshot lists, recorded in the
metastore (SNAPSHOT_FILES) with the snapshot that added each. Reads take those files, never a directory
listing; the freshness rule compares them with the files each ANALYZE read, so a commit makes stale exactly
the partitions whose files it added or removed, and says which snapshot did.
"""
from __future__ import annotations

import json
import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import ClassVar

from ..column_statistics.names import make_part_name, parse_part_name
from ..errors import InvalidArgument
from ..file_columns import SKIPPED_PARAM, SPELLING_PARAM, spelling_param
from ..files import DataFile, FileKeys
from ..metastore import FieldSchema, Metastore, Partition, Table
from ..metastore.changes import FollowUp, Repositories
from ..metastore.repositories.snapshot_files import (
    FIELD_IDS_PARAM,
    FORMAT_PARAM,
    LOG_RULES_PARAM,
    LOG_STATISTICS_PARAM,
    METADATA_PARAM,
    OPERATIONS_PARAM,
    SNAPSHOT_PARAM,
)
from ..storage import join, parent
from ..tables.external import listed_sums
from .hms_source import CATALOG_PARAM

log = logging.getLogger("colstats_lab.sources")

SOURCE_PARAM = "colstats.source.table"   # what the format calls the table: `ice.db.t`, or the Delta table's path
OPTIONS_PARAM = "colstats.source.options"  # JSON: how to open it again (a catalog's properties)


@dataclass
class FormatFile:
    """One data file of a snapshot: its state, and its partition's values as Hive's text (None: NULL)."""

    file: DataFile
    values: list[str | None]


@dataclass
class FormatSnapshot:
    """What the lab needs of a format's table at one snapshot."""

    format: str                 # "iceberg" or "delta"
    source: str                 # the table as the format names it
    location: str               # its root directory
    snapshot: int | None        # snapshot id or log version; None: no snapshot yet (an empty table)
    cols: list[FieldSchema]
    partition_keys: list[FieldSchema]
    files: list[FormatFile]
    field_ids: FileKeys = field(default_factory=dict)  # how the files name each column, where not as the table does
    options: str = ""
    catalog: str = ""           # the attach name of the catalog it came from, if any
    metadata: str = ""          # an Iceberg catalog's table: its current metadata file
    log_statistics: dict[str, int] = field(default_factory=dict)  # Delta: column -> files the log has figures of
    spelled: list[str] = field(default_factory=list)  # the columns and keys as the format's schema spells them
    skipped: dict[str, str] = field(default_factory=dict)  # columns the lab cannot read, left out, and why
    log_rules: dict = field(default_factory=dict)  # Delta: which columns its log keeps figures of, and why
    operations: dict[int, str] = field(default_factory=dict)  # Delta: the operation of each version that deleted rows

    @property
    def token(self) -> str:
        """The snapshot as the lab's table records it: "" for a table with no snapshot yet."""
        return "" if self.snapshot is None else str(self.snapshot)

    def part_name(self, values: list[str | None]) -> str:
        return make_part_name([k.name for k in self.partition_keys], values)


class TableSource(ABC):
    """A table of some format, opened: its current snapshot, read again on each use."""

    @abstractmethod
    def current(self) -> FormatSnapshot:
        """The snapshot a reader now sees; raises naming what the lab cannot read (delete files it cannot
        apply, nested columns)."""


def partition_text(value) -> str | None:
    """A partition value as the lab's partition names spell it (Hive's text: `true`, `2026-01-02`,
    `2026-01-02 03:04:05`); None for NULL, which names the default partition."""
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def follow(metastore: Metastore, db: str, name: str, snapshot: FormatSnapshot) -> Table:
    """The lab's table `db.name` made the format's `snapshot`: registered when new (again when its schema
    changed: statistics of other columns describe nothing the format now has), else its partitions and
    their files followed, in one metastore commit (`FollowSnapshot`); nothing is written when the snapshot
    is the one followed already."""
    if metastore.catalog.table_exists(db, name):
        table = metastore.catalog.get_table(db, name)
        _check_source(table, snapshot)
        if _same_schema(table, snapshot) and _followed_already(table, snapshot):
            return table
    return metastore.apply([FollowSnapshot(db, name, snapshot)])[0]


def _check_source(table: Table, snapshot: FormatSnapshot) -> None:
    if table.parameters.get(FORMAT_PARAM) != snapshot.format or table.parameters.get(SOURCE_PARAM) != snapshot.source:
        raise InvalidArgument(f"lab table {table.qualified_name} is not the {snapshot.format} table "
                                    f"{snapshot.source}")


def _followed_already(table: Table, snapshot: FormatSnapshot) -> bool:
    return table.parameters.get(SNAPSHOT_PARAM) == snapshot.token and \
        (table.parameters.get(METADATA_PARAM) or "") == snapshot.metadata


@dataclass(frozen=True)
class FollowSnapshot:
    """The lab's table `db.name` made the format's `snapshot` (a `metastore.changes.Change`): registered when
    new or when its schema changed (its statistics dropped with it), else its partitions and their files
    followed. `dropped` learns the partitions the snapshot emptied."""
    db: str
    name: str
    snapshot: FormatSnapshot
    dropped: list[str] = field(default_factory=list, compare=False)
    kind: ClassVar[str] = "files"

    def apply(self, metastore: Repositories) -> Table:
        db, name, snapshot = self.db, self.name, self.snapshot
        if metastore.catalog.table_exists(db, name):
            table = metastore.catalog.get_table(db, name)
            _check_source(table, snapshot)
            if _same_schema(table, snapshot):
                if not _followed_already(table, snapshot):
                    self.dropped.extend(_follow_files(metastore, table, snapshot))
                return metastore.catalog.get_table(db, name)
            log.warning("%s: its schema changed in %s; its statistics in the lab are dropped and the table "
                        "registered again", snapshot.source, snapshot.format)
            metastore.catalog.drop_table(db, name)
        if db not in metastore.catalog.get_all_databases():
            metastore.catalog.create_database(db, f"{snapshot.format} tables", if_not_exists=True)
        params = {"EXTERNAL": "TRUE", "numRows": "0", "rawDataSize": "0", FORMAT_PARAM: snapshot.format,
                  SOURCE_PARAM: snapshot.source, SNAPSHOT_PARAM: "", FIELD_IDS_PARAM: _field_ids_text(snapshot)}
        if snapshot.options:
            params[OPTIONS_PARAM] = snapshot.options
        if snapshot.catalog:
            params[CATALOG_PARAM] = snapshot.catalog
        if spelling := spelling_param(snapshot.spelled):
            params[SPELLING_PARAM] = spelling
        if snapshot.skipped:
            params[SKIPPED_PARAM] = json.dumps(snapshot.skipped, sort_keys=True)
            log.warning("%s: columns left out: %s", snapshot.source,
                        "; ".join(f"{name} ({why})" for name, why in snapshot.skipped.items()))
        table = Table(db, name, snapshot.cols, snapshot.partition_keys, location=snapshot.location,
                      tableType="EXTERNAL_TABLE", parameters=params)
        metastore.catalog.create_table(table)
        _follow_files(metastore, metastore.catalog.get_table(db, name), snapshot)  # a new table drops nothing
        return metastore.catalog.get_table(db, name)

    def describe(self) -> str:
        return f"follow {self.db}.{self.name} to {self.snapshot.format} snapshot {self.snapshot.snapshot}"

    def follow_up(self) -> FollowUp | None:
        if not self.snapshot.partition_keys:
            return None
        # the table level no longer holds what dropped partitions held
        return FollowUp(Table(self.db, self.name, self.snapshot.cols, self.snapshot.partition_keys), sums=True,
                        merge=frozenset(c.name for c in self.snapshot.cols) if self.dropped else frozenset())


def _field_ids_text(snapshot: FormatSnapshot) -> str:
    return json.dumps(snapshot.field_ids, sort_keys=True) if snapshot.field_ids else ""


def _same_schema(table: Table, snapshot: FormatSnapshot) -> bool:
    return ([(c.name, c.type) for c in table.cols] == [(c.name, c.type) for c in snapshot.cols]
            and [(c.name, c.type) for c in table.partitionKeys] == [(c.name, c.type) for c in snapshot.partition_keys]
            and (table.parameters.get(FIELD_IDS_PARAM) or "") == _field_ids_text(snapshot)
            and table.location.rstrip("/") == snapshot.location.rstrip("/"))


def _follow_files(metastore: Repositories, table: Table, snapshot: FormatSnapshot) -> list[str]:
    """Partitions the snapshot added are registered and those it emptied dropped with their statistics; the
    owners whose files changed get the snapshot's files and their sums. A file kept from the snapshot
    before keeps the snapshot that added it. Returns the partitions dropped; the table's sums are the
    commit's follow-up."""
    recorded = metastore.snapshot_files.snapshot_file_states(table.dbName, table.tableName)
    added_in = {path: int(added) for states in recorded.values() for path, _, added in states}
    by_owner: dict[str | None, list[DataFile]] = {}
    for item in snapshot.files:
        owner = snapshot.part_name(item.values) if table.is_partitioned else None
        data_file = item.file
        if data_file.added_in is None:  # Delta's: kept from the version the lab saw it first, or this one
            data_file = replace(data_file, added_in=added_in.get(data_file.path, snapshot.snapshot or 0))
        by_owner.setdefault(owner, []).append(data_file)
    changed = {owner: files for owner, files in by_owner.items()
               if {f.state for f in files} != recorded.get(owner, set())}
    if table.is_partitioned:
        named = {owner or "": files for owner, files in by_owner.items()}
        have = {p.partName for p in metastore.catalog.get_partitions(table.dbName, table.tableName)}
        dropped = sorted(have - named.keys())
        for part_name in dropped:
            metastore.catalog.drop_partition(table.dbName, table.tableName, part_name)
        added = sorted(named.keys() - have)
        if added:
            metastore.catalog.add_partitions([_partition(table, name, named[name]) for name in added])
        metastore.snapshot_files.replace_snapshot_files(table, changed)
        kept = sorted({owner or "" for owner in changed} - set(added))
        if kept:  # one call for every partition, not a table read and statements a partition
            metastore.catalog.alter_partitions_params(table.dbName, table.tableName, {name: _sums(named[name]) for name in kept})
        log.info("%s followed to %s %s: %d partition(s) added, %d dropped, %d with other files",
                 table.qualified_name, snapshot.format, snapshot.snapshot, len(added), len(dropped), len(changed))
    else:
        dropped = []
        files = by_owner.get(None, [])
        if {f.state for f in files} != recorded.get(None, set()):
            metastore.snapshot_files.replace_snapshot_files(table, {None: files})
        metastore.catalog.alter_table_params(table.dbName, table.tableName, _sums(files))
    metastore.catalog.alter_table_params(table.dbName, table.tableName, {
        SNAPSHOT_PARAM: snapshot.token, METADATA_PARAM: snapshot.metadata or None,
        LOG_STATISTICS_PARAM: json.dumps(snapshot.log_statistics) if snapshot.log_statistics else None,
        LOG_RULES_PARAM: json.dumps(snapshot.log_rules, sort_keys=True) if snapshot.log_rules else None,
        OPERATIONS_PARAM: json.dumps(snapshot.operations, sort_keys=True) if snapshot.operations else None})
    return dropped


def _partition(table: Table, name: str, files: list[DataFile]) -> Partition:
    """A partition the snapshot added, placed in the directory of its files (the format's layout; reads go
    by the recorded files, never by the directory), rows unknown until ANALYZE."""
    rows = [f for f in files if not f.content] or files
    directory = parent(rows[0].path) if rows else join(table.location, name)
    return Partition(table.dbName, table.tableName, [v for _, v in parse_part_name(name)], location=directory,
                     parameters={**_sums(files), "numRows": "0", "rawDataSize": "0"})


def _sums(files: list[DataFile]) -> dict:
    """numFiles and totalSize of the data files among `files` (delete files are not rows)."""
    rows = [f for f in files if not f.content]
    return listed_sums(rows)
