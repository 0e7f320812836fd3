"""Drill-style table metadata in the metastore: the last `ANALYZE ... REFRESH METADATA` of a table and
its metadata units (TABLE, SEGMENT, PARTITION, FILE, ROW_GROUP), each with per-column statistics.

A unit's statistics keep each type's own value (days for dates, microseconds for timestamps, text
for decimals and NaN) so that upper levels merge exactly; MIN_VAL/MAX_VAL are the text shown by
INFORMATION_SCHEMA. Units above FILE record the files they were computed from (path, bytes,
modification time) so a later ANALYZE can tell what changed without reading anything.
"""
from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass, field
from decimal import Decimal

from ...coltypes import StatsKind, parse_type
from ...column_statistics.merge import merged_range
from ...column_statistics.model import STATS_DATA_CLASSES, ColumnStatisticsData, ColumnStatisticsObj, Date, Timestamp
from ...column_statistics.quantiles import merge as merge_histograms
from ...column_statistics.quantiles import sketch_family
from ...column_statistics.sketches import sketch_ndv, union
from ...column_statistics.stats_rows import ROW_COLUMNS, figures_to_values
from ...files import FileState
from .hive_rows import DRILL
from .levels import METADATA_LEVELS, Level

LEVELS = tuple(level.drill_name for level in METADATA_LEVELS)  # as metadata units store their type


def level_depth(level: str) -> int:
    """TABLE 0 ... ROW_GROUP 4; ALL means ROW_GROUP. Raises naming an unknown level."""
    return METADATA_LEVELS.index(Level.of_metadata(level))


@dataclass
class ColumnMetadata:
    """One column's statistics in one unit; low/high in the type's own values, None when unknown."""

    name: str
    type: str
    low: object = None
    high: object = None
    nulls: int | None = None
    non_nulls: float | None = None
    ndv: float | None = None
    sketch: bytes | None = None
    estimated: bool = False
    histogram: bytes | None = None  # a KLL sketch of the values (metastore.quantiles), over every row

    def as_statistics(self) -> ColumnStatisticsObj:
        """The same figures as Hive's statistics object, which the history keeps: what Drill does not
        count (lengths, trues and falses) or does not know is None, and strings keep no min/max."""
        kind = parse_type(self.type).stored_stats_kind
        data_class = STATS_DATA_CLASSES[kind]
        ndv = None if self.ndv is None else round(self.ndv)
        figures: dict[str, object] = {"numNulls": self.nulls, "bitVectors": self.sketch}
        if kind is StatsKind.STRING:
            figures.update(maxColLen=None, avgColLen=None, numDVs=ndv)
        elif kind is StatsKind.BINARY:
            figures.update(maxColLen=None, avgColLen=None)
        elif kind is StatsKind.BOOLEAN:
            figures.update(numTrues=None, numFalses=None)
        else:
            low, high = self.low, self.high
            if kind in (StatsKind.DATE, StatsKind.TIMESTAMP) and low is not None:
                wrap = Date if kind is StatsKind.DATE else Timestamp
                low, high = wrap(low), wrap(high)  # type: ignore[arg-type]  # days or microseconds, as kept
            figures.update(lowValue=low, highValue=high, numDVs=ndv, histogram=self.histogram)
        data = data_class(**figures)
        return ColumnStatisticsObj(self.name, parse_type(self.type).name, ColumnStatisticsData.of(data))


