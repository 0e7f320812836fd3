"""NDV sketches: the bigint each column type is sketched as, and HLL unions in Python.

Spark 4's `hll_sketch_agg` takes int, bigint, string and binary; every column is sketched as a
bigint so one sketch format serves all types and merges across partitions. Integers, dates
(days) and timestamps (microseconds) are their exact value, booleans 0/1; doubles, floats,
decimals, strings and binaries their 64-bit xxhash. Spark hashes floating values from their
canonical bits, so -0.0 and 0.0 are one value and every NaN is one value, as SQL equality (and
`count(DISTINCT)`) treats them. Hashing also beats sketching strings directly (measured: the
hash runs in generated code, and DataSketches would skip the empty string). A null stays null
(xxhash64(NULL) would be 42).
"""
from __future__ import annotations

from datasketches import hll_sketch, hll_union, tgt_hll_type
from pyspark.sql import Column
from pyspark.sql import functions as F

from ..coltypes import parse_type

NDV_LG_K = 12  # 4,096 buckets: relative standard error about 1.6 %


def ndv_relative_error(lg_k: int = NDV_LG_K, sigmas: int = 3) -> float:
    """DataSketches' HLL bound: about 1.04 / sqrt(2^lgK) per standard deviation."""
    return sigmas * 1.04 / (2 ** lg_k) ** 0.5


def ndv_input(column: Column, type_name: str) -> Column:
    """The bigint image of a column's values that `hll_sketch_agg` counts."""
    base = parse_type(type_name).base
    if base in ("tinyint", "smallint", "int", "bigint"):
        return column.cast("bigint")
    if base == "boolean":
        return column.cast("bigint")
    if base == "date":
        return F.unix_date(column).cast("bigint")
    if base == "timestamp":
        return F.unix_micros(column)
    return F.when(column.isNotNull(), F.xxhash64(column))


def estimate(sketch: bytes | None) -> float:
    return hll_sketch.deserialize(sketch).get_estimate() if sketch else 0.0


def union(sketches: list[bytes], lg_k: int = NDV_LG_K) -> bytes | None:
    """The union of serialized sketches, serialized as they are stored (compact HLL_4); None when there
    are none.

    The result is a function of the inputs as a set, whatever their order or grouping: a union
    started from one estimating sketch keeps that sketch's order-dependent HIP estimate, so the
    result is merged into the union once more, which marks it out of order (the estimate then comes
    from the registers alone, which are the maximum per bucket in any grouping)."""
    present = [s for s in sketches if s]
    if not present:
        return None
    merged = hll_union(lg_k)
    for sketch in present:
        merged.update(hll_sketch.deserialize(sketch))
    merged.update(merged.get_result(tgt_hll_type.HLL_8))
    return merged.get_result(tgt_hll_type.HLL_4).serialize_compact()


def compact(sketch: bytes | None, lg_k: int = NDV_LG_K) -> bytes | None:
    """A sketch as the metastore stores it: DataSketches' compact HLL_4, the same registers and estimate
    as Spark's HLL_8 in about half the bytes once the sketch has left its exact list/set modes (2,096
    bytes instead of 4,136 at lgK 12)."""
    if not sketch:
        return None
    converted = hll_union(lg_k)
    converted.update(hll_sketch.deserialize(sketch))
    return converted.get_result(tgt_hll_type.HLL_4).serialize_compact()


def bounded_ndv(estimate_value: float, non_null: int) -> int:
    """An NDV estimate made consistent with the counts: at least 1 and at most the non-null rows."""
    if non_null <= 0:
        return 0
    return int(min(max(round(estimate_value), 1), non_null))
