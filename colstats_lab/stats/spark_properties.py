"""Statistics as the table properties Spark's Hive catalog keeps, and conversion to and from Hive's stats.

Spark persists a table's statistics as properties (HiveExternalCatalog's `statsToProperties` /
`statsFromProperties`):

    spark.sql.statistics.totalSize             bytes
    spark.sql.statistics.numRows               rows (only after a scanning ANALYZE)
    spark.sql.statistics.colStats.<col>.<key>  key in version, distinctCount, nullCount, min, max,
                                               avgLen, maxLen, histogram

`CatalogStatistics` / `CatalogColumnStat` mirror Spark's classes: min and max are kept as Spark's
external strings (Java's `toString` of the value; dates `yyyy-MM-dd`; timestamps
`yyyy-MM-dd HH:mm:ss.SSSSSS` in UTC), so properties -> stats -> properties is the identity and
`to_external_string` / `from_external_string` round-trip every value of every type Spark supports.

Hive's statistics and Spark's are not the same set, so `column_stat_from_hive` and
`hive_stats_from_spark` are conversions, not round trips: Spark has no true/false counts for
booleans and measures string lengths over non-null values only (rounded up), Hive has no
histograms and keeps no min/max for strings.
"""
from __future__ import annotations

import bisect
import datetime as dt
import math
import warnings
from dataclasses import dataclass, field
from decimal import Context, Decimal
from itertools import pairwise
from typing import Any

import numpy as np

from ..coltypes import StatsKind, parse_type
from ..column_statistics.model import (
    BinaryColumnStatsData,
    BooleanColumnStatsData,
    ColumnStatisticsData,
    ColumnStatisticsObj,
    Date,
    DateColumnStatsData,
    DecimalColumnStatsData,
    DoubleColumnStatsData,
    LongColumnStatsData,
    StringColumnStatsData,
    Timestamp,
    TimestampColumnStatsData,
)
from ..column_statistics.quantiles import Distribution
from ..errors import ColstatsError
from .spark_histogram import HistogramBin, SparkHistogram, histogram_from_sketch, interval_ndvs, sketch_from_histogram

STATISTICS_PREFIX = "spark.sql.statistics."
TOTAL_SIZE = STATISTICS_PREFIX + "totalSize"
NUM_ROWS = STATISTICS_PREFIX + "numRows"
COL_STATS_PREFIX = STATISTICS_PREFIX + "colStats."
VERSION = 2
KEYS = ("version", "distinctCount", "min", "max", "nullCount", "avgLen", "maxLen", "histogram")
# Spark's spark.sql.sources.schemaStringLengthThreshold: the longest property value it writes in one piece
PROPERTY_LENGTH_THRESHOLD = 4000

_TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
_EPOCH = dt.datetime(1970, 1, 1)
# Spark's DataType.defaultSize, which ANALYZE reports as avgLen/maxLen of fixed-width columns.
_DEFAULT_SIZE = {"tinyint": 1, "smallint": 2, "int": 4, "bigint": 8, "float": 4, "double": 8, "date": 4,
                 "timestamp": 8, "timestamp_ntz": 8, "boolean": 1, "string": 20, "binary": 100}
_DECIMAL_MAX_LONG_DIGITS = 18
DEFAULT_NUM_BINS = 254  # spark.sql.statistics.histogram.numBins
_WHOLE = (StatsKind.LONG, StatsKind.DATE, StatsKind.TIMESTAMP)
_DECIMAL_CONTEXT = Context(prec=80)  # room for decimal(38, s) at any scale


class UnsupportedStatisticsType(ColstatsError):
    """A column type whose min/max Spark cannot (de)serialize."""


