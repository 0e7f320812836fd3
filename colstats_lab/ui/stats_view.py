"""The statistics view: one row per column with its statistics, null fraction, NDV, when it was
analyzed and whether the statistics are still accurate (with the reason when not)."""
from __future__ import annotations

import datetime as dt

import ipywidgets as widgets
import pandas as pd

from ..metastore.levels import TABLE_LEVEL
from ..metastore import NoSuchObjectException, Table
from ..column_statistics.model import Timestamp
from . import charts
from . import format as fmt
from .widgets import LevelPicker, View, badge, fraction_bar, html_table, register

QUARTILES = "Q1, median, Q3"


def column_label(table: Table | None, name: str) -> str:
    """A column's name as HTML: as the files spell it; a struct's leaf indented by its depth, its structs muted
    before its own name (`payload . user . id`)."""
    leaf = table.stats_column(name) if table is not None else None
    if leaf is None or not leaf.is_leaf:
        return fmt.escape(table.spelled(name) if table is not None else name)
    indent = "&nbsp;" * 3 * (len(leaf.path) - 1)
    parents = "".join(f'<span style="color: #777">{fmt.escape(p)}.</span>' for p in leaf.path[:-1])
    return f'<span title="{fmt.escape(name)}">{indent}{parents}{fmt.escape(leaf.path[-1])}</span>'


def display_frame(frame: pd.DataFrame, table: Table | None = None) -> pd.DataFrame:
    """The statistics frame as the view shows it (`column` is HTML); with `table`, columns named as its files
    spell them and struct leaves indented."""
    counted = [_counted(type_name) for type_name in frame["type"]]
    shown = pd.DataFrame({
        "column": frame["column"].map(lambda name: column_label(table, name)), "type": frame["type"],
        # an array's or map's figures are its elements' (entries') count
        "min": [fmt.number(v) + unit if unit and v is not None and not pd.isna(v) else fmt.number(v)
                for v, unit in zip(frame["min"], counted)],
        "max": [fmt.number(v) + unit if unit and v is not None and not pd.isna(v) else fmt.number(v)
                for v, unit in zip(frame["max"], counted)],
        "nulls": frame["nulls"].map(fmt.count), "null fraction": frame["null_fraction"].map(fraction_bar),
        "distinct": frame["ndv"].map(fmt.count),
        # a narrow cell that wraps between values, never inside one (a date broke at its hyphens): a timestamp's
        # three side by side pushed the table past a 1,400 px screen, and a row's text stays one line (a <br>
        # in it broke each row read as text in two)
        QUARTILES: frame["quartiles"].map(lambda q: " / ".join(f'<span style="white-space: nowrap">'
                                                               f'{fmt.escape(text)}</span>' for text in _quartile_texts(q))
                                          if isinstance(q, list) else ""),
        "avg len": frame["avg_len"].map(lambda v: "" if v is None or pd.isna(v) else f"{v:.2f}"),
        "max len": frame["max_len"].map(fmt.count),
        "true / false": [f"{fmt.count(t)} / {fmt.count(f)}" if t is not None and not pd.isna(t) else ""
                         for t, f in zip(frame["trues"], frame["falses"])],
        "analyzed (UTC)": frame["last_analyzed"].map(lambda v: fmt.when(None if pd.isna(v) else int(v))),
        "status": [badge(None if pd.isna(a) else bool(a), r or "") for a, r in zip(frame["accurate"], frame["reason"])],
        # the badge's tooltip carries every reason; the column spells out only what needs attention
        "reason": [r if a is not True and r else "" for a, r in zip(frame["accurate"], frame["reason"])],
    })
    if frame["coverage"].notna().any():  # a partitioned table's level: how many partitions the figures cover
        shown.insert(len(shown.columns) - 2, "partitions", frame["coverage"].map(lambda v: v or ""))
    # whether the figures can be trusted is the view's point: beside each name, where no screen width hides it
    return shown[["column", "status", *[c for c in shown.columns if c not in ("column", "status")]]]


def _quartile_texts(values: list) -> list[str]:
    """Q1, median and Q3 short enough to share a narrow cell: timestamps to the second (a sketch's quantile is
    no finer than its 1.33 % rank error) and a day they share written once."""
    texts = [fmt.number(v) for v in values]
    if all(isinstance(v, (Timestamp, dt.datetime)) for v in values):
        texts = [text[:19] for text in texts]
        days = {text.split(" ", 1)[0] for text in texts}
        if len(days) == 1 and all(" " in text for text in texts):
            texts = texts[:1] + [text.split(" ", 1)[1] for text in texts[1:]]
    return texts


def _counted(type_name: str) -> str:
    """The unit an array's or map's figures count in (its min, max and average are sizes); '' for others."""
    lowered = str(type_name).lower()
    return " elements" if lowered.startswith("array<") else " entries" if lowered.startswith("map<") else ""


