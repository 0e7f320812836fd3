"""The dashboard: every table at a glance (the stalest first), then one table's page: statistics, profile,
freshness, skew, pruning, the runs kept of its queries, Drill metadata and transactions in tabs. Nothing starts Spark until an
ANALYZE or a skew is asked for."""
from __future__ import annotations

import json

import ipywidgets as widgets
import pandas as pd

from ..coltypes import parse_type
from ..errors import ColstatsError
from ..lab import Lab
from ..tables.kinds import kind_of
from ..ui import format as fmt
from ..ui.autoanalyze_view import autoanalyze_html
from ..ui.drift_view import DriftView
from ..ui.engines_view import EnginesView
from ..ui.freshness_view import FreshnessView
from ..ui.metadata_view import MetadataView
from ..ui.profile_view import ProfileView
from ..ui.progress import SparkProgress
from ..ui.pruning_view import PruningPanel
from ..ui.puffin_view import PuffinView
from ..ui.runs_view import RunsView
from ..ui.skew_view import SkewView
from ..ui.stats_view import StatsView, banded
from ..ui.transactions_view import TransactionsView
from ..ui.widgets import html_table, refusal

_SKEWABLE = ("tinyint", "smallint", "int", "bigint", "string", "varchar", "char", "date", "boolean")
NO_COLUMN = "(pick a column: runs one Spark aggregation)"


def _minute(when) -> str:
    return "" if when is None or pd.isna(when) else when.strftime("%Y-%m-%d %H:%M")


