"""Predicting a join's (or an aggregation's) shuffle skew from statistics: each side's heavy keys from the
frequent-items sketches kept with its column statistics, its rows, NULL keys and distinct keys, over the
partitions the WHERE keeps; used only where they are accurate for the current snapshot, else counted by
one Spark aggregation over that side's rows, and the report says which."""
from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from sqlglot import exp

from ..coltypes import parse_type
from ..column_statistics.frequent_items import (
    COLUMNS_PROPERTY,
    DEFAULT_FREQUENT_ITEMS,
    INTEGRAL,
    STRINGS,
    FrequentItems,
    FrequentValue,
    sketchable,
)
from ..column_statistics.sketches import sketch_ndv
from ..errors import InvalidArgument, parse_sql, spark_errors
from ..metastore import NoSuchObjectException, Partition, Table
from ..pruning.answers import NotFromStats, fresh_statistics
from ..pruning.partition_predicate import NotAPartitionPredicate, matching_partition_names
from ..quoting import column_ref
from ..skew.join import (
    HOW,
    ShuffleSettings,
    ShuffleSide,
    ShuffleSkewReport,
    hash_partitions,
    key_literal,
    measure,
    measure_aggregation,
    observe_aqe,
    predict_aggregation,
    predict_join,
    unlisted_hot_values,
)
from ..stats.sketches import frequent_items_input
from ..tables import read_snapshot
from .reads import snapshot_parts, valid_write_ids

if TYPE_CHECKING:
    from .session import Session

COUNTED_ITEMS = 4096  # values the counting sketch tracks when statistics cannot serve a side


def join_skew(session: Session, left: str, left_key: str | list[str], right: str, right_key: str | list[str],
              where: str | None = None, how: str = "inner", run: bool = False) -> ShuffleSkewReport:
    """`TableHandle.join_skew`: checks the arguments before Spark starts, then predicts from statistics."""
    how = _how(how)
    tables = [session.resolve(left), session.resolve(right)]
    keys = [_keys(tables[0], left_key), _keys(tables[1], right_key)]
    if len(keys[0]) != len(keys[1]):
        raise InvalidArgument(f"the join pairs {len(keys[0])} key column(s) of {tables[0].qualified_name} with "
                                    f"{len(keys[1])} of {tables[1].qualified_name}: give as many on each side")
    condition = _condition(where)
    names = [_kept(session, t, condition, tables) for t in tables]
    types = [_common_type(tables[0].column_type(a), tables[1].column_type(b)) for a, b in zip(*keys, strict=True)]
    key_type: str | list[str] = types[0] if len(types) == 1 else types
    settings = ShuffleSettings.of(session.spark)
    sides = [_side(session, t, k[0], n) if len(k) == 1 else
             _counted(session, t, k, n, _row_bytes(session, t), _size(t, _partitions(session, t, n)),
                      "a composite key is counted")
             for t, k, n in zip(tables, keys, names, strict=True)]
    # a key one side lists meets its true count on the other: a bound from that side's sketch would not hold it
    sides = [replace(side, counted=_count_keys(session, t, k, n, unlisted_hot_values(side, *sides), types))
             for side, t, k, n in zip(sides, tables, keys, names, strict=True)]
    with spark_errors("cannot place the join's keys"):
        report = predict_join(sides[0], sides[1], how, settings,
                              lambda values: hash_partitions(session.spark, values, key_type, settings.partitions))
    if run:
        frames = [_rows(session, t, n) for t, n in zip(tables, names, strict=True)]
        with spark_errors("cannot measure the join's shuffle"):
            measure(report, frames[0], frames[1], key_type)
            if report.broadcast is None and any(split is not False for split in report.tasks["aqe_splits"]):
                observe_aqe(report, frames[0], frames[1], key_type)  # what AQE did, where its rule may split
    return report


def group_skew(session: Session, table: str, key: str, where: str | None = None, run: bool = False
               ) -> ShuffleSkewReport:
    """`TableHandle.group_skew`: the shuffle of `groupBy(key)` over the partitions `where` keeps, from statistics."""
    meta = session.resolve(table)
    if not isinstance(key, str):
        raise InvalidArgument(f"group_skew predicts one key column, not {key!r}")
    name = _key(meta, key)
    names = _kept(session, meta, _condition(where), [meta])
    settings = ShuffleSettings.of(session.spark)
    side = _side(session, meta, name, names)
    type_name = parse_type(meta.column_type(name)).name
    with spark_errors("cannot place the aggregation's keys"):
        report = predict_aggregation(side, settings,
                                     lambda values: hash_partitions(session.spark, values, type_name, settings.partitions))
    if run:
        with spark_errors("cannot measure the aggregation's shuffle"):
            measure_aggregation(report, _rows(session, meta, names), type_name)
    return report


