"""What the statistics do to Spark's plans: a query's optimized plan read operator by operator, its
estimates beside the rows each operator produced, and the causes of the estimates that are off."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

from .causes import diagnose, q_error
from .operators import LEAVES, Operator, count_actual_rows, name_join_strategies, optimized_operators
from .remote import count_actual_rows_remote, text_operators
from .report import OPERATOR_COLUMNS, LabRead, PlanReport, operators_frame

__all__ = ["OPERATOR_COLUMNS", "LabRead", "PlanReport", "adaptive_off", "plan_report", "q_error", "rows_read"]

ADAPTIVE = "spark.sql.adaptive.enabled"


@contextmanager
def adaptive_off(spark) -> Iterator[None]:
    """Adaptive execution off while a query is planned and run, so that every physical operator belongs to the
    plan the statistics made (adaptive execution re-plans with what it measured, and replaces what lies above
    a stage it found empty, the metrics of what ran with it). The rows each operator produces are the
    same either way."""
    before = spark.conf.get(ADAPTIVE, "true")
    spark.conf.set(ADAPTIVE, "false")
    try:
        yield
    finally:
        spark.conf.set(ADAPTIVE, before)


def plan_report(frame, query: str, leaf_table: Callable[[Any], str | None], lab_state: dict[str, LabRead],
                renamed: dict[str, str], run: bool, columns_of: dict[str, set[str]] | None = None
                ) -> tuple[PlanReport, list[Operator]]:
    """The report of `frame`'s plan (with `run`, the query runs once and each operator's rows are counted; plan
    and run it under `adaptive_off`), and its operators. `lab_state` says how Spark read each lab table,
    `renamed` names the lab table each catalog table made for it stands for; over Spark Connect, `columns_of`
    names the lab table a relation over files reads by its columns (`leaf_table` needs the JVM's objects)."""
    conf = frame.sparkSession.conf
    if hasattr(frame, "_jdf"):
        operators = optimized_operators(frame, leaf_table, renamed)
        if run:
            count_actual_rows(frame, operators)  # names the joins that ran too
        else:
            name_join_strategies(frame, operators)
    else:  # Spark Connect: no JVM object reaches the client
        operators = text_operators(frame._explain_string(mode="cost"), columns_of or {})
        if run:
            count_actual_rows_remote(frame, operators)
    diagnosis = diagnose(operators, {t: r.state.startswith("stale") for t, r in lab_state.items()},
                         conf.get("spark.sql.cbo.enabled", "false") == "true",
                         conf.get("spark.sql.statistics.histogram.enabled", "false") == "true",
                         {t: r.as_files for t, r in lab_state.items() if r.as_files is not None}, set(lab_state))
    return PlanReport(query=query, operators=operators_frame(operators, diagnosis, lab_state),
                      fixes=diagnosis.fixes), operators


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
