"""A commit as data: the typed changes a command makes to the metastore, applied in order by
`Metastore.apply` in one database transaction (with a Hive transaction's id, the one that marks it committed).

Each change says what kind of thing it writes (`kind`: statistics, params, partitions, files, metadata,
definition), what it is (`describe()`, for the log, the history's cause and a person inspecting
`txn.changes`) and what its table needs once every change of the commit is in (`follow_up()`: its
partitions' sums added up again, its writer marked, the table level of columns merged again), which
`apply` does once per table; it applies itself through the metastore's calls. Whatever a change needs
from outside the metastore (a listing, a catalog's answer) is read before, into its fields: nothing waits on
a file system or a server while the metastore is written. The catalog's changes are here; an ANALYZE's, a
write's and a REFRESH METADATA's are defined beside the code that computes them
(`analyze.runner.AnalyzeChange`, `tables.writer.WriteChange`, `analyze.refresh_metadata.MetadataChange`),
on the same protocol.
"""
from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ..column_statistics.merge import merge_partitions, merge_segments, segment_to_obj
from ..column_statistics.model import ColumnStatistics, ColumnStatisticsDesc, Partition, SkewedInfo, Table
from .rows.metadata_units import MetadataAnalysis, MetadataUnit

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from .db import Database
    from .repositories.analyze_claims import AutoAnalyzeRepository
    from .repositories.catalog import CatalogRepository
    from .repositories.column_stats import ColumnStatisticsRepository
    from .repositories.expectations import ExpectationsRepository
    from .repositories.history import HistoryRepository
    from .repositories.metadata_store import TableMetadataRepository
    from .repositories.row_sketches import RowSketchRepository
    from .repositories.run_records import RunRepository
    from .repositories.skewed_info import SkewRepository
    from .repositories.snapshot_files import SnapshotFilesRepository
    from .repositories.stats_accuracy import StatsAccuracyRepository
    from .repositories.stats_segments import SegmentRepository
    from .repositories.transactions import TxnRepository
    from .settings import MetastoreSettings


class Repositories(Protocol):
    """What a change writes through: the metastore's repositories and settings, and its transaction (the
    `Metastore` is one; typed by this shape so that a change needs nothing of the facade above it)."""
    settings: MetastoreSettings
    catalog: CatalogRepository
    segments: SegmentRepository
    skews: SkewRepository
    txns: TxnRepository
    snapshot_files: SnapshotFilesRepository
    accuracy: StatsAccuracyRepository
    column_stats: ColumnStatisticsRepository
    table_metadata: TableMetadataRepository
    stats_history: HistoryRepository
    stats_expectations: ExpectationsRepository
    autoanalyze_claims: AutoAnalyzeRepository
    row_sketches: RowSketchRepository
    runs: RunRepository

    def transaction(self, tables: Collection[tuple[str, str]] = ()) -> AbstractContextManager[Database]: ...


@dataclass(frozen=True)
class FollowUp:
    """What `table` needs once a commit's changes are in, done once by `Metastore.apply`: its partitions'
    sums (numFiles, totalSize, numRows, ...) added up again at the table level, `write_id` marked as its
    statistics' writer, and the table level of the columns `merge` merged again from its partitions'."""
    table: Table
    sums: bool = False
    write_id: int | None = None
    merge: frozenset[str] = frozenset()

    def joined(self, other: FollowUp) -> FollowUp:
        """This follow-up and `other`'s, of the same table, done once."""
        return FollowUp(self.table, self.sums or other.sums,
                        other.write_id if other.write_id is not None else self.write_id, self.merge | other.merge)

    def run(self, metastore: Repositories) -> None:
        t = self.table
        if self.sums and t.is_partitioned:
            metastore.catalog.refresh_partitioned_table_params(t.dbName, t.tableName)
        if self.write_id is not None:
            metastore.catalog.alter_table_params(t.dbName, t.tableName, {}, write_id=self.write_id)
        if self.merge and t.is_partitioned:
            merge_table_level(metastore, t, sorted(self.merge), int(time.time()))


class NothingAfter:
    """A change whose table needs no follow-up once the commit's changes are in."""

    def follow_up(self) -> None:
        return None


