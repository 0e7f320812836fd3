"""Publishing the lab's statistics of an HMS table into that Hive Metastore, where Hive, Impala, Trino and
Spark plan with them; and withdrawing what the lab published once it knows it went stale.

What is written, per partition and for the table:
- column statistics in Hive's Thrift structures (`set_aggr_stats_for`, many partitions a call), only of
  the columns whose statistics are accurate for a reader now; `bitVectors` left unset (the lab's NDV
  sketches are DataSketches HLL, which Hive would misread as its own);
- `numRows`, `totalSize`, `numFiles` and `COLUMN_STATS_ACCURATE` as Hive writes them, Spark's
  `spark.sql.statistics.*` parameters in Spark's own format (`alter_partitions`, many a call), and
  `colstats.published`, the columns the lab published there (what a later publish may withdraw);
- nothing where the server already holds exactly that: publishing twice makes no write call.

Order: a partition's column statistics go first and its parameters after, and a withdrawal deletes the
statistics before it clears the flag; a publish stopped between two calls leaves each partition either
as it was, fully published, or withdrawn, apart from the flag that says so, which is written last.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from decimal import Decimal

from pymetastore.hive_metastore import ttypes

from ..coltypes import StatsKind
from ..column_statistics.estimators import inexact_figures, tiers_by_column
from ..metastore import ColumnStatisticsObj, Metastore, Table
from ..metastore.changes import AlterPartitionParams
from ..metastore.rows.column_stats_accurate import PARAM as ACCURATE_PARAM
from ..metastore.rows.column_stats_accurate import StatsAccuracy
from ..stats.spark_properties import (
    DEFAULT_NUM_BINS,
    STATISTICS_PREFIX,
    CatalogStatistics,
    column_stat_from_hive,
    partition_column_stat,
    rows_by_key_value,
    stats_to_properties,
)
from ..storage import list_data_files
from ..tables.external import listed_sums
from .hms_client import HiveMetastoreClient
from .hms_source import SOURCE_PARAM, hms_partition_name

PUBLISHED_PARAM = "colstats.published"  # the columns the lab published on a partition or table, comma-separated
TIERS_PARAM = "colstats.tiers"  # `column=5 %;other=metadata`: the published columns a tiered ANALYZE computed
BASIC_PARAMS = ("numRows", "totalSize", "numFiles")


LEAF_NOT_EXPORTED = "a struct's leaf: Hive's and Spark's column statistics have no nested columns"
COLLECTION_NOT_EXPORTED = "an array's or map's sizes: Hive's and Spark's column statistics have none"


STRUCT_NOT_EXPORTED = "a struct's own NULL count: Hive's and Spark's column statistics have none"


def not_exported(table: Table) -> dict[str, str]:
    """The lab's statistics columns Hive's and Spark's column statistics cannot carry, with why: struct leaves,
    arrays' elements and maps' entries (nested columns), arrays and maps themselves, and structs' NULL counts."""
    return {**{c.name: LEAF_NOT_EXPORTED if c.is_leaf else COLLECTION_NOT_EXPORTED
               for c in table.stats_columns if c.is_leaf or c.is_collection},
            **{c.name: STRUCT_NOT_EXPORTED for c in table.struct_columns}}


@dataclass
class PublishOutcome:
    """What `TableHandle.publish` did: partitions published and withdrawn (names), columns published at the table
    level, whether the table level was withdrawn, how many write calls it made, and how long it took."""

    table: str
    published: list[str] = field(default_factory=list)
    withdrawn: list[str] = field(default_factory=list)
    unchanged: int = 0
    table_columns: list[str] = field(default_factory=list)
    table_withdrawn: bool = False
    write_calls: int = 0
    seconds: float = 0.0
    partitioned: bool = True
    not_published: dict[str, str] = field(default_factory=dict)  # columns the HMS cannot hold, and why

    @property
    def message(self) -> str:
        parts = [f"{len(self.published):,} partition(s) written, {self.unchanged} unchanged, {len(self.withdrawn)} "
                 "withdrawn"] if self.partitioned else []
        if self.table_columns:
            parts.append(f"table level: {len(self.table_columns)} column(s)")
        elif self.table_withdrawn:
            parts.append("table level withdrawn (" + ("not every partition is accurate)" if self.partitioned else
                                                      "its statistics are no longer accurate)"))
        elif not self.partitioned:
            parts.append("nothing accurate to publish")
        if self.not_published:
            parts.append(f"not published: {', '.join(self.not_published)} ({next(iter(self.not_published.values()))})")
        parts.append(f"{self.write_calls} write call(s), {self.seconds:.2f} s")
        return f"Published {self.table}: " + "; ".join(parts)


