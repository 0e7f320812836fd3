"""Converting a ColumnStatisticsObj to a TAB_COL_STATS / PART_COL_STATS row and back.

LOW_VALUE / HIGH_VALUE hold the exact value as text (what a person reads in `%sql`, and what
decoding reads back: NaN survives, which a SQLite REAL does not); the typed columns
(LONG_*, DOUBLE_*, BIG_DECIMAL_*) hold the same value for SQL comparisons, as Hive's do.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal

from ..coltypes import StatsKind, parse_type
from ..errors import InvalidInputException
from .model import (
    STATS_DATA_CLASSES,
    ColumnStatisticsData,
    ColumnStatisticsObj,
    Date,
    Moments,
    Timestamp,
)

ROW_COLUMNS = (
    "COLUMN_NAME", "COLUMN_TYPE", "LOW_VALUE", "HIGH_VALUE", "LONG_LOW_VALUE", "LONG_HIGH_VALUE",
    "DOUBLE_LOW_VALUE", "DOUBLE_HIGH_VALUE", "BIG_DECIMAL_LOW_VALUE", "BIG_DECIMAL_HIGH_VALUE",
    "NUM_NULLS", "NUM_DISTINCTS", "BIT_VECTOR", "AVG_COL_LEN", "MAX_COL_LEN", "NUM_TRUES", "NUM_FALSES",
    "LOW_VALUE_MICROS", "HIGH_VALUE_MICROS", "HISTOGRAM", "NUM_VALUES", "NUM_NANS",
    "SUM_VALUES", "SUM_SQUARED_DEVIATIONS", "NUM_ZEROS", "LENGTH_HISTOGRAM",
)

_MOMENT_KINDS = (StatsKind.LONG, StatsKind.DECIMAL)  # and DOUBLE, read with its NaN count
_RANGED = (StatsKind.LONG, StatsKind.DOUBLE, StatsKind.DECIMAL, StatsKind.DATE, StatsKind.TIMESTAMP)


def value_to_text(kind: StatsKind, value) -> str | None:
    if value is None:
        return None
    if kind is StatsKind.DOUBLE:
        return repr(float(value))
    return str(value)


def text_to_value(kind: StatsKind, text: str | None):
    if text is None:
        return None
    if kind in (StatsKind.LONG, StatsKind.COLLECTION):
        return int(text)
    if kind is StatsKind.DOUBLE:
        return float(text)
    if kind is StatsKind.DECIMAL:
        return Decimal(text)
    if kind is StatsKind.DATE:
        return Date.from_date(dt.date.fromisoformat(text))
    if kind is StatsKind.TIMESTAMP:
        return Timestamp.from_datetime(dt.datetime.fromisoformat(text))
    raise ValueError(kind)


def _typed(kind: StatsKind, value):
    """(long, double, decimal text) column values for one low/high value, in Hive's units (a timestamp
    in whole seconds)."""
    if value is None:
        return None, None, None
    if kind in (StatsKind.LONG, StatsKind.COLLECTION):
        return int(value), None, None
    if kind is StatsKind.DATE:
        return value.daysSinceEpoch, None, None
    if kind is StatsKind.TIMESTAMP:
        return value.secondsSinceEpoch, None, None
    if kind is StatsKind.DOUBLE:
        return None, (None if value != value else float(value)), None
    return None, None, str(value)


def obj_to_row(obj: ColumnStatisticsObj) -> dict:
    """The row's values for one column's statistics; raises InvalidInputException on a malformed object."""
    return dict(zip(ROW_COLUMNS, obj_to_values(obj), strict=True))


def obj_to_values(obj: ColumnStatisticsObj) -> tuple:
    """The row's values for one column's statistics in ROW_COLUMNS order (the bulk path: no dict per row)."""
    kind = obj.statsData.kind
    if parse_type(obj.colType).kept_stats_kind is not kind:
        raise InvalidInputException(f"column {obj.colName} of type {obj.colType} cannot carry {kind.value}")
    nulls = obj.statsData.value.numNulls
    if nulls is None or nulls < 0:
        raise InvalidInputException(f"column {obj.colName}: numNulls must be a count, got {nulls!r}")
    if obj.numValues is not None and obj.numValues < nulls:
        raise InvalidInputException(f"column {obj.colName}: numNulls {nulls} exceeds its {obj.numValues} values")
    return figures_to_values(obj)


def figures_to_values(obj: ColumnStatisticsObj) -> tuple:
    """obj_to_values without its checks, for figures that may be unknown (None): a history state of
    Drill's metadata, which counts no true/false values or lengths and may not know the nulls."""
    col_type = parse_type(obj.colType)
    kind = obj.statsData.kind
    data = obj.statsData.value
    low = high = long_low = long_high = double_low = double_high = decimal_low = decimal_high = None
    ndv = avg_len = max_len = trues = falses = micros_low = micros_high = histogram = lengths = None
    if kind in _RANGED:
        low, high = value_to_text(kind, data.lowValue), value_to_text(kind, data.highValue)
        long_low, double_low, decimal_low = _typed(kind, data.lowValue)
        long_high, double_high, decimal_high = _typed(kind, data.highValue)
        if kind is StatsKind.TIMESTAMP:  # the exact instants, beside Hive's seconds
            micros_low = None if data.lowValue is None else data.lowValue.microsSinceEpoch
            micros_high = None if data.highValue is None else data.highValue.microsSinceEpoch
        ndv, histogram = data.numDVs, data.histogram
    elif kind is StatsKind.STRING:
        avg_len, max_len, ndv, lengths = data.avgColLen, data.maxColLen, data.numDVs, data.lengths
    elif kind is StatsKind.BINARY:
        avg_len, max_len, lengths = data.avgColLen, data.maxColLen, data.lengths
    elif kind is StatsKind.BOOLEAN:
        trues, falses = data.numTrues, data.numFalses
    elif kind is StatsKind.COLLECTION:  # the fewest and most elements where Hive keeps a long's range
        low, high = value_to_text(kind, data.lowValue), value_to_text(kind, data.highValue)
        long_low, long_high, avg_len, max_len = data.lowValue, data.highValue, data.avgColLen, data.highValue
    nans = data.numNaNs if kind is StatsKind.DOUBLE else None
    moments = getattr(data, "moments", None)
    return (obj.colName.lower(), col_type.name, low, high, long_low, long_high, double_low, double_high,
            decimal_low, decimal_high, data.numNulls, ndv, data.bitVectors, avg_len, max_len, trues, falses,
            micros_low, micros_high, histogram, obj.numValues, nans,
            *((moments.sumValues, moments.sumSquaredDeviations, moments.zeros) if moments is not None
              else (None, None, None)), lengths)


