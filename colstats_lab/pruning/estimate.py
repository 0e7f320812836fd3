"""How many rows a single-table condition keeps, from the statistics alone (no scan).

The rows are those of the partitions the plan kept, from their row counts. Each condition on a column
keeps a fraction of them:
- a range (`<`, `<=`, `>`, `>=`, BETWEEN): the KLL sketch's CDF at the bounds, times the column's
  non-null share; without a sketch, a uniform spread between min and max (numbers, dates, timestamps);
- an equality (`=`, IN), where the statistics keep the column's frequent values (PostgreSQL's rule for its
  most common values): a listed value's share of the values the sketch counted; any other value an equal
  part of what the listed ones leave, over the NDV less the values listed (at most the sketch's bound for an
  unlisted value). Without them: the value's share in the KLL sketch when it holds the value as a heavy
  hitter (more than twice the sketch's rank error), else the non-null share over the NDV; 0 outside [min, max];
- `<>`: the non-null share less the equality's;
- IS NULL / IS NOT NULL: the null share and its complement;
- AND multiplies (the columns taken as independent), OR adds less the overlap, NOT complements within the
  rows where its comparison is not NULL;
- a condition on partition keys alone keeps 1 (the plan has already kept exactly its partitions);
  anything else keeps 1/3, the classic default for an unknown predicate, and is named in `how` (so does
  a condition on keys the pruning may not have decided, such as a function of a key).
A range's fraction is within the sketch's rank error (KLL_K = 200: 1.33 % of the rows per bound, 99 %
confidence) of the exact fraction; that error adds per bound and multiplies across AND.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from ..coltypes import StatsKind
from ..column_statistics.frequent_items import FrequentItems
from ..column_statistics.model import ColumnStatisticsObj, Date, Timestamp
from ..column_statistics.quantiles import Distribution, rank_error
from .statistics import FLIP, Undecidable, literal_value

UNKNOWN_FRACTION = 1 / 3


@dataclass
class RowEstimate:
    """The rows a condition is estimated to keep, or None with the reason in `how`."""

    rows: int | None
    how: list[str] = field(default_factory=list)

    def describe(self) -> str:
        if self.rows is None:
            return "no estimate: " + "; ".join(self.how)
        rows = f"{self.rows:,} row{'' if self.rows == 1 else 's'}"
        return f"about {rows} ({'; '.join(self.how) or 'no condition'})"


@dataclass
class _Column:
    obj: ColumnStatisticsObj
    rows: int
    frequent: FrequentItems | None = None

    @property
    def data(self):
        return self.obj.statsData.value

    @property
    def non_null_share(self) -> float:
        return (self.rows - self.data.numNulls) / self.rows if self.rows else 0.0

    @property
    def distribution(self) -> Distribution | None:
        return Distribution.of_stats(self.obj)


class _Unsure(Exception):
    pass


def estimate_rows(rows: int, where: exp.Expression | None, columns: dict[str, ColumnStatisticsObj],
                  partition_keys: set[str], frequent: dict[str, FrequentItems] | None = None) -> RowEstimate:
    """The estimate over `rows` rows whose columns' statistics are `columns` (by lower-case name), with the
    frequent values of those that keep them (`frequent`, by the same names)."""
    how: list[str] = []
    known = {n: _Column(o, rows, (frequent or {}).get(n)) for n, o in columns.items()}
    fraction = 1.0 if where is None else _fraction(where, known, partition_keys, how)
    return RowEstimate(round(rows * min(max(fraction, 0.0), 1.0)), list(dict.fromkeys(how)))


def _fraction(node: exp.Expression, columns: dict[str, _Column], keys: set[str], how: list[str]) -> float:
    if isinstance(node, exp.Paren):
        return _fraction(node.this, columns, keys, how)
    if isinstance(node, exp.And):
        return _fraction(node.this, columns, keys, how) * _fraction(node.expression, columns, keys, how)
    if isinstance(node, exp.Or):
        a, b = _fraction(node.this, columns, keys, how), _fraction(node.expression, columns, keys, how)
        return a + b - a * b
    if isinstance(node, exp.Not):  # NOT of a comparison keeps no row where the comparison is NULL
        return max(0.0, _decided_share(node.this, columns) - _fraction(node.this, columns, keys, how))
    named = {c.name.lower() for c in node.find_all(exp.Column)}
    if named and named <= keys and _plain(node):
        return 1.0
    try:
        return _leaf(node, columns, how)
    except (_Unsure, Undecidable):
        how.append(f"{node.sql(dialect='spark')} taken as {UNKNOWN_FRACTION:.2f}")
        return UNKNOWN_FRACTION


_PLAIN = (exp.Column, exp.Identifier, exp.Literal, exp.Neg, exp.Cast, exp.DataType, exp.Null, exp.Boolean, exp.Paren,
          exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.In, exp.Between, exp.Is, exp.Not)


def _plain(node: exp.Expression) -> bool:
    """Whether a condition compares columns with literals only: the partition pruning decides those
    exactly (a function of a key, `'a' 'b'` concatenated, ... it may not)."""
    return all(isinstance(n, _PLAIN) for n in node.walk())


def _decided_share(node: exp.Expression, columns: dict[str, _Column]) -> float:
    """The share of rows on which `node` is TRUE or FALSE rather than NULL: a comparison of one column is
    NULL on that column's nulls; anything else is taken as never NULL."""
    if isinstance(node, exp.Paren):
        return _decided_share(node.this, columns)
    if isinstance(node, (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.Between, exp.In)):
        named = {c.name.lower() for c in node.find_all(exp.Column)}
        if len(named) == 1 and (name := next(iter(named))) in columns:
            return columns[name].non_null_share
    return 1.0


