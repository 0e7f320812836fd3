"""The dashboard: pick a table, see its statistics view and the skew view of one of its columns."""
from __future__ import annotations

import ipywidgets as widgets

from ..coltypes import parse_type
from ..errors import ColstatsError
from . import format as fmt
from .skew_view import SkewView
from .stats_view import StatsView

_SKEWABLE = ("tinyint", "smallint", "int", "bigint", "string", "varchar", "char", "date", "boolean")


class Dashboard(widgets.VBox):
    """A table picker over every table of the lab's current database, with the views below it."""

    def __init__(self, lab):
        self.lab = lab
        tables = lab.metastore.get_tables(lab.current_db)
        self.title = widgets.HTML(f'<h2 style="font-family: system-ui, sans-serif">colstats_lab · '
                                  f'{fmt.escape(lab.current_db)}</h2>')
        self.picker = widgets.Dropdown(options=tables, value=None, description="Table",
                                       layout=widgets.Layout(width="420px"))
        self.column = widgets.Dropdown(options=[], description="Skew of", layout=widgets.Layout(width="420px"))
        self.stats_area = widgets.VBox()
        self.skew_area = widgets.VBox()
        self.status = widgets.HTML("" if tables else "No tables yet: run `make dashboard` to build the demo.")
        self.picker.observe(lambda change: self._shown(self.show_table, change["new"]), names="value")
        self.column.observe(lambda change: self._shown(self.show_skew, change["new"]), names="value")
        super().__init__([self.title, self.picker, self.status, self.stats_area, self.column, self.skew_area])

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
        self.stats_area.children = [StatsView(self.lab, table)]
        meta = self.lab.metastore.get_table(self.lab.current_db, table)
        candidates = [c.name for c in meta.cols if parse_type(c.type).base in _SKEWABLE]
        self.column.options = candidates
        self.column.value = self._likely_skewed(candidates)
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
        if not column or not self.picker.value:
            self.skew_area.children = []
            return
        self.skew_area.children = [SkewView(self.lab, self.picker.value, column)]
