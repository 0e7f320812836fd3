"""Merging statistics up the levels without rescanning: the one set of rules for Hive's levels
(partition -> segment -> table, as `SegmentStats` and `ColumnStatisticsObj`), which Drill's (row group ->
file -> partition -> segment -> table, `metastore.metadata_units.merge_metadata_column`) follow too. Counts add,
min of mins and max of maxes in Spark's order (NaN above every number), the NDV from the union of the sketches
bounded by the non-null rows. Every rule is exact in any grouping (integers, min/max, register-wise sketch unions), so a level
merged from segments equals a flat merge of every part.

The two differ only where the systems they follow do, on a figure some part lacks:
- Hive's aggregators count a missing count as zero and, when a part with values has no sketch, fall back
  to the largest part NDV as a lower bound (what its aggregators do without bit vectors);
- Drill's metadata leaves the parent's figure unknown: a child that may hold values but has no min/max
  makes the parent's unknown, since pruning on a narrower range would drop rows.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..coltypes import StatsKind
from .model import STATS_DATA_CLASSES, ColumnStatisticsData, ColumnStatisticsObj, Moments, merged_moments
from .quantiles import SketchFamily, sketch_family
from .quantiles import merge as merge_histograms
from .sketches import sketch_ndv, union
from .stats_rows import StatsColumn

_RANGED = (StatsKind.LONG, StatsKind.DOUBLE, StatsKind.DECIMAL, StatsKind.DATE, StatsKind.TIMESTAMP,
           StatsKind.COLLECTION)
_MOMENT_KINDS = (StatsKind.LONG, StatsKind.DECIMAL, StatsKind.DOUBLE)



@dataclass
class SegmentStats:
    """One column's statistics merged over a set of partitions, kept in the form that merges again
    to the same figures in any grouping: counts and the total length as integers, the union of the
    sketches with whether every partition with values had one, and the largest partition NDV
    (Hive's fallback when some partition has no sketch)."""

    col_type: str
    kind: StatsKind
    parts: int
    rows: int
    nulls: int
    low: Any
    high: Any
    sketch: bytes | None
    all_sketched: bool
    max_ndv: int
    total_len: int
    max_len: int
    trues: int
    falses: int
    histogram: bytes | None = None  # the union of the KLL sketches; None when a part with values has none
    nans: int | None = None  # a double's NaN values; None when a part did not count its own
    moments: Moments | None = None  # a number's sums; None when a part with values kept none
    lengths: bytes | None = None  # a string's KLL sketch of lengths, merged as `histogram` is


def spark_order(value):
    """Sort key with Spark's double ordering: NaN above every number."""
    if isinstance(value, float) and math.isnan(value):
        return (1, 0.0)
    return (0, value)


def merged_range(lows: Iterable[Any], highs: Iterable[Any]) -> tuple[Any, Any]:
    """The min of the known lows and the max of the known highs, in Spark's order (None: none known)."""
    present_lows = [v for v in lows if v is not None]
    present_highs = [v for v in highs if v is not None]
    return (min(present_lows, key=spark_order) if present_lows else None,
            max(present_highs, key=spark_order) if present_highs else None)


# ---- Hive's levels ------------------------------------------------------------------------

def merge_column_stats(parts: list[tuple[ColumnStatisticsObj, int]]) -> ColumnStatisticsObj:
    """Table-level statistics of one column from (partition stats, partition row count) pairs."""
    if not parts:
        raise ValueError("nothing to merge")
    return merge_stats_column(StatsColumn.from_objects(parts))


def merge_stats_column(column: StatsColumn) -> ColumnStatisticsObj:
    """Table-level statistics of one column from its statistics in every partition."""
    return segment_to_obj(column.name, merge_partitions(column), column.counts_values)


def merge_partitions(column: StatsColumn) -> SegmentStats:
    """One column's statistics in many partitions merged into a segment."""
    lengths = [round((a or 0.0) * r) for a, r in zip(column.avg_lens, column.rows, strict=True)] if column.avg_lens else []
    return _merged(column.col_type, column.kind, len(column.rows), column.rows, column.nulls, column.lows,
                   column.highs, column.sketches, [bool(s) or not n for s, n in zip(column.sketches, column.ndvs, strict=True)],
                   [n or 0 for n in column.ndvs], lengths, column.max_lens, column.trues, column.falses,
                   column.histograms or [None] * len(column.rows), column.nans or [None] * len(column.rows),
                   column.moments or [None] * len(column.rows), column.lengths or [None] * len(column.rows))


def merge_segments(parts: list[SegmentStats]) -> SegmentStats:
    """Segments of one column merged into one: the same figures as merging their partitions at once."""
    first = parts[0]
    pick = lambda attribute: [getattr(p, attribute) for p in parts]  # noqa: E731
    return _merged(first.col_type, first.kind, sum(pick("parts")), pick("rows"), pick("nulls"), pick("low"),
                   pick("high"), pick("sketch"), pick("all_sketched"), pick("max_ndv"), pick("total_len"),
                   pick("max_len"), pick("trues"), pick("falses"), pick("histogram"), pick("nans"), pick("moments"),
                   pick("lengths"))


def _merged(col_type, kind, parts, rows, nulls, lows, highs, sketches, all_sketched, max_ndvs, lengths, max_lens,
            trues, falses, histograms, nans, moments, length_sketches) -> SegmentStats:
    """Hive's rules on parallel lists: counts add (lengths as whole totals, so that the row-weighted
    average length comes out the same in any grouping), the merged range, the union of the sketches
    while every part with values has one, else the largest part NDV as the lower bound Hive falls back to.
    The KLL sketches merge while every part with values has one: a union missing a part would describe
    other rows than the merged level's. The sums merge by Chan's rule over each part's values (neither NULL
    nor NaN), while every part with values kept its own; so do the sketches of a string's lengths."""
    sketched = all(all_sketched) and kind not in (StatsKind.BOOLEAN, StatsKind.BINARY, StatsKind.COLLECTION,
                                                  StatsKind.STRUCT)
    low, high = merged_range(lows, highs) if kind in _RANGED else (None, None)
    family = sketch_family(col_type)
    complete = all(h is not None or r - (n or 0) <= 0 for h, r, n in zip(histograms, rows, nulls, strict=True))
    histogram = merge_histograms(histograms, family) if family is not None and complete else None
    lengths_kept = kind in (StatsKind.STRING, StatsKind.BINARY) and any(length_sketches) and all(
        s is not None or r - (n or 0) <= 0 for s, r, n in zip(length_sketches, rows, nulls, strict=True))
    merged_lengths = merge_histograms(length_sketches, SketchFamily.BIGINT) if lengths_kept else None
    return SegmentStats(col_type, kind, parts, sum(rows), sum(n or 0 for n in nulls), low, high,
                        union(sketches) if sketched else None, sketched, max(max_ndvs, default=0),
                        sum(lengths), max((n or 0 for n in max_lens), default=0),
                        sum(n or 0 for n in trues), sum(n or 0 for n in falses), histogram,
                        None if kind is not StatsKind.DOUBLE or None in nans else sum(nans),
                        merged_moments([(m, r - (n or 0) - (nan or 0))
                                        for m, r, n, nan in zip(moments, rows, nulls, nans, strict=True)])
                        if kind in _MOMENT_KINDS else None, merged_lengths)


def segment_to_obj(name: str, merged: SegmentStats, counts_values: bool = False) -> ColumnStatisticsObj:
    """Table-level statistics of a column from its statistics merged over every partition; `counts_values`
    for a column whose values are not the rows (an array's elements: the merged rows are its values)."""
    kind, data_class = merged.kind, STATS_DATA_CLASSES[merged.kind]
    ndv, sketch = None, None
    if kind is StatsKind.COLLECTION:
        avg = merged.total_len / merged.rows if merged.rows else 0.0
        return ColumnStatisticsObj(name, merged.col_type, ColumnStatisticsData.of(
            data_class(merged.low, merged.high, avg, merged.nulls)))
    if kind is StatsKind.STRUCT:
        return ColumnStatisticsObj(name, merged.col_type, ColumnStatisticsData.of(data_class(merged.nulls)))
    if kind not in (StatsKind.BOOLEAN, StatsKind.BINARY):
        if merged.all_sketched:
            sketch = merged.sketch
            ndv = sketch_ndv(sketch, merged.rows - merged.nulls)
        else:
            ndv = merged.max_ndv
    if kind is StatsKind.DOUBLE:
        data = data_class(merged.low, merged.high, merged.nulls, ndv, sketch, merged.histogram, merged.nans,
                          merged.moments)
    elif kind in _MOMENT_KINDS:
        data = data_class(merged.low, merged.high, merged.nulls, ndv, sketch, merged.histogram, merged.moments)
    elif kind in _RANGED:
        data = data_class(merged.low, merged.high, merged.nulls, ndv, sketch, merged.histogram)
    elif kind in (StatsKind.STRING, StatsKind.BINARY):
        avg_len = merged.total_len / merged.rows if merged.rows else 0.0
        data = (data_class(merged.max_len, avg_len, merged.nulls, ndv, sketch, merged.lengths)
                if kind is StatsKind.STRING else data_class(merged.max_len, avg_len, merged.nulls, None, merged.lengths))
    else:
        data = data_class(merged.trues, merged.falses, merged.nulls)
    return ColumnStatisticsObj(name, merged.col_type, ColumnStatisticsData.of(data),
                               numValues=merged.rows if counts_values else None)
