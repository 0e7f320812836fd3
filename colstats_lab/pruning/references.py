"""What a column reference in a query names of one table. `p.id` is the table `p`'s column `id` when the query
calls the table `p`, else the field `id` of the table's struct column `p`, as Spark resolves it; a struct's
leaf is the column the statistics keep (`payload.user.id`), never the top-level column of the same last name.
Every reader of a query's columns (pruning, row estimates, answers from statistics, partition filters) asks
here first, so a struct field is never taken for a column or partition key it shares a name with."""
from __future__ import annotations

from sqlglot import exp

from ..column_statistics.model import leaf_name
from ..errors import NoSuchObjectException, did_you_mean
from ..metastore import Table


def referenced_column(table: Table, node: exp.Column | exp.Dot, qualifiers: set[str]) -> str | None:
    """The lower-case name of the column, partition key or struct leaf of `table` a Column (or Dot chain)
    names, the query calling the table by one of `qualifiers`; None when it names none of them (another
    table's column, a struct itself, a field under an array)."""
    parts = [part.name.lower() for part in node.parts]
    if len(parts) > 1 and parts[0] in qualifiers:
        parts = parts[1:]
    if len(parts) == 1:
        return parts[0] if table.column(parts[0]) is not None else None
    name = leaf_name(tuple(parts))
    return name if name in table.stats_column_names else None


def check_single_table_references(condition: exp.Expression | None, table: Table, qualifiers: set[str]) -> None:
    """Raises NoSuchObjectException naming the first reference of `condition`, a WHERE over `table` alone, that
    is none of its columns, keys or struct paths: Spark cannot run such a query, so nothing may estimate it."""
    if condition is None:
        return
    names = [table.spelled(c.name) for c in table.cols + table.partitionKeys]
    for node in condition.find_all(exp.Column):
        parts = [part.name.lower() for part in node.parts]
        if len(parts) > 1 and parts[0] in qualifiers:
            parts = parts[1:]
        top = parts[0]
        known = table.column(top) is not None or (len(parts) == 1 and top in table.stats_column_names)
        if not known:
            raise NoSuchObjectException(f"column {node.sql(dialect='spark')} does not exist in table "
                                        f"{table.qualified_name}" + did_you_mean(top, names))


def resolved_references(condition: exp.Expression | None, table: Table, qualifiers: set[str]
                        ) -> exp.Expression | None:
    """A copy of `condition` in which each reference names the table's column as one identifier (a struct's leaf
    `payload.user.id` as the single quoted name the statistics keep), and anything else (another table's
    column, a struct, an unknown name) is opaque, so no reader takes it for a column of the table."""
    if condition is None:
        return None

    def resolve(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Dot) or (isinstance(node, exp.Column) and not isinstance(node.parent, exp.Dot)):
            if isinstance(node, exp.Column) and len(node.parts) == 1 and "." in node.name:
                return node  # resolved already: a leaf's one name
            name = referenced_column(table, node, qualifiers)
            if name is None:
                return exp.Anonymous(this="opaque", expressions=[])
            return exp.column(name, quoted="." in name) if "." in name or len(node.parts) > 1 else node
        return node

    return condition.copy().transform(resolve)


def qualifiers_of(table: Table, alias: str | None = None) -> set[str]:
    """The names a query may call the table by: its own and its alias."""
    return {table.tableName.lower(), (alias or table.tableName).lower()}