@dataclass
class MetadataUnit:
    type: str  # one of LEVELS
    identifier: str  # '' for the table, a segment's or partition's path, a file's path [+ ':rg']
    key: str | None = None  # the top-level segment it belongs to
    part_name: str | None = None  # Hive partition it belongs to
    partition_column: str | None = None  # a segment's own key
    partition_value: str | None = None
    partition_values: dict[str, str | None] | None = None  # a partition's keys and values
    location: str | None = None
    path: str | None = None
    row_group: int | None = None
    rows: int = 0
    bytes: int = 0
    last_modified: int | str | None = None  # ms since the epoch; an object store's file: its ETag
    files: list[FileState] | None = None
    columns: dict[str, ColumnMetadata] = field(default_factory=dict)
    estimated: bool = False
    # the stored row it was loaded from: a refresh that keeps the unit as it is keeps that row too
    unit_id: int | None = field(default=None, compare=False)

    @property
    def depth(self) -> int:
        return LEVELS.index(self.type)

    def describes_file(self, state: FileState) -> bool:
        """A FILE (or ROW_GROUP) unit computed from the file as it is now."""
        return (self.path, self.bytes, self.last_modified) == tuple(state)

    def describes_files(self, states) -> bool:
        """A unit above FILE computed from exactly these files as they are now."""
        return {tuple(s) for s in self.files or []} == {tuple(s) for s in states}


@dataclass
class MetadataAnalysis:
    """What the last ANALYZE ... REFRESH METADATA collected: the level, the interesting columns,
    COMPUTE or ESTIMATE, the sample percentage; version grows by one at every refresh."""

    level: str
    columns: list[str]
    statistics: list[str] = field(default_factory=list)  # columns with NDV and estimated non-nulls
    mode: str | None = None  # COMPUTE or ESTIMATE, None without a STATISTICS clause
    sample_percent: float | None = None
    analyzed_at: int = 0
    version: int = 0
    histograms: bool = False  # KLL sketches gathered (hive.stats.kll.enable)


@dataclass
class TableMetadata:
    analysis: MetadataAnalysis
    units: list[MetadataUnit]

    def of_type(self, level: str) -> list[MetadataUnit]:
        return [u for u in self.units if u.type == level]

    def to_pandas(self, level: str | None = None, file_times: bool = True):
        """One row per unit and column, levels from TABLE down: level, identifier, rows, bytes,
        last_modified (UTC), column, min, max, nulls, ndv, est_non_nulls, estimated. Without `file_times` (a
        table format's files, which a unit tells apart by the snapshot that added them), last_modified is None."""
        import pandas as pd

        records = []
        units = sorted((u for u in self.units if level is None or u.type == level.upper()),
                       key=lambda u: (u.depth, u.identifier))
        for u in units:
            # an object store's file is told apart by its ETag, kept where a local file's time is: no time to show
            modified = pd.to_datetime(u.last_modified, unit="ms") if isinstance(u.last_modified, int) and file_times \
                else None
            for c in u.columns.values() or [None]:
                records.append({"level": u.type, "identifier": u.identifier, "rows": u.rows, "bytes": u.bytes,
                                "last_modified": modified, "column": c.name if c else None,
                                "min": display_value(c.low, c.type) if c else None,
                                "max": display_value(c.high, c.type) if c else None,
                                "nulls": c.nulls if c else None, "ndv": c.ndv if c else None,
                                "est_non_nulls": c.non_nulls if c else None,
                                "estimated": bool(c.estimated) if c else u.estimated})
        return pd.DataFrame.from_records(records, columns=["level", "identifier", "rows", "bytes", "last_modified",
                                                           "column", "min", "max", "nulls", "ndv", "est_non_nulls",
                                                           "estimated"])


# integers, dates (days) and timestamps (microseconds): what a PostgreSQL metastore keeps as their text
_WHOLE_NUMBER_BASES = {"tinyint", "smallint", "int", "bigint", "date", "timestamp", "timestamp_ntz"}


def encode_value(value, type_name: str):
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return "NaN"  # SQLite stores a NaN REAL as NULL
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bool):
        return int(value)
    return value


def decode_value(value, type_name: str):
    if value is None:
        return None
    base = parse_type(type_name).base
    if isinstance(value, str) and base in _WHOLE_NUMBER_BASES:  # kept as text where columns have a type
        return int(value)
    if isinstance(value, str) and base == "binary" and value.startswith("\\x"):
        return bytes.fromhex(value[2:])
    if base == "decimal":
        return Decimal(value)
    if base in ("float", "double"):
        return float(value)
    if base == "boolean":
        return bool(value)
    return value


