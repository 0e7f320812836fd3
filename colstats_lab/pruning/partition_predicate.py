"""Predicates on partition keys, as the metastore selects partitions by them: SQL's three-valued logic
over each partition's key values, narrowed first through the metastore's index on key values, so
that one day of a 100,000-partition table reads one day's rows of the metastore.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from sqlglot import exp

from ..coltypes import parse_type
from ..errors import ColstatsError
from ..metastore import Metastore, Partition, Table

# Up to this many partitions ruled out by key values are still listed and reported one by one (a
# small table's report names each); above it they are counted, not listed (a 100,000-partition table).
LISTED_PRUNED_LIMIT = 1_000


class NotAPartitionPredicate(ColstatsError):
    """The expression is not a predicate on partition keys and literals (the message says which part)."""


def matching_partition_names(metastore: Metastore, table: Table, condition: exp.Expr) -> list[str]:
    """The names of the partitions for which `condition` (on partition keys only) is true, in name order."""
    types = {k.name: parse_type(k.type) for k in table.partitionKeys}
    keep = _predicate(condition, types)
    keys = table.partition_key_names
    candidates = metastore.catalog.get_partition_values(table.dbName, table.tableName, _index_filter(condition, types))
    return [name for name, values in candidates.items() if keep(dict(zip(keys, values, strict=True))) is True]


@dataclass
class Preselection:
    """The partitions a query's partition predicate keeps, chosen in the metastore before any listing,
    and what the others hold by their recorded numRows and totalSize."""

    partitions: list[Partition]
    pruned: int
    pruned_rows: int
    pruned_bytes: int


def preselect(metastore: Metastore, table: Table, condition: exp.Expression | None) -> Preselection | None:
    """The partitions kept by the partition-key terms of `condition`, when those rule out more than
    LISTED_PRUNED_LIMIT partitions; None: list every partition and let the planner decide each."""
    keys_only = partition_conjuncts(table, condition)
    if keys_only is None:
        return None
    names = matching_partition_names(metastore, table, keys_only)
    total = metastore.catalog.count_partitions(table.dbName, table.tableName)
    if total - len(names) <= LISTED_PRUNED_LIMIT:
        return None
    kept = metastore.catalog.get_partitions(table.dbName, table.tableName, names) if names else []
    kept_sum = lambda key: sum(int(p.parameters.get(key) or 0) for p in kept)  # noqa: E731
    return Preselection(kept, total - len(kept),
                        max(int(table.parameters.get("numRows") or 0) - kept_sum("numRows"), 0),
                        max(int(table.parameters.get("totalSize") or 0) - kept_sum("totalSize"), 0))


def partition_conjuncts(table: Table, condition: exp.Expression | None) -> exp.Expr | None:
    """The top-level AND terms of a query's filter that name partition keys only (what rules whole
    partitions out before any listing), ANDed; None when there are none."""
    if condition is None or not table.is_partitioned:
        return None
    types = {k.name: parse_type(k.type) for k in table.partitionKeys}
    usable = []
    for term in _conjuncts(condition):
        columns = list(term.find_all(exp.Column))
        if columns and all(c.name.lower() in types for c in columns):
            try:
                _predicate(term, types)
            except NotAPartitionPredicate:
                continue
            usable.append(term)
    return exp.and_(*usable) if usable else None


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    """The top-level AND terms of a condition, parentheses removed."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return _conjuncts(node.left) + _conjuncts(node.right)
    return [node]


_INDEXED = (exp.EQ, exp.In, exp.Between, exp.GT, exp.GTE, exp.LT, exp.LTE)


def _index_filter(node: exp.Expr, types: dict) -> str | None:
    """The conjuncts of the filter that the metastore can select by its index on key values: a
    comparison, IN or BETWEEN of a text, date or integer key with literals, whose SQL keeps at least the
    partitions the filter keeps; the filter itself then decides among those (None: read them all)."""
    usable = []
    for conjunct in _conjuncts(node):
        if not isinstance(conjunct, _INDEXED):
            continue
        columns = list(conjunct.find_all(exp.Column))
        literals = [n for n in conjunct.iter_expressions() if not isinstance(n, exp.Column)]
        if isinstance(conjunct, exp.In):
            literals = conjunct.expressions
        if len(columns) != 1 or columns[0].name.lower() not in types:
            continue
        numeric = types[columns[0].name.lower()].base in ("tinyint", "smallint", "int", "bigint")
        textual = types[columns[0].name.lower()].base in ("string", "varchar", "char", "date")
        # a literal of the key's own kind: the metastore's SQL then compares exactly as the filter does
        if (numeric or textual) and all(isinstance(n, exp.Literal) and (n.is_number if numeric else n.is_string)
                                        for n in literals):
            usable.append(conjunct.sql(dialect="hive"))
    return " AND ".join(f"({c})" for c in usable) or None


