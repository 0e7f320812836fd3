"""A table's report as one standalone HTML page (`lab.tables[t].report("report.html")`): its size, the
statistics view's table, null fractions and distinct values, which partitions' statistics are fresh,
and the stale ones with their reasons. Plotly's script is inlined, so the page needs no server and
no network."""
from __future__ import annotations

import html

from ..frames import level_frame, report_data, stats_frame
from ..metastore import Metastore, Table
from . import charts
from . import format as fmt
from .stats_view import stats_table_html
from .widgets import html_table

STALE_ROWS = 500  # not-accurate partition rows listed; the JSON report holds all of them


def report_html(metastore: Metastore, table: Table) -> str:
    frame = stats_frame(metastore, table)
    data = report_data(metastore, table, frame)
    level, _ = level_frame(metastore, table, None)
    sections = [f"<h1>{html.escape(table.qualified_name)}</h1>", f'<p class="colstats-header">{_summary(data)}</p>',
                "<h2>Statistics of the whole table</h2>",
                stats_table_html(level, table)]
    figures = []
    analyzed = level[level["nulls"].notna()].assign(ndv=lambda f: [0 if v is None else v for v in f["ndv"]],
                                                     column=lambda f: f["column"].map(table.spelled))
    if len(analyzed):
        figures.append(charts.null_and_ndv_figure(analyzed, f"{table.tableName}: nulls and distinct values"))
    if table.is_partitioned and frame["partition"].notna().any():
        figures.append(charts.freshness_heatmap(frame.assign(column=frame["column"].map(table.spelled)),
                                                f"{table.tableName}: statistics per partition and column"))
    for number, figure in enumerate(figures):
        # the first figure carries plotly's script inline; the others use it
        sections.append(figure.to_html(full_html=False, include_plotlyjs=number == 0))
    stale = frame[frame["partition"].notna() & frame["accurate"].map(lambda a: a is False)]
    if len(stale):
        sections.append(f"<h2>Not accurate: {len(stale):,} partition column(s)</h2>")
        shown = stale[["partition", "column", "reason"]].head(STALE_ROWS)
        sections.append(html_table(shown, wrap={"reason"}))
        if len(stale) > STALE_ROWS:
            sections.append(f'<p class="colstats-muted">the first {STALE_ROWS:,} shown; the JSON report lists all</p>')
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(table.qualified_name)} · colstats_lab</title>"
            "<style>body {font-family: system-ui, sans-serif; margin: 24px;} h1, h2 {font-weight: 600;}</style>"
            f"</head><body>{''.join(sections)}</body></html>\n")


def _summary(data: dict) -> str:
    parts = [data["kind"] + (" transactional" if data["transactional"] else ""),
             f"{fmt.count(data['rows'])} rows", f"{fmt.size(data['bytes'])} in {fmt.count(data['files'])} files"]
    if data["partitions"] is not None:
        parts.append(f"{fmt.count(data['partitions'])} partitions by {', '.join(data['partition_keys'])}")
    if data["skewed_by"]:
        parts.append(f"skewed by {', '.join(data['skewed_by']['columns'])} on "
                     f"{len(data['skewed_by']['values'])} value(s)")
    parts.append(f"generated {data['generated_at']}")
    return " · ".join(html.escape(p) for p in parts)