class Change(Protocol):
    kind: ClassVar[str]

    def apply(self, metastore: Repositories) -> Any: ...

    def describe(self) -> str: ...

    def follow_up(self) -> FollowUp | None: ...


@dataclass(frozen=True)
class AddPartitions:
    """Partitions added to a table (ADD PARTITION, MSCK's new directories); `added` holds those that were new."""
    table: Table
    partitions: tuple[Partition, ...]
    if_not_exists: bool = False
    added: list[Partition] = field(default_factory=list, compare=False)
    kind: ClassVar[str] = "partitions"

    def apply(self, metastore: Repositories) -> list[Partition]:
        self.added.extend(metastore.catalog.add_partitions(self.partitions, self.if_not_exists))
        return self.added

    def follow_up(self) -> FollowUp:
        return FollowUp(self.table, sums=True)

    def describe(self) -> str:
        return f"add {len(self.partitions):,} partition(s) to {self.table.qualified_name}"


@dataclass(frozen=True)
class DropPartitions:
    """Partitions dropped by name, with their statistics; the table level is merged again without them.
    `if_exists`: a partition already gone is skipped. `dropped` holds what each partition was."""
    table: Table
    names: tuple[str, ...]
    if_exists: bool = False
    dropped: list[Partition] = field(default_factory=list, compare=False)
    kind: ClassVar[str] = "partitions"

    def apply(self, metastore: Repositories) -> list[Partition]:
        t = self.table
        for name in self.names:
            part = metastore.catalog.drop_partition(t.dbName, t.tableName, name, if_exists=self.if_exists)
            if part is not None:
                self.dropped.append(part)
        return self.dropped

    def follow_up(self) -> FollowUp:
        # the table level no longer holds what the dropped partitions held
        return FollowUp(self.table, sums=True, merge=frozenset(c.name for c in self.table.cols))

    def describe(self) -> str:
        return f"drop {len(self.names):,} partition(s) of {self.table.qualified_name}"


@dataclass(frozen=True)
class AlterSkew(NothingAfter):
    """A table's skew spec (None: not skewed) and whether it is stored as directories."""
    table: Table
    info: SkewedInfo | None
    stored_as_directories: bool
    kind: ClassVar[str] = "definition"

    def apply(self, metastore: Repositories) -> None:
        metastore.skews.alter_table_skew(self.table.dbName, self.table.tableName, self.info, self.stored_as_directories)

    def describe(self) -> str:
        return f"set the skew of {self.table.qualified_name}"


@dataclass(frozen=True)
class DefinitionWrite:
    """A change of a transactional table's definition or partitions takes a write ID, as Hive's DDL does:
    the table's statistics writer becomes that write."""
    table: Table
    write_id: int
    kind: ClassVar[str] = "params"

    def apply(self, metastore: Repositories) -> None:
        return None

    def describe(self) -> str:
        return f"{self.table.qualified_name} written by write ID {self.write_id}"

    def follow_up(self) -> FollowUp:
        return FollowUp(self.table, write_id=self.write_id)


@dataclass(frozen=True)
class ReplaceMetadata(NothingAfter):
    """A REFRESH METADATA's units (Drill's levels) in place of the table's previous ones."""
    table: Table
    analysis: MetadataAnalysis
    units: tuple[MetadataUnit, ...]
    kind: ClassVar[str] = "metadata"

    def apply(self, metastore: Repositories) -> int:
        return metastore.table_metadata.replace_table_metadata(self.table.dbName, self.table.tableName, self.analysis,
                                                list(self.units))

    def describe(self) -> str:
        return f"replace the metadata of {self.table.qualified_name} ({len(self.units)} units)"


