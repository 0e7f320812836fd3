"""The seam every kind of table is read through: where a snapshot's files are, how Spark reads them, what
the files' own metadata says without a scan, and what tells one snapshot from the next. ANALYZE, pruning,
answers and the views ask `kind_of(table)` and never the table's kind themselves.

- managed: Hive's layout, written by the lab; a reader's write-ID list admits base and delta directories.
- external: directories another job writes into (registered, an HMS's or Spark's catalog table mirrored);
  each partition's directory listed as it is now, the files as analyzed telling freshness.
- iceberg, delta: the files a table format's snapshot lists, recorded when the lab follows it; record
  counts, NULL counts and bounds from its manifests or log; the snapshot id or log version.
Following a catalog (an HMS, Spark's, an Iceberg catalog, a Delta log) into the lab's tables is
`commands.catalogs`' and `interop`'s work; past it, every kind is one of these.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

from pyspark.sql import DataFrame, SparkSession

from ..files import DELETION_VECTOR, EQUALITY_DELETES, POSITION_DELETES, ROWS
from ..metastore import MetaException, Metastore, Partition, Table, ValidWriteIdList
from ..metastore.repositories.snapshot_files import (
    FORMAT_PARAM,
    SNAPSHOT_PARAM,
    file_keys_of,
    is_snapshot_table,
    snapshot_word,
    unfollowed_commit,
)
from ..storage import files_by_location, is_local, list_data_files, storage_for
from .layout import admitted_dirs
from .resolved_reads import resolved_read
from .snapshot import PartitionFiles, empty_frame, read_by_field_ids, read_format_snapshot, read_hive_layout


class TableKind(ABC):
    """How the lab lists and reads one kind of table."""

    name: str
    file_statistics = "Parquet footer"  # where each file's own figures come from, as a pruning report says
    file_times = True  # a file's state holds its modification time (not the snapshot that added it)
    rows_name_their_file = False  # reads can give each row's file (what Puffin's per-file sketches need)
    written_elsewhere = False  # another writer changes its files: rows changed go uncounted, files analyzed recorded
    directories_are_partitions = False  # MSCK REPAIR TABLE registers the partition directories found on disk

    def label(self, table: Table) -> str:
        """The kind as the tables frame shows it."""
        if table.skewedInfo is not None and table.storedAsSubDirectories:
            return "list-bucketing"
        return self.name

    @abstractmethod
    def files(self, metastore: Metastore, table: Table, valid: ValidWriteIdList,
              partitions: list[Partition] | None) -> list[PartitionFiles]:
        """What a reader with `valid` sees of each partition (all of them unless given)."""

    def read(self, spark: SparkSession, table: Table, parts: list[PartitionFiles], with_file: bool) -> DataFrame:
        """The rows of those partitions, partition keys last; with `with_file`, each row's file."""
        return read_hive_layout(spark, table, parts)

    def record_count(self, metastore: Metastore, table: Table, partitions: list[Partition] | None
                     ) -> tuple[int, str] | None:
        """count(*) from the files' own metadata, with what it came from; None when it keeps none."""
        return None

    def freshness_basis(self, table: Table) -> str:
        """What proves the table's statistics fresh for a reader, as the views say it."""
        return "write IDs (Hive's ValidWriteIdList)"


class DirectoryTable(TableKind):
    """A table whose partitions are directories, listed as they are now (which of them a reader sees: `_dirs`)."""

    def files(self, metastore, table, valid, partitions=None):
        if not table.is_partitioned:
            dirs = self._dirs(table.location, valid)
            return [PartitionFiles(None, dirs, [f for d in dirs for f in list_data_files(d)])]
        if partitions is None:
            partitions = metastore.catalog.get_partitions(table.dbName, table.tableName)
        for part in partitions:
            if not part.location:  # a catalog's partition whose location was never fetched: reading it finds nothing
                raise MetaException(f"partition {part.partName} of {table.qualified_name} has no location yet")
        dirs_of = {part.partName: self._dirs(part.location, valid) for part in partitions}
        directories = {(name, d): d for name, dirs in dirs_of.items() for d in dirs}
        listed = files_by_location(directories, table.location,
                                   None if len(partitions) < 2 else metastore.catalog.count_partitions(table.dbName,
                                                                                               table.tableName))
        return [PartitionFiles(part, dirs_of[part.partName],
                               [f for d in dirs_of[part.partName] for f in listed[(part.partName, d)]])
                for part in partitions]

    @abstractmethod
    def _dirs(self, location: str, valid: ValidWriteIdList) -> list[str]:
        """The directories under `location` a reader with `valid` sees."""


class ManagedTable(DirectoryTable):
    name = "managed"

    def _dirs(self, location: str, valid: ValidWriteIdList) -> list[str]:
        return admitted_dirs(location, valid)


class ExternalTable(DirectoryTable):
    name = "external"
    written_elsewhere = True
    directories_are_partitions = True

    def freshness_basis(self, table: Table) -> str:
        return f"each file's {storage_for(table.location).proves_by}"

    def _dirs(self, location: str, valid: ValidWriteIdList) -> list[str]:
        # an object store's prefix with nothing under it lists no files: no request to ask if it is a directory
        return [location] if not is_local(location) or storage_for(location).is_dir(location) else []


