"""The statistics view: one row per column with its statistics, null fraction, NDV, when it was
analyzed and whether the statistics are still accurate (with the reason when not)."""
from __future__ import annotations

import datetime as dt

import ipywidgets as widgets
import pandas as pd

from ..column_statistics.model import Timestamp
from ..frames import rows_band
from ..metastore import NoSuchObjectException, Table
from ..metastore.repositories.snapshot_files import FORMAT_PARAM
from ..metastore.rows.levels import TABLE_LEVEL
from . import charts
from . import format as fmt
from .widgets import LevelPicker, View, badge, fraction_bar, html_table, partitions_found, register, tier_badge

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


def display_frame(frame: pd.DataFrame, table: Table | None = None, delta_log: pd.DataFrame | None = None
                  ) -> pd.DataFrame:
    """The statistics frame as the view shows it (`column` is HTML); with `table`, columns named as its files
    spell them and struct leaves indented; with `delta_log` (a Delta table's `inspect.delta()`), whether the log
    keeps each column's figures. Made to fit a 1,400 px screen: NULLs, their share and NaN in one
    cell, the lengths in one, a timestamp's date and time on two lines, the reason cut to two lines (whole on
    hover), and a column no row has a figure in left out."""
    counted = [_counted(type_name) for type_name in frame["type"]]
    nans = frame["nans"] if "nans" in frame.columns else pd.Series([None] * len(frame), index=frame.index)
    tiers = frame["tier"] if "tier" in frame.columns else pd.Series([None] * len(frame), index=frame.index)
    bands = [b if isinstance(b, dict) else {} for b in (frame["bands"] if "bands" in frame.columns else [None] * len(frame))]
    shown = pd.DataFrame({
        "column": frame["column"].map(lambda name: column_label(table, name)), "type": frame["type"],
        # an array's or map's figures are its elements' (entries') count
        "min": [banded(_bound(v, unit), b.get("min")) for v, unit, b in zip(frame["min"], counted, bands, strict=True)],
        "max": [banded(_bound(v, unit), b.get("max")) for v, unit, b in zip(frame["max"], counted, bands, strict=True)],
        "nulls": [_nulls(n, f, nan, b) for n, f, nan, b in zip(frame["nulls"], frame["null_fraction"], nans, bands, strict=True)],
        "distinct": [banded(fmt.escape(fmt.count(v)), b.get("ndv")) for v, b in zip(frame["ndv"], bands, strict=True)],
        # a narrow cell that wraps between values, never inside one (a date broke at its hyphens): a timestamp's
        # three side by side pushed the table past a 1,400 px screen, and a row's text stays one line (a <br>
        # in it broke each row read as text in two)
        QUARTILES: frame["quartiles"].map(lambda q: " / ".join(f'<span style="white-space: nowrap">'
                                                               f'{fmt.escape(text)}</span>' for text in _quartile_texts(q))
                                          if isinstance(q, list) else ""),
        LENGTHS: [_lengths(a, m, b) for a, m, b in zip(frame["avg_len"], frame["max_len"], bands, strict=True)],
        "true / false": [f"{banded(fmt.escape(fmt.count(t)), b.get('trues'))} / "
                         f"{banded(fmt.escape(fmt.count(f)), b.get('falses'))}"
                         if (t is not None and not pd.isna(t)) or "trues" in b else ""
                         for t, f, b in zip(frame["trues"], frame["falses"], bands, strict=True)],
        "analyzed (UTC)": frame["last_analyzed"].map(lambda v: _two_lines(fmt.when(None if pd.isna(v) else int(v)))),
        "status": [badge(None if pd.isna(a) else bool(a), r or "") + tier_badge(t)
                   for a, r, t in zip(frame["accurate"], frame["reason"], tiers, strict=True)],
        # the badge's tooltip carries every reason; the column spells out only what needs attention
        "reason": [_clamped(r) if a is not True and r else "" for a, r in zip(frame["accurate"], frame["reason"], strict=True)],
    })
    if delta_log is not None:
        audit = {str(row.column).lower(): row for row in delta_log.itertuples()}
        shown["Delta log"] = [_log_keeps(audit.get(str(name).lower())) for name in frame["column"]]
    coverage = frame["coverage"].dropna()
    if any(_partial(v) for v in coverage):  # a partitioned table's level: when some figures cover fewer partitions
        shown.insert(len(shown.columns) - 2, "partitions", frame["coverage"].map(lambda v: v or ""))
    empty = [c for c in (QUARTILES, LENGTHS, "true / false", "reason") if not any(shown[c])]
    # whether the figures can be trusted is the view's point: beside each name, where no screen width hides it
    return shown[["column", "status", *[c for c in shown.columns if c not in ("column", "status", *empty)]]]


def _log_keeps(audit) -> str:
    """Whether Delta's log keeps a column's minimum, maximum and NULL count (what other engines skip files with),
    why not on hover, and whether it is a clustering column."""
    if audit is None:
        return ""
    clustering = " · clustering" if audit.clustering else ""
    if audit.log_keeps:
        return (f'<span title="Delta\'s log keeps its minimum, maximum and NULL count in all {audit.files:,} '
                f'files: other engines skip files by them">kept{clustering}</span>')
    return (f'<span title="{fmt.escape(audit.why_not or "")}: other engines skip no file by it; the lab\'s '
            f'figures cover it" style="color: #b45309">not kept{clustering}</span>')


LENGTHS = "avg / max len"
NUMERIC = {"min", "max", "nulls", "distinct", LENGTHS, "true / false"}
RAW_HTML = {"column", "min", "max", "nulls", "distinct", "status", QUARTILES, LENGTHS, "true / false",
            "analyzed (UTC)", "reason", "Delta log"}


