"""Frequent values kept with column statistics: Spark's `approx_top_k_accumulate` sketch (DataSketches'
frequent-items sketch, a Misra-Gries summary) of a column's values per partition, stored beside the
statistics row it was gathered with (schema 17) and merged here, without Spark, for any set of partitions.

Its guarantee, over the rows it counted: every value's true count lies within [lower, upper] of what the
sketch says, and a value the sketch does not list holds at most `max_error` rows; merging keeps both.
The lab sketches integral columns and dates as a bigint (a date as days since 1970-01-01), and strings as
they are, so the items read back with DataSketches' long and string serdes.

Which columns: every column of a key's type (integers, dates, strings), as PostgreSQL keeps most-common values
of every column, unless the table's property `colstats.frequent.items.columns` names some (`none`: none). A
near-unique column (an id) whose sketch saw no value twice keeps none, unless the table names it: no value of it is
frequent, and its NDV says so.
A sketch costs about what an NDV sketch does (Spark's aggregate runs per row, interpreted).
"""
from __future__ import annotations

import datetime
import json
from dataclasses import dataclass

from datasketches import PyLongsSerDe, PyObjectSerDe, frequent_items_error_type, frequent_items_sketch

from ..coltypes import parse_type

# values each sketch tracks (Spark's maxItemsTracked): a value the sketch does not list holds at most about
# 3.5 / 2048 of the rows counted (DataSketches' bound for the map of 2,048 slots Spark sizes for it)
DEFAULT_FREQUENT_ITEMS = 1024
MAX_FREQUENT_ITEMS = 1_000_000  # Spark's bound (approx_top_k's maxItemsTracked)
INTEGRAL = ("tinyint", "smallint", "int", "bigint")
STRINGS = ("string", "varchar", "char")
EPOCH = datetime.date(1970, 1, 1)


COLUMNS_PROPERTY = "colstats.frequent.items.columns"


def frequent_columns(parameters: dict) -> set[str] | None:
    """The columns a table keeps frequent items of, from its parameters: None (every sketchable column, as
    PostgreSQL keeps most-common values of every column) unless the table names its columns, or `none`."""
    text = parameters.get(COLUMNS_PROPERTY)
    if text is None:
        return None
    names = {n.strip().lower().strip("`") for n in str(text).split(",") if n.strip()}
    if "*" in names:
        return None
    return set() if names <= {"none"} else names


def items_named(parameters: dict, column: str) -> bool:
    """Whether the table's property asks for this column's frequent items by name (or `*`): then a sketch is kept
    even of a near-unique column (a dimension's key, whose sketch a join's prediction reads)."""
    if COLUMNS_PROPERTY not in parameters:
        return False
    named = frequent_columns(parameters)
    return named is None or column.lower() in named


def items_tracked(parameters: dict, column: str, type_name: str, tracked: int) -> int:
    """The values the frequent-items sketch of `column` tracks when it is gathered (0: none is kept)."""
    if not tracked or not sketchable(type_name):
        return 0
    named = frequent_columns(parameters)
    return tracked if named is None or column.lower() in named else 0


def sketchable(type_name: str) -> bool:
    """Whether a column of this type keeps frequent items: the types join and grouping keys have."""
    return parse_type(type_name).base in (*INTEGRAL, "date", *STRINGS)


@dataclass(frozen=True)
class FrequentValue:
    """One value the sketch lists: its estimated rows and the bounds its true count lies within."""

    value: object
    estimate: int
    lower: int
    upper: int


class Utf8StringsSerDe(PyObjectSerDe):
    """Strings as Spark's (Java DataSketches') sketch keeps them: a 4-byte little-endian length in bytes, then the
    UTF-8 bytes. DataSketches' own PyStringsSerDe writes a character count and one byte a character, so a sketch
    holding `Köln` failed to serialize (to merge) and one holding `Zürich` would be read back cut short."""

    def get_size(self, item: str) -> int:
        return 4 + len(item.encode("utf-8"))

    def to_bytes(self, item: str) -> bytes:
        encoded = item.encode("utf-8")
        return len(encoded).to_bytes(4, "little") + encoded

    def from_bytes(self, data: bytes, offset: int) -> tuple[str, int]:
        length = int.from_bytes(data[offset:offset + 4], "little")
        if length < 0 or offset + 4 + length > len(data):
            raise IndexError(f"a string of {length} bytes at {offset} runs past the sketch's {len(data)} bytes")
        return data[offset + 4:offset + 4 + length].decode("utf-8"), 4 + length


