"""Which files of a table a query reads: the one place pruning levels are applied in order
(list-bucketing directories today; partitions, files and row groups plug in here)."""
from __future__ import annotations

import sqlglot
from sqlglot import exp

from ..metastore import Table
from ..tables.snapshot import PartitionFiles
from .list_bucketing import prune_list_bucketing
from .report import PruningReport


def plan_table_read(table: Table, parts: list[PartitionFiles], where: exp.Expression | None
                    ) -> tuple[list[PartitionFiles], PruningReport]:
    """The partitions' files left to read under `where`, and the report of what was pruned and why."""
    kept, decisions = prune_list_bucketing(table, parts, where)
    predicate = where.sql(dialect="spark") if where is not None else None
    return kept, PruningReport(table.qualified_name, predicate, decisions)


def single_table_where(tree: exp.Expression) -> tuple[exp.Table, exp.Expression | None] | None:
    """(table, WHERE condition) of a plain `SELECT ... FROM one_table [WHERE ...]`, else None: pruning
    reasons only about conditions that filter the table's rows directly."""
    if not isinstance(tree, exp.Select):
        return None
    source = tree.args.get("from") or tree.args.get("from_")
    if source is None or not isinstance(source.this, exp.Table) or tree.args.get("joins"):
        return None
    if any(isinstance(node, (exp.Subquery, exp.Union)) for node in tree.find_all(exp.Subquery, exp.Union)):
        return None
    where = tree.args.get("where")
    return source.this, (where.this if where is not None else None)


def parse_query(text: str) -> exp.Expression:
    return sqlglot.parse_one(text, read="spark")
