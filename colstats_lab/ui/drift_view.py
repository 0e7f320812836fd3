"""The drift view: one column's statistics over time, from the states the history keeps (null fraction,
distinct values, the quartiles and the PSI at each write and ANALYZE), or across the table's partitions
(each one's latest state, against the partition before it), and the outcomes of its rules."""
from __future__ import annotations

import ipywidgets as widgets

from ..errors import InvalidArgument
from ..metastore.rows.levels import TABLE_LEVEL
from . import charts
from . import format as fmt
from .widgets import LevelPicker, View, html_table, partitions_found, register

ACROSS_PARTITIONS = 365  # the last partitions by name drawn across partitions: a year of days


@register("drift")
class DriftView(View):
    """A column's kept states as timelines, at the table level or one partition, or each partition's latest
    state in name order (`along`: "time" or "partitions"; by default partitions for a partitioned table
    when no partition is asked for), with its rules' outcomes."""

    def __init__(self, lab, table: str, column: str | None = None, partition: str | None = None,
                 along: str | None = None):
        super().__init__()
        self.lab = lab
        self.table = lab.resolve(table)
        self.handle = lab.tables[self.table.qualified_name]
        names = [c.name for c in self.table.cols]
        if column is not None:
            self.table.column_type(column)  # names an unknown column
        # shown as the files spell them, kept as the metastore names them
        self.column = widgets.Dropdown(options=[(self.table.spelled(n), n) for n in names],
                                       value=column.lower() if column else names[0],
                                       description="Column", layout=widgets.Layout(width="420px"))
        self.picker = LevelPicker("Level", TABLE_LEVEL, self._find_partitions, partition)
        # over time: one cell's kept states; across partitions: each partition's latest (daily data drifting)
        if along not in (None, "time", "partitions"):
            raise InvalidArgument(f"along is time or partitions, not {along!r}")
        if along == "partitions" and not self.table.is_partitioned:
            raise InvalidArgument(f"{self.table.qualified_name} is not partitioned: its drift is over time")
        if along is None:  # a daily table drifts from day to day: shown first unless a partition was asked for
            along = "partitions" if self.table.is_partitioned and partition is None else "time"
        self.along = widgets.ToggleButtons(options=[("over time", "time"), ("across partitions", "partitions")],
                                           value=along, description="Show")
        self.along.layout.display = None if self.table.is_partitioned else "none"
        self.chart = widgets.Output()
        self.rules_html = widgets.HTML()
        self.column.observe(lambda change: self.refresh(), names="value")
        self.picker.dropdown.observe(lambda change: self.refresh(), names="value")
        self.along.observe(lambda change: self.refresh(), names="value")
        self.children = [self.header, widgets.HBox([self.column]), self.along, self.picker.box, self.chart,
                         self.rules_html]
        self.refresh()

    def _find_partitions(self, text: str, limit: int) -> tuple[list[str], int]:
        return partitions_found(self.handle.inspect.partitions)(text, limit)

    def refresh(self) -> None:
        column, level = self.column.value, self.picker.dropdown.value
        spelled = self.table.spelled(column)
        across = self.along.value == "partitions"
        partition = None if level == TABLE_LEVEL or across else level
        self.picker.box.layout.display = "none" if across else None
        if across:
            self.history = self.result = self.handle.inspect.across_partitions(column, limit=ACROSS_PARTITIONS)
            stale = int((self.history["accurate"] == False).sum())  # noqa: E712 (None: never judged)
            total = self.handle.inspect.partitions("", 0).attrs["total"]
            drawn = len(self.history)
            shown = (f"all {total:,} partitions" if drawn >= total else
                     f"the last {drawn:,} of {total:,} partitions by name" if drawn >= ACROSS_PARTITIONS
                     else f"{drawn:,} of {total:,} partitions (the others have no kept state)")
            where, counted = "across partitions", f"each one's latest kept state, {shown}" + (
                f" ({stale:,} not accurate now: hollow points)" if stale else "")
            title = f"{self.table.tableName}.{spelled} across partitions (each against the one before)"
        else:
            self.history = self.result = self.handle.inspect.history(column, partition=partition)
            where = "whole table" if partition is None else partition
            counted, title = f"{len(self.history):,} kept states", f"{self.table.tableName}.{spelled} · {where} over time"
        self.header.value = (f'<div class="colstats-header"><b>{fmt.escape(self.table.qualified_name)}.'
                             f'{fmt.escape(spelled)}</b> · {fmt.escape(where)} · {counted}</div>')
        charts.clear(self.chart)
        self.figure = charts.history_figure(self.history, title, "partition" if across else "recorded_at") \
            if len(self.history) else None
        if self.figure is not None:
            with self.chart:
                charts.show(self.figure)
        outcomes = self.handle.inspect.expectations()
        if across:
            outcomes = outcomes[(outcomes["column"] == spelled) & outcomes["partition"].notna()].tail(50)
        else:
            outcomes = outcomes[(outcomes["column"] == spelled) & (outcomes["partition"].isna() if partition is None
                                                                   else outcomes["partition"] == partition)]
        if len(outcomes):
            shown = outcomes.assign(
                passed=outcomes["passed"].map({True: "pass", False: "FAIL"}), figure=outcomes["figure"].map(_figure),
                recorded_at=outcomes["recorded_at"].dt.strftime("%Y-%m-%d %H:%M:%S UTC"))[
                (["partition"] if across else []) + ["recorded_at", "write_id", "rule", "threshold", "figure",
                                                     "passed"]]
            self.rules_html.value = html_table(shown, numeric={"write_id", "figure"})
        else:
            self.rules_html.value = ('<div class="colstats-muted">No rules on this column: '
                                     'lab.tables[name].expect(column, nulls_below=..., psi_below=...)</div>')


def _figure(text: str | None) -> str:
    """A rule's figure as a person reads it: numbers to four significant digits, other values as stored."""
    if text is None:
        return ""
    try:
        return f"{float(text):.4g}"
    except ValueError:
        return text
