"""Merging partition statistics into table statistics without rescanning, as Hive aggregates them:
counts add, min of mins, max of maxes, NDV from the union of the sketches, lengths weighted
by row counts.
"""
from __future__ import annotations

import math

from ..coltypes import StatsKind
from ..metastore.model import STATS_DATA_CLASSES, ColumnStatisticsData, ColumnStatisticsObj
from .sketches import bounded_ndv, estimate, union

_RANGED = (StatsKind.LONG, StatsKind.DOUBLE, StatsKind.DECIMAL, StatsKind.DATE, StatsKind.TIMESTAMP)


def spark_order(value):
    """Sort key with Spark's double ordering: NaN above every number."""
    if isinstance(value, float) and math.isnan(value):
        return (1, 0.0)
    return (0, value)


def merge_column_stats(parts: list[tuple[ColumnStatisticsObj, int]]) -> ColumnStatisticsObj:
    """Table-level statistics of one column from (partition stats, partition row count) pairs.

    NDV comes from the union of the partitions' sketches; when a partition has no sketch the
    largest partition NDV is the best lower bound, as Hive falls back to.
    """
    if not parts:
        raise ValueError("nothing to merge")
    first = parts[0][0]
    kind = first.statsData.kind
    datas = [obj.statsData.value for obj, _ in parts]
    total_rows = sum(rows for _, rows in parts)
    nulls = sum(d.numNulls for d in datas)
    non_null = total_rows - nulls
    data_class = STATS_DATA_CLASSES[kind]
    sketch = None
    ndv = None
    if kind not in (StatsKind.BOOLEAN, StatsKind.BINARY):
        if all(d.bitVectors for d in datas if d.numDVs):
            sketch = union([d.bitVectors for d in datas])
            ndv = bounded_ndv(estimate(sketch), non_null)
        else:
            ndv = max(d.numDVs or 0 for d in datas)
    if kind in _RANGED:
        lows = [d.lowValue for d in datas if d.lowValue is not None]
        highs = [d.highValue for d in datas if d.highValue is not None]
        data = data_class(min(lows, key=spark_order) if lows else None,
                          max(highs, key=spark_order) if highs else None, nulls, ndv, sketch)
    elif kind in (StatsKind.STRING, StatsKind.BINARY):
        max_len = max(d.maxColLen or 0 for d in datas)
        avg_len = (sum(d.avgColLen * rows for d, (_, rows) in zip(datas, parts)) / total_rows) if total_rows else 0.0
        data = (data_class(max_len, avg_len, nulls, ndv, sketch) if kind is StatsKind.STRING
                else data_class(max_len, avg_len, nulls))
    else:
        data = data_class(sum(d.numTrues for d in datas), sum(d.numFalses for d in datas), nulls)
    return ColumnStatisticsObj(first.colName, first.colType, ColumnStatisticsData.of(data))


def merge_table_level(metastore, table, col_names: list[str], now: int) -> None:
    """Table-level statistics of a partitioned table's columns, merged from every partition's stored
    statistics (a metastore call, no scan)."""
    from ..metastore.model import ColumnStatistics, ColumnStatisticsDesc

    rows = {p.partName: int(p.parameters.get("numRows", 0) or 0)
            for p in metastore.get_partitions(table.dbName, table.tableName)}
    stored = metastore.get_partitions_statistics(table.dbName, table.tableName, None, col_names)
    merged = []
    for name in col_names:
        parts = [(stats.obj(name), rows.get(part_name, 0)) for part_name, stats in stored.items()
                 if any(o.colName == name for o in stats.statsObj)]
        if parts:
            merged.append(merge_column_stats(parts))
        elif metastore.get_table_statistics(table.dbName, table.tableName, [name]) is not None:
            metastore.delete_table_column_statistics(table.dbName, table.tableName, name)
    if merged:
        metastore.update_table_column_statistics(
            ColumnStatistics(ColumnStatisticsDesc(True, table.dbName, table.tableName, None, now), merged))