def _how(how: str) -> str:
    text = str(how).strip().lower().replace("_", " ")
    text = {"left outer": "left", "right outer": "right", "full outer": "full", "outer": "full"}.get(text, text)
    if text not in HOW:
        raise InvalidArgument(f"how is one of {', '.join(HOW)}, not {how!r}")
    return text


def _keys(table: Table, key: str | list[str]) -> list[str]:
    """The key's columns: one name, or a list of them (a composite key)."""
    names = [key] if isinstance(key, str) else list(key) if isinstance(key, (list, tuple)) else None
    if names is None:  # None, a number: never iterated as if it named columns
        raise InvalidArgument(f"a join key of {table.qualified_name} is a column name or a list of them, "
                                    f"not {key!r}")
    if not names:
        raise InvalidArgument(f"a join key of {table.qualified_name} names at least one column")
    return [_key(table, name) for name in names]


def _partitions(session: Session, table: Table, names: list[str] | None) -> list[Partition] | None:
    """The kept partitions (every one when `names` is None); None for a table without partitions."""
    if not table.is_partitioned:
        return None
    if names is None:
        return session.metastore.catalog.get_partitions(table.dbName, table.tableName)
    return session.metastore.catalog.get_partitions(table.dbName, table.tableName, names) if names else []


def _size(table: Table, partitions: list[Partition] | None) -> int:
    """The bytes of the kept partitions' files (of the table's, unpartitioned), as their statistics record."""
    if partitions is None:
        return int(table.parameters.get("totalSize") or 0)
    return sum(int(p.parameters.get("totalSize") or 0) for p in partitions)


def _key(table: Table, key: str) -> str:
    name = str(key).strip().lower()
    column = table.column(name)
    if column is None:
        raise table.no_such_column(name)
    if name in table.partition_key_names:
        raise InvalidArgument(f"{name} is a partition key of {table.qualified_name}: a join on it reads "
                                    "partitions, and its skew is the partitions' sizes")
    if parse_type(column.type).stats_kind is None:
        raise InvalidArgument(f"column {name} of {table.qualified_name} is {column.type}: a skew prediction "
                                    "takes keys of scalar types")
    return name


def _condition(where: str | None):
    """The WHERE as sqlglot's tree; a ParseError with a caret under the bad token."""
    if where is None or not str(where).strip():
        return None
    return parse_sql(str(where))


def _kept(session: Session, table: Table, condition: exp.Expression | None, tables: list[Table]) -> list[str] | None:
    """The names of `table`'s partitions the WHERE's terms on it keep (None: the whole table). Each term names
    one table's partition keys; a term on another column cannot be predicted from statistics."""
    if condition is None:
        return None
    mine = []
    for term in condition.flatten() if isinstance(condition, exp.And) else [condition]:
        columns = list(term.find_all(exp.Column))
        owners = {_owner(c, tables) for c in columns}
        if owners == {table.qualified_name}:
            mine.append(term.copy().transform(lambda n: exp.column(n.name) if isinstance(n, exp.Column) else n))
    if not mine:
        return None
    if not table.is_partitioned:
        raise InvalidArgument(f"{table.qualified_name} has no partitions for the WHERE to choose")
    try:
        return matching_partition_names(session.metastore, table, exp.and_(*mine) if len(mine) > 1 else mine[0])
    except NotAPartitionPredicate as why:
        raise InvalidArgument(f"the WHERE of a skew prediction chooses partitions: {why}") from None


def _owner(column: exp.Column, tables: list[Table]) -> str:
    """The table a WHERE's column belongs to: by its qualifier, else the one table with that partition key."""
    name, qualifier = column.name.lower(), (column.table or "").lower()
    if qualifier:
        for table in tables:
            if qualifier in (table.tableName, table.qualified_name):
                return table.qualified_name
        raise NoSuchObjectException(f"the WHERE names table {qualifier}, which the prediction does not join")
    holders = [t.qualified_name for t in tables if name in t.partition_key_names]
    if not holders:
        raise InvalidArgument(f"the WHERE of a skew prediction chooses partitions by their keys: {name} is "
                                    f"not a partition key of {' or '.join(t.qualified_name for t in tables)}")
    if len(holders) > 1:
        raise InvalidArgument(f"both tables have a partition key {name}: qualify it ({tables[0].tableName}.{name})")
    return holders[0]


