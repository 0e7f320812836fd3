"""Delta's deletion vectors: the rows a DELETE, UPDATE or MERGE marked gone in a data file it left in place, as
the Delta protocol stores them. A descriptor in the log (`interop.delta_log` finds them) says where each is:
storage type `u` a file under the table named by a UUID, with an optional random prefix; `p` a file by its absolute
path; `i` inline in the log, Z85-encoded. The positions are decoded from the RoaringBitmapArray format (a magic
number, then a 64-bit Roaring bitmap in the portable format), checked against the file's CRC-32 and the data
file's row count, before a scan applies them. Every failure names the data file and the vector, in one line.

Iceberg v3's deletion vectors are the same bitmap in the same frame (its size, the magic, the bitmap, its CRC-32),
a `deletion-vector-v1` blob of a Puffin file at the offset its manifest entry gives: storage type `f` here, the lab's
own (a Puffin file by its absolute path), never written to a Delta log.

In the lab's metastore a vector is one more file of its partition (`DataFile.content` DELETION_VECTOR), whose
path names the data file and the vector's unique id: a commit that adds or replaces a vector changes exactly
that partition's files, so its statistics go stale there and nowhere else."""
from __future__ import annotations

import struct
import uuid
import zlib
from dataclasses import dataclass
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
from pyroaring import BitMap, BitMap64

from ..errors import InvalidArgument, StorageError
from ..files import DELETION_VECTOR, VECTOR_MARK, DataFile
from ..storage import is_local, join, local_path, storage_for

PORTABLE_MAGIC = 1681511377  # little-endian; Spark and Databricks write this one
NATIVE_MAGIC = 1681511376    # big-endian, then 32-bit bitmaps by their high word (the protocol's inline example)
FILE_FORMAT_VERSION = 1
PUFFIN_BLOB, PUFFIN_MAGIC = "f", b"PFA1"  # an Iceberg deletion vector: a blob of a Puffin file
_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_Z85_VALUE = {c: i for i, c in enumerate(_Z85)}


@dataclass(frozen=True)
class DeletionVector:
    """A data file's deletion vector as the log describes it."""

    storage: str               # 'u', 'p' or 'i'
    path_or_inline: str
    offset: int | None
    size: int                  # bytes of the serialized bitmap (before Z85, inline)
    cardinality: int           # rows it deletes

    @classmethod
    def of(cls, descriptor: dict, data_path: str) -> DeletionVector:
        storage = descriptor.get("storageType")
        if storage not in ("u", "p", "i"):
            raise InvalidArgument(f"the deletion vector of {data_path} has storage type {storage!r}, which the Delta "
                                  "protocol does not define ('u', 'p', 'i')")
        offset = descriptor.get("offset")
        return cls(storage, str(descriptor["pathOrInlineDv"]), None if offset is None else int(offset),
                   int(descriptor["sizeInBytes"]), int(descriptor["cardinality"]))

    @property
    def unique_id(self) -> str:
        """The protocol's uniqueId: what tells this vector from the file's next one."""
        tail = "" if self.offset is None else f"@{self.offset}"
        return f"{self.storage}{self.path_or_inline}{tail}"

    def location(self, table_root: str) -> str | None:
        """The file holding the vector (None inline)."""
        if self.storage == "i":
            return None
        if self.storage == PUFFIN_BLOB:  # as an Iceberg manifest names it
            return local_path(self.path_or_inline) if is_local(self.path_or_inline) else self.path_or_inline
        if self.storage == "p":  # a URI as add actions spell paths: `file:///...` is a local path
            location = unquote(self.path_or_inline)
            return local_path(location) if is_local(location) else location
        if len(self.path_or_inline) < 20:
            raise InvalidArgument(f"deletion vector {self.unique_id}: a relative vector's name ends in a 20-character "
                                  "Z85 UUID")
        prefix, encoded = self.path_or_inline[:-20], self.path_or_inline[-20:]
        name = f"deletion_vector_{uuid.UUID(bytes=z85_decode(encoded))}.bin"
        return join(table_root, prefix, name) if prefix else join(table_root, name)


