"""Iceberg's partition statistics files: per partition of a snapshot, its data records, data files and their bytes,
its position and equality delete records and files, and when it was last changed, in the schema the spec fixes
(field ids 1 to 12), so that planners need not read manifests to size partitions. Written from the snapshot's
manifests, registered on the snapshot through the catalog's commit (`set-partition-statistics`), and read back,
whoever wrote them (Java's `PartitionStatsHandler` writes the same schema)."""
from __future__ import annotations

import io
import uuid
from dataclasses import dataclass, field

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg import types as it
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.manifest import DataFileContent
from pyiceberg.schema import Schema
from pyiceberg.table import Table as IcebergTable
from pyiceberg.table.statistics import PartitionStatisticsFile
from pyiceberg.table.update import SetPartitionStatisticsUpdate

from ..errors import StorageError
from ..storage import is_local, join, storage_for
from ..tables.external import catalog_location
from .iceberg_source import readable_value

COUNTS = ["data_record_count", "data_file_count", "total_data_file_size_in_bytes", "position_delete_record_count",
          "position_delete_file_count", "equality_delete_record_count", "equality_delete_file_count"]
FRAME_COLUMNS = ["partition", "spec_id", *COUNTS, "last_updated_at", "last_updated_snapshot_id"]


@dataclass
class _Partition:
    spec_id: int
    values: dict[int, object]  # partition field id -> value, as the manifest keeps it
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    last_updated_at: int | None = None
    last_updated_snapshot_id: int | None = None


def stats_file_schema(table: IcebergTable) -> Schema:
    """The spec's schema of a partition statistics file: `partition` the union of every spec's partition fields."""
    fields: dict[int, it.NestedField] = {}
    for spec in table.metadata.partition_specs:
        for partition_field in spec.partition_type(table.schema()).fields:
            fields.setdefault(partition_field.field_id, it.NestedField(
                partition_field.field_id, partition_field.name, partition_field.field_type, required=False))
    return Schema(
        it.NestedField(1, "partition", it.StructType(*fields.values()), required=True),
        it.NestedField(2, "spec_id", it.IntegerType(), required=True),
        it.NestedField(3, "data_record_count", it.LongType(), required=True),
        it.NestedField(4, "data_file_count", it.IntegerType(), required=True),
        it.NestedField(5, "total_data_file_size_in_bytes", it.LongType(), required=True),
        it.NestedField(6, "position_delete_record_count", it.LongType(), required=False),
        it.NestedField(7, "position_delete_file_count", it.IntegerType(), required=False),
        it.NestedField(8, "equality_delete_record_count", it.LongType(), required=False),
        it.NestedField(9, "equality_delete_file_count", it.IntegerType(), required=False),
        it.NestedField(10, "total_record_count", it.LongType(), required=False),
        it.NestedField(11, "last_updated_at", it.LongType(), required=False),
        it.NestedField(12, "last_updated_snapshot_id", it.LongType(), required=False))


def partition_statistics(table: IcebergTable, snapshot_id: int) -> list[_Partition]:
    """Each partition of the snapshot with its counts, from its manifests (the live entries)."""
    snapshot = table.snapshot_by_id(snapshot_id)
    if snapshot is None:
        return []
    specs = {spec.spec_id: spec for spec in table.metadata.partition_specs}
    committed_at = {s.snapshot_id: s.timestamp_ms for s in table.metadata.snapshots}  # looked up a file each
    by_key: dict[tuple, _Partition] = {}
    for manifest in snapshot.manifests(table.io):
        spec = specs[manifest.partition_spec_id]
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
            data = entry.data_file
            values = {f.field_id: data.partition[i] for i, f in enumerate(spec.fields)}
            key = (spec.spec_id, tuple(sorted(values.items())))
            part = by_key.setdefault(key, _Partition(spec.spec_id, values))
            if data.content == DataFileContent.DATA:
                part.counts["data_record_count"] += data.record_count
                part.counts["data_file_count"] += 1
                part.counts["total_data_file_size_in_bytes"] += data.file_size_in_bytes
            elif data.content == DataFileContent.POSITION_DELETES:
                part.counts["position_delete_record_count"] += data.record_count
                part.counts["position_delete_file_count"] += 1
            else:
                part.counts["equality_delete_record_count"] += data.record_count
                part.counts["equality_delete_file_count"] += 1
            added = committed_at.get(entry.snapshot_id) if entry.snapshot_id is not None else None
            if added is not None and (part.last_updated_at is None or added > part.last_updated_at):
                part.last_updated_at, part.last_updated_snapshot_id = added, entry.snapshot_id
    return sorted(by_key.values(), key=lambda p: (p.spec_id, repr(sorted(p.values.items()))))


def write_partition_statistics(table: IcebergTable, snapshot_id: int, folders: list[str]) -> PartitionStatisticsFile:
    """The snapshot's partition statistics file written in the first of `folders` its store accepts (named as Java
    names it, a Parquet file: some catalogs refuse Parquet under `metadata/`, SeaweedFS's among them) and registered
    on the snapshot through the catalog's commit."""
    schema = stats_file_schema(table)
    partition_type = schema.find_field(1).field_type
    assert isinstance(partition_type, it.StructType)
    rows = []
    for part in partition_statistics(table, snapshot_id):
        rows.append({
            "partition": {f.name: readable_value(f.field_type, part.values.get(f.field_id))
                          for f in partition_type.fields},
            "spec_id": part.spec_id, **part.counts, "total_record_count": None,
            "last_updated_at": part.last_updated_at, "last_updated_snapshot_id": part.last_updated_snapshot_id})
    written = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema_to_pyarrow(schema)), written)
    content = written.getvalue()
    name = f"partition-stats-{snapshot_id}-{uuid.uuid4()}.parquet"
    refused = []
    for folder in folders:
        path = join(folder, name)
        try:
            storage_for(path).write_bytes(path, content)
            break
        except (OSError, StorageError) as error:
            refused.append(f"{path}: {error}")
    else:
        raise StorageError(f"cannot write the partition statistics file of snapshot {snapshot_id}: "
                           + "; ".join(refused))
    registered = PartitionStatisticsFile.model_validate({
        "snapshot-id": snapshot_id, "statistics-path": "file://" + path if is_local(path) else path,
        "file-size-in-bytes": len(content)})
    table.catalog.commit_table(table, requirements=(), updates=(
        SetPartitionStatisticsUpdate.model_validate({"partition-statistics": registered}),))
    return registered


def partition_statistics_frame(table: IcebergTable) -> pd.DataFrame:
    """The partition statistics file registered on the current snapshot, whoever wrote it: a row per partition
    (`partition` as `name=value/...`), with the spec's counts; empty where none is registered."""
    snapshot = table.current_snapshot()
    registered = [f for f in table.metadata.partition_statistics
                  if snapshot is not None and f.snapshot_id == snapshot.snapshot_id]
    if not registered:
        return pd.DataFrame(columns=FRAME_COLUMNS)
    location = catalog_location(registered[0].statistics_path, "a partition statistics file")
    with storage_for(location).open_input(location) as handle:
        read = pq.read_table(handle)
    records = []
    for row in read.to_pylist():
        values = row.get("partition") or {}
        records.append(("/".join(f"{k}={v}" for k, v in values.items()) or None, row.get("spec_id"),
                        *[row.get(c) for c in COUNTS], row.get("last_updated_at"), row.get("last_updated_snapshot_id")))
    return pd.DataFrame.from_records(records, columns=FRAME_COLUMNS)
