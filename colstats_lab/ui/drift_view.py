"""The drift view: one column's statistics over time, from the states the history keeps (null fraction,
distinct values and the quartiles at each write and ANALYZE), and the outcomes of its rules."""
from __future__ import annotations

import ipywidgets as widgets

from ..metastore.levels import TABLE_LEVEL
from . import charts
from . import format as fmt
from .widgets import LevelPicker, View, html_table, register


@register("drift")
class DriftView(View):
    """A column's kept states as timelines, at the table level or one partition, with its rules' outcomes."""

    def __init__(self, lab, table: str, column: str | None = None, partition: str | None = None):
        super().__init__()
        self.lab = lab
        self.table = lab.resolve(table)
        names = [c.name for c in self.table.cols]
        if column is not None:
            self.table.column_type(column)  # names an unknown column
        self.column = widgets.Dropdown(options=names, value=column.lower() if column else names[0],
                                       description="Column", layout=widgets.Layout(width="420px"))
        self.picker = LevelPicker("Level", TABLE_LEVEL, self._find_partitions, partition)
        self.chart = widgets.Output()
        self.rules_html = widgets.HTML()
        self.column.observe(lambda change: self.refresh(), names="value")
        self.picker.dropdown.observe(lambda change: self.refresh(), names="value")
        self.children = [self.header, widgets.HBox([self.column]), self.picker.box, self.chart, self.rules_html]
        self.refresh()

    def _find_partitions(self, text: str, limit: int) -> tuple[list[str], int]:
        return self.lab.find_partitions(self.table.qualified_name, text, limit)

    def refresh(self) -> None:
        column, level = self.column.value, self.picker.dropdown.value
        partition = None if level == TABLE_LEVEL else level
        self.history = self.result = self.lab.history(self.table.qualified_name, column, partition=partition)
        where = "whole table" if partition is None else partition
        self.header.value = (f'<div class="colstats-header"><b>{fmt.escape(self.table.qualified_name)}.'
                             f'{fmt.escape(column)}</b> · {fmt.escape(where)} · {len(self.history):,} kept states'
                             '</div>')
        self.chart.clear_output()
        self.figure = charts.history_figure(self.history, f"{self.table.tableName}.{column} · {where} over time") \
            if len(self.history) else None
        if self.figure is not None:
            with self.chart:
                charts.show(self.figure)
        outcomes = self.lab.expectations(self.table.qualified_name)
        outcomes = outcomes[(outcomes["column"] == column) & (outcomes["partition"].isna() if partition is None
                                                              else outcomes["partition"] == partition)]
        if len(outcomes):
            shown = outcomes.assign(
                passed=outcomes["passed"].map({True: "pass", False: "FAIL"}), figure=outcomes["figure"].map(_figure),
                recorded_at=outcomes["recorded_at"].dt.strftime("%Y-%m-%d %H:%M:%S"))[
                ["recorded_at", "write_id", "rule", "threshold", "figure", "passed"]]
            self.rules_html.value = html_table(shown, numeric={"write_id", "figure"})
        else:
            self.rules_html.value = ('<div class="colstats-muted">No rules on this column: '
                                     'lab.expect(table, column, nulls_below=..., psi_below=...)</div>')


def _figure(text: str | None) -> str:
    """A rule's figure as a person reads it: numbers to four significant digits, other values as stored."""
    if text is None:
        return ""
    try:
        return f"{float(text):.4g}"
    except ValueError:
        return text
