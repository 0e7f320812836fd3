"""Iceberg v3 deletion vectors, written as the spec lays them out: pyiceberg 0.12 writes no v3 table (and reads
manifests as of format 2), so a v2 table pyiceberg wrote is carried to format 3 here, with a snapshot of operation
"delete" whose delete manifest (of format 3) names a Puffin file of `deletion-vector-v1` blobs. DuckDB's iceberg
extension reads what this writes (the tests' independent reader)."""
from __future__ import annotations

import json
import struct
import uuid
import zlib

from pyiceberg.avro.file import AvroOutputFile
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestListWriterV2,
    ManifestWriterV2,
)
from pyroaring import BitMap64

PORTABLE_MAGIC = 1681511377


class _V3DeleteManifestWriter(ManifestWriterV2):
    """A delete manifest of format 3, its entries written with every v3 field (pyiceberg's own writer binds a
    format-2 record, which drops a vector's data file, offset and size)."""

    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def version(self):  # type: ignore[override]
        return 3

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}

    def new_writer(self) -> AvroOutputFile[ManifestEntry]:
        return AvroOutputFile[ManifestEntry](output_file=self._output_file, file_schema=self._with_partition(3),
                                             record_schema=self._with_partition(3), schema_name="manifest_entry",
                                             metadata=self._meta)


def vector_blob(positions: list[int]) -> bytes:
    """A `deletion-vector-v1` blob: its length (big-endian), the magic and a portable 64-bit Roaring bitmap, and
    the CRC-32 of those two."""
    bitmap = struct.pack("<I", PORTABLE_MAGIC) + BitMap64(positions).serialize()
    return struct.pack(">I", len(bitmap)) + bitmap + struct.pack(">I", zlib.crc32(bitmap))


def puffin_of_vectors(vectors: dict[str, list[int]]) -> tuple[bytes, list[dict]]:
    """A Puffin file of one vector blob per data file path, and the blobs' metadata (offset, length)."""
    out, blobs = bytearray(b"PFA1"), []
    for data_path, positions in vectors.items():
        blob = vector_blob(positions)
        blobs.append({"type": "deletion-vector-v1", "fields": [2147483645], "snapshot-id": -1, "sequence-number": -1,
                      "offset": len(out), "length": len(blob),
                      "properties": {"referenced-data-file": data_path, "cardinality": str(len(positions))}})
        out += blob
    payload = json.dumps({"blobs": blobs}).encode()
    out += b"PFA1" + payload + struct.pack("<i", len(payload)) + b"\0\0\0\0" + b"PFA1"
    return bytes(out), blobs


def commit_v3_deletion_vectors(table, vectors: dict[object, list[int]]) -> str:
    """`table` (a v2 table pyiceberg wrote) carried to format 3 with one more snapshot whose deletion vectors delete
    `vectors` (a pyiceberg data file -> its positions); returns the new metadata file's location."""
    puffin, blobs = puffin_of_vectors({data_file.file_path: positions for data_file, positions in vectors.items()})
    puffin_path = f"{table.location()}/data/vectors-{uuid.uuid4()}.puffin"
    with table.io.new_output(puffin_path).create() as out:
        out.write(puffin)
    parent = table.current_snapshot()
    snapshot_id = uuid.uuid4().int >> 66
    sequence = table.metadata.last_sequence_number + 1
    manifest_path = f"{table.location()}/metadata/{uuid.uuid4()}-m0.avro"
    with _V3DeleteManifestWriter(table.spec(), table.schema(), table.io.new_output(manifest_path), snapshot_id,
                                 "deflate") as writer:
        for (data_file, positions), blob in zip(vectors.items(), blobs, strict=True):
            vector = DataFile.from_args(
                _table_format_version=3, content=DataFileContent.POSITION_DELETES, file_path=puffin_path,
                file_format=FileFormat.PUFFIN, partition=data_file.partition, record_count=len(positions),
                file_size_in_bytes=len(puffin), referenced_data_file=data_file.file_path,
                content_offset=blob["offset"], content_size_in_bytes=blob["length"])
            vector.spec_id = data_file.spec_id
            writer.add_entry(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=snapshot_id,
                                                     data_file=vector))
    list_path = f"{table.location()}/metadata/snap-{snapshot_id}-1-{uuid.uuid4()}.avro"
    with ManifestListWriterV2(table.io.new_output(list_path), snapshot_id, parent.snapshot_id, sequence,
                              "deflate") as manifests:
        manifests.add_manifests(parent.manifests(table.io) + [writer.to_manifest_file()])
    metadata = json.loads(table.io.new_input(table.metadata_location).open().read())
    first_row = 0
    for snapshot in metadata["snapshots"]:  # v3's row lineage: each snapshot's first row id and rows added
        added = int(snapshot["summary"].get("added-records", 0))
        snapshot.update({"first-row-id": first_row, "added-rows": added})
        first_row += added
    now = parent.timestamp_ms + 1_000
    metadata["snapshots"].append({
        "snapshot-id": snapshot_id, "parent-snapshot-id": parent.snapshot_id, "sequence-number": sequence,
        "timestamp-ms": now, "manifest-list": list_path, "schema-id": parent.schema_id,
        "summary": {"operation": "delete", "added-delete-files": str(len(vectors)),
                    "added-position-deletes": str(sum(len(p) for p in vectors.values()))},
        "first-row-id": first_row, "added-rows": 0})
    metadata.update({"format-version": 3, "next-row-id": first_row, "current-snapshot-id": snapshot_id,
                     "last-sequence-number": sequence, "last-updated-ms": now,
                     "refs": {"main": {"snapshot-id": snapshot_id, "type": "branch"}}})
    metadata["snapshot-log"].append({"snapshot-id": snapshot_id, "timestamp-ms": now})
    path = f"{table.location()}/metadata/{uuid.uuid4()}-v3.metadata.json"
    with table.io.new_output(path).create() as out:
        out.write(json.dumps(metadata).encode())
    return path
