"""Distribution sketches as the metastore keeps them (Hive 4's HISTOGRAM column): DataSketches' KLL in
the bytes Spark's `kll_sketch_agg_bigint / _float / _double` write, read, merged and asked for quantiles
and ranks here.

Whole numbers, dates (days since the epoch) and timestamps (microseconds since the epoch) are sketched
as longs, floats as floats, doubles and decimals as doubles (a decimal of more than 15 significant
digits comes back rounded). Python's datasketches reads Spark's doubles and floats sketches as they are;
it has no longs sketch, so the bigint ones are read and written as an items sketch of Python ints
(`PyLongsSerDe` lays each item out as the longs sketch does: Spark reads them back). Nulls and NaN are
in no sketch (KLL ignores NaN), so every figure is over the non-null, non-NaN values.

Quartiles follow Hive's definition: ranks 0.25, 0.5 and 0.75 asked with the exclusive criterion, which on
exact data is the sorted value at 0-based index floor(r · n).
"""
from __future__ import annotations

import atexit
import weakref

import enum
from typing import Any, Iterable

import numpy
from datasketches import PyLongsSerDe, kll_doubles_sketch, kll_floats_sketch, kll_items_sketch

from ..coltypes import StatsKind, parse_type
from .model import Date, Timestamp

KLL_K = 200  # Spark's and Hive's default: about 1.33 % normalized rank error
QUARTILE_RANKS = (0.25, 0.5, 0.75)


class SketchFamily(enum.Enum):
    """Which of Spark's KLL aggregates sketches a column (the suffix of its function name)."""

    BIGINT = "bigint"
    FLOAT = "float"
    DOUBLE = "double"




def sketch_family(type_name: str) -> SketchFamily | None:
    """The family of a column type's KLL sketch; None for types without one (strings, booleans, ...)."""
    col_type = parse_type(type_name)
    kind = col_type.stats_kind
    if kind in (StatsKind.LONG, StatsKind.DATE, StatsKind.TIMESTAMP):
        return SketchFamily.BIGINT
    if kind is StatsKind.DOUBLE:
        return SketchFamily.FLOAT if col_type.name == "float" else SketchFamily.DOUBLE
    if kind is StatsKind.DECIMAL:
        return SketchFamily.DOUBLE
    return None


def load(blob: bytes, family: SketchFamily):
    if family is SketchFamily.BIGINT:
        return kll_items_sketch.deserialize(bytes(blob), PyLongsSerDe())
    if family is SketchFamily.FLOAT:
        return kll_floats_sketch.deserialize(bytes(blob))
    return kll_doubles_sketch.deserialize(bytes(blob))


def new_sketch(family: SketchFamily):
    """An empty sketch of the family, with Spark's k."""
    if family is SketchFamily.BIGINT:
        return kll_items_sketch(KLL_K)
    return kll_floats_sketch(KLL_K) if family is SketchFamily.FLOAT else kll_doubles_sketch(KLL_K)


def dump(sketch, family: SketchFamily) -> bytes:
    return sketch.serialize(PyLongsSerDe()) if family is SketchFamily.BIGINT else sketch.serialize()


def merge(blobs: Iterable[bytes | None], family: SketchFamily) -> bytes | None:
    """The union of serialized sketches of one family, serialized again; None when none are given.
    KLL's merge is randomized, so the union of the same parts grouped differently holds different
    samples, each within the sketch's rank error of the exact ranks."""
    present = [b for b in blobs if b]
    if not present:
        return None
    if len(present) == 1:
        return bytes(present[0])
    merged = load(present[0], family)
    for blob in present[1:]:
        merged.merge(load(blob, family))
    return dump(merged, family)


def column_value(value, type_name: str):
    """A sketch's value in the column's type as the metastore's model holds it: a Date for a date, a
    Timestamp for a timestamp, an int for whole numbers, a float otherwise."""
    kind = parse_type(type_name).stats_kind
    if value is None:
        return None
    if kind is StatsKind.DATE:
        return Date(int(value))
    if kind is StatsKind.TIMESTAMP:
        return Timestamp(int(value))
    if kind is StatsKind.LONG:
        return int(value)
    return float(value)


