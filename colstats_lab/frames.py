"""The statistics a lab's metastore holds, as pandas frames: one level's (the statistics view's rows) and
every partition's and column's (the tidy export, `inspect.stats()`); and a table's report as plain
data (`report("x.json")`). All read the metastore alone: no Spark."""
from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pandas as pd

from .coltypes import parse_type
from .column_statistics import drift
from .column_statistics.estimators import BOUNDS_PARAM, Band, Tier, merged_band, tiered_columns
from .column_statistics.frequent_items import FrequentItems
from .column_statistics.model import ColumnStatisticsObj, Date, Timestamp
from .column_statistics.names import hive_part_name, make_part_name
from .column_statistics.quantiles import Distribution, column_value
from .metastore import COLUMN_STATS_ACCURATE, Metastore, Partition, Table
from .metastore.repositories.history import engine_of, state_picker
from .metastore.repositories.stats_accuracy import ComplianceSummary
from .metastore.rows.levels import TABLE_LEVEL
from .metastore.rows.staleness import PARAM as ROWS_CHANGED
from .metastore.rows.staleness import describe_change, describe_summed
from .tables.kinds import kind_of

# the rows a public read returns unless told (`limit=`): every `inspect` method, `lab.runs`, `autoanalyze.rounds`;
# a view asks for what it draws
DEFAULT_LIMIT = 500
FRAME_COLUMNS = ["column", "type", "values", "min", "max", "nulls", "null_fraction", "nans", "ndv", "quartiles", "avg_len",
                 "max_len", "trues", "falses", "last_analyzed", "accurate", "reason", "coverage", "tier", "bands"]
QUARTILE_COLUMNS = ["partition", "rows", "min", "p05", "q1", "median", "q3", "p95", "max"]


def names_and_total(found: pd.DataFrame) -> tuple[list[str], int]:
    """An `inspect.partitions` frame as a level picker (and 0.2's tuple) takes it: the names, and how many
    partitions hold the text."""
    return list(found["partition"]), int(found.attrs["total"])


def _values(obj) -> dict:
    data = obj.statsData.value
    out = {"nulls": data.numNulls}
    if hasattr(data, "numNaNs"):  # a double's NaN values, apart from its NULLs (None: not counted)
        out["nans"] = data.numNaNs
    if hasattr(data, "lowValue"):
        out["min"], out["max"] = data.lowValue, data.highValue
    if hasattr(data, "numDVs"):
        out["ndv"] = data.numDVs
    distribution = Distribution.of_stats(obj)
    quartiles = distribution.quartiles() if distribution is not None else None
    if quartiles:
        out["quartiles"] = [column_value(q, obj.colType) for q in quartiles]
        out["q1"], out["median"], out["q3"] = out["quartiles"]
    if hasattr(data, "avgColLen"):  # an array's or map's: its elements
        out["avg_len"], out["max_len"] = data.avgColLen, getattr(data, "maxColLen", out.get("max"))
    if getattr(data, "moments", None) is not None:
        out["moments"] = data.moments
    if hasattr(data, "numTrues"):
        out["trues"], out["falses"] = data.numTrues, data.numFalses
        out["ndv"] = int(data.numTrues > 0) + int(data.numFalses > 0)
    return out


def spelled_frame(frame: pd.DataFrame, table: Table) -> pd.DataFrame:
    """`frame` with its `partition` and `column` values as the table's files spell them (`eventDate=...`,
    `userId`): what a person reads; the metastore keeps Hive's lower-case names."""
    spell_partition = table.partition_speller()
    spelling = {c.name: table.spelled(c.name) for c in table.cols + table.partitionKeys}
    if "partition" in frame.columns:
        frame["partition"] = [spell_partition(p) if isinstance(p, str) else p for p in frame["partition"]]
    if "column" in frame.columns:
        frame["column"] = [spelling.get(c, c) if isinstance(c, str) else c for c in frame["column"]]
    return frame


def _hive_level(partition: str | None) -> str | None:
    """A partition name as given (the files' spelling of its keys, or Hive's) as the metastore keeps it."""
    return partition if partition in (None, TABLE_LEVEL) else hive_part_name(partition)


def level_frame(metastore: Metastore, table: Table, partition: str | None = None) -> tuple[pd.DataFrame, int]:
    """One row per column of the table level (partition None) or of one partition, as the statistics view
    shows them, and the row count they cover."""
    records, _objs, rows = level_records(metastore, table, partition)
    return pd.DataFrame(records, columns=FRAME_COLUMNS, dtype=object), rows  # object: None stays None, NaN stays NaN