@dataclass(frozen=True)
class RegisterTable(NothingAfter):
    """A table the lab learns of (an external directory, a catalog's mirror), registered with its
    partitions: their sums added up at the table level as it is made, then `params` set over them (a
    directory's counts for an unpartitioned table; None removes a key). `database`, when given, is created
    first if missing, with that description; with `replacing`, the table of that name is dropped first, its
    statistics with it (its source's schema changed), in the same commit."""
    table: Table
    partitions: tuple[Partition, ...] = ()
    params: tuple[tuple[str, str | None], ...] = ()
    database: str | None = None
    replacing: bool = False
    kind: ClassVar[str] = "definition"

    def apply(self, metastore: Repositories) -> Table:
        t = self.table
        if self.replacing and metastore.catalog.table_exists(t.dbName, t.tableName):
            metastore.catalog.drop_table(t.dbName, t.tableName)
        if self.database is not None and t.dbName not in metastore.catalog.get_all_databases():
            metastore.catalog.create_database(t.dbName, self.database, if_not_exists=True)
        metastore.catalog.create_table(t)
        if t.is_partitioned:
            metastore.catalog.add_partitions(list(self.partitions))
            metastore.catalog.refresh_partitioned_table_params(t.dbName, t.tableName)
        if self.params:
            metastore.catalog.alter_table_params(t.dbName, t.tableName, dict(self.params))
        return metastore.catalog.get_table(t.dbName, t.tableName)

    def describe(self) -> str:
        return f"register {self.table.qualified_name}" + (
            f" with {len(self.partitions):,} partition(s)" if self.table.is_partitioned else "")


@dataclass(frozen=True)
class MovedPartition:
    """Where a partition's catalog now keeps it, with the files found there counted."""
    name: str
    location: str
    num_files: int
    total_size: int


@dataclass(frozen=True)
class FollowPartitions:
    """A catalog's table's partitions as the catalog has them now (Spark's, an HMS's): `added` registered,
    `dropped` dropped with their statistics (the files are the catalog's), `moved` pointed at their new
    directory with its files counted. Computed before (listings included), applied as it is: a partition
    another process added or dropped meanwhile is left as it is."""
    table: Table
    added: tuple[Partition, ...] = ()
    dropped: tuple[str, ...] = ()
    moved: tuple[MovedPartition, ...] = ()
    kind: ClassVar[str] = "partitions"

    def apply(self, metastore: Repositories) -> None:
        t = self.table
        for name in self.dropped:
            metastore.catalog.drop_partition(t.dbName, t.tableName, name, if_exists=True)
        if self.added:
            metastore.catalog.add_partitions(list(self.added), if_not_exists=True)
        present = {p.partName for p in metastore.catalog.get_partitions(t.dbName, t.tableName, [m.name for m in self.moved])} \
            if self.moved else set()
        moved = [m for m in self.moved if m.name in present]
        if moved:
            metastore.catalog.set_partition_locations(t.dbName, t.tableName, {m.name: m.location for m in moved})
            metastore.catalog.alter_partitions_params(t.dbName, t.tableName, {
                m.name: {"numFiles": str(m.num_files), "totalSize": str(m.total_size)} for m in moved})

    def describe(self) -> str:
        return (f"follow the partitions of {self.table.qualified_name}: {len(self.added):,} added, "
                f"{len(self.dropped):,} dropped, {len(self.moved):,} moved")

    def follow_up(self) -> FollowUp | None:
        if not (self.added or self.dropped or self.moved):
            return None
        # the table level no longer holds what dropped or moved partitions held
        return FollowUp(self.table, sums=True, merge=frozenset(c.name for c in self.table.cols))


@dataclass(frozen=True)
class AlterPartitionParams(NothingAfter):
    """Parameters of a table's partitions by name (None removes a key), as they are: no writer's rule."""
    table: Table
    params: tuple[tuple[str, tuple[tuple[str, str | None], ...]], ...]
    kind: ClassVar[str] = "params"

    def apply(self, metastore: Repositories) -> None:
        metastore.catalog.alter_partitions_params(self.table.dbName, self.table.tableName,
                                          {name: dict(changes) for name, changes in self.params})

    def describe(self) -> str:
        return f"set parameters of {len(self.params):,} partition(s) of {self.table.qualified_name}"


@dataclass(frozen=True)
class AlterTableParams(NothingAfter):
    """Parameters of a table (None removes a key), as they are: no writer's rule."""
    table: Table
    params: tuple[tuple[str, str | None], ...]
    kind: ClassVar[str] = "params"

    def apply(self, metastore: Repositories) -> None:
        metastore.catalog.alter_table_params(self.table.dbName, self.table.tableName, dict(self.params))

    def describe(self) -> str:
        return f"set parameters {', '.join(k for k, _ in self.params)} of {self.table.qualified_name}"


