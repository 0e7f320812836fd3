"""What the statistics did to a query's plan: one row per operator of Spark's optimized plan, root first,
with the optimizer's estimate beside the rows the operator produced, how far off it was, whose statistics a
scan had, and for an operator off by ten times or more the likely cause; `.fixes` says what to run."""
from __future__ import annotations

import html
from dataclasses import dataclass, field

import pandas as pd

from .causes import CARRIED, Diagnosis, q_error
from .operators import LEAVES, Operator, RunFigures

SKEWED_TASK = 5  # an operator whose largest task holds this many times the median task's rows ran skewed
SKEW_COLUMNS = ["id", "node", "tasks", "task_rows_median", "task_rows_max", "times_median", "hot_keys",
                "predicted_task_rows", "predicted_times_median", "prediction"]
OPERATOR_COLUMNS = ["id", "parent", "depth", "node", "estimated_rows", "estimated_bytes", "actual_rows",
                    "q_error", "statistics", "cause", "time_s", "bytes", "spill_bytes", "peak_memory", "tasks",
                    "task_rows_min", "task_rows_median", "task_rows_max"]


@dataclass(frozen=True)
class LabRead:
    """How Spark read a lab table of the query: what the lab knows of its statistics now ("accurate",
    "stale in 2 of 9 partitions", "none"), and why it was read as files (None: as a catalog table holding
    the lab's statistics)."""
    state: str
    as_files: str | None = None


def ran_skewed(median: float, most: int) -> bool:
    """Whether a spread of rows over tasks is skewed: the largest task holds SKEWED_TASK times the median's
    rows or more (any rows at all where the median task has none)."""
    return most > 0 and (median == 0 or most >= SKEWED_TASK * median)


@dataclass(frozen=True)
class SkewPrediction:
    """What the lab predicted of a skewed operator's largest task before it ran: the keys placed in it (from
    the frequent items kept with the statistics), its rows and their multiple of the median task's, and
    `note`, the prediction's source (or why there is none)."""
    note: str
    hot_keys: tuple = ()
    largest_rows: float | None = None
    times_median: float | None = None


def operators_frame(operators: list[Operator], diagnosis: Diagnosis, lab_state: dict[str, LabRead]) -> pd.DataFrame:
    """The report's frame: `lab_state` says, per lab table, how Spark read it."""
    rows = []
    for op in operators:
        run = op.run or RunFigures()
        spread = run.spread() or (None, None, None)
        rows.append([op.id, op.parent, op.depth, op.node, op.estimated_rows, op.estimated_bytes, op.actual_rows,
                     q_error(op.estimated_rows, op.actual_rows), _statistics(op, lab_state),
                     diagnosis.causes.get(op.id), run.time_s, run.bytes, run.spill_bytes, run.peak_memory,
                     run.tasks, *spread])
    frame = pd.DataFrame(rows, columns=OPERATOR_COLUMNS)
    return frame.astype({"parent": "Int64", "estimated_rows": "Int64", "actual_rows": "Int64", "q_error": "float64",
                         "time_s": "float64", "bytes": "Int64", "spill_bytes": "Int64", "peak_memory": "Int64",
                         "tasks": "Int64", "task_rows_min": "Int64", "task_rows_median": "float64",
                         "task_rows_max": "Int64"})


def _statistics(op: Operator, lab_state: dict[str, LabRead]) -> str | None:
    """A scan's: whose figures Spark planned with, and what the lab knows of them."""
    if op.kind not in LEAVES:
        return None
    read = lab_state.get(op.table or "")
    if read is not None and read.as_files is not None:
        return f"sizes only (read as files: {read.as_files}; the lab's statistics: {read.state})"
    if read is not None and op.catalog_rows is not None:
        used = "" if op.estimated_rows is not None else ", unused: spark.sql.cbo.enabled is off"
        return f"the lab's: {op.catalog_rows:,} rows, {op.catalog_columns} column(s), {read.state}{used}"
    if op.catalog_rows is not None:
        used = "" if op.estimated_rows is not None else ", unused: spark.sql.cbo.enabled is off"
        return f"catalog: {op.catalog_rows:,} rows, {op.catalog_columns} column(s){used}"
    if op.table:
        return "sizes only (no statistics in the catalog)"
    return "sizes only"


