"""The pruning view: what a query reads of its table — a treemap of partitions and files, kept in
green and pruned in grey, bytes kept and pruned per level, and every decision with its reason."""
from __future__ import annotations

import ipywidgets as widgets

from ..pruning import PruningReport
from . import charts
from . import format as fmt
from .widgets import View, html_table, register


@register("pruning")
class PruningView(View):
    """A query's pruning report as a treemap (sized by bytes or rows), per-level bars and a table of
    decisions that can be narrowed to one level or to the pruned units."""

    def __init__(self, lab, query: str, report: PruningReport | None = None):
        super().__init__()
        self.report = self.result = report or lab.explain(query)
        self.header.value = f'<div class="colstats-header">{fmt.escape(self.report.summary())}</div>'
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
        self.children = [self.header, self.measure, self.chart, widgets.HBox([self.level, self.pruned_only]),
                         self.decisions_html]
        self.refresh()
        self.refresh_table()

    def refresh(self) -> None:
        self.treemap = charts.pruning_treemap(self.report, self.measure.value)
        self.chart.clear_output(wait=True)
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
        self.decisions_html.value = html_table(shown, numeric={"rows", "bytes"}, wrap={"reason"})
