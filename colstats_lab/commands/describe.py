"""DESCRIBE [FORMATTED] t [PARTITION (..)] [col]: Hive's rows, from the metastore alone."""
from __future__ import annotations

import datetime as dt
import json

import pandas as pd

from ..coltypes import StatsKind, parse_type
from ..column_statistics.estimators import Band, tiered_columns
from ..column_statistics.model import ColumnStatisticsObj, Partition
from ..column_statistics.quantiles import Distribution, value_text
from ..errors import InvalidArgument
from ..frames import figure_value, table_bands
from ..metastore import COLUMN_STATS_ACCURATE, Metastore, StatsAccuracy, Table
from ..metastore.repositories.history import state_picker
from ..metastore.rows.staleness import PARAM as ROWS_CHANGED
from ..metastore.rows.staleness import describe_change, describe_summed
from ..sql.partition_spec import exact_partition
from ..sql.statements import Describe

COLUMN_ROWS = ("col_name", "data_type", "min", "max", "num_nulls", "distinct_count", "avg_col_len",
               "max_col_len", "num_trues", "num_falses", "bit_vector", "histogram", "comment", COLUMN_STATS_ACCURATE)
COVERAGE_ROW = "coverage"  # ours: a partitioned table's figures come from how many of its partitions
NANS_ROW = "num_nans"  # ours: a double's NaN values, apart from its NULLs (its max is NaN when there is one, as Spark's)
COUNTED_ROW = "counted"  # ours: what an array's, a map's or their values' figures count
AS_OF_ROW = "as_of"  # ours: which kept state a DESCRIBE as of a write or a time shows


def describe(metastore: Metastore, stmt: Describe, current_db: str) -> pd.DataFrame:
    table = metastore.catalog.get_table(stmt.table.db or current_db, stmt.table.name)
    partition = exact_partition(metastore, table, stmt.partition) if stmt.partition else None
    if stmt.column:
        return _describe_column(metastore, table, partition, stmt.column[0])
    rows = [(table.spelled(c.name), c.type, c.comment or "") for c in table.cols]
    if table.partitionKeys:
        rows += [("", "", ""), ("# Partition Information", "", ""), ("# col_name", "data_type", "comment")]
        rows += [(table.spelled(k.name), k.type, k.comment or "") for k in table.partitionKeys]
    if stmt.formatted:
        rows += [("", "", "")]
        changed = _not_accurate(metastore, table, partition)
        if partition is not None:
            rows += [("# Detailed Partition Information", "", ""), ("Partition Value:", str(partition.values), ""),
                     ("Database:", table.dbName, ""), ("Table:", table.tableName, ""),
                     ("Location:", partition.location, ""), ("Write Id:", str(partition.writeId), ""),
                     ("Partition Parameters:", "", "")]
            rows += _parameters(partition.parameters, changed)
            rows += [("Rows changed since analyze:", describe_change(partition.parameters), "")]
        else:
            rows += [("# Detailed Table Information", "", ""), ("Database:", table.dbName, ""),
                     ("Table Type:", table.tableType, ""), ("Location:", table.location, ""),
                     ("CreateTime:", _time(table.createTime), ""), ("Write Id:", str(table.writeId), ""),
                     ("Table Parameters:", "", "")]
            rows += _parameters(table.parameters, changed)
            rows += [("Rows changed since analyze:", describe_summed(
                *metastore.catalog.changed_rows_summed(table.dbName, table.tableName, ROWS_CHANGED))
                if table.is_partitioned else describe_change(table.parameters), "")]
    return pd.DataFrame(rows, columns=["col_name", "data_type", "comment"])


def _not_accurate(metastore: Metastore, table: Table, partition: Partition | None) -> str | None:
    """Why the basic statistics of what is described do not hold for the reader (the current snapshot):
    transactional statistics turned off, a writer the reader cannot see, an external table's files
    changed since its ANALYZE; None when they hold. A partitioned table's own figures are sums of its
    partitions': they hold when every partition's do."""
    if partition is None and table.is_partitioned:
        summary = metastore.accuracy.stats_compliance_summary(table.dbName, table.tableName, [])
        if summary.accurate or summary.first is None:
            return None
        first, why = summary.first
        return (f"in {summary.not_accurate:,} of {summary.owners:,} partitions (partition "
                f"{table.spelled_partition(first)}: {why})")
    owner = partition.partName if partition is not None else None
    ok, why = metastore.accuracy.stats_compliance(table.dbName, table.tableName, [],
                                         part_names=None if owner is None else [owner]).get(owner, (True, ""))
    return None if ok else why


def _parameters(params: dict[str, str], not_accurate: str | None) -> list[tuple[str, str, str]]:
    """The parameters as stored, except that statistics not accurate for the reader are shown as Hive's
    reader rule shows them: without COLUMN_STATS_ACCURATE, and with the reason."""
    flagged = params.get(COLUMN_STATS_ACCURATE)
    rows = [("", k, v) for k, v in sorted(params.items()) if not (not_accurate and k == COLUMN_STATS_ACCURATE)]
    if not_accurate and flagged:
        rows.append(("Statistics:", f"not accurate: {not_accurate}", ""))
    return rows


