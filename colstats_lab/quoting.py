"""The one place a name or a value becomes SQL text.

Every statement the lab writes for Spark, for Spark's catalog or for its own parser takes its identifiers from
`identifier` / `qualified` and its values from `literal`, so that nothing a table, a column or a value in the data
holds (a quote, a backslash, a backtick, `;`, `--`, NUL, any script) can end a name or a string early and change
the statement. Both readers agree on these forms: in Spark's lexer and in the lab's (`sql/lexer.py`) a backquoted
name reads two backquotes as one, and a quoted string reads `\\\\` as a backslash and `\\'` as a quote.

Spark column references (`F.col(...)`) parse their text as a dotted path: `column_ref` quotes each part, so a
column named `a.b` is never struct field `b` of column `a`.
"""
from __future__ import annotations

import datetime as dt
import math
import re
from decimal import Decimal

from .errors import InvalidArgument

_SPECIAL_DOUBLES = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def identifier(name: str) -> str:
    """`name` in backquotes, a backquote inside doubled: one name whatever it holds."""
    if not isinstance(name, str):
        raise InvalidArgument(f"a name is a string, not {name!r}")
    return "`" + name.replace("`", "``") + "`"


def qualified(*parts: str) -> str:
    """`db`.`t` (or `catalog`.`db`.`t`): each part quoted on its own, so a part holding a dot stays one part."""
    return ".".join(identifier(part) for part in parts if part is not None)


def column_ref(*path: str) -> str:
    """A column, or a struct's field by its path, as Spark's `F.col` and `DataFrame[...]` read it."""
    return qualified(*path)


def string_literal(text: str) -> str:
    """'text' as Spark's parser and the lab's read it back: backslashes and quotes escaped with a backslash."""
    return "'" + str(text).replace("\\", "\\\\").replace("'", "\\'") + "'"


def standard_string_literal(text: str) -> str:
    """'text' in standard SQL (Derby, PostgreSQL), where a quote is doubled and a backslash is a backslash."""
    return "'" + str(text).replace("'", "''") + "'"


def comment(text: str) -> str:
    """`-- text` on one line: a line break or other control character in a name shown there is escaped, so no
    part of it runs as the statement's next line."""
    return "-- " + "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode() for ch in str(text))


def double_text(value: float) -> str:
    """A double as Java and Spark spell it: NaN, Infinity, -Infinity, or Python's shortest repr."""
    return _SPECIAL_DOUBLES.get(repr(float(value)), repr(float(value)))


def literal(value, type_name: str | None = None) -> str:
    """`value` as a SQL literal of the column type `type_name` (else of its Python type).

    NULL; TRUE/FALSE; whole numbers; doubles as their shortest exact text with Spark's double suffix (`1E-07D`,
    `0.1D`: a plain `0.1` is a decimal there), NaN and the infinities as CAST('NaN' AS DOUBLE), which Spark and the lab's
    parser both read; decimals in plain notation; DATE '...' and TIMESTAMP '...'; X'..' for bytes; any
    other value as a string literal. A text value of a typed column is checked against the type, so a value that
    is not a number never reaches a statement as one."""
    if value is None:
        return "NULL"
    base = (type_name or "").lower().split("(", 1)[0].strip()
    if base in ("string", "varchar", "char") or (not base and isinstance(value, str)):
        return string_literal(value)
    if base == "boolean" or isinstance(value, bool):
        text = str(value).lower()
        if text not in ("true", "false"):
            raise InvalidArgument(f"{value!r} is not a boolean")
        return text.upper()
    if base in ("tinyint", "smallint", "int", "integer", "bigint") or (not base and isinstance(value, int)):
        try:
            return str(int(str(value).strip()) if isinstance(value, str) else int(value))
        except ValueError:
            raise InvalidArgument(f"{value!r} is not a whole number") from None
    if base in ("float", "double") or (not base and isinstance(value, float)):
        number = _double(value)
        if math.isnan(number) or math.isinf(number):
            return f"CAST({string_literal(double_text(number))} AS {'FLOAT' if base == 'float' else 'DOUBLE'})"
        return repr(number).replace("e+", "E").replace("e-", "E-") + "D"  # D: a double, where 1.5 is a decimal
    if base == "decimal" or (not base and isinstance(value, Decimal)):
        try:
            exact = Decimal(str(value).strip())
        except ArithmeticError:
            raise InvalidArgument(f"{value!r} is not a decimal") from None
        if not exact.is_finite():
            raise InvalidArgument(f"{value!r} is not a decimal")
        return format(exact, "f")
    if base == "date" or (not base and isinstance(value, dt.date) and not isinstance(value, dt.datetime)):
        text = value.isoformat() if isinstance(value, dt.date) else str(value).strip()
        return f"DATE {string_literal(text)}"
    if base in ("timestamp", "timestamp_ntz") or (not base and isinstance(value, dt.datetime)):
        text = value.isoformat(sep=" ") if isinstance(value, dt.datetime) else str(value).strip()
        return f"{'TIMESTAMP_NTZ' if base == 'timestamp_ntz' else 'TIMESTAMP'} {string_literal(text)}"
    if base == "binary" or isinstance(value, (bytes, bytearray, memoryview)):
        return "X'" + bytes(value).hex().upper() + "'"
    return string_literal(str(value))


def _double(value) -> float:
    if isinstance(value, str):
        return parse_java_double(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{value!r} is not a number") from None


def parse_java_double(text: str) -> float:
    """A double from text as Java's Double.parseDouble (and so Spark's partition values) reads it: NaN, Infinity
    and -Infinity by those names; Python's own `inf`, `nan` and `1_000` are not doubles there."""
    match = _JAVA_DOUBLE.fullmatch(text.strip())
    if not match:
        raise InvalidArgument(f"{text!r} is not a double (Spark reads NaN, Infinity, -Infinity or a number)")
    sign, special, number = match.group("sign") or "", match.group("special"), match.group("number")
    if special == "NaN":
        return math.nan
    return float(sign + ("inf" if special else number))


_JAVA_DOUBLE = re.compile(r"(?P<sign>[+-])?(?:(?P<special>NaN|Infinity)|"
                          r"(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)[fFdD]?)")
