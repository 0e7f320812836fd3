"""The metastore's objects, shaped and named as Hive's Thrift structs (field names included)."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache

from ..coltypes import StatsKind, collection_parts, parse_type, struct_fields
from ..errors import InvalidObjectException, NoSuchObjectException, did_you_mean
from ..file_columns import spellings
from .names import escape_path_name, make_part_name, parse_part_name

_EPOCH = dt.date(1970, 1, 1)
_EPOCH_TS = dt.datetime(1970, 1, 1)


@dataclass(frozen=True, order=True)
class Date:
    """Hive's Date: days since 1970-01-01."""

    daysSinceEpoch: int

    def to_date(self) -> dt.date:
        return _EPOCH + dt.timedelta(days=self.daysSinceEpoch)

    @classmethod
    def from_date(cls, value: dt.date) -> Date:
        return cls((value - _EPOCH).days)

    def __str__(self) -> str:
        return self.to_date().isoformat()


@dataclass(frozen=True, order=True)
class Timestamp:
    """A UTC instant in microseconds since the epoch: Spark's precision. Hive's Timestamp statistic is
    whole seconds (`secondsSinceEpoch`, rounded down), which is what its metastore columns hold."""

    microsSinceEpoch: int

    @property
    def secondsSinceEpoch(self) -> int:
        return self.microsSinceEpoch // 1_000_000

    def to_datetime(self) -> dt.datetime:
        return _EPOCH_TS + dt.timedelta(microseconds=self.microsSinceEpoch)

    @classmethod
    def from_datetime(cls, value: dt.datetime) -> Timestamp:
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        delta = value - _EPOCH_TS
        return cls((delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds)

    def __str__(self) -> str:
        text = self.to_datetime().isoformat(sep=" ")
        return text


@dataclass(frozen=True)
class Moments:
    """Not Hive's: the sum of a number column's values and the sum of their squared deviations from its mean,
    over the values that are neither NULL nor NaN, kept by ANALYZE's one pass so that a profile shows the mean
    and standard deviation with no second scan. The pass sums the values and their squares (two plain sums:
    the cheapest aggregates Spark has); each partition's deviations are their difference, kept as such, so
    that partitions merge by Chan et al.'s pairwise rule without cancelling again. Sums of whole numbers are
    exact below 2^53. The same pass counts the values equal to 0 (-0.0 among them): a profile's exact zeros."""

    sumValues: float
    sumSquaredDeviations: float | None  # None: unknown (the values' spread was lost to their magnitude)
    zeros: int | None = None  # None: not counted (kept before the lab counted them)

    def mean(self, count: int) -> float | None:
        return self.sumValues / count if count > 0 else None

    def stddev(self, count: int) -> float | None:
        """The sample standard deviation (n - 1, as pandas' and ydata-profiling's); None below two values or
        where the deviations are unknown."""
        if count <= 1 or self.sumSquaredDeviations is None:
            return None
        return (max(self.sumSquaredDeviations, 0.0) / (count - 1)) ** 0.5


def merged_moments(parts: list[tuple[Moments | None, int]]) -> Moments | None:
    """The moments of the union of parts given as (moments, values counted); None when a part with values
    has none (its values' sum is unknown) or no part has a value (as a scan's sum of no value is NULL). The zeros
    add up while every part with values counted its own."""
    total, count = 0.0, 0
    deviations: float | None = 0.0
    zeros: int | None = 0
    for moments, values in parts:
        if values <= 0:
            continue
        if moments is None:
            return None
        zeros = None if zeros is None or moments.zeros is None else zeros + moments.zeros
        if moments.sumSquaredDeviations is None or deviations is None:
            deviations = None
        elif count:
            delta = moments.sumValues / values - total / count
            deviations += moments.sumSquaredDeviations + delta * delta * count * values / (count + values)
        else:
            deviations = moments.sumSquaredDeviations
        total += moments.sumValues
        count += values
    return Moments(total, deviations, zeros) if count else None


@dataclass
class BooleanColumnStatsData:
    numTrues: int
    numFalses: int
    numNulls: int
    bitVectors: bytes | None = None


@dataclass
class LongColumnStatsData:
    lowValue: int | None
    highValue: int | None
    numNulls: int
    numDVs: int
    bitVectors: bytes | None = None
    histogram: bytes | None = None  # Hive 4's KLL sketch (HISTOGRAM), as Spark's kll_sketch_agg_* writes it
    moments: Moments | None = None


@dataclass
class DoubleColumnStatsData:
    """lowValue/highValue follow Spark's ordering, where NaN is larger than every number: the high value is NaN
    when any value is, as Spark's max() is. numNaNs (not Hive's; Iceberg's nan_value_counts) counts the NaN
    values apart from the NULLs; None where it was not counted (statistics another engine wrote)."""

    lowValue: float | None
    highValue: float | None
    numNulls: int
    numDVs: int
    bitVectors: bytes | None = None
    histogram: bytes | None = None
    numNaNs: int | None = None
    moments: Moments | None = None


@dataclass
class DecimalColumnStatsData:
    lowValue: Decimal | None
    highValue: Decimal | None
    numNulls: int
    numDVs: int
    bitVectors: bytes | None = None
    histogram: bytes | None = None
    moments: Moments | None = None


@dataclass
class DateColumnStatsData:
    lowValue: Date | None
    highValue: Date | None
    numNulls: int
    numDVs: int
    bitVectors: bytes | None = None
    histogram: bytes | None = None


@dataclass
class TimestampColumnStatsData:
    lowValue: Timestamp | None
    highValue: Timestamp | None
    numNulls: int
    numDVs: int
    bitVectors: bytes | None = None
    histogram: bytes | None = None


@dataclass
class StringColumnStatsData:
    """avgColLen is over all rows, a null counting as length 0 (Hive's definition); lengths in characters.
    `lengths` (not Hive's) is a KLL sketch of the non-NULL values' lengths, kept with the distributions
    (colstats.kll.enable): a profile's length histogram."""

    maxColLen: int
    avgColLen: float
    numNulls: int
    numDVs: int
    bitVectors: bytes | None = None
    lengths: bytes | None = None


@dataclass
class BinaryColumnStatsData:
    """Lengths in bytes, avgColLen over all rows and `lengths` as for strings."""

    maxColLen: int
    avgColLen: float
    numNulls: int
    bitVectors: bytes | None = None
    lengths: bytes | None = None


@dataclass
class CollectionColumnStatsData:
    """Not Hive's: an array's or map's statistics. lowValue/highValue are the fewest and most elements of a
    non-null one; avgColLen the elements per row, a NULL counting as none (Hive's avgColLen of strings, so
    that it merges over partitions the same way)."""

    lowValue: int | None
    highValue: int | None
    avgColLen: float
    numNulls: int
    bitVectors: bytes | None = None


@dataclass
class StructColumnStatsData:
    """Not Hive's: a struct column's own NULL count (rows where the whole struct is NULL). Its leaves are
    columns of their own, whose NULL counts include these rows."""

    numNulls: int
    bitVectors: bytes | None = None


STATS_DATA_CLASSES = {
    StatsKind.BOOLEAN: BooleanColumnStatsData,
    StatsKind.LONG: LongColumnStatsData,
    StatsKind.DOUBLE: DoubleColumnStatsData,
    StatsKind.DECIMAL: DecimalColumnStatsData,
    StatsKind.DATE: DateColumnStatsData,
    StatsKind.TIMESTAMP: TimestampColumnStatsData,
    StatsKind.STRING: StringColumnStatsData,
    StatsKind.BINARY: BinaryColumnStatsData,
    StatsKind.COLLECTION: CollectionColumnStatsData,
    StatsKind.STRUCT: StructColumnStatsData,
}


_UNION_MEMBERS = tuple(k.value for k in StatsKind)
_KIND_OF_MEMBER = {k.value: k for k in StatsKind}
_KIND_OF_CLASS = {data_class: kind for kind, data_class in STATS_DATA_CLASSES.items()}


@dataclass
class ColumnStatisticsData:
    """Thrift union: exactly one member is set."""

    booleanStats: BooleanColumnStatsData | None = None
    longStats: LongColumnStatsData | None = None
    doubleStats: DoubleColumnStatsData | None = None
    stringStats: StringColumnStatsData | None = None
    binaryStats: BinaryColumnStatsData | None = None
    decimalStats: DecimalColumnStatsData | None = None
    dateStats: DateColumnStatsData | None = None
    timestampStats: TimestampColumnStatsData | None = None
    collectionStats: CollectionColumnStatsData | None = None
    structStats: StructColumnStatsData | None = None

    def __post_init__(self):
        set_members = [m for m in _UNION_MEMBERS if getattr(self, m) is not None]
        if len(set_members) != 1:
            raise InvalidObjectException(f"ColumnStatisticsData is a union: exactly one member must be set, got {set_members}")
        self._kind = _KIND_OF_MEMBER[set_members[0]]

    @classmethod
    def of(cls, stats) -> ColumnStatisticsData:
        kind = _KIND_OF_CLASS.get(type(stats))
        if kind is None:
            raise InvalidObjectException(f"not a column stats struct: {type(stats).__name__}")
        return cls(**{kind.value: stats})

    @property
    def kind(self) -> StatsKind:
        return self._kind

    @property
    def value(self):
        """The one member that is set."""
        return getattr(self, self.kind.value)


@dataclass
class ColumnStatisticsObj:
    colName: str
    colType: str
    statsData: ColumnStatisticsData
    # not Hive's: the values' frequent-items sketch (metastore.settings.frequent_items), stored beside the row
    frequentItems: bytes | None = None
    # not Hive's: how many values the statistics describe when they are not the rows, as for the elements of
    # an array (`tags.element`) or the entries of a map (`attrs.key`); None: the rows
    numValues: int | None = None

    def __post_init__(self):
        expected = parse_type(self.colType).kept_stats_kind
        if expected is not None and self.statsData.kind is not expected:
            raise InvalidObjectException(f"column {self.colName} of type {self.colType} cannot carry {self.statsData.kind.value}")


@dataclass
class ColumnStatisticsDesc:
    isTblLevel: bool
    dbName: str
    tableName: str
    partName: str | None = None
    lastAnalyzed: int | None = None  # seconds since the epoch
    catName: str = "hive"


@dataclass
class ColumnStatistics:
    statsDesc: ColumnStatisticsDesc
    statsObj: list[ColumnStatisticsObj]
    # Set on reads: whether the stats are accurate for the reader (Hive's isStatsCompliant).
    isStatsCompliant: bool | None = None
    engine: str = "hive"

    def obj(self, col_name: str) -> ColumnStatisticsObj:
        for obj in self.statsObj:
            if obj.colName == col_name.lower():
                return obj
        raise KeyError(col_name)


@dataclass
class AggrStats:
    """Hive's AggrStats: statistics of columns over a set of partitions. `partsFound` counts the
    partitions holding statistics of every requested column; where a column's statistics are missing
    in some, its `colStats` entry is Hive's extrapolation to the whole set. The rest is ours: how many
    partitions were asked for, how many (and how many rows) hold each column's statistics, and
    `exact`, the union over the partitions that hold them (no extrapolation)."""

    colStats: list[ColumnStatisticsObj]
    partsFound: int
    isStatsCompliant: bool | None = None
    partsRequested: int = 0
    covered: dict[str, int] = field(default_factory=dict)
    covered_rows: dict[str, int] = field(default_factory=dict)  # numRows of the partitions in `covered`
    exact: list[ColumnStatisticsObj] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every requested partition holds statistics of every requested column."""
        return self.partsFound == self.partsRequested

    def coverage(self, col_name: str | None = None) -> str:
        """"covers 2 of 4 partitions", of one column or of every requested column together."""
        found = self.partsFound if col_name is None else self.covered.get(col_name.lower(), 0)
        return f"covers {found} of {self.partsRequested} partition{'s' if self.partsRequested != 1 else ''}"

    def obj(self, col_name: str) -> ColumnStatisticsObj | None:
        return next((o for o in self.colStats if o.colName == col_name.lower()), None)

    def exact_obj(self, col_name: str) -> ColumnStatisticsObj | None:
        return next((o for o in self.exact if o.colName == col_name.lower()), None)


@dataclass
class FieldSchema:
    name: str
    type: str
    comment: str | None = None


DEFAULT_LIST_BUCKETING_DIR_NAME = "HIVE_DEFAULT_LIST_BUCKETING_DIR_NAME"


@dataclass
class SkewedInfo:
    """Hive's SkewedInfo: the skewed columns, the skewed values (a list of strings per value, one per
    column), and where each value's rows are (the value-to-location map, filled as values get rows)."""

    skewedColNames: list[str]
    skewedColValues: list[list[str]]
    skewedColValueLocationMaps: dict[tuple[str, ...], str] = field(default_factory=dict)

    def directory_of(self, value: tuple[str, ...]) -> str:
        """The sub-directory, relative to a partition's delta or base directory, holding `value`'s rows."""
        return self.skewedColValueLocationMaps.get(tuple(value)) or "/".join(
            f"{escape_path_name(c)}={escape_path_name(v)}" for c, v in zip(self.skewedColNames, value, strict=True))

    @property
    def default_directory(self) -> str:
        """Rows matching no skewed value: the default name once per skewed column, as Hive nests it."""
        return "/".join([DEFAULT_LIST_BUCKETING_DIR_NAME] * len(self.skewedColNames))


