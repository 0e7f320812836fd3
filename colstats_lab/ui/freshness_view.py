"""The freshness view: which statistics a reader can trust now, as a partitions × columns map (accurate,
not accurate, never analyzed; HIVE-19416's reason, an external table's changed files or the rows changed
on hover), and a button that analyzes the stale partitions in one Spark job with its progress shown."""
from __future__ import annotations

import ipywidgets as widgets

from ..analyze.stale import stale_owners
from ..errors import ColstatsError
from . import charts
from . import format as fmt
from .progress import SparkProgress
from .widgets import View, register


@register("freshness")
class FreshnessView(View):
    """The freshness map of one table, a threshold on the rows changed since the statistics were accurate
    (0: every stale partition; Impala's rule of thumb is 30 %) and the button that analyzes past it."""

    def __init__(self, lab, table: str, threshold: float = 0.0, on_analyzed=None):
        super().__init__()
        self.lab = lab
        self.on_analyzed = on_analyzed  # told after the button's ANALYZE, so what shows the table redraws too
        self.table = lab.resolve(table)
        self.handle = lab.tables[self.table.qualified_name]
        self.threshold = widgets.FloatSlider(value=threshold, min=0.0, max=1.0, step=0.05, readout_format=".0%",
                                             description="changed by ≥", style={"description_width": "initial"},
                                             layout=widgets.Layout(width="360px"))
        self.button = widgets.Button(icon="refresh", button_style="warning", layout=widgets.Layout(width="auto"))
        self.progress_area = widgets.VBox()
        self.chart = widgets.Output()
        self.threshold.observe(lambda change: self._offer(), names="value")
        self.button.on_click(lambda _: self.analyze())
        self.children = [self.header, widgets.HBox([self.threshold, self.button]), self.progress_area, self.message,
                         self.chart]
        self.refresh()

    def refresh(self) -> None:
        self.frame = self.handle.inspect.freshness()
        self.staleness = self.handle.inspect.staleness()
        cells = len(self.frame)
        stale = int((self.frame["accurate"] == False).sum())  # noqa: E712 - None (never analyzed) is neither
        never = int(self.frame["accurate"].isna().sum())
        owners = "partitions" if self.table.is_partitioned else "table"
        not_accurate = int((~self.staleness["accurate"].astype(bool)).sum())
        self.header.value = (
            f'<div class="colstats-header"><b>{fmt.escape(self.table.qualified_name)}</b> · '
            f'{fmt.count(cells - stale - never)} of {fmt.count(cells)} statistics accurate, {fmt.count(stale)} not, '
            f'{fmt.count(never)} never analyzed'
            + (f' · {fmt.count(not_accurate)} of {fmt.count(len(self.staleness))} partitions need an ANALYZE'
               if owners == "partitions" else "")
            + f'<div class="colstats-muted">fresh by {fmt.escape(self.handle.freshness_basis())}'
              '</div></div>')
        charts.clear(self.chart)
        self.figure = charts.freshness_heatmap(self.frame, f"Statistics of {self.table.tableName} a reader can trust now")
        with self.chart:
            charts.show(self.figure)
        self._offer()

    def _offer(self) -> None:
        """The button names what it would analyze at the threshold chosen."""
        self.chosen = stale_owners(self.staleness, self.threshold.value)
        if not self.chosen:
            self.button.description = "Nothing to analyze"
        elif not self.table.is_partitioned:
            self.button.description = "Analyze the table"
        else:
            self.button.description = f"Analyze {len(self.chosen):,} partition{'s' if len(self.chosen) != 1 else ''}"
        self.button.disabled = not self.chosen

    def analyze(self) -> None:
        """Analyzes every column of the chosen partitions in one Spark job, then redraws the map."""
        self.button.disabled = True
        self.say(f"Analyzing {self.button.description.removeprefix('Analyze ')} ...")
        try:
            with SparkProgress(self.lab.spark, "ANALYZE", container=self.progress_area):
                self.result = self.handle.analyze_stale(self.threshold.value)
            self.say(self.result.message)
        except ColstatsError as exc:  # a viewer sees one line, never a traceback
            self.say(str(exc))
        self.refresh()
        if self.on_analyzed is not None:
            self.on_analyzed()