def level_records(metastore: Metastore, table: Table, partition: str | None = None
                  ) -> tuple[list[dict], dict[str, ColumnStatisticsObj], int]:
    """level_frame's rows as records (with a number column's kept sums under `moments`), each column's
    statistics by name, and the row count they cover."""
    partition = _hive_level(partition)
    columns = table.figure_columns
    names = [c.name for c in columns]
    one = None if partition in (None, TABLE_LEVEL) else [partition]
    compliance = dict(zip(names, metastore.accuracy.column_compliance(table.dbName, table.tableName, [[n] for n in names],
                                                             part_names=one), strict=True))
    aggr = None
    # a partitioned table's level is its partitions' union: its tiers are theirs (stats_frame says "mixed")
    tiered = tiered_columns(table.parameters) if not table.is_partitioned else {}
    if partition in (None, TABLE_LEVEL):
        rows = int(table.parameters.get("numRows", 0) or 0)
        accuracy = {name: _table_level(compliance[name], table) for name in names}
        if table.is_partitioned:
            # the union of the partitions that hold statistics, never an extrapolation, and says how many
            aggr = metastore.column_stats.get_aggr_stats_for(table.dbName, table.tableName, names,
                                                check_compliance=False)  # judged per column above
        stats = metastore.column_stats.get_table_statistics(table.dbName, table.tableName, names)
        if aggr is not None and stats is not None:
            stats.statsObj = aggr.exact
    else:
        part = metastore.catalog.get_partition(table.dbName, table.tableName, partition)  # names it when unknown
        stats = metastore.column_stats.get_partitions_statistics(table.dbName, table.tableName, [partition], names).get(partition)
        rows = int(part.parameters.get("numRows", 0) or 0)
        tiered = tiered_columns(part.parameters)
        accuracy = {name: (True, "") if compliance[name].accurate else (False, _reason(compliance[name]))
                    for name in names}
    by_name = {o.colName: o for o in stats.statsObj} if stats else {}
    bands: dict[str, dict[str, Band]] = {}
    if partition in (None, TABLE_LEVEL) and table.is_partitioned:
        bands, tiered = table_bands(metastore, table, [c.name for c in columns]), {}
        tiers_said = _table_tiers(metastore, table)
    else:
        bands = {column: {figure: Band.of(stored) for figure, stored in entry["figures"].items()}
                 for column, entry in tiered.items()}
        tiers_said = {column: tier_said(entry) for column, entry in tiered.items()}
    records = []
    for column in columns:
        record: dict[str, Any] = dict.fromkeys(FRAME_COLUMNS)
        record.update(column=column.name, type=column.type)
        obj = by_name.get(column.name)
        if obj is None:
            record.update(accurate=None, reason="never analyzed")
        else:
            record.update(_values(obj))
            covered_rows = rows if aggr is None else aggr.covered_rows[column.name]
            if obj.numValues is not None:  # an array's elements, a map's entries
                covered_rows = record["values"] = obj.numValues
            record["null_fraction"] = record["nulls"] / covered_rows if covered_rows else 0.0
            record["last_analyzed"] = stats.statsDesc.lastAnalyzed if stats else None
            record["accurate"], record["reason"] = accuracy[column.name]
            record["tier"] = tiers_said.get(column.name, "every value")
            with_bands(record, bands.get(column.name), column.type, covered_rows)
            if aggr is not None and aggr.covered[column.name] < aggr.partsRequested:
                record["reason"] = f"{aggr.coverage(column.name)} (figures are theirs alone); {record['reason']}"
        if aggr is not None:
            record["coverage"] = f"{aggr.covered[column.name]} of {aggr.partsRequested}"
        records.append(record)
    return records, by_name, rows


def with_bands(record: dict, bands: dict[str, Band] | None, type_name: str, rows: int | None) -> None:
    """A frame's record with its figures as their bands say: an unknown figure None (never the 0 a Hive struct
    stores for it), an estimate its band's value (its NULL share of `rows`, or of the values an array or map
    holds); `bands` (FRAME_COLUMNS) keeps [low, high, method] of each figure that is not exact, and `estimated`
    their names (TIDY_COLUMNS)."""
    if not bands:
        return
    shown: dict[str, list] = {}
    for figure, band in bands.items():
        if band.exact:
            continue
        if figure == "rows":  # the level's count, shown beside the figures (equality deletes under NOSCAN)
            shown[figure] = [band.low, band.high, band.method]
            continue
        if figure in record:
            record[figure] = None if band.value is None else figure_value(band.value, figure, type_name)
        shown[figure] = [figure_value(band.low, figure, type_name), figure_value(band.high, figure, type_name),
                         band.method]
    if "nulls" in shown:
        counted = record.get("values") or rows
        record["null_fraction"] = None if record["nulls"] is None else (record["nulls"] / counted if counted else 0.0)
    record["bands"] = shown or None
    record["estimated"] = sorted(shown) or None


def figure_value(value, figure: str, type_name: str):
    """A band's value (JSON: a date's days, a timestamp's microseconds) as the frame keeps the figure."""
    if value is None or figure not in ("min", "max"):
        return value
    base = type_name.split("(", 1)[0]
    if base == "date" and isinstance(value, int):
        return Date(value)
    if base == "timestamp" and isinstance(value, int):
        return Timestamp(value)
    if base == "date" and isinstance(value, str):
        return Date.from_date(dt.date.fromisoformat(value))
    if base == "timestamp" and isinstance(value, str):  # a tier's text of a footer's datetime
        return Timestamp.from_datetime(dt.datetime.fromisoformat(value))
    return value


def table_bands(metastore: Metastore, table: Table, names: list[str]) -> dict[str, dict[str, Band]]:
    """The table level's band of every figure of each column some partition got from a tiered ANALYZE
    (`estimators.merged_band`): the partitions read whole count as one owner, their union's figures exact (its
    NDV from their sketches); the tiered ones each with their own bands. Columns every partition read whole are
    left out: their figures are exact. One read of the partitions' parameters, one merge of the whole ones."""
    marked = metastore.catalog.partitions_holding(table.dbName, table.tableName, BOUNDS_PARAM, ["numRows"])
    if not marked:  # no partition analyzed by a tier: every figure of the table level is exact
        return {}
    params = metastore.catalog.get_partition_params(table.dbName, table.tableName, ["numRows"])
    entries = {name: tiered_columns(p) for name, p in marked.items()}
    rows = {name: int(p.get("numRows", 0) or 0) for name, p in params.items()}
    out: dict[str, dict[str, Band]] = {}
    types = {c.name: c.type for c in table.figure_columns}
    for column in names:
        tiered = {name: entry[column] for name, entry in entries.items() if column in entry}
        if not tiered:
            continue
        whole = [name for name in params if name not in tiered]
        owners: list[tuple[dict[str, Band], int]] = [
            ({figure: _comparable(Band.of(stored), figure, types.get(column, "")) for figure, stored
              in entry["figures"].items()}, rows[name]) for name, entry in tiered.items()]
        if whole:
            aggr = metastore.column_stats.get_aggr_stats_for(table.dbName, table.tableName, [column], part_names=whole,
                                                check_compliance=False)
            if aggr.exact:
                known = {figure: Band.known(_band_value(value)) for figure, value in _values(aggr.exact[0]).items()
                         if figure in _BANDED_FIGURES}
                owners.append((known, sum(rows[name] for name in whole)))
        figures = sorted({figure for bands, _ in owners for figure in bands})
        table_rows = sum(rows.values())
        nulls = [bands.get("nulls") for bands, _ in owners]
        non_null = table_rows - sum(b.high for b in nulls if b is not None and b.high is not None) \
            if all(b is not None and b.high is not None for b in nulls) else table_rows
        merged = {figure: merged_band(figure, [(bands[figure], weight) for bands, weight in owners
                                               if figure in bands], non_null if figure == "ndv" else None,
                                      _ranges(owners, types.get(column)) if figure == "ndv" else None)
                  for figure in figures}
        if "ndv" in merged and merged["ndv"].value is None and merged["ndv"].low and merged["ndv"].high:
            band = merged["ndv"]  # the middle of the band in ratio, as a partition's tier 0 gives (an NDV errs by a ratio)
            merged["ndv"] = Band(round(math.sqrt(band.low * band.high)), band.low, band.high, False, band.method)
        out[column] = {figure: band for figure, band in merged.items() if types.get(column) is not None}
    return out


