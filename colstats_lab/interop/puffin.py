"""Iceberg's Puffin statistics files, written (pyiceberg reads them but writes none): the magic, the blobs,
then the footer (magic, the JSON payload, its length and flags as 4-byte little-endian integers, magic).
Blobs and payload are stored uncompressed, which the format allows and every reader accepts."""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field

from ..storage import storage_for

MAGIC = b"PFA1"
THETA_BLOB = "apache-datasketches-theta-v1"


@dataclass(frozen=True)
class Blob:
    type: str
    fields: list[int]  # the Iceberg field ids it describes
    snapshot_id: int
    sequence_number: int
    payload: bytes
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class WrittenPuffin:
    path: str
    file_size: int
    footer_size: int  # the footer with its magics: what Iceberg's statistics file entry records


def write_puffin(path: str, blobs: list[Blob], properties: dict[str, str]) -> WrittenPuffin:
    """Writes `blobs` to a new Puffin file at `path`, whole (a local one written aside and renamed, an object
    store's in one PUT: a reader never sees half)."""
    body, described, offset = [MAGIC], [], len(MAGIC)
    for blob in blobs:
        described.append({"type": blob.type, "fields": blob.fields, "snapshot-id": blob.snapshot_id,
                          "sequence-number": blob.sequence_number, "offset": offset, "length": len(blob.payload),
                          "properties": blob.properties})
        body.append(blob.payload)
        offset += len(blob.payload)
    payload = json.dumps({"blobs": described, "properties": properties}, separators=(",", ":")).encode("utf-8")
    footer = MAGIC + payload + struct.pack("<i", len(payload)) + struct.pack("<i", 0) + MAGIC
    storage_for(path).write_bytes(path, b"".join(body) + footer)
    return WrittenPuffin(path, offset + len(footer), len(footer))
