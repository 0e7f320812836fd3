"""A commit as data: the typed changes a lab transaction makes to the metastore, applied in order by
`Metastore.apply` in the one SQLite transaction that marks the Hive transaction committed.

Each change says what kind of thing it writes (`kind`: statistics, params, partitions, files, metadata,
definition) and what it is (`describe()`, for the log and for a person inspecting `txn.changes`), and
applies itself through the metastore's calls. The catalog's changes are here; an ANALYZE's, a write's and
a REFRESH METADATA's are defined beside the code that computes them (`analyze.runner.AnalyzeChange`,
`tables.writer.WriteChange`, `analyze.refresh_metadata.MetadataChange`), on the same protocol.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from .merge import merge_table_level
from .model import Partition, SkewedInfo, Table
from .table_metadata import MetadataAnalysis, MetadataUnit

if TYPE_CHECKING:
    from .store import Metastore


class Change(Protocol):
    kind: ClassVar[str]

    def apply(self, metastore: "Metastore") -> Any: ...

    def describe(self) -> str: ...


@dataclass(frozen=True)
class AddPartitions:
    """Partitions added to a table (ADD PARTITION, MSCK's new directories); `added` holds those that were new."""
    table: Table
    partitions: tuple[Partition, ...]
    if_not_exists: bool = False
    added: list[Partition] = field(default_factory=list, compare=False)
    kind: ClassVar[str] = "partitions"

    def apply(self, metastore: "Metastore") -> list[Partition]:
        self.added.extend(metastore.add_partitions(self.partitions, self.if_not_exists))
        metastore.refresh_partitioned_table_params(self.table.dbName, self.table.tableName)
        return self.added

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

    def apply(self, metastore: "Metastore") -> list[Partition]:
        t = self.table
        for name in self.names:
            part = metastore.drop_partition(t.dbName, t.tableName, name, if_exists=self.if_exists)
            if part is not None:
                self.dropped.append(part)
        metastore.refresh_partitioned_table_params(t.dbName, t.tableName)
        # the table level no longer holds what the dropped partitions held
        merge_table_level(metastore, t, [c.name for c in t.cols], int(time.time()))
        return self.dropped

    def describe(self) -> str:
        return f"drop {len(self.names):,} partition(s) of {self.table.qualified_name}"


@dataclass(frozen=True)
class AlterSkew:
    """A table's skew spec (None: not skewed) and whether it is stored as directories."""
    table: Table
    info: SkewedInfo | None
    stored_as_directories: bool
    kind: ClassVar[str] = "definition"

    def apply(self, metastore: "Metastore") -> None:
        metastore.alter_table_skew(self.table.dbName, self.table.tableName, self.info, self.stored_as_directories)

    def describe(self) -> str:
        return f"set the skew of {self.table.qualified_name}"


@dataclass(frozen=True)
class DefinitionWrite:
    """A change of a transactional table's definition or partitions takes a write ID, as Hive's DDL does:
    the table's statistics writer becomes that write."""
    table: Table
    write_id: int
    kind: ClassVar[str] = "params"

    def apply(self, metastore: "Metastore") -> None:
        metastore.alter_table_params(self.table.dbName, self.table.tableName, {}, write_id=self.write_id)

    def describe(self) -> str:
        return f"{self.table.qualified_name} written by write ID {self.write_id}"


@dataclass(frozen=True)
class ReplaceMetadata:
    """A REFRESH METADATA's units (Drill's levels) in place of the table's previous ones."""
    table: Table
    analysis: MetadataAnalysis
    units: tuple[MetadataUnit, ...]
    kind: ClassVar[str] = "metadata"

    def apply(self, metastore: "Metastore") -> int:
        return metastore.replace_table_metadata(self.table.dbName, self.table.tableName, self.analysis,
                                                list(self.units))

    def describe(self) -> str:
        return f"replace the metadata of {self.table.qualified_name} ({len(self.units)} units)"