# types whose minimum and maximum bound every value (floating ones leave NaN out, strings keep none)
_RANGED_APART = ("tinyint", "smallint", "int", "bigint", "date", "timestamp", "decimal")


def _ranges(owners: list[tuple[dict[str, Band], int]], type_name: str | None) -> list[tuple[Any, Any]] | None:
    """Each owner's values' range, of those with an NDV: the least its minimum may be and the greatest its maximum
    may be; None where one is unknown, or the type's extremes do not bound every value."""
    if type_name is None or parse_type(type_name).base not in _RANGED_APART:
        return None
    out = []
    for bands, _ in owners:
        if "ndv" not in bands:
            continue
        least, greatest = bands.get("min"), bands.get("max")
        low = None if least is None else (least.value if least.exact else least.low)
        high = None if greatest is None else (greatest.value if greatest.exact else greatest.high)
        if low is None or high is None:
            return None
        out.append((low, high))
    return out


_BANDED_FIGURES = ("nulls", "nans", "min", "max", "ndv", "avg_len", "max_len", "trues", "falses")


def _comparable(band: Band, figure: str, type_name: str) -> Band:
    """A tiered partition's band with its extremes in the JSON form a whole partition's take (`_band_value`): a
    tier keeps a footer's date or timestamp as its text, which no number compares with."""
    if figure not in ("min", "max"):
        return band
    value, low, high = (_band_value(figure_value(v, figure, type_name)) for v in (band.value, band.low, band.high))
    return Band(value, low, high, band.exact, band.method)


def _band_value(value):
    """A whole partition's figure in the JSON form bands keep (a date's days, a timestamp's microseconds)."""
    if isinstance(value, Date):
        return value.daysSinceEpoch
    if isinstance(value, Timestamp):
        return value.microsSinceEpoch
    if isinstance(value, Decimal):
        return float(value)
    return value


def _table_tiers(metastore: Metastore, table: Table) -> dict[str, str]:
    """Each column's tier at a partitioned table's level, in words: its partitions' tier, or "mixed"."""
    marked = metastore.catalog.partitions_holding(table.dbName, table.tableName, BOUNDS_PARAM)
    if not marked:
        return {}
    total = metastore.catalog.count_partitions(table.dbName, table.tableName)
    owners = {name: tiered_columns(p) for name, p in marked.items()}
    out = {}
    for column in {c for entry in owners.values() for c in entry}:
        tiers = {tier_said(entry.get(column)) for entry in owners.values()}
        if sum(column in entry for entry in owners.values()) < total:
            tiers.add("every value")  # some partitions read whole
        out[column] = tiers.pop() if len(tiers) == 1 else "mixed"
    return out


def distribution(metastore: Metastore, table: Table, column: str, partition: str | None = None
                 ) -> Distribution | None:
    """The KLL sketch of a column at the table level or in one partition (None without one)."""
    table.column_type(column)  # names an unknown column
    partition = _hive_level(partition)
    if partition in (None, TABLE_LEVEL):
        stats = metastore.column_stats.get_table_statistics(table.dbName, table.tableName, [column])
    else:
        stats = metastore.column_stats.get_partitions_statistics(table.dbName, table.tableName, [partition],
                                                                 [column]).get(partition)
    objs = stats.statsObj if stats else []
    return Distribution.of_stats(objs[0]) if objs else None


FREQUENT_COLUMNS = ["value", "rows", "lower", "upper", "share"]


def frequent_values_frame(metastore: Metastore, table: Table, column: str, partition: str | None = None
                          ) -> pd.DataFrame:
    """The values the frequent-items sketches kept with a column's statistics list (at the table level, merged
    over every partition; or in one), most rows first: the rows estimated, the bounds the true count lies within
    and the share of the non-NULL values counted. Empty when no sketch is kept (a near-unique column keeps none).
    Whether the statistics are accurate now is `stats()`'s to say."""
    type_name = table.column_type(column)
    partition = _hive_level(partition)
    sketches = metastore.column_stats.get_frequent_items(table.dbName, table.tableName, column,
                                            None if partition in (None, TABLE_LEVEL) else [partition])
    items = FrequentItems.merged(list(sketches.values()), type_name) if sketches else None
    if items is None or not items.rows:
        return pd.DataFrame(columns=FREQUENT_COLUMNS)
    return pd.DataFrame([(v.value, v.estimate, v.lower, v.upper, v.estimate / items.rows) for v in items.top()],
                        columns=FREQUENT_COLUMNS)


