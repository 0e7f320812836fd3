"""Writing a DataFrame into a managed table: one write ID, one new `delta_N_N/` (or `base_N/`)
per partition written, and the basic statistics kept current in the same metastore transaction
that commits the write.
"""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..coltypes import parse_type
from ..column_statistics.frequent_items import items_named, items_tracked
from ..column_statistics.merge import merge_column_stats
from ..column_statistics.names import parse_part_name
from ..column_statistics.partition_values import canonical_value
from ..column_statistics.quantiles import kll_for
from ..errors import InvalidArgument, spark_errors
from ..files import is_data_file
from ..metastore import (
    COLUMN_STATS_ACCURATE,
    ColumnStatistics,
    ColumnStatisticsDesc,
    ColumnStatisticsObj,
    Metastore,
    Partition,
    SkewedInfo,
    StatsAccuracy,
    Table,
    ValidWriteIdList,
)
from ..metastore.changes import FollowUp, Repositories
from ..metastore.rows.staleness import PARAM as ROWS_CHANGED
from ..metastore.rows.staleness import rows_changed_param
from ..quoting import column_ref
from ..stats import ColumnPlan, GroupStats, aggregate_stats, empty_stats, observe_stats
from ..stats.aggregate import served_by_footers
from ..stats.footers import footer_servable, group_figures
from ..storage import is_local, join, list_data_files, parent, relative, same_location, spark_uris, storage_for
from .kinds import read_snapshot
from .layout import base_dir_name, delta_dir_name, footer_counts, own_dirs
from .list_bucketing import (
    DIRECTORY_COLUMN,
    check_partition_values,
    directory_column,
    layout_specs,
    split_leaf,
    values_by_directory,
)
from .pandas_input import spark_frame_of
from .snapshot import PartitionFiles, spark_type

if TYPE_CHECKING:
    from ..transaction import Transaction



class WriteMode(StrEnum):
    """What a write does with the rows a partition (or the table) holds: keeps them, or replaces them."""
    APPEND = "append"
    OVERWRITE = "overwrite"


MODES = tuple(WriteMode)


@dataclass
class WriteResult:
    write_id: int
    mode: WriteMode
    partitions: dict[str | None, FilesWritten]  # partition name (None: unpartitioned) -> what was written
    footer_columns: list[str] = field(default_factory=list)  # gathered min, max and NULLs from the new footers
    notes: list[str] = field(default_factory=list)  # what reading a pandas frame changed (nanoseconds truncated)

    @property
    def num_rows(self) -> int:
        return sum(p.num_rows for p in self.partitions.values())

    def __repr__(self) -> str:
        files = sum(p.num_files for p in self.partitions.values())
        where = "" if list(self.partitions) == [None] else \
            f" in {len(self.partitions):,} partition{'s' if len(self.partitions) != 1 else ''}"
        notes = "".join(f"; {note}" for note in self.notes)
        return (f"WriteResult(write ID {self.write_id}, {self.mode}: {self.num_rows:,} rows, {files:,} "
                f"file{'s' if files != 1 else ''}{where}{notes})")


@dataclass
class FilesWritten:
    directory: str
    num_files: int = 0
    num_rows: int = 0
    total_size: int = 0
    raw_data_size: int = 0
    skewed_locations: dict = field(default_factory=dict)  # skewed value -> sub-directory that got rows