def _common_type(left: str, right: str) -> str:
    """The type Spark compares (and hashes) both keys as."""
    a, b = parse_type(left), parse_type(right)
    if a.name == b.name:
        return a.name
    if a.base in INTEGRAL and b.base in INTEGRAL:
        return max(a.base, b.base, key=INTEGRAL.index)
    if a.base in STRINGS and b.base in STRINGS:
        return "string"
    # a whole number against a float or double is compared (and hashed) as a double: pandas writes an integer
    # column holding a NULL as float64
    if {a.base, b.base} & {"float", "double"} and {a.base, b.base} <= {*INTEGRAL, "float", "double"}:
        return "double"
    raise InvalidArgument(f"the keys are {a.name} and {b.name}: predict a join on keys of one type")


def _side(session: Session, table: Table, key: str, names: list[str] | None) -> ShuffleSide:
    """One side from its statistics where they are accurate and every kept partition kept a sketch of the
    key; otherwise from one Spark aggregation over the kept rows."""
    metastore = session.metastore
    valid = valid_write_ids(session, table)
    partitions = _partitions(session, table, names)
    with_rows = [p.partName for p in partitions or [] if int(p.parameters.get("numRows") or 0)]
    size = _size(table, partitions)
    row_bytes = _row_bytes(session, table)
    why = None
    if not sketchable(table.column_type(key)):
        why = f"{key} is {table.column_type(key)}, whose frequent values no sketch keeps"
    else:
        try:
            rows, objs = fresh_statistics(metastore, table, [key], partitions, valid)
            sketches = metastore.column_stats.get_frequent_items(table.dbName, table.tableName, key,
                                                    with_rows if partitions is not None else None)
            missing = [p for p in (with_rows if partitions is not None else [None]) if p not in sketches]
            if missing and rows:
                why = (f"the statistics of {missing[0] or table.qualified_name} keep no frequent values of {key} "
                       f"(a near-unique column keeps none; a table whose '{COLUMNS_PROPERTY}' leaves it out neither)")
            else:
                items = FrequentItems.merged(list(sketches.values()), table.column_type(key))
                obj = objs.get(key)
                data = obj.statsData.value if obj is not None else None
                nulls = int(getattr(data, "numNulls", 0) or 0)
                distinct = int(getattr(data, "numDVs", 0) or 0)
                where = (f"{len(with_rows)} partition{'s' if len(with_rows) != 1 else ''}" if partitions is not None
                         else "the table")
                return ShuffleSide(table.qualified_name, key, table.column_type(key), rows, nulls, distinct,
                                   items.top() if items else [], items.max_error if items else 0, row_bytes, size,
                                   f"statistics of {where}, accurate for {valid}")
        except NotFromStats as stale:
            why = str(stale)
    return _counted(session, table, [key], names, row_bytes, size, why)


def _count_keys(session: Session, table: Table, keys: list[str], names: list[str] | None, values: list,
                types: list[str]) -> dict:
    """The exact rows of each of `values` (a composite key's as tuples) among the side's kept rows: one small
    aggregation over the rows holding them, on the key cast to the type the join compares."""
    if not values:
        return {}
    columns = [F.col(column_ref(k)).cast(t).alias(f"k{i}") for i, (k, t) in enumerate(zip(keys, types, strict=True))]
    wanted = [v if isinstance(v, tuple) else (v,) for v in values]
    if len(keys) == 1:
        condition = columns[0].isin(*[key_literal(v[0], types[0]) for v in wanted])
    else:
        condition = F.struct(*columns).isin(*[
            F.struct(*[key_literal(part, t).alias(f"k{i}") for i, (part, t) in enumerate(zip(v, types, strict=True))])
            for v in wanted])
    with spark_errors(f"cannot count the hot keys in {table.qualified_name}"):
        found = _rows(session, table, names).where(condition).groupBy(*columns).count().collect()  # <= the hot keys
    counts = {tuple(row[f"k{i}"] for i in range(len(keys))): int(row["count"]) for row in found}
    return {value: counts.get(key, 0) for value, key in zip(values, wanted, strict=True)}