def _predicate(node: exp.Expr, types: dict):
    """The filter as a function of one partition's key values (text by key name), in SQL's three-valued
    logic: True keeps the partition. Raises NotAPartitionPredicate for what is not a partition predicate."""
    if isinstance(node, exp.Paren):
        return _predicate(node.this, types)
    if isinstance(node, (exp.And, exp.Or)):
        left, right = _predicate(node.left, types), _predicate(node.right, types)
        if isinstance(node, exp.And):
            def both(values):
                a, b = left(values), right(values)
                return False if False in (a, b) else (None if None in (a, b) else True)
            return both

        def either(values):
            a, b = left(values), right(values)
            return True if True in (a, b) else (None if None in (a, b) else False)
        return either
    if isinstance(node, exp.Not):
        inner = _predicate(node.this, types)
        return lambda values: None if (v := inner(values)) is None else not v
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        key = _key(node.this, types)
        return lambda values: key(values) is None
    if isinstance(node, exp.In):
        key = _key(node.this, types)
        options = [_literal(o, _key_type(node.this, types)) for o in node.expressions]
        return lambda values: None if (v := key(values)) is None else v in options
    if isinstance(node, exp.Between):
        key = _key(node.this, types)
        low = _literal(node.args["low"], _key_type(node.this, types))
        high = _literal(node.args["high"], _key_type(node.this, types))
        return lambda values: None if (v := key(values)) is None else low <= v <= high
    comparisons = {exp.EQ: lambda a, b: a == b, exp.NEQ: lambda a, b: a != b, exp.GT: lambda a, b: a > b,
                   exp.GTE: lambda a, b: a >= b, exp.LT: lambda a, b: a < b, exp.LTE: lambda a, b: a <= b}
    for kind, compare in comparisons.items():
        if isinstance(node, kind):
            left, right = node.left, node.right
            if isinstance(left, exp.Literal) and isinstance(right, exp.Column):
                left, right = right, left
                compare = {exp.GT: comparisons[exp.LT], exp.GTE: comparisons[exp.LTE],
                           exp.LT: comparisons[exp.GT], exp.LTE: comparisons[exp.GTE]}.get(kind, compare)
            key = _key(left, types)
            literal = _literal(right, _key_type(left, types))
            return lambda values: None if (v := key(values)) is None or literal is None else compare(v, literal)
    raise NotAPartitionPredicate(f"the filter {node.sql(dialect='spark')} is not a partition predicate statistics can use")


def _key_type(node: exp.Expression, types: dict):
    if not isinstance(node, exp.Column) or node.name.lower() not in types:
        raise NotAPartitionPredicate(f"the filter names {node.sql(dialect='spark')}, not a partition key: answered by a scan")
    return types[node.name.lower()]


def _converter(col_type):
    """The function from a key value's text to the value SQL compares."""
    base = col_type.base
    if base in ("tinyint", "smallint", "int", "bigint"):
        return int
    if base in ("float", "double"):
        return _spark_ordered_double
    return Decimal if base == "decimal" else str


def _spark_ordered_double(text: str) -> tuple[int, float]:
    """A double as Spark orders and compares it: NaN equal to NaN and above every other value (Infinity too)."""
    number = float(text)
    return (1, 0.0) if number != number else (0, number)


def _typed(text: str | None, col_type):
    return None if text is None else _converter(col_type)(text)


def _key(node: exp.Expression, types: dict):
    """A function giving the key's typed value from one partition's key values."""
    convert = _converter(_key_type(node, types))
    name = node.name.lower()
    return lambda values: None if (text := values[name]) is None else convert(text)


def _literal(node: exp.Expression, col_type):
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        return _typed("-" + node.this.this, col_type)
    if not isinstance(node, exp.Literal):
        raise NotAPartitionPredicate(f"{node.sql(dialect='spark')} is not a literal")
    try:
        return _typed(node.this, col_type)
    except (ValueError, ArithmeticError):
        raise NotAPartitionPredicate(f"{node.sql(dialect='spark')} is not a {col_type.name}") from None