@dataclass(frozen=True)
class ColumnPath:
    """A column statistics are kept for: a data column, a struct's leaf named by its `path`, or the elements of
    an array (`tags.element`) or the keys or values of a map (`attrs.key`, `attrs.value`)."""

    name: str              # as the metastore keys its statistics: `x`, `payload.user.id`, `tags.element`
    type: str
    path: tuple[str, ...]  # the column, then each struct field down to the leaf (then `element`, `key`, `value`)
    element: str = ""      # `element`, `key` or `value` for the values inside the collection at path[:-1]

    @property
    def is_leaf(self) -> bool:
        return len(self.path) > 1

    @property
    def is_element(self) -> bool:
        return bool(self.element)

    @property
    def is_collection(self) -> bool:
        return parse_type(self.type).is_collection

    @property
    def is_struct(self) -> bool:
        return parse_type(self.type).base == "struct"

    @property
    def collection(self) -> tuple[str, ...]:
        """The path of the array or map an element column's values are in."""
        return self.path[:-1]


def leaf_name(path: tuple[str, ...]) -> str:
    """A struct leaf's column name: the path's parts joined by dots, a part holding a dot in backticks."""
    return ".".join(f"`{part.replace('`', '``')}`" if "." in part or "`" in part else part for part in path)


@lru_cache(maxsize=256)  # asked per partition while planning over thousands of them
def _stats_columns_of(columns: tuple[tuple[str, str], ...]) -> tuple[tuple[ColumnPath, ...], frozenset[str]]:
    out: list[ColumnPath] = []
    for name, type_name in columns:
        _stats_leaves(out, name, (name,), type_name)
    return tuple(out), frozenset(c.name for c in out)


