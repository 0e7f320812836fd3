"""What a Parquet file knows of its values without a data page read: each column chunk's dictionary page
and the parts of the footer pyarrow does not hand to Python (`encoding_stats`, `size_statistics`).

A chunk whose data pages are all dictionary-encoded (the footer's `encoding_stats` say so: no data page
fell back to PLAIN) holds each of its distinct non-NULL values once in its dictionary page, so the union
of a partition's dictionaries is its exact NDV, and max(dᵢ) <= NDV <= Σ dᵢ holds from the pages' headers
alone. A writer that leaves `encoding_stats` out earns no exact NDV: its `encodings` list cannot tell a
dictionary page's PLAIN from a fallback's. `size_statistics` (PARQUET-2261) give a BYTE_ARRAY chunk's
bytes unencoded, which is a string column's total length where every value is ASCII.

Values are compared as Spark compares them: -0.0 and 0.0 are one value, and so are all NaNs.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..caches import BoundedCache
from ..files import FileState
from ..storage import UnreadableFile, storage_for
from .thrift_compact import ThriftError, read_struct

# Parquet's enums, as the footer writes them
_DICTIONARY_PAGE = 2
_DATA_PAGES = (0, 3)  # DATA_PAGE, DATA_PAGE_V2
_DICTIONARY_ENCODINGS = (2, 8)  # PLAIN_DICTIONARY, RLE_DICTIONARY
_CODECS = {"SNAPPY": "snappy", "GZIP": "gzip", "BROTLI": "brotli", "ZSTD": "zstd"}
NUMPY_TYPES = {"INT32": "<i4", "INT64": "<i8", "FLOAT": "<f4", "DOUBLE": "<f8"}
# a dictionary page's header, read before its size is known: headers hold no statistics, so this is ample
_HEADER_GUESS = 64
DECODED_VALUES_LIMIT = 4_000_000  # more distinct values than this over a partition's chunks: bounds only


@dataclass(frozen=True)
class ChunkFacts:
    """What the footer says of one column chunk beyond what pyarrow shows."""

    all_dictionary: bool | None  # every data page dictionary-encoded; None: the writer kept no encoding_stats
    unencoded_bytes: int | None  # SizeStatistics.unencoded_byte_array_data_bytes, where written


def raw_footer(state: FileState) -> dict[int, Any]:
    """The file's FileMetaData as Thrift fields (one ranged read of the footer's bytes)."""
    path, size, _ = state
    storage = storage_for(path)
    tail = storage.read_range(state, size - 8, size)
    length = struct.unpack("<I", tail[:4])[0]
    data = storage.read_range(state, size - 8 - length, size - 8)
    return read_struct(data)[0]


_facts = BoundedCache("chunk facts", lambda facts: 200 + 150 * len(facts))


def chunk_facts(state: FileState) -> dict[tuple[int, str], ChunkFacts]:
    """Each column chunk's facts by (row group, column path joined by dots); {} when the footer cannot be
    read as Thrift (pyarrow read it: the figures it gave stand). Read once per file state, as footers are
    (parsing a footer in Python is most of a metadata-only ANALYZE of an unchanged file)."""
    known = _facts.get(state)
    if known is None:
        known = _read_facts(state)
        _facts.put(state, known)
    return known


def _read_facts(state: FileState) -> dict[tuple[int, str], ChunkFacts]:
    try:
        footer = raw_footer(state)
    except ThriftError:
        return {}
    out = {}
    for index, group in enumerate(footer.get(4, [])):
        for chunk in group.get(1, []):
            meta = chunk.get(3) or {}
            path = ".".join(part.decode() for part in meta.get(3, []))
            stats = meta.get(13)
            all_dictionary = None
            if stats is not None:
                all_dictionary = all(entry.get(2) in _DICTIONARY_ENCODINGS for entry in stats
                                     if entry.get(1) in _DATA_PAGES and entry.get(3, 1) > 0)
            sizes = meta.get(16) or {}
            out[(index, path)] = ChunkFacts(all_dictionary, sizes.get(1))
    return out


@dataclass(frozen=True)
class Dictionary:
    """A chunk's dictionary page: its number of values (dᵢ) and, where decoded, the values themselves, as Spark
    tells values apart (a numpy array for numbers, a set of bytes for the others)."""

    size: int
    values: Any = None


def read_dictionary(state: FileState, chunk: pq.ColumnChunkMetaData, decode: bool,
                    type_length: int | None = None) -> Dictionary | None:
    """The chunk's dictionary page, its header alone unless `decode` (one ranged read either way where the
    footer places the dictionary before the first data page); None without one. With `decode`, `values` stays
    None for a codec or type this reads no values of. Raises UnreadableFile naming a damaged file."""
    if not chunk.has_dictionary_page:
        return None
    storage = storage_for(state[0])
    start = chunk.dictionary_page_offset or chunk.data_page_offset  # some writers leave the first 0
    ahead = chunk.data_page_offset - start if decode and chunk.data_page_offset > start else _HEADER_GUESS
    data = storage.read_range(state, start, start + ahead)
    try:
        header, body_start = read_struct(data)
    except ThriftError as exc:
        raise UnreadableFile(f"{state[0]} is damaged: its dictionary page at byte {start:,} cannot be read "
                             f"({exc})") from None
    if header.get(1) != _DICTIONARY_PAGE:
        return None
    count = int((header.get(7) or {}).get(1, 0))
    codec = chunk.compression
    if not decode or (codec != "UNCOMPRESSED" and codec not in _CODECS):
        return Dictionary(count)
    compressed = int(header[3])
    if body_start + compressed > len(data):
        data += storage.read_range(state, start + len(data), start + body_start + compressed)
    body = data[body_start:body_start + compressed]
    if codec != "UNCOMPRESSED":
        body = pa.decompress(body, int(header[2]), codec=_CODECS[codec]).to_pybytes()
    return Dictionary(count, _plain_values(body, chunk.physical_type, count, type_length))


def distinct_values(dictionaries: list[Dictionary]) -> Any:
    """The union of decoded dictionaries: a numpy array of the distinct numbers, or a set of the distinct bytes."""
    parts = [d.values for d in dictionaries]
    if parts and all(isinstance(p, np.ndarray) for p in parts):
        return pc.unique(pa.chunked_array([pa.array(p) for p in parts])).to_numpy()  # every NaN one value, as Spark
    out: set = set()
    for part in parts:
        out.update(part)
    return out


def _plain_values(body: bytes, physical: str, count: int, type_length: int | None) -> Any:
    if physical in NUMPY_TYPES:
        values = np.frombuffer(body, dtype=NUMPY_TYPES[physical], count=count)
        if physical in ("FLOAT", "DOUBLE"):
            return values.astype(np.float64) + 0.0  # -0.0 becomes 0.0: one value to Spark
        return values.astype(np.int64)
    if physical == "INT96":
        return {body[i * 12:(i + 1) * 12] for i in range(count)}
    if physical == "FIXED_LEN_BYTE_ARRAY" and type_length:
        return {body[i * type_length:(i + 1) * type_length] for i in range(count)}
    if physical == "BYTE_ARRAY":
        out, position = set(), 0
        for _ in range(count):
            length = struct.unpack_from("<I", body, position)[0]
            out.add(body[position + 4:position + 4 + length])
            position += 4 + length
        return out
    return None