def landing_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The landing table as shown: sizes in words, freshness as a badge with the reason on hover."""
    def freshness(row) -> str:
        if row.columns == 0:
            return '<span class="colstats-badge colstats-none">no columns with statistics</span>'
        if row.stale_partitions:
            what = "the table" if pd.isna(row.partitions) else f"{row.stale_partitions:,} partition(s)"
            return (f'<span class="colstats-badge colstats-stale" title="{fmt.escape(row.stale_reason or "")}">'
                    f'not accurate in {what}</span>')
        if row.last_analyzed is None or pd.isna(row.last_analyzed):
            return (f'<span class="colstats-badge colstats-none" title="{fmt.escape(row.stale_reason or "")}">'
                    'never analyzed</span>')
        if row.accurate_columns < row.columns:
            return f'<span class="colstats-badge colstats-none">{row.columns - row.accurate_columns} never analyzed</span>'
        return '<span class="colstats-badge colstats-ok">accurate</span>'

    return pd.DataFrame({
        "table": frame["database"] + "." + frame["table"], "kind": frame["kind"],
        "partitions": frame["partitions"].map(lambda v: "" if pd.isna(v) else fmt.count(int(v))),
        "files": frame["files"].map(fmt.count),
        # raw HTML (an estimate's ≈ with its band on hover): a count, or the band's escaped text
        "rows": [("not counted" if v is None or pd.isna(v) else banded(fmt.count(int(v)), band))
                 for v, band in zip(frame["rows"], frame["rows_band"], strict=True)],
        "size": frame["bytes"].map(fmt.size),
        "accurate columns": [f"{a} of {c}" for a, c in zip(frame["accurate_columns"], frame["columns"], strict=True)],
        "statistics": [freshness(row) for row in frame.itertuples()],
        "last analyzed (UTC)": frame["last_analyzed"].map(_minute),
        "last write (UTC)": frame["last_write"].map(_minute),
        "metadata": frame["metadata_level"].fillna(""),
    })


TABS = ("Statistics", "Profile", "Freshness", "Skew", "Pruning", "Runs", "Drift", "Metadata", "Transactions",
        "Engines")


class TablePage(widgets.Tab):
    """One table's tabs, each built the first time it is opened: statistics, freshness (with the analyze
    button), skew (Spark only once a column is chosen), pruning (a WHERE box), Drill metadata and the
    transactions that wrote it. Only the analyze button and the skew start Spark."""

    def __init__(self, lab, table: str, on_change=None):
        self.lab, self.table = lab, table
        self.on_change = on_change  # told when a tab changed the table's statistics (the landing redraws)
        super().__init__(children=[widgets.VBox() for _ in TABS], titles=TABS)
        self.observe(lambda change: self.open_tab(change["new"]), names="selected_index")
        self.selected_index = 0
        self.open_tab(0)

    def open_tab(self, index: int | None) -> None:
        if index is None or self.children[index].children:
            return
        builders = (self._statistics, self._profile, self._freshness, self._skew, self._pruning, self._runs,
                    self._drift, self._metadata, self._transactions, self._engines)
        try:
            content = builders[index]()
        except ColstatsError as exc:
            content = refusal(exc)
        self.children[index].children = [content]

    def _statistics(self):
        self.stats = StatsView(self.lab, self.table)
        return self.stats

    def _profile(self):
        self.profile = ProfileView(self.lab, self.table)
        return self.profile

    def _freshness(self):
        return FreshnessView(self.lab, self.table, on_analyzed=self._analyzed)

    def _analyzed(self) -> None:
        """After the Freshness tab's ANALYZE: the statistics tab, if built, and the landing show it too."""
        for built in (getattr(self, "stats", None), getattr(self, "profile", None)):
            if built is not None:
                built.refresh()
        if self.on_change is not None:
            self.on_change()

    def _pruning(self):
        return PruningPanel(self.lab, self.table)

    def _runs(self):
        return RunsView(self.lab, self.table)

    def _metadata(self):
        return MetadataView(self.lab, self.table)

    def _drift(self):
        return DriftView(self.lab, self.table)

    def _transactions(self):
        return TransactionsView(self.lab, self.table)

    def _engines(self):
        """An attached HMS's table: what each engine reads of it. The lab's own tables have no other reader."""
        meta = self.lab.resolve(self.table)
        kind = kind_of(meta).name
        if kind == "iceberg":
            return PuffinView(self.lab, self.table)
        if kind == "delta":
            handle = self.lab.tables[self.table]
            return widgets.HTML(delta_log_statistics(handle.inspect.delta(), handle.inspect.deletion_vectors()))
        if "colstats.catalog" not in meta.parameters:
            return widgets.HTML('<div class="colstats-header">Only the lab reads this table\'s statistics. Tables of '
                                'a Hive Metastore attached with <code>lab.attach("hms", "thrift://host:9083")</code> show '
                                'here what Hive, Trino, Impala and Spark read of them, and publish the lab\'s.</div>')
        return EnginesView(self.lab, self.table)

    def _skew(self):
        meta = self.lab.resolve(self.table)
        candidates = [c.name for c in meta.cols if parse_type(c.type).base in _SKEWABLE]
        likely = self._likely_skewed(meta, candidates)
        # the likely skewed column first; choosing one runs Spark, so none is chosen for the viewer
        listed = ([likely] if likely else []) + [c for c in candidates if c != likely]
        self.column = widgets.Dropdown(options=[(NO_COLUMN, NO_COLUMN)] + [(meta.spelled(c), c) for c in listed],
                                       value=NO_COLUMN, description="Skew of", layout=widgets.Layout(width="420px"))
        self.skew_area = widgets.VBox()
        self.column.observe(lambda change: self.show_skew(change["new"]), names="value")
        return widgets.VBox([self.column, self.skew_area])

    def _likely_skewed(self, meta, candidates: list[str]) -> str | None:
        """The column whose most frequent value holds the largest share, as the kept statistics tell it without
        a scan: the frequent-items sketch's top value where one is kept, else the least that share can be (one
        over the NDV). Columns of one or two values are no list bucketing's case. Without statistics, the first."""
        handle = self.lab.tables[meta.qualified_name]
        frame = handle.stats_level().frame
        ndv = dict(zip(frame["column"], frame["ndv"], strict=True))
        scored = []
        for column in candidates:
            distinct = ndv.get(column)
            if distinct is None or pd.isna(distinct) or distinct <= 2:
                continue
            top = handle.inspect.frequent_values(column)
            scored.append((float(top["share"].iloc[0]) if len(top) else 1 / float(distinct), column))
        return max(scored)[1] if scored else (candidates[0] if candidates else None)

    def show_skew(self, column: str | None) -> None:
        if not column or column == NO_COLUMN:
            self.skew_area.children = []
            return
        try:
            with SparkProgress(self.lab.spark, "Skew", container=self.skew_area):
                view = SkewView(self.lab, self.table, column)
        except ColstatsError as exc:
            view = refusal(exc)
        self.skew_area.children = [view]


def _picker_names(tables: pd.DataFrame) -> list[str]:
    """The picker's tables in name order: the landing's order (stale first) changes with every ANALYZE, and
    a picker whose options moved under the page shown opened another table's page (ci9, 1 run in 7 here)."""
    return sorted(tables["database"] + "." + tables["table"])


def _opens(table: str) -> str:
    """A landing row's attributes: a click picks its table in the picker below, as choosing it there does
    (the widget sees the select's change event; an HTML widget has no click events of its own)."""
    script = ("var s=this.closest('.colstats-dashboard').querySelector('.colstats-picker select');"
              f"for(var o of s.options){{if(o.textContent==={json.dumps(table)}){{s.selectedIndex=o.index;}}}}"
              "s.dispatchEvent(new Event('change', {bubbles: true}));")
    return f'class="colstats-opens" title="open {fmt.escape(table)}" onclick="{fmt.escape(script)}"'


