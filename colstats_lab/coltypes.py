"""Hive column types: parsing the type text, and which statistics family a type belongs to.

Shared by the statement parser, the metastore and the Spark aggregation plans so that
every layer agrees on what `decimal(10,2)` or `varchar(20)` means.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from .errors import ColstatsError


class StatsKind(Enum):
    """Which `ColumnStatisticsData` member a column type's statistics go into."""

    LONG = "longStats"
    DOUBLE = "doubleStats"
    DECIMAL = "decimalStats"
    DATE = "dateStats"
    TIMESTAMP = "timestampStats"
    STRING = "stringStats"
    BINARY = "binaryStats"
    BOOLEAN = "booleanStats"
    # not Hive's: an array's or map's NULL count and elements per row (Hive's and Spark's ANALYZE refuse them)
    COLLECTION = "collectionStats"
    # not Hive's: a struct's own NULL count (its leaves are columns of their own, a NULL struct making them NULL)
    STRUCT = "structStats"


_PRIMITIVE_KINDS = {
    "tinyint": StatsKind.LONG,
    "smallint": StatsKind.LONG,
    "int": StatsKind.LONG,
    "bigint": StatsKind.LONG,
    "float": StatsKind.DOUBLE,
    "double": StatsKind.DOUBLE,
    "decimal": StatsKind.DECIMAL,
    "date": StatsKind.DATE,
    "timestamp": StatsKind.TIMESTAMP,
    "string": StatsKind.STRING,
    "varchar": StatsKind.STRING,
    "char": StatsKind.STRING,
    "binary": StatsKind.BINARY,
    "boolean": StatsKind.BOOLEAN,
}

_ALIASES = {"integer": "int", "long": "bigint", "short": "smallint", "byte": "tinyint", "real": "float", "bool": "boolean"}

_SPARK_DDL = {
    "tinyint": "TINYINT", "smallint": "SMALLINT", "int": "INT", "bigint": "BIGINT",
    "float": "FLOAT", "double": "DOUBLE", "date": "DATE", "timestamp": "TIMESTAMP",
    "string": "STRING", "binary": "BINARY", "boolean": "BOOLEAN",
}

_PARAMETRIC = re.compile(r"^(decimal|varchar|char)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$")


class UnsupportedTypeError(ColstatsError):
    """A type name that is not a Hive type this lab knows."""


@dataclass(frozen=True)
class ColumnType:
    """A normalized Hive type, e.g. `decimal(10,2)`, `int`, `array<int>`."""

    name: str  # Hive's lower-case spelling, as stored in COLUMNS_V2.TYPE_NAME

    @property
    def base(self) -> str:
        return _base_name(self.name)

    @property
    def stats_kind(self) -> StatsKind | None:
        """The statistics family, or None for complex types (array, map, struct)."""
        return _PRIMITIVE_KINDS.get(self.base)

    @property
    def is_collection(self) -> bool:
        return self.base in ("array", "map")

    @property
    def kept_stats_kind(self) -> StatsKind | None:
        """The family of the statistics the lab keeps for the type: its scalar family, COLLECTION for an array
        or a map, STRUCT for a struct (its NULL count; its leaves are columns of their own)."""
        return self.stats_kind or (StatsKind.COLLECTION if self.is_collection else
                                   StatsKind.STRUCT if self.base == "struct" else None)

    @property
    def stored_stats_kind(self) -> StatsKind:
        """The statistics family of a column statistics are kept for; raises for a type without any."""
        kind = self.kept_stats_kind
        if kind is None:
            raise ValueError(f"{self.name} columns have no statistics")
        return kind

    @property
    def precision_scale(self) -> tuple[int, int]:
        match = _PARAMETRIC.match(self.name)
        if self.base != "decimal":
            raise ValueError(f"{self.name} is not a decimal type")
        if match is None:
            return (10, 0)
        return int(match.group(2)), int(match.group(3) or 0)

    def spark_ddl(self) -> str:
        """The type in Spark's DDL. Spark reads varchar/char as string, so they are stored as string."""
        if self.base in _SPARK_DDL:
            return _SPARK_DDL[self.base]
        if self.base == "decimal":
            precision, scale = self.precision_scale
            return f"DECIMAL({precision},{scale})"
        if self.base in ("varchar", "char"):
            return "STRING"
        return _complex_ddl(self.name)

    def __str__(self) -> str:
        return self.name