def thrift_stats_obj(obj: ColumnStatisticsObj, hms_type: str) -> ttypes.ColumnStatisticsObj:
    """The lab's statistics of one column in Hive 3.1's Thrift structures. Timestamps go as Hive 2 and 3
    keep them, in `longStats` of whole seconds; a NaN bound (Spark orders NaN above every number) is left
    unset, since Hive's bounds are numbers."""
    data, kind = obj.statsData.value, obj.statsData.kind
    if kind is StatsKind.BOOLEAN:
        union = ttypes.ColumnStatisticsData(booleanStats=ttypes.BooleanColumnStatsData(
            data.numTrues, data.numFalses, data.numNulls))
    elif kind is StatsKind.LONG:
        union = ttypes.ColumnStatisticsData(longStats=ttypes.LongColumnStatsData(
            data.lowValue, data.highValue, data.numNulls, data.numDVs))
    elif kind is StatsKind.TIMESTAMP:
        union = ttypes.ColumnStatisticsData(longStats=ttypes.LongColumnStatsData(
            None if data.lowValue is None else data.lowValue.secondsSinceEpoch,
            None if data.highValue is None else data.highValue.secondsSinceEpoch, data.numNulls, data.numDVs))
    elif kind is StatsKind.DOUBLE:
        union = ttypes.ColumnStatisticsData(doubleStats=ttypes.DoubleColumnStatsData(
            _number(data.lowValue), _number(data.highValue), data.numNulls, data.numDVs))
    elif kind is StatsKind.DECIMAL:
        union = ttypes.ColumnStatisticsData(decimalStats=ttypes.DecimalColumnStatsData(
            _decimal(data.lowValue), _decimal(data.highValue), data.numNulls, data.numDVs))
    elif kind is StatsKind.DATE:
        union = ttypes.ColumnStatisticsData(dateStats=ttypes.DateColumnStatsData(
            None if data.lowValue is None else ttypes.Date(data.lowValue.daysSinceEpoch),
            None if data.highValue is None else ttypes.Date(data.highValue.daysSinceEpoch), data.numNulls, data.numDVs))
    elif kind is StatsKind.STRING:
        union = ttypes.ColumnStatisticsData(stringStats=ttypes.StringColumnStatsData(
            data.maxColLen, float(data.avgColLen), data.numNulls, data.numDVs))
    else:
        union = ttypes.ColumnStatisticsData(binaryStats=ttypes.BinaryColumnStatsData(
            data.maxColLen, float(data.avgColLen), data.numNulls))
    return ttypes.ColumnStatisticsObj(obj.colName, hms_type, union)


def _number(value: float | None) -> float | None:
    return None if value is None or value != value else float(value)


