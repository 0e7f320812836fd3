"""Spark's equi-height histograms (`spark.sql.statistics.colStats.<col>.histogram`), both ways.

Spark keeps `Histogram(height, bins)`, each bin `(lo, hi, ndv)` with lo and hi as doubles of the value's
internal form (days for dates, microseconds for timestamps), serialized by `HistogramSerializer`: height
(double), the number of bins (int), every lo, every hi (doubles), every ndv (long) and -1 (int), all
big-endian (Java's DataOutputStream), through lz4-java's `LZ4BlockOutputStream`, then Base64. That
stream is a sequence of blocks: the magic `LZ4Block`, a token (method | level), the compressed and the
original length and an xxHash32 checksum (seed 0x9747b28c, masked to 28 bits) of the original bytes, all
little-endian, then the block; an empty block ends it. Blocks are LZ4-compressed by the lz4 library's
block compressor (LZ4's default, which lz4-java's fast compressor also is) and stored raw where that
does not make them smaller, as lz4-java does: the text is Spark's own, byte for byte.

From a stored KLL sketch the bins are Spark's: its percentiles i/numBins of the values (the smallest
value at or below which that share lies), height the non-null rows over numBins, and each bin's distinct
values counted as Spark counts them, while the sketch still holds every value. Past that (the sketch
compacts beyond 200 values) a bin whose bounds are equal holds one value and the column's other distinct
values are spread over the other bins in proportion to their width (at most the bin's height, and for
whole numbers at most the integers it spans): Spark counts them with a sketch per bin, which a KLL sketch
cannot give.
"""
from __future__ import annotations

import base64
import bisect
import struct
from dataclasses import dataclass
from itertools import pairwise

import lz4.block

from ..column_statistics.quantiles import SketchFamily, dump, new_sketch, sketch_family
from ..errors import ColstatsError

_MAGIC = b"LZ4Block"
_HEADER = struct.Struct("<8sBiii")
_RAW, _LZ4 = 0x10, 0x20
_LEVEL_BASE = 10
_BLOCK_SIZE = 64 * 1024
_SEED = 0x9747B28C
_PRIME = (2654435761, 2246822519, 3266489917, 668265263, 374761393)


class BadSparkHistogram(ColstatsError):
    """A histogram property that is not what Spark's HistogramSerializer writes (the text says where)."""


@dataclass(frozen=True)
class HistogramBin:
    lo: float
    hi: float
    ndv: int


@dataclass(frozen=True)
class SparkHistogram:
    height: float
    bins: tuple[HistogramBin, ...]

    def serialize(self) -> str:
        count = len(self.bins)
        payload = struct.pack(f">di{count}d{count}d{count}qi", self.height, count, *(b.lo for b in self.bins),
                              *(b.hi for b in self.bins), *(b.ndv for b in self.bins), -1)
        return base64.b64encode(_lz4_blocks(payload)).decode("ascii")

    @classmethod
    def deserialize(cls, text: str) -> SparkHistogram:
        data = _lz4_read(base64.b64decode(text))
        try:
            height, count = struct.unpack_from(">di", data)
            values = struct.unpack_from(f">{count}d{count}d{count}q", data, 12)
        except struct.error:
            raise BadSparkHistogram(f"a Spark histogram of {len(data)} bytes ends before its bins do") from None
        bins = tuple(HistogramBin(lo, hi, ndv) for lo, hi, ndv in
                     zip(values[:count], values[count:2 * count], values[2 * count:], strict=True))
        return cls(height, bins)


def histogram_from_sketch(distribution, non_null: int, ndv: int, num_bins: int, whole_numbers: bool,
                          endpoint=float) -> SparkHistogram | None:
    """Spark's equi-height histogram of `num_bins` bins from a KLL sketch of a column with `non_null`
    values and `ndv` distinct ones, by Spark's rules: the bins' bounds are Spark's percentiles of the
    values (`Distribution.spark_endpoints`, each made a double by `endpoint`: Spark writes a float's
    bound through its decimal text), and each bin's distinct values are counted as Spark's
    `approx_count_distinct_for_intervals` counts them while the sketch holds every value (`interval_ndvs`),
    else spread as the module's note says. None for an empty sketch."""
    bounds = [endpoint(v) for v in distribution.spark_endpoints(num_bins)]
    if not bounds or non_null <= 0:
        return None
    height = non_null / num_bins
    pairs = list(pairwise(bounds))
    values = distribution.exact_values()
    counts = interval_ndvs(bounds, [float(v) for v in values]) if values is not None else \
        _spread_ndvs(pairs, ndv, height, whole_numbers)
    return SparkHistogram(height, tuple(HistogramBin(lo, hi, count) for (lo, hi), count in zip(pairs, counts, strict=True)))


def interval_ndvs(endpoints: list[float], values: list[float]) -> list[int]:
    """The distinct values in each interval between `endpoints`, as Spark's ApproxCountDistinctForIntervals
    places them: the first interval holds both its bounds, each other one (lo, hi]; a value equal to
    several endpoints goes to the interval ending at the first of them; an interval whose bounds are
    equal counts 1, and values outside the endpoints none. Values as doubles (a float widened, as Spark
    widens it here)."""
    seen: list[set[float]] = [set() for _ in range(len(endpoints) - 1)]
    for value in values:
        if value < endpoints[0] or value > endpoints[-1] or value != value:
            continue
        at = bisect.bisect_left(endpoints, value)  # the first endpoint >= value
        seen[max(at - 1, 0)].add(value)
    return [1 if lo == hi else len(found) for (lo, hi), found in zip(pairwise(endpoints), seen, strict=True)]