def quartiles_frame(metastore: Metastore, table: Table, column: str, limit: int = 60) -> pd.DataFrame:
    """Per partition (the last `limit` by name) its rows and the column's min, 5th percentile, quartiles,
    95th percentile and max from its sketch, in the column's type; partitions without a sketch are left
    out. One metastore read."""
    type_name = table.column_type(column)
    found = metastore.column_stats.partition_stats_columns(table.dbName, table.tableName, [column]).get(column.lower())
    records = []
    if found is not None:
        for name, rows, histogram in list(zip(found.parts, found.rows, found.histograms, strict=True))[-limit:]:
            sketch = Distribution.of(histogram, type_name)
            quartiles = sketch.quartiles() if sketch is not None else None
            if quartiles and sketch is not None:
                typed = [column_value(v, type_name) for v in
                         (sketch.low, sketch.quantile(0.05), *quartiles, sketch.quantile(0.95), sketch.high)]
                records.append([name, rows, *typed])
    return spelled_frame(pd.DataFrame(records, columns=QUARTILE_COLUMNS), table)


def _reason(summary: ComplianceSummary) -> str:
    """Why statistics are not accurate: the first owner's reason."""
    return summary.first[1] if summary.first else ""


def _table_level(summary: ComplianceSummary, table: Table) -> tuple[bool, str]:
    """Accurate at the table level when accurate for every partition (or the table itself)."""
    partitioned = table.is_partitioned
    if summary.accurate:
        return True, f"accurate in all {summary.owners:,} partitions" if partitioned else ""
    first, why = summary.first or (None, "")
    first = table.spelled_partition(first)
    if not partitioned:
        return False, why
    more = ", ..." if summary.not_accurate > 1 else ""
    return False, (f"not accurate in {summary.not_accurate:,} of {summary.owners:,} partitions "
                   f"({first}{more}): {why}")




# values: what the figures count, the rows but for an array's elements (`tags.element`), a map's entries
TIDY_COLUMNS = ["partition", "column", "type", "rows", "values", "min", "max", "nulls", "null_fraction", "nans", "ndv", "q1",
                "median", "q3", "avg_len", "max_len", "trues", "falses", "last_analyzed", "accurate", "reason", "tier",
                "estimated"]
BOUNDS_COLUMNS = ["partition", "column", "figure", "value", "low", "high", "exact", "method", "tier", "read"]


def stats_frame(metastore: Metastore, table: Table) -> pd.DataFrame:
    """Every statistic the metastore holds for the table: one row per partition and column (partition
    None: the table level, which for a partitioned table is the union of its partitions), columns
    TIDY_COLUMNS. `accurate` is for a reader now (HIVE-19416's rule, the files as analyzed for an
    external table), None where a column was never analyzed; `last_analyzed` is a UTC timestamp."""
    level, rows = level_frame(metastore, table, None)
    quartiles = [q if isinstance(q, list) else [None] * 3 for q in level["quartiles"]]
    level = level.assign(**{name: pd.Series([q[i] for q in quartiles], index=level.index, dtype=object)
                            for i, name in enumerate(("q1", "median", "q3"))})
    level = level.assign(estimated=[sorted(b) if isinstance(b, dict) and b else None for b in level["bands"]])
    frames = [level.drop(columns=["coverage", "bands"]).assign(partition=None, rows=rows)]
    frames[0]["values"] = [rows if v is None else v for v in level["values"]]
    partitions = metastore.catalog.get_partitions(table.dbName, table.tableName) if table.is_partitioned else []
    if table.is_partitioned:
        frames.append(_partitions_frame(metastore, table, partitions))
    frame = pd.concat(frames, ignore_index=True)
    frame["tier"] = _tiers(_tiered_owners(table, partitions), table, frame)
    frame["estimated"] = frame["estimated"].map(lambda v: v if isinstance(v, list) else None)
    frame = frame[TIDY_COLUMNS]
    _python_bounds(frame)
    frame["last_analyzed"] = pd.to_datetime(frame["last_analyzed"].astype("float64"), unit="s", utc=True)
    return spelled_frame(frame, table)


def _tiered_owners(table: Table, partitions: list[Partition]) -> dict[str | None, dict]:
    """Partition name (None: the table) -> column -> its tiered ANALYZE's entry (`estimators.tiered_columns`)."""
    owners: dict[str | None, dict] = {None: tiered_columns(table.parameters)}
    owners.update({p.partName: tiered_columns(p.parameters) for p in partitions})
    return owners


def tier_said(entry: dict | None) -> str:
    """A column's tier in words: "every value", "metadata" (no value read), "5 % sample (4.9 % of rows read)"."""
    if entry is None:
        return "every value"
    tier = Tier.of_label(entry["tier"])
    if tier.is_metadata:
        return "metadata"
    return f"{tier.label} sample ({entry['read']:.1%} of rows read)"


def _tiers(owners: dict[str | None, dict], table: Table, frame: pd.DataFrame) -> list[str]:
    """Each row's tier: "every value", "metadata" (no value read) or "5 % sample (4.9 % of rows read)". The table
    level of a partitioned table is "mixed" where its partitions' differ."""
    out = []
    for partition, column in zip(frame["partition"], frame["column"], strict=True):
        if partition is None and table.is_partitioned:
            tiers = {tier_said(owner.get(column)) for name, owner in owners.items() if name is not None}
            out.append(tiers.pop() if len(tiers) == 1 else "mixed" if tiers else "every value")
        else:
            out.append(tier_said(owners.get(partition, {}).get(column)))
    return out