def _decimal(value: Decimal | None) -> ttypes.Decimal | None:
    """Hive's Decimal: the unscaled value as big-endian two's complement bytes (Java's BigInteger), and the scale."""
    if value is None:
        return None
    scale = max(0, -int(value.as_tuple().exponent))
    unscaled = int(value.scaleb(scale))
    length = max(1, (unscaled + (unscaled < 0)).bit_length() // 8 + 1)
    return ttypes.Decimal(scale=scale, unscaled=unscaled.to_bytes(length, "big", signed=True))


def decimal_value(value: ttypes.Decimal | None) -> Decimal | None:
    if value is None:
        return None
    return Decimal(int.from_bytes(value.unscaled, "big", signed=True)).scaleb(-value.scale)


@dataclass
class _Owner:
    """What the lab would have the server hold for one partition (name) or the table (None)."""

    name: str | None
    basic: bool
    params: dict[str, str]
    stats: list[ttypes.ColumnStatisticsObj]
    recorded: str | None = None  # the lab's record of what it published there (its mirror's parameter)


def publish(metastore: Metastore, client: HiveMetastoreClient, table: Table, qualified: str,
            fetched: list[ttypes.Partition] | None = None, num_bins: int = DEFAULT_NUM_BINS) -> PublishOutcome:
    """Publishes the lab's accurate statistics of the mirror `table` into the HMS it mirrors and withdraws
    what it published before where they are no longer accurate. The mirror's partitions must be fetched
    (`hms_source.resolve`) and followed first; `fetched`, the HMS's partition objects that fetch returned,
    are not asked for again."""
    started = time.perf_counter()
    calls_before = client.write_calls
    db, name = table.parameters[SOURCE_PARAM].split(".", 1)
    outcome = PublishOutcome(qualified, partitioned=table.is_partitioned)
    raw_table = client.get_table(db, name)
    hms_types = {c.name.lower(): c.type for c in raw_table.sd.cols}
    outcome.not_published = not_exported(table)
    columns = sorted(c for c in table.stats_column_names if c in hms_types and c not in outcome.not_published)
    if table.is_partitioned:
        compliance = metastore.accuracy.per_column_compliance(table.dbName, table.tableName, [[]] + [[c] for c in columns])
        owners = _partition_owners(metastore, table, columns, hms_types, compliance)
        raw_parts = {hms_partition_name(table, p): p for p in fetched or []}
        missing = [n for n in owners if n not in raw_parts]
        raw_parts.update({hms_partition_name(table, p): p for p in client.get_partitions_by_names(db, name, missing)}
                         if missing else {})
        current = client.get_partitions_statistics(db, name, list(owners), columns)
        stats_calls: list[ttypes.ColumnStatistics] = []
        altered: list[ttypes.Partition] = []
        withdrawals: list[tuple[str, str | None]] = []
        for part_name, owner in owners.items():
            raw = raw_parts[part_name]
            now = {o.colName: o for o in current.get(part_name, [])}
            params = dict(raw.parameters or {})
            ours = _published_columns(params)
            wanted = {o.colName: o for o in owner.stats} if owner.basic else {}
            changed = [o for c, o in wanted.items() if now.get(c) != o]
            if changed:
                stats_calls.append(ttypes.ColumnStatistics(
                    ttypes.ColumnStatisticsDesc(False, db, name, part_name, int(time.time())), changed))
            gone = sorted(c for c in ours - set(wanted) if c in now)
            # every column there is the lab's to withdraw: one call for all of them (a null column name)
            withdrawals += [(part_name, None)] if gone and set(gone) == set(now) else [(part_name, c) for c in gone]
            if owner.basic:
                new_params = _with(params, owner.params)
            else:
                new_params = {**_withdrawn(params), **owner.params} if PUBLISHED_PARAM in params else params
            if new_params != params or changed:
                raw.parameters = new_params
                altered.append(raw)  # the flag last: written after the statistics it vouches for
            if not (changed or gone or new_params != params):
                outcome.unchanged += 1
            elif owner.basic:
                outcome.published.append(part_name)
            else:
                outcome.withdrawn.append(part_name)
        for part_name, column in withdrawals:  # Hive 2.3 has no delete of many partitions at once
            client.delete_partition_column_statistics(db, name, part_name, column)
        if stats_calls:
            client.set_aggr_stats_for(stats_calls)
        if altered:
            client.alter_partitions(db, name, altered)
        _record(metastore, table, owners)
        table_owner = _table_owner(metastore, table, columns, hms_types, compliance, num_bins)
    else:
        table_owner = _unpartitioned_owner(metastore, table, columns, hms_types, num_bins)
    _publish_table_level(client, raw_table, db, name, table_owner, columns, outcome)
    outcome.write_calls = client.write_calls - calls_before
    outcome.seconds = time.perf_counter() - started
    return outcome


def _published_columns(params: dict[str, str]) -> set[str]:
    text = params.get(PUBLISHED_PARAM)
    return set(filter(None, text.split(","))) if text is not None else set()


def _with(params: dict[str, str], wanted: dict[str, str]) -> dict[str, str]:
    """The server's parameters with the lab's figures in place of Spark's and Hive's statistics keys."""
    kept = {k: v for k, v in params.items() if not k.startswith(STATISTICS_PREFIX)}
    return {**kept, **wanted}


def _withdrawn(params: dict[str, str]) -> dict[str, str]:
    """The parameters with what the lab published removed: row count, accuracy flag, Spark's statistics and
    the lab's own mark (file counts and sizes are set to the files' as they are now)."""
    return {k: v for k, v in params.items()
            if k not in ("numRows", "rawDataSize", ACCURATE_PARAM, PUBLISHED_PARAM, TIERS_PARAM)
            and not k.startswith(STATISTICS_PREFIX)}


def _basic_params(params: dict[str, str], columns: list[str], rows: int, size: int,
                  spark: dict[str, str]) -> dict[str, str]:
    """The basic parameters published beside `columns`' statistics. A column whose NULLs, minimum or maximum a
    tiered ANALYZE estimated (or could not read) is published but not flagged accurate, since Hive answers count,
    min and max from flagged columns alone; `colstats.tiers` names each tiered column's tier for a reader. Rows
    metadata could only bound (Iceberg's equality deletes under NOSCAN) flag nothing: Hive answers count(*) from
    flagged basic statistics."""
    rows_exact = not any("rows" in inexact_figures(params, c) for c in columns)
    exact = {c for c in columns if not {"nulls", "min", "max"} & set(inexact_figures(params, c))} if rows_exact else set()
    named = ";".join(f"{c}={tier}" for c, tier in tiers_by_column([params], columns).items())
    return {"numRows": str(rows), "totalSize": str(size), "numFiles": str(params.get("numFiles", "0")),
            ACCURATE_PARAM: StatsAccuracy(rows_exact, exact).to_param() or "", PUBLISHED_PARAM: ",".join(columns),
            TIERS_PARAM: named, **spark}


def _partition_owners(metastore: Metastore, table: Table, columns: list[str], hms_types: dict[str, str],
                      compliance: dict) -> dict[str, _Owner]:
    """The partitions a publish touches: those whose basic statistics are accurate now, and those the lab
    published before (its record on the mirror's partition), which may need withdrawing. One day analyzed
    of 100,000 partitions touches that day."""
    candidates = [p for p in metastore.catalog.get_partitions(table.dbName, table.tableName)
                  if compliance[p.partName][0][0] or PUBLISHED_PARAM in p.parameters]
    stored = metastore.column_stats.get_partitions_statistics(table.dbName, table.tableName,
                                                              [p.partName for p in candidates], columns)
    owners = {}
    for part in candidates:
        flags = compliance[part.partName]
        basic = flags[0][0]
        accurate = [c for c, (ok, _) in zip(columns, flags[1:], strict=True) if ok and basic]
        stats = stored.get(part.partName)
        objs = [thrift_stats_obj(o, hms_types[o.colName]) for o in (stats.statsObj if stats else [])
                if o.colName in accurate]
        published = [o.colName for o in objs]
        rows, size = int(part.parameters.get("numRows", 0) or 0), int(part.parameters.get("totalSize", 0) or 0)
        if basic:
            spark = stats_to_properties(CatalogStatistics(size, rows), [])
            owners[part.partName] = _Owner(part.partName, True, _basic_params(part.parameters, published, rows, size,
                                                                               spark), objs, part.parameters.get(PUBLISHED_PARAM))
        else:  # withdrawn: the files' count and size as they are now, which Hive keeps true without a scan
            files = list_data_files(part.location) if part.location else []
            owners[part.partName] = _Owner(part.partName, False, listed_sums(files), [],
                                           part.parameters.get(PUBLISHED_PARAM))
    return owners


def _record(metastore: Metastore, table: Table, owners: dict[str, _Owner]) -> None:
    """The lab's own record of what it published where (the mirror's partitions' `colstats.published`), so a
    later publish knows what to withdraw without reading every partition of the server."""
    changed = []
    for name, owner in owners.items():
        now = owner.params[PUBLISHED_PARAM] if owner.basic else None
        if now != owner.recorded:  # a publish with nothing changed writes nothing here either
            changed.append((name, ((PUBLISHED_PARAM, now),)))
    if changed:
        metastore.apply([AlterPartitionParams(table, tuple(changed))])


def _table_owner(metastore: Metastore, table: Table, columns: list[str], hms_types: dict[str, str],
                 compliance: dict, num_bins: int) -> _Owner:
    """The table level of a partitioned table: published while every partition's statistics are accurate,
    with the columns accurate in every partition (the lab's merge: NDV from the union of the sketches)."""
    basic = bool(compliance) and all(flags[0][0] for flags in compliance.values())
    everywhere = [c for i, c in enumerate(columns, start=1) if all(flags[i][0] for flags in compliance.values())]
    return _level_owner(metastore, table, everywhere if basic else [], hms_types, basic, num_bins, column_flags=False)


def _unpartitioned_owner(metastore: Metastore, table: Table, columns: list[str], hms_types: dict[str, str],
                         num_bins: int) -> _Owner:
    flags = metastore.accuracy.per_column_compliance(table.dbName, table.tableName, [[]] + [[c] for c in columns])[None]
    basic = flags[0][0]
    accurate = [c for c, (ok, _) in zip(columns, flags[1:], strict=True) if ok and basic]
    return _level_owner(metastore, table, accurate, hms_types, basic, num_bins, column_flags=True)


def _level_owner(metastore: Metastore, table: Table, columns: list[str], hms_types: dict[str, str], basic: bool,
                 num_bins: int, column_flags: bool) -> _Owner:
    table = metastore.catalog.get_table(table.dbName, table.tableName)
    rows, size = int(table.parameters.get("numRows", 0) or 0), int(table.parameters.get("totalSize", 0) or 0)
    stored = metastore.column_stats.get_table_statistics(table.dbName, table.tableName, columns) if columns else None
    objs = [o for o in (stored.statsObj if stored else []) if o.colName in columns]
    col_stats = {o.colName: column_stat_from_hive(o, rows, num_bins) for o in objs}
    if basic and table.is_partitioned:  # Spark's statistics of the partition keys, from the partitions' rows
        parts = metastore.catalog.get_partitions(table.dbName, table.tableName)
        for index, key in enumerate(table.partitionKeys):
            col_stats[key.name] = partition_column_stat(key.type, rows_by_key_value(parts, index), num_bins)
    spark = stats_to_properties(CatalogStatistics(size, rows, col_stats),
                                [c.name for c in table.cols + table.partitionKeys])
    published = [o.colName for o in objs]
    params = _basic_params(table.parameters, published, rows, size, spark)
    if not column_flags:  # Hive keeps a partitioned table's column flags on its partitions
        params[ACCURATE_PARAM] = StatsAccuracy(True).to_param() or ""
    return _Owner(None, basic, params, [thrift_stats_obj(o, hms_types[o.colName]) for o in objs])


def _publish_table_level(client: HiveMetastoreClient, raw_table: ttypes.Table, db: str, name: str, owner: _Owner,
                         columns: list[str], outcome: PublishOutcome) -> None:
    params = dict(raw_table.parameters or {})
    ours = _published_columns(params)
    current = {o.colName: o for o in client.get_table_statistics(db, name, columns)} if (owner.basic or ours) else {}
    if owner.basic:
        wanted = {o.colName: o for o in owner.stats}
        _withdraw_table_columns(client, db, name, sorted(c for c in ours - set(wanted) if c in current), current)
        changed = [o for c, o in wanted.items() if current.get(c) != o]
        if changed:
            client.set_aggr_stats_for([ttypes.ColumnStatistics(
                ttypes.ColumnStatisticsDesc(True, db, name, None, int(time.time())), changed)])
        new_params = _with(params, owner.params)
        outcome.table_columns = sorted(wanted)
    else:
        _withdraw_table_columns(client, db, name, sorted(c for c in ours if c in current), current)
        new_params = _withdrawn(params) if PUBLISHED_PARAM in params else params
        outcome.table_withdrawn = PUBLISHED_PARAM in params
    if new_params != params:
        raw_table.parameters = new_params
        client.alter_table(raw_table)


def _withdraw_table_columns(client: HiveMetastoreClient, db: str, name: str, columns: list[str], current: dict) -> None:
    """Deletes the table-level statistics of `columns`: in one call when they are all the server holds."""
    if columns and set(columns) == set(current):
        client.delete_table_column_statistics(db, name, None)
        return
    for column in columns:
        client.delete_table_column_statistics(db, name, column)
