"""Distribution sketches as the metastore keeps them (Hive 4's HISTOGRAM column): DataSketches' KLL in
the bytes Spark's `kll_sketch_agg_bigint / _float / _double` write, read, merged and asked for quantiles
and ranks here.

Whole numbers, dates (days since the epoch) and timestamps (microseconds since the epoch) are sketched
as longs, floats as floats, doubles and decimals as doubles (a decimal of more than 15 significant
digits comes back rounded). Python's datasketches reads Spark's doubles and floats sketches as they are;
it has no longs sketch. A longs sketch lays its items out as a doubles sketch does, eight bytes each, so one
whose items are all whole numbers a double holds exactly (below 2^53 in magnitude: any date, any timestamp
in microseconds) is read as a doubles sketch of the same items, and written back as longs; one holding a
larger item is read and written as an items sketch of Python ints (`PyLongsSerDe`, which passes every item
through Python: 0.14 ms for a sketch of 10,000s of values, 500 times the doubles sketch's). Spark reads both
back. Nulls and NaN are in no sketch (KLL ignores NaN), so every figure is over the non-null, non-NaN values.

Quartiles follow Hive's definition: ranks 0.25, 0.5 and 0.75 asked with the exclusive criterion, which on
exact data is the sorted value at 0-based index floor(r · n).
"""
from __future__ import annotations

import atexit
import enum
import weakref
from collections.abc import Iterable
from typing import Any

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




# a table's own choice of KLL sketches, kept with it so that every session, writer and worker follows it
KLL_PROPERTY = "colstats.kll.enable"


def kll_for(parameters: dict, session_enabled: bool) -> bool:
    """Whether statistics of a table with `parameters` gather KLL sketches: its `colstats.kll.enable`
    ('true' or 'false') where it has one, else the session's hive.stats.kll.enable."""
    chosen = str(parameters.get(KLL_PROPERTY, "")).strip().lower()
    return chosen == "true" if chosen in ("true", "false") else session_enabled


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


_EXACT_IN_DOUBLE = 2 ** 53  # every whole number of smaller magnitude is a double exactly


def _levels(blob: bytes) -> int | None:
    """The levels of a serialized KLL sketch of more than one value, from its preamble (DataSketches' form, Java's
    and C++'s alike: 5 preamble ints, the level count at byte 18); None for an empty or one-value sketch."""
    return blob[18] if len(blob) > 18 and blob[0] == 5 else None


def _items_offset(blob: bytes) -> int | None:
    """Where a serialized KLL sketch's items start (its minimum and maximum, then the values it keeps): after the
    preamble and a 4-byte offset a level, or after 2 preamble ints for a sketch of one value; None for an empty
    sketch, or bytes of another form."""
    levels = _levels(blob)
    if levels is not None:
        offset = 20 + 4 * levels
    elif len(blob) == 16 and blob[0] == 2:
        offset = 8
    else:
        return None
    return offset if offset < len(blob) and (len(blob) - offset) % 8 == 0 else None


def _longs_as_doubles(blob: bytes) -> bytes | None:
    """A longs sketch's bytes as a doubles sketch's of the same items; None when an item is too large for a
    double to hold exactly, or the bytes are of another form."""
    offset = _items_offset(blob)
    if offset is None:  # an empty sketch is its 8 preamble bytes, the same in either family
        return bytes(blob) if len(blob) == 8 else None
    items = numpy.frombuffer(blob, dtype="<i8", offset=offset)
    if items.max() >= _EXACT_IN_DOUBLE or items.min() <= -_EXACT_IN_DOUBLE:
        return None
    return bytes(blob[:offset]) + items.astype("<f8").tobytes()


def _doubles_as_longs(blob: bytes) -> bytes:
    offset = _items_offset(blob)
    if offset is None:  # empty: the same bytes in either family
        return blob
    return blob[:offset] + numpy.frombuffer(blob, dtype="<f8", offset=offset).astype("<i8").tobytes()


def load(blob: bytes, family: SketchFamily):
    """The sketch; a longs sketch as a doubles sketch where it can be (`_longs_as_doubles`), else as an items
    sketch of Python ints."""
    return _load_all([blob], family)[0]


def _load_all(blobs: list[bytes], family: SketchFamily) -> list:
    """The sketches, all of one kind so that they merge: longs sketches as doubles sketches when every one of
    them can be, else all as items sketches."""
    if family is SketchFamily.BIGINT:
        as_doubles = [_longs_as_doubles(bytes(blob)) for blob in blobs]
        if all(converted is not None for converted in as_doubles):
            return [kll_doubles_sketch.deserialize(converted) for converted in as_doubles]
        return [kll_items_sketch.deserialize(bytes(blob), PyLongsSerDe()) for blob in blobs]
    if family is SketchFamily.FLOAT:
        return [kll_floats_sketch.deserialize(bytes(blob)) for blob in blobs]
    return [kll_doubles_sketch.deserialize(bytes(blob)) for blob in blobs]


