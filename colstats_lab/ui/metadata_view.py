"""The metadata view: a table's Drill metadata from its last REFRESH METADATA, one level at a time
(TABLE, SEGMENT, PARTITION, FILE, ROW_GROUP), each unit's rows, bytes and per-column figures; whether
it is up to date with the table's files; and the table's INFORMATION_SCHEMA rows."""
from __future__ import annotations

import ipywidgets as widgets
import pandas as pd

from ..metastore.repositories.metadata_store import INFORMATION_SCHEMA_VIEWS
from ..metastore.rows.metadata_units import LEVELS
from . import format as fmt
from .widgets import View, html_table, register

ROWS_SHOWN = 500  # of one level; the rest stay in lab.tables[name].inspect.metadata(level)


@register("metadata")
class MetadataView(View):
    """A level dropdown over the levels the metadata holds and that level's units as a table, then the
    table's rows of one INFORMATION_SCHEMA view."""

    def __init__(self, lab, table: str, level: str | None = None, result=None):
        super().__init__(result=result)
        self.table_name = table
        changes = lab.tables[table].inspect.metadata_changes()
        self.state = changes.attrs["state"]
        if not changes.attrs["refreshed"]:  # nothing gathered yet: said, not refused
            self.metadata: pd.DataFrame | None = None
            self.header.value = (f'<div class="colstats-header"><b>{fmt.escape(table)}</b> · '
                                 f'<span class="colstats-muted">{fmt.escape(self.state)}</span></div>')
            self.children = [self.header]
            return
        self.metadata = lab.tables[table].inspect.metadata()
        self.schema_rows = {view: lab.tables[table].inspect.information_schema(view, ROWS_SHOWN)
                            for view in INFORMATION_SCHEMA_VIEWS}
        present = [name for name in LEVELS if (self.metadata["level"] == name).any()]
        self.level = widgets.Dropdown(options=present, value=(level or present[0]).upper(), description="Level")
        self.table_html = widgets.HTML()
        self.schema_view = widgets.ToggleButtons(options=list(INFORMATION_SCHEMA_VIEWS), value="COLUMNS",
                                                 description="INFORMATION_SCHEMA", style={"description_width": "initial"})
        self.schema_html = widgets.HTML()
        self.level.observe(lambda change: self.refresh(), names="value")
        self.schema_view.observe(lambda change: self.refresh_schema(), names="value")
        self.children = [self.header, self.level, self.table_html, self.schema_view, self.schema_html]
        self.refresh()
        self.refresh_schema()

    def refresh(self) -> None:
        assert self.metadata is not None  # a view without metadata has nothing to refresh
        rows = self.metadata[self.metadata["level"] == self.level.value].drop(columns="level")
        units = rows["identifier"].nunique()
        shown = rows.head(ROWS_SHOWN).assign(bytes=lambda f: f["bytes"].map(fmt.size))
        self.header.value = (
            f'<div class="colstats-header"><b>{fmt.escape(self.table_name)}</b> · metadata at level '
            f'{fmt.escape(self.level.value)} · {fmt.count(units)} unit(s)'
            + (f" · the first {ROWS_SHOWN:,} of {len(rows):,} rows shown" if len(rows) > ROWS_SHOWN else "")
            + f" · {fmt.escape(self.state)}</div>")
        self.table_html.value = html_table(shown.fillna(""), numeric={"rows", "bytes", "nulls", "ndv",
                                                                      "est_non_nulls"})

    def refresh_schema(self) -> None:
        rows = self.schema_rows[self.schema_view.value]
        self.schema_html.value = (html_table(rows.astype(object).where(rows.notna(), "")) if len(rows) else
                                  '<div class="colstats-muted">no rows</div>')