def bounds_frame(metastore: Metastore, table: Table) -> pd.DataFrame:
    """The band of every figure a tiered ANALYZE computed: one row per partition, column and figure, columns
    BOUNDS_COLUMNS; `exact` figures have low = high = value (or none, for a minimum or maximum), estimates the
    band their `method` gives (None: unbounded on that side). Columns analyzed from every value have no rows."""
    records = []
    partitions = metastore.catalog.get_partitions(table.dbName, table.tableName) if table.is_partitioned else []
    owners = _tiered_owners(table, partitions)
    for partition, owner in owners.items():
        for column, entry in sorted(owner.items()):
            for figure, stored in sorted(entry["figures"].items()):
                band = Band.of(stored)
                records.append({"partition": partition, "column": column, "figure": figure, "value": band.value,
                                "low": band.low, "high": band.high, "exact": band.exact, "method": band.method,
                                "tier": entry["tier"], "read": entry["read"]})
    if table.is_partitioned and partitions:
        records += _table_level_bounds(metastore, table, owners)
    types = {c.name: c.type for c in table.figure_columns}
    for record in records:  # a date's and a timestamp's bounds as their type, as stats() shows them
        for side in ("value", "low", "high"):
            record[side] = _python_value(figure_value(record[side], record["figure"], types.get(record["column"], "")))
    frame = pd.DataFrame(records, columns=BOUNDS_COLUMNS, dtype=object)
    return spelled_frame(frame, table)


def _table_level_bounds(metastore: Metastore, table: Table, owners: dict[str | None, dict]) -> list[dict]:
    """The table level's band of every figure of each column some partition got from a tiered ANALYZE
    (`table_bands`): exact only where every partition's figure is."""
    parts = {name: owner for name, owner in owners.items() if name is not None}
    columns = sorted({column for owner in parts.values() for column in owner})
    records = []
    for column, bands in table_bands(metastore, table, columns).items():
        tiers = sorted({owner[column]["tier"] for owner in parts.values() if column in owner})
        every = any(column not in owner for owner in parts.values())
        for figure, band in sorted(bands.items()):
            records.append({"partition": None, "column": column, "figure": figure, "value": band.value,
                            "low": band.low if not band.exact else band.value,
                            "high": band.high if not band.exact else band.value, "exact": band.exact,
                            "method": band.method, "tier": ", ".join(tiers + (["every value"] if every else [])),
                            "read": None})
    return records


def _partitions_frame(metastore: Metastore, table: Table, partitions: list[Partition]) -> pd.DataFrame:
    """stats_frame's rows of every partition: three reads of the metastore whatever the number of partitions."""
    columns = table.figure_columns
    names = [c.name for c in columns]
    db, name = table.dbName, table.tableName
    stats = metastore.column_stats.get_partitions_statistics(db, name, None, names) if names else {}
    verdicts = metastore.accuracy.per_column_compliance(db, name, [[n] for n in names])
    rows = {p.partName: int(p.parameters.get("numRows", 0) or 0) for p in partitions}
    tiered = {p.partName: tiered_columns(p.parameters) for p in partitions}
    records = []
    for partition in sorted(rows):
        held = {o.colName: o for o in stats[partition].statsObj} if partition in stats else {}
        types = {c.name: c.type for c in columns}
        for column, (accurate, why) in zip(columns, verdicts.get(partition, []), strict=True):
            record: dict[str, Any] = dict.fromkeys(TIDY_COLUMNS)
            record.update(partition=partition, column=column.name, type=column.type, rows=rows[partition])
            obj = held.get(column.name)
            if obj is None:
                record.update(accurate=None, reason="never analyzed")
            else:
                record.update(_values(obj), last_analyzed=stats[partition].statsDesc.lastAnalyzed,
                              accurate=accurate, reason=why)
                counted = rows[partition] if obj.numValues is None else obj.numValues
                record["values"] = counted
                record["null_fraction"] = record["nulls"] / counted if counted else 0.0
                entry = tiered[partition].get(column.name)
                if entry is not None:
                    with_bands(record, {f: Band.of(b) for f, b in entry["figures"].items()}, types[column.name],
                               counted)
            record.pop("bands", None)
            records.append(record)
    return pd.DataFrame(records, columns=TIDY_COLUMNS, dtype=object)


FRESHNESS_COLUMNS = ["partition", "column", "accurate", "reason"]


@dataclass(frozen=True)
class StatsLevel:
    """One level of a table as the statistics view shows it: a row per column (`level_frame`), the rows they
    cover, the level's basic parameters read now (writes since count), and its rows changed since its
    statistics were last accurate, in words (for an external table: its files changed since analyzed)."""
    frame: pd.DataFrame
    rows: int
    parameters: dict
    changed: str
    partition: Partition | None  # None: the table level


def stats_level(metastore: Metastore, table: Table, level: str = TABLE_LEVEL) -> StatsLevel:
    level = _hive_level(level) or TABLE_LEVEL
    frame, rows = level_frame(metastore, table, level)
    db, name = table.dbName, table.tableName
    partition = metastore.catalog.get_partition(db, name, level) if level != TABLE_LEVEL else None
    params = (partition or metastore.catalog.get_table(db, name)).parameters
    if kind_of(table).written_elsewhere:
        changed = _external_change(metastore, table, partition, params)
    elif partition is None and table.is_partitioned:
        changed = describe_summed(*metastore.catalog.changed_rows_summed(db, name, ROWS_CHANGED))
    else:
        changed = describe_change(params)
    return StatsLevel(frame, rows, params, changed, partition)


def _external_change(metastore: Metastore, table: Table, partition: Partition | None, params: dict) -> str:
    """Another job writes an external table's files, so its rows changed are not counted; one directory's
    files are compared with those last analyzed (a whole partitioned table's would mean listing every
    partition to draw a header)."""
    if partition is None and table.is_partitioned:
        return "not counted for an external table; each partition's files are compared with those analyzed"
    if COLUMN_STATS_ACCURATE not in params:
        return "never analyzed"
    owner = None if partition is None else partition.partName
    location = table.location if partition is None else partition.location
    moved = metastore.accuracy.external_file_changes(table, {owner: location})
    return moved.get(owner, "none: its files are those last analyzed")


