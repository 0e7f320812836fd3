"""Can any row of a unit (partition, segment, file, row group) satisfy a WHERE condition, given each
column's min, max, null and non-null counts? Three-valued logic over what the statistics allow.

`outcomes(condition, lookup)` is the set of values the condition may take on the unit's rows,
among TRUE, FALSE and NULL; a unit is pruned only when TRUE is not among them. Each operator's set
is computed from its operands' sets, which can only add outcomes, never lose one; a column the
statistics don't cover, and any expression the planner does not understand, may be anything.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from sqlglot import exp

from ..coltypes import parse_type
from ..column_statistics.merge import spark_order
from ..column_statistics.model import Date, Timestamp
from ..errors import ColstatsError
from ..metastore.rows.metadata_units import display_value

TRUE, FALSE, NULL = "TRUE", "FALSE", "NULL"
ANYTHING = frozenset({TRUE, FALSE, NULL})
_INTEGERS = ("tinyint", "smallint", "int", "bigint")
_STRINGS = ("string", "varchar", "char")


@dataclass(frozen=True)
class ColumnRange:
    """What a unit's statistics say of one column; None where they say nothing."""

    type_name: str
    low: object = None
    high: object = None
    nulls: int | None = None
    values: int | None = None  # non-null rows

    def describe(self) -> str:
        if self.values == 0:
            return "only nulls"
        bounds = f"min {display_value(self.low, self.type_name)}, max {display_value(self.high, self.type_name)}" \
            if self.low is not None else "no min/max"
        return bounds + (f", {self.nulls} nulls" if self.nulls is not None else "")


Lookup = Callable[[str], "ColumnRange | None"]


class Undecidable(ColstatsError):
    """A condition or literal the statistics cannot decide (caught by the planner and the estimator,
    which then assume the least)."""


def outcomes(node: exp.Expression | None, lookup: Lookup) -> frozenset:
    """The outcomes the condition may have on the unit's rows (TRUE only: no condition)."""
    if node is None:
        return frozenset({TRUE})
    try:
        return _outcomes(node, lookup)
    except Undecidable:
        return ANYTHING


def _outcomes(node: exp.Expression, lookup: Lookup) -> frozenset:
    if isinstance(node, exp.Paren):
        return _outcomes(node.this, lookup)
    if isinstance(node, exp.And):
        left, right = _outcomes(node.this, lookup), _outcomes(node.expression, lookup)
        return frozenset(and3(a, b) for a in left for b in right)
    if isinstance(node, exp.Or):
        left, right = _outcomes(node.this, lookup), _outcomes(node.expression, lookup)
        return frozenset(or3(a, b) for a in left for b in right)
    if isinstance(node, exp.Not):
        return frozenset({TRUE: FALSE, FALSE: TRUE, NULL: NULL}[o] for o in _outcomes(node.this, lookup))
    if isinstance(node, exp.Boolean):
        return frozenset({TRUE if node.this else FALSE})
    if isinstance(node, exp.Between):
        low = exp.GTE(this=node.this, expression=node.args["low"])
        high = exp.LTE(this=node.this, expression=node.args["high"])
        return _outcomes(exp.And(this=low, expression=high), lookup)
    try:  # a leaf the statistics can't decide may be anything; the rest of the condition still counts
        if isinstance(node, exp.Is):
            return _is_null(node, lookup)
        if isinstance(node, exp.In):
            return _in(node, lookup)
        if isinstance(node, (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)):
            return _comparison(node, lookup)
    except Undecidable:
        pass
    return ANYTHING


def conjuncts(node: exp.Expression | None) -> list[exp.Expression]:
    """The top-level AND terms of a condition."""
    if node is None:
        return []
    if isinstance(node, exp.Paren):
        return conjuncts(node.this)
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    return [node]


def and3(a: str, b: str) -> str:
    """SQL's AND of two truth values."""
    if FALSE in (a, b):
        return FALSE
    return NULL if NULL in (a, b) else TRUE


def or3(a: str, b: str) -> str:
    """SQL's OR of two truth values."""
    if TRUE in (a, b):
        return TRUE
    return NULL if NULL in (a, b) else FALSE


def _column(node: exp.Expression, lookup: Lookup) -> ColumnRange:
    if not isinstance(node, exp.Column):
        raise Undecidable
    found = lookup(node.name.lower())
    if found is None:
        raise Undecidable
    return found


