"""The runs view: the kept runs of `explain(run=True)` over a table (or every one), newest first, and each
query's furthest-off estimate over its runs: where the estimates stay wrong run after run."""
from __future__ import annotations

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from . import charts
from . import format as fmt
from .widgets import View, html_table, register

SHOWN = 200  # the latest runs drawn and listed; the rest are in QUERY_RUNS (jupysql) and lab.runs()


def runs_figure(runs: pd.DataFrame, title: str) -> go.Figure:
    """Each query shape's furthest-off operator's q-error at each of its runs (log scale), a line per
    fingerprint, the query and the operator on hover."""
    fig = go.Figure()
    for shape, of_shape in runs.dropna(subset=["q_error"]).sort_values("ran_at").groupby("fingerprint", sort=False):
        query = of_shape["query"].iloc[-1]
        fig.add_trace(go.Scatter(
            x=list(of_shape["ran_at"]), y=list(of_shape["q_error"]), mode="lines+markers",
            name=query if len(query) <= 60 else query[:57] + "...",
            customdata=[f"run {r}: {o}" for r, o in zip(of_shape["run_id"], of_shape["furthest_off"], strict=True)],
            hovertemplate="q-error %{y:,.1f}<br>%{customdata}<extra>" + shape + "</extra>"))
    fig.update_layout(title=title, height=360, margin=dict(l=60, r=20, t=60, b=40), template="plotly_white",
                      legend=dict(orientation="h", y=-0.25))
    fig.update_yaxes(type="log", title_text="furthest off (q-error)")
    fig.update_xaxes(title_text="ran (UTC)")
    return fig


@register("runs")
class RunsView(View):
    """The runs kept of the queries that read `table` (None: every run): a chart of each query's furthest-off
    estimate over its runs, then a row per run."""

    def __init__(self, lab, table: str | None = None):
        super().__init__()
        self.lab = lab
        self.table = lab.resolve(table).qualified_name if table is not None else None
        self.result = self.frame = (lab.tables[self.table].inspect.runs(limit=SHOWN) if self.table is not None
                                    else lab.runs(limit=SHOWN))
        where = f"of queries that read <b>{fmt.escape(self.table)}</b>" if self.table else "of every query"
        self.header.value = (f'<div class="colstats-header">Runs {where}: each <code>explain(query, run=True)</code> '
                             f"is kept with its operators' estimates beside what ran, and the write IDs its "
                             f"statistics were planned under · {len(self.frame):,} shown · the metastore keeps "
                             f"the last {int(lab.get('colstats.runs.keep')):,}</div>")
        self.chart = widgets.Output()
        if self.frame.empty:
            self.listing = widgets.HTML('<div class="colstats-muted">No run kept yet: <code>lab.explain(query, '
                                        'run=True)</code>, <code>%explain --run</code> or the plan view\'s Run button '
                                        'keeps one.</div>')
        else:
            if self.frame["q_error"].notna().any():
                self.figure = runs_figure(self.frame, "The furthest-off estimate of each query, run after run")
                with self.chart:
                    charts.show(self.figure)
            shown = self.frame.assign(
                ran_at=self.frame["ran_at"].map(lambda t: t.strftime("%Y-%m-%d %H:%M:%S")),
                seconds=self.frame["seconds"].map(lambda s: f"{s:,.1f}"),
                q_error=self.frame["q_error"].map(lambda q: "" if q != q else f"{q:,.1f}"),
                furthest_off=self.frame["furthest_off"].fillna(""),
            ).rename(columns={"ran_at": "ran (UTC)", "valid_write_ids": "planned under (write IDs)",
                              "skewed": "ran skewed"}).rename(columns=lambda c: c.replace("_", " "))
            self.listing = widgets.HTML(html_table(shown, numeric={"run id", "seconds", "operators", "q error",
                                                                   "ran skewed"},
                                                   wrap={"query", "planned under (write IDs)", "statistics",
                                                         "furthest off"}, fit=True))  # 1,772 px wide unfitted
        self.children = [self.header, self.chart, self.listing]
