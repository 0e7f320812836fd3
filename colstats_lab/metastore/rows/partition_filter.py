"""Hive's partition filters (`listPartitionsByFilter`) compiled to a SQL condition over PARTITION_KEY_VALS.

`ds >= '2026-11-01' AND hr = 3`: comparisons (=, <>, !=, <, <=, >, >=), IN, BETWEEN, LIKE,
IS [NOT] NULL, AND, OR, NOT and parentheses, each on a partition key and literals. Integer keys
compare as integers and floating keys as numbers, every other key as text (ISO dates order as text);
a NULL partition value matches only IS NULL. LIKE is case-sensitive, as in Hive.
"""
from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import expressions as exp
from sqlglot.errors import ParseError, TokenError

from ...coltypes import parse_type
from ...errors import InvalidInputException, balanced, check_nesting
from ...errors import ParseError as ColstatsParseError
from ..db.dialect import SQLITE, Dialect

_COMPARISONS: dict[type[exp.Expression], str] = {
    exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_FLIPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_INTEGER_TYPES = {"tinyint", "smallint", "int", "bigint"}
_NUMBER_TYPES = {"float", "double", "decimal"}


@dataclass(frozen=True)
class CompiledFilter:
    """A SQL condition over columns `K0.PART_KEY_VAL`, `K1...` (one join alias per partition key) and its arguments."""

    condition: str
    args: tuple
    keys_used: tuple[int, ...]


def compile_partition_filter(text: str, keys: list[tuple[str, str]], table_name: str,
                             dialect: Dialect = SQLITE) -> CompiledFilter:
    """Compiles `text` for a table whose partition keys are `keys` [(name, type)]; raises
    InvalidInputException naming the part of the filter that is not understood."""
    try:
        check_nesting(text, "hive")
        tree = balanced(sqlglot.parse_one(text, read="hive"))
    except ColstatsParseError as exc:
        raise InvalidInputException(f"partition filter {text!r} does not parse: {exc.message}") from None
    except (ParseError, TokenError) as exc:
        errors = getattr(exc, "errors", None) or []
        where = f" at column {errors[0]['col']} ('{errors[0]['highlight']}')" if errors else ""
        raise InvalidInputException(f"partition filter {text!r} does not parse{where}") from None
    compiler = _Compiler({name.lower(): (i, parse_type(kind).base) for i, (name, kind) in enumerate(keys)},
                         table_name, text, dialect)
    if not isinstance(tree, exp.Expression):
        raise InvalidInputException(f"partition filter {text!r} is not a condition")
    condition = compiler.condition(tree)
    return CompiledFilter(condition, tuple(compiler.args), tuple(sorted(compiler.used)))


class _Compiler:
    def __init__(self, keys: dict[str, tuple[int, str]], table_name: str, text: str, dialect: Dialect):
        self.keys, self.table_name, self.text, self.dialect = keys, table_name, text, dialect
        self.args: list = []
        self.used: set[int] = set()

    def fail(self, node: exp.Expression, why: str) -> InvalidInputException:
        return InvalidInputException(f"partition filter {self.text!r}: {why}: {node.sql(dialect='hive')}")

    def condition(self, node: exp.Expression) -> str:
        if isinstance(node, exp.Paren):
            return self.condition(node.this)
        if isinstance(node, exp.And):
            return f"({self.condition(node.this)} AND {self.condition(node.expression)})"
        if isinstance(node, exp.Or):
            return f"({self.condition(node.this)} OR {self.condition(node.expression)})"
        if isinstance(node, exp.Not):
            return f"(NOT {self.condition(node.this)})"
        if type(node) in _COMPARISONS:
            return self.comparison(node, _COMPARISONS[type(node)])
        if isinstance(node, exp.In):
            column, kind = self.key(node.this, node)
            if node.args.get("query") is not None:
                raise self.fail(node, "IN takes a list of literals")
            values = [self.literal(v, kind, node) for v in node.expressions]
            self.args.extend(values)
            return f"{column} IN ({', '.join('?' * len(values))})"
        if isinstance(node, exp.Between):
            column, kind = self.key(node.this, node)
            self.args.extend([self.literal(node.args["low"], kind, node), self.literal(node.args["high"], kind, node)])
            return f"{column} BETWEEN ? AND ?"
        if isinstance(node, exp.Like):
            self.key(node.this, node)
            self.args.append(self.dialect.like_pattern(str(self.literal(node.expression, "string", node))))
            return self.dialect.like(self.text_of(node.this))
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
            self.key(node.this, node)
            return f"{self.text_of(node.this)} IS NULL"
        raise self.fail(node, "not a condition on partition keys (use comparisons, IN, BETWEEN, LIKE, IS NULL, AND, OR, NOT)")

    def comparison(self, node: exp.Expression, op: str) -> str:
        left, right = node.this, node.expression
        if isinstance(left, exp.Literal) and isinstance(right, exp.Column):
            left, right, op = right, left, _FLIPPED[op]
        column, kind = self.key(left, node)
        self.args.append(self.literal(right, kind, node))
        return f"{column} {op} ?"

    def key(self, node: exp.Expression, whole: exp.Expression) -> tuple[str, str]:
        """The SQL expression of a partition key's value, typed for comparison, and the key's type."""
        if not isinstance(node, exp.Column) or node.table:
            raise self.fail(whole, "the left side must be a partition key")
        name = node.name.lower()
        if name not in self.keys:
            raise InvalidInputException(
                f"partition filter {self.text!r}: {name} is not a partition key of {self.table_name} "
                f"(keys: {', '.join(self.keys)})")
        index, kind = self.keys[name]
        self.used.add(index)
        text = f"K{index}.PART_KEY_VAL"
        if kind in _INTEGER_TYPES:
            return self.dialect.number(text, integer=True), kind
        if kind in _NUMBER_TYPES:
            return self.dialect.number(text, integer=False), kind
        return text, kind

    def text_of(self, node: exp.Column) -> str:
        return f"K{self.keys[node.name.lower()][0]}.PART_KEY_VAL"

    def literal(self, node: exp.Expression, kind: str, whole: exp.Expression):
        negative = isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string
        if negative:
            node = node.this
        if not isinstance(node, exp.Literal):
            raise self.fail(whole, "compare a partition key with literals only")
        value = f"-{node.this}" if negative else node.this
        try:
            if kind in _INTEGER_TYPES:
                return int(value)
            if kind in _NUMBER_TYPES:
                return float(value)
        except ValueError:
            raise self.fail(whole, f"{value!r} is not a number") from None
        return str(value)