class FormatTable(TableKind):
    """An Iceberg or Delta table: the files its followed snapshot lists (SNAPSHOT_FILES), never a listing."""

    file_times = False
    rows_name_their_file = True
    written_elsewhere = True

    def __init__(self, name: str, file_statistics: str):
        self.name, self.file_statistics = name, file_statistics

    def files(self, metastore, table, valid, partitions=None):
        if not table.is_partitioned:
            files = metastore.snapshot_files.owner_files(table, {None: table.location})[None]
            return [PartitionFiles(None, [table.location], [f for f in files if not f.content],
                                   [f for f in files if f.content])]
        if partitions is None:
            partitions = metastore.catalog.get_partitions(table.dbName, table.tableName)
        files_of = metastore.snapshot_files.owner_files(table, {p.partName: p.location for p in partitions})
        return [PartitionFiles(p, [p.location], [f for f in files_of.get(p.partName, []) if not f.content],
                               [f for f in files_of.get(p.partName, []) if f.content]) for p in partitions]

    def read(self, spark, table, parts, with_file):
        return read_format_snapshot(spark, table, parts, with_file)

    def freshness_basis(self, table: Table) -> str:
        return f"the {snapshot_word(table)} of the table the lab follows"

    def record_count(self, metastore, table, partitions):
        """Exact whether or not the lab's statistics are fresh. None (a scan, or the lab's statistics) when a
        file has no count, position or equality deletes remove rows from some, or a commit was not followed yet."""
        if unfollowed_commit(table):
            return None
        named = partitions if partitions is not None or not table.is_partitioned else \
            metastore.catalog.get_partitions(table.dbName, table.tableName)
        owners = {p.partName: p.location for p in named} if named is not None else {None: table.location}
        files = [f for listed in metastore.snapshot_files.owner_files(table, owners).values() for f in listed]
        if any(f.content in (POSITION_DELETES, EQUALITY_DELETES) or f.record_count is None for f in files):
            return None
        data = [f for f in files if f.content == ROWS]
        vectors = [f for f in files if f.content == DELETION_VECTOR]  # their record counts: the rows they delete
        rows = sum(f.record_count or 0 for f in data) - sum(f.record_count or 0 for f in vectors)
        where = f"{len(owners)} partition{'s' if len(owners) != 1 else ''}" if partitions is not None else "the table"
        less = f", less the rows {len(vectors)} deletion vector(s) delete," if vectors else ""
        return rows, (f"answered from the record counts of {len(data)} file(s) of {where}{less} in the metadata of "
                      f"{snapshot_word(table)} {table.parameters.get(SNAPSHOT_PARAM)}")


_MANAGED, _EXTERNAL = ManagedTable(), ExternalTable()
_FORMATS = {"iceberg": FormatTable("iceberg", "Iceberg manifest"), "delta": FormatTable("delta", "Delta log")}


def kind_of(table: Table) -> TableKind:
    """The one place that tells the kinds apart."""
    if is_snapshot_table(table):
        return _FORMATS[table.parameters[FORMAT_PARAM]]
    return _EXTERNAL if table.tableType == "EXTERNAL_TABLE" else _MANAGED


def snapshot_files(metastore: Metastore, table: Table, valid: ValidWriteIdList,
                   partitions: list[Partition] | None = None) -> list[PartitionFiles]:
    """What a reader with `valid` sees of each partition (all of them unless given)."""
    return kind_of(table).files(metastore, table, valid, partitions)


def read_snapshot(spark: SparkSession, table: Table, parts: list[PartitionFiles], with_file: bool = False,
                  reuse: bool = False) -> DataFrame:
    """The rows of those partitions as a DataFrame with the table's schema (partition keys last); with
    `with_file` (an Iceberg or Delta table's), then each row's file as Spark spells it (FILE_COLUMN, a `file:`
    URI: `local_file_path` gives the path the lab records). With `reuse`, the DataFrame this session resolved
    for exactly these files before (`resolved_reads`): for the lab's own aggregations only, since a user joining
    one DataFrame with itself would find its columns ambiguous."""
    kind = kind_of(table)
    if with_file and not kind.rows_name_their_file:
        raise MetaException(f"{table.qualified_name}: rows with their file are read of Iceberg and Delta tables only")
    if not any(p.files for p in parts):
        return empty_frame(spark, table, with_file)
    if not reuse:
        return kind.read(spark, table, parts, with_file)
    frame = resolved_read(spark, _read_key(kind, table, parts, with_file),
                          lambda: kind.read(spark, table, parts, with_file))
    read_by_field_ids(spark, table)  # a reused read's scan runs under the setting its first one made
    return frame


def _read_key(kind: TableKind, table: Table, parts: list[PartitionFiles], with_file: bool) -> tuple:
    """All a read depends on: the table's place, columns and field ids, and each partition's values, place,
    directories and files' states."""
    return (kind.name, table.qualified_name, table.location, table.tableType, with_file,
            tuple((c.name, c.type) for c in table.cols + table.partitionKeys),
            tuple(sorted(file_keys_of(table).items())),
            tuple((p.part_name, tuple(p.partition.values), p.partition.location) if p.partition else None
                  for p in parts),
            tuple((tuple(p.dirs), tuple(p.states)) for p in parts))