@dataclass(frozen=True)
class CatalogColumnStat:
    """Spark's CatalogColumnStat: min/max as external strings, counts as ints, `histogram` as Spark serialized it."""

    distinctCount: int | None = None
    min: str | None = None
    max: str | None = None
    nullCount: int | None = None
    avgLen: int | None = None
    maxLen: int | None = None
    histogram: str | None = None
    version: int = VERSION

    def to_map(self, col_name: str) -> dict[str, str]:
        """Spark's `toMap`: `<col>.<key>` -> value, with only the keys that are set (and always `version`);
        a histogram longer than a metastore value may be is split into `histogram.numParts` and
        `histogram.part.N` (N from 0), as Spark splits long property values."""
        entries = {"version": str(self.version)}
        for key in ("distinctCount", "nullCount", "avgLen", "maxLen", "min", "max"):
            value = getattr(self, key)
            if value is not None:
                entries[key] = str(value)
        if self.histogram is not None:
            if len(self.histogram) <= PROPERTY_LENGTH_THRESHOLD:
                entries["histogram"] = self.histogram
            else:
                parts = [self.histogram[i:i + PROPERTY_LENGTH_THRESHOLD]
                         for i in range(0, len(self.histogram), PROPERTY_LENGTH_THRESHOLD)]
                entries["histogram.numParts"] = str(len(parts))
                entries.update({f"histogram.part.{i}": part for i, part in enumerate(parts)})
        return {f"{col_name}.{key}": value for key, value in entries.items()}

    @classmethod
    def from_map(cls, col_name: str, entries: dict[str, str]) -> CatalogColumnStat:
        """Spark's `fromMap` over keys `<col>.<key>` (a split histogram joined again); the caller has checked
        `<col>.version` exists. Raises ValueError or KeyError on a malformed entry."""
        def get(key):
            return entries.get(f"{col_name}.{key}")

        def integer(key):
            value = get(key)
            return None if value is None else int(value)

        histogram = get("histogram")
        if get("histogram.numParts") is not None:
            histogram = "".join(entries[f"{col_name}.histogram.part.{i}"] for i in range(integer("histogram.numParts")))
        return cls(distinctCount=integer("distinctCount"), min=get("min"), max=get("max"),
                   nullCount=integer("nullCount"), avgLen=integer("avgLen"), maxLen=integer("maxLen"),
                   histogram=histogram, version=int(get("version")))


@dataclass(frozen=True)
class CatalogStatistics:
    """Spark's CatalogStatistics: `sizeInBytes`, optional `rowCount`, and stats per column name."""

    sizeInBytes: int | None  # None: the properties have no totalSize (Spark would not read them)
    rowCount: int | None = None
    colStats: dict[str, CatalogColumnStat] = field(default_factory=dict)


def stats_to_properties(stats: CatalogStatistics, column_names: list[str]) -> dict[str, str]:
    """Spark's `statsToProperties`: the properties for the table and every column of `column_names` with stats."""
    properties = {} if stats.sizeInBytes is None else {TOTAL_SIZE: str(stats.sizeInBytes)}
    if stats.rowCount is not None:
        properties[NUM_ROWS] = str(stats.rowCount)
    for name in column_names:
        if name in stats.colStats:
            for key, value in stats.colStats[name].to_map(name).items():
                properties[COL_STATS_PREFIX + key] = value
    return properties


def stats_from_properties(properties: dict[str, str], column_names: list[str]) -> CatalogStatistics | None:
    """Spark's `statsFromProperties`: None without any `spark.sql.statistics.` key; a column counts only
    when its `.version` marker is there, as in Spark."""
    statistics = {key: value for key, value in properties.items() if key.startswith(STATISTICS_PREFIX)}
    if not statistics:
        return None
    column_entries = {key[len(COL_STATS_PREFIX):]: value for key, value in statistics.items()
                      if key.startswith(COL_STATS_PREFIX)}
    col_stats = {}
    for name in column_names:
        if f"{name}.version" not in column_entries:
            continue
        try:
            col_stats[name] = CatalogColumnStat.from_map(name, column_entries)
        except (ValueError, KeyError) as exc:  # Spark logs the column it cannot parse and goes on
            warnings.warn(f"Failed to parse column statistics for column {name}: {exc!r}; skipped", stacklevel=2)
    row_count, size = statistics.get(NUM_ROWS), statistics.get(TOTAL_SIZE)
    return CatalogStatistics(sizeInBytes=None if size is None else int(size),
                             rowCount=None if row_count is None else int(row_count), colStats=col_stats)


# --- values -----------------------------------------------------------------------------------------

def _base(type_name) -> str:
    text = str(type_name).lower()
    return "timestamp_ntz" if text == "timestamp_ntz" else parse_type(text).base


