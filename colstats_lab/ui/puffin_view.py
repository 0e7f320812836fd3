"""The Puffin view: for an attached catalog's Iceberg table, the NDV every Puffin file registered on it says
(the lab's and other engines'), beside the lab's own NDV and whether that is accurate now; and a button that
publishes the lab's Puffin file for the current snapshot. It answers "what do Trino and Spark's Iceberg scan
plan with"."""
from __future__ import annotations

import ipywidgets as widgets
import pandas as pd

from ..errors import ColstatsError
from . import format as fmt
from .widgets import View, badge, html_table, publish_from, refusal, register

SHOWN = {"column": "column", "lab_ndv": "lab NDV", "lab_badge": "lab", "puffin_ndv": "Puffin NDV",
         "written_by": "written by", "snapshot": "snapshot"}


def puffin_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """`TableHandle.engines`' frame of an Iceberg table as the view shows it: the current snapshot's blobs first."""
    rows = []
    for _, row in frame.sort_values("current", ascending=False, kind="stable").iterrows():
        rows.append({
            "column": fmt.escape(row["column"]),
            "lab_ndv": "—" if row["lab_ndv"] is None else fmt.count(row["lab_ndv"]),
            "lab_badge": "—" if row["lab_accurate"] is None else badge(row["lab_accurate"], ""),
            "puffin_ndv": "—" if row["puffin_ndv"] is None else fmt.count(row["puffin_ndv"]),
            "written_by": fmt.escape(row["written_by"] or "—"),
            "snapshot": fmt.escape(str(row["snapshot_id"])) + (" (current)" if row["current"] else " (older)"),
        })
    return pd.DataFrame(rows, columns=list(SHOWN)).rename(columns=SHOWN)


@register("puffin")
class PuffinView(View):
    """The Puffin statistics registered on one Iceberg table, with a button that publishes the lab's."""

    def __init__(self, lab, table: str):
        super().__init__()
        self.lab = lab
        self.table = lab.resolve(table)
        self.name = table
        self.button = widgets.Button(description="Publish a Puffin file", icon="upload", button_style="primary",
                                     layout=widgets.Layout(width="auto"))
        self.grid = widgets.HTML()
        self.button.on_click(lambda _: self.publish())
        self.children = [self.header, widgets.HBox([self.button]), self.message, self.grid]
        self.show()

    def show(self) -> None:
        try:
            self.frame = self.lab.tables[self.name].engines()
        except ColstatsError as exc:
            self.children = [self.header, refusal(exc)]
            return
        self.result = self.frame
        current = self.frame[self.frame["current"] == True]  # noqa: E712
        self.header.value = (
            f'<div class="colstats-header"><b>{fmt.escape(self.table.qualified_name)}</b> · '
            f'{fmt.count(len(self.frame))} theta blob(s) registered, {fmt.count(len(current))} for the current '
            'snapshot (what Trino and Spark\'s Iceberg scan read)</div>')
        self.grid.value = html_table(puffin_rows(self.frame), raw_html={SHOWN["lab_badge"]})
        if not len(current):
            self.say("No Puffin statistics describe the current snapshot: readers plan without NDV.")

    def publish(self) -> None:
        """Publishes, then shows what is registered now and what the publish did."""
        publish_from(self, self.button, lambda: self.lab.tables[self.name].publish().message, self.show)
