"""What the statistics do to Spark's plans: a query's optimized plan read operator by operator, its
estimates beside the rows each operator produced, and the causes of the estimates that are off."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .causes import diagnose, q_error
from .operators import LEAVES, CountingRun, Operator, count_actual_rows, name_join_strategies, optimized_operators
from .remote import NO_TASK_ROWS, count_actual_rows_remote, text_operators
from .report import OPERATOR_COLUMNS, LabRead, PlanReport, operators_frame

__all__ = ["OPERATOR_COLUMNS", "LabRead", "PlanReport", "keeping_every_operator", "plan_report", "q_error", "rows_read"]

ADAPTIVE = "spark.sql.adaptive.enabled"
ADAPTIVE_EXCLUDED_RULES = "spark.sql.adaptive.optimizer.excludedRules"
# the rules by which adaptive execution drops operators once it saw what ran below them: an empty stage
# replaces the joins and aggregates above it, a bound of one row the limits and sorts above it; the metrics of
# what ran would go with them
DROPPING_RULES = ["org.apache.spark.sql.execution.adaptive.AQEPropagateEmptyRelation",
                  "org.apache.spark.sql.catalyst.optimizer.EliminateLimits",
                  "org.apache.spark.sql.catalyst.optimizer.OptimizeOneRowPlan"]


@contextmanager
def keeping_every_operator(spark) -> Iterator[None]:
    """The settings a query is planned and run under to count each operator's rows: the session's, adaptive
    execution included, but without the adaptive rules that drop operators (DROPPING_RULES). Over Spark
    Connect adaptive execution is off: its metrics are paired with the plan by kind, which needs every
    physical operator to be the one the statistics planned. The rows each operator produces are the same
    either way."""
    if not hasattr(spark, "_jsparkSession"):
        before = spark.conf.get(ADAPTIVE, "true")
        spark.conf.set(ADAPTIVE, "false")
        try:
            yield
        finally:
            spark.conf.set(ADAPTIVE, before)
        return
    before = spark.conf.get(ADAPTIVE_EXCLUDED_RULES, "")
    spark.conf.set(ADAPTIVE_EXCLUDED_RULES, ",".join([r for r in before.split(",") if r] + DROPPING_RULES))
    try:
        yield
    finally:
        if before:
            spark.conf.set(ADAPTIVE_EXCLUDED_RULES, before)
        else:
            spark.conf.unset(ADAPTIVE_EXCLUDED_RULES)


@contextmanager
def active_on_the_jvm(spark) -> Iterator[None]:
    """`spark` as the JVM's active session while the plan is read. An operator's statistics are computed on their
    first reading, under the active session's settings (Spark's `SQLConf.get`); a lab's own session beside a
    user's (`engine._session_beside`) is not the active one, so without this a plan was read under the user's
    settings: with their `spark.sql.cbo.enabled` off, a catalog table's row count was dropped from its estimate."""
    holder = spark.sparkContext._jvm.org.apache.spark.sql.SparkSession
    before = holder.getActiveSession()
    holder.setActiveSession(spark._jsparkSession)
    try:
        yield
    finally:
        if before.isDefined():
            holder.setActiveSession(before.get())
        else:
            holder.clearActiveSession()


def plan_report(frame, query: str, leaf_table: Callable[[Any], str | None], lab_state: dict[str, LabRead],
                renamed: dict[str, str], run: bool, columns_of: dict[str, set[str]] | None = None
                ) -> tuple[PlanReport, list[Operator]]:
    """The report of `frame`'s plan (with `run`, the query runs once and each operator's rows are counted; plan
    and run it under `keeping_every_operator`), and its operators. `lab_state` says how Spark read each lab table,
    `renamed` names the lab table each catalog table made for it stands for; over Spark Connect, `columns_of`
    names the lab table a relation over files reads by its columns (`leaf_table` needs the JVM's objects)."""
    conf = frame.sparkSession.conf
    figures_note = None
    if hasattr(frame, "_jdf"):
        with active_on_the_jvm(frame.sparkSession):
            running = CountingRun(frame) if run else None  # the plan is read while the query runs
            try:
                operators = optimized_operators(frame, leaf_table, renamed)
            except BaseException:  # no report without the plan: its run stops too
                if running is not None:
                    running.stop()
                raise
            if running is not None:
                count_actual_rows(frame, operators, running)  # names the joins that ran too
            else:
                name_join_strategies(frame, operators)
    else:  # Spark Connect: no JVM object reaches the client
        operators = text_operators(frame._explain_string(mode="cost"), columns_of or {})
        if run:
            count_actual_rows_remote(frame, operators)
            figures_note = NO_TASK_ROWS
    diagnosis = diagnose(operators, {t: r.state.startswith("stale") for t, r in lab_state.items()},
                         conf.get("spark.sql.cbo.enabled", "false") == "true",
                         conf.get("spark.sql.statistics.histogram.enabled", "false") == "true",
                         {t: r.as_files for t, r in lab_state.items() if r.as_files is not None}, set(lab_state))
    return PlanReport(query=query, operators=operators_frame(operators, diagnosis, lab_state),
                      fixes=diagnosis.fixes, figures_note=figures_note), operators


def rows_read(operators: list[Operator]) -> int | None:
    """The rows a single-table query's WHERE keeps: what the first scan's chain of filters, projections and
    unions produced, below any aggregation (None: not counted)."""
    leaf = next((op for op in operators if op.kind in LEAVES), None)
    if leaf is None:
        return None
    top = leaf
    while top.parent is not None and operators[top.parent].kind in ("Filter", "Project", "Union"):
        top = operators[top.parent]
    return top.actual_rows
