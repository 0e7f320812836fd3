"""Partition values as text, spelled the way Spark writes them in directory names, and compared as Spark
compares them (a double's `1.50` and `1.5`, `NaN` and `NaN`)."""
from __future__ import annotations

import datetime as dt
from decimal import Context, Decimal, InvalidOperation

from ..coltypes import parse_type
from ..errors import InvalidArgument
from ..quoting import double_text, parse_java_double


def canonical_value(key: str, type_name: str, value, what: str = "partition value") -> str | None:
    """The text of a partition (or skewed) value of a key's type; InvalidArgument when it is not of
    that type."""
    if value is None:
        return None
    col_type = parse_type(type_name)
    text = value if isinstance(value, str) else _python_text(value)
    try:
        if col_type.base in ("tinyint", "smallint", "int", "bigint"):
            return str(int(text))
        if col_type.base in ("float", "double"):
            # as Java reads and writes it (Spark's partition values): NaN, Infinity, -Infinity; never Python's inf
            return double_text(parse_java_double(text))
        if col_type.base == "decimal":
            precision, scale = col_type.precision_scale
            # Python's default context keeps 28 digits; a value that needs more than the type's
            # precision at its scale does not fit the column
            return str(Decimal(text).quantize(Decimal(1).scaleb(-scale), context=Context(prec=precision)))
        if col_type.base == "date":
            return dt.date.fromisoformat(text).isoformat()
        if col_type.base == "timestamp":
            stamp = dt.datetime.fromisoformat(text)
            return stamp.isoformat(sep=" ", timespec="microseconds" if stamp.microsecond else "seconds")
        if col_type.base == "boolean":
            lowered = text.lower()
            if lowered not in ("true", "false"):
                raise ValueError(text)
            return lowered
    except (ValueError, InvalidOperation, InvalidArgument):
        raise InvalidArgument(f"{what} {text!r} is not a {col_type.name} (" +
                                    ("key" if what == "partition value" else "column") + f" {key})") from None
    return text


def _python_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, float):
        return double_text(value)
    return str(value)


def same_value(type_name: str, first: str | None, second: str | None) -> bool:
    """Whether two partition values' texts name the same value of the key's type, as Spark compares them: `1.50`
    and `1.5` of a double, `NaN` and `NaN` (equal in Spark's ordering), `007` and `7` of an int."""
    if first is None or second is None:
        return first is None and second is None
    if first == second:
        return True
    try:
        return canonical_value("", type_name, first) == canonical_value("", type_name, second)
    except InvalidArgument:
        return False


def comparable_values(values: tuple, type_names: list[str]) -> tuple:
    """A partition's values in one spelling per value of their keys' types (`canonical_value`), so that two
    spellings of one value compare equal; a text that is not of its type stays as it is."""
    out = []
    for value, type_name in zip(values, type_names, strict=True):
        try:
            out.append(canonical_value("", type_name, value))
        except (InvalidArgument, ValueError):
            out.append(value)
    return tuple(out)
