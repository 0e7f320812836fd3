"""The skew view: the most frequent values per partition with the list-bucketing recommendation marked,
a heat map of the heavy hitters' shares across partitions, and the scan a query saves with list bucketing."""
from __future__ import annotations

import ipywidgets as widgets
import pandas as pd

from ..metastore.rows.levels import TABLE_LEVEL
from ..skew import SkewReport
from . import charts
from . import format as fmt
from .widgets import LevelPicker, View, html_table, names_holding, register


def _label(value) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join("NULL" if v is None else str(v) for v in value) + ")"
    return "NULL" if value is None or (not isinstance(value, str) and pd.isna(value)) else fmt.number(value)


@register("skew")
class SkewView(View):
    """Top-k values as bars (recommended ones marked, 'others' for the rest), a partition selector, a
    log-scale switch, the shares heat map over partitions, the scan fractions and the ALTER statement."""

    def __init__(self, lab, table: str, column: str | list[str], top: int = 10, partition: str | None = None,
                 report: SkewReport | None = None, min_share: float = 0.02, mode: str | None = None):
        super().__init__()
        self.lab = lab
        self.table_name = table
        options = {"mode": mode} if mode else {}
        if partition not in (None, TABLE_LEVEL):  # before the scan: an unknown partition costs no Spark job
            lab.tables[table].partition_record(partition)
        self.report = self.result = report or lab.tables[table].skew(column, top=top, min_share=min_share, **options)
        names = list(self.report.partitions)
        if partition is not None and partition not in (TABLE_LEVEL, *names):
            names.append(partition)  # it exists, but holds no rows
        table_meta = lab.resolve(table)
        spell = table_meta.partition_speller()
        self.column_label = ", ".join(table_meta.spelled(c) for c in self.report.column.split(", "))
        self.picker = LevelPicker("Partition", TABLE_LEVEL, names_holding(names), partition,
                                  label=lambda name: spell(name) or name)
        self.level = self.picker.dropdown
        self.log_scale = widgets.ToggleButton(value=False, description="log scale", icon="signal")
        self.chart = widgets.Output()
        self.values_html = widgets.HTML()
        self.extras = widgets.Output()
        self.recommendation_html = widgets.HTML()
        self.level.observe(lambda change: self.refresh(), names="value")
        self.log_scale.observe(lambda change: self.refresh(), names="value")
        self.children = [self.header, widgets.HBox([self.picker.box, self.log_scale]), self.chart, self.values_html,
                         self.recommendation_html, self.extras]
        self._show_table_wide()
        self.refresh()

    def refresh(self) -> None:
        level = self.level.value
        self.rows = self.report.for_partition(level)
        total = self.report.totals.get(level, 0)
        where = "whole table" if level == TABLE_LEVEL else self.picker.label(level)
        self.header.value = (
            f'<div class="colstats-header"><b>{fmt.escape(self.table_name)}.{fmt.escape(self.column_label)}</b> · '
            f'{fmt.escape(where)} · {fmt.count(total)} rows · top {len(self.rows)} values hold '
            f'{fmt.percent(self.report.top_share(level))} · {self.report.mode} counts'
            f'{" from the frequent-items sketches kept with the statistics (no scan)" if self.report.source != "scan" else ""}'
            '</div>')
        recommended = {_label(v) for v in self.report.recommended}
        shown = self.rows.assign(value=self.rows["value"].map(_label))
        charts.clear(self.chart)
        nulls = self.report.null_count(level)
        self.figure = charts.top_values_figure(shown, self.report.others(level), total,
                                               f"Most frequent values of {self.column_label} · {where}",
                                               self.log_scale.value, marked=recommended, nulls=nulls)
        with self.chart:
            charts.show(self.figure)
        table = shown.assign(count=self.rows["count"].map(fmt.count), share=self.rows["share"].map(fmt.percent),
                             skewed=shown["value"].map(lambda v: "recommended" if v in recommended else ""))
        if nulls:
            table = pd.concat([table, pd.DataFrame([{
                "rank": "", "value": charts.NULLS, "count": fmt.count(nulls),
                "share": fmt.percent(self.report.null_share(level)), "skewed": "never (default directory)"}])],
                ignore_index=True)
        self.values_html.value = html_table(table[["rank", "value", "count", "share", "skewed"]],
                                            numeric={"count", "share", "rank"})

    def _show_table_wide(self) -> None:
        notes = "".join(f"<li>{fmt.escape(n)}</li>" for n in self.report.notes())
        self.recommendation_html.value = (
            f'<div class="colstats-recommendation"><b>List bucketing</b>: declare '
            f'{len(self.report.recommended)} value(s) skewed, holding {fmt.percent(self.report.covered_share)} of the rows'
            f'<pre>{fmt.escape(self.report.statement)}</pre>' + (f"<ul>{notes}</ul>" if notes else "") + "</div>")
        self.heatmap = charts.shares_heatmap(self.report, f"Share of rows per partition · {self.column_label}",
                                             self.picker.label)
        self.scan_figure = charts.scan_fractions_figure(self.report.scan_fractions(),
                                                        "Fraction of a partition a query reads")
        with self.extras:
            charts.show(self.heatmap)
            charts.show(self.scan_figure)