def _time(seconds: int) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _describe_column(metastore: Metastore, table: Table, partition: Partition | None, name: str) -> pd.DataFrame:
    column = table.column(name) or table.stats_column(name)  # a struct's leaf by its path too
    if column is None:
        raise table.no_such_column(name)
    values = dict.fromkeys(COLUMN_ROWS, "")
    values.update(col_name=table.spelled(column.name), data_type=column.type,
                  comment=getattr(column, "comment", None) or "")
    is_key = column.name in table.partition_key_names
    has_stats = not is_key and parse_type(column.type).kept_stats_kind is not None
    obj = None
    if has_stats and partition is None and table.is_partitioned:
        # as Hive's DESCRIBE: the aggregate over every partition, extrapolated where some lack statistics
        aggr = metastore.column_stats.get_aggr_stats_for(table.dbName, table.tableName, [column.name],
                                            check_compliance=False)  # the flag row below says it
        obj = aggr.obj(column.name)
        values[COVERAGE_ROW] = _coverage_text(aggr, column.name)
        stored = None if obj is not None else metastore.column_stats.get_table_statistics(table.dbName, table.tableName,
                                                                            [column.name])
        if stored is not None:  # kept for the whole table only, as an import of Spark's statistics leaves them
            obj = stored.obj(column.name)
            values[COVERAGE_ROW] += ": the figures are the table-level statistics stored for the whole table"
    elif has_stats:
        if partition is None:
            stats = metastore.column_stats.get_table_statistics(table.dbName, table.tableName, [column.name])
        else:
            stats = metastore.column_stats.get_partitions_statistics(table.dbName, table.tableName, [partition.partName],
                                                        [column.name]).get(partition.partName)
        obj = stats.obj(column.name) if stats is not None else None
    if obj is not None:
        values.update(_stats_rows(obj))
        bands = figure_bands(metastore, table, partition, column.name)
        if bands:
            values.update(_banded_rows(bands, column.type))
    values[COLUMN_STATS_ACCURATE] = _accuracy_text(_accuracy(metastore, table, partition), column.name)
    return pd.DataFrame(list(values.items()), columns=["info_name", "info_value"])


