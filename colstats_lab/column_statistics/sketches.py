"""NDV sketches as the metastore keeps and merges them: DataSketches' HLL, serialized compact HLL_4,
unions that do not depend on order or grouping, and estimates bounded by the counts."""
from __future__ import annotations

from datasketches import hll_sketch, hll_union, tgt_hll_type

NDV_LG_K = 12  # 4,096 buckets: relative standard error about 1.6 %


def ndv_relative_error(lg_k: int = NDV_LG_K, sigmas: int = 3) -> float:
    """DataSketches' HLL bound: about 1.04 / sqrt(2^lgK) per standard deviation."""
    return sigmas * 1.04 / (2 ** lg_k) ** 0.5


def estimate(sketch: bytes | None) -> float:
    return hll_sketch.deserialize(sketch).get_estimate() if sketch else 0.0


def estimate_bounds(sketch: bytes, sigmas: int = 3) -> tuple[float, float, float]:
    """A sketch's estimate and DataSketches' bounds on the true count at `sigmas` standard deviations."""
    loaded = hll_sketch.deserialize(sketch)
    return loaded.get_estimate(), loaded.get_lower_bound(sigmas), loaded.get_upper_bound(sigmas)


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


def same_sketch(a: bytes | None, b: bytes | None) -> bool:
    """Whether two stored sketches hold the same coupons or registers, whatever order the values came in
    (DataSketches keeps a small sketch's coupons in arrival order, and an estimating one's HIP estimate
    depends on it)."""
    if a == b:
        return True
    if not a or not b:
        return False
    return _canonical(a) == _canonical(b)


def _canonical(sketch: bytes) -> bytes:
    mode = sketch[7] & 3  # DataSketches' HLL preamble: the current mode in the low bits of byte 7
    if mode in (0, 1):  # LIST (8-byte preamble) or SET (12): 4-byte coupons after it, in arrival order
        start = 8 if mode == 0 else 12
        coupons = sorted(sketch[i:i + 4] for i in range(start, len(sketch), 4))
        return sketch[:start] + b"".join(coupons)
    return union([sketch]) or b""  # registers, with the order-dependent HIP estimate set aside


def sketch_ndv(sketch: bytes | None, non_null: int) -> int:
    """A sketch's NDV estimate, bounded by the non-null rows it describes."""
    return bounded_ndv(estimate(sketch), non_null)


def bounded_ndv(estimate_value: float, non_null: int) -> int:
    """An NDV estimate made consistent with the counts: at least 1 and at most the non-null rows."""
    if non_null <= 0:
        return 0
    return int(min(max(round(estimate_value), 1), non_null))