def row_to_obj(row) -> ColumnStatisticsObj:
    col_type = parse_type(row["COLUMN_TYPE"])
    kind = col_type.stored_stats_kind
    data_class = STATS_DATA_CLASSES[kind]
    common = dict(numNulls=row["NUM_NULLS"], bitVectors=row["BIT_VECTOR"])
    if kind is StatsKind.DOUBLE:
        data = data_class(lowValue=text_to_value(kind, row["LOW_VALUE"]),
                          highValue=text_to_value(kind, row["HIGH_VALUE"]),
                          numDVs=row["NUM_DISTINCTS"], histogram=row["HISTOGRAM"], numNaNs=_column(row, "NUM_NANS"),
                          moments=row_moments(_column(row, "SUM_VALUES"), _column(row, "SUM_SQUARED_DEVIATIONS"),
                                              _column(row, "NUM_ZEROS")),
                          **common)
    elif kind in _MOMENT_KINDS:
        data = data_class(lowValue=text_to_value(kind, row["LOW_VALUE"]),
                          highValue=text_to_value(kind, row["HIGH_VALUE"]), numDVs=row["NUM_DISTINCTS"],
                          histogram=row["HISTOGRAM"],
                          moments=row_moments(_column(row, "SUM_VALUES"), _column(row, "SUM_SQUARED_DEVIATIONS"),
                                              _column(row, "NUM_ZEROS")),
                          **common)
    elif kind in _RANGED:
        data = data_class(lowValue=text_to_value(kind, row["LOW_VALUE"]),
                          highValue=text_to_value(kind, row["HIGH_VALUE"]),
                          numDVs=row["NUM_DISTINCTS"], histogram=row["HISTOGRAM"], **common)
    elif kind is StatsKind.STRING:
        data = data_class(maxColLen=row["MAX_COL_LEN"], avgColLen=row["AVG_COL_LEN"],
                          numDVs=row["NUM_DISTINCTS"], lengths=_column(row, "LENGTH_HISTOGRAM"), **common)
    elif kind is StatsKind.BINARY:
        data = data_class(maxColLen=row["MAX_COL_LEN"], avgColLen=row["AVG_COL_LEN"],
                          lengths=_column(row, "LENGTH_HISTOGRAM"), **common)
    elif kind is StatsKind.COLLECTION:
        data = data_class(lowValue=row["LONG_LOW_VALUE"], highValue=row["LONG_HIGH_VALUE"],
                          avgColLen=row["AVG_COL_LEN"], **common)
    elif kind is StatsKind.STRUCT:
        data = data_class(**common)
    else:
        data = data_class(numTrues=row["NUM_TRUES"], numFalses=row["NUM_FALSES"], **common)
    return ColumnStatisticsObj(row["COLUMN_NAME"], col_type.name, ColumnStatisticsData.of(data),
                               numValues=_value_count(row))