@lru_cache(maxsize=4096)
def _base_name(name: str) -> str:
    return re.split(r"[(<]", name, maxsplit=1)[0]


@lru_cache(maxsize=4096)  # a metastore read parses the same few type names once per stats row
def parse_type(text: str) -> ColumnType:
    """Normalizes a type text as Hive spells it; raises UnsupportedTypeError naming the text."""
    compact = re.sub(r"\s+", " ", text.strip().lower())
    compact = _ALIASES.get(compact, compact)
    if compact in _PRIMITIVE_KINDS:
        if compact == "decimal":
            return ColumnType("decimal(10,0)")
        if compact in ("varchar", "char"):
            raise UnsupportedTypeError(f"type {text!r} needs a length, e.g. {compact}(20)")
        return ColumnType(compact)
    match = _PARAMETRIC.match(compact)
    if match:
        base, first, second = match.groups()
        if base == "decimal":
            precision, scale = int(first), int(second or 0)
            if not (1 <= precision <= 38 and 0 <= scale <= precision):
                raise UnsupportedTypeError(f"type {text!r}: decimal precision must be 1..38 and scale 0..precision")
            return ColumnType(f"decimal({precision},{scale})")
        if second is not None:
            raise UnsupportedTypeError(f"type {text!r}: {base} takes one length")
        return ColumnType(f"{base}({int(first)})")
    if re.match(r"^(array|map|struct)\s*<.*>$", compact):
        return ColumnType(re.sub(r"\s*([<>,:])\s*", r"\1", compact))
    raise UnsupportedTypeError(f"unknown column type {text!r}")


def _complex_ddl(text: str) -> str:
    """An array, map or struct type in Spark's DDL: each struct field's name quoted (it may hold any character,
    `größe` or `a.b`, and keeps its case), each element type in Spark's DDL."""
    lowered = text.lower()
    if lowered.startswith("struct<"):
        return "struct<" + ",".join("`" + name.replace("`", "``") + "`:" + parse_type(kind).spark_ddl()
                                    for name, kind in struct_fields(text)) + ">"
    if lowered.startswith(("array<", "map<")):
        head = text[:text.index("<")]
        return head + "<" + ",".join(parse_type(part).spark_ddl() for part in _top_level_parts(text[len(head) + 1:-1])) + ">"
    return text


def _top_level_parts(body: str) -> list[str]:
    """`body` split at the commas outside any `<...>` or `(...)`."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(body + ","):
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    return parts


def collection_parts(type_name: str) -> list[tuple[str, str]]:
    """The (part, type) of an array's element (`element`) or a map's key and value (`key`, `value`), as
    Iceberg names those fields; none for any other type."""
    text = type_name.strip()
    lowered = text.lower()
    if lowered.startswith("array<") and text.endswith(">"):
        return [("element", text[len("array<"):-1].strip())]
    if lowered.startswith("map<") and text.endswith(">"):
        parts = _top_level_parts(text[len("map<"):-1])
        if len(parts) == 2:
            return [("key", parts[0].strip()), ("value", parts[1].strip())]
    return []


def struct_fields(type_name: str) -> list[tuple[str, str]]:
    """The (name, type) of each field of a `struct<a:int,b:struct<c:string>>` type as Hive spells it; none
    for any other type. Field names are as the type text spells them (they may hold upper-case letters)."""
    text = type_name.strip()
    if not text.lower().startswith("struct<") or not text.endswith(">"):
        return []
    fields = []
    for part in _top_level_parts(text[len("struct<"):-1]):
        name, _, field_type = part.partition(":")
        if not field_type:
            raise UnsupportedTypeError(f"struct field {part!r} of {type_name!r} has no type")
        fields.append((name.strip().strip("`"), field_type.strip()))
    return fields


def from_spark_type(spark_type) -> ColumnType:
    """The Hive type for a pyspark DataType (for tables registered from existing files). Spark's
    timestamp_ntz (a Parquet timestamp not adjusted to UTC, as pyarrow and pandas write naive datetimes) is
    Hive's timestamp, which has no time zone either."""
    text = spark_type.simpleString()
    return parse_type("timestamp" if text == "timestamp_ntz" else text)