def freshness_frame(metastore: Metastore, table: Table) -> pd.DataFrame:
    """stats_frame's `partition, column, accurate, reason` without the figures: per partition (TABLE_LEVEL
    for an unpartitioned table) and column, whether its statistics are accurate for a reader now (None:
    never analyzed) and why not. Two reads of the metastore, so 10,000 partitions are judged at once."""
    if not table.is_partitioned:
        level, _ = level_frame(metastore, table, None)
        return spelled_frame(level.assign(partition=TABLE_LEVEL)[FRESHNESS_COLUMNS], table)
    names = [c.name for c in table.figure_columns]
    db, name = table.dbName, table.tableName
    verdicts = metastore.accuracy.per_column_compliance(db, name, [[n] for n in names])
    analyzed = metastore.column_stats.analyzed_partition_columns(db, name)
    held = [analyzed.get(column.lower(), set()) for column in names]  # None: every partition holds them
    records = [(partition, column, accurate, why) if holders is None or partition in holders
               else (partition, column, None, "never analyzed")
               for partition in sorted(verdicts, key=lambda name: name or "")
               for column, holders, (accurate, why) in zip(names, held, verdicts[partition], strict=True)]
    return spelled_frame(pd.DataFrame.from_records(records, columns=FRESHNESS_COLUMNS), table)


TRANSACTION_COLUMNS = ["txn_id", "state", "write_id", "started", "user", "host", "operations", "partitions",
                       "stats_writer_of", "valid_for_readers"]


def transactions_frame(metastore: Metastore, table: Table, limit: int = 200) -> pd.DataFrame:
    """The latest `limit` transactions that took a write ID of the table, newest first: their state, write
    ID, start (UTC), who, what they wrote (insert, statistics, drop; how many partitions), what they are
    still the statistics writer of (HIVE-19416: the partitions, or the table, whose statistics state they
    set last, accurate or not) and whether readers now see their write (the table's ValidWriteIdList)."""
    valid = metastore.txns.get_valid_write_ids(table.dbName, table.tableName)
    records = []
    for t in metastore.txns.table_transactions(table.dbName, table.tableName, limit):
        touched = t["partitions"] + int(t["table_level"])
        left = [f"{t['partitions_with_its_statistics']:,} partition(s)"] if t["partitions_with_its_statistics"] else []
        left += ["the table"] if t["table_statistics"] else []
        records.append({
            "txn_id": t["txn_id"], "state": t["state"], "write_id": t["write_id"],
            "started": pd.Timestamp(t["started"], unit="s", tz="UTC").floor("s"),
            "user": t["user"], "host": f"{t['host']} (pid {t['pid']})",
            "operations": ", ".join(t["operations"]) or "none recorded",
            "partitions": touched if table.is_partitioned else None,
            "stats_writer_of": ", ".join(left), "valid_for_readers": valid.is_write_id_valid(t["write_id"]),
        })
    return pd.DataFrame.from_records(records, columns=TRANSACTION_COLUMNS)


def groups_frame(groups: dict, columns: list[tuple[str, str]], keys: list[str]) -> pd.DataFrame:
    """stats_frame's rows for statistics computed but not stored (`Lab.analyze_frame`): `groups` as
    aggregate_stats returns them, one per value of `keys` (partition None without keys), of `columns`
    as (name, Hive type). Nothing stored can go stale, so `accurate` is None and `reason` says why."""
    records = []
    for values, group in sorted(groups.items(), key=lambda item: tuple("" if v is None else v for v in item[0])):
        partition = make_part_name(keys, list(values)) if keys else None
        for (name, type_name), obj in zip(columns, group.columns, strict=True):
            record = dict.fromkeys(TIDY_COLUMNS)
            counted = group.num_rows if obj.numValues is None else obj.numValues
            record.update(partition=partition, column=name, type=type_name, rows=group.num_rows, values=counted,
                          **_values(obj), accurate=None, reason="computed from a DataFrame, not stored")
            record["null_fraction"] = record["nulls"] / counted if counted else 0.0
            records.append(record)
    frame = pd.DataFrame(records, columns=TIDY_COLUMNS, dtype=object)
    _python_bounds(frame)
    frame["last_analyzed"] = pd.Timestamp.now(tz="UTC").floor("s")
    return frame


def _python_bounds(frame: pd.DataFrame) -> None:
    """min, max and the quartiles as Python values in an object column: a column of ints stays ints, None
    stays None."""
    for bound in ("min", "max", "q1", "median", "q3"):
        frame[bound] = pd.Series([_python_value(v) for v in frame[bound]], index=frame.index, dtype=object)


def _python_value(value):
    """Hive's Date and Timestamp statistics as Python's date and (UTC) datetime; others as they are."""
    if isinstance(value, Date):
        return value.to_date()
    if isinstance(value, Timestamp):
        return value.to_datetime()
    return value


def table_kind(table: Table) -> str:
    return kind_of(table).label(table)


LANDING_COLUMNS = ["database", "table", "kind", "partitions", "files", "rows", "rows_band", "bytes",
                   "accurate_columns", "columns", "stale_partitions", "stale_reason", "last_analyzed", "last_write",
                   "metadata_level"]


def rows_band(level: pd.DataFrame) -> list | None:
    """The band of a level's row count ([low, high, method]) where a tier left it inexact (Iceberg's equality
    deletes under NOSCAN), from its columns' bands; None where it is exact."""
    if "bands" not in level:
        return None
    return next((bands["rows"] for bands in level["bands"] if isinstance(bands, dict) and "rows" in bands), None)


