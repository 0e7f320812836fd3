"""Rewriting partitions in place as overwrites (a new base directory under a new write ID): under the
table's current skew spec (relayout), or with each directory's files merged into one (Hive's
`ALTER TABLE ... CONCATENATE`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import SparkSession

from ..metastore import Metastore, Partition, Table
from ..quoting import column_ref
from .kinds import read_snapshot, snapshot_files
from .writer import WriteResult, write_table

if TYPE_CHECKING:
    from ..transaction import Transaction


def rewrite_partitions(spark: SparkSession, metastore: Metastore, table: Table, partitions: list[Partition] | None,
                       txn: Transaction, gather: bool, relayout: bool = False,
                       one_file_per_directory: bool = False) -> tuple[int, list[WriteResult]]:
    """Overwrites each partition (all of `partitions`; the table itself when unpartitioned) with its own
    rows as `txn` sees them; returns how many files they had and what each overwrite wrote. With
    `one_file_per_directory` one task writes each partition, so every directory (each list-bucketing
    directory too) gets a single file."""
    parts = snapshot_files(metastore, table, txn.snapshot(table), partitions)
    results = []
    for part in parts:
        rows = read_snapshot(spark, table, [part]).select(*[column_ref(c.name) for c in table.cols])
        if one_file_per_directory:
            rows = rows.coalesce(1)
        spec = part.partition.spec if part.partition is not None else None
        results.append(write_table(spark, metastore, table, rows, txn, spec, "overwrite", gather=gather,
                                   relayout=relayout))
    return sum(len(p.files) for p in parts), results