def display_value(value, type_name: str) -> str | None:
    """A statistic's value as INFORMATION_SCHEMA shows it: `2026-11-21`, `2026-11-21 10:00:00.000000`, `aaa`."""
    if value is None:
        return None
    base = parse_type(type_name).base
    if base == "date":
        return str(Date(value))
    if base == "timestamp":
        return Timestamp(value).to_datetime().strftime("%Y-%m-%d %H:%M:%S.%f")
    if base == "boolean":
        return "true" if value else "false"
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return str(value)


def load_metadata_analysis(conn, tbl_id: int) -> MetadataAnalysis | None:
    """What the last refresh collected, without its units."""
    row = conn.execute("SELECT * FROM METADATA_ANALYSES WHERE TBL_ID = ?", (tbl_id,)).fetchone()
    if row is None:
        return None
    columns = json.loads(row["INTERESTING_COLUMNS"])
    return MetadataAnalysis(row["METADATA_LEVEL"], columns["columns"], columns["statistics"],
                            row["STATISTICS_MODE"] or None, row["SAMPLE_PERCENT"], row["ANALYZED_AT"],
                            row["METADATA_VERSION"], bool(columns.get("histograms")))


def load_table_metadata(conn, tbl_id: int) -> TableMetadata | None:
    analysis = load_metadata_analysis(conn, tbl_id)
    if analysis is None:
        return None
    units: dict[int, MetadataUnit] = {}
    for r in conn.execute("SELECT * FROM METADATA_UNITS WHERE TBL_ID = ? ORDER BY UNIT_ID", (tbl_id,)):
        units[r["UNIT_ID"]] = MetadataUnit(
            r["METADATA_TYPE"], r["METADATA_IDENTIFIER"], r["METADATA_KEY"], r["PART_NAME"], r["PARTITION_COLUMN"],
            r["PARTITION_VALUE"], json.loads(r["PARTITION_VALUES"]) if r["PARTITION_VALUES"] else None,
            r["LOCATION"], r["PATH"], r["ROW_GROUP_INDEX"], r["ROW_COUNT"], r["BYTES"], r["LAST_MODIFIED_TIME"],
            [tuple(f) for f in json.loads(r["FILES"])] if r["FILES"] else None, {}, bool(r["ESTIMATED"]), r["UNIT_ID"])
    for r in conn.execute("SELECT S.* FROM METADATA_COLUMN_STATS S JOIN METADATA_UNITS U ON U.UNIT_ID = S.UNIT_ID "
                          "WHERE U.TBL_ID = ?", (tbl_id,)):
        type_name = r["COLUMN_TYPE"]
        units[r["UNIT_ID"]].columns[r["COLUMN_NAME"]] = ColumnMetadata(
            r["COLUMN_NAME"], type_name, decode_value(r["LOW_VALUE"], type_name), decode_value(r["HIGH_VALUE"], type_name),
            r["NULLS_COUNT"], r["NON_NULLS_COUNT"], r["NDV"], r["BIT_VECTOR"], bool(r["ESTIMATED"]), r["HISTOGRAM"])
    return TableMetadata(analysis, list(units.values()))