def value_text(value, type_name: str) -> str:
    """A sketch's value as Hive prints one of the column's type (a float with float's digits)."""
    typed = column_value(value, type_name)
    if isinstance(typed, float):
        return str(numpy.float32(typed)) if parse_type(type_name).name == "float" else repr(typed)
    return str(typed)


def rank_error(k: int = KLL_K) -> float:
    """KLL's normalized rank error for a single rank or CDF value (99 % confidence)."""
    return kll_doubles_sketch.get_normalized_rank_error(k, False)


_LIVE: "weakref.WeakSet[Distribution]" = weakref.WeakSet()


@atexit.register
def _release_sketches() -> None:
    """Drops the datasketches objects live distributions hold before the interpreter ends: an IPython
    session's variables outlive the datasketches module, and nanobind then prints a "leaked" report of
    dozens of lines on exit."""
    for distribution in list(_LIVE):
        distribution._loaded = None


class Distribution:
    """One stored sketch, asked for what the views, DESCRIBE and the row estimates need. Values come
    back in the sketch's units: days for dates and microseconds for timestamps."""

    def __init__(self, blob: bytes, family: SketchFamily):
        self.family = family
        self._blob = blob
        self._loaded = load(blob, family)
        _LIVE.add(self)

    @property
    def _sketch(self):
        if self._loaded is None:  # released at exit, asked for again
            self._loaded = load(self._blob, self.family)
        return self._loaded

    @classmethod
    def of(cls, blob: bytes | None, type_name: str) -> "Distribution | None":
        family = sketch_family(type_name)
        return cls(blob, family) if blob and family is not None else None

    @classmethod
    def of_stats(cls, obj) -> "Distribution | None":
        """The sketch a ColumnStatisticsObj carries, if its type has one and it was gathered."""
        return cls.of(getattr(obj.statsData.value, "histogram", None), obj.colType)

    @property
    def count(self) -> int:
        """How many values the sketch summarizes."""
        return int(self._sketch.n)

    @property
    def is_empty(self) -> bool:
        return bool(self._sketch.is_empty())

    def quantile(self, rank: float) -> Any:
        return None if self.is_empty else self._sketch.get_quantile(rank, False)

    def quartiles(self) -> list[Any] | None:
        """Q1, Q2 and Q3 as Hive asks for them; None for an empty sketch."""
        return None if self.is_empty else [self._sketch.get_quantile(r, False) for r in QUARTILE_RANKS]

    def spark_endpoints(self, count: int) -> list[Any]:
        """The bounds of Spark's `count` equi-height bins: the minimum, the value at each rank i/count by
        Spark's percentile rule (the smallest value at least that share of the values is at or below:
        on exact data the ceil(i/count · n)-th, so 1, 2, 3, 4 has its median at 2) and the maximum."""
        if self.is_empty:
            return []
        inner = [self._sketch.get_quantile(i / count, True) for i in range(1, count)]
        return [self._sketch.get_min_value(), *inner, self._sketch.get_max_value()]

    def exact_values(self) -> list[Any] | None:
        """Every value the sketch summarizes, while it holds them all (it has not compacted); else None."""
        if self._sketch.is_estimation_mode():
            return None
        return [item for item, weight in self._sketch for _ in range(weight)]

    def quantiles(self, count: int) -> list[Any]:
        """The boundaries of `count` bins of equal height: the minimum, the ranks i/count and the maximum."""
        if self.is_empty:
            return []
        inner = [self._sketch.get_quantile(i / count, False) for i in range(1, count)]
        return [self._sketch.get_min_value(), *inner, self._sketch.get_max_value()]

    def fraction_below(self, value, inclusive: bool = False) -> float:
        """The fraction of the values below `value` (at or below with `inclusive`)."""
        if self.is_empty:
            return 0.0
        return float(self._sketch.get_rank(value, inclusive))

    @property
    def low(self) -> Any:
        return None if self.is_empty else self._sketch.get_min_value()

    @property
    def high(self) -> Any:
        return None if self.is_empty else self._sketch.get_max_value()
