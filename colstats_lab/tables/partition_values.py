"""Partition values as text, spelled the way Spark writes them in directory names."""
from __future__ import annotations

import datetime as dt
from decimal import Context, Decimal, InvalidOperation

from ..coltypes import parse_type
from ..errors import InvalidArgument


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
            number = float(text)
            return repr(number) if number == number else "NaN"
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
    except (ValueError, InvalidOperation):
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
    return str(value)