def replace_table_metadata(conn, tbl_id: int, analysis: MetadataAnalysis, units: list[MetadataUnit]) -> int:
    """Replaces the table's metadata with these units (inside the caller's transaction); returns the
    new metadata version. A unit loaded from the table's stored metadata and kept as it was (its `unit_id`)
    keeps its row; every other row is replaced."""
    previous = conn.execute("SELECT METADATA_VERSION FROM METADATA_ANALYSES WHERE TBL_ID = ?", (tbl_id,)).fetchone()
    version = (previous[0] if previous else 0) + 1
    stored = {r[0] for r in conn.execute("SELECT UNIT_ID FROM METADATA_UNITS WHERE TBL_ID = ?", (tbl_id,))}
    kept = {u.unit_id for u in units if u.unit_id is not None} & stored
    conn.executemany("DELETE FROM METADATA_UNITS WHERE UNIT_ID = ?", [(i,) for i in stored - kept])
    conn.execute("INSERT INTO METADATA_ANALYSES (TBL_ID, METADATA_LEVEL, INTERESTING_COLUMNS, "
                 "STATISTICS_MODE, SAMPLE_PERCENT, ANALYZED_AT, METADATA_VERSION) VALUES (?, ?, ?, ?, ?, ?, ?) "
                 "ON CONFLICT (TBL_ID) DO UPDATE SET METADATA_LEVEL = excluded.METADATA_LEVEL, "
                 "INTERESTING_COLUMNS = excluded.INTERESTING_COLUMNS, STATISTICS_MODE = excluded.STATISTICS_MODE, "
                 "SAMPLE_PERCENT = excluded.SAMPLE_PERCENT, ANALYZED_AT = excluded.ANALYZED_AT, "
                 "METADATA_VERSION = excluded.METADATA_VERSION",
                 (tbl_id, analysis.level, json.dumps({"columns": analysis.columns, "statistics": analysis.statistics,
                                                      "histograms": analysis.histograms}),
                  analysis.mode or "", analysis.sample_percent,
                  analysis.analyzed_at, version))
    stats_rows = []
    for unit in units:
        if unit.unit_id in kept:
            continue
        unit_id = conn.execute(
            "INSERT INTO METADATA_UNITS (TBL_ID, METADATA_TYPE, METADATA_KEY, METADATA_IDENTIFIER, PART_NAME, "
            "PARTITION_COLUMN, PARTITION_VALUE, PARTITION_VALUES, LOCATION, PATH, ROW_GROUP_INDEX, ROW_COUNT, BYTES, "
            "LAST_MODIFIED_TIME, FILES, ESTIMATED) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING UNIT_ID",
            (tbl_id, unit.type, unit.key, unit.identifier, unit.part_name, unit.partition_column,
             unit.partition_value, json.dumps(unit.partition_values) if unit.partition_values is not None else None,
             unit.location, unit.path, unit.row_group, unit.rows, unit.bytes, unit.last_modified,
             json.dumps(unit.files) if unit.files is not None else None, int(unit.estimated))).fetchone()[0]
        for c in unit.columns.values():
            stats_rows.append((unit_id, c.name, c.type, encode_value(c.low, c.type), encode_value(c.high, c.type),
                               display_value(c.low, c.type), display_value(c.high, c.type), c.nulls, c.non_nulls,
                               c.ndv, c.sketch, int(c.estimated), c.histogram))
    conn.executemany("INSERT INTO METADATA_COLUMN_STATS (UNIT_ID, COLUMN_NAME, COLUMN_TYPE, LOW_VALUE, HIGH_VALUE, "
                     "MIN_VAL, MAX_VAL, NULLS_COUNT, NON_NULLS_COUNT, NDV, BIT_VECTOR, ESTIMATED, HISTOGRAM) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", stats_rows)
    record_metadata_history(conn, tbl_id, units, analysis.analyzed_at)
    return version