def write_table(spark: SparkSession, metastore: Metastore, table: Table, data, txn: Transaction,
                partition: dict | None = None, mode: str = "append", gather: bool = True,
                relayout: bool = False) -> WriteResult:
    """Writes `data` (Spark or pandas DataFrame) into `table` as part of `txn`; raises
    InvalidArgument naming what is wrong. The files land now, in directories only `txn`
    can see until it commits; the statistics are recorded when it commits.

    With `gather` (Hive's hive.stats.column.autogather), the written rows' column statistics are
    merged into each partition's: computed during the write for one partition (a static spec, or an
    unpartitioned table), and for a dynamic-partition write by one aggregation over the new files
    grouped by partition, right after the write. With `relayout` (an overwrite), the partitions
    written take the table's current skew spec and list-bucketing layout."""
    if table.tableType != "MANAGED_TABLE":
        raise InvalidArgument(f"table {table.qualified_name} is external: the lab writes only managed tables")
    if mode not in MODES:
        raise InvalidArgument(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    mode = WriteMode(mode)
    frame, notes = _aligned_frame(spark, table, data, partition or {})
    collect = None
    plans = [ColumnPlan.of(c, kll_for(table.parameters, metastore.settings.kll_enabled),
                           items_tracked(table.parameters, c.name, c.type, metastore.settings.frequent_items),
                           items_named(table.parameters, c.name))
             for c in table.figure_columns]
    dynamic = table.is_partitioned and not partition
    if gather and plans and not dynamic:  # min, max and NULLs from the new files' footers where they will hold them
        # an observation sees the written rows, not an array's elements: those wait for an ANALYZE
        plans = [p for p in plans if not p.element]
        observed_plans = [replace(p, from_footers=_footer_will_hold(spark, p)) for p in plans]
        frame, collect = observe_stats(frame, observed_plans)
    specs = layout_specs(metastore, table, frame, partition or {}, relayout)
    for spec_owner in specs:
        check_partition_values(table, [v for _, v in parse_part_name(spec_owner)])
    partition_by = list(table.partition_key_names)
    if specs:
        frame = frame.withColumn(DIRECTORY_COLUMN, directory_column(table, specs, partition or {}))
        partition_by.append(DIRECTORY_COLUMN)
    # the partition a static write goes to is known now: recorded with the write ID, an auto-analyze worker
    # holds back that partition only, not the whole table, while the write runs
    announced: list[str | None] = [_static_name(table, partition)] if table.is_partitioned and partition else \
        [] if table.is_partitioned else [None]
    write_id = txn.write_id(table, announcing=announced)
    valid = txn.snapshot(table)
    direct = _direct_target(table, partition or {}, mode, write_id, specs)
    staging = None if direct else join(table.location, f"_staging_{txn.txn_id}_{uuid.uuid4().hex[:8]}")
    moved: list[str] = []
    written: dict[str | None, FilesWritten]
    try:
        if direct:
            name, target = direct
            moved.append(target)
            with spark_errors(f"cannot write the data into {table.qualified_name}"):
                frame.drop(*table.partition_key_names).write.mode("overwrite") \
                    .option("mapreduce.fileoutputcommitter.marksuccessfuljobs", "false") \
                    .parquet(spark_uris(spark, [target])[0])
            written = {name: _footer_totals(target)}
            if name is not None and written[name].num_rows == 0:  # as a staged write leaves it: no file
                storage_for(target).remove(target)
                written[name] = FilesWritten(target)
        else:
            assert staging is not None
            writer = frame.write.mode("overwrite")
            if partition_by:
                writer = writer.partitionBy(*partition_by)
            with spark_errors(f"cannot write the data into {table.qualified_name}"):
                writer.parquet(spark_uris(spark, [staging])[0])
            written = _move_into_layout(table, staging, write_id, mode, partition or {}, moved, specs)
    except BaseException:
        for directory in moved:
            storage_for(directory).remove(directory)
        raise
    finally:
        if staging is not None:
            storage_for(staging).remove(staging)
    gathered: dict[str | None, GroupStats] = {}
    from_footers: set[str] = set()
    if collect is not None:
        types = {p.name: p.type_name for p in plans}
        observed = {p.name for p in observed_plans if p.from_footers}
        for name, files in written.items():
            _, figures = group_figures({(): list_data_files(files.directory)}, types)
            stats = collect(figures.get(()))
            if stats is not None:
                gathered[name] = stats
        missed = {name: files for name, files in written.items() if name not in gathered}
        from_footers = observed
        if missed:  # a footer without a figure it was expected to hold: the new files are read instead
            more, served = _gather_per_partition(spark, table, missed, plans)
            gathered.update(more)
            from_footers &= served
    if gather and plans and dynamic and written:
        gathered, from_footers = _gather_per_partition(spark, table, written, plans)
    unannounced = [name for name in written if name not in announced]
    if unannounced:
        metastore.txns.add_txn_components(txn.txn_id, table.dbName, table.tableName, unannounced, "i", write_id)
    if table.is_partitioned:
        txn.add_partitions(table, [_new_partition(table, name) for name in written if name is not None])
    txn.add(WriteChange(table, mode, write_id, valid, written, gathered, relayout))
    return WriteResult(write_id, mode, written, [p.name for p in plans if p.name in from_footers and gathered], notes)


def _gather_per_partition(spark: SparkSession, table: Table, written: dict[str | None, FilesWritten],
                          plans: list[ColumnPlan]) -> tuple[dict[str | None, GroupStats], set[str]]:
    """Each written partition's statistics of the rows just written, from one aggregation over the new
    files grouped by partition (an observation cannot group, and the files are still in the page cache), and
    the columns whose minimum, maximum and NULLs came from the new files' footers."""
    parts = [PartitionFiles(_new_partition(table, name) if name is not None else None, [files.directory],
                            list_data_files(files.directory)) for name, files in written.items()]
    plans, footers = served_by_footers(plans, {_values_of(part): part.files for part in parts})
    groups = aggregate_stats(read_snapshot(spark, table, parts), table.partition_key_names, plans, footers,
                             group_values=[_values_of(part) for part in parts])
    out: dict[str | None, GroupStats] = {}
    for name, part in zip(written, parts, strict=True):
        values = _values_of(part)
        group = groups.get(values)
        if group is not None and group.num_rows == written[name].num_rows:
            out[name] = group
        elif written[name].num_rows == 0:
            out[name] = empty_stats(plans, values)
        # else the aggregation's rows do not match the files': leave the partition's columns not accurate
    return out, {p.name for p in plans if p.from_footers}


def _values_of(part: PartitionFiles) -> tuple:
    return tuple(part.partition.values) if part.partition else ()


def _footer_will_hold(spark: SparkSession, plan: ColumnPlan) -> bool:
    """Whether the Parquet files Spark is about to write will hold the column's minimum, maximum and NULL count
    in their footers: every type footers serve, timestamps only when written as TIMESTAMP_MICROS (Spark's
    default INT96 keeps no bounds). The footers are checked once written all the same."""
    if not footer_servable(plan.type_name) or plan.element:
        return False
    return parse_type(plan.type_name).base != "timestamp" or \
        spark.conf.get("spark.sql.parquet.outputTimestampType", "INT96") == "TIMESTAMP_MICROS"


def _new_partition(table: Table, name: str, write_id: int = 0) -> Partition:
    return Partition(table.dbName, table.tableName, [v for _, v in parse_part_name(name)],
                     location=join(table.location, name), writeId=write_id,
                     keys=table.partition_key_names)


def _aligned_frame(spark: SparkSession, table: Table, data, partition: dict) -> tuple[DataFrame, list[str]]:
    """The data with the table's columns in order and types, static partition values added; and the notes on
    what reading a pandas frame changed."""
    notes: list[str] = []
    if isinstance(data, DataFrame):
        frame = data
    elif isinstance(data, pd.DataFrame):
        what = f"the pandas DataFrame written into {table.qualified_name}"
        with spark_errors(f"cannot read {what}"):
            converted = spark_frame_of(spark, data, what)
        frame, notes = converted.frame, converted.notes
    else:
        raise InvalidArgument(f"write takes a Spark or pandas DataFrame, not {type(data).__name__}")
    by_lower = {c.lower(): c for c in frame.columns}
    keys = {k.name: k for k in table.partitionKeys}
    static = {}
    for key, value in partition.items():
        if key.lower() not in keys:
            raise InvalidArgument(
                f"{key} is not a partition key of {table.qualified_name} (keys: {', '.join(keys) or 'none'})")
        static[key.lower()] = value
    if static and len(static) != len(keys):
        missing = [k for k in keys if k not in static]
        raise InvalidArgument(f"partition spec names {sorted(static)}, but {table.qualified_name} also "
                                    f"needs {missing}: give every key a value, or none for dynamic partitions")
    expected = [c.name for c in table.cols] + [k for k in keys if k not in static]
    missing = [name for name in expected if name not in by_lower]
    if missing:
        raise InvalidArgument(f"the data has no column {', '.join(missing)} for table {table.qualified_name}")
    extra = [c for c in frame.columns if c.lower() not in expected]
    if extra:
        raise InvalidArgument(f"the data has columns {', '.join(extra)} that table {table.qualified_name} "
                                    f"does not have" + (" (static partition keys come from partition=)"
                                                        if any(e.lower() in static for e in extra) else ""))
    columns = []
    for col in table.cols + table.partitionKeys:
        if col.name in static:
            text = canonical_value(col.name, col.type, static[col.name])
            columns.append(F.lit(text).cast(spark_type(col.type)).alias(col.name))
        else:
            columns.append(F.col(column_ref(by_lower[col.name])).cast(spark_type(col.type)).alias(col.name))
    return frame.select(*columns), notes


def _static_name(table: Table, partition: dict) -> str:
    """The name of the partition a static spec gives every key of."""
    values = [canonical_value(k.name, k.type, {x.lower(): v for x, v in partition.items()}[k.name])
              for k in table.partitionKeys]
    return Partition(table.dbName, table.tableName, values, keys=table.partition_key_names).partName


def _direct_target(table: Table, partition: dict, mode: str, write_id: int, specs: dict[str, SkewedInfo]
                   ) -> tuple[str | None, str] | None:
    """(partition name, directory) a write goes straight into, on an object store, when one directory is known
    before Spark writes: an unpartitioned table or a static partition, no list bucketing, and no earlier
    statement of this write ID there (an overwrite replaces those only once its own files are in). An object
    store has no rename, only a copy of every object: the ValidWriteIdList hides the directory until the
    transaction commits, and the cleaner removes it if it aborts. None: staged and moved, as on a local disk."""
    if is_local(table.location) or specs or (table.is_partitioned and not partition):
        return None
    name = _static_name(table, partition) if table.is_partitioned else None
    part_dir = join(table.location, name) if name else table.location
    if own_dirs(part_dir, write_id):
        return None
    return name, join(part_dir, base_dir_name(write_id) if mode == "overwrite" else delta_dir_name(write_id, 0))


def _move_into_layout(table: Table, staging: str, write_id: int, mode: str, partition: dict,
                      moved: list[str], specs: dict[str, SkewedInfo]) -> dict[str | None, FilesWritten]:
    """Renames Spark's output directories into the table as this write's delta (or base) directories,
    list-bucketing sub-directories inside them."""
    written: dict[str | None, FilesWritten] = {}
    leaves: dict[str | None, list[tuple[str | None, str]]] = {}
    for leaf, path in _leaf_dirs(staging).items():
        part_name, sub = split_leaf(leaf)
        leaves.setdefault(part_name, []).append((sub, path))
    if table.is_partitioned and partition and not leaves:
        # A static partition written with no rows still exists, empty (and an overwrite empties it).
        leaves = {_static_name(table, partition): []}
    if not table.is_partitioned:
        leaves = {None: [(None, staging)]}
    storage = storage_for(table.location)
    for rel, sources in sorted(leaves.items(), key=lambda kv: kv[0] or ""):
        part_dir = join(table.location, rel) if rel else table.location
        storage.makedirs(part_dir)
        earlier = own_dirs(part_dir, write_id)  # this transaction's earlier statements here
        if mode == "overwrite":
            for directory in earlier:  # the overwrite replaces them too; nobody else could see them
                storage.remove(directory)
            target = join(part_dir, base_dir_name(write_id))
        else:
            target = join(part_dir, delta_dir_name(write_id, len(earlier)))
        storage.makedirs(target)
        moved.append(target)
        for sub, source in sources:
            if sub is None:
                for name in storage.child_names(source):
                    if is_data_file(name) and name != DIRECTORY_COLUMN and not name.startswith(DIRECTORY_COLUMN + "="):
                        storage.move(join(source, name), join(target, name))
            else:
                storage.move(source, join(target, sub))
        written[rel] = _footer_totals(target)
        if rel in specs:
            directories = values_by_directory(specs[rel])
            written[rel].skewed_locations = {directories[sub]: sub for sub, _ in sources if sub in directories}
    return written


def _leaf_dirs(staging: str) -> dict[str, str]:
    """Partition name -> directory, for each directory of Spark's partitioned output that holds files."""
    out = {}
    for data_file in storage_for(staging).data_files(staging, hidden_folders=True):  # __list_bucketing_dir=...
        folder = parent(data_file.path)
        if not same_location(folder, staging):
            out[relative(folder, staging)] = folder
    return out


def _footer_totals(directory: str) -> FilesWritten:
    """Exact row counts and sizes of the new files, from their Parquet footers (no data is read)."""
    totals = FilesWritten(directory)
    for data_file in list_data_files(directory):
        rows, raw_bytes = footer_counts(data_file)
        totals.num_files += 1
        totals.num_rows += rows
        totals.total_size += data_file.size
        totals.raw_data_size += raw_bytes
    return totals


@dataclass(frozen=True)
class WriteChange:
    """What a write records when its transaction commits (a `metastore.changes.Change`): the partitions it
    created, and each written partition's (or the table's) counts and the column statistics gathered while
    writing, merged with the stored ones as Hive keeps them."""
    table: Table
    mode: str
    write_id: int
    valid: ValidWriteIdList
    written: dict = field(compare=False)  # partition name (None: the table) -> FilesWritten
    gathered: dict = field(compare=False)  # partition name -> GroupStats of the rows written
    relayout: bool = False
    kind: ClassVar[str] = "files"

    def apply(self, metastore: Repositories) -> None:
        _record_write(metastore, self.table, self.written, self.write_id, self.mode, self.valid, self.gathered,
                      self.relayout)

    def describe(self) -> str:
        rows = sum(f.num_rows for f in self.written.values())
        where = f"{len(self.written):,} partition(s)" if self.table.is_partitioned else "the table"
        return f"{self.mode} of {rows:,} rows into {self.table.qualified_name}, {where}, write ID {self.write_id}"

    def follow_up(self) -> FollowUp | None:
        if not self.table.is_partitioned:
            return None
        return FollowUp(self.table, sums=True, write_id=self.write_id,
                        merge=frozenset(o.colName for g in self.gathered.values() for o in g.columns))


def _record_write(metastore: Repositories, table: Table, written: dict[str | None, FilesWritten], write_id: int,
                  mode: str, valid: ValidWriteIdList, gathered: dict[str | None, GroupStats],
                  relayout: bool = False) -> None:
    """Statistics after the write, as Hive keeps them: counts add (append) or are replaced (overwrite);
    column statistics gathered during the write are merged in, the others of what changed are no
    longer accurate. Runs inside the commit."""
    if not table.is_partitioned:
        current = metastore.catalog.get_table(table.dbName, table.tableName)
        _apply_table(metastore, table, _planned(metastore, table, None, current.parameters, written[None], mode,
                                                gathered.get(None)), write_id, valid)
        return
    by_name = {name: files for name, files in written.items() if name is not None}  # a partitioned table's: all
    existing = {p.partName: p for p in metastore.catalog.get_partitions(table.dbName, table.tableName, list(by_name))}
    new = [_new_partition(table, name, write_id) for name in by_name if name not in existing]
    metastore.catalog.add_partitions(new)
    plans = {name: _planned(metastore, table, name, existing[name].parameters if name in existing else None, files,
                            mode, gathered.get(name)) for name, files in by_name.items()}
    # every partition's parameters, then statistics, in one call each: statements a table, not a partition (a
    # write of 2,000 new partitions on PostgreSQL spent 20.6 s in 42,000 statements, measured)
    accurate = metastore.catalog.alter_partitions_params(table.dbName, table.tableName,
                                                 {name: plan.updates for name, plan in plans.items()},
                                                 write_id=write_id, valid_write_ids=valid)
    recounts = {name: plan.recount for name, plan in plans.items() if plan.complete and not accurate[name]}
    if recounts:  # a write this one could not see changed them: the rows still count
        metastore.catalog.alter_partitions_params(table.dbName, table.tableName, recounts)
    now = int(time.time())
    metastore.column_stats.set_aggr_stats_for([ColumnStatistics(ColumnStatisticsDesc(False, table.dbName, table.tableName,
                                                                                     name, now),
                                                   plan.objs) for name, plan in plans.items() if plan.objs],
                                 write_id, valid)
    for name, files in by_name.items():
        if relayout:
            info = table.skewedInfo and SkewedInfo(table.skewedInfo.skewedColNames, table.skewedInfo.skewedColValues,
                                                   files.skewed_locations)
            metastore.skews.alter_partition_skew(table.dbName, table.tableName, name, info, table.storedAsSubDirectories)
        elif files.skewed_locations:
            metastore.skews.add_skewed_locations(table.dbName, table.tableName, name, files.skewed_locations)


def _gathered_stats(metastore: Repositories, table: Table, part_name: str | None, previous: StatsAccuracy,
                    previous_rows: int, replace: bool, gathered: GroupStats) -> tuple[list, set[str]]:
    """The column statistics to store after the write, and the columns they are accurate for: the
    gathered ones as they are (new partition, overwrite), or merged with the stored ones where those
    were accurate (append)."""
    if replace:
        return gathered.columns, {o.colName for o in gathered.columns}
    names = [o.colName for o in gathered.columns if previous.basic and o.colName in previous.columns]
    if not names:
        return [], set()
    if part_name is None:
        stored = metastore.column_stats.get_table_statistics(table.dbName, table.tableName, names)
    else:
        stored = metastore.column_stats.get_partitions_statistics(table.dbName, table.tableName, [part_name],
                                                                  names).get(part_name)
    have = {o.colName: o for o in stored.statsObj} if stored else {}
    merged = [merge_column_stats([(have[o.colName], previous_rows), (o, gathered.num_rows)])
              for o in gathered.columns if o.colName in have]
    return merged, {o.colName for o in merged}


@dataclass(frozen=True)
class _OwnerUpdate:
    """What a write changes of a table's or partition's statistics: its parameters, the count to keep instead
    when a write it could not see made them inaccurate meanwhile, and the column statistics to store."""
    updates: dict[str, str | None]
    recount: dict[str, str | None]
    complete: bool
    objs: list


def _planned(metastore: Repositories, table: Table, part_name: str | None, params: dict | None, files: FilesWritten,
             mode: str, gathered: GroupStats | None) -> _OwnerUpdate:
    previous = StatsAccuracy.parse((params or {}).get(COLUMN_STATS_ACCURATE))
    # a new partition, an overwrite, or a first write into an owner known to be empty (a new table, an
    # added partition): the written rows are all there is, so their statistics replace the stored ones
    was_empty = params is not None and previous.basic and int(params.get("numRows", 0) or 0) == 0
    replace = mode == "overwrite" or params is None or was_empty
    known_rows = replace or previous.basic
    objs: list[ColumnStatisticsObj] = []
    accurate_columns: set[str] = set()
    if gathered is not None and known_rows:
        previous_rows = int((params or {}).get("numRows", 0) or 0)
        objs, accurate_columns = _gathered_stats(metastore, table, part_name, previous, previous_rows, replace,
                                                 gathered)

    def total(key: str, added: int) -> str:
        return str(added if replace else int((params or {}).get(key, 0) or 0) + added)

    removed = int((params or {}).get("numRows", 0) or 0) if mode == "overwrite" else 0
    complete = known_rows and accurate_columns >= table.stats_column_names
    updates = {
        "numFiles": total("numFiles", files.num_files),
        "totalSize": total("totalSize", files.total_size),
        "numRows": total("numRows", files.num_rows) if known_rows else (params or {}).get("numRows", "0"),
        "rawDataSize": total("rawDataSize", files.raw_data_size) if known_rows else (params or {}).get("rawDataSize", "0"),
        COLUMN_STATS_ACCURATE: StatsAccuracy(basic=known_rows, columns=accurate_columns).to_param(),
        ROWS_CHANGED: rows_changed_param(params, files.num_rows + removed, complete),
    }
    recount: dict[str, str | None] = {ROWS_CHANGED: rows_changed_param(params, files.num_rows + removed, False)}
    return _OwnerUpdate(updates, recount, complete, objs)


def _apply_table(metastore: Repositories, table: Table, plan: _OwnerUpdate, write_id: int,
                 valid: ValidWriteIdList) -> None:
    accurate = metastore.catalog.alter_table_params(table.dbName, table.tableName, plan.updates, write_id=write_id,
                                            valid_write_ids=valid)
    if plan.complete and not accurate:  # a write this one could not see changed it: the rows still count
        metastore.catalog.alter_table_params(table.dbName, table.tableName, plan.recount)
    if plan.objs:
        desc = ColumnStatisticsDesc(True, table.dbName, table.tableName, None, int(time.time()))
        metastore.column_stats.update_table_column_statistics(ColumnStatistics(desc, plan.objs), write_id, valid)
