"""Statistics over a set of partitions when some lack them: Hive's extrapolation (its column-stats
aggregators, the path taken when the partitions carry NDV sketches).

With every partition analyzed (or fewer than two analyzed) the statistics are merged as usual. Else
the analyzed partitions are points along the partition order (index 0 .. n-1 of the requested
partitions, by name); consecutive analyzed partitions whose sketches can be merged form one point at
their mean index, as Hive merges runs of bit vectors. Then, per statistic:

- nulls: the points' sum scaled by requested / analyzed partitions (integer arithmetic);
- low values: the smallest and largest point lows are extended along the line through them to the
  border the smallest lies toward (index 0, or n);
- high values, NDV, average and maximum lengths: the same toward the border the largest lies toward;
- NDV with `hive.metastore.stats.ndv.densityfunction`: (high - low) / the points' mean density
  ((high - low) / NDV), kept between the largest point NDV and the sum of them;
- booleans and binaries: the analyzed partitions merged, nothing extrapolated (Hive's aggregators
  for those types do not extrapolate).
"""
from __future__ import annotations

import math
from decimal import Decimal

from ...coltypes import StatsKind
from ...column_statistics.merge import merge_stats_column
from ...column_statistics.model import (
    STATS_DATA_CLASSES,
    AggrStats,
    ColumnStatisticsData,
    ColumnStatisticsObj,
    Date,
    Timestamp,
)
from ...column_statistics.stats_rows import StatsColumn

_NOT_EXTRAPOLATED = (StatsKind.BOOLEAN, StatsKind.BINARY, StatsKind.COLLECTION, StatsKind.STRUCT)
_RANGED = (StatsKind.LONG, StatsKind.DOUBLE, StatsKind.DECIMAL, StatsKind.DATE, StatsKind.TIMESTAMP)


def aggregate_partitions(col_names: list[str], columns: dict[str, StatsColumn], part_names: list[str],
                         density: bool = False) -> AggrStats:
    """AggrStats of `col_names` over `part_names` (in the order to extrapolate along) from each column's
    statistics in the partitions that have them."""
    index_of = {name: i for i, name in enumerate(part_names)}
    extrapolated, exact, covered, covered_rows = [], [], {}, {}
    for name in col_names:
        column = columns.get(name)
        if column is None or not column.rows:
            covered[name] = covered_rows[name] = 0
            continue
        covered[name], covered_rows[name] = len(column.rows), sum(column.rows)
        exact.append(merge_stats_column(column))
        extrapolated.append(_extrapolated(column, index_of, len(part_names), density))
    complete = [set(columns[n].parts) for n in col_names if covered[n]]
    parts_found = len(set.intersection(*complete)) if complete and len(complete) == len(col_names) else 0
    return AggrStats(colStats=extrapolated, partsFound=parts_found, partsRequested=len(part_names),
                     covered=covered, covered_rows=covered_rows, exact=exact)