def indented_nodes(operators: pd.DataFrame, indent: str = "\u2003") -> list[str]:
    """Each operator's node moved right under its parent by its depth (an em space a level by default)."""
    return [indent * int(d) + n for d, n in zip(operators["depth"], operators["node"], strict=True)]


def empty_operators() -> pd.DataFrame:
    return pd.DataFrame(columns=OPERATOR_COLUMNS)


@dataclass(kw_only=True)
class PlanReport:
    """A query's plan as Spark's optimizer made it: `.operators` (one row per operator, root first: node,
    estimated_rows and estimated_bytes, actual_rows once run, q_error, statistics, cause) and `.fixes`."""

    query: str = ""
    operators: pd.DataFrame = field(default_factory=empty_operators)
    fixes: list[str] = field(default_factory=list)
    plan_note: str | None = None  # why the operators are missing, when they are
    predictions: dict[int, SkewPrediction] = field(default_factory=dict)  # by operator id, of those ran skewed
    run_id: int | None = None  # the run as the metastore keeps it (inspect.runs()), once run
    run_note: str | None = None  # why a run was not kept, when it was not
    figures_note: str | None = None  # why some figures of what ran are missing (over Spark Connect)

    def skewed(self) -> pd.DataFrame:
        """The operators that ran skewed (their largest task held SKEWED_TASK times the median task's rows or
        more), largest multiple first: their tasks, median and largest task's rows and the multiple, and
        beside them the lab's prediction (`join_skew`'s for a join): the hot keys of its largest task, that
        task's rows and multiple, and `prediction`, where it came from or why there is none."""
        rows = []
        for op in self.operators.dropna(subset=["task_rows_max", "task_rows_median"]).itertuples():
            median, most = float(op.task_rows_median), int(op.task_rows_max)
            if not ran_skewed(median, most):
                continue
            predicted = self.predictions.get(int(op.id), SkewPrediction("not predicted"))
            rows.append([op.id, op.node, op.tasks, median, most, most / median if median else float("inf"),
                         list(predicted.hot_keys), predicted.largest_rows, predicted.times_median, predicted.note])
        frame = pd.DataFrame(rows, columns=SKEW_COLUMNS)
        return frame.sort_values("times_median", ascending=False, kind="stable").reset_index(drop=True)

    def worst(self) -> pd.Series | None:
        """The operator furthest off where its error begins (not one that carries its input's), None when
        nothing ran or no estimate had rows."""
        known = self.operators.dropna(subset=["q_error"])
        origins = known[~known["cause"].fillna("").str.startswith(CARRIED)]
        known = origins if not origins.empty else known
        return None if known.empty else known.loc[known["q_error"].idxmax()]

    def plan_summary(self) -> str:
        if self.operators.empty:
            return self.plan_note or "no plan read"
        text = f"{len(self.operators)} operators"
        worst = self.worst()
        if worst is not None:
            text += f"; furthest off: {worst['node']} (operator {worst['id']}), q-error {worst['q_error']:,.1f}"
            if isinstance(worst["cause"], str):
                text += f": {worst['cause']}"
        elif self.operators["estimated_rows"].isna().all():
            text += "; Spark estimated sizes only, no rows"
        return text

    def plan_html(self) -> str:
        if self.operators.empty:
            return f"<p>{html.escape(self.plan_summary())}</p>"
        shown = self.operators.assign(node=indented_nodes(self.operators))
        fixes = "".join(f"<li><code>{html.escape(f)}</code></li>" for f in self.fixes)
        return (f"<p>{html.escape(self.plan_summary())}</p>" + shown.drop(columns=["depth"]).to_html(index=False)
                + (f"<p>Fixes:</p><ul>{fixes}</ul>" if fixes else ""))

    def __repr__(self) -> str:
        return self.plan_summary()

    def _repr_html_(self) -> str:
        return self.plan_html()