def _counted(session: Session, table: Table, keys: list[str], names: list[str] | None, row_bytes: float, size: int,
             why: str) -> ShuffleSide:
    """The side's figures from one aggregation over its rows: a frequent-items sketch of the key as ANALYZE
    keeps it (a composite key, or one of a type no sketch keeps, as JSON text), the rows, NULL keys (a NULL in
    any column) and an HLL sketch of the keys."""
    frame = _rows(session, table, names)
    columns = [F.col(column_ref(k)) for k in keys]
    any_null = F.lit(False)
    for column in columns:
        any_null = any_null | column.isNull()
    as_text = len(keys) > 1 or not sketchable(table.column_type(keys[0]))
    if as_text:  # a double or decimal as a bigint would merge keys: their exact text is sketched
        type_name = "string"
        image = F.when(~any_null, F.to_json(F.struct(*[c.alias(f"k{i}") for i, c in enumerate(columns)])))
    else:
        type_name = table.column_type(keys[0])
        image = frequent_items_input(columns[0], type_name)
    with spark_errors(f"cannot count the keys of {table.qualified_name}"):
        row = frame.select(image.alias("f"), F.xxhash64(*columns).alias("h"), any_null.alias("n")) \
            .agg(F.expr(f"approx_top_k_accumulate(f, {max(COUNTED_ITEMS, DEFAULT_FREQUENT_ITEMS)}).sketch").alias("s"),
                 F.count(F.lit(1)).alias("rows"), F.count_if("n").alias("nulls"),
                 F.hll_sketch_agg(F.when(~F.col("n"), F.col("h"))).alias("hll")).collect()[0]  # one row
    rows, nulls = int(row["rows"]), int(row["nulls"])
    items = FrequentItems.merged([bytes(row["s"])], type_name) if rows else None
    distinct = sketch_ndv(bytes(row["hll"]), rows - nulls) if row["hll"] is not None else 0
    frequent = items.top() if items else []
    if as_text:  # each value back from its JSON text: a composite key's as the tuple of its columns
        types = [parse_type(table.column_type(k)).base for k in keys]
        frequent = [FrequentValue(_from_json(str(v.value), types), v.estimate, v.lower, v.upper) for v in frequent]
        type_name = "string" if len(keys) > 1 else table.column_type(keys[0])
    return ShuffleSide(table.qualified_name, ", ".join(keys), type_name, rows, nulls, distinct, frequent,
                       items.max_error if items else 0, row_bytes, size, f"counted: {why}",
                       tuple(keys) if len(keys) > 1 else ())


def _from_json(text: str, bases: list[str]):
    """A key's value from the JSON text `to_json` gave it: exact decimals, floats as Python's (whose text
    round-trips Spark's), the rest as JSON reads them; a tuple for a composite key."""
    decoded = json.loads(text, parse_float=Decimal)
    values = [decoded.get(f"k{i}") for i in range(len(bases))]
    values = [float(v) if base in ("float", "double") and v is not None else v for v, base in zip(values, bases, strict=True)]
    return tuple(values) if len(values) > 1 else values[0]


def _rows(session: Session, table: Table, names: list[str] | None) -> DataFrame:
    """The side's rows in the current snapshot, of the kept partitions (only theirs are listed)."""
    if names == []:
        return read_snapshot(session.spark, table, [])
    _, parts = snapshot_parts(session, table.qualified_name, partitions=_partitions(session, table, names))
    return read_snapshot(session.spark, table, parts)


def _row_bytes(session: Session, table: Table) -> float:
    """A row's bytes in a shuffle as Spark estimates it: 8 per column and a row header, plus each string
    column's average length (from the table's statistics where it has them, else 20)."""
    lengths = {}
    stats = session.metastore.column_stats.get_table_statistics(table.dbName, table.tableName,
                                                   [c.name for c in table.cols]) if table.cols else None
    for obj in (stats.statsObj if stats else []):
        average = getattr(obj.statsData.value, "avgColLen", None)
        if average is not None:
            lengths[obj.colName] = float(average)
    total = 8.0
    for column in [*table.cols, *table.partitionKeys]:
        total += 8
        if parse_type(column.type).base in ("string", "varchar", "char", "binary"):
            total += lengths.get(column.name, 20.0)
    return total