def compacted(blob: bytes) -> bool:
    """Whether a serialized sketch has compacted (it estimates; its bytes differ from run to run over the same
    values), read from its preamble without loading it: one level holds every value as it came."""
    return (_levels(blob) or 0) > 1


def new_sketch(family: SketchFamily):
    """An empty sketch of the family, with Spark's k."""
    if family is SketchFamily.BIGINT:
        return kll_items_sketch(KLL_K)
    return kll_floats_sketch(KLL_K) if family is SketchFamily.FLOAT else kll_doubles_sketch(KLL_K)


def dump(sketch, family: SketchFamily) -> bytes:
    """A sketch `load` or `new_sketch` gave, in the bytes Spark's sketch of the family has."""
    if isinstance(sketch, kll_items_sketch):
        return sketch.serialize(PyLongsSerDe())
    return _doubles_as_longs(sketch.serialize()) if family is SketchFamily.BIGINT else sketch.serialize()


def merge(blobs: Iterable[bytes | None], family: SketchFamily) -> bytes | None:
    """The union of serialized sketches of one family, serialized again; None when none are given.
    KLL's merge is randomized, so the union of the same parts grouped differently holds different
    samples, each within the sketch's rank error of the exact ranks."""
    present = [b for b in blobs if b]
    if not present:
        return None
    if len(present) == 1:
        return bytes(present[0])
    sketches = _load_all(present, family)
    merged = sketches[0]
    for sketch in sketches[1:]:
        merged.merge(sketch)
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


_LIVE: weakref.WeakSet[Distribution] = weakref.WeakSet()


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
    def of(cls, blob: bytes | None, type_name: str) -> Distribution | None:
        family = sketch_family(type_name)
        return cls(blob, family) if blob and family is not None else None

    @classmethod
    def of_stats(cls, obj) -> Distribution | None:
        """The sketch a ColumnStatisticsObj carries, if its type has one and it was gathered."""
        return cls.of(getattr(obj.statsData.value, "histogram", None), obj.colType)

    def _value(self, item) -> Any:
        """An item as the sketch's family spells it: a long's as an int, whether read as a double or not."""
        return int(item) if self.family is SketchFamily.BIGINT else item

    @property
    def count(self) -> int:
        """How many values the sketch summarizes."""
        return int(self._sketch.n)

    @property
    def is_empty(self) -> bool:
        return bool(self._sketch.is_empty())

    def quantile(self, rank: float) -> Any:
        return None if self.is_empty else self._value(self._sketch.get_quantile(rank, False))

    def quartiles(self) -> list[Any] | None:
        """Q1, Q2 and Q3 as Hive asks for them; None for an empty sketch."""
        return None if self.is_empty else [self._value(self._sketch.get_quantile(r, False)) for r in QUARTILE_RANKS]

    def spark_endpoints(self, count: int) -> list[Any]:
        """The bounds of Spark's `count` equi-height bins: the minimum, the value at each rank i/count by
        Spark's percentile rule (the smallest value at least that share of the values is at or below:
        on exact data the ceil(i/count · n)-th, so 1, 2, 3, 4 has its median at 2) and the maximum."""
        if self.is_empty:
            return []
        inner = [self._sketch.get_quantile(i / count, True) for i in range(1, count)]
        return [self._value(v) for v in (self._sketch.get_min_value(), *inner, self._sketch.get_max_value())]

    def exact_values(self) -> list[Any] | None:
        """Every value the sketch summarizes, while it holds them all (it has not compacted); else None."""
        if self._sketch.is_estimation_mode():
            return None
        return [self._value(item) for item, weight in self._sketch for _ in range(weight)]

    def quantiles(self, count: int) -> list[Any]:
        """The boundaries of `count` bins of equal height: the minimum, the ranks i/count and the maximum."""
        if self.is_empty:
            return []
        inner = [self._sketch.get_quantile(i / count, False) for i in range(1, count)]
        return [self._value(v) for v in (self._sketch.get_min_value(), *inner, self._sketch.get_max_value())]

    def fraction_below(self, value, inclusive: bool = False) -> float:
        """The fraction of the values below `value` (at or below with `inclusive`)."""
        if self.is_empty:
            return 0.0
        if self.family is SketchFamily.BIGINT and isinstance(self._sketch, kll_doubles_sketch):
            value = float(value)  # its items are below 2^53 in magnitude: a larger value rounds past them all
        return float(self._sketch.get_rank(value, inclusive))

    @property
    def low(self) -> Any:
        return None if self.is_empty else self._value(self._sketch.get_min_value())

    @property
    def high(self) -> Any:
        return None if self.is_empty else self._value(self._sketch.get_max_value())
