"""The plan view: how Spark's optimizer planned a query, operator by operator: the rows it estimated beside
the rows each operator produced (log scale, the operators off by ten times or more in red), the table of
operators with whose statistics each scan had and why an estimate is off, and what to run about it."""
from __future__ import annotations

import ipywidgets as widgets
import pandas as pd

from ..errors import ColstatsError
from ..plans import PlanReport
from ..plans.causes import OFF_BY
from ..plans.report import indented_nodes, ran_skewed
from . import charts
from . import format as fmt
from .widgets import View, html_table, refusal, register

NBSP = "\u00a0"  # a figure and its unit stay on one line in a table that wraps to fit the screen


def _task_spread(row) -> str:
    """An operator's rows per task as a bar (the median's share of the largest task's) and its fewest, median
    and most, red where the largest holds SKEWED_TASK times the median or more."""
    if pd.isna(row.tasks) or pd.isna(row.task_rows_max) or pd.isna(row.task_rows_median):
        return ""
    most, median = int(row.task_rows_max), float(row.task_rows_median)
    skewed = ran_skewed(median, most)
    share = 0.0 if not most else median / most
    color = "#c62828" if skewed else "#4c78a8"
    title = f"{int(row.tasks)} tasks: fewest {int(row.task_rows_min):,}, median {median:,.0f}, most {most:,} rows"
    return (f'<span title="{fmt.escape(title)}"><span class="colstats-bar"><span style="width:{share * 100:.1f}%;'
            f'background:{color}"></span></span>{int(row.tasks)}{NBSP}tasks, max{NBSP}{most:,}'
            f'{f" ({most / median:.1f}x{NBSP}median)" if skewed and median else ""}</span>')


def _skew_as_it_ran(report: PlanReport) -> str:
    """The operators that ran skewed, each beside what the lab predicted of its largest task."""
    skewed = report.skewed()
    if skewed.empty:
        return ""

    def times(value) -> str:
        return "" if value is None or value != value else f" ({value:,.1f}x median)"
    shown = pd.DataFrame({
        "operator": [f"{node} (operator {i})" for i, node in zip(skewed["id"], skewed["node"], strict=True)],
        "ran: largest task": [f"{fmt.count(m)}{times(t)}" for m, t in zip(skewed["task_rows_max"],
                                                                            skewed["times_median"], strict=True)],
        "predicted: largest task": ["" if p is None or p != p else f"{fmt.count(round(p))}{times(t)}"
                                    for p, t in zip(skewed["predicted_task_rows"], skewed["predicted_times_median"],
                                                    strict=True)],
        "its hot keys": [", ".join(map(str, keys)) for keys in skewed["hot_keys"]],
        "prediction": skewed["prediction"]})
    return "<b>Skew as it ran</b>" + html_table(shown, numeric={"ran: largest task", "predicted: largest task"},
                                                wrap={"prediction"})


@register("plan")
class PlanView(View):
    """A query's PlanReport: a "Run the query" button (Spark runs it once and counts every operator's
    rows), the plan drawn as a tree on a log scale, the operators and the fixes."""

    def __init__(self, lab, query: str, run: bool = False, report: PlanReport | None = None):
        super().__init__()
        self.lab, self.query = lab, query
        self.report = self.result = report or lab.explain(query, run=run)
        self.run_button = widgets.Button(description="Run the query and count each operator's rows (Spark)",
                                         icon="play", layout=widgets.Layout(width="auto"))
        self.run_button.on_click(lambda _: self.run())
        self.chart = widgets.Output()
        self.table = widgets.HTML()
        self.skew = widgets.HTML()
        self.fixes = widgets.HTML()
        self.children = [self.header, self.run_button, self.chart, self.table, self.skew, self.fixes, self.message]
        self.refresh()

    def run(self) -> None:
        try:
            self.report = self.result = self.lab.explain(self.query, run=True)
        except ColstatsError as exc:
            self.message.value = refusal(exc).value
            return
        self.refresh()

    def refresh(self) -> None:
        report = self.report
        self.header.value = (f'<div class="colstats-header"><code>{fmt.escape(self.query)}</code>: '
                             f"{fmt.escape(report.plan_summary())}</div>")
        charts.clear(self.chart, wait=True)
        operators = report.operators
        if operators.empty:
            self.table.value = self.skew.value = self.fixes.value = ""
            return
        self.figure = charts.plan_figure(operators, OFF_BY, "Rows per operator: estimated and produced")
        with self.chart:
            charts.show(self.figure)
        shown = operators.assign(
            node=indented_nodes(operators, charts.EM_SPACE),
            estimated_rows=operators["estimated_rows"].map(fmt.count),
            estimated_bytes=operators["estimated_bytes"].map(fmt.size),
            actual_rows=operators["actual_rows"].map(fmt.count),
            q_error=operators["q_error"].map(lambda q: "" if q != q else f"{q:,.1f}"),
            statistics=operators["statistics"].fillna(""), cause=operators["cause"].fillna(""),
            time=operators["time_s"].map(lambda t: "" if t != t else f"{t:,.2f}{NBSP}s"),
            read=operators["bytes"].map(lambda b: "" if pd.isna(b) else fmt.size(int(b)).replace(" ", NBSP)),
            tasks=[_task_spread(row) for row in operators.itertuples()],
        )
        # what ran beside the estimates, the long texts last: the table fits a 1,400 px screen, wrapping them
        shown = shown[["id", "node", "estimated_rows", "actual_rows", "q_error", "time", "read", "tasks",
                       "estimated_bytes", "statistics"] + (["cause"] if operators["cause"].notna().any() else [])]
        self.table.value = html_table(shown, numeric={"estimated_rows", "estimated_bytes", "actual_rows", "q_error",
                                                      "time", "read"},
                                      raw_html={"tasks"}, wrap={"statistics", "cause"}, fit=True)
        self.skew.value = _skew_as_it_ran(report) + "".join(
            f'<div class="colstats-muted">{fmt.escape(note)}</div>' for note in (report.figures_note, report.run_note)
            if note)
        self.fixes.value = ("<b>What to run</b><ul>" + "".join(f"<li><code>{fmt.escape(f)}</code></li>"
                                                             for f in report.fixes) + "</ul>") if report.fixes else ""
        self.run_button.layout.display = "none" if operators["actual_rows"].notna().any() else None
