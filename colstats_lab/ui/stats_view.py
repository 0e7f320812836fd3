"""The statistics view: one row per column with its statistics, null fraction, NDV, when it was
analyzed and whether the statistics are still accurate (with the reason when not)."""
from __future__ import annotations

import ipywidgets as widgets
import pandas as pd

from ..coltypes import parse_type
from ..metastore import COLUMN_STATS_ACCURATE, Metastore, NoSuchObjectException, Table
from ..metastore.stats_accuracy import ComplianceSummary
from ..metastore.staleness import PARAM as ROWS_CHANGED
from ..metastore.staleness import describe_change, describe_total
from . import charts
from . import format as fmt
from .widgets import LevelPicker, View, badge, fraction_bar, html_table, register

TABLE_LEVEL = "(table)"
FRAME_COLUMNS = ["column", "type", "min", "max", "nulls", "null_fraction", "ndv", "avg_len", "max_len", "trues",
                 "falses", "last_analyzed", "accurate", "reason", "coverage"]


def _values(obj) -> dict:
    data = obj.statsData.value
    out = {"nulls": data.numNulls}
    if hasattr(data, "lowValue"):
        out["min"], out["max"] = data.lowValue, data.highValue
    if hasattr(data, "numDVs"):
        out["ndv"] = data.numDVs
    if hasattr(data, "avgColLen"):
        out["avg_len"], out["max_len"] = data.avgColLen, data.maxColLen
    if hasattr(data, "numTrues"):
        out["trues"], out["falses"] = data.numTrues, data.numFalses
        out["ndv"] = int(data.numTrues > 0) + int(data.numFalses > 0)
    return out


def stats_frame(metastore: Metastore, table: Table, partition: str | None = None) -> tuple[pd.DataFrame, int]:
    """The view's rows for the table level (partition None) or one partition, and the row count they cover."""
    columns = [c for c in table.cols if parse_type(c.type).stats_kind is not None]
    names = [c.name for c in columns]
    one = None if partition in (None, TABLE_LEVEL) else [partition]
    compliance = dict(zip(names, metastore.column_compliance(table.dbName, table.tableName, [[n] for n in names],
                                                             part_names=one)))
    aggr = None
    if partition in (None, TABLE_LEVEL):
        rows = int(table.parameters.get("numRows", 0) or 0)
        accuracy = {name: _table_level(compliance[name], table.is_partitioned) for name in names}
        if table.is_partitioned:
            # the union of the partitions that hold statistics, never an extrapolation, and says how many
            aggr = metastore.get_aggr_stats_for(table.dbName, table.tableName, names,
                                                check_compliance=False)  # judged per column above
        stats = metastore.get_table_statistics(table.dbName, table.tableName, names)
        if aggr is not None and stats is not None:
            stats.statsObj = aggr.exact
    else:
        part = metastore.get_partition(table.dbName, table.tableName, partition)  # names it when unknown
        stats = metastore.get_partitions_statistics(table.dbName, table.tableName, [partition], names).get(partition)
        rows = int(part.parameters.get("numRows", 0) or 0)
        accuracy = {name: (True, "") if compliance[name].accurate else (False, compliance[name].first[1])
                    for name in names}
    by_name = {o.colName: o for o in stats.statsObj} if stats else {}
    records = []
    for column in columns:
        record = dict.fromkeys(FRAME_COLUMNS)
        record.update(column=column.name, type=column.type)
        obj = by_name.get(column.name)
        if obj is None:
            record.update(accurate=None, reason="never analyzed")
        else:
            record.update(_values(obj))
            covered_rows = rows if aggr is None else aggr.covered_rows[column.name]
            record["null_fraction"] = record["nulls"] / covered_rows if covered_rows else 0.0
            record["last_analyzed"] = stats.statsDesc.lastAnalyzed
            record["accurate"], record["reason"] = accuracy[column.name]
            if aggr is not None and aggr.covered[column.name] < aggr.partsRequested:
                record["reason"] = f"{aggr.coverage(column.name)} (figures are theirs alone); {record['reason']}"
        if aggr is not None:
            record["coverage"] = f"{aggr.covered[column.name]} of {aggr.partsRequested}"
        records.append(record)
    return pd.DataFrame(records, columns=FRAME_COLUMNS, dtype=object), rows  # object: None stays None, NaN stays NaN


def _table_level(summary: ComplianceSummary, partitioned: bool) -> tuple[bool, str]:
    """Accurate at the table level when accurate for every partition (or the table itself)."""
    if summary.accurate:
        return True, f"accurate in all {fmt.count(summary.owners)} partitions" if partitioned else ""
    first, why = summary.first
    if not partitioned:
        return False, why
    more = ", ..." if summary.not_accurate > 1 else ""
    return False, (f"not accurate in {fmt.count(summary.not_accurate)} of {fmt.count(summary.owners)} partitions "
                   f"({first}{more}): {why}")


