"""Reading Thrift's compact protocol, which Parquet's footer and page headers are written in, into nested
dicts keyed by field id: the parts of a footer pyarrow does not hand to Python (each column chunk's
`encoding_stats` and `size_statistics`) and a dictionary page's header.

A struct is a dict of field id to value, a list a list, a binary `bytes`; unknown fields are read and kept,
so a newer writer's footer reads as well as an older one's.
"""
from __future__ import annotations

import struct
from typing import Any

from ..errors import StorageError

_STOP, _TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(13)


class ThriftError(StorageError, ValueError):
    """The bytes end before the struct does, or hold a type the protocol does not have (a damaged file; the
    caller names it)."""


class CompactReader:
    """Reads compact-protocol values from `data` starting at `position`; `position` follows the reads."""

    def __init__(self, data: bytes, position: int = 0):
        self.data = data
        self.position = position

    def _byte(self) -> int:
        if self.position >= len(self.data):
            raise ThriftError("the bytes end inside a Thrift struct")
        value = self.data[self.position]
        self.position += 1
        return value

    def varint(self) -> int:
        shift = result = 0
        while True:
            byte = self._byte()
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7

    def zigzag(self) -> int:
        value = self.varint()
        return (value >> 1) ^ -(value & 1)

    def _bytes(self, length: int) -> bytes:
        if self.position + length > len(self.data):
            raise ThriftError("the bytes end inside a Thrift binary")
        value = self.data[self.position:self.position + length]
        self.position += length
        return value

    def value(self, kind: int) -> Any:
        if kind in (_TRUE, _FALSE):  # inside a list or map a boolean is a byte of its own
            return self._byte() == _TRUE
        if kind == _BYTE:
            return self._byte()
        if kind in (_I16, _I32, _I64):
            return self.zigzag()
        if kind == _DOUBLE:
            return struct.unpack("<d", self._bytes(8))[0]
        if kind == _BINARY:
            return self._bytes(self.varint())
        if kind in (_LIST, _SET):
            header = self._byte()
            size, element = header >> 4, header & 0x0F
            if size == 15:
                size = self.varint()
            return [self.value(element) for _ in range(size)]
        if kind == _MAP:
            size = self.varint()
            if not size:
                return {}
            kinds = self._byte()
            return {self.value(kinds >> 4): self.value(kinds & 0x0F) for _ in range(size)}
        if kind == _STRUCT:
            return self.struct()
        raise ThriftError(f"unknown Thrift compact type {kind}")

    def struct(self) -> dict[int, Any]:
        fields: dict[int, Any] = {}
        last = 0
        while True:
            header = self._byte()
            kind = header & 0x0F
            if kind == _STOP:
                return fields
            delta = header >> 4
            last = last + delta if delta else self.zigzag()
            # a boolean field carries its value in its type
            fields[last] = (kind == _TRUE) if kind in (_TRUE, _FALSE) else self.value(kind)


def read_struct(data: bytes, position: int = 0) -> tuple[dict[int, Any], int]:
    """The struct at `position` of `data`, and the position just after it."""
    reader = CompactReader(data, position)
    return reader.struct(), reader.position