def _extrapolated(column: StatsColumn, index_of: dict[str, int], num_parts: int,
                  density: bool) -> ColumnStatisticsObj:
    found = len(column.rows)
    if found == num_parts or found < 2 or column.kind in _NOT_EXTRAPOLATED:
        return merge_stats_column(column)
    points = _points(column, index_of)
    data_class = STATS_DATA_CLASSES[column.kind]
    nulls = sum(column.nulls) * num_parts // found
    if column.kind in _RANGED:
        low = _toward_border([(p.lows[0], i) for i, p in points if p.lows[0] is not None], num_parts, lowest=True)
        high = _toward_border([(p.highs[0], i) for i, p in points if p.highs[0] is not None], num_parts,
                              lowest=False)
        ndv = _ndv(column.kind, points, low, high, num_parts, density)
        data = data_class(low, high, nulls, ndv)
        if column.kind is StatsKind.DOUBLE and column.nans and None not in column.nans:
            data.numNaNs = sum(column.nans) * num_parts // found  # scaled as the nulls are
    else:  # strings
        ndv = _toward_border([(p.ndvs[0], i) for i, p in points], num_parts, lowest=False)
        max_len = _toward_border([(p.max_lens[0], i) for i, p in points], num_parts, lowest=False)
        avg_len = _toward_border([(float(p.avg_lens[0]), i) for i, p in points], num_parts, lowest=False)
        data = data_class(int(max_len), float(avg_len), nulls, int(ndv))
    return ColumnStatisticsObj(column.name, column.col_type, ColumnStatisticsData.of(data),
                               numValues=sum(column.rows) * num_parts // found if column.counts_values else None)


def _points(column: StatsColumn, index_of: dict[str, int]) -> list[tuple[float, StatsColumn]]:
    """(index, one-partition statistics) per analyzed partition; with sketches in every one, runs of
    consecutive partitions merged into one point at their mean index."""
    order = sorted(range(len(column.rows)), key=lambda i: index_of[column.parts[i]])
    has_ndv = column.kind not in _NOT_EXTRAPOLATED
    if not (has_ndv and all(column.sketches[i] for i in order)):
        return [(float(index_of[column.parts[i]]), _single(column.subset([i]))) for i in order]
    runs: list[list[int]] = []
    for i in order:
        if runs and index_of[column.parts[runs[-1][-1]]] + 1 == index_of[column.parts[i]]:
            runs[-1].append(i)
        else:
            runs.append([i])
    return [(sum(index_of[column.parts[i]] for i in run) / len(run), _single(column.subset(run))) for run in runs]


def _single(column: StatsColumn) -> StatsColumn:
    """A column's statistics in one or more partitions as one entry (merged when several)."""
    if len(column.rows) == 1:
        return column
    data = merge_stats_column(column).statsData.value
    merged = StatsColumn(column.name, column.col_type, column.kind, counts_values=column.counts_values)
    merged.add(sum(column.rows), data.numNulls, getattr(data, "lowValue", None), getattr(data, "highValue", None),
               getattr(data, "numDVs", None), data.bitVectors, getattr(data, "avgColLen", None),
               getattr(data, "maxColLen", None), None, None)
    return merged


def _toward_border(values: list[tuple[object, float]], num_parts: int, lowest: bool):
    """The line through the points holding the smallest and the largest value, followed to the border
    the smallest (for a low value) or the largest (otherwise) lies toward: index 0 or `num_parts`."""
    numbers = [(v, i) for v, i in values if not _is_nan(v)]
    if len(numbers) < len(values) and (not lowest or not numbers):
        return float("nan")  # Spark orders NaN above every number
    if not numbers:
        return None
    values = numbers
    (small, small_at), (large, large_at) = min(values, key=_key), max(values, key=_key)
    if small_at == large_at:
        return small
    a, b = _number(small), _number(large)
    if lowest:
        reach = large_at / (large_at - small_at) if small_at < large_at \
            else (num_parts - large_at) / (small_at - large_at)
        return _like(small, b - (b - a) * reach)
    reach = (num_parts - small_at) / (large_at - small_at) if small_at < large_at \
        else small_at / (small_at - large_at)
    return _like(small, a + (b - a) * reach)


def _ndv(kind: StatsKind, points: list[tuple[float, StatsColumn]], low, high, num_parts: int, density: bool) -> int:
    ndvs = [p.ndvs[0] or 0 for _, p in points]
    if density and low is not None and high is not None:
        densities = [_density(kind, p.lows[0], p.highs[0], p.ndvs[0]) for _, p in points]
        average = sum(densities) / len(densities)
        if average:
            estimate = int((_number(high) - _number(low)) / average)
            return min(max(estimate, max(ndvs)), sum(ndvs))
    return int(_toward_border([(n, i) for n, (i, _) in zip(ndvs, points, strict=True)], num_parts, lowest=False))


def _density(kind: StatsKind, low, high, ndv) -> float:
    """(high - low) / NDV of one point; whole-number types divide as integers, as Hive's longs do."""
    if low is None or high is None or not ndv:
        return 0.0
    span = _number(high) - _number(low)
    if kind in (StatsKind.LONG, StatsKind.DATE, StatsKind.TIMESTAMP):
        return float(int(span / ndv))
    return span / ndv


def _key(item):
    value, index = item
    return (_number(value), index)


def _is_nan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _number(value):
    if isinstance(value, Date):
        return value.daysSinceEpoch
    if isinstance(value, Timestamp):
        return value.microsSinceEpoch
    if isinstance(value, Decimal):
        return float(value)
    return value


def _like(example, number: float):
    """`number` in the type of `example`, truncated toward zero for whole-number types as Hive casts."""
    if isinstance(example, Date):
        return Date(int(number))
    if isinstance(example, Timestamp):
        return Timestamp(int(number))
    if isinstance(example, Decimal):
        return Decimal(repr(float(number)))
    if isinstance(example, bool) or isinstance(example, int):
        return int(number)
    return float(number)
