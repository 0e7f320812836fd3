"""The skew view: the most frequent values of one column and their share of rows, per partition."""
from __future__ import annotations

import ipywidgets as widgets
import pandas as pd

from ..skew import TABLE_LEVEL, TopValues, top_values
from . import charts
from . import format as fmt
from .widgets import View, html_table, register


def compute_top_values(lab, table: str, column: str, k: int = 10) -> TopValues:
    """One Spark aggregation over the table's current snapshot; raises naming an unknown column."""
    from ..metastore import NoSuchObjectException

    db, _, name = table.rpartition(".")
    meta = lab.metastore.get_table(db or lab.current_db, name)
    if meta.column(column) is None or column.lower() in meta.partition_key_names:
        raise NoSuchObjectException(f"column {column.lower()} does not exist in table {meta.qualified_name}"
                                    if meta.column(column) is None
                                    else f"{column.lower()} is a partition key of {meta.qualified_name}")
    return top_values(lab.table(meta.qualified_name), meta.partition_key_names, column.lower(), k)


@register("skew")
class SkewView(View):
    """Top-k values of a column as a bar chart (with 'others'), a partition selector and a log-scale switch."""

    def __init__(self, lab, table: str, column: str, k: int = 10, partition: str | None = None,
                 top: TopValues | None = None):
        super().__init__()
        self.lab = lab
        self.table_name = table
        self.top = top or compute_top_values(lab, table, column, k)
        options = [TABLE_LEVEL] + [p for p in self.top.partitions if p != TABLE_LEVEL]
        self.level = widgets.Dropdown(options=options, value=partition or TABLE_LEVEL, description="Partition",
                                      layout=widgets.Layout(width="420px"))
        self.level.layout.display = None if len(options) > 1 else "none"
        self.log_scale = widgets.ToggleButton(value=False, description="log scale", icon="signal")
        self.chart = widgets.Output()
        self.values_html = widgets.HTML()
        self.level.observe(lambda change: self.refresh(), names="value")
        self.log_scale.observe(lambda change: self.refresh(), names="value")
        self.children = [self.header, widgets.HBox([self.level, self.log_scale]), self.chart, self.values_html]
        self.refresh()

    def refresh(self) -> None:
        level = self.level.value
        self.rows = self.top.for_partition(level)
        total = sum(self.top.totals.values()) if level == TABLE_LEVEL else self.top.totals.get(level, 0)
        others = self.top.others(level)
        top_share = (self.rows["count"].sum() / total) if total else 0.0
        where = "whole table" if level == TABLE_LEVEL else level
        self.header.value = (
            f'<div class="colstats-header"><b>{fmt.escape(self.table_name)}.{fmt.escape(self.top.column)}</b> · '
            f'{fmt.escape(where)} · {fmt.count(total)} rows · top {len(self.rows)} values hold '
            f'{fmt.percent(top_share)}</div>')
        self.chart.clear_output()
        self.figure = charts.top_values_figure(self.rows, others, total,
                                               f"Most frequent values of {self.top.column} · {where}",
                                               self.log_scale.value)
        with self.chart:
            charts.show(self.figure)
        shown = self.rows.assign(value=self.rows["value"].map(lambda v: "NULL" if pd.isna(v) else fmt.number(v)),
                                 count=self.rows["count"].map(fmt.count),
                                 share=self.rows["share"].map(fmt.percent))[["rank", "value", "count", "share"]]
        self.values_html.value = html_table(shown, numeric={"count", "share", "rank"})
