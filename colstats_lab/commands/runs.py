"""Runs kept: each `explain(run=True)`'s operators (estimates beside what ran) in the metastore, under the query's
fingerprint, with the write IDs each lab table's statistics were planned under; the causes of an estimate that
is off say what the earlier runs of the same query produced; `inspect.runs()` reads them back."""
from __future__ import annotations

import datetime as dt
import hashlib
import math
import statistics
from typing import TYPE_CHECKING

import pandas as pd
from sqlglot import exp

from ..errors import InvalidArgument, MetastoreUnavailable
from ..metastore import Table
from ..metastore.db import WouldWait
from ..metastore.repositories.run_records import KeptRun, RunOperator, RunTable
from ..plans.causes import OFF_BY
from ..plans.report import PlanReport, ran_skewed

if TYPE_CHECKING:
    from .session import Session

RUNS_KEEP = "colstats.runs.keep"
EARLIER_RUNS = 10  # the kept runs of a query a cause looks back on
RUN_COLUMNS = ["run_id", "ran_at", "seconds", "fingerprint", "query", "operators", "furthest_off", "q_error",
               "skewed", "valid_write_ids", "statistics"]
RUN_OPERATOR_COLUMNS = ["run_id", "ran_at", "fingerprint", "id", "node", "estimated_rows", "actual_rows", "q_error",
                        "time_s", "tasks", "task_rows_median", "task_rows_max", "valid_write_ids"]


def fingerprint(tree: exp.Expression) -> str:
    """A query's shape: its normalized text with every literal a placeholder, hashed (16 hex digits); runs of one
    query with other constants share it."""
    shape = tree.copy().transform(lambda node: exp.Placeholder() if isinstance(node, exp.Literal) else node)
    return hashlib.sha256(shape.sql(dialect="spark", normalize=True).encode()).hexdigest()[:16]


def keep_run(session: Session, tree: exp.Expression, report: PlanReport, started: float, seconds: float,
             tables: list[RunTable]) -> tuple[int | None, str | None]:
    """Keeps the run `report` describes (`started` when, seconds since the epoch, for `seconds`; its causes first
    told what the earlier runs of the query produced); returns its id, or None and why it was not kept. A reader
    never waits: with another writer holding the metastore's lock, or a metastore read-only here, the run is not
    kept and the note says so."""
    shape = fingerprint(tree)
    metastore = session.metastore
    try:
        _tell_earlier_runs(report, metastore.runs.get_runs(fingerprint=shape, limit=EARLIER_RUNS))
        run = KeptRun(None, shape, report.query, int(started), seconds, _operator_records(report.operators),
                      tuple(tables))
        with metastore.db.without_waiting():
            return metastore.runs.keep_run(run, int(session.get(RUNS_KEEP))), None
    except WouldWait:
        return None, "not kept: another writer held the metastore's write lock (a query never waits for one)"
    except MetastoreUnavailable as why:
        return None, f"not kept: {why}"


def _operator_records(operators: pd.DataFrame) -> tuple[RunOperator, ...]:
    """The operators' rows, each figure a plain value (a missing one None)."""
    return tuple(RunOperator.of({key: None if value is None or (isinstance(value, float) and math.isnan(value))
                                 or value is pd.NA else value.item() if hasattr(value, "item") else value
                                 for key, value in row.items()})
                 for row in operators.astype(object).to_dict("records"))


def _tell_earlier_runs(report: PlanReport, earlier: list[KeptRun]) -> None:
    """Adds to the cause of each operator off by OFF_BY or more what the same operator (same place, same node)
    produced in the earlier runs of the query, against its estimate then."""
    if not earlier or report.operators.empty:
        return
    causes = report.operators["cause"].astype(object).tolist()
    for index, op in enumerate(report.operators.itertuples()):
        if not (op.q_error == op.q_error and op.q_error >= OFF_BY):
            continue
        ratios = [kept.actual_rows / max(kept.estimated_rows, 1) for run in earlier for kept in run.operators
                  if kept.id == op.id and kept.node == op.node and kept.actual_rows is not None
                  and kept.estimated_rows is not None]
        if not ratios:
            continue
        typical = statistics.median(ratios)
        said = f"{typical:,.1f}x the estimate" if typical >= 1 else f"1/{1 / max(typical, 1e-12):,.1f} of the estimate"
        addition = f"the last {len(ratios)} run(s) of this query produced {said} (median)"
        causes[index] = f"{causes[index]}; {addition}" if isinstance(causes[index], str) else addition
    report.operators["cause"] = causes


def runs_frame(session: Session, table: Table | None = None, operators: bool = False,
               limit: int | None = None) -> pd.DataFrame:
    """The kept runs (of queries that read `table`, or every one), newest first: a row per run, or with
    `operators` a row per operator of each; raises InvalidArgument for a `limit` that is not a count."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise InvalidArgument(f"limit takes the number of runs to read (0 or more) or None for every one, "
                              f"not {limit!r}")
    kept = session.metastore.runs.get_runs(table.dbName if table else None, table.tableName if table else None,
                                      limit=limit)
    if operators:
        rows = [[run.run_id, _when(run.ran_at), run.fingerprint, op.id, op.node, op.estimated_rows, op.actual_rows,
                 op.q_error, op.time_s, op.tasks, op.task_rows_median, op.task_rows_max, _write_ids(run, table)]
                for run in kept for op in run.operators]
        return pd.DataFrame(rows, columns=RUN_OPERATOR_COLUMNS).astype(
            {"estimated_rows": "Int64", "actual_rows": "Int64", "q_error": "float64", "time_s": "float64",
             "tasks": "Int64", "task_rows_median": "float64", "task_rows_max": "Int64"})
    rows = []
    for run in kept:
        off = [op for op in run.operators if op.q_error is not None]
        worst = max(off, key=lambda op: op.q_error or 0.0) if off else None
        skewed = sum(1 for op in run.operators if _ran_skewed(op))
        rows.append([run.run_id, _when(run.ran_at), run.seconds, run.fingerprint, run.query, len(run.operators),
                     f"{worst.node} (operator {worst.id})" if worst else None,
                     worst.q_error if worst else None, skewed, _write_ids(run, table),
                     "; ".join(f"{t.name}: {t.statistics}" for t in run.tables if table is None
                               or t.name == table.qualified_name)])
    return pd.DataFrame(rows, columns=RUN_COLUMNS).astype({"q_error": "float64"})


def _ran_skewed(op: RunOperator) -> bool:
    if op.task_rows_max is None or op.task_rows_median is None:
        return False
    return ran_skewed(float(op.task_rows_median), int(op.task_rows_max))


def _when(seconds: int) -> pd.Timestamp:
    return pd.Timestamp(dt.datetime.fromtimestamp(seconds, dt.UTC))


def _write_ids(run: KeptRun, table: Table | None) -> str:
    """The write IDs the run's statistics were planned under: of `table`, or of every table it read."""
    return "; ".join(t.valid_write_ids or f"{t.name}: none" for t in run.tables
                     if table is None or t.name == table.qualified_name)
