"""The metadata view: a table's Drill metadata from its last REFRESH METADATA, one level at a time
(TABLE, SEGMENT, PARTITION, FILE, ROW_GROUP), each unit's rows, bytes and per-column figures."""
from __future__ import annotations

import ipywidgets as widgets

from ..metastore.table_metadata import LEVELS
from . import format as fmt
from .widgets import View, html_table, register

ROWS_SHOWN = 500  # of one level; the rest stay in lab.metadata(table, level)


@register("metadata")
class MetadataView(View):
    """A level dropdown over the levels the metadata holds, and that level's units as a table."""

    def __init__(self, lab, table: str, level: str | None = None, result=None):
        super().__init__(result=result)
        self.table_name = table
        self.metadata = lab.metadata(table)
        present = [name for name in LEVELS if (self.metadata["level"] == name).any()]
        self.level = widgets.Dropdown(options=present, value=(level or present[0]).upper(), description="Level")
        self.table_html = widgets.HTML()
        self.level.observe(lambda change: self.refresh(), names="value")
        self.children = [self.header, self.level, self.table_html]
        self.refresh()

    def refresh(self) -> None:
        rows = self.metadata[self.metadata["level"] == self.level.value].drop(columns="level")
        units = rows["identifier"].nunique()
        shown = rows.head(ROWS_SHOWN).assign(bytes=lambda f: f["bytes"].map(fmt.size))
        self.header.value = (
            f'<div class="colstats-header"><b>{fmt.escape(self.table_name)}</b> · metadata at level '
            f'{fmt.escape(self.level.value)} · {fmt.count(units)} unit(s)'
            + (f" · the first {ROWS_SHOWN:,} of {len(rows):,} rows shown" if len(rows) > ROWS_SHOWN else "")
            + "</div>")
        self.table_html.value = html_table(shown.fillna(""), numeric={"rows", "bytes", "nulls", "ndv",
                                                                      "est_non_nulls"})