def tables_frame(metastore: Metastore) -> pd.DataFrame:
    """Every table of every database at a glance, the stalest first: its kind and size, how many of its
    columns have statistics accurate now (rows: as last analyzed, an Iceberg or Delta table's record counts
    now, None for other files never analyzed; rows_band the band of an estimated count), how many partitions
    (or the table itself) hold statistics that are not, with the first reason, when it was last analyzed, when
    the lab last wrote it (None for an external table: other jobs write it) and its Drill metadata level. Reads
    the metastore (and an external table's file listings) alone."""
    records = []
    writes = metastore.txns.last_writes()
    for db in metastore.catalog.get_all_databases():
        for name in metastore.catalog.get_tables(db):
            table = metastore.catalog.get_table(db, name)
            level, _ = level_frame(metastore, table, None)
            names = list(level["column"])
            summary = metastore.accuracy.stats_compliance_summary(db, name, names) if names else None
            analyzed = pd.to_numeric(level["last_analyzed"], errors="coerce").max()
            analysis = metastore.table_metadata.get_metadata_analysis(db, name)
            params = table.parameters
            counted = kind_of(table).record_count(metastore, table, None)  # a format's count is exact now
            records.append({
                "database": db, "table": name, "kind": table_kind(table),
                "partitions": int(params.get("numPartitions", 0) or 0) if table.is_partitioned else None,
                "files": int(params.get("numFiles", 0) or 0),
                # another job's files never analyzed have rows nobody counted yet (numRows 0 is Hive's placeholder)
                "rows": counted[0] if counted else None if (
                    kind_of(table).written_elsewhere and pd.isna(analyzed) and not int(params.get("numRows", 0) or 0)
                ) else int(params.get("numRows", 0) or 0),
                "rows_band": None if counted else rows_band(level),
                "bytes": int(params.get("totalSize", 0) or 0),
                "accurate_columns": int(sum(a is True for a in level["accurate"])), "columns": len(names),
                # statistics never computed are not stale: nothing was analyzed to go out of date
                "stale_partitions": summary.not_accurate if summary and not pd.isna(analyzed) else 0,
                "stale_reason": (f"{table.spelled_partition(summary.first[0])}: {summary.first[1]}"
                                 if summary.first[0] else summary.first[1])
                if summary and summary.first else None,
                "last_analyzed": None if pd.isna(analyzed) else pd.Timestamp(int(analyzed), unit="s", tz="UTC"),
                "last_write": None if (db, name) not in writes else pd.Timestamp(writes[db, name], unit="s", tz="UTC"),
                "metadata_level": analysis.level if analysis else None,
            })
    frame = pd.DataFrame.from_records(records, columns=LANDING_COLUMNS).astype({"partitions": "Int64"})
    # the stalest first: statistics gone stale, then never analyzed, then the oldest analyze
    order = pd.DataFrame({"stale": -frame["stale_partitions"].fillna(0),
                          "missing": frame["accurate_columns"] - frame["columns"],
                          "analyzed": frame["last_analyzed"].map(lambda t: 0 if t is None or pd.isna(t) else t.value)})
    return frame.loc[order.sort_values(["stale", "missing", "analyzed"], kind="stable").index].reset_index(drop=True)


def report_data(metastore: Metastore, table: Table, frame: pd.DataFrame | None = None) -> dict:
    """The table's report as plain data (what `lab.tables[t].report("x.json")` writes): its kind, size and
    statistics per partition and column (`frame`, the table's stats_frame, when the caller has it), and
    its Drill metadata's units per level when it has any."""
    params = table.parameters
    frame = stats_frame(metastore, table) if frame is None else frame
    stored = metastore.table_metadata.get_table_metadata(table.dbName, table.tableName)
    return {
        "table": table.qualified_name,
        "kind": table_kind(table),
        "transactional": params.get("transactional", "false") == "true",
        "partition_keys": [table.spelled(k) for k in table.partition_key_names],
        "partitions": int(params.get("numPartitions", 0) or 0) if table.is_partitioned else None,
        "rows": int(params.get("numRows", 0) or 0),
        "rows_band": rows_band(level_frame(metastore, table, None)[0]),
        "files": int(params.get("numFiles", 0) or 0),
        "bytes": int(params.get("totalSize", 0) or 0),
        "skewed_by": None if table.skewedInfo is None else {"columns": table.skewedInfo.skewedColNames,
                                                            "values": table.skewedInfo.skewedColValues},
        "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "statistics": [{key: plain(value) for key, value in record.items()} for record in frame.to_dict("records")],
        "metadata_levels": None if stored is None else
        dict(Counter(unit.type for unit in stored.units)),
    }