class Dashboard(widgets.VBox):
    """The landing table with a search box, a table picker, and the picked table's page below it."""

    def __init__(self, lab):
        self.lab = lab
        self.tables = lab.tables.overview()
        names = _picker_names(self.tables)
        self.title = widgets.HTML('<h2 style="font-family: system-ui, sans-serif; margin-bottom: 0">colstats_lab</h2>'
                                  f'<div class="colstats-muted">metastore {fmt.escape(lab.metastore.path)}</div>')
        self.search = widgets.Text(placeholder="part of a table name", description="Find",
                                   continuous_update=True, layout=widgets.Layout(width="420px"))
        self.landing = widgets.HTML()
        self.reload = widgets.Button(description="Refresh", icon="refresh", tooltip="read the metastore again",
                                     layout=widgets.Layout(width="auto"))
        self.reload.on_click(lambda _: self.refresh_landing())
        self.workers = widgets.HTML(autoanalyze_html(lab.autoanalyze.rounds(5), lab.autoanalyze.queue()))
        self.picker = widgets.Dropdown(options=names, value=None, description="Table",
                                       layout=widgets.Layout(width="420px"))
        self.picker.add_class("colstats-picker")
        self.page_area = widgets.VBox()
        self.status = widgets.HTML("" if names else (
            "No tables in this metastore yet. Register files with <code>lab.register_external(\"t\", \"/data/t\")</code>, "
            "<code>CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '/data/t'</code> or <code>colstats-lab register t "
            "/data/t</code>, or serve the demo with <code>colstats-lab dashboard --demo</code>."))
        self.search.observe(lambda change: self.show_landing(change["new"]), names="value")
        self.picker.observe(lambda change: self.show_table(change["new"]), names="value")
        self.show_landing("")
        super().__init__([self.title, widgets.HBox([self.search, self.reload]), self.landing, self.workers,
                          self.picker, self.status, self.page_area])
        self.add_class("colstats-dashboard")

    def refresh_landing(self) -> None:
        """The landing read again: what this page (or another job) changed since it was drawn."""
        self.tables = self.lab.tables.overview()
        names = _picker_names(self.tables)
        if list(self.picker.options) != names:  # tables added or dropped meanwhile; the page shown stays
            current = self.picker.value
            # one message to the browser: options and choice sent apart, the browser could select the first
            # option in between and send that choice back, which opened another table's page
            with self.picker.hold_sync(), self.picker.hold_trait_notifications():
                self.picker.unobserve_all("value")
                self.picker.options = names
                self.picker.value = current if current in names else None
                self.picker.observe(lambda change: self.show_table(change["new"]), names="value")
        self.workers.value = autoanalyze_html(self.lab.autoanalyze.rounds(5), self.lab.autoanalyze.queue())
        self.show_landing(self.search.value)

    def show_landing(self, text: str) -> None:
        shown = landing_rows(self.tables)
        if text.strip():
            shown = shown[shown["table"].str.contains(text.strip(), case=False, regex=False)]
        self.landing.value = html_table(shown, numeric={"partitions", "files", "rows", "size"},
                                        raw_html={"statistics", "rows"}, row_attributes=[_opens(t) for t in shown["table"]])

    def show_table(self, table: str | None) -> None:
        if not table:
            return
        try:
            self.page = TablePage(self.lab, table, on_change=self.refresh_landing)
        except ColstatsError as exc:  # e.g. dropped by another process since the landing table was read
            self.page_area.children = [refusal(exc)]
            return
        self.page_area.children = [self.page]


def delta_log_statistics(audit: pd.DataFrame, vectors: pd.DataFrame) -> str:
    """What other engines read of a Delta table (`Inspect.delta`'s frame): the minimums, maximums and NULL counts its
    log keeps per file, for which columns, in how many files and why not; liquid clustering's columns; no distinct
    counts; and the rows its deletion vectors delete (`Inspect.deletion_vectors`)."""
    lines = "".join(
        f"<li><code>{fmt.escape(row.column)}</code>: {fmt.count(row.files_with_figures)} of {fmt.count(row.files)} "
        f"file(s){' (a clustering column)' if row.clustering else ''}"
        f"{'; ' + fmt.escape(row.why_not) if row.why_not else ''}</li>" for row in audit.itertuples())
    with_vectors = int(vectors.files_with_vectors.sum()) if len(vectors) else 0
    deleted = (f" Deletion vectors on {fmt.count(with_vectors)} of {fmt.count(int(vectors.files.sum()))} file(s) "
               f"delete {fmt.count(int(vectors.rows_deleted.sum()))} of their {fmt.count(int(vectors.rows_in_files.sum()))}"
               " rows; every figure of the lab's counts live rows only." if with_vectors else "")
    return ('<div class="colstats-header">The Delta log keeps each file\'s minimums, maximums and NULL counts, '
            'which engines prune files with, and no distinct counts: there is no NDV of the lab\'s to publish '
            f'there.{deleted} Columns with figures in the log:<ul>{lines or "<li>none</li>"}</ul></div>')


def open_dashboard(home: str | None = None):
    """The dashboard on the lab at `home` ($COLSTATS_HOME or ./.colstats), or one line saying why not. Its
    ANALYZEs gather KLL sketches (hive.stats.kll.enable), for the distributions it draws."""
    try:
        lab = Lab.current(home)
        lab.set("hive.stats.kll.enable", True)
        return Dashboard(lab)
    except ColstatsError as exc:
        return refusal(exc)
