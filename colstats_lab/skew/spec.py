"""Skew specs of tables (`SKEWED BY ... ON ... [STORED AS DIRECTORIES]`) checked against the table,
with the list-bucketing validation rules of Hive's design mapped to what the lab does."""
from __future__ import annotations

import posixpath

from ..coltypes import parse_type
from ..column_statistics.partition_values import canonical_value
from ..errors import InvalidArgument
from ..metastore import DEFAULT_LIST_BUCKETING_DIR_NAME, SkewedInfo, Table
from ..quoting import identifier, literal


def skewed_info(table: Table, columns: list[str], values: list[tuple[str, ...]]) -> SkewedInfo:
    """The SkewedInfo for `columns` and literal `values` of `table`: names lower-case, values in each
    column's canonical text. Raises NoSuchObjectException for an unknown column, InvalidArgument
    for a partition key, a complex type, a repeated column or value, or a value not of its column's type."""
    names = [c.lower() for c in columns]
    if len(set(names)) != len(names):
        raise InvalidArgument(f"a skewed column is named twice: {', '.join(names)}")
    types = []
    for name in names:
        if name in table.partition_key_names:
            raise InvalidArgument(f"skewed column {name} is a partition key of {table.qualified_name}: "
                                        "skew is declared on data columns, inside each partition")
        column = table.column(name)
        if column is None:
            raise table.no_such_column(name)
        if parse_type(column.type).stats_kind is None:
            raise InvalidArgument(f"skewed column {name} is {column.type}: only primitive columns can be skewed")
        types.append(column.type)
    canonical, seen = [], set()
    for value in values:
        texts = tuple(_skewed_text(n, t, v) for n, t, v in zip(names, types, value, strict=True))
        if texts in seen:
            raise InvalidArgument(f"skewed value {_show(texts)} is listed twice")
        seen.add(texts)
        canonical.append(list(texts))
    return SkewedInfo(names, canonical)


def _skewed_text(name: str, type_name: str, value) -> str:
    """A skewed value's text in its column's type; NULL is refused (its rows live in the default directory)."""
    text = canonical_value(name, type_name, value, what="skewed value")
    if text is None:
        raise InvalidArgument(f"NULL cannot be a skewed value of {name}: its rows go to the default directory")
    return text


def check_list_bucketing(table: Table) -> None:
    """Hive's rules for a list-bucketing (STORED AS DIRECTORIES) table, as errors naming the table."""
    if table.tableType != "MANAGED_TABLE":
        raise InvalidArgument(f"{table.qualified_name} is an external table: list bucketing lays out "
                                    "sub-directories, so only managed tables can be STORED AS DIRECTORIES")
    if not table.is_partitioned:
        raise InvalidArgument(f"{table.qualified_name} is not partitioned: list bucketing applies inside "
                                    "partitions (Hive's rule), so PARTITIONED BY is needed")




def with_locations(info: SkewedInfo, locations: list[tuple[tuple[str, ...], str]], table: Table) -> SkewedInfo:
    """`info` with `SET SKEWED LOCATION` entries: each value must be skewed, each location a relative
    directory inside the partition that no other value or the default directory uses."""
    types = [table.column_type(c) for c in info.skewedColNames]
    known = {tuple(v) for v in info.skewedColValues}
    merged = dict(info.skewedColValueLocationMaps)
    for value, location in locations:
        texts = tuple(_skewed_text(n, t, v) for n, t, v in zip(info.skewedColNames, types, value, strict=True))
        if texts not in known:
            raise InvalidArgument(f"{_show(texts)} is not a skewed value of {table.qualified_name} "
                                        f"(skewed: {', '.join(_show(tuple(v)) for v in info.skewedColValues)})")
        normal = posixpath.normpath(location)
        if location.startswith("/") or normal.startswith("..") or normal in (".", "") \
                or normal.split("/")[0] == DEFAULT_LIST_BUCKETING_DIR_NAME:
            raise InvalidArgument(
                f"skewed location {location!r}: a location is a directory inside each partition's write "
                f"(relative, not '..', not {DEFAULT_LIST_BUCKETING_DIR_NAME}), because every write keeps its files "
                "in its own delta directory")
        merged[texts] = normal
    taken = [d for v in info.skewedColValues for d in [SkewedInfo(info.skewedColNames, [], merged).directory_of(tuple(v))]]
    if len(set(taken)) != len(taken):
        raise InvalidArgument(f"two skewed values of {table.qualified_name} would share a directory: {taken}")
    return SkewedInfo(info.skewedColNames, info.skewedColValues, merged)


def skewed_clause(info: SkewedInfo, table: Table, stored_as_directories: bool) -> str:
    """`SKEWED BY (x) ON (6, 20) STORED AS DIRECTORIES` for `info`, literals typed per column."""
    types = [table.column_type(c) for c in info.skewedColNames]
    values = []
    for value in info.skewedColValues:
        items = [literal(v, t) for v, t in zip(value, types, strict=True)]
        values.append(items[0] if len(items) == 1 else f"({', '.join(items)})")
    names = [identifier(table.spelled(name)) for name in info.skewedColNames]  # eventType, as the files spell it
    clause = f"SKEWED BY ({', '.join(names)}) ON ({', '.join(values)})"
    return clause + (" STORED AS DIRECTORIES" if stored_as_directories else "")


def _show(value: tuple[str, ...]) -> str:
    return value[0] if len(value) == 1 else "(" + ", ".join(value) + ")"