def z85_decode(text: str) -> bytes:
    """ZeroMQ's Base85 (RFC 32), which the protocol uses because it is JSON-friendly: each 5 characters, 4 bytes."""
    if len(text) % 5:
        raise InvalidArgument(f"{text[:24]!r}... is not Z85: its length {len(text)} is not a multiple of 5")
    out = bytearray()
    for start in range(0, len(text), 5):
        value = 0
        for char in text[start:start + 5]:
            if char not in _Z85_VALUE:
                raise InvalidArgument(f"{char!r} is not a Z85 character (in {text[:24]!r})")
            value = value * 85 + _Z85_VALUE[char]
        out += value.to_bytes(4, "big")
    return bytes(out)


# ---- the vector as one of the lab's snapshot files ---------------------------------------------------------

def vector_file(data_path: str, vector: DeletionVector) -> DataFile:
    """The vector as a file of the data file's partition: its path names both, its size is the vector's, its
    record count the rows it deletes."""
    offset = "" if vector.offset is None else str(vector.offset)
    return DataFile(f"{data_path}{VECTOR_MARK}{vector.storage}:{offset}:{vector.path_or_inline}", vector.size, 0.0,
                    record_count=vector.cardinality, content=DELETION_VECTOR)


def iceberg_vector(data_path: str, puffin_path: str, offset: int, blob_size: int, cardinality: int) -> DataFile:
    """An Iceberg v3 deletion vector (a `deletion-vector-v1` blob of `blob_size` bytes at `offset` of a Puffin file,
    as its manifest entry's `content_offset` and `content_size_in_bytes` say) as a `vector_file`: the blob's frame
    is a Delta vector's, the bitmap `blob_size` less its size and CRC-32."""
    return vector_file(data_path, DeletionVector(PUFFIN_BLOB, puffin_path, offset, blob_size - 8, cardinality))


def vector_of(data_file: DataFile) -> tuple[str, DeletionVector]:
    """The data file's path and the vector a `vector_file` stands for."""
    data_path, _, described = data_file.path.rpartition(VECTOR_MARK)
    storage, offset, path_or_inline = described.split(":", 2)
    return data_path, DeletionVector(storage, path_or_inline, int(offset) if offset else None, data_file.size,
                                     data_file.record_count or 0)


def file_vectors(files: list[DataFile], deletes: list[DataFile]) -> list[tuple[DataFile, DataFile]]:
    """Each deletion vector among a partition's `deletes` paired with the data file of `files` it applies to."""
    by_path = {f.path: f for f in files}
    out = []
    for vector in deletes:
        data_file = by_path.get(vector_of(vector)[0]) if vector.content == DELETION_VECTOR else None
        if data_file is not None:
            out.append((data_file, vector))
    return out


# ---- decoding -----------------------------------------------------------------------------------------------

def deleted_positions(data_path: str, vector: DeletionVector, table_root: str, rows: int | None) -> BitMap64:
    """The positions (from 0) of the rows `vector` deletes from the data file at `data_path` of `rows` rows;
    raises naming the file and the vector when the vector cannot be read, fails its checksum, or names a row
    the file does not have."""
    what = f"the deletion vector of {data_path} ({_described(vector, table_root)})"
    if vector.storage == "i":
        data = z85_decode(vector.path_or_inline)[:vector.size]
    else:
        data = _stored(vector, table_root, what)
    positions = _bitmap(data, what)
    if len(positions) != vector.cardinality:
        described_by = "its manifest" if vector.storage == PUFFIN_BLOB else "the log"
        raise InvalidArgument(f"{what} holds {len(positions):,} rows, but {described_by} says {vector.cardinality:,}")
    if rows is not None and len(positions) and positions.max() >= rows:
        raise InvalidArgument(f"{what} deletes row {positions.max():,}, past the {rows:,} rows of the file")
    return positions