def row_moments(total: float | None, deviations: float | None, zeros: int | None = None) -> Moments | None:
    """A number column's kept sums from SUM_VALUES, SUM_SQUARED_DEVIATIONS and NUM_ZEROS (None: not kept; the
    deviations alone None: their spread was lost to the values' magnitude)."""
    return None if total is None else Moments(float(total), None if deviations is None else float(deviations),
                                              None if zeros is None else int(zeros))


def _value_count(row) -> int | None:
    """NUM_VALUES of a row, read by name (a history row written before it existed has none)."""
    return _column(row, "NUM_VALUES")


def _column(row, name: str):
    """A column of a row read by name; None for a row read without it (written before it existed)."""
    try:
        return row[name]
    except (IndexError, KeyError):
        return None


@dataclass
class StatsColumn:
    """One column's statistics in many partitions as parallel lists, one entry per partition: what a
    merge needs, without building an object per partition (100,000 partitions merge in about a second)."""

    name: str
    col_type: str
    kind: StatsKind
    rows: list[int] = field(default_factory=list)
    nulls: list[int] = field(default_factory=list)
    lows: list = field(default_factory=list)
    highs: list = field(default_factory=list)
    ndvs: list = field(default_factory=list)
    sketches: list = field(default_factory=list)
    avg_lens: list = field(default_factory=list)
    max_lens: list = field(default_factory=list)
    trues: list = field(default_factory=list)
    falses: list = field(default_factory=list)
    parts: list = field(default_factory=list)  # the partition names, when read from the metastore
    histograms: list = field(default_factory=list)
    counts_values: bool = False  # `rows` are the values counted (an array's elements), not the partitions' rows
    nans: list = field(default_factory=list)  # a double's NaN values (None: not counted)
    moments: list = field(default_factory=list)  # a number's kept sums (Moments; None: not kept)
    lengths: list = field(default_factory=list)  # a string's or binary's KLL sketch of its lengths (None: not kept)

    @classmethod
    def from_objects(cls, parts: list[tuple[ColumnStatisticsObj, int]]) -> StatsColumn:
        """From (statistics, partition rows) pairs of one column (the values an object counts, where it counts
        other values than the rows)."""
        first = parts[0][0]
        column = cls(first.colName, first.colType, first.statsData.kind,
                     counts_values=first.numValues is not None)
        for obj, rows in parts:
            data = obj.statsData.value
            column.add(rows if obj.numValues is None else obj.numValues, data.numNulls,
                       getattr(data, "lowValue", None), getattr(data, "highValue", None),
                       getattr(data, "numDVs", None), data.bitVectors, getattr(data, "avgColLen", None),
                       getattr(data, "maxColLen", None), getattr(data, "numTrues", None),
                       getattr(data, "numFalses", None), getattr(data, "histogram", None),
                       getattr(data, "numNaNs", None), getattr(data, "moments", None), getattr(data, "lengths", None))
        return column

    @classmethod
    def from_rows(cls, rows: list[tuple]) -> StatsColumn:
        """From rows of (COLUMN_NAME, COLUMN_TYPE, the values counted (NUM_VALUES, else the partition's
        numRows), NUM_NULLS, LOW_VALUE, the exact low as an integer (LONG_LOW_VALUE, or LOW_VALUE_MICROS for
        a timestamp), HIGH_VALUE, the exact high, NUM_DISTINCTS, BIT_VECTOR, AVG_COL_LEN, MAX_COL_LEN,
        NUM_TRUES, NUM_FALSES, PART_NAME, HISTOGRAM, whether NUM_VALUES is set, NUM_NANS, SUM_VALUES,
        SUM_SQUARED_DEVIATIONS, NUM_ZEROS, LENGTH_HISTOGRAM) of one column."""
        name, col_type = rows[0][0], rows[0][1]
        kind = parse_type(col_type).stored_stats_kind
        (_, _, part_rows, nulls, lows, long_lows, highs, long_highs, ndvs, sketches, avg_lens, max_lens,
         trues, falses, parts, histograms, counted, nans, sums, deviations, zeros, lengths) = (
            list(values) for values in zip(*rows, strict=True))
        if kind in (StatsKind.LONG, StatsKind.DATE, StatsKind.TIMESTAMP, StatsKind.COLLECTION):
            # exact as integers: LONG_* for whole numbers, element counts and dates (days), *_MICROS for timestamps
            wrap = {StatsKind.DATE: Date, StatsKind.TIMESTAMP: Timestamp}.get(kind)
            lows, highs = ([v if v is None or wrap is None else wrap(v) for v in typed] for typed in (long_lows, long_highs))
        else:
            lows, highs = ([text_to_value(kind, v) for v in texts] for texts in (lows, highs))
        return cls(name, col_type, kind, part_rows, nulls, lows, highs, ndvs, sketches, avg_lens, max_lens,
                   trues, falses, parts, histograms, any(counted), nans,
                   [row_moments(t, d, z) for t, d, z in zip(sums, deviations, zeros, strict=True)], lengths)

    def subset(self, indexes: list[int]) -> StatsColumn:
        """The same column in the partitions at `indexes` only."""
        pick = lambda values: [values[i] for i in indexes] if values else []  # noqa: E731
        return StatsColumn(self.name, self.col_type, self.kind, pick(self.rows), pick(self.nulls), pick(self.lows),
                           pick(self.highs), pick(self.ndvs), pick(self.sketches), pick(self.avg_lens),
                           pick(self.max_lens), pick(self.trues), pick(self.falses), pick(self.parts),
                           pick(self.histograms), self.counts_values, pick(self.nans), pick(self.moments),
                           pick(self.lengths))

    def add(self, rows, nulls, low, high, ndv, sketch, avg_len, max_len, trues, falses, histogram=None,
            nans=None, moments=None, lengths=None) -> None:
        self.rows.append(rows)
        self.nulls.append(nulls)
        self.lows.append(low)
        self.highs.append(high)
        self.ndvs.append(ndv)
        self.sketches.append(sketch)
        self.avg_lens.append(avg_len)
        self.max_lens.append(max_len)
        self.trues.append(trues)
        self.falses.append(falses)
        self.histograms.append(histogram)
        self.nans.append(nans)
        self.moments.append(moments)
        self.lengths.append(lengths)

