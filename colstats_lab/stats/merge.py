"""Merging partition statistics into table statistics without rescanning, as Hive aggregates them:
counts add, min of mins, max of maxes, NDV from the union of the sketches, lengths weighted
by row counts.
"""
from __future__ import annotations

import math

from ..coltypes import StatsKind
from ..metastore.model import STATS_DATA_CLASSES, ColumnStatisticsData, ColumnStatisticsObj
from ..metastore.stats_rows import StatsColumn
from .sketches import bounded_ndv, estimate, union

_RANGED = (StatsKind.LONG, StatsKind.DOUBLE, StatsKind.DECIMAL, StatsKind.DATE, StatsKind.TIMESTAMP)


def spark_order(value):
    """Sort key with Spark's double ordering: NaN above every number."""
    if isinstance(value, float) and math.isnan(value):
        return (1, 0.0)
    return (0, value)


def merge_column_stats(parts: list[tuple[ColumnStatisticsObj, int]]) -> ColumnStatisticsObj:
    """Table-level statistics of one column from (partition stats, partition row count) pairs."""
    if not parts:
        raise ValueError("nothing to merge")
    return merge_stats_column(StatsColumn.from_objects(parts))


def merge_stats_column(column: StatsColumn) -> ColumnStatisticsObj:
    """Table-level statistics of one column from its statistics in every partition.

    NDV comes from the union of the partitions' sketches; when a partition has no sketch the
    largest partition NDV is the best lower bound, as Hive falls back to.
    """
    kind = column.kind
    total_rows = sum(column.rows)
    nulls = sum(column.nulls)
    data_class = STATS_DATA_CLASSES[kind]
    sketch = None
    ndv = None
    if kind not in (StatsKind.BOOLEAN, StatsKind.BINARY):
        if all(s for s, n in zip(column.sketches, column.ndvs) if n):
            sketch = union(column.sketches)
            ndv = bounded_ndv(estimate(sketch), total_rows - nulls)
        else:
            ndv = max(n or 0 for n in column.ndvs)
    if kind in _RANGED:
        lows = [v for v in column.lows if v is not None]
        highs = [v for v in column.highs if v is not None]
        order = spark_order if kind is StatsKind.DOUBLE else None  # only doubles have NaN
        data = data_class(min(lows, key=order) if lows else None,
                          max(highs, key=order) if highs else None, nulls, ndv, sketch)
    elif kind in (StatsKind.STRING, StatsKind.BINARY):
        max_len = max(n or 0 for n in column.max_lens)
        avg_len = (sum(a * r for a, r in zip(column.avg_lens, column.rows)) / total_rows) if total_rows else 0.0
        data = (data_class(max_len, avg_len, nulls, ndv, sketch) if kind is StatsKind.STRING
                else data_class(max_len, avg_len, nulls))
    else:
        data = data_class(sum(column.trues), sum(column.falses), nulls)
    return ColumnStatisticsObj(column.name, column.col_type, ColumnStatisticsData.of(data))


def merge_table_level(metastore, table, col_names: list[str], now: int) -> None:
    """Table-level statistics of a partitioned table's columns, merged from every partition's stored
    statistics (a metastore call, no scan)."""
    from ..metastore.model import ColumnStatistics, ColumnStatisticsDesc

    stored = metastore.partition_stats_columns(table.dbName, table.tableName, col_names)
    merged = []
    for name in col_names:
        column = stored.get(name.lower())
        if column is not None:
            merged.append(merge_stats_column(column))
        elif metastore.get_table_statistics(table.dbName, table.tableName, [name]) is not None:
            metastore.delete_table_column_statistics(table.dbName, table.tableName, name)
    if merged:
        metastore.store_merged_table_statistics(
            ColumnStatistics(ColumnStatisticsDesc(True, table.dbName, table.tableName, None, now), merged))
