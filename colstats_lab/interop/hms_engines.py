"""What each engine sees of an HMS table's statistics: the lab's figures and whether they are accurate, the
column statistics the HMS holds (whoever wrote them) and Spark's `spark.sql.statistics.*` parameters,
side by side, with where they disagree and which of them the lab's evidence shows stale. Figures other
engines wrote are read and shown, never taken as the lab's own."""
from __future__ import annotations

import datetime as dt
import math

import pandas as pd
from pymetastore.hive_metastore import ttypes

from ..coltypes import StatsKind, parse_type
from ..errors import InvalidArgument
from ..metastore import ColumnStatisticsObj, Date, Metastore, Table
from ..stats.spark_properties import stats_from_properties
from ..storage import list_data_files
from .hms_client import HiveMetastoreClient
from .hms_publish import PUBLISHED_PARAM, decimal_value, not_exported
from .hms_source import SOURCE_PARAM, hms_partition_name

ENGINE_COLUMNS = ["partition", "column", "lab_rows", "lab_nulls", "lab_ndv", "lab_min", "lab_max", "lab_avg_len",
                  "lab_max_len", "lab_accurate", "lab_reason", "hms_rows", "hms_nulls", "hms_ndv", "hms_min", "hms_max",
                  "hms_avg_len", "hms_max_len", "hms_writer", "spark_rows", "spark_nulls", "spark_ndv", "spark_min",
                  "spark_max", "agrees", "stale", "reason"]
_FIGURES = ("nulls", "ndv", "min", "max", "avg_len", "max_len")


def writer_of(params: dict[str, str], column: str | None) -> str:
    """Who wrote an owner's statistics, from the marks engines leave in its parameters."""
    if column is not None and column in set((params.get(PUBLISHED_PARAM) or "").split(",")):
        return "colstats_lab"
    if any(k.startswith("impala_intermediate_stats") for k in params):
        return "impala"
    if "trino_query_id" in params or "trino_version" in params:
        return "trino"
    if "presto_query_id" in params or "presto_version" in params:
        return "presto"
    return "hive or another engine"


def lab_figures(obj: ColumnStatisticsObj | None) -> dict:
    if obj is None:
        return {}
    data, kind = obj.statsData.value, obj.statsData.kind
    out: dict = {"nulls": data.numNulls}
    if kind is StatsKind.BOOLEAN:
        return {**out, "ndv": None}
    if kind in (StatsKind.STRING, StatsKind.BINARY):
        return {**out, "ndv": getattr(data, "numDVs", None), "avg_len": round(float(data.avgColLen), 6),
                "max_len": data.maxColLen}
    low, high = data.lowValue, data.highValue
    if kind is StatsKind.TIMESTAMP:  # Hive's API keeps whole seconds
        return {**out, "ndv": data.numDVs, "min": _seconds(low and low.secondsSinceEpoch),
                "max": _seconds(high and high.secondsSinceEpoch)}
    return {**out, "ndv": data.numDVs, "min": _text(low), "max": _text(high)}


def _seconds(value: int | None) -> str | None:
    """A timestamp as Hive's API keeps it (whole seconds since the epoch), in UTC text."""
    if value is None:
        return None
    return (dt.datetime(1970, 1, 1) + dt.timedelta(seconds=value)).isoformat(sep=" ")


def hms_figures(obj: ttypes.ColumnStatisticsObj | None, type_name: str) -> dict:
    if obj is None:
        return {}
    union = obj.statsData
    if union.booleanStats is not None:
        return {"nulls": union.booleanStats.numNulls, "ndv": None}
    for member in (union.stringStats, union.binaryStats):
        if member is not None:
            return {"nulls": member.numNulls, "ndv": getattr(member, "numDVs", None),
                    "avg_len": round(float(member.avgColLen), 6), "max_len": member.maxColLen}
    low: object
    high: object
    if union.decimalStats is not None:
        data = union.decimalStats
        low, high = decimal_value(data.lowValue), decimal_value(data.highValue)
    elif union.dateStats is not None:
        data = union.dateStats
        low, high = (None if v is None else Date(v.daysSinceEpoch) for v in (data.lowValue, data.highValue))
    else:
        data = union.longStats or union.doubleStats
        low, high = data.lowValue, data.highValue
        if parse_type(type_name).stats_kind is StatsKind.TIMESTAMP and union.longStats is not None:
            low, high = _seconds(data.lowValue), _seconds(data.highValue)
    return {"nulls": data.numNulls, "ndv": data.numDVs, "min": _text(low), "max": _text(high)}