def banded(cell: str, band: list | None) -> str:
    """A figure's cell (HTML): as it is where exact; an estimate marked ≈ with its band on hover; an unknown one
    said so, never shown as 0 or left blank as if it had no such figure."""
    if band is None:
        return cell
    low, high, method = band
    if not cell:
        return (f'<span class="colstats-unknown" title="{fmt.escape(method)}" style="color: #999; '
                f'font-style: italic">unknown</span>')
    said = f"between {_band_side(low, 'unbounded')} and {_band_side(high, 'unbounded')}: {method}"
    return f'<span class="colstats-estimate" title="{fmt.escape(said)}">≈&#8239;{cell}</span>'


def _band_side(value, none: str) -> str:
    return none if value is None else fmt.number(value)


def _lengths(avg, longest, band: dict) -> str:
    if (avg is None or pd.isna(avg)) and "avg_len" not in band:
        return ""
    average = "" if avg is None or pd.isna(avg) else f"{avg:.2f}"
    most = "" if longest is None or pd.isna(longest) else fmt.escape(fmt.count(longest))
    return f"{banded(average, band.get('avg_len'))} / {banded(most, band.get('max_len'))}"


def stats_table_html(frame: pd.DataFrame, table: Table | None = None, delta_log: pd.DataFrame | None = None) -> str:
    """The statistics view's table (display_frame) as HTML: the view's and the HTML report's."""
    return html_table(display_frame(frame, table, delta_log), numeric=NUMERIC, raw_html=RAW_HTML, narrow={QUARTILES},
                      fit=True)


def _partial(coverage: str) -> bool:
    """Whether a coverage (`9 of 10`) leaves partitions out."""
    covered, _, of = str(coverage).partition(" of ")
    return covered != of


def _bound(value, unit: str) -> str:
    """A min or max: a timestamp's date and time on two lines, an array's sizes with their unit."""
    if value is None or (not isinstance(value, (list, str, float)) and pd.isna(value)):
        return ""  # a float's NaN is a figure (Spark's max of a column holding one), shown as NaN
    text = fmt.number(value) + unit
    return _two_lines(text) if isinstance(value, (Timestamp, dt.datetime)) else fmt.escape(text)


def _two_lines(text: str) -> str:
    """`2026-01-01 00:00:14` with its date and time each unbroken, the line free to break between them."""
    return " ".join(f'<span style="white-space: nowrap">{fmt.escape(part)}</span>' for part in text.split(" ", 1))


def _nulls(nulls, fraction, nans, band: dict | None = None) -> str:
    """The NULLs, their share as a bar, and a double's NaN values (counted apart) where it has any, or where
    their count is unknown (no value read) or an estimate."""
    band = band or {}
    if (nulls is None or pd.isna(nulls)) and "nulls" not in band:
        return ""
    count = "" if nulls is None or pd.isna(nulls) else fmt.escape(fmt.count(nulls))
    why = ("NaN values, counted apart from the NULLs (a max of NaN is Spark's order: NaN above every number)")
    nan = ""
    if "nans" in band:
        counted = "" if nans is None or pd.isna(nans) else fmt.count(nans)
        nan = f' · <span title="{fmt.escape(why)}">{banded(counted, band["nans"])} NaN</span>'
    elif nans is not None and not pd.isna(nans) and nans:
        nan = f' · <span title="{fmt.escape(why)}">{fmt.count(nans)} NaN</span>'
    bar = fraction_bar(fraction) if count else ""
    return f'<span style="white-space: nowrap">{banded(count, band.get("nulls"))} {bar}{nan}</span>'


def _clamped(reason: str) -> str:
    """A reason in at most two lines of a narrow cell, whole on hover."""
    return (f'<div title="{fmt.escape(reason)}" style="white-space: normal; width: 180px; font-size: 12px; '
            f'color: #555; display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical; '
            f'overflow: hidden">{fmt.escape(reason)}</div>')


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
            self.handle.partition_record(partition)  # names it when unknown
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
        return partitions_found(self.handle.inspect.partitions)(text, limit)

    def refresh(self) -> None:
        shown = self.handle.stats_level(self.level.value)
        self.frame, params = shown.frame, shown.parameters
        where = "whole table" if shown.partition is None else self.table.spelled_partition(shown.partition.partName)
        self.header.value = (
            f'<div class="colstats-header"><b>{fmt.escape(self.table.qualified_name)}</b> · {fmt.escape(where)} · '
            f'{banded(fmt.count(shown.rows), rows_band(self.frame))} rows · '
            f'{fmt.size(int(params.get("totalSize", 0) or 0))} in '
            f'{fmt.count(int(params.get("numFiles", 0) or 0))} files'
            + (f' · {fmt.count(int(params.get("numPartitions", 0) or 0))} partitions'
               if self.table.is_partitioned and shown.partition is None else "")
            + f' · <span title="rows inserted or removed since every column\'s statistics were last accurate">'
              f'changed since analyze: {fmt.escape(shown.changed)}</span></div>')
        delta_log = self.handle.inspect.delta() if self.table.parameters.get(FORMAT_PARAM) == "delta" else None
        self.table_html.value = stats_table_html(self.frame, self.table, delta_log)
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
            sketched = [c for c, q in zip(self.frame["column"], self.frame["quartiles"], strict=True) if isinstance(q, list)]
            # first a column that is not a unique key: an id's distribution is flat
            keys = {c for c, n, nulls in zip(self.frame["column"], self.frame["ndv"], self.frame["nulls"], strict=True)
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
        sketch = self.handle.distribution(column, level)
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
