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

import math
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..files import FileState
from ..storage import UnreadableFile, storage_for
from .thrift_compact import ThriftError, read_struct

# Parquet's enums, as the footer writes them
_DICTIONARY_PAGE = 2
_DATA_PAGES = (0, 3)  # DATA_PAGE, DATA_PAGE_V2
_DICTIONARY_ENCODINGS = (2, 8)  # PLAIN_DICTIONARY, RLE_DICTIONARY
_CODECS = {"SNAPPY": "snappy", "GZIP": "gzip", "BROTLI": "brotli", "ZSTD": "zstd"}
_NUMPY_TYPES = {"INT32": "<i4", "INT64": "<i8", "FLOAT": "<f4", "DOUBLE": "<f8"}
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


def chunk_facts(state: FileState) -> dict[tuple[int, str], ChunkFacts]:
    """Each column chunk's facts by (row group, column path joined by dots); {} when the footer cannot be
    read as Thrift (pyarrow read it: the figures it gave stand)."""
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


def dictionary_size(state: FileState, chunk: pq.ColumnChunkMetaData) -> int | None:
    """dᵢ, the values in the chunk's dictionary page, from the page's header alone; None without one."""
    start = _dictionary_start(chunk)
    if start is None:
        return None
    header, _ = read_struct(storage_for(state[0]).read_range(state, start, start + _HEADER_GUESS))
    return int((header.get(7) or {}).get(1, 0)) if header.get(1) == _DICTIONARY_PAGE else None


def dictionary_values(state: FileState, chunk: pq.ColumnChunkMetaData, type_length: int | None = None
                      ) -> set | None:
    """The distinct values of the chunk's dictionary page, as Spark tells values apart (one ranged read of the
    page); None when there is none or its codec or type is one this reads no values of."""
    start = _dictionary_start(chunk)
    codec = chunk.compression
    if start is None or (codec != "UNCOMPRESSED" and codec not in _CODECS):
        return None
    data = storage_for(state[0]).read_range(state, start, chunk.data_page_offset)
    try:
        header, body_start = read_struct(data)
    except ThriftError as exc:
        raise UnreadableFile(f"{state[0]} is damaged: its dictionary page at byte {start:,} cannot be read "
                             f"({exc})") from None
    if header.get(1) != _DICTIONARY_PAGE:
        return None
    count = int((header.get(7) or {}).get(1, 0))
    body = data[body_start:body_start + int(header[3])]
    if codec != "UNCOMPRESSED":
        body = pa.decompress(body, int(header[2]), codec=_CODECS[codec]).to_pybytes()
    return _plain_values(body, chunk.physical_type, count, type_length)


def _dictionary_start(chunk: pq.ColumnChunkMetaData) -> int | None:
    if not chunk.has_dictionary_page:
        return None
    # some writers leave dictionary_page_offset 0 and put the dictionary first: before the first data page
    offset = chunk.dictionary_page_offset
    return offset if offset else (chunk.data_page_offset if chunk.data_page_offset else None)


def _plain_values(body: bytes, physical: str, count: int, type_length: int | None) -> set | None:
    if physical in _NUMPY_TYPES:
        values = np.frombuffer(body, dtype=_NUMPY_TYPES[physical], count=count)
        if physical in ("FLOAT", "DOUBLE"):
            return {_spark_float(v) for v in values.tolist()}
        return set(values.tolist())
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


def _spark_float(value: float) -> Any:
    if math.isnan(value):
        return "NaN"
    return 0.0 if value == 0 else value