def _display_frame(frame: pd.DataFrame) -> pd.DataFrame:
    shown = pd.DataFrame({
        "column": frame["column"], "type": frame["type"],
        "min": frame["min"].map(fmt.number), "max": frame["max"].map(fmt.number),
        "nulls": frame["nulls"].map(fmt.count), "null fraction": frame["null_fraction"].map(fraction_bar),
        "distinct": frame["ndv"].map(fmt.count),
        "avg len": frame["avg_len"].map(lambda v: "" if v is None or pd.isna(v) else f"{v:.2f}"),
        "max len": frame["max_len"].map(fmt.count),
        "true / false": [f"{fmt.count(t)} / {fmt.count(f)}" if t is not None and not pd.isna(t) else ""
                         for t, f in zip(frame["trues"], frame["falses"])],
        "analyzed (UTC)": frame["last_analyzed"].map(lambda v: fmt.when(None if pd.isna(v) else int(v))),
        "status": [badge(None if pd.isna(a) else bool(a), r or "") for a, r in zip(frame["accurate"], frame["reason"])],
        # the badge's tooltip carries every reason; the column spells out only what needs attention
        "reason": [r if a is not True and r else "" for a, r in zip(frame["accurate"], frame["reason"])],
    })
    if frame["coverage"].notna().any():  # a partitioned table's level: how many partitions the figures cover
        shown.insert(len(shown.columns) - 2, "partitions", frame["coverage"].map(lambda v: v or ""))
    return shown


@register("stats")
class StatsView(View):
    """Statistics of one table, at the table level or per partition (dropdown)."""

    def __init__(self, lab, table: str, partition: str | None = None, chart: bool = True):
        super().__init__()
        self.lab = lab
        db, _, name = table.rpartition(".")
        self.table = lab.metastore.get_table(db or lab.current_db, name)
        if partition is not None:
            if not self.table.is_partitioned:
                raise NoSuchObjectException(f"partition {partition} of {self.table.qualified_name} does not exist")
            lab.metastore.get_partition(self.table.dbName, self.table.tableName, partition)  # names it when unknown
        self.picker = LevelPicker("Level", TABLE_LEVEL, self._find_partitions, partition)
        self.level = self.picker.dropdown
        self.table_html = widgets.HTML()
        self.chart = widgets.Output() if chart else None
        self.level.observe(lambda change: self.refresh(), names="value")
        self.children = [self.header, self.picker.box, self.table_html] + ([self.chart] if chart else [])
        self.refresh()

    def _find_partitions(self, text: str, limit: int) -> tuple[list[str], int]:
        if not self.table.is_partitioned:
            return [], 0
        return self.lab.metastore.find_partition_names(self.table.dbName, self.table.tableName, text, limit)

    def _external_change(self, partition, params: dict) -> str:
        """Another job writes an external table's files, so its rows changed are not counted; one
        directory's files are compared with those last analyzed (a whole partitioned table's would mean
        listing every partition to draw a header)."""
        if partition is None and self.table.is_partitioned:
            return "not counted for an external table; each partition's files are compared with those analyzed"
        if COLUMN_STATS_ACCURATE not in params:
            return "never analyzed"
        owner = None if partition is None else partition.partName
        location = self.table.location if partition is None else partition.location
        moved = self.lab.metastore.external_file_changes(self.table, {owner: location})
        return moved.get(owner, "none: its files are those last analyzed")

    def refresh(self) -> None:
        level = self.level.value
        self.frame, rows = stats_frame(self.lab.metastore, self.table, level)
        db, name = self.table.dbName, self.table.tableName
        partition = self.lab.metastore.get_partition(db, name, level) if level != TABLE_LEVEL else None
        # the level's own size and files, read now: writes since the view opened count
        params = (partition or self.lab.metastore.get_table(db, name)).parameters
        where = "whole table" if level == TABLE_LEVEL else level
        if self.table.tableType == "EXTERNAL_TABLE":
            changed = self._external_change(partition, params)
        elif partition is None and self.table.is_partitioned:
            changed = describe_total(self.lab.metastore.get_partition_params(db, name, ["numRows", ROWS_CHANGED]))
        else:
            changed = describe_change(params)
        self.header.value = (
            f'<div class="colstats-header"><b>{fmt.escape(self.table.qualified_name)}</b> · {fmt.escape(where)} · '
            f'{fmt.count(rows)} rows · {fmt.size(int(params.get("totalSize", 0) or 0))} in '
            f'{fmt.count(int(params.get("numFiles", 0) or 0))} files'
            + (f' · {fmt.count(int(params.get("numPartitions", 0) or 0))} partitions'
               if self.table.is_partitioned and partition is None else "")
            + f' · <span title="rows inserted or removed since every column\'s statistics were last accurate">'
              f'changed since analyze: {fmt.escape(changed)}</span></div>')
        numeric = {"min", "max", "nulls", "distinct", "avg len", "max len", "true / false"}
        self.table_html.value = html_table(_display_frame(self.frame), numeric=numeric,
                                           raw_html={"null fraction", "status"}, wrap={"reason"})
        if self.chart is not None:
            analyzed = self.frame[self.frame["nulls"].notna()].copy()
            analyzed["ndv"] = [0 if v is None else v for v in analyzed["ndv"]]
            self.chart.clear_output()
            self.figure = charts.null_and_ndv_figure(
                analyzed, f"{self.table.tableName} · {where}: nulls and distinct values") if len(analyzed) else None
            if self.figure is not None:
                with self.chart:
                    charts.show(self.figure)