def to_external_string(value, type_name) -> str:
    """Spark's `toExternalString`: a min/max value as Spark writes it for a column of `type_name`.

    Values: int for integral types, float for float/double, Decimal, datetime.date, datetime.datetime
    (a naive one is UTC for `timestamp`), bool. Raises UnsupportedStatisticsType for string and binary,
    whose min/max Spark does not keep."""
    base = _base(type_name)
    if base == "boolean":
        return "true" if value else "false"
    if base in ("tinyint", "smallint", "int", "bigint"):
        return str(int(value))
    if base == "double":
        return java_double_string(float(value))
    if base == "float":
        return java_float_string(float(value))
    if base == "decimal":
        _, scale = parse_type(str(type_name)).precision_scale
        return str(Decimal(value).quantize(Decimal(1).scaleb(-scale), context=_DECIMAL_CONTEXT))
    if base == "date":
        return value.isoformat()
    if base in ("timestamp", "timestamp_ntz"):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return (f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
                f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond:06d}")
    raise UnsupportedStatisticsType(f"Spark keeps no min/max for type {type_name}")


def from_external_string(text: str, type_name, version: int = VERSION):
    """Spark's `fromExternalString`: the value of a min/max property (version 1 timestamps may have
    fewer fraction digits, as java.sql.Timestamp wrote them)."""
    base = _base(type_name)
    if base == "boolean":
        if text not in ("true", "false"):
            raise ValueError(f"not a boolean: {text!r}")
        return text == "true"
    if base in ("tinyint", "smallint", "int", "bigint"):
        return int(text)
    if base == "double":
        return float(text)
    if base == "float":
        return float(np.float32(float(text)))
    if base == "decimal":
        return Decimal(text)
    if base == "date":
        return dt.date.fromisoformat(text)
    if base in ("timestamp", "timestamp_ntz"):
        if version == 1 and "." not in text:
            text += ".0"
        head, fraction = text.split(".")
        return dt.datetime.strptime(f"{head}.{fraction.ljust(6, '0')}", _TIMESTAMP_FORMAT)
    raise UnsupportedStatisticsType(f"Spark keeps no min/max for type {type_name}")


def java_double_string(value: float) -> str:
    """Java's `Double.toString`: `1.5`, `1.0E10`, `1.0E-5`, `NaN`, `Infinity` (shortest round-trip digits)."""
    return _java_decimal_string(value, repr(value))


def java_float_string(value: float) -> str:
    """Java's `Float.toString` of the float32 nearest `value` (Hive widens floats to doubles; Spark does not)."""
    as_float = np.float32(value)
    return _java_decimal_string(float(as_float), np.format_float_scientific(as_float, unique=True))


def _java_decimal_string(value: float, shortest: str) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0.0"
    digits_tuple = Decimal(shortest).normalize().as_tuple()
    digits = "".join(map(str, digits_tuple.digits))
    assert isinstance(digits_tuple.exponent, int)  # a finite value: NaN and infinities returned above
    exponent = digits_tuple.exponent + len(digits) - 1  # of the first digit
    if -3 <= exponent < 7:
        if exponent >= 0:
            whole, fraction = digits[:exponent + 1].ljust(exponent + 1, "0"), digits[exponent + 1:]
        else:
            whole, fraction = "0", "0" * (-exponent - 1) + digits
        return f"{sign}{whole}.{fraction or '0'}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


# --- Hive <-> Spark --------------------------------------------------------------------------------

def default_size(type_name) -> int:
    """Spark's `DataType.defaultSize` (what ANALYZE reports as avgLen and maxLen of fixed-width types)."""
    base = _base(type_name)
    if base == "decimal":
        precision, _ = parse_type(str(type_name)).precision_scale
        return 8 if precision <= _DECIMAL_MAX_LONG_DIGITS else 16
    return _DEFAULT_SIZE.get(base, _DEFAULT_SIZE["string"] if base in ("varchar", "char") else 8)


