"""The dashboard: pick a table, see its statistics view and the skew view of one of its columns."""
from __future__ import annotations

import ipywidgets as widgets

from ..coltypes import parse_type
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
        self.picker.observe(lambda change: self.show_table(change["new"]), names="value")
        self.column.observe(lambda change: self.show_skew(change["new"]), names="value")
        super().__init__([self.title, self.picker, self.status, self.stats_area, self.column, self.skew_area])

    def show_table(self, table: str | None) -> None:
        if not table:
            return
        self.status.value = f"Loading {fmt.escape(table)} ..."
        self.stats_area.children = [StatsView(self.lab, table)]
        meta = self.lab.metastore.get_table(self.lab.current_db, table)
        candidates = [c.name for c in meta.cols if parse_type(c.type).base in _SKEWABLE]
        self.column.options = candidates
        self.column.value = candidates[0] if candidates else None
        self.status.value = ""

    def show_skew(self, column: str | None) -> None:
        if not column or not self.picker.value:
            self.skew_area.children = []
            return
        self.skew_area.children = [SkewView(self.lab, self.picker.value, column)]