def record_metadata_history(conn, tbl_id: int, units: list[MetadataUnit], analyzed_at: int) -> None:
    """Keeps, as DRILL states, the column figures of the TABLE unit and of each partition's unit (a PARTITION
    unit, else the SEGMENT of the partition's whole path) a REFRESH METADATA stored, with the commit that
    stored them (STATS_HISTORY_CONTEXT) and the rows each unit counted."""
    owners: dict[str | None, MetadataUnit] = {}
    for unit in units:
        if unit.type == "TABLE":
            owners[None] = unit
        elif unit.type in ("PARTITION", "SEGMENT") and unit.part_name is not None:
            owners.setdefault(unit.part_name, unit)
    context = conn.execute("SELECT C.TXN_ID, C.CAUSE, (SELECT T2W_WRITEID FROM TXN_TO_WRITE_ID W JOIN TBLS T "
                           "ON T.TBL_ID = ? JOIN DBS D ON D.DB_ID = T.DB_ID WHERE W.T2W_TXNID = C.TXN_ID "
                           "AND W.T2W_DATABASE = D.NAME AND W.T2W_TABLE = T.TBL_NAME) "
                           "FROM (SELECT 1) ONE LEFT JOIN STATS_HISTORY_CONTEXT C "
                           f"ON C.ID = {conn.dialect.history_context}", (tbl_id,)).fetchone()
    recorded_at = int(dt.datetime.now(dt.UTC).timestamp())
    placeholders = ", ".join("?" * (len(ROW_COLUMNS) + 9))
    conn.executemany(
        f"INSERT INTO COL_STATS_HISTORY (TBL_ID, PART_NAME, ENGINE, {', '.join(ROW_COLUMNS)}, LAST_ANALYZED, "
        f"NUM_ROWS, TXN_ID, WRITE_ID, CAUSE, RECORDED_AT) VALUES ({placeholders})",
        [(tbl_id, part_name, DRILL, *figures_to_values(column.as_statistics()), analyzed_at, unit.rows,
          context[0], context[2], context[1], recorded_at)
         for part_name, unit in owners.items() for column in unit.columns.values()])


def metadata_version(conn, tbl_id: int) -> int:
    row = conn.execute("SELECT METADATA_VERSION FROM METADATA_ANALYSES WHERE TBL_ID = ?", (tbl_id,)).fetchone()
    return row[0] if row else 0


def drop_table_metadata(conn, tbl_id: int) -> bool:
    """Removes the table's metadata; False when it had none."""
    conn.execute("DELETE FROM METADATA_UNITS WHERE TBL_ID = ?", (tbl_id,))
    return conn.execute("DELETE FROM METADATA_ANALYSES WHERE TBL_ID = ?", (tbl_id,)).rowcount > 0


# ---- Drill's levels -----------------------------------------------------------------------

def has_values(rows: int, column: ColumnMetadata) -> bool:
    """Whether the unit may hold non-null values of the column."""
    return column.nulls is None or rows - column.nulls > 0


def merge_metadata_column(children: list[tuple[int, ColumnMetadata]], name: str, type_name: str,
                          with_ndv: bool) -> ColumnMetadata:
    """One column's metadata over the children's rows; children are (rows, column) pairs. A figure
    unknown in a child that could change it is unknown in the parent."""
    counted = [c.nulls for _, c in children if c.nulls is not None]
    nulls = sum(counted) if len(counted) == len(children) else None
    merged = ColumnMetadata(name, type_name, nulls=nulls, estimated=any(c.estimated for _, c in children))
    if all(c.low is not None for rows, c in children if has_values(rows, c)):
        merged.low, merged.high = merged_range((c.low for _, c in children), (c.high for _, c in children))
    if with_ndv:
        non_nulls = [c.non_nulls for _, c in children if c.non_nulls is not None]
        if len(non_nulls) == len(children):
            merged.non_nulls = float(sum(non_nulls))
        if merged.non_nulls is not None and all(c.sketch is not None or not c.non_nulls for _, c in children):
            merged.sketch = union([c.sketch for _, c in children if c.sketch])
            merged.ndv = float(sketch_ndv(merged.sketch, math.ceil(merged.non_nulls)))
    family = sketch_family(type_name)
    if family is not None and all(c.histogram is not None for rows, c in children if has_values(rows, c)):
        merged.histogram = merge_histograms([c.histogram for _, c in children], family)
    return merged
