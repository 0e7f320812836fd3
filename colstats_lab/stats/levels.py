"""Merging metadata up the levels (row group -> file -> partition -> segment -> table) without
rescanning: sums of counts, min of mins, max of maxes in Spark's ordering (NaN above every
number), HLL sketch unions for NDV. A figure unknown in any child is unknown in the parent.
"""
from __future__ import annotations

import math

from ..metastore.table_metadata import ColumnMetadata
from ..metastore.merge import spark_order
from ..metastore.sketches import bounded_ndv, estimate, union


def has_values(rows: int, column: ColumnMetadata) -> bool:
    """Whether the unit may hold non-null values of the column."""
    return column.nulls is None or rows - column.nulls > 0


def merge_column(children: list[tuple[int, ColumnMetadata]], name: str, type_name: str,
                 with_ndv: bool) -> ColumnMetadata:
    """One column's figures over the children's rows; children are (rows, column) pairs."""
    nulls = None if any(c.nulls is None for _, c in children) else sum(c.nulls for _, c in children)
    merged = ColumnMetadata(name, type_name, nulls=nulls, estimated=any(c.estimated for _, c in children))
    # a child that may hold values but has no min/max makes the parent's unknown
    if all(c.low is not None for rows, c in children if has_values(rows, c)):
        lows = [c.low for _, c in children if c.low is not None]
        highs = [c.high for _, c in children if c.high is not None]
        merged.low = min(lows, key=spark_order) if lows else None
        merged.high = max(highs, key=spark_order) if highs else None
    if with_ndv:
        if all(c.non_nulls is not None for _, c in children):
            merged.non_nulls = float(sum(c.non_nulls for _, c in children))
        if merged.non_nulls is not None and all(c.sketch is not None or not c.non_nulls for _, c in children):
            merged.sketch = union([c.sketch for _, c in children if c.sketch])
            merged.ndv = float(bounded_ndv(estimate(merged.sketch), math.ceil(merged.non_nulls)))
    return merged