@dataclass(frozen=True)
class CreateDatabase(NothingAfter):
    """CREATE DATABASE: `if_not_exists` makes an existing one no error."""
    name: str
    comment: str | None = None
    if_not_exists: bool = False
    kind: ClassVar[str] = "definition"

    def apply(self, metastore: Repositories) -> None:
        metastore.catalog.create_database(self.name, self.comment, self.if_not_exists)

    def describe(self) -> str:
        return f"create database {self.name.lower()}"


@dataclass(frozen=True)
class DropDatabase(NothingAfter):
    """DROP DATABASE: with `cascade` its tables and their statistics too; returns the tables dropped."""
    name: str
    if_exists: bool = False
    cascade: bool = False
    kind: ClassVar[str] = "definition"

    def apply(self, metastore: Repositories) -> list[Table]:
        return metastore.catalog.drop_database(self.name, self.if_exists, self.cascade)

    def describe(self) -> str:
        return f"drop database {self.name.lower()}"


@dataclass(frozen=True)
class CreateTable(NothingAfter):
    """CREATE TABLE; returns whether it was created (False: it existed, with `if_not_exists`)."""
    table: Table
    if_not_exists: bool = False
    kind: ClassVar[str] = "definition"

    def apply(self, metastore: Repositories) -> bool:
        return metastore.catalog.create_table(self.table, self.if_not_exists)

    def describe(self) -> str:
        return f"create table {self.table.qualified_name}"


@dataclass(frozen=True)
class DropTable(NothingAfter):
    """DROP TABLE with its partitions and statistics; returns what the table was (None: there was none,
    with `if_exists`)."""
    db: str
    name: str
    if_exists: bool = False
    kind: ClassVar[str] = "definition"

    def apply(self, metastore: Repositories) -> Table | None:
        return metastore.catalog.drop_table(self.db, self.name, self.if_exists)

    def describe(self) -> str:
        return f"drop table {self.db.lower()}.{self.name.lower()}"


@dataclass(frozen=True)
class DropTableMetadata(NothingAfter):
    """DROP METADATA (Drill's): the table's metadata units forgotten; returns whether it had any."""
    table: Table
    if_exists: bool = False
    kind: ClassVar[str] = "metadata"

    def apply(self, metastore: Repositories) -> bool:
        return metastore.table_metadata.drop_table_metadata(self.table.dbName, self.table.tableName, self.if_exists)

    def describe(self) -> str:
        return f"drop the metadata of {self.table.qualified_name}"


@dataclass(frozen=True)
class AddExpectation(NothingAfter):
    """Rules on a column's figures, evaluated at once on each cell's latest kept state; returns their ID."""
    table: Table
    column: str
    rules: tuple[tuple[str, Any], ...]
    kind: ClassVar[str] = "definition"

    def apply(self, metastore: Repositories) -> int:
        return metastore.stats_expectations.add_expectation(self.table.dbName, self.table.tableName, self.column,
                                                            dict(self.rules))

    def describe(self) -> str:
        return f"expect {', '.join(k for k, _ in self.rules)} of {self.table.qualified_name}.{self.column}"


def merge_table_level(metastore: Repositories, table: Table, col_names: list[str], now: int) -> None:
    """Table-level statistics of a partitioned table's columns, merged from the partitions' stored
    statistics through the metastore's segments (a metastore call, no scan; a change of k partitions
    re-merges O(k log n) segments, not every partition)."""
    with metastore.transaction():
        tops = metastore.segments.segment_statistics(table.dbName, table.tableName, col_names, merge_segments,
                                            merge_partitions)
        elements = {c.name for c in table.stats_columns if c.is_element}
        merged = []
        for name in col_names:
            top = tops.get(name.lower())
            if top:
                merged.append(segment_to_obj(name.lower(), merge_segments(top), name.lower() in elements))
            elif metastore.column_stats.get_table_statistics(table.dbName, table.tableName, [name]) is not None:
                metastore.column_stats.delete_table_column_statistics(table.dbName, table.tableName, name)
        if merged:
            metastore.column_stats.store_merged_table_statistics(
                ColumnStatistics(ColumnStatisticsDesc(True, table.dbName, table.tableName, None, now), merged))