def _with_nulls(column: ColumnRange, outcomes_of_values: set) -> frozenset:
    """The outcomes over the unit's rows: the values' (if it has any) plus NULL for null rows."""
    out: set = set()
    if column.values is None or column.values > 0:
        out |= outcomes_of_values if column.low is not None else {TRUE, FALSE}
    if column.nulls is None or column.nulls > 0:
        out.add(NULL)
    return frozenset(out)


FLIP = {exp.EQ: exp.EQ, exp.NEQ: exp.NEQ, exp.LT: exp.GT, exp.LTE: exp.GTE, exp.GT: exp.LT, exp.GTE: exp.LTE}


def _comparison(node: exp.Binary, lookup: Lookup) -> frozenset:
    op, left, right = type(node), node.this, node.expression
    if not isinstance(left, exp.Column):
        op, left, right = FLIP[op], right, left
    column = _column(left, lookup)
    value = literal_value(right, column.type_name)
    if value is None:
        return frozenset({NULL})
    if column.low is None:
        return _with_nulls(column, set())
    low, high, v = spark_order(column.low), spark_order(column.high), spark_order(value)
    possible: dict[type[exp.Binary], tuple[bool, bool]] = {  # whether TRUE and FALSE are possible
        exp.EQ: (low <= v <= high, not (low == high == v)),
        exp.NEQ: (not (low == high == v), low <= v <= high),
        exp.LT: (low < v, high >= v),
        exp.LTE: (low <= v, high > v),
        exp.GT: (high > v, low <= v),
        exp.GTE: (high >= v, low < v),
    }
    return _with_nulls(column, {o for o, can in zip((TRUE, FALSE), possible[op], strict=True) if can})


def _in(node: exp.In, lookup: Lookup) -> frozenset:
    if node.args.get("query") or node.args.get("unnest") or node.args.get("field"):
        raise Undecidable
    column = _column(node.this, lookup)
    values = [literal_value(e, column.type_name) for e in node.expressions]
    if any(v is None for v in values):
        raise Undecidable  # a NULL in the list: TRUE or NULL, never FALSE; not worth the cases
    if column.low is None:
        return _with_nulls(column, set())
    low, high = spark_order(column.low), spark_order(column.high)
    keys = {spark_order(v) for v in values}
    out = set()
    if any(low <= k <= high for k in keys):
        out.add(TRUE)
    if not (low == high and low in keys):
        out.add(FALSE)
    return _with_nulls(column, out)


def _is_null(node: exp.Is, lookup: Lookup) -> frozenset:
    if not isinstance(node.expression, exp.Null):
        raise Undecidable
    column = _column(node.this, lookup)
    out = set()
    if column.nulls is None or column.nulls > 0:
        out.add(TRUE)
    if column.values is None or column.values > 0:
        out.add(FALSE)
    return frozenset(out)


def literal_value(node: exp.Expression, type_name: str):
    """A literal compared with a column of `type_name`, in the statistics' form; None for NULL.
    Raises Undecidable when Spark's comparison would not be a plain comparison of the two values."""
    if isinstance(node, exp.Null):
        return None
    base = parse_type(type_name).base
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
        node = node.this  # DATE '...', TIMESTAMP '...'
    if isinstance(node, exp.Boolean):
        if base != "boolean":
            raise Undecidable
        return bool(node.this)
    negative = isinstance(node, exp.Neg)
    if negative:
        node = node.this
    if not isinstance(node, exp.Literal):
        raise Undecidable
    text = ("-" if negative else "") + node.this
    if not node.is_string and base not in _INTEGERS + ("float", "double", "decimal"):
        raise Undecidable  # a number against a string or date column compares as numbers
    try:
        return text_value(text, type_name, from_string=node.is_string)
    except (ValueError, InvalidOperation, TypeError):
        raise Undecidable from None


def text_value(text: str, type_name: str, from_string: bool = True):
    """A value's text (a partition value, a literal) in the statistics' form."""
    base = parse_type(type_name).base
    if base in _INTEGERS:
        if from_string:
            return int(text)
        number = Decimal(text)
        return int(number) if number == number.to_integral_value() and "e" not in text.lower() else number
    if base in ("float", "double"):
        return float(text)
    if base == "decimal":
        return Decimal(text)
    if base == "date":
        return Date.from_date(dt.date.fromisoformat(text.strip())).daysSinceEpoch
    if base == "timestamp":
        return Timestamp.from_datetime(dt.datetime.fromisoformat(text.strip())).microsSinceEpoch
    if base == "boolean":
        if text.lower() not in ("true", "false"):
            raise ValueError(text)
        return text.lower() == "true"
    if base in _STRINGS:
        return text
    raise TypeError(type_name)