@lru_cache(maxsize=256)
def _figure_columns_of(columns: tuple[tuple[str, str], ...]) -> tuple[ColumnPath, ...]:
    out: list[ColumnPath] = []
    for name, type_name in columns:
        _stats_leaves(out, name, (name,), type_name, structs=True)
    return tuple(out)


def _stats_leaves(out: list[ColumnPath], name: str, path: tuple[str, ...], type_name: str,
                  structs: bool = False) -> None:
    fields = struct_fields(type_name)
    if fields:
        if structs:  # the struct's own NULL count, before its leaves
            out.append(ColumnPath(name, parse_type(type_name).name, path))
        for field_name, field_type in fields:
            sub = path + (field_name.lower(),)
            _stats_leaves(out, leaf_name(sub), sub, field_type, structs)
        return
    column_type = parse_type(type_name)
    if column_type.kept_stats_kind is None:
        return
    out.append(ColumnPath(name, column_type.name, path))
    # an array's elements and a map's keys and values get statistics of their own when they are scalars
    for part, part_type in collection_parts(type_name):
        if parse_type(part_type).stats_kind is not None:
            out.append(ColumnPath(leaf_name(path + (part,)), parse_type(part_type).name, path + (part,), part))


@dataclass
class Table:
    dbName: str
    tableName: str
    cols: list[FieldSchema]
    partitionKeys: list[FieldSchema] = field(default_factory=list)
    location: str = ""
    tableType: str = "MANAGED_TABLE"  # or EXTERNAL_TABLE
    inputFormat: str = "parquet"
    parameters: dict[str, str] = field(default_factory=dict)
    createTime: int = 0
    writeId: int = 0
    comment: str | None = None
    skewedInfo: SkewedInfo | None = None
    storedAsSubDirectories: bool = False  # list bucketing: one sub-directory per skewed value

    @property
    def qualified_name(self) -> str:
        return f"{self.dbName}.{self.tableName}"

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partitionKeys)

    @property
    def partition_key_names(self) -> list[str]:
        return [k.name for k in self.partitionKeys]

    @property
    def stats_column_names(self) -> set[str]:
        """The columns that carry column statistics: data columns of a type that has them, and the leaves of
        struct columns (`payload.user.id`)."""
        return set(_stats_columns_of(tuple((c.name, c.type) for c in self.cols))[1])

    @property
    def stats_columns(self) -> list[ColumnPath]:
        """The columns statistics are kept for, in the table's order: each data column of a type that has
        them, and in place of a struct column its leaves of such types, named by their path
        (`payload.user.id`; a field whose own name holds a dot quoted with backticks, as Spark does); each
        array or map, followed by its scalar elements (`tags.element`) or keys and values (`attrs.key`,
        `attrs.value`). Structs inside arrays and maps are not columns of their own."""
        return list(_stats_columns_of(tuple((c.name, c.type) for c in self.cols))[0])

    @property
    def struct_columns(self) -> list[ColumnPath]:
        """The struct columns, and the structs inside them, by their path (`payload`, `payload.user`): each keeps
        its own NULL count; arrays' and maps' structs are not columns of their own."""
        return [c for c in self.figure_columns if c.is_struct]

    @property
    def figure_columns(self) -> list[ColumnPath]:
        """`stats_columns` and `struct_columns` in the table's order, each struct before its leaves: every
        column a figure is kept for."""
        return list(_figure_columns_of(tuple((c.name, c.type) for c in self.cols)))

    def shared_statistics_names(self) -> list[str]:
        """Names two of the table's columns would keep their figures under: a column whose own name holds a dot
        (`a.b`) beside field `b` of a struct column `a`. The lab cannot keep both apart in Hive's schema (a
        statistic is keyed by its column's name), so such a table is refused rather than one given the other's."""
        names = [c.name for c in self.figure_columns] + [k.name for k in self.partitionKeys]
        return sorted({name for name in names if names.count(name) > 1})

    def stats_column(self, name: str) -> ColumnPath | None:
        lowered = name.lower()
        return next((c for c in self.stats_columns if c.name == lowered), None)

    def spelled(self, name: str) -> str:
        """A column's name as the table's files spell it (`userId`); the metastore's lower-case name when the
        files spell it so, or the table kept no spelling."""
        return spellings(self.parameters).get(name.lower(), name)

    def spelled_partition(self, name: str | None) -> str | None:
        """A partition's name with its keys as the table's files spell them (`eventDate=2026-01-01`); the name as
        it is when it is none (None, the table level's label) or the files spell the keys as Hive does."""
        return self.partition_speller()(name)

    def partition_speller(self):
        """spelled_partition for many names: the table's spellings read once."""
        spelling = {k.name: spellings(self.parameters).get(k.name, k.name) for k in self.partitionKeys}
        if all(k == v for k, v in spelling.items()):
            return lambda name: name

        def spelled(name: str | None) -> str | None:
            if not name or "=" not in name:
                return name
            pairs = parse_part_name(name)
            return make_part_name([spelling.get(k, k) for k, _ in pairs], [v for _, v in pairs])
        return spelled

    def no_such_column(self, name: str) -> NoSuchObjectException:
        """The error for a column (or struct leaf) this table lacks, naming the closest of its own as spelled."""
        known = [self.spelled(c.name) for c in self.cols + self.partitionKeys] + \
            [self.spelled(c.name) for c in self.figure_columns]
        return NoSuchObjectException(f"column {name} does not exist in table {self.qualified_name}"
                                     f"{did_you_mean(str(name), dict.fromkeys(known))}")

    def column(self, name: str) -> FieldSchema | None:
        lowered = name.lower()
        return next((c for c in self.cols + self.partitionKeys if c.name == lowered), None)

    def column_type(self, name: str) -> str:
        """The type of a column, partition key or struct leaf (`payload.user.id`); raises naming the column when
        the table has none."""
        column = self.column(name) or self.stats_column(name)
        if column is None:
            raise NoSuchObjectException(f"column {name} does not exist in {self.qualified_name}")
        return column.type


@dataclass
class Partition:
    dbName: str
    tableName: str
    values: list[str | None]
    location: str = ""
    parameters: dict[str, str] = field(default_factory=dict)
    createTime: int = 0
    writeId: int = 0
    keys: list[str] = field(default_factory=list)
    # the table's skew spec when the partition was created (Hive keeps it in the partition's SD)
    skewedInfo: SkewedInfo | None = None
    storedAsSubDirectories: bool = False

    @property
    def list_bucketing(self) -> SkewedInfo | None:
        """The skew spec the partition's files are laid out by, or None when they are not in sub-directories."""
        return self.skewedInfo if self.storedAsSubDirectories and self.skewedInfo else None

    @property
    def partName(self) -> str:
        # escaping is the cost of planning over 10,000 partitions: kept while keys and values stay the same
        key = (tuple(self.keys), tuple(self.values))
        cached = self.__dict__.get("_part_name")
        if cached is None or cached[0] != key:
            cached = self.__dict__["_part_name"] = (key, make_part_name(self.keys, self.values))
        return cached[1]

    @property
    def spec(self) -> dict[str, str | None]:
        return dict(zip(self.keys, self.values, strict=True))
