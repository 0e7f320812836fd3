"""A query over lab tables as Spark runs it: each lab table replaced by a temporary view of its current
snapshot's files."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlglot import exp

from ..errors import parse_sql
from ..pruning import single_table_where
from ..tables import read_snapshot
from ..tables.snapshot import spelled_columns
from .plan_tables import PLAN_STATISTICS, plan_table, planned_view, why_not_planned
from .reads import planned_read, snapshot_parts

if TYPE_CHECKING:
    import pandas as pd

    from ..pruning.report import PruningReport
    from ..tables.snapshot import PartitionFiles
    from .session import Session


def view_name(db: str, name: str) -> str:
    """A temporary view's name for a lab table: Spark takes only letters, digits and underscores in one, so
    other characters become `_`, and a hash of the real name keeps `my table` apart from `my_table`."""
    plain = re.sub(r"[^0-9A-Za-z_]", "_", f"{db}__{name}")
    if plain == f"{db}__{name}":
        return f"colstats__{plain}"
    return f"colstats__{plain}_{hashlib.sha1(f'{db}.{name}'.encode()).hexdigest()[:8]}"


@dataclass
class Binding:
    """A query bound to what Spark reads (`bind_tables`): its Spark SQL, and what binding decided on the way."""
    sql: str = ""
    # the pruning report of a single-table SELECT's table (none in a query of several tables)
    reports: list[PruningReport] = field(default_factory=list)
    # each name Spark's messages may say (a view, a catalog table) -> the lab table it reads, as a person wrote it
    views: dict[str, str] = field(default_factory=dict)
    # each lab table read as files -> why Spark could not plan it with the lab's statistics
    as_files: dict[str, str] = field(default_factory=dict)
    # each catalog table Spark plans with the lab's statistics -> the lab table it stands for
    with_statistics: dict[str, str] = field(default_factory=dict)
    # the staleness frames that judgement was made by, by lab table (listed once)
    staleness: dict[str, pd.DataFrame] = field(default_factory=dict)
    # the partitions' files every lab table of the query reads
    read: list[PartitionFiles] = field(default_factory=list)


def bind_tables(lab: Session, query: str | exp.Expression, txn=None, planned: tuple | None = None) -> Binding:
    """The query with each lab table replaced by a temporary view of its current snapshot; the table of a
    single-table SELECT reads only what pruning keeps (`planned`: that table's `planned_read` when the caller
    made it already). In a query of several tables, outside a transaction, a table Spark can plan with the
    lab's statistics is read as their catalog table instead (`plan_tables`). The Binding says what was decided
    for each table."""
    bound = Binding()
    tree = parse_sql(query) if isinstance(query, str) else query.copy()  # the statement's tree stays as parsed
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    single = single_table_where(tree)
    for node in list(tree.find_all(exp.Table)):
        name, db = node.name.lower(), (node.db or lab.current_db).lower()
        if not node.db and name in ctes:
            continue
        if not lab.metastore.catalog.table_exists(db, name):
            continue
        view = view_name(db, name)
        bound.views[view] = f"{db}.{name}"
        if single is not None and single[0] is node:
            table, parts, report = planned or planned_read(lab, f"{db}.{name}", single[1], node.alias_or_name, txn)
            bound.reports.append(report)
        else:
            table, parts = snapshot_parts(lab, f"{db}.{name}", txn=txn)
        bound.read.extend(parts)
        if single is None or single[0] is not node:
            why = "a transaction's own snapshot" if txn is not None else \
                None if lab.get(PLAN_STATISTICS) else f"{PLAN_STATISTICS} is false"
            why = why or why_not_planned(lab, table, parts, bound.staleness)
            if why is None:
                catalog_name = plan_table(lab, table, parts)
                converted = planned_view(lab, table, catalog_name)
                if converted is not None:
                    bound.views[converted] = f"{db}.{name}"
                _bind(node, converted or catalog_name)
                bound.with_statistics[catalog_name] = f"{db}.{name}"
                # Spark's messages name it: the user's name instead
                bound.views[catalog_name.split(".", 1)[1]] = f"{db}.{name}"
                continue
            bound.as_files[f"{db}.{name}"] = why
        spelled_columns(read_snapshot(lab.spark, table, parts), table).createOrReplaceTempView(view)
        _bind(node, view)
    bound.sql = tree.sql(dialect="spark", identify=True)  # Spark reads a non-ASCII name only quoted
    return bound


def _bind(node: exp.Table, name: str) -> None:
    """`node` reads `name` (a view, or `db`.`table`), still called by its own name in the query."""
    if not node.alias:  # `SELECT t.x FROM t` still calls the view by the table's name
        node.set("alias", exp.TableAlias(this=exp.to_identifier(node.name)))
    db, _, table = name.partition(".")
    node.set("this", exp.to_identifier(table or db, quoted=bool(table)))
    node.set("db", exp.to_identifier(db, quoted=False) if table else None)
    node.set("catalog", None)