def _text(value) -> str | None:
    return None if value is None else str(value)


def _spark_text(value: str | None, type_name: str) -> str | None:
    """Spark's external string of a bound, spelled as the lab's figures are (timestamps in whole seconds)."""
    if value is None:
        return None
    kind = parse_type(type_name).stats_kind
    if kind is StatsKind.TIMESTAMP:
        return _seconds(math.floor(dt.datetime.fromisoformat(value).replace(tzinfo=dt.UTC).timestamp()))
    if kind is StatsKind.LONG:
        return str(int(value))
    if kind is StatsKind.DOUBLE:
        return str(float(value))
    return value


def engines_frame(metastore: Metastore, client: HiveMetastoreClient, table: Table, partition: str | None
                  ) -> pd.DataFrame:
    """One row per column at the table level (`partition` None), or per partition and column for a partition
    name or "*"; see ENGINE_COLUMNS."""
    db, name = table.parameters[SOURCE_PARAM].split(".", 1)
    unexported = not_exported(table)
    columns = [c.name for c in table.cols if c.name in table.stats_column_names and c.name not in unexported]
    types = {c.name: c.type for c in table.cols}
    records: list[dict] = []
    if partition is None:
        raw = client.get_table(db, name)
        params = raw.parameters or {}
        compliance = metastore.accuracy.per_column_compliance(table.dbName, table.tableName, [[c] for c in columns])
        accurate = {c: _all_owners(compliance, i) for i, c in enumerate(columns)}
        stored = metastore.column_stats.get_table_statistics(table.dbName, table.tableName, columns)
        lab = {o.colName: o for o in (stored.statsObj if stored else [])}
        hms = {o.colName: o for o in client.get_table_statistics(db, name, columns)}
        spark = stats_from_properties(params, columns)
        files_changed = _changed_after(table.location if not table.is_partitioned else None, params)
        for column in columns:
            records.append(_row(None, column, types[column], int(table.parameters.get("numRows", 0) or 0), lab.get(column),
                                accurate[column], params, hms.get(column), spark, files_changed))
        return pd.DataFrame(records, columns=ENGINE_COLUMNS, dtype=object)
    if not table.is_partitioned:
        raise InvalidArgument(f"{table.parameters[SOURCE_PARAM]} is not partitioned: ask for partition=None")
    names = metastore.catalog.get_partition_names(table.dbName, table.tableName) if partition == "*" else [partition]
    parts = {p.partName: p for p in metastore.catalog.get_partitions(table.dbName, table.tableName, names)}
    missing = [n for n in names if n not in parts]
    if missing:
        raise InvalidArgument(f"no partition {missing[0]} in {table.parameters[SOURCE_PARAM]}")
    compliance = metastore.accuracy.per_column_compliance(table.dbName, table.tableName, [[c] for c in columns], part_names=names)
    by_partition = metastore.column_stats.get_partitions_statistics(table.dbName, table.tableName, names, columns)
    raw_parts = {hms_partition_name(table, p): p for p in client.get_partitions_by_names(db, name, names)}
    hms = client.get_partitions_statistics(db, name, names, columns)
    for part_name in names:
        part = parts[part_name]
        params = (raw_parts[part_name].parameters if part_name in raw_parts else None) or {}
        lab = {o.colName: o for o in (by_partition[part_name].statsObj if part_name in by_partition else [])}
        server = {o.colName: o for o in hms.get(part_name, [])}
        spark = stats_from_properties(params, columns)
        files_changed = _changed_after(part.location, params)
        for i, column in enumerate(columns):
            records.append(_row(part_name, column, types[column], int(part.parameters.get("numRows", 0) or 0),
                                lab.get(column), compliance[part_name][i], params, server.get(column), spark,
                                files_changed))
    return pd.DataFrame(records, columns=ENGINE_COLUMNS, dtype=object)