def column_stat_from_hive(obj: ColumnStatisticsObj, row_count: int, num_bins: int = DEFAULT_NUM_BINS,
                          histogram: bool = True) -> CatalogColumnStat:
    """What Spark's ANALYZE would have recorded, from Hive's stats of a column over `row_count` rows.

    Strings/binary: Spark's avgLen is the rounded-up mean length of non-null values (Hive's averages over
    all rows), and binary has no NDV in Hive so none is given. Booleans: min/max from the true/false counts.
    A column with a KLL sketch gets Spark's equi-height histogram of `num_bins` bins built from it (with
    `histogram`, as Spark's ANALYZE does with spark.sql.statistics.histogram.enabled; stats/spark_histogram.py)."""
    stats = obj.statsData.value
    kind = obj.statsData.kind
    size = default_size(obj.colType)
    if kind is StatsKind.BOOLEAN:
        present = [v for v, n in ((False, stats.numFalses), (True, stats.numTrues)) if n > 0]
        bounds = [to_external_string(v, "boolean") for v in present]
        return CatalogColumnStat(distinctCount=len(present), nullCount=stats.numNulls, avgLen=size, maxLen=size,
                                 min=bounds[0] if bounds else None, max=bounds[-1] if bounds else None)
    if kind in (StatsKind.STRING, StatsKind.BINARY):
        non_null = row_count - stats.numNulls
        total_length = round(stats.avgColLen * row_count)
        average = -(-total_length // non_null) if non_null > 0 else size
        return CatalogColumnStat(distinctCount=getattr(stats, "numDVs", None), nullCount=stats.numNulls,
                                 avgLen=average, maxLen=stats.maxColLen if non_null > 0 else size)
    sketch = Distribution.of(stats.histogram, obj.colType)
    # Spark writes a float's bin bounds through its decimal text, as its min and max
    endpoint = (lambda v: float(java_float_string(v))) if _base(obj.colType) == "float" else float
    bins = histogram_from_sketch(sketch, row_count - stats.numNulls, stats.numDVs or 0, num_bins,
                                 kind in _WHOLE, endpoint) if sketch is not None and histogram else None
    return CatalogColumnStat(distinctCount=stats.numDVs, nullCount=stats.numNulls, avgLen=size, maxLen=size,
                             min=_bound(stats.lowValue, obj.colType), max=_bound(stats.highValue, obj.colType),
                             histogram=bins.serialize() if bins is not None else None)


def rows_by_key_value(partitions, index: int) -> dict:
    """The rows each value of the `index`-th partition key holds, over `partitions` (their numRows)."""
    rows: dict = {}
    for part in partitions:
        value = part.values[index]
        rows[value] = rows.get(value, 0) + int(part.parameters.get("numRows", 0) or 0)
    return rows


def partition_column_stat(type_name: str, rows_by_value: dict, num_bins: int = DEFAULT_NUM_BINS,
                          histogram: bool = True) -> CatalogColumnStat:
    """What Spark's ANALYZE records for a partition column, from the partitions alone: every row of a
    partition holds its value (`rows_by_value`: the value's text, None for the default partition, to its
    rows), so nulls, distinct values, bounds and lengths follow exactly, and so does the equi-height
    histogram (Spark's percentiles of the rows, its per-bin distinct values) of a numeric, date or
    timestamp key."""
    base = _base(type_name)
    size = default_size(type_name)
    held = {v: n for v, n in rows_by_value.items() if n > 0}
    nulls = held.pop(None, 0)
    non_null = sum(held.values())
    if base in ("string", "varchar", "char"):
        longest = max((len(v) for v in held), default=0)
        total = sum(len(v) * n for v, n in held.items())
        return CatalogColumnStat(distinctCount=len(held), nullCount=nulls,
                                 avgLen=-(-total // non_null) if non_null else size,
                                 maxLen=longest if non_null else size)
    typed = sorted((_typed(v, base), n) for v, n in held.items())
    bounds = ([to_external_string(typed[0][0], type_name), to_external_string(typed[-1][0], type_name)]
              if typed else [None, None])
    bins = None
    if histogram and typed and base not in ("boolean",):
        bins = _weighted_histogram([(_as_double(v, base), n) for v, n in typed], non_null, num_bins)
    return CatalogColumnStat(distinctCount=len(held), nullCount=nulls, avgLen=size, maxLen=size, min=bounds[0],
                             max=bounds[1], histogram=bins.serialize() if bins is not None else None)


def _typed(text: str, base: str):
    if base in ("tinyint", "smallint", "int", "bigint"):
        return int(text)
    if base in ("float", "double"):
        return float(text)
    if base == "decimal":
        return Decimal(text)
    if base == "date":
        return dt.date.fromisoformat(text)
    if base in ("timestamp", "timestamp_ntz"):
        return dt.datetime.fromisoformat(text)
    if base == "boolean":
        return text.lower() == "true"
    raise UnsupportedStatisticsType(f"Spark keeps no statistics for a partition column of type {base}")


def _as_double(value, base: str) -> float:
    """A value as Spark's histogram holds it: days for dates, microseconds for timestamps."""
    if base == "date":
        return float((value - dt.date(1970, 1, 1)).days)
    if base in ("timestamp", "timestamp_ntz"):
        return float(Timestamp.from_datetime(value).microsSinceEpoch)
    if base == "float":
        return float(java_float_string(value))
    return float(value)


def _weighted_histogram(values: list[tuple[float, int]], total: int, num_bins: int) -> SparkHistogram:
    """Spark's histogram of `total` rows holding sorted distinct values with their row counts: each bound the
    value holding the ceil(i/numBins · total)-th row, each bin's distinct values as Spark places them."""
    cumulative, running = [], 0
    for _, count in values:
        running += count
        cumulative.append(running)
    bounds = [values[0][0]]
    for i in range(1, num_bins):
        rank = math.ceil(i / num_bins * total)
        bounds.append(values[bisect.bisect_left(cumulative, rank)][0])
    bounds.append(values[-1][0])
    counts = interval_ndvs(bounds, [v for v, _ in values])
    return SparkHistogram(total / num_bins, tuple(HistogramBin(lo, hi, n)
                                                  for (lo, hi), n in zip(pairwise(bounds), counts, strict=True)))


def _bound(value, type_name) -> str | None:
    if value is None:
        return None
    if isinstance(value, Date):
        value = value.to_date()
    elif isinstance(value, Timestamp):
        value = value.to_datetime()
    return to_external_string(value, type_name)


class NotConvertible(ColstatsError):
    """Spark's statistics of a column do not determine Hive's (the message says what is missing)."""


def hive_stats_from_spark(col_name: str, type_name: str, stat: CatalogColumnStat,
                          row_count: int) -> ColumnStatisticsObj:
    """Hive's statistics of a column from what Spark keeps; raises NotConvertible when they don't follow
    (no nullCount, or a boolean column holding both values: Spark keeps no true/false counts)."""
    if stat.nullCount is None:
        raise NotConvertible(f"column {col_name}: Spark recorded no nullCount")
    nulls = stat.nullCount
    ndv = stat.distinctCount or 0
    kind = parse_type(type_name).stats_kind
    data: Any  # the kind's own *ColumnStatsData class
    if kind is None:
        raise NotConvertible(f"column {col_name}: Hive keeps no statistics of type {type_name}")
    if kind is StatsKind.BOOLEAN:
        values = {from_external_string(v, "boolean") for v in (stat.min, stat.max) if v is not None}
        if len(values) == 2:
            raise NotConvertible(f"column {col_name}: Spark keeps min/max of a boolean, not how many are true")
        trues = row_count - nulls if values == {True} else 0
        falses = row_count - nulls if values == {False} else 0
        data = BooleanColumnStatsData(numTrues=trues, numFalses=falses, numNulls=nulls)
    elif kind in (StatsKind.STRING, StatsKind.BINARY):
        non_null = row_count - nulls
        average = (stat.avgLen or 0) * non_null / row_count if row_count else 0.0
        longest = (stat.maxLen or 0) if non_null > 0 else 0
        if kind is StatsKind.STRING:
            data = StringColumnStatsData(maxColLen=longest, avgColLen=average, numNulls=nulls, numDVs=ndv)
        else:
            data = BinaryColumnStatsData(maxColLen=longest, avgColLen=average, numNulls=nulls)
    else:
        low, high = (None if v is None else from_external_string(v, type_name, stat.version)
                     for v in (stat.min, stat.max))
        data = _ranged(kind, low, high, nulls, ndv)
        if stat.histogram:
            data.histogram = sketch_from_histogram(SparkHistogram.deserialize(stat.histogram), type_name)
    return ColumnStatisticsObj(col_name, type_name, ColumnStatisticsData.of(data))


def _ranged(kind: StatsKind, low, high, nulls: int, ndv: int):
    if kind is StatsKind.LONG:
        return LongColumnStatsData(lowValue=low, highValue=high, numNulls=nulls, numDVs=ndv)
    if kind is StatsKind.DOUBLE:
        return DoubleColumnStatsData(lowValue=low, highValue=high, numNulls=nulls, numDVs=ndv)
    if kind is StatsKind.DECIMAL:
        return DecimalColumnStatsData(lowValue=low, highValue=high, numNulls=nulls, numDVs=ndv)
    if kind is StatsKind.DATE:
        return DateColumnStatsData(lowValue=None if low is None else Date.from_date(low),
                                   highValue=None if high is None else Date.from_date(high),
                                   numNulls=nulls, numDVs=ndv)
    if kind is StatsKind.TIMESTAMP:
        return TimestampColumnStatsData(lowValue=None if low is None else Timestamp.from_datetime(low),
                                        highValue=None if high is None else Timestamp.from_datetime(high),
                                        numNulls=nulls, numDVs=ndv)
    raise UnsupportedStatisticsType(f"no Hive statistics for {kind}")
