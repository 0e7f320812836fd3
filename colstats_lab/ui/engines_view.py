"""The engines view: for a table of an attached Hive Metastore, the lab's figures beside what the HMS holds
(whoever wrote them) and what Spark's parameters hold, where they disagree and which the lab's evidence
shows stale; and a button that publishes the lab's accurate figures (withdrawing its stale ones). It
answers "I ran ANALYZE, why is the plan still bad"."""
from __future__ import annotations

import ipywidgets as widgets
import pandas as pd

from ..errors import ColstatsError
from . import format as fmt
from .widgets import View, badge, html_table, publish_from, refusal, register

TABLE_LEVEL = "(table)"
SHOWN = {"column": "column", "lab": "lab: nulls · NDV · min · max", "lab_badge": "lab", "hms": "HMS: nulls · NDV · min · max",
         "hms_writer": "HMS written by", "spark": "Spark: rows · NDV · min · max", "verdict": "agrees"}


def _figures(row, prefix: str) -> str:
    values = [row[f"{prefix}_{k}"] for k in ("nulls", "ndv", "min", "max")]
    if all(v is None or (isinstance(v, float) and pd.isna(v)) for v in values):
        return "—"
    return " · ".join("–" if v is None or (isinstance(v, float) and pd.isna(v)) else fmt.escape(v) for v in values)


def _spark(row) -> str:
    values = [row["spark_rows"], row["spark_ndv"], row["spark_min"], row["spark_max"]]
    if all(v is None for v in values):
        return "—"
    return " · ".join("–" if v is None else fmt.escape(v) for v in values)


def engines_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """`TableHandle.engines`' frame as the view shows it: one line a column, badges for accuracy and staleness."""
    rows = []
    for _, row in frame.iterrows():
        stale = row["stale"] is True
        rows.append({
            "column": fmt.escape(row["column"]), "lab": _figures(row, "lab"),
            "lab_badge": badge(row["lab_accurate"], row["lab_reason"] or ""),
            "hms": _figures(row, "hms"), "hms_writer": fmt.escape(row["hms_writer"] or "—"), "spark": _spark(row),
            "verdict": ("—" if row["agrees"] is None else "yes" if row["agrees"] else
                        f'<span title="{fmt.escape(row["reason"] or "")}">no</span>')
            + (f' <span class="colstats-badge colstats-stale" title="{fmt.escape(row["reason"] or "")}">stale</span>'
               if stale else ""),
        })
    return pd.DataFrame(rows, columns=list(SHOWN)).rename(columns=SHOWN)


@register("engines")
class EnginesView(View):
    """What Hive, Trino, Impala and Spark read for one table of an attached HMS, at the table level or one
    partition, with a button that publishes the lab's accurate figures there."""

    def __init__(self, lab, table: str, partition: str | None = None):
        super().__init__()
        self.lab = lab
        self.table = lab.resolve(table)
        self.handle = lab.tables[self.table.qualified_name]
        self.name = table
        self.where: str | None = None
        self.partition = widgets.Combobox(placeholder=TABLE_LEVEL, description="Partition",
                                          options=[TABLE_LEVEL] + list(self.handle.inspect.partitions(limit=50)["partition"])
                                          if self.table.is_partitioned else [TABLE_LEVEL],
                                          ensure_option=True, layout=widgets.Layout(width="420px"))
        self.button = widgets.Button(description="Publish to the HMS", icon="upload", button_style="primary",
                                     layout=widgets.Layout(width="auto"))
        self.grid = widgets.HTML()
        self.partition.observe(lambda change: self.show(change["new"] or None), names="value")
        self.button.on_click(lambda _: self.publish())
        self.children = [self.header, widgets.HBox([self.partition, self.button]), self.message, self.grid]
        self.show(partition)

    def show(self, partition: str | None) -> None:
        where = None if partition in (None, TABLE_LEVEL) else partition
        if where is not None and where not in self.partition.options:
            # a page sends what it likes: only a partition the metastore listed is looked up
            self.say(f"{where!r} is not a partition of {self.table.qualified_name}: pick one from the list")
            return
        self.where = where
        try:
            self.frame = self.lab.tables[self.name].engines(where)
        except ColstatsError as exc:
            self.children = [self.header, refusal(exc)]
            return
        self.result = self.frame
        disagree = int((self.frame["agrees"] == False).sum())  # noqa: E712 - None (nothing to compare) is neither
        stale = int((self.frame["stale"] == True).sum())  # noqa: E712
        source = self.table.parameters.get("colstats.catalog.table", self.table.qualified_name)
        self.header.value = (
            f'<div class="colstats-header"><b>{fmt.escape(self.table.parameters.get("colstats.catalog", ""))}.'
            f'{fmt.escape(source)}</b> at {fmt.escape(self.table.parameters.get("colstats.catalog.uri", ""))} · '
            f'{where or "table level"} · {fmt.count(len(self.frame))} column(s), {fmt.count(disagree)} where the HMS '
            f'disagrees with the lab, {fmt.count(stale)} stale by the lab\'s evidence</div>')
        self.grid.value = html_table(engines_rows(self.frame), raw_html=set(SHOWN.values()) - {"column"},
                                     wrap={SHOWN["lab"], SHOWN["hms"], SHOWN["spark"]})
        reasons = self.frame.loc[self.frame["stale"] == True, "reason"].dropna().unique()  # noqa: E712
        self.say(f"Stale: {reasons[0]}" + (f" (and {len(reasons) - 1} other reason(s): hover a badge)"
                                           if len(reasons) > 1 else "") if len(reasons) else "")

    def publish(self) -> None:
        """Publishes, then shows what the engines read now and what the publish did."""
        publish_from(self, self.button, lambda: self.lab.tables[self.name].publish().message, lambda: self.show(self.where))
