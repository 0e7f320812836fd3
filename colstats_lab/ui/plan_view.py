"""The plan view: how Spark's optimizer planned a query, operator by operator: the rows it estimated beside
the rows each operator produced (log scale, the operators off by ten times or more in red), the table of
operators with whose statistics each scan had and why an estimate is off, and what to run about it."""
from __future__ import annotations

import ipywidgets as widgets

from ..errors import ColstatsError
from ..plans import PlanReport
from ..plans.causes import OFF_BY
from ..plans.report import indented_nodes
from . import charts
from . import format as fmt
from .widgets import View, html_table, refusal, register


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
        self.fixes = widgets.HTML()
        self.children = [self.header, self.run_button, self.chart, self.table, self.fixes, self.message]
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
            self.table.value = self.fixes.value = ""
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
        ).drop(columns=["parent", "depth"])
        self.table.value = html_table(shown, numeric={"estimated_rows", "estimated_bytes", "actual_rows", "q_error"},
                                      wrap={"statistics", "cause"})
        self.fixes.value = ("<b>What to run</b><ul>" + "".join(f"<li><code>{fmt.escape(f)}</code></li>"
                                                             for f in report.fixes) + "</ul>") if report.fixes else ""
        self.run_button.layout.display = "none" if operators["actual_rows"].notna().any() else None
