"""Answering `SELECT count(*), count(c), min(c), max(c) FROM t [WHERE <partition predicate>]` from
statistics, without a Spark job, when every statistic involved is accurate for the query's snapshot.

Anything else (another aggregate, a filter on a data column, a GROUP BY, statistics that are not
accurate for the snapshot) says why and leaves the query to Spark.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from sqlglot import exp

from ..coltypes import StatsKind, parse_type
from ..column_statistics.estimators import Band, Tier, inexact_figures, tiered_columns
from ..column_statistics.model import ColumnStatisticsObj
from ..errors import ColstatsError, ParseError, parse_sql
from ..metastore import Metastore, Partition, Table, ValidWriteIdList
from ..tables.kinds import kind_of
from .partition_predicate import NotAPartitionPredicate, matching_partition_names
from .references import check_single_table_references, qualifiers_of, referenced_column, resolved_references

_RANGED = (StatsKind.LONG, StatsKind.DOUBLE, StatsKind.DECIMAL, StatsKind.DATE, StatsKind.TIMESTAMP)


@dataclass
class StatsAnswer:
    """`frame` is the answer (None: run the query in Spark); `reason` says why either way."""

    frame: pd.DataFrame | None
    reason: str


@dataclass(frozen=True)
class _Aggregate:
    function: str  # count, min, max
    column: str | None  # None: count(*)
    name: str  # the output column's name, as Spark would give it


class NotFromStats(ColstatsError):
    """Why the statistics cannot serve a query (its text is the reason shown to the user)."""


def answer_from_stats(metastore: Metastore, query: str | exp.Expression, current_db: str,
                      snapshot_of) -> StatsAnswer:
    """`query` as text or as its parsed tree (read, never changed); `snapshot_of(table)` gives the
    ValidWriteIdList the query reads with."""
    try:
        table, aggregates, where = _shape(metastore, query, current_db)
        valid: ValidWriteIdList = snapshot_of(table)
        partitions = _selected_partitions(metastore, table, where)
        return _answer(metastore, table, aggregates, partitions, valid)
    except NotFromStats as why:
        return StatsAnswer(None, str(why))


def _shape(metastore: Metastore, query: str | exp.Expression, current_db: str
           ) -> tuple[Table, list[_Aggregate], exp.Where | None]:
    try:
        tree = parse_sql(query) if isinstance(query, str) else query
    except ParseError:
        raise NotFromStats("the query is not one statistics can answer") from None
    if not isinstance(tree, exp.Select):
        raise NotFromStats("only a single SELECT can be answered from statistics")
    for clause in ("joins", "group", "having", "order", "limit", "distinct", "qualify", "windows"):
        if tree.args.get(clause):
            raise NotFromStats(f"a query with {clause.upper()} is answered by a scan")
    source = tree.args.get("from") or tree.args.get("from_")
    tables = list(source.find_all(exp.Table)) if source else []
    if source is None or len(tables) != 1 or not isinstance(source.this, exp.Table):
        raise NotFromStats("statistics answer queries over one table")
    node = tables[0]
    db = (node.db or current_db).lower()
    if not metastore.catalog.table_exists(db, node.name):
        raise NotFromStats(f"{db}.{node.name.lower()} is not a lab table")
    table = metastore.catalog.get_table(db, node.name)
    qualifiers = qualifiers_of(table, node.alias_or_name)
    aggregates = [_aggregate(table, projection, qualifiers) for projection in tree.expressions]
    where = tree.args.get("where")
    if where is not None and where.find(exp.Select) is not None:
        raise NotFromStats("a WHERE with a subquery is answered by a scan")
    check_single_table_references(None if where is None else where.this, table, qualifiers)
    return table, aggregates, None if where is None else exp.Where(this=resolved_references(where.this, table,
                                                                                           qualifiers))


def _aggregate(table: Table, projection: exp.Expression, qualifiers: set[str]) -> _Aggregate:
    alias = projection.alias if isinstance(projection, exp.Alias) else None
    node = projection.this if isinstance(projection, exp.Alias) else projection
    if isinstance(node, exp.Count):
        inner = node.this
        if isinstance(inner, exp.Distinct):
            raise NotFromStats("count(DISTINCT ...) is answered by a scan")
        if isinstance(inner, exp.Star) or (isinstance(inner, exp.Literal) and not inner.is_string):
            return _Aggregate("count", None, alias or "count(1)")
        if isinstance(inner, (exp.Column, exp.Dot)):
            column = _data_column(table, inner, qualifiers)
            return _Aggregate("count", column, alias or f"count({column})")
    if isinstance(node, (exp.Min, exp.Max)) and isinstance(node.this, (exp.Column, exp.Dot)):
        column = _data_column(table, node.this, qualifiers)
        column_type = _type_of(table, column)
        if parse_type(column_type).stats_kind not in _RANGED:
            raise NotFromStats(f"there is no min/max statistic for {column} ({column_type})")
        function = "min" if isinstance(node, exp.Min) else "max"
        return _Aggregate(function, column, alias or f"{function}({column})")
    raise NotFromStats(f"{projection.sql(dialect='spark')} is not count, min or max of a column")


def _data_column(table: Table, node: exp.Column | exp.Dot, qualifiers: set[str]) -> str:
    """The data column or struct leaf a reference names (`p.id` is the leaf of struct p, never column id)."""
    name = referenced_column(table, node, qualifiers)
    if name is None or name in table.partition_key_names:
        raise NotFromStats(f"{node.sql(dialect='spark')} is not a data column of {table.qualified_name}")
    return name


def _type_of(table: Table, name: str) -> str:
    leaf = table.stats_column(name)
    return leaf.type if leaf is not None else table.column_type(name)


def _selected_partitions(metastore: Metastore, table: Table, where: exp.Where | None) -> list[Partition] | None:
    """The partitions the filter keeps (None: an unpartitioned table); only those are read."""
    if not table.is_partitioned:
        if where is not None:
            raise NotFromStats("a filter on an unpartitioned table is answered by a scan")
        return None
    if where is None:
        return metastore.catalog.get_partitions(table.dbName, table.tableName)
    try:
        names = matching_partition_names(metastore, table, where.this)
    except NotAPartitionPredicate as why:
        raise NotFromStats(str(why)) from None
    return metastore.catalog.get_partitions(table.dbName, table.tableName, names) if names else []


def _answer(metastore: Metastore, table: Table, aggregates: list[_Aggregate], partitions: list[Partition] | None,
            valid: ValidWriteIdList) -> StatsAnswer:
    if all(a.function == "count" and a.column is None for a in aggregates):
        counted = kind_of(table).record_count(metastore, table, partitions)
        if counted is not None:
            rows, reason = counted
            return StatsAnswer(pd.DataFrame([{agg.name: rows for agg in aggregates}]), reason)
    columns = sorted({a.column for a in aggregates if a.column})
    rows, objs = fresh_statistics(metastore, table, columns, partitions, valid)
    _exact_figures(table, aggregates, partitions)
    record = {agg.name: _value(table, agg, rows, objs) for agg in aggregates}
    names = [p.partName for p in partitions] if partitions is not None else None
    where = (f"{len(names)} partition{'s' if len(names) != 1 else ''}" if names is not None else "the table")
    return StatsAnswer(pd.DataFrame([record]), f"answered from statistics of {where}, accurate for {valid.describe()}")


_FIGURE_OF = {"count": "nulls", "min": "min", "max": "max"}


def _exact_figures(table: Table, aggregates: list[_Aggregate], partitions: list[Partition] | None) -> None:
    """Raises NotFromStats when a figure an aggregate takes is an estimate (a sampled ANALYZE's) or unknown
    (metadata alone): only exact figures answer a query."""
    owners = [(p.parameters, f"partition {p.partName}") for p in partitions] if partitions is not None \
        else [(table.parameters, table.qualified_name)]
    for agg in aggregates:
        if agg.function == "count":  # count(*) and count(c) take the rows, which metadata may leave a band
            for parameters, where in owners:
                estimated = next((column for column, entry in tiered_columns(parameters).items()
                                  if "rows" in entry["figures"] and not Band.of(entry["figures"]["rows"]).exact),
                                 None)
                if estimated is not None:
                    raise NotFromStats(f"the rows of {where} are estimated ({_tier(parameters, estimated)}: "
                                       "equality deletes remove rows metadata cannot count), not exact; answered by "
                                       "a scan")
        if agg.column is None:
            continue
        for parameters, where in owners:
            if _FIGURE_OF[agg.function] in inexact_figures(parameters, agg.column):
                raise NotFromStats(f"{agg.function}({agg.column}) of {where} is estimated ({_tier(parameters, agg.column)}),"
                                   " not exact; answered by a scan")


def _tier(parameters: dict, column: str) -> str:
    tier = Tier.of_label(tiered_columns(parameters)[column]["tier"])
    return "from the files' metadata alone" if tier.is_metadata else f"from a {tier.label} sample of row groups"


def fresh_statistics(metastore: Metastore, table: Table, columns: list[str], partitions: list[Partition] | None,
                     valid: ValidWriteIdList) -> tuple[int, dict[str, ColumnStatisticsObj]]:
    """The rows of the table (or of `partitions`) and the statistics of `columns` over them, merged exactly;
    raises NotFromStats saying why when they are incomplete or not accurate for a reader with `valid`."""
    names = [p.partName for p in partitions] if partitions is not None else None
    rows = 0
    objs: dict[str, ColumnStatisticsObj] = {}
    if names != []:
        stale = metastore.accuracy.stats_compliance_summary(table.dbName, table.tableName, columns, valid, names).first
        if partitions is None:
            rows = int(table.parameters.get("numRows", 0) or 0)
            stats = metastore.column_stats.get_table_statistics(table.dbName, table.tableName, columns) if columns else None
            objs = {o.colName: o for o in stats.statsObj} if stats else {}
        else:
            rows = sum(int(p.parameters.get("numRows", 0) or 0) for p in partitions)
            # an empty partition holds no statistics and adds nothing to any aggregate
            with_rows = [p.partName for p in partitions if int(p.parameters.get("numRows", 0) or 0)]
            if columns and with_rows:
                aggr = metastore.column_stats.get_aggr_stats_for(table.dbName, table.tableName, columns, with_rows, valid,
                                                    check_compliance=False)  # checked above
                if not aggr.complete:
                    raise NotFromStats(f"statistics of {', '.join(columns)}: {aggr.coverage()} the query reads "
                                        f"(of those with rows); answered by a scan")
                objs = {o.colName: o for o in aggr.exact}
        if stale:
            owner, why = stale
            where = f"partition {table.spelled_partition(owner)}" if owner else table.qualified_name
            raise NotFromStats(f"statistics of {where} are not accurate for this snapshot: {why}")
    return rows, objs


def _value(table: Table, agg: _Aggregate, rows: int, objs: dict):
    if agg.function == "count" and agg.column is None:
        return rows
    obj = objs.get(agg.column)
    if obj is None:
        if rows:
            raise NotFromStats(f"no statistics of {agg.column} for {table.qualified_name}")
        return 0 if agg.function == "count" else None
    data = obj.statsData.value
    if agg.function == "count":
        return rows - data.numNulls
    value = data.lowValue if agg.function == "min" else data.highValue
    return None if value is None else _python_value(value)


def _python_value(value):
    if hasattr(value, "to_date"):
        return value.to_date()
    if hasattr(value, "to_datetime"):
        return value.to_datetime()
    return value
