"""The pruning view: what a query reads of its table — a treemap of partitions and files, kept in
green and pruned in grey, bytes kept and pruned per level, and every decision with its reason."""
from __future__ import annotations

import ipywidgets as widgets

from ..errors import ColstatsError
from ..pruning import PruningReport
from ..pruning.page_filter import count_query, page_filter
from . import charts
from . import format as fmt
from .widgets import View, html_table, refusal, register


@register("pruning")
class PruningView(View):
    """A query's pruning report as a treemap (sized by bytes or rows), per-level bars and a table of
    decisions that can be narrowed to one level or to the pruned units."""

    def __init__(self, lab, query: str, report: PruningReport | None = None):
        super().__init__()
        self.lab, self.query = lab, query
        self.report = self.result = report or lab.explain(query)
        self.set_header()
        # the estimate beside the rows the query keeps: counting them is a Spark job, so only on request
        self.count_button = widgets.Button(description="Count the rows kept (Spark)", icon="play",
                                           layout=widgets.Layout(width="auto"))
        self.count_button.on_click(lambda _: self.count_rows())
        self.measure = widgets.ToggleButtons(options=["bytes", "rows"], value="bytes", description="Size by")
        self.level = widgets.Dropdown(options=["all levels"] + self.report.levels, value="all levels",
                                      description="Level")
        self.pruned_only = widgets.Checkbox(value=False, description="pruned only")
        self.chart = widgets.Output()
        self.decisions_html = widgets.HTML()
        self.measure.observe(lambda change: self.refresh(), names="value")
        self.level.observe(lambda change: self.refresh_table(), names="value")
        self.pruned_only.observe(lambda change: self.refresh_table(), names="value")
        self.levels_figure = charts.pruning_levels_figure(self.report)
        self.children = [self.header, self.count_button, self.measure, self.chart,
                         widgets.HBox([self.level, self.pruned_only]), self.decisions_html]
        self.refresh()
        self.refresh_table()

    def set_header(self) -> None:
        self.header.value = f'<div class="colstats-header">{fmt.escape(self.report.summary())}</div>'

    def count_rows(self) -> None:
        """Runs the query's WHERE over the kept files (lab.explain with run) and shows the rows it kept
        beside the estimate."""
        try:
            self.report = self.result = self.lab.explain(self.query, run=True)
        except ColstatsError as exc:
            self.header.value += refusal(exc).value
            return
        self.set_header()

    def refresh(self) -> None:
        try:
            spelled = self.lab.resolve(self.report.table).partition_speller()
        except ColstatsError:  # a table dropped meanwhile: its names as the report keeps them
            spelled = None
        self.treemap = charts.pruning_treemap(self.report, self.measure.value, spelled)
        charts.clear(self.chart, wait=True)
        with self.chart:
            charts.show(self.treemap)
            charts.show(self.levels_figure)

    def refresh_table(self) -> None:
        frame = self.report.to_pandas()
        if self.level.value != "all levels":
            frame = frame[frame.level == self.level.value]
        if self.pruned_only.value:
            frame = frame[~frame.kept]
        shown = frame.assign(kept=frame.kept.map({True: "kept", False: "pruned"}), rows=frame.rows.map(fmt.count),
                             bytes=frame.bytes.map(fmt.size))
        # the figures before the reason, which wraps: a long file name pushed them past a 1,400 px screen
        ordered = [c for c in shown.columns if c != "reason"] + ["reason"]
        self.decisions_html.value = html_table(shown[ordered], numeric={"rows", "bytes"}, wrap={"reason"})


class PruningPanel(widgets.VBox):
    """A WHERE box over one table: what `SELECT count(*) FROM t WHERE ...` would read (the pruning view)
    and whether statistics answer it or Spark scans, and why; neither starts Spark."""

    def __init__(self, lab, table: str):
        self.lab, self.table = lab, table
        self.where = widgets.Text(placeholder="a filter, e.g. ds >= '2026-11-01' AND x = 3", description="WHERE",
                                  continuous_update=False, layout=widgets.Layout(width="640px"))
        self.button = widgets.Button(description="Explain", icon="filter", layout=widgets.Layout(width="auto"))
        self.answer = widgets.HTML()
        self.report_area = widgets.VBox()
        self.button.on_click(lambda _: self.explain())
        self.where.observe(lambda change: self.explain(), names="value")  # Enter in the box
        super().__init__([widgets.HBox([self.where, self.button]), self.answer, self.report_area])
        self.explain()

    def query(self) -> str:
        """The count over the table of what the box holds, once the box's text passed the page's allowlist (a page
        is a reader: page_filter refuses functions that reach the JVM, queries, unknown columns); built by sqlglot
        from the checked tree, never pasted."""
        table = self.lab.resolve(self.table)
        return count_query(table, page_filter(self.where.value, table))

    def explain(self) -> None:
        try:
            query = self.query()
            answer = self.lab.stats_answer(query)
            self.view = PruningView(self.lab, query)
        except ColstatsError as exc:  # the caret under the bad token, as the notebook shows it
            self.answer.value = ""
            self.report_area.children = [refusal(exc)]
            return
        source = "statistics, no scan" if answer.frame is not None else "a Spark scan of the kept files"
        self.answer.value = (f'<div class="colstats-header"><code>{fmt.escape(query)}</code> is answered from '
                             f'<b>{source}</b>: {fmt.escape(answer.reason)}</div>')
        self.report_area.children = [self.view]
