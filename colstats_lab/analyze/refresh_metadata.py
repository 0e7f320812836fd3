"""Drill's `ANALYZE TABLE t ... REFRESH METADATA`: table metadata down to a level (TABLE, SEGMENT,
PARTITION, FILE, ROW_GROUP), each level above merged from the one below.

- Up to date: when the snapshot's files (path, bytes, modification time) are the ones the last
  refresh saw, at the same level, for the same or fewer columns, nothing runs.
- Incremental: otherwise, when the level is the same and the columns (and statistics) asked for
  are a subset of the last refresh's, only files not seen before are read; the metadata of the
  untouched files, partitions and segments is taken from the metastore (their stored rows stay as
  they are) and only the units above a changed file are merged again. Drill's two other cases (a
  column list that is not a subset, a different level) collect everything again.
- Row counts, min, max and null counts come from Parquet footers where they hold them as Spark
  would compute them (`stats.footers`); the rest, and NDV sketches, from one Spark scan grouped
  by file (and row group) of the files to read; no Spark job runs when footers serve everything.
- COMPUTE STATISTICS adds NDV and the non-null count to the metadata of its columns, from every
  row, or from a SAMPLE n PERCENT of them (counts scaled, marked estimated). ESTIMATE STATISTICS
  is the same from a sample: SAMPLE n PERCENT, 10 percent when not given. Min, max, nulls and row
  counts are exact in every mode.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import pandas as pd
from pyspark.sql import SparkSession

from ..coltypes import parse_type
from ..column_statistics.quantiles import kll_for, sketch_family
from ..column_statistics.sketches import bounded_ndv, estimate, sketch_ndv
from ..errors import InvalidArgument, spark_errors
from ..metastore import Metastore, Table, ValidWriteIdList
from ..metastore.changes import ReplaceMetadata
from ..metastore.repositories.snapshot_files import file_keys_of
from ..metastore.rows.metadata_units import (
    LEVELS,
    ColumnMetadata,
    FileState,
    MetadataAnalysis,
    MetadataUnit,
    TableMetadata,
    level_depth,
    merge_metadata_column,
)
from ..sql.statements import RefreshMetadata
from ..stats.footers import FileFooter, FooterColumn, file_footer, footer_column, read_footer
from ..stats.metadata_scan import ScanColumn, ScannedGroup, scan_metadata
from ..storage import storage_for
from ..tables.kinds import snapshot_files
from ..tables.snapshot import PartitionFiles, file_schema, table_columns

if TYPE_CHECKING:
    from ..transaction import Transaction

ESTIMATE_SAMPLE_PERCENT = 10.0
UP_TO_DATE = "Table metadata is up to date, analyze wasn't performed."
SEGMENT, PARTITION, FILE, ROW_GROUP = 1, 2, 3, 4


@dataclass(frozen=True)
class MetadataRequest:
    level: str
    columns: list[str]  # every column that gets metadata (interesting and statistics columns)
    statistics: list[str]  # columns that also get NDV and non-null counts
    mode: str | None
    sample_percent: float | None  # None: every row
    histograms: bool = False  # KLL sketches of the columns of types that have one (hive.stats.kll.enable)

    @property
    def depth(self) -> int:
        return LEVELS.index(self.level)

    def not_covered_by(self, last: MetadataAnalysis) -> str | None:
        """Why the last refresh's metadata can't be reused (Drill's two cases), or None."""
        if last.level != self.level:
            return f"the level differs from the last analyze's ({last.level})"
        if not set(self.columns) <= set(last.columns):
            return "the column list is not a subset of the last analyze's"
        if not set(self.statistics) <= set(last.statistics) or (
                self.statistics and (self.mode, self.sample_percent) != (last.mode, last.sample_percent)):
            return "the statistics asked for are not a subset of the last analyze's"
        if self.histograms and not last.histograms:
            return "the last analyze gathered no KLL sketches (hive.stats.kll.enable was off)"
        return None


@dataclass
class RefreshOutcome:
    table: str
    level: str
    up_to_date: bool
    kind: str  # "up to date", "incremental" or "full"
    reason: str
    scanned_files: list[str] = field(default_factory=list)
    reused_files: list[str] = field(default_factory=list)
    removed_files: list[str] = field(default_factory=list)
    metadata_columns: list[str] = field(default_factory=list)  # min, max and nulls from the format's metadata
    footer_columns: list[str] = field(default_factory=list)  # min, max and nulls from footers
    scan_columns: list[str] = field(default_factory=list)  # min, max and nulls from the scan
    ndv_columns: list[str] = field(default_factory=list)  # NDV sketches from the scan
    spark_job: bool = False
    skipped_columns: list[str] = field(default_factory=list)
    units: dict[str, int] = field(default_factory=dict)
    merged_units: dict[str, int] = field(default_factory=dict)  # units merged again from those below, by level
    seconds: float = 0.0

    @property
    def message(self) -> str:
        if self.up_to_date:
            return UP_TO_DATE
        head = f"Collected / refreshed metadata for table [{self.table}]"
        what = (f"{self.kind} analyze at {self.level} level ({self.reason}): {len(self.scanned_files)} files read, "
                f"{len(self.reused_files)} reused from the metastore, {len(self.removed_files)} gone")
        if self.metadata_columns:
            how = (f"the table format's metadata gave row counts and min/max/nulls of {', '.join(self.metadata_columns)}"
                   f", footers those of {', '.join(self.footer_columns) or 'no other column'}; ")
        else:
            how = f"footers gave row counts and min/max/nulls of {', '.join(self.footer_columns) or 'no column'}; "
        if self.spark_job:
            read = ([f"min/max/nulls of {', '.join(self.scan_columns)}"] if self.scan_columns else []) + \
                   ([f"NDV of {', '.join(self.ndv_columns)}"] if self.ndv_columns else [])
            how += "one Spark scan gave " + " and ".join(read)
        else:
            how += "no Spark job ran"
        text = f"{head}\n{what}; {how}; {self.seconds:.2f} s."
        if self.skipped_columns:
            text += f" Skipped (no metadata for their type): {', '.join(self.skipped_columns)}."
        return text

    def to_pandas(self) -> pd.DataFrame:
        """Drill's result: `ok` and `summary`; Drill answers an up-to-date table with ok false (nothing
        was analyzed) and its summary."""
        return pd.DataFrame({"ok": [not self.up_to_date], "summary": [self.message.split("\n")[0]]})


def metadata_request(table: Table, stmt: RefreshMetadata, default_level: str) -> tuple[MetadataRequest, list[str]]:
    """What to collect, and the columns skipped; raises naming an unknown or unsupported column."""
    level = LEVELS[level_depth(stmt.level[0] if stmt.level else default_level)]
    sample: float | None
    if stmt.statistics_mode == "ESTIMATE":
        sample = stmt.sample_percent if stmt.sample_percent is not None else ESTIMATE_SAMPLE_PERCENT
    else:
        sample = stmt.sample_percent if stmt.sample_percent not in (None, 100.0) else None
    supported = [c.name for c in table.cols if _primitive(c.type)]
    skipped = [c.name for c in table.cols if not _primitive(c.type)] if stmt.columns is None else []
    columns = supported if stmt.columns is None else _checked(table, stmt.columns)
    statistics: list[str] = []
    if stmt.statistics_mode is not None:
        statistics = columns if stmt.statistics_columns is None else _checked(table, stmt.statistics_columns)
    every = columns + [c for c in statistics if c not in columns]
    return MetadataRequest(level, every, statistics, stmt.statistics_mode if statistics else None,
                           sample if statistics else None), skipped


def _primitive(type_name: str) -> bool:
    return parse_type(type_name).stats_kind is not None


def _checked(table: Table, named: list[tuple[str, int]]) -> list[str]:
    out = []
    by_name = {c.name: c for c in table.cols}
    for name, _ in named:
        if name in table.partition_key_names:
            raise InvalidArgument(f"{name} is a partition key of {table.qualified_name}: its values are "
                                        "in the segment and partition metadata already")
        if name not in by_name:
            raise table.no_such_column(name)
        if not _primitive(by_name[name].type):
            raise InvalidArgument(f"column {name} is {by_name[name].type}: no metadata is kept for that type")
        if name not in out:
            out.append(name)
    return out


def run_refresh_metadata(spark: Callable[[], SparkSession], metastore: Metastore, stmt: RefreshMetadata, current_db: str,
                         txn: Transaction, default_level: str) -> RefreshOutcome:
    """Collects the metadata of `txn`'s snapshot now; it is stored when `txn` commits. `spark` gives
    the session when a scan is needed (an up-to-date check or a footer-only refresh starts none)."""
    started = time.perf_counter()
    table = metastore.catalog.get_table(stmt.table.db or current_db, stmt.table.name)
    request, skipped = metadata_request(table, stmt, default_level)
    request = replace(request, histograms=kll_for(table.parameters, metastore.settings.kll_enabled))
    parts = snapshot_files(metastore, table, txn.snapshot(table))
    with_deletes = [p.part_name or table.qualified_name for p in parts if p.deletes]
    if with_deletes:
        raise InvalidArgument(
            f"{table.qualified_name} has delete files in {with_deletes[0]}: REFRESH METADATA keeps each "
            "file's figures from its footer, which counts the rows they delete; use ANALYZE TABLE ... COMPUTE "
            "STATISTICS, which reads the rows a reader sees")
    unread = next((f.path for p in parts for f in p.files if not storage_for(f.path).reads_footers), None)
    if unread is not None:
        raise InvalidArgument(f"REFRESH METADATA keeps each file's footer figures, and {unread} is listed "
                                    "through Spark here, with no storage credentials to read its footer")
    states = {f.path: f.state for p in parts for f in p.files}
    last = metastore.table_metadata.get_table_metadata(table.dbName, table.tableName)
    outcome = RefreshOutcome(table.qualified_name, request.level, False, "full", "first analyze of the table",
                             skipped_columns=skipped)
    if last is not None:
        why_not = request.not_covered_by(last.analysis)
        changed, removed = _files_since(last, states)
        if why_not is None and not changed and not removed:
            outcome.up_to_date, outcome.kind, outcome.reason = True, "up to date", "nothing changed"
            outcome.reused_files = sorted(states)
            outcome.seconds = time.perf_counter() - started
            return outcome
        outcome.removed_files = removed
        if why_not is None:
            outcome.kind, outcome.reason = "incremental", "files changed"
        else:
            outcome.reason = why_not
            last = None
    builder = _Builder(table, request, parts, states, last)
    builder.collect(spark, outcome)
    if outcome.kind == "incremental" and not outcome.reused_files:
        outcome.kind, outcome.reason = "full", "files changed and nothing below the level could be reused"
    units = builder.units()
    outcome.units = {level: n for level in LEVELS if (n := sum(1 for u in units if u.type == level))}
    outcome.merged_units = {level: builder.merged[level] for level in LEVELS if level in builder.merged}
    analysis = MetadataAnalysis(request.level, request.columns, request.statistics, request.mode,
                                request.sample_percent, int(time.time()), histograms=request.histograms)
    txn.add(ReplaceMetadata(table, analysis, tuple(units)))
    outcome.seconds = time.perf_counter() - started
    return outcome


def metadata_file_changes(metastore: Metastore, table: Table, snapshot: ValidWriteIdList
                          ) -> tuple[list[str], list[str]] | None:
    """The files added or rewritten, and those removed, in `snapshot` since the table's last REFRESH METADATA
    (both empty: its metadata is up to date); None when it has none. Lists the files, starts no Spark."""
    last = metastore.table_metadata.get_table_metadata(table.dbName, table.tableName)
    if last is None:
        return None
    # a position-delete file counts as a change: the rows it deletes are in files the metadata describes
    states = {f.path: f.state for p in snapshot_files(metastore, table, snapshot) for f in p.files + p.deletes}
    return _files_since(last, states)


def _files_since(last: TableMetadata, states: dict[str, FileState]) -> tuple[list[str], list[str]]:
    seen = {tuple(s) for s in (_table_unit(last).files or [])}
    return (sorted(path for path, state in states.items() if tuple(state) not in seen),
            sorted({str(s[0]) for s in seen} - set(states)))


def _table_unit(metadata: TableMetadata) -> MetadataUnit:
    return metadata.of_type("TABLE")[0]


class _Builder:
    """The units of one refresh: leaves read (footers + scan) or reused, then merged upward."""

    def __init__(self, table: Table, request: MetadataRequest, parts: list[PartitionFiles],
                 states: dict[str, FileState], last: TableMetadata | None):
        self.table, self.request, self.parts, self.states = table, request, parts, states
        self.types = {c.name: c.type for c in table.cols if c.name in request.columns}
        self.file_units: dict[str, MetadataUnit] = {}
        self.row_groups: dict[str, list[MetadataUnit]] = {}
        self.partition_units: dict[str | None, MetadataUnit] = {}
        self.segment_units: dict[str, MetadataUnit] = {}  # stored segments, reused where their files are unchanged
        self.to_read: list[str] = []
        self.served: set[str] = set()
        self.merged: dict[str, int] = {}  # units merged again, by level
        self._reuse(last)

    # ---- what is reused -----------------------------------------------------------------

    def _reuse(self, last: TableMetadata | None) -> None:
        depth = self.request.depth
        if last is not None and depth >= FILE:
            stored = {u.path: u for u in last.of_type("FILE")}
            groups: dict[str, list[MetadataUnit]] = {}
            for group in last.of_type("ROW_GROUP"):
                groups.setdefault(group.path or "", []).append(group)
            for path, state in self.states.items():
                file_unit = stored.get(path)
                if file_unit is not None and file_unit.describes_file(state):
                    self.file_units[path] = self._project(file_unit)
                    if depth == ROW_GROUP:
                        self.row_groups[path] = [self._project(u) for u in sorted(groups.get(path, []),
                                                                                  key=lambda u: u.row_group or 0)]
        if last is not None and depth >= SEGMENT and self.table.is_partitioned:
            # a partition whose files are the ones its stored unit was merged from keeps that unit: only the
            # partitions that changed, and the levels above them, are merged again
            by_identifier = {u.identifier: u for u in last.of_type(LEVELS[min(depth, PARTITION)])}
            for part in self.parts:
                unit = by_identifier.get(part.part_name or "")
                if unit is not None and unit.describes_files(f.state for f in part.files) and \
                        (depth < FILE or all(f.path in self.file_units for f in part.files)):
                    self.partition_units[part.part_name] = replace(self._project(unit), type="PARTITION")
            self.segment_units = {u.identifier: u for u in last.of_type("SEGMENT")}
        covered = set(self.file_units) | {s[0] for u in self.partition_units.values() for s in u.files or []}
        self.to_read = [path for path in self.states if path not in covered]

    def _project(self, unit: MetadataUnit) -> MetadataUnit:
        """A stored unit with only the columns (and statistics) this refresh asks for; one they leave as it
        was keeps its stored row."""
        columns = {}
        for name in self.request.columns:
            column = unit.columns[name]
            if name not in self.request.statistics:
                column = replace(column, non_nulls=None, ndv=None, sketch=None)
            if not self.request.histograms:
                column = replace(column, histogram=None)
            columns[name] = column
        unchanged = columns == unit.columns
        return replace(unit, columns=columns, unit_id=unit.unit_id if unchanged else None)

    # ---- what is read -------------------------------------------------------------------

    def collect(self, spark: Callable[[], SparkSession], outcome: RefreshOutcome) -> None:
        outcome.scanned_files = sorted(self.to_read)
        outcome.reused_files = sorted(p for p in self.states if p not in set(self.to_read))
        field_ids = file_keys_of(self.table)
        data_files = {f.path: f for p in self.parts for f in p.files}
        if self.request.depth == ROW_GROUP:
            footers = {path: read_footer(path, self.types, self.states.get(path), field_ids) for path in self.to_read}
        else:  # a table format's own figures where it keeps them whole, footers for the rest
            footers = {path: file_footer(data_files[path], self.types, field_ids) for path in self.to_read}
        self.served = {c for c in self.request.columns if all(f.served(c) for f in footers.values())}
        from_metadata = {c for c in self.served if footers and all(c in f.from_metadata for f in footers.values())}
        outcome.metadata_columns = [c for c in self.request.columns if c in from_metadata]
        outcome.footer_columns = [c for c in self.request.columns if c in self.served - from_metadata]
        sketched = {name for name in self.request.columns
                    if self.request.histograms and sketch_family(self.types[name]) is not None}
        scan = [ScanColumn(name, self.types[name], min_max=name not in self.served and _has_min_max(self.types[name]),
                           nulls=name not in self.served, ndv=name in self.request.statistics,
                           histogram=name in sketched)
                for name in self.request.columns
                if name not in self.served or name in self.request.statistics or name in sketched]
        outcome.scan_columns = [c.name for c in scan if c.nulls]
        outcome.ndv_columns = [c.name for c in scan if c.ndv]
        groups: dict[tuple[str, int | None], ScannedGroup] = {}
        if scan and self.to_read:
            outcome.spark_job = True
            schema = file_schema(self.table)
            starts = ({p: [rg.first_row for rg in f.row_groups] for p, f in footers.items()}
                      if self.request.depth == ROW_GROUP else None)
            fraction = self.request.sample_percent / 100 if self.request.sample_percent else None
            with spark_errors(f"cannot collect the metadata of {self.table.qualified_name}"):
                groups = scan_metadata(spark(), schema, self.to_read, scan, starts, fraction,
                                       as_table=table_columns(self.table))
        for path in self.to_read:
            self._leaf_units(footers[path], groups)

    def _leaf_units(self, footer: FileFooter, groups: dict[tuple[str, int | None], ScannedGroup]) -> None:
        path, state = footer.path, self.states[footer.path]
        relative = self._relative(path)
        if self.request.depth == ROW_GROUP:
            row_groups = []
            for rg in footer.row_groups:
                columns = {name: self._leaf_column(name, rg.rows, rg.columns.get(name), groups.get((path, rg.index)))
                           for name in self.request.columns}
                row_groups.append(MetadataUnit("ROW_GROUP", f"{relative}#{rg.index}", path=path, row_group=rg.index,
                                               rows=rg.rows, bytes=rg.bytes, last_modified=state[2], columns=columns,
                                               estimated=self._sampled))
            self.row_groups[path] = row_groups
            unit = self._merge("FILE", relative, row_groups)
        else:
            columns = {name: self._leaf_column(name, footer.rows, self._file_footer(name, footer),
                                               groups.get((path, None))) for name in self.request.columns}
            unit = MetadataUnit("FILE", relative, columns=columns, estimated=self._sampled)
        unit.path, unit.rows, unit.bytes, unit.last_modified = path, footer.rows, state[1], state[2]
        self.file_units[path] = unit

    @property
    def _sampled(self) -> bool:
        return bool(self.request.statistics and self.request.sample_percent)

    @property
    def _percent(self) -> float:
        """The sample's percent of the rows (100: every row)."""
        return self.request.sample_percent or 100.0

    def _file_footer(self, name: str, footer: FileFooter) -> ColumnMetadata | None:
        """A file's footer figures for a column: its row groups' merged."""
        return footer_column(name, self.types[name], footer.row_groups) if name in self.served else None

    def _leaf_column(self, name: str, rows: int, footer: FooterColumn | ColumnMetadata | None,
                     group: ScannedGroup | None) -> ColumnMetadata:
        """One column of a file or row group: footer figures where they serve, the scan's otherwise."""
        column = ColumnMetadata(name, self.types[name])
        seen = group.columns.get(name) if group is not None else None
        if name in self.served and footer is not None:
            column.low, column.high, column.nulls = footer.low, footer.high, footer.nulls
        else:  # no scanned group: the unit has no rows
            column.nulls = rows - (seen.non_nulls or 0) if seen is not None else rows
            if seen is not None:
                column.low, column.high = seen.low, seen.high
        if self.request.histograms and sketch_family(self.types[name]) is not None:
            column.histogram = seen.histogram if seen is not None else None
        if name in self.request.statistics:
            column.sketch = seen.sketch if seen is not None else None
            non_nulls = rows - (column.nulls or 0)  # a served footer and the scan both count NULLs
            if self._sampled:
                scaled = ((seen.sampled_non_nulls or 0) if seen is not None else 0) * 100 / self._percent
                column.non_nulls = min(scaled, float(non_nulls))
                column.estimated = True
            else:
                column.non_nulls = float(non_nulls)
            column.ndv = self._ndv(column, non_nulls)
        return column

    def _ndv(self, column: ColumnMetadata, non_nulls: int) -> float:
        """NDV from the sketch, at most the (exact) non-null rows; from a sample, the NDV whose
        expected count of values seen in such a sample is what the sample saw (`sample_ndv`)."""
        if not self._sampled:
            return float(sketch_ndv(column.sketch, non_nulls))
        seen = sample_ndv(estimate(column.sketch), non_nulls, self._percent / 100)
        return float(bounded_ndv(seen, non_nulls))

    # ---- merged upward ------------------------------------------------------------------

    def _merge(self, level: str, identifier: str, children: list[MetadataUnit], **attributes) -> MetadataUnit:
        self.merged[level] = self.merged.get(level, 0) + 1
        columns = {name: merge_metadata_column([(u.rows, u.columns[name]) for u in children], name,
                                               self.types[name], name in self.request.statistics)
                   for name in self.request.columns}
        rows = sum(u.rows for u in children)
        for column in columns.values():
            if column.sketch is not None and self._sampled and column.nulls is not None:
                column.ndv = self._ndv(column, rows - column.nulls)
        modified = [u.last_modified for u in children if u.last_modified is not None]
        return MetadataUnit(level, identifier, rows=sum(u.rows for u in children), bytes=sum(u.bytes for u in children),
                            last_modified=max(modified) if modified else None, columns=columns,
                            estimated=any(u.estimated for u in children), **attributes)

    def _relative(self, path: str) -> str:
        return path[len(self.table.location):].lstrip("/")

    def units(self) -> list[MetadataUnit]:
        depth = self.request.depth
        out: list[MetadataUnit] = []
        partitions = []
        for part in self.parts:
            files = [self.file_units[f.path] for f in part.files if f.path in self.file_units]
            if part.part_name in self.partition_units:
                unit = self.partition_units[part.part_name]
            else:
                unit = self._merge("PARTITION", part.part_name or self.table.qualified_name, files)
                unit.files = [self.states[f.path] for f in part.files]
            if part.partition is not None and part.part_name is not None:
                unit.part_name = part.part_name
                unit.key = part.part_name.split("/")[0]
                unit.partition_values = dict(zip(self.table.partition_key_names, part.partition.values, strict=True))
            partitions.append((part, unit, files))
        if depth >= FILE:
            for part, _, files in partitions:
                for unit in files:
                    unit.part_name = part.part_name
                    unit.key = part.part_name.split("/")[0] if part.part_name else None
                    out.append(unit)
                    if depth == ROW_GROUP:
                        for rg in self.row_groups[unit.path or ""]:
                            rg.part_name, rg.key = unit.part_name, unit.key
                            out.append(rg)
        if self.table.is_partitioned:
            if depth >= PARTITION:
                out.extend(unit for _, unit, _ in partitions)
            if depth >= SEGMENT:
                out.extend(self._segments([unit for _, unit, _ in partitions]))
        table_unit = self._merge("TABLE", self.table.qualified_name, [unit for _, unit, _ in partitions],
                                 location=self.table.location)
        table_unit.files = sorted(self.states.values())
        out.append(table_unit)
        return out

    def _segments(self, partitions: list[MetadataUnit]) -> list[MetadataUnit]:
        keys = self.table.partition_key_names
        out = []
        for length in range(1, len(keys) + 1):
            by_prefix: dict[str, list[MetadataUnit]] = {}
            for unit in partitions:
                by_prefix.setdefault("/".join((unit.part_name or "").split("/")[:length]), []).append(unit)
            for prefix, children in sorted(by_prefix.items()):
                files = sorted(s for c in children for s in c.files or [])
                stored = self.segment_units.get(prefix)
                if stored is not None and stored.describes_files(files):
                    out.append(self._project(stored))
                    continue
                segment = self._merge("SEGMENT", prefix, children, key=prefix.split("/")[0],
                                      partition_column=keys[length - 1],
                                      partition_value=(children[0].partition_values or {})[keys[length - 1]],
                                      location=f"{self.table.location}/{prefix}")
                segment.files = files
                segment.part_name = prefix if length == len(keys) else None
                out.append(segment)
        return out


def _has_min_max(type_name: str) -> bool:
    return parse_type(type_name).base != "binary"


def sample_ndv(seen: float, rows: int, fraction: float) -> float:
    """The table's NDV from the distinct values `seen` in a Bernoulli sample taking `fraction` of its
    `rows` non-null values, by the method of moments under equal frequencies: a value occurring
    rows/D times is seen with probability 1 - (1 - fraction)^(rows/D), so D solves
    D * (1 - (1 - fraction)^(rows/D)) = seen. All-distinct samples give seen / fraction; values
    repeated many times give about `seen`."""
    if seen <= 0 or rows <= 0:
        return 0.0
    if fraction >= 1.0:
        return seen

    def expected(ndv: float) -> float:
        return ndv * (1 - (1 - fraction) ** (rows / ndv))

    low, high = seen, float(rows)
    if expected(high) <= seen:
        return high
    for _ in range(60):
        middle = (low + high) / 2
        if expected(middle) < seen:
            low = middle
        else:
            high = middle
    return (low + high) / 2