def _all_owners(compliance: dict, index: int) -> tuple[bool, str]:
    for owner, flags in sorted(compliance.items(), key=lambda item: str(item[0])):
        ok, why = flags[index]
        if not ok:
            return False, why if owner is None else f"partition {owner}: {why}"
    return True, ""


def _changed_after(location: str | None, params: dict[str, str]) -> str | None:
    """Whether files under `location` were written after the HMS last changed the owner's parameters
    (`transient_lastDdlTime`): figures written then describe older files."""
    stamp = params.get("transient_lastDdlTime")
    if not location or not stamp:
        return None
    newest = max((f.modified for f in list_data_files(location)), default=None)
    if newest is not None and newest >= int(stamp) + 1:  # the stamp is whole seconds: the same second proves nothing
        when = dt.datetime.fromtimestamp(int(stamp), dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"files were written after the HMS last changed these figures ({when})"
    return None


def _row(part_name, column, type_name, lab_rows, lab_obj, compliance, params, hms_obj, spark, files_changed) -> dict:
    lab_ok, lab_why = compliance
    lab = lab_figures(lab_obj)
    hms = hms_figures(hms_obj, type_name)
    spark_stat = spark.colStats.get(column) if spark else None
    hms_rows = _int(params.get("numRows"))
    row = {"partition": part_name, "column": column, "lab_rows": lab_rows if lab_obj is not None else None,
           **{f"lab_{k}": lab.get(k) for k in _FIGURES}, "lab_accurate": lab_ok if lab_obj is not None else None,
           "lab_reason": lab_why or None, "hms_rows": hms_rows if hms_obj is not None else None,
           **{f"hms_{k}": hms.get(k) for k in _FIGURES},
           "hms_writer": writer_of(params, column) if hms_obj is not None else None,
           "spark_rows": spark.rowCount if spark else None,
           "spark_nulls": spark_stat.nullCount if spark_stat else None,
           "spark_ndv": spark_stat.distinctCount if spark_stat else None,
           "spark_min": _spark_text(spark_stat.min, type_name) if spark_stat else None,
           "spark_max": _spark_text(spark_stat.max, type_name) if spark_stat else None}
    compared = [k for k in _FIGURES if lab.get(k) is not None or hms.get(k) is not None]
    row["agrees"] = None if not (lab and hms) else all(lab.get(k) == hms.get(k) for k in compared) and \
        (hms_rows is None or hms_rows == lab_rows)
    stale, reasons = False, []
    if hms_obj is not None or spark_stat is not None:
        if writer_of(params, column) == "colstats_lab":  # the lab's own: stale exactly when its evidence says so
            if lab_obj is not None and not lab_ok:
                stale, reasons = True, [f"the lab published them, then: {lab_why}"]
        elif lab_obj is not None and lab_ok and hms_rows is not None and hms_rows != lab_rows:
            stale, reasons = True, [f"the files hold {lab_rows} rows (the lab's accurate count); the HMS says {hms_rows}"]
        elif lab_obj is not None and lab_ok and spark and spark.rowCount is not None and spark.rowCount != lab_rows:
            stale, reasons = True, [f"the files hold {lab_rows} rows; Spark's parameters say {spark.rowCount}"]
        elif files_changed:
            stale, reasons = True, [files_changed]
    if not row["agrees"] and lab and hms and not reasons:
        reasons = ["differs: " + ", ".join(k for k in compared if lab.get(k) != hms.get(k))]
    row["stale"], row["reason"] = stale, "; ".join(reasons) or None
    return row


def _int(text) -> int | None:
    try:
        return None if text is None else int(text)
    except ValueError:
        return None