def _described(vector: DeletionVector, table_root: str) -> str:
    return "inline" if vector.storage == "i" else str(vector.location(table_root))


def _stored(vector: DeletionVector, table_root: str, what: str) -> bytes:
    """The bitmap bytes of an on-disk vector: the file's format version, then at the offset its size (big-endian),
    the bitmap and its CRC-32."""
    location = vector.location(table_root)
    assert location is not None
    try:
        content = storage_for(location).read_bytes(location)
    except (OSError, StorageError) as error:
        raise StorageError(f"{what} cannot be read: {type(error).__name__}: {error}") from None
    if vector.storage == PUFFIN_BLOB:
        if content[:4] != PUFFIN_MAGIC:
            raise InvalidArgument(f"{what} is not a Puffin file")
    elif not content or content[0] != FILE_FORMAT_VERSION:
        raise InvalidArgument(f"{what} is not a deletion vector file of format {FILE_FORMAT_VERSION}")
    start = 1 if vector.offset is None else vector.offset
    end = start + 4 + vector.size + 4
    if len(content) < end:
        raise InvalidArgument(f"{what} is truncated: {len(content):,} bytes, the vector ends at byte {end:,}")
    (size,) = struct.unpack(">I", content[start:start + 4])
    if size != vector.size:
        raise InvalidArgument(f"{what} is {size:,} bytes at offset {start}, but the log says {vector.size:,}")
    data = content[start + 4:start + 4 + size]
    (checksum,) = struct.unpack(">I", content[start + 4 + size:end])
    if zlib.crc32(data) != checksum:
        raise InvalidArgument(f"{what} fails its checksum: the file was changed or damaged")
    return data


def _bitmap(data: bytes, what: str) -> BitMap64:
    if len(data) < 4:
        raise InvalidArgument(f"{what} is {len(data)} bytes, too short for a bitmap")
    try:
        if struct.unpack("<I", data[:4])[0] == PORTABLE_MAGIC:
            return BitMap64.deserialize(data[4:])
        if struct.unpack(">I", data[:4])[0] == NATIVE_MAGIC:
            return _native(data[4:])
    except (ValueError, struct.error):
        raise InvalidArgument(f"{what} is not a valid Roaring bitmap") from None
    raise InvalidArgument(f"{what} does not start with a RoaringBitmapArray magic number")


def _native(data: bytes) -> BitMap64:
    """The older layout: a count of 32-bit bitmaps (big-endian), then each one's size and bytes; a bitmap's place
    is the high 32 bits of its positions."""
    (count,) = struct.unpack(">I", data[:4])
    out, at = BitMap64(), 4
    for high in range(count):
        (size,) = struct.unpack(">I", data[at:at + 4])
        low = BitMap.deserialize(data[at + 4:at + 4 + size])
        out |= BitMap64(v | (high << 32) for v in low)
        at += 4 + size
    return out


def positions_table(vectors: list[tuple[DataFile, DataFile]], table_root: str, numbers: dict[str, int]) -> pa.Table:
    """(deleted_file, deleted_row) of every row the `vectors` delete, a row each: `vectors` pairs each vector file
    (`vector_file`) with the data file it applies to, which `numbers` numbers as the scan numbers its rows' files."""
    files, positions = [], []
    for data_file, vector_data in vectors:
        data_path, vector = vector_of(vector_data)
        bitmap = deleted_positions(data_path, vector, table_root, data_file.record_count)
        array = pa.array(bitmap.to_array(), pa.uint64()).cast(pa.int64())
        positions.append(array)
        files.append(pa.array(np.full(len(array), numbers[data_path], dtype=np.int32)))
    if not positions:
        return pa.table({"deleted_file": pa.array([], pa.int32()), "deleted_row": pa.array([], pa.int64())})
    return pa.table({"deleted_file": pa.concat_arrays(files), "deleted_row": pa.concat_arrays(positions)})
