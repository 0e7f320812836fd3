"""`Lab.explain`: a query's plan as Spark's optimizer made it, operator by operator, and for a SELECT over
one lab table what pruning reads too."""
from __future__ import annotations

import time
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from ..analyze.stale import staleness_frame
from ..column_statistics.frequent_items import FrequentItems, sketchable
from ..errors import InvalidArgument, spark_errors
from ..metastore import Table
from ..metastore.repositories.run_records import RunTable
from ..plans import LabRead, PlanReport, keeping_every_operator, plan_report, rows_read
from ..pruning import single_table_where
from ..pruning.answers import NotFromStats, fresh_statistics
from ..pruning.estimate import RowEstimate, estimate_rows
from ..pruning.plan import parse_query
from ..pruning.references import qualifiers_of, resolved_references
from ..storage import is_local, local_file_path, normalized, spark_file_uri, spark_prefixes
from ..tables import read_snapshot
from ..tables.snapshot import PartitionFiles
from . import catalogs
from .binding import bind_tables
from .reads import planned_read, valid_write_ids
from .run_skew import predict_skewed
from .runs import keep_run

if TYPE_CHECKING:
    from ..transaction import Transaction
    from .session import Session


def explain(session: Session, query: str, txn: Transaction | None = None, run: bool = False) -> PlanReport:
    """The work of `Lab.explain`, whose docstring is the reference."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgument(f"explain takes the text of a query, not {query!r}")
    tree = catalogs.on_mirrors(session, parse_query(query))
    if not _is_query(tree):
        raise InvalidArgument(f"explain takes a query (SELECT, WITH, a set operation), not a "
                                    f"{tree.key.upper()} statement")
    found = single_table_where(tree)
    if found is not None and not session.metastore.catalog.table_exists((found[0].db or session.current_db).lower(),
                                                                found[0].name.lower()):
        found = None  # one table of Spark's catalog: Spark reads it, nothing of it is pruned by the lab
    planned = None
    if found is not None:
        node, where = found
        planned = planned_read(session, f"{node.db or session.current_db}.{node.name}", where, node.alias_or_name,
                               txn)
    if planned is not None and not run and not session.spark_started:
        # what a query of one table reads needs no Spark (the dashboard's pruning tab starts none): its operators
        # come with run=True, or once the lab's Spark runs
        assert found is not None
        return _single_table(session, query, planned, found, PlanReport(
            query=query, plan_note="Spark's plan is read once the lab's Spark runs, or with run=True"), [], txn, run)
    # adaptive execution runs without the rules that drop operators: once a stage finds its input empty it would
    # replace the plan above it, and the metrics of what ran leave the final plan (a join of a column of NULLs
    # counted nothing)
    with keeping_every_operator(session.spark) if run else nullcontext():
        bound = bind_tables(session, tree, txn, planned)
        views, as_files, with_statistics, staleness = bound.views, bound.as_files, bound.with_statistics, bound.staleness
        tables = {name: session.resolve(name) for name in set(views.values())}
        # a query of one table: its partitions kept are judged by the pruning report's estimate, not a listing of all
        lab_state = {name: LabRead("judged for the partitions kept: see the estimate", "pruned by the lab first")
                     if planned is not None and name == planned[0].qualified_name
                     else LabRead(_lab_state(session, table, staleness.get(name)), as_files.get(name))
                     for name, table in tables.items()}
        planned_under = {name: txn.snapshot(table) if txn else valid_write_ids(session, table)
                         for name, table in tables.items()} if run else {}
        with spark_errors("Spark cannot plan the query", query, views):
            frame = session.spark.sql(bound.sql)
            columns_of = {name: {c.name.lower() for c in t.cols + t.partitionKeys} for name, t in tables.items()}
            started = time.time()
            plan, operators = plan_report(frame, query, _lab_table_of_files(session, tables), lab_state,
                                          with_statistics, run, columns_of)
            ran_for = time.time() - started  # planned, run and measured; the prediction below is not the run's
    if run:
        plan.predictions = predict_skewed(session, operators)
        plan.run_id, plan.run_note = keep_run(session, tree, plan, started, ran_for, [
            RunTable(tables[name].dbName, tables[name].tableName, str(valid), lab_state[name].state)
            for name, valid in planned_under.items()])
    if planned is None:
        return plan
    assert found is not None
    return _single_table(session, query, planned, found, plan, operators, txn, run)


def _single_table(session: Session, query: str, planned: tuple, found: tuple, plan: PlanReport,
                  operators: list, txn: Transaction | None, run: bool) -> PlanReport:
    """The pruning report of a query of one lab table, with the plan's operators (none: Spark did not plan
    it) and the estimate of the rows its WHERE keeps."""
    table, kept, report = planned
    node, where = found
    report.query, report.operators, report.fixes, report.plan_note = query, plan.operators, plan.fixes, plan.plan_note
    report.predictions, report.run_id, report.run_note = plan.predictions, plan.run_id, plan.run_note
    report.figures_note = plan.figures_note
    report.estimate = _estimate(session, table, kept,
                                resolved_references(where, table, qualifiers_of(table, node.alias_or_name)), txn)
    if run:
        report.actual_rows = rows_read(operators)
        if report.actual_rows is None:  # no operator counted (over Spark Connect): counted by a job of its own
            rows = read_snapshot(session.spark, table, kept).alias(node.alias_or_name)
            with spark_errors(f"cannot count the rows kept of {table.qualified_name}"):
                kept_rows = rows.where(where.sql(dialect="spark", identify=True)) if where is not None else rows
                report.actual_rows = kept_rows.count()
    return report


def _is_query(tree: exp.Expression) -> bool:
    return isinstance(tree, exp.Query)


def _lab_table_of_files(session: Session, tables: dict[str, Table]):
    """Names the lab table a relation over files reads, by the first of its root paths: under the table's
    location as Spark spells it."""
    prefixes = spark_prefixes(session.spark) if any(not is_local(t.location) for t in tables.values()) else {}
    roots = {name: spark_file_uri(table.location, prefixes).rstrip("/") + "/" for name, table in tables.items()
             if table.location}

    def leaf_table(relation: Any) -> str | None:
        paths = relation.relation().location().rootPaths()
        if paths.size() == 0:
            return None
        first = paths.apply(0).toString()
        for name, root in roots.items():
            if first.startswith(root) or normalized(local_file_path(first)).startswith(root.removeprefix("file:")):
                return name
        return None
    return leaf_table


def _lab_state(session: Session, table: Table, frame=None) -> str:
    """What the lab knows of a table's column statistics now (by `frame`, its staleness, when judged already):
    accurate, stale where, or none."""
    frame = staleness_frame(session.metastore, table) if frame is None else frame
    accurate = frame["accurate"].astype(bool)
    if accurate.all():
        return "accurate"
    if frame["reason"].astype(str).str.contains("never computed").all():
        return "none"
    if table.is_partitioned:
        return f"stale in {int((~accurate).sum())} of {len(frame)} partitions"
    return "stale"


def _estimate(session: Session, table: Table, kept: list[PartitionFiles], where, txn: Transaction | None
              ) -> RowEstimate:
    """The rows `where` keeps of the partitions the plan kept (a file left: no row of the others can
    match), from statistics accurate for the reader."""
    keys = {k.lower() for k in table.partition_key_names}
    data_columns = {c.name.lower() for c in table.cols} | table.stats_column_names
    named = sorted({c.name.lower() for c in where.find_all(exp.Column)} & data_columns) if where is not None else []
    valid = txn.snapshot(table) if txn else valid_write_ids(session, table)
    if not any(p.files for p in kept):
        return RowEstimate(0, ["every file pruned"])
    partitions = [p.partition for p in kept if p.partition is not None and p.files] if table.is_partitioned else None
    try:
        rows, columns = fresh_statistics(session.metastore, table, named, partitions, valid)
    except NotFromStats as why:
        return RowEstimate(None, [str(why)])
    return estimate_rows(rows, where, columns, keys, _frequent_items(session, table, columns, partitions))


def _frequent_items(session: Session, table: Table, columns: dict, partitions: list | None
                    ) -> dict[str, FrequentItems]:
    """The frequent values of each column the statistics keep them of for every partition read (fresh: they
    are stored with the statistics just proven accurate), merged over those partitions."""
    with_rows = None if partitions is None else [p.partName for p in partitions
                                                 if int(p.parameters.get("numRows", 0) or 0)]
    out = {}
    for name, obj in columns.items():
        if not sketchable(obj.colType) or with_rows == []:
            continue
        sketches = session.metastore.column_stats.get_frequent_items(table.dbName, table.tableName, name, with_rows)
        if sketches and (with_rows is None or len(sketches) == len(with_rows)):
            merged = FrequentItems.merged(list(sketches.values()), obj.colType)
            if merged is not None:
                out[name] = merged
    return out