def _spread_ndvs(pairs: list[tuple[float, float]], ndv: int, height: float, whole_numbers: bool) -> list[int]:
    """Each bin's distinct values when the sketch no longer holds every value: a bin whose bounds are equal
    holds 1, the column's other distinct values spread over the others by width, at most the bin's height
    and, for whole numbers, the integers it spans."""
    single = sum(1 for lo, hi in pairs if lo == hi)
    spread = max(ndv - single, 0)
    width = sum(hi - lo for lo, hi in pairs)
    counts = []
    for lo, hi in pairs:
        if lo == hi:
            counts.append(1)
            continue
        count = round(spread * (hi - lo) / width) if width else 1
        cap = min(height, hi - lo + 1) if whole_numbers else height
        counts.append(int(min(max(count, 1), max(cap, 1))))
    return counts


# ---- lz4-java's block stream --------------------------------------------------------------

def _lz4_blocks(payload: bytes) -> bytes:
    level = max(0, (_BLOCK_SIZE - 1).bit_length() - _LEVEL_BASE)
    out = bytearray()
    for start in range(0, len(payload), _BLOCK_SIZE):
        block = payload[start:start + _BLOCK_SIZE]
        packed = lz4.block.compress(block, mode="default", store_size=False)
        method, body = (_LZ4, packed) if len(packed) < len(block) else (_RAW, block)
        out += _HEADER.pack(_MAGIC, method | level, len(body), len(block), _checksum(block)) + body
    out += _HEADER.pack(_MAGIC, _RAW | level, 0, 0, 0)
    return bytes(out)


def _lz4_read(stream: bytes) -> bytes:
    out = bytearray()
    at = 0
    while at + _HEADER.size <= len(stream):
        magic, token, compressed, original, check = _HEADER.unpack_from(stream, at)
        if magic != _MAGIC:
            raise BadSparkHistogram(f"no LZ4Block magic at byte {at} of a Spark histogram")
        at += _HEADER.size
        if original == 0:
            break
        block = stream[at:at + compressed]
        at += compressed
        method = token & 0xF0
        if method not in (_RAW, _LZ4):
            raise BadSparkHistogram(f"unknown LZ4Block method {method:#x} in a Spark histogram")
        try:
            data = block if method == _RAW else lz4.block.decompress(block, uncompressed_size=original)
        except lz4.block.LZ4BlockError:
            raise BadSparkHistogram("a Spark histogram's LZ4 block does not decompress") from None
        if len(data) != original or _checksum(data) != check & 0x0FFFFFFF:
            raise BadSparkHistogram("a Spark histogram's block fails its checksum")
        out += data
    return bytes(out)


def _checksum(data: bytes) -> int:
    """lz4-java's block checksum: xxHash32 with its seed, masked to 28 bits."""
    return _xxh32(data, _SEED) & 0x0FFFFFFF


def _xxh32(data: bytes, seed: int) -> int:
    p1, p2, p3, p4, p5 = _PRIME
    mask = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    def round_(acc: int, lane: int) -> int:
        return (rotl((acc + lane * p2) & mask, 13) * p1) & mask

    n = len(data)
    at = 0
    if n >= 16:
        v = [(seed + p1 + p2) & mask, (seed + p2) & mask, seed & mask, (seed - p1) & mask]
        while at + 16 <= n:
            lanes = struct.unpack_from("<4I", data, at)
            v = [round_(a, lane) for a, lane in zip(v, lanes, strict=True)]
            at += 16
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & mask
    else:
        h = (seed + p5) & mask
    h = (h + n) & mask
    while at + 4 <= n:
        (lane,) = struct.unpack_from("<I", data, at)
        h = (rotl((h + lane * p3) & mask, 17) * p4) & mask
        at += 4
    while at < n:
        h = (rotl((h + data[at] * p5) & mask, 11) * p1) & mask
        at += 1
    h ^= h >> 15
    h = (h * p2) & mask
    h ^= h >> 13
    h = (h * p3) & mask
    h ^= h >> 16
    return h


POINTS_PER_BIN = 32


def sketch_from_histogram(histogram: SparkHistogram, type_name: str) -> bytes | None:
    """A KLL sketch (as the metastore stores one) holding Spark's histogram: POINTS_PER_BIN values spread
    evenly over each bin, so its ranks are Spark's within 1/numBins (Spark's own resolution) and the
    sketch's rank error. Its count is bins × POINTS_PER_BIN, not the column's values: use its fractions."""
    family = sketch_family(type_name)
    if family is None or not histogram.bins:
        return None
    sketch = new_sketch(family)
    for b in histogram.bins:
        for i in range(POINTS_PER_BIN):
            value = b.lo + (b.hi - b.lo) * (i + 0.5) / POINTS_PER_BIN if b.hi > b.lo else b.lo
            sketch.update(round(value) if family is SketchFamily.BIGINT else value)
    return dump(sketch, family)