def _serde(type_name: str):
    """DataSketches' serde for the items Spark's sketch of this column type holds."""
    return Utf8StringsSerDe() if parse_type(type_name).base in STRINGS else PyLongsSerDe()


class FrequentItems:
    """One column's frequent values over the rows of the sketches merged into it."""

    def __init__(self, sketch: frequent_items_sketch, type_name: str):
        self._sketch = sketch
        self.type_name = type_name

    @classmethod
    def merged(cls, blobs: list[bytes], type_name: str) -> FrequentItems | None:
        """The union of stored sketches of one column (None: there are none)."""
        serde = _serde(type_name)
        sketches = [frequent_items_sketch.deserialize(bytes(b), serde) for b in blobs]
        if not sketches:
            return None
        union = sketches[0]
        for other in sketches[1:]:
            union.merge(other)
        return cls(union, type_name)

    @classmethod
    def of(cls, blob: bytes, type_name: str) -> FrequentItems:
        """One stored sketch."""
        return cls(frequent_items_sketch.deserialize(bytes(blob), _serde(type_name)), type_name)

    def repeats(self) -> bool:
        """Whether some value surely holds two rows or more."""
        return any(v.lower >= 2 for v in self.top())

    @classmethod
    def union(cls, parts: list[FrequentItems]) -> FrequentItems:
        """The union of merged sketches of one column (the first one grows)."""
        serde = _serde(parts[0].type_name)
        union = frequent_items_sketch.deserialize(parts[0]._sketch.serialize(serde), serde)  # a copy to grow
        for other in parts[1:]:
            union.merge(other._sketch)
        return cls(union, parts[0].type_name)

    @property
    def rows(self) -> int:
        """The non-NULL rows the sketches counted."""
        return int(self._sketch.total_weight)

    @property
    def max_error(self) -> int:
        """The most rows a value the sketch does not list may hold, and the width of every listed value's
        [lower, upper]: DataSketches' offset, read as the upper bound of a value (any value) less its lower."""
        probe = "" if parse_type(self.type_name).base in STRINGS else 0
        return int(self._sketch.get_upper_bound(probe) - self._sketch.get_lower_bound(probe))

    def top(self, n: int | None = None) -> list[FrequentValue]:
        """The values surely among the frequent (lower bound above the maximum error), most rows first; each
        value's estimate is the middle of its bounds (DataSketches' own estimate is the upper bound)."""
        found = self._sketch.get_frequent_items(frequent_items_error_type.NO_FALSE_POSITIVES)
        values = [FrequentValue(self._value(item), int((lower + upper) // 2), int(lower), int(upper))
                  for item, _estimate, lower, upper in found]
        values.sort(key=lambda v: (-v.estimate, str(v.value)))
        return values if n is None else values[:n]

    def bounds(self, value) -> tuple[int, int]:
        """The rows `value` holds, as [lower, upper]."""
        item = self._item(value)
        return int(self._sketch.get_lower_bound(item)), int(self._sketch.get_upper_bound(item))

    def _value(self, item):
        base = parse_type(self.type_name).base
        if base == "date":
            return EPOCH + datetime.timedelta(days=int(item))
        return item

    def _item(self, value):
        if parse_type(self.type_name).base == "date":
            return (value - EPOCH).days
        return value


@dataclass(frozen=True)
class TopValues:
    """The most frequent non-null values a skew report counted on the rows a state describes: each value
    as text with its count, most frequent first; the rows and nulls it counted; its mode (exact, or
    approx: each count within 2 * rows / max_items) and k."""

    values: tuple[tuple[str, int], ...]
    rows: int
    nulls: int
    mode: str
    k: int

    @property
    def shares(self) -> dict[str, float]:
        """Each value's share of the non-null values."""
        present = self.rows - self.nulls
        return {value: count / present for value, count in self.values} if present > 0 else {}

    def to_json(self) -> str:
        return json.dumps({"values": [list(v) for v in self.values], "rows": self.rows, "nulls": self.nulls,
                           "mode": self.mode, "k": self.k})

    @classmethod
    def from_json(cls, text: str | None) -> TopValues | None:
        if text is None:
            return None
        kept = json.loads(text)
        return cls(tuple((str(v), int(c)) for v, c in kept["values"]), kept["rows"], kept["nulls"], kept["mode"],
                   kept["k"])
