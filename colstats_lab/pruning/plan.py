"""Which files of a table a query reads: pruning levels applied in order — segments and partitions
(by partition values and their metadata), list-bucketing directories, files, then row groups — each
deciding from the best statistics it has: stored table metadata when it describes the files as they
are now, else Parquet footers (`metastore.metadata.fallback_to_file_metadata`), else nothing (kept).

What the planner can't reason about keeps the unit, so a pruned read returns the rows of a full one.
Row groups are reported, not removed from the read: Spark's Parquet reader skips them itself with
the same footer statistics.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from ..column_statistics.estimators import inexact_figures
from ..column_statistics.model import Date, Timestamp
from ..errors import parse_sql
from ..metastore import Metastore, Partition, Table
from ..metastore.repositories.snapshot_files import file_keys_of
from ..metastore.rows.levels import Level
from ..metastore.rows.metadata_units import ColumnMetadata, MetadataUnit, TableMetadata
from ..metastore.rows.write_ids import ValidWriteIdList
from ..stats.footers import FileFooter, file_footer, footer_column, read_footer
from ..tables.kinds import kind_of
from ..tables.snapshot import PartitionFiles
from .list_bucketing import prune_list_bucketing
from .partition_predicate import Preselection
from .references import qualifiers_of, resolved_references
from .report import PruningDecision, PruningReport
from .statistics import TRUE, ColumnRange, conjuncts, outcomes, text_value

log = logging.getLogger("colstats_lab.pruning")


@dataclass
class PlanningOptions:
    """What planning may use: stored metadata (None: none), footers where it is missing or stale,
    whether a stored column's type must equal the table's (`metastore.metadata.use_schema`), and
    list-bucketing directories (`hive.optimize.listbucketing`)."""

    metadata: TableMetadata | None = None
    footers: bool = True
    check_schema: bool = True
    retries: int = 0  # re-plans because the metadata changed while planning
    list_bucketing: bool = True
    # per partition, its rows and the figures of the condition's columns from its column statistics, where
    # those are accurate for the reader (`partition_statistics`)
    partition_stats: dict[str, tuple[int, dict[str, ColumnMetadata]]] = field(default_factory=dict)


def plan_table_read(table: Table, parts: list[PartitionFiles], where: exp.Expression | None,
                    options: PlanningOptions | None = None, alias: str | None = None
                    ) -> tuple[list[PartitionFiles], PruningReport]:
    """The partitions' files left to read under `where` (on the table, named `alias` in the query),
    and the report of what was pruned and why."""
    options = options or PlanningOptions()
    where = resolved_references(where, table, qualifiers_of(table, alias))
    planner = _Planner(table, parts, where, options)
    kept = planner.plan()
    predicate = where.sql(dialect="spark") if where is not None else None
    return kept, PruningReport(table.qualified_name, predicate, planner.decisions, retries=options.retries)


def plan_with_metadata(metastore: Metastore, table: Table, parts: list[PartitionFiles], where: exp.Expression | None,
                       settings: Callable[[str], Any], alias: str | None = None,
                       on_planned: Callable[[], None] | None = None,
                       preselected: Preselection | None = None, valid: ValidWriteIdList | None = None
                       ) -> tuple[list[PartitionFiles], PruningReport]:
    """Plans with the metastore's table metadata as the `metastore.*` settings allow; when the
    metadata changed while planning, plans again, up to `metastore.retrieval.retry_attempts` times,
    then without it. `on_planned` runs after each attempt, before the check. `parts` are the
    partitions listed; with `preselected`, the others were ruled out by key values in the metastore
    and the report counts them in one decision. With `valid`, the reader's snapshot, partitions are
    also judged by their column statistics where those are accurate for it."""
    stats = partition_statistics(metastore, table, parts, where, valid) if valid is not None else {}
    kept, report = _plan_with_metadata(metastore, table, parts, where, settings, alias, on_planned, stats)
    if preselected is not None:
        report.decisions.insert(0, PruningDecision(
            Level.PARTITION, f"{preselected.pruned:,} other partitions", False,
            "ruled out by their key values in the metastore (not listed; rows and bytes as last recorded)",
            preselected.pruned_rows, preselected.pruned_bytes, units=preselected.pruned))
    return kept, report


def _plan_with_metadata(metastore: Metastore, table: Table, parts: list[PartitionFiles], where: exp.Expression | None,
                        settings: Callable[[str], Any], alias: str | None,
                        on_planned: Callable[[], None] | None,
                        partition_stats: dict[str, tuple[int, dict[str, ColumnMetadata]]]
                        ) -> tuple[list[PartitionFiles], PruningReport]:
    enabled = bool(settings("metastore.enabled"))
    use_stored = enabled and bool(settings("metastore.metadata.use_statistics"))
    options = PlanningOptions(footers=not enabled or bool(settings("metastore.metadata.fallback_to_file_metadata")),
                              check_schema=bool(settings("metastore.metadata.use_schema")),
                              list_bucketing=bool(settings("hive.optimize.listbucketing")),
                              partition_stats=partition_stats)
    if not use_stored:
        return plan_table_read(table, parts, where, options, alias)
    attempts = int(settings("metastore.retrieval.retry_attempts"))
    for attempt in range(attempts + 1):
        version = metastore.table_metadata.get_metadata_version(table.dbName, table.tableName)
        options.metadata = metastore.table_metadata.get_table_metadata(table.dbName, table.tableName)
        options.retries = attempt
        planned = plan_table_read(table, parts, where, options, alias)
        if on_planned is not None:
            on_planned()
        if metastore.table_metadata.get_metadata_version(table.dbName, table.tableName) == version:
            return planned
        log.info("the metadata of %s changed while planning (attempt %d of %d): planning again",
                 table.qualified_name, attempt + 1, attempts + 1)
    options.metadata, options.retries = None, attempts + 1
    kept, report = plan_table_read(table, parts, where, options, alias)
    report.notes.append(f"the table's metadata changed during each of {attempts + 1} plannings: planned without it")
    return kept, report


def partition_statistics(metastore: Metastore, table: Table, parts: list[PartitionFiles],
                         where: exp.Expression | None, valid: ValidWriteIdList
                         ) -> dict[str, tuple[int, dict[str, ColumnMetadata]]]:
    """Per partition whose column statistics of the condition's data columns are accurate for a reader with
    `valid` (its files as analyzed, for an external table), its rows and those columns' figures; one read of
    the metastore. A partition whose statistics are stale is left out: it is judged by what else there is."""
    if where is None or not table.is_partitioned:
        return {}
    keys = set(table.partition_key_names)
    scalars = {c.name: c for c in table.stats_columns if not c.is_element and not c.is_collection}
    columns = sorted({c.name.lower() for c in where.find_all(exp.Column)} & scalars.keys() - keys)
    names = [p.part_name for p in parts if p.part_name is not None]
    if not columns or not names:
        return {}
    rows = {p.part_name: int(p.partition.parameters.get("numRows", 0) or 0) for p in parts if p.partition}
    parameters = {p.part_name: p.partition.parameters for p in parts if p.partition}
    out = {}
    for name, stats in metastore.column_stats.get_partitions_statistics(table.dbName, table.tableName, names, columns,
                                                           valid_write_ids=valid).items():
        if not stats.isStatsCompliant:
            continue
        figures = {}
        for obj in stats.statsObj:
            if _PRUNING_FIGURES & set(inexact_figures(parameters[name], obj.colName)):
                continue  # a sample's extremes are inside the range: pruning on them would drop rows
            data = obj.statsData.value
            figures[obj.colName] = ColumnMetadata(obj.colName, obj.colType, _plain(getattr(data, "lowValue", None)),
                                                  _plain(getattr(data, "highValue", None)), data.numNulls)
        out[name] = (rows[name], figures)
    return out


_PRUNING_FIGURES = {"min", "max", "nulls"}


def _plain(value):
    """A statistics bound in the form the planner compares (statistics.text_value's): a date as its days, a
    timestamp as its microseconds since the epoch, other values as they are."""
    if isinstance(value, Date):
        return value.daysSinceEpoch
    if isinstance(value, Timestamp):
        return value.microsSinceEpoch
    return value


class _Planner:
    def __init__(self, table: Table, parts: list[PartitionFiles], where: exp.Expression | None,
                 options: PlanningOptions):
        self.table, self.parts, self.where, self.options = table, parts, where, options
        self.types = {**{c.name: c.type for c in table.cols}, **{c.name: c.type for c in table.stats_columns}}
        self.key_types = {k.name: k.type for k in table.partitionKeys}
        self.decisions: list[PruningDecision] = []
        self.footers: dict[str, FileFooter] = {}
        self.stored: dict[tuple[str, str], MetadataUnit] = {}
        self.stored_groups: dict[str, list[MetadataUnit]] = {}
        self.files = {f.path: f for p in parts for f in p.files}
        self.states = {path: f.state for path, f in self.files.items()}
        self.field_ids = file_keys_of(table)
        if options.metadata is not None:
            for unit in options.metadata.units:
                if unit.type == "ROW_GROUP":
                    self.stored_groups.setdefault(unit.path or "", []).append(unit)
                else:
                    self.stored[(unit.type, (unit.path or "") if unit.type == "FILE" else unit.identifier)] = unit

    def plan(self) -> list[PartitionFiles]:
        pruned_by: dict[str | None, str] = {}
        if self.table.is_partitioned:
            pruned_by = self._partitions()
        live = [p for p in self.parts if p.part_name not in pruned_by]
        after_lb, lb_decisions = prune_list_bucketing(self.table, live, self.where, lambda path: self._footer(path).rows,
                                                      self.options.list_bucketing)
        self.decisions += lb_decisions
        readable = {f.path for p in after_lb for f in p.files}
        kept_parts = []
        for part in self.parts:
            kept_files = []
            for data_file in part.files:
                footer = self._footer(data_file.path)
                if part.part_name in pruned_by:
                    keep, reason = False, f"its partition is pruned ({pruned_by[part.part_name]})"
                elif data_file.path not in readable:
                    keep, reason = False, "its list-bucketing directory is pruned"
                else:
                    keep, reason = self._decide(self._file_lookup(part, data_file.path))
                self.decisions.append(PruningDecision(Level.FILE, self._relative(data_file.path), keep, reason,
                                                      footer.rows, data_file.size))
                self._row_groups(part, data_file.path, keep)
                if keep:
                    kept_files.append(data_file)
            kept_parts.append(PartitionFiles(part.partition, part.dirs, kept_files, part.deletes))
        return kept_parts

    # ---- partitions and segments --------------------------------------------------------

    def _partitions(self) -> dict[str | None, str]:
        """Decides each segment (strict prefix of the partition directories) and partition; returns
        the pruned partitions with what pruned them."""
        keys = self.table.partition_key_names
        pruned: dict[str | None, str] = {}
        for length in range(1, len(keys)):
            by_prefix: dict[str, list[PartitionFiles]] = {}
            for part in self.parts:
                by_prefix.setdefault("/".join(_named(part)[0].split("/")[:length]), []).append(part)
            for prefix, members in sorted(by_prefix.items()):
                values = dict(zip(keys[:length], _named(members[0])[1].values[:length], strict=True))
                stored = self._fresh("SEGMENT", prefix, [f for p in members for f in p.files])
                keep, reason = self._decide(self._lookup(values, stored), "segment metadata" if stored else None)
                self.decisions.append(PruningDecision(Level.SEGMENT, prefix, keep, reason, *self._size(members)))
                if not keep:
                    for part in members:
                        pruned.setdefault(_named(part)[0], f"segment {prefix}")
        for part in self.parts:
            name, partition = _named(part)
            values = dict(zip(keys, partition.values, strict=True))
            stored = self._fresh("PARTITION", name, part.files)
            counted = self.options.partition_stats.get(name)
            if stored is None and counted is not None:  # its column statistics, accurate for this reader
                keep, reason = self._decide(self._lookup(values, None, counted[1], counted[0]),
                                            "partition column statistics")
            else:
                keep, reason = self._decide(self._lookup(values, stored), "partition metadata" if stored else None)
            if name in pruned:
                keep, reason = False, f"its {pruned[name]} is pruned"
            elif not keep:
                pruned[name] = name
            self.decisions.append(PruningDecision(Level.PARTITION, name, keep, reason, *self._size([part])))
        return pruned

    def _size(self, parts: list[PartitionFiles]) -> tuple[int, int]:
        files = [f for p in parts for f in p.files]
        return sum(self._footer(f.path).rows for f in files), sum(f.size for f in files)

    def _fresh(self, level: str, identifier: str, files) -> MetadataUnit | None:
        """The stored unit if it was computed from exactly these files as they are now."""
        unit = self.stored.get((level, identifier))
        return unit if unit is not None and unit.describes_files(f.state for f in files) else None

    # ---- files and row groups -----------------------------------------------------------

    def _file_lookup(self, part: PartitionFiles, path: str):
        values = dict(zip(self.table.partition_key_names, part.partition.values, strict=True)) if part.partition else {}
        unit = self.stored.get(("FILE", path))
        if unit is not None and unit.describes_file(self.states[path]):
            return self._lookup(values, unit), "file metadata"
        if self.options.footers:
            footer = self._footer(path)
            columns = {name: footer_column(name, self.types[name], footer.row_groups) for name in self.types
                       if footer.bounded(name)}
            source = kind_of(self.table).file_statistics if footer.from_metadata else "Parquet footer"
            return self._lookup(values, None, columns, footer.rows), source
        return self._lookup(values, None), None

    def _row_groups(self, part: PartitionFiles, path: str, file_kept: bool) -> None:
        footer = self._footer(path)
        if footer.whole_file:  # the format's figures decided the file: its footer is read only when Spark reads it
            if not file_kept:
                return
            footer = read_footer(path, self.types, self.states.get(path), self.field_ids)
        relative = self._relative(path)
        file_unit = self.stored.get(("FILE", path))
        fresh = file_unit is not None and file_unit.describes_file(self.states[path])
        stored = {u.row_group: u for u in self.stored_groups.get(path, [])} if fresh else {}
        values = dict(zip(self.table.partition_key_names, part.partition.values, strict=True)) if part.partition else {}
        for rg in footer.row_groups:
            if not file_kept:
                keep, reason = False, "its file is pruned"
            elif stored and rg.index in stored:
                keep, reason = self._decide((self._lookup(values, stored[rg.index]), "row group metadata"))
            elif self.options.footers:
                columns = {name: footer_column(name, self.types[name], [rg]) for name in rg.columns}
                keep, reason = self._decide((self._lookup(values, None, columns, rg.rows), "Parquet footer"))
            else:
                keep, reason = True, "no statistics"
            if not keep and file_kept:
                reason = "Spark's Parquet reader skips it: " + reason
            self.decisions.append(PruningDecision(Level.ROW_GROUP, f"{relative}#{rg.index}", keep, reason, rg.rows,
                                                  rg.bytes))

    def _footer(self, path: str) -> FileFooter:
        if path not in self.footers:
            self.footers[path] = file_footer(self.files[path], self.types, self.field_ids, exact=False)
        return self.footers[path]

    # ---- deciding -----------------------------------------------------------------------

    def _lookup(self, values: dict, unit: MetadataUnit | None, columns: dict[str, ColumnMetadata] | None = None,
                rows: int | None = None):
        """Column name -> ColumnRange: partition keys from their values, data columns from the unit."""
        if unit is not None:
            columns, rows = unit.columns, unit.rows

        def lookup(name: str) -> ColumnRange | None:
            if name in values:
                type_name = self.key_types[name]
                value = values[name]
                if value is None:
                    return ColumnRange(type_name, None, None, 1, 0)
                try:
                    typed = text_value(value, type_name)
                except (ValueError, TypeError, ArithmeticError):
                    return None
                return ColumnRange(type_name, typed, typed, 0, 1)
            column = (columns or {}).get(name)
            if column is None or (self.options.check_schema and column.type != self.types.get(name)):
                return None
            non_null = rows - column.nulls if column.nulls is not None and rows is not None else None
            return ColumnRange(column.type, column.low, column.high, column.nulls, non_null)

        return lookup

    def _decide(self, lookup, source: str | None = "partition values") -> tuple[bool, str]:
        if isinstance(lookup, tuple):
            lookup, source = lookup
        if self.where is None:
            return True, "no condition"
        if TRUE in outcomes(self.where, lookup):
            return True, f"may match ({source or 'no accurate statistics'})"
        for term in conjuncts(self.where):
            if TRUE not in outcomes(term, lookup):
                shown = []
                for column in sorted({c.name.lower() for c in term.find_all(exp.Column)}):
                    found = lookup(column)
                    if found is not None:
                        shown.append(f"{column}: {found.describe()}")
                return False, (f"{term.sql(dialect='spark')} rules it out ({'; '.join(shown)}) "
                               f"[{source or 'partition values'}]")
        return False, f"no row can satisfy the condition [{source or 'partition values'}]"

    def _relative(self, path: str) -> str:
        return path[len(self.table.location):].lstrip("/")


def single_table_where(tree: exp.Expression) -> tuple[exp.Table, exp.Expression | None] | None:
    """(table, WHERE condition) of a plain `SELECT ... FROM one_table [WHERE ...]`, else None: pruning
    reasons only about conditions that filter the table's rows directly."""
    if not isinstance(tree, exp.Select):
        return None
    source = tree.args.get("from") or tree.args.get("from_")
    if source is None or not isinstance(source.this, exp.Table) or tree.args.get("joins"):
        return None
    if any(isinstance(node, (exp.Subquery, exp.Union)) for node in tree.find_all(exp.Subquery, exp.Union)):
        return None
    where = tree.args.get("where")
    return source.this, (where.this if where is not None else None)


def parse_query(text: str) -> exp.Expression:
    """The query's syntax tree; raises ParseError with a caret under where it stops parsing."""
    return parse_sql(text)


def _named(part: PartitionFiles) -> tuple[str, Partition]:
    """A partitioned table's part: its name and partition (only an unpartitioned table's part has neither)."""
    if part.part_name is None or part.partition is None:
        raise ValueError("a partitioned table's part without a partition")
    return part.part_name, part.partition