def _leaf(node: exp.Expression, columns: dict[str, _Column], how: list[str]) -> float:
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        column = _column_of(node.this, columns)
        how.append(f"{node.this.name}: null count")
        return 1.0 - column.non_null_share
    if isinstance(node, exp.Between):
        column = _column_of(node.this, columns)
        low = literal_value(node.args["low"], column.obj.colType)
        high = literal_value(node.args["high"], column.obj.colType)
        return max(0.0, _below(column, high, True, how) - _below(column, low, False, how))
    if isinstance(node, exp.In) and not node.args.get("query"):
        column = _column_of(node.this, columns)
        values = {literal_value(e, column.obj.colType) for e in node.expressions}
        return min(column.non_null_share, sum(_equal(column, v, how) for v in values if v is not None))
    if isinstance(node, (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)):
        op: type[exp.Binary] = type(node)
        left, right = node.this, node.expression
        if not isinstance(left, exp.Column):
            op, left, right = FLIP[op], right, left
        column = _column_of(left, columns)
        value = literal_value(right, column.obj.colType)
        if value is None:
            return 0.0  # a comparison with NULL keeps no row
        if op is exp.EQ:
            return _equal(column, value, how)
        if op is exp.NEQ:
            return max(0.0, column.non_null_share - _equal(column, value, how))
        if op in (exp.LT, exp.LTE):
            return _below(column, value, op is exp.LTE, how)
        return column.non_null_share - _below(column, value, op is exp.GT, how)
    raise _Unsure


def _column_of(node: exp.Expression, columns: dict[str, _Column]) -> _Column:
    if not isinstance(node, exp.Column) or node.name.lower() not in columns:
        raise _Unsure
    return columns[node.name.lower()]


def _number(value: Any) -> float:
    if isinstance(value, Date):
        return value.daysSinceEpoch
    if isinstance(value, Timestamp):
        return value.microsSinceEpoch
    return float(value)


def _probe(column: _Column, value: Any) -> Any:
    """A literal as the column's sketch compares it: a float for doubles and decimals (a Decimal literal
    against a doubles sketch), the value itself otherwise (days, microseconds, whole numbers)."""
    return float(value) if column.obj.statsData.kind in (StatsKind.DOUBLE, StatsKind.DECIMAL) else value


def _below(column: _Column, value: Any, inclusive: bool, how: list[str]) -> float:
    """The share of all rows whose value is below `value` (at or below with `inclusive`)."""
    name = column.obj.colName
    if column.non_null_share == 0:
        how.append(f"{name}: only nulls")
        return 0.0
    distribution = column.distribution
    if distribution is not None and not distribution.is_empty:
        how.append(f"{name}: KLL CDF")
        return column.non_null_share * distribution.fraction_below(_probe(column, value), inclusive)
    data = column.data
    low, high = getattr(data, "lowValue", None), getattr(data, "highValue", None)
    if low is None or high is None:
        raise _Unsure
    how.append(f"{name}: uniform between min and max")
    low_n, high_n, v = _number(low), _number(high), float(value)
    if v < low_n or (v == low_n and not inclusive):
        return 0.0
    if v > high_n or (v == high_n and inclusive):
        return column.non_null_share
    return column.non_null_share * (v - low_n) / (high_n - low_n) if high_n > low_n else 0.0


def _equal(column: _Column, value: Any, how: list[str]) -> float:
    """The share of all rows equal to `value`."""
    name = column.obj.colName
    if column.non_null_share == 0:
        how.append(f"{name}: only nulls")
        return 0.0
    data = column.data
    low, high = getattr(data, "lowValue", None), getattr(data, "highValue", None)
    if low is not None and high is not None and not (_number(low) <= float(value) <= _number(high)):
        how.append(f"{name}: outside min and max")
        return 0.0
    if column.frequent is not None and column.frequent.rows:
        return _frequent_share(column, column.frequent, value, how)
    distribution = column.distribution
    if distribution is not None and not distribution.is_empty:
        probe = _probe(column, value)
        mass = distribution.fraction_below(probe, True) - distribution.fraction_below(probe, False)
        if mass > 2 * rank_error():
            how.append(f"{name}: heavy hitter in the KLL sketch")
            return column.non_null_share * mass
    ndv = getattr(data, "numDVs", None)
    if not ndv:
        raise _Unsure
    how.append(f"{name}: 1/NDV")
    return column.non_null_share / ndv


def _frequent_share(column: _Column, items: FrequentItems, value: Any, how: list[str]) -> float:
    """The share of all rows equal to `value` by the column's frequent values: a listed value's own share,
    any other an equal part of what the listed values leave over the other distinct values."""
    name = column.obj.colName
    listed = items.top()
    probe = value.to_date() if isinstance(value, Date) else value
    for item in listed:
        if item.value == probe:
            how.append(f"{name}: {item.value} among its frequent values ({item.estimate / items.rows:.1%})")
            return column.non_null_share * item.estimate / items.rows
    ndv = int(getattr(column.data, "numDVs", 0) or 0)
    if not listed:  # nothing stands out: every value alike
        if not ndv:
            raise _Unsure
        how.append(f"{name}: no value stands out among its frequent values: 1/NDV")
        return column.non_null_share / ndv
    left = max(0.0, 1.0 - sum(item.estimate for item in listed) / items.rows)
    others = max(1, ndv - len(listed))
    share = min(left / others, items.max_error / items.rows)
    how.append(f"{name}: not among its {len(listed)} frequent values: "
               f"{left:.1%} of the values over the other {others:,} distinct ones")
    return column.non_null_share * share
