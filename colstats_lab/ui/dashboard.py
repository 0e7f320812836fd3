"""The dashboard: every table at a glance (the stalest first), then one table's statistics view and,
on request, the skew view of one of its columns. Nothing starts Spark until a skew is asked for."""
from __future__ import annotations

import ipywidgets as widgets
import pandas as pd

from ..coltypes import parse_type
from ..errors import ColstatsError
from ..frames import tables_frame
from . import format as fmt
from .skew_view import SkewView
from .stats_view import StatsView
from .widgets import html_table

_SKEWABLE = ("tinyint", "smallint", "int", "bigint", "string", "varchar", "char", "date", "boolean")
NO_COLUMN = "(pick a column: runs one Spark aggregation)"


def landing_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The landing table as shown: sizes in words, freshness as a badge with the reason on hover."""
    def freshness(row) -> str:
        if row.columns == 0:
            return '<span class="colstats-badge colstats-none">no columns with statistics</span>'
        if row.stale_partitions:
            what = f"{row.stale_partitions:,} partition(s)" if row.partitions is not pd.NA else "the table"
            return (f'<span class="colstats-badge colstats-stale" title="{fmt.escape(row.stale_reason or "")}">'
                    f'not accurate in {what}</span>')
        if row.accurate_columns < row.columns:
            return f'<span class="colstats-badge colstats-none">{row.columns - row.accurate_columns} never analyzed</span>'
        return '<span class="colstats-badge colstats-ok">accurate</span>'

    return pd.DataFrame({
        "table": frame["database"] + "." + frame["table"], "kind": frame["kind"],
        "partitions": frame["partitions"].map(lambda v: "" if v is pd.NA else fmt.count(int(v))),
        "files": frame["files"].map(fmt.count), "rows": frame["rows"].map(fmt.count), "size": frame["bytes"].map(fmt.size),
        "accurate columns": [f"{a} of {c}" for a, c in zip(frame["accurate_columns"], frame["columns"])],
        "statistics": [freshness(row) for row in frame.itertuples()],
        "last analyzed (UTC)": frame["last_analyzed"].map(lambda t: "" if t is None or pd.isna(t)
                                                         else t.strftime("%Y-%m-%d %H:%M")),
        "metadata": frame["metadata_level"].fillna(""),
    })


class Dashboard(widgets.VBox):
    """The landing table with a search box, a table picker, and the views below it."""

    def __init__(self, lab):
        self.lab = lab
        self.tables = tables_frame(lab.metastore)
        names = list(self.tables["database"] + "." + self.tables["table"])
        self.title = widgets.HTML('<h2 style="font-family: system-ui, sans-serif">colstats_lab</h2>')
        self.search = widgets.Text(placeholder="part of a table name", description="Find",
                                   continuous_update=True, layout=widgets.Layout(width="420px"))
        self.landing = widgets.HTML()
        self.picker = widgets.Dropdown(options=names, value=None, description="Table",
                                       layout=widgets.Layout(width="420px"))
        self.column = widgets.Dropdown(options=[], description="Skew of", layout=widgets.Layout(width="420px"))
        self.stats_area = widgets.VBox()
        self.skew_area = widgets.VBox()
        self.status = widgets.HTML("" if names else "No tables yet: run `make dashboard` to build the demo.")
        self.search.observe(lambda change: self.show_landing(change["new"]), names="value")
        self.picker.observe(lambda change: self._shown(self.show_table, change["new"]), names="value")
        self.column.observe(lambda change: self._shown(self.show_skew, change["new"]), names="value")
        self.show_landing("")
        super().__init__([self.title, self.search, self.landing, self.picker, self.status, self.stats_area,
                          self.column, self.skew_area])

    def show_landing(self, text: str) -> None:
        shown = landing_rows(self.tables)
        if text.strip():
            shown = shown[shown["table"].str.contains(text.strip(), case=False, regex=False)]
        self.landing.value = html_table(shown, numeric={"partitions", "files", "rows", "size"},
                                        raw_html={"statistics"})

    def _shown(self, show, value) -> None:
        """A viewer sees a refused request as one line, never a traceback."""
        try:
            show(value)
        except ColstatsError as exc:
            self.status.value = f'<span style="color: #c62828">{fmt.escape(str(exc))}</span>'

    def show_table(self, table: str | None) -> None:
        if not table:
            return
        self.status.value = f"Loading {fmt.escape(table)} ..."
        self.skew_area.children = []
        self.stats_area.children = [StatsView(self.lab, table)]
        db, _, name = table.partition(".")
        meta = self.lab.metastore.get_table(db, name)
        candidates = [c.name for c in meta.cols if parse_type(c.type).base in _SKEWABLE]
        likely = self._likely_skewed(candidates)
        # the likely skewed column first; choosing one runs Spark, so none is chosen for the viewer
        self.column.options = [NO_COLUMN] + ([likely] if likely else []) + [c for c in candidates if c != likely]
        self.column.value = NO_COLUMN
        self.status.value = ""

    def _likely_skewed(self, candidates: list[str]) -> str | None:
        """The column with the most distinct values that still repeat (NDV at most a tenth of the rows):
        the seed's case of many values with a few heavy ones. Without statistics, the first column."""
        frame = self.stats_area.children[0].frame.set_index("column")
        rows = int(self.stats_area.children[0].table.parameters.get("numRows", 0) or 0)
        scored = [(frame.loc[c, "ndv"], c) for c in candidates
                  if c in frame.index and frame.loc[c, "ndv"] is not None and 2 < frame.loc[c, "ndv"] <= rows / 10]
        return max(scored)[1] if scored else (candidates[0] if candidates else None)

    def show_skew(self, column: str | None) -> None:
        if not column or column == NO_COLUMN or not self.picker.value:
            self.skew_area.children = []
            return
        self.skew_area.children = [SkewView(self.lab, self.picker.value, column)]