def describe_as_of(metastore: Metastore, stmt: Describe, current_db: str, as_of) -> pd.DataFrame:
    """DESCRIBE [FORMATTED] t [PARTITION (..)] col as the statistics stood at `as_of` (a write ID, or a
    time: see metastore.history.state_picker), from the kept states; an `as_of` row says which state it
    is. The accuracy row is empty: it speaks of a reader now, not then."""
    table = metastore.catalog.get_table(stmt.table.db or current_db, stmt.table.name)
    if not stmt.column:
        raise InvalidArgument("as_of describes one column: DESCRIBE FORMATTED t [PARTITION (...)] col")
    partition = exact_partition(metastore, table, stmt.partition) if stmt.partition else None
    column = table.column(stmt.column[0])
    if column is None:
        raise table.no_such_column(stmt.column[0])
    owner = partition.partName if partition is not None else None
    states = [s for _, s in metastore.stats_history.get_stats_history(table.dbName, table.tableName, column.name, owner)]
    state = state_picker(as_of)(states)
    values = dict.fromkeys(COLUMN_ROWS, "")
    values.update(col_name=table.spelled(column.name), data_type=column.type, comment=column.comment or "")
    if state is None:
        values[AS_OF_ROW] = f"no statistics of {column.name} kept as of {as_of!r}"
    else:
        values.update(_stats_rows(state.stats))
        stored = dt.datetime.fromtimestamp(state.recorded_at, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        writer = f"write ID {state.write_id}" if state.write_id is not None else "a direct metastore call"
        values[AS_OF_ROW] = f"the state stored {stored} by {writer}: {state.cause or 'no commit'}"
    return pd.DataFrame(list(values.items()), columns=["info_name", "info_value"])


# DESCRIBE's row of each figure a band is kept for
_FIGURE_ROWS = {"min": "min", "max": "max", "nulls": "num_nulls", "nans": NANS_ROW, "ndv": "distinct_count",
                "avg_len": "avg_col_len", "max_len": "max_col_len", "trues": "num_trues", "falses": "num_falses"}
ESTIMATED_ROW = "estimated"  # ours: the figures a tiered ANALYZE estimated or could not read, each with its band


def figure_bands(metastore: Metastore, table: Table, partition: Partition | None, column: str) -> dict[str, Band]:
    """The bands of the figures of `column` that are not exact at the level described: a partition's from its
    tiered ANALYZE, a partitioned table's merged from its partitions' ({}: every figure exact)."""
    if partition is None and table.is_partitioned:
        bands = table_bands(metastore, table, [column]).get(column, {})
    else:
        entry = tiered_columns((partition or table).parameters).get(column)
        bands = {figure: Band.of(stored) for figure, stored in entry["figures"].items()} if entry else {}
    return {figure: band for figure, band in bands.items() if not band.exact and figure in _FIGURE_ROWS}


def _banded_rows(bands: dict[str, Band], type_name: str) -> dict[str, str]:
    """An unknown figure's row left empty (never the 0 Hive's struct holds for it), and the `estimated` row
    naming each figure that is not exact with its band."""
    out = {_FIGURE_ROWS[figure]: "" for figure, band in bands.items() if band.value is None}
    said = []
    for figure, band in sorted(bands.items()):
        def side(value, figure=figure) -> str:
            return "unbounded" if value is None else _bound_text(figure_value(value, figure, type_name))
        what = "unknown" if band.value is None else f"≈ {side(band.value)}"
        said.append(f"{_FIGURE_ROWS[figure]} {what} (between {side(band.low)} and {side(band.high)}: {band.method})")
    out[ESTIMATED_ROW] = "; ".join(said)
    return out


def _coverage_text(aggr, name: str) -> str:
    """How many partitions the figures come from; when not all, how they were made and what the analyzed
    partitions alone hold."""
    found = aggr.covered.get(name, 0)
    if found == aggr.partsRequested:
        return f"all {found:,} partitions"
    if found == 0:
        return aggr.coverage(name)
    if found == 1:
        return f"{aggr.coverage(name)}: the figures are that partition's alone (Hive extrapolates from two or more)"
    exact = _stats_rows(aggr.exact_obj(name))
    held = ", ".join(f"{k} {exact[k]}" for k in ("min", "max", "num_nulls", "distinct_count") if k in exact)
    return (f"{aggr.coverage(name)}: extrapolated to all {aggr.partsRequested} as Hive does; "
            f"the {found} analyzed hold {held}")


def _accuracy(metastore: Metastore, table: Table, partition: Partition | None) -> StatsAccuracy:
    """The flags that hold for what is described; a partitioned table's column flags hold when every
    partition has them (Hive keeps them on the partitions). A partitioned table's partitions are judged once
    (an external one's folders listed once, not once for each question)."""
    if partition is None and table.is_partitioned:
        summary, held = metastore.accuracy.summary_and_flags(table.dbName, table.tableName, [])
        if not summary.accurate and summary.first is not None:
            return StatsAccuracy()
        accuracy = StatsAccuracy.parse(table.parameters.get(COLUMN_STATS_ACCURATE))
        if accuracy.basic:
            accuracy.columns = held.columns
        return accuracy
    if _not_accurate(metastore, table, partition):
        return StatsAccuracy()
    if partition is not None:
        return StatsAccuracy.parse(partition.parameters.get(COLUMN_STATS_ACCURATE))
    return StatsAccuracy.parse(table.parameters.get(COLUMN_STATS_ACCURATE))


def _accuracy_text(accuracy: StatsAccuracy, column: str) -> str:
    parts: dict[str, object] = {"BASIC_STATS": "true" if accuracy.basic else "false"}
    if accuracy.basic:
        parts["COLUMN_STATS"] = {column: "true" if column in accuracy.columns else "false"}
    return json.dumps(parts, separators=(",", ":"), ensure_ascii=False)


def _bound_text(value) -> str:
    """A low or high value as DESCRIBE shows it: NaN spelled as Spark spells it."""
    if value is None:
        return ""
    if isinstance(value, float) and value != value:
        return "NaN"
    return str(value)


def _stats_rows(obj: ColumnStatisticsObj) -> dict[str, str]:
    data = obj.statsData.value
    kind = obj.statsData.kind
    out = {"num_nulls": str(data.numNulls)}
    if kind is StatsKind.DOUBLE:
        out[NANS_ROW] = "" if data.numNaNs is None else str(data.numNaNs)
    if hasattr(data, "lowValue"):
        out["min"] = _bound_text(data.lowValue)
        out["max"] = _bound_text(data.highValue)
    if hasattr(data, "numDVs"):
        out["distinct_count"] = str(data.numDVs)
    if kind in (StatsKind.STRING, StatsKind.BINARY):
        out["avg_col_len"] = repr(float(data.avgColLen))
        out["max_col_len"] = str(data.maxColLen)
    if kind is StatsKind.COLLECTION:
        out["avg_col_len"] = repr(float(data.avgColLen))
        out["max_col_len"] = "" if data.highValue is None else str(data.highValue)
        out[COUNTED_ROW] = ("elements" if obj.colType.startswith("array") else "entries") + \
            " per row: min, max, max_col_len and avg_col_len (a NULL counting as none)"
    if obj.numValues is not None:
        out[COUNTED_ROW] = f"{obj.numValues} values (the figures are over these, not the rows)"
    if kind is StatsKind.BOOLEAN:
        out["num_trues"] = str(data.numTrues)
        out["num_falses"] = str(data.numFalses)
    if data.bitVectors:
        out["bit_vector"] = "HL"
    distribution = Distribution.of_stats(obj)
    quartiles = distribution.quartiles() if distribution is not None else None
    if quartiles:
        out["histogram"] = ", ".join(f"Q{i}: {value_text(q, obj.colType)}" for i, q in enumerate(quartiles, 1))
    return out