@register("stats")
class StatsView(View):
    """Statistics of one table, at the table level or per partition (dropdown)."""

    def __init__(self, lab, table: str, partition: str | None = None, chart: bool = True):
        super().__init__()
        self.lab = lab
        self.table = lab.resolve(table)
        self.handle = lab.tables[self.table.qualified_name]
        if partition is not None:
            if not self.table.is_partitioned:
                raise NoSuchObjectException(f"partition {partition} of {self.table.qualified_name} does not exist")
            self.handle.inspect.partition(partition)  # names it when unknown
        self.picker = LevelPicker("Level", TABLE_LEVEL, self._find_partitions, partition)
        self.level = self.picker.dropdown
        self.table_html = widgets.HTML()
        self.chart = widgets.Output() if chart else None
        self.column = widgets.Dropdown(options=[], description="Distribution")
        self.distribution_chart = widgets.Output()
        self.level.observe(lambda change: self.refresh(), names="value")
        self.column.observe(lambda change: self.refresh_distribution(), names="value")
        self.children = [self.header, self.picker.box, self.table_html] + (
            [self.chart, self.column, self.distribution_chart] if chart else [])
        self.refresh()

    def _find_partitions(self, text: str, limit: int) -> tuple[list[str], int]:
        return self.handle.inspect.partitions(text, limit)

    def refresh(self) -> None:
        shown = self.handle.inspect.stats_level(self.level.value)
        self.frame, params = shown.frame, shown.parameters
        where = "whole table" if shown.partition is None else shown.partition.partName
        self.header.value = (
            f'<div class="colstats-header"><b>{fmt.escape(self.table.qualified_name)}</b> · {fmt.escape(where)} · '
            f'{fmt.count(shown.rows)} rows · {fmt.size(int(params.get("totalSize", 0) or 0))} in '
            f'{fmt.count(int(params.get("numFiles", 0) or 0))} files'
            + (f' · {fmt.count(int(params.get("numPartitions", 0) or 0))} partitions'
               if self.table.is_partitioned and shown.partition is None else "")
            + f' · <span title="rows inserted or removed since every column\'s statistics were last accurate">'
              f'changed since analyze: {fmt.escape(shown.changed)}</span></div>')
        numeric = {"min", "max", "nulls", "distinct", "avg len", "max len", "true / false"}
        self.table_html.value = html_table(display_frame(self.frame, self.table), numeric=numeric,
                                           raw_html={"column", "null fraction", "status", QUARTILES}, wrap={"reason"},
                                           narrow={QUARTILES})
        if self.chart is not None:
            analyzed = self.frame[self.frame["nulls"].notna()].copy()
            analyzed["ndv"] = [0 if v is None else v for v in analyzed["ndv"]]
            analyzed["column"] = analyzed["column"].map(self.table.spelled)
            charts.clear(self.chart)
            self.figure = charts.null_and_ndv_figure(
                analyzed, f"{self.table.tableName} · {where}: nulls and distinct values") if len(analyzed) else None
            if self.figure is not None:
                with self.chart:
                    charts.show(self.figure)
            sketched = [c for c, q in zip(self.frame["column"], self.frame["quartiles"]) if isinstance(q, list)]
            # first a column that is not a unique key: an id's distribution is flat
            keys = {c for c, n, nulls in zip(self.frame["column"], self.frame["ndv"], self.frame["nulls"])
                    if n and shown.rows and n >= 0.9 * (shown.rows - nulls)}
            first = next((c for c in sketched if c not in keys), sketched[0] if sketched else None)
            keep = self.column.value if self.column.value in sketched else first
            self.column.options = sketched
            self.column.value = keep
            self.column.layout.display = None if sketched else "none"
            self.refresh_distribution()

    def refresh_distribution(self) -> None:
        """The chosen column's histogram at this level and, at a partitioned table's level, its quartiles in
        each partition side by side."""
        charts.clear(self.distribution_chart)
        self.distribution_figures = []
        column = self.column.value
        if not column:
            return
        level = self.level.value
        sketch = self.handle.inspect.distribution(column, level)
        type_name = self.table.column_type(column)
        where = "whole table" if level == TABLE_LEVEL else level
        if sketch is not None and not sketch.is_empty:
            self.distribution_figures.append(charts.distribution_figure(
                sketch, type_name, f"{self.table.tableName}.{column} · {where}: distribution (KLL sketch)"))
        if self.table.is_partitioned and level == TABLE_LEVEL:
            by_partition = self.handle.inspect.quartiles(column)
            if len(by_partition):
                self.distribution_figures.append(charts.quartiles_figure(
                    by_partition, type_name, f"{self.table.tableName}.{column}: quartiles per partition"))
        with self.distribution_chart:
            for figure in self.distribution_figures:
                charts.show(figure)