def plain(value):
    """A value JSON takes as it is: NaN and NaT as None, timestamps and dates as ISO text, decimals as text
    (exact), numpy scalars as Python's."""
    if value is None or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, (pd.Timestamp, dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if hasattr(value, "item"):  # numpy scalars
        return plain(value.item())
    return value


HISTORY_COLUMNS = ["recorded_at", "txn_id", "write_id", "cause", "rows", "nulls", "null_fraction", "nans", "ndv", "min",
                   "max", "q1", "median", "q3", "top_values", "psi", "last_analyzed"]
ACROSS_COLUMNS = ["partition", *HISTORY_COLUMNS, "accurate", "reason"]


def _state_records(pairs, owner_column: bool) -> list[dict]:
    """One record per (owner, state), in order: its figures (HISTORY_COLUMNS) and its PSI against the
    record before it."""
    records = []
    previous = None
    for owner, state in pairs:
        figures = _values(state.stats)
        shift: float | None = None if previous is None else drift.states_psi(previous.stats, state.stats, previous.top_values,
                                                               state.top_values, previous.bins, state.kept_psi)
        if "q1" not in figures and state.quantiles and state.quantiles.get("quartiles"):  # thinned: kept apart
            figures["q1"], figures["median"], figures["q3"] = [column_value(q, state.stats.colType)
                                                               for q in state.quantiles["quartiles"]]
        previous = state
        records.append({
            **({"partition": owner} if owner_column else {}),
            "recorded_at": state.recorded_at, "txn_id": state.txn_id, "write_id": state.write_id,
            "cause": state.cause or "a direct metastore call", "rows": state.rows, "nulls": figures["nulls"],
            "null_fraction": drift.null_fraction(state.stats, state.rows), "nans": figures.get("nans"),
            "ndv": figures.get("ndv"),
            "min": figures.get("min"), "max": figures.get("max"), "q1": figures.get("q1"),
            "median": figures.get("median"), "q3": figures.get("q3"),
            "top_values": None if state.top_values is None else list(state.top_values.values), "psi": shift,
            "last_analyzed": state.last_analyzed})
    return records


def _states_frame(records: list[dict], columns: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(records, columns=columns, dtype=object)
    _python_bounds(frame)
    for moment in ("recorded_at", "last_analyzed"):
        frame[moment] = pd.to_datetime(frame[moment].astype("float64"), unit="s", utc=True)
    return frame


def history_frame(metastore: Metastore, table: Table, column: str, partition: str | None = None,
                  source: str = "statistics") -> pd.DataFrame:
    """Every kept state of a column's statistics (or, with source "metadata", of its REFRESH METADATA
    figures) at the table level or in one partition, oldest first: when it was stored, by which
    transaction and write ID and why, and its figures (HISTORY_COLUMNS); `psi` is against the state
    before it (None for the first, or without sketches or top values on both)."""
    states = metastore.stats_history.get_stats_history(table.dbName, table.tableName, column, _hive_level(partition),
                                         engine_of(source))
    return _states_frame(_state_records(states, False), HISTORY_COLUMNS)


def across_partitions_frame(metastore: Metastore, table: Table, column: str, limit: int = 365) -> pd.DataFrame:
    """The latest kept state of a column in each of the last `limit` partitions by name, in name order:
    HISTORY_COLUMNS with the partition first, `psi` against the partition before it (a day against the
    day before, for daily partitions), and whether that state is accurate for a reader now and why not (a
    partition written since without gathering keeps a state that no longer describes it)."""
    states = metastore.stats_history.get_latest_partition_states(table.dbName, table.tableName, column, limit)
    records = _state_records(states, True)
    if records:
        verdicts = metastore.accuracy.per_column_compliance(table.dbName, table.tableName, [[column]],
                                                   part_names=[r["partition"] for r in records])
        for record in records:
            [(record["accurate"], record["reason"])] = verdicts.get(record["partition"], [(None, "dropped")])
    return spelled_frame(_states_frame(records, ACROSS_COLUMNS), table)


COMPARE_COLUMNS = ["partition", "column", "write_id_then", "write_id_now", "rows_then", "rows_now",
                   "null_fraction_then", "null_fraction_now", "null_fraction_change", "ndv_then", "ndv_now",
                   "ndv_change", "min_then", "min_now", "new_min", "max_then", "max_now", "new_max", "psi",
                   "hitters_entering", "hitters_leaving"]


def compare_frame(metastore: Metastore, table: Table, then, now=None, source: str = "statistics") -> pd.DataFrame:
    """Per partition (None: the table level) and column, the state kept at `then` against the one at `now`
    (the latest when None): a write ID (an int) picks the last state stored by that write or before it,
    a time (datetime, or ISO text; UTC when naive) the last stored by then. Cells without a state at both
    are left out. The measures are metastore.drift's (COMPARE_COLUMNS); source "metadata" compares the
    states REFRESH METADATA kept."""
    pick_then, pick_now = state_picker(then), state_picker(now)
    engine = engine_of(source)
    cells: dict[tuple, list] = {}
    for owner, state in metastore.stats_history.get_stats_history(table.dbName, table.tableName, None, False, engine):
        cells.setdefault((owner, state.stats.colName), []).append(state)
    order = {c.name.lower(): i for i, c in enumerate(table.cols)}
    records = []
    for (owner, column), states in sorted(cells.items(), key=lambda item: (item[0][0] is not None, item[0][0] or "",
                                                                           order.get(item[0][1], 0))):
        earlier, later = pick_then(states), pick_now(states)
        if earlier is None or later is None:
            continue
        change = drift.compare(earlier.stats, earlier.rows, later.stats, later.rows, earlier.top_values,
                               later.top_values)
        records.append({
            "partition": owner, "column": column, "write_id_then": earlier.write_id, "write_id_now": later.write_id,
            "rows_then": earlier.rows, "rows_now": later.rows, "null_fraction_then": change.null_fraction_then,
            "null_fraction_now": change.null_fraction_now, "null_fraction_change": change.null_fraction_change,
            "ndv_then": change.ndv_then, "ndv_now": change.ndv_now, "ndv_change": change.ndv_change,
            "min_then": _python_value(change.min_then), "min_now": _python_value(change.min_now),
            "new_min": change.new_min, "max_then": _python_value(change.max_then),
            "max_now": _python_value(change.max_now), "new_max": change.new_max, "psi": change.psi,
            "hitters_entering": [_python_value(v) for v in change.hitters_entering],
            "hitters_leaving": [_python_value(v) for v in change.hitters_leaving]})
    return spelled_frame(pd.DataFrame(records, columns=COMPARE_COLUMNS, dtype=object), table)


EXPECTATION_COLUMNS = ["expectation_id", "column", "rule", "threshold", "partition", "write_id", "recorded_at",
                       "figure", "passed", "checked_at"]


def expectations_frame(metastore: Metastore, table: Table, expectation_id: int | None = None) -> pd.DataFrame:
    """Every stored outcome of the table's rules (or of one expectation), oldest state first: the rule and
    its threshold, the state checked (partition None: the table level; its write ID and when it was
    stored, UTC), the figure and whether it passed."""
    records = [r for r in metastore.stats_expectations.expectation_results(table.dbName, table.tableName)
               if expectation_id is None or r["expectation_id"] == expectation_id]
    frame = pd.DataFrame(records, columns=EXPECTATION_COLUMNS)
    for moment in ("recorded_at", "checked_at"):
        frame[moment] = pd.to_datetime(frame[moment].astype("float64"), unit="s", utc=True)
    return spelled_frame(frame, table)
