"""Running Hive's ANALYZE: plan what to scan, one Spark aggregation, one metastore transaction.

Statistics are computed over a snapshot (the files the table's ValidWriteIdList admits when the
command starts). When a partition is written again before the results are stored, its new
statistics are stored but not marked accurate: they describe data that is no longer current.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, ClassVar, cast

from pyspark.sql import SparkSession

from ..coltypes import parse_type
from ..column_statistics.estimators import BOUNDS_PARAM, WHOLE_TIER, Tier
from ..column_statistics.frequent_items import COLUMNS_PROPERTY, frequent_columns, items_named, items_tracked
from ..column_statistics.quantiles import KLL_PROPERTY, kll_for
from ..errors import InvalidArgument, spark_errors
from ..file_columns import nanos_columns
from ..files import DataFile
from ..metastore import (
    COLUMN_STATS_ACCURATE,
    ColumnPath,
    ColumnStatistics,
    ColumnStatisticsDesc,
    MetaException,
    Metastore,
    Partition,
    StatsAccuracy,
    Table,
    ValidWriteIdList,
)
from ..metastore.changes import FollowUp, Repositories
from ..metastore.repositories.row_sketches import RowSketch
from ..metastore.repositories.snapshot_files import file_keys_of
from ..metastore.rows.staleness import PARAM as ROWS_CHANGED
from ..sql.partition_spec import matching_partitions
from ..sql.statements import Analyze, AnalyzeMode
from ..stats import ColumnPlan, GroupStats, empty_stats
from ..stats.aggregate import aggregate_groups, served_by_footers
from ..stats.footers import GroupFigures
from ..stats.partition_results import PartitionResults
from ..storage import FooterUnavailable, footers_read_meanwhile, in_this_context, is_local, storage_for
from ..tables.external import check_column_types_agree
from ..tables.kinds import kind_of, read_snapshot, snapshot_files
from ..tables.layout import footer_counts
from ..tables.snapshot import PartitionFiles, changes_named
from .tiers import MIN_SAMPLED_ROW_GROUPS, TieredScan, metadata_tier, sampled_tier, tierable

if TYPE_CHECKING:
    from ..transaction import Transaction


@dataclass
class AnalyzeOutcome:
    table: str
    mode: AnalyzeMode
    partitions: list[str | None]
    columns: list[str]
    num_rows: int | None
    skipped_columns: list[str] = field(default_factory=list)
    stale_partitions: list[str | None] = field(default_factory=list)
    seconds: float = 0.0
    footer_columns: list[str] = field(default_factory=list)  # min, max and NULL count from footers, not the scan
    truncated_columns: list[str] = field(default_factory=list)  # nanosecond timestamps, read to the microsecond
    tier: Tier = WHOLE_TIER  # every value, the files' metadata alone, or a sample of row groups
    read_share: dict = field(default_factory=dict)  # partition name -> share of its rows read
    whole: list = field(default_factory=list)  # partitions a sample would have read most of: read whole
    tier_notes: list[str] = field(default_factory=list)
    spelling: dict[str, str] = field(default_factory=dict)  # a column's name as its files spell it (userId)

    @property
    def message(self) -> str:
        def named(columns: list[str]) -> str:
            return ", ".join(self.spelling.get(c, c) for c in columns)

        where = (f"{len(self.partitions):,} partition{'s' if len(self.partitions) != 1 else ''}"
                 if self.partitions != [None] else "the table")
        what = {"noscan": "files and sizes", "basic": "basic statistics"}.get(
            self.mode, f"statistics of {len(self.columns)} column{'s' if len(self.columns) != 1 else ''}"
                       f" ({named(self.columns)})")
        rows = f", {self.num_rows:,} rows" if self.num_rows is not None else ""
        text = f"Analyzed {self.table}: {what} for {where}{rows} in {self.seconds:.1f} s."
        if self.tier.is_metadata:
            text += (" From the files' metadata alone (footers, dictionary pages), no value read: "
                     "inspect.bounds() says which figures are exact and the band of the others.")
        elif self.tier and len(self.whole) == len(self.partitions):
            text += (f" A {self.tier.label} sample would have read most of the rows of every partition: read whole, every "
                     "figure exact.")
        elif self.tier:
            shares = [s for s in self.read_share.values() if s]
            low, high = (min(shares), max(shares)) if shares else (0.0, 0.0)
            read = ("" if not shares else f", {low:.1%} of the rows read" if len(shares) == 1
                    else f", {low:.1%} of each partition's rows read" if f"{low:.1%}" == f"{high:.1%}"
                    else f", {low:.1%}–{high:.1%} of each partition's rows read")
            text += (f" From a {self.tier.label} sample of row groups{read}: figures the files' metadata holds exactly are "
                     "exact, the others estimates with a band (inspect.bounds()).")
            asked = self.tier.fraction
            if asked is not None and shares and low > 2 * asked:
                text += (f" A sample reads {MIN_SAMPLED_ROW_GROUPS} row groups of a partition at least (a band needs "
                         f"a spread), so these partitions' few row groups made it read {low:.0%} or more, not "
                         f"{asked:.0%}: a smaller sample costs as much here.")
            if self.whole:
                names = ", ".join(p or self.table for p in self.whole[:5]) + (", ..." if len(self.whole) > 5 else "")
                text += f" Analyzed whole (a sample would have read most of their rows, or deletes were there): {names}."
        for note in self.tier_notes:
            text += f" {note}"
        if self.footer_columns:
            text += f" Minimum, maximum and NULLs of {named(self.footer_columns)} from the files' footers."
        if self.truncated_columns:
            text += (f" The files keep {named(self.truncated_columns)} in nanoseconds: truncated to the microsecond, "
                     "Spark's precision.")
        if self.skipped_columns:
            text += f" Skipped (no statistics for their type): {named(self.skipped_columns)}."
        if self.stale_partitions:
            names = ", ".join(p or self.table for p in self.stale_partitions)
            text += f" Written by a write this ANALYZE could not see, so not marked accurate: {names}."
        return text


def column_plans(table: Table, stmt: Analyze, kll: bool, frequent_items: int = 0) -> tuple[list[ColumnPlan], list[str]]:
    """The columns to analyze and the ones skipped; raises naming an unknown or unsupported column.
    A struct column stands for itself (its NULL count) and its leaves (`payload.user.id`), each a column of its
    own. With `kll` each column of a type with a distribution sketch gets one; each column of a key's type a
    frequent-items sketch tracking `frequent_items` values (0: none)."""
    keys = set(table.partition_key_names)

    def plan(column: ColumnPath) -> ColumnPlan:
        return ColumnPlan.of(column, kll, items_tracked(table.parameters, column.name, column.type, frequent_items),
                             items_named(table.parameters, column.name))

    figure_columns = table.figure_columns
    if stmt.columns is None:
        covered = {c.path[0] for c in figure_columns}
        return [plan(c) for c in figure_columns], [c.name for c in table.cols if c.name not in covered]
    plans, seen = [], set()
    by_name = {c.name: c for c in figure_columns}
    for name, _pos in stmt.columns:
        if name in keys:
            raise InvalidArgument(f"{name} is a partition key of {table.qualified_name}: "
                                        "partition keys have no column statistics")
        if name not in by_name:
            whole = table.column(name)
            if whole is None:
                raise table.no_such_column(name)
            raise InvalidArgument(f"column {name} is {parse_type(whole.type).name}: no statistics are kept for "
                                  "that type")
        chosen = by_name[name]
        # a struct: itself and everything under it
        for column in [chosen] + ([c for c in figure_columns if c.path[:len(chosen.path)] == chosen.path
                                   and c is not chosen] if chosen.is_struct else []):
            if column.name not in seen:
                plans.append(plan(column))
                seen.add(column.name)
    return plans, []


def refuse_gone_folders(table: Table, files: list[PartitionFiles]) -> None:
    """An external table (or partition) whose folder is gone is refused by name: its statistics stay as they were
    and go stale, rather than being recorded as empty (its files were deleted, or moved; Hive's MSCK REPAIR TABLE
    ... SYNC drops the partitions gone). `colstats.analyze.missing_as_empty` records them as empty instead."""
    if not kind_of(table).directories_are_partitions or table.tableType != "EXTERNAL_TABLE":
        return
    for part in files:
        location = part.partition.location if part.partition is not None else table.location
        if not part.files and location and not storage_for(location).is_dir(location):
            what = f"partition {table.spelled_partition(part.part_name)}" if part.part_name else "its folder"
            raise InvalidArgument(
                f"cannot analyze {table.qualified_name}: {what} at {location} no longer exists; MSCK REPAIR TABLE "
                f"{table.tableName} SYNC drops partitions whose folders are gone, or SET "
                "colstats.analyze.missing_as_empty=true records them as empty")


def run_analyze(spark: Callable[[], SparkSession], metastore: Metastore, stmt: Analyze, current_db: str,
                txn: Transaction, only: list[str] | None = None) -> AnalyzeOutcome:
    """Computes the statistics over `txn`'s snapshot now; they are stored when `txn` commits (an
    ANALYZE takes a write ID, as Hive's does, so readers can tell whose statistics they get).
    `only` keeps the named partitions of those the statement selects (still one Spark job)."""
    started = time.perf_counter()
    table = metastore.catalog.get_table(stmt.table.db or current_db, stmt.table.name)
    if stmt.partition and not table.is_partitioned:
        raise InvalidArgument(f"table {table.qualified_name} is not partitioned, but a PARTITION clause was given")
    plans, skipped = (column_plans(table, stmt, kll_for(table.parameters, metastore.settings.kll_enabled),
                                   metastore.settings.frequent_items)
                      if stmt.mode == "columns" else ([], []))
    partitions = (matching_partitions(metastore, table, stmt.partition, txn.new_partitions(table))
                  if table.is_partitioned else None)
    if partitions is not None and only is not None:
        partitions = [p for p in partitions if p.partName in set(only)]
    valid = txn.snapshot(table)
    write_id = txn.write_id(table)  # NOSCAN too: it changes numFiles and totalSize
    files = snapshot_files(metastore, table, valid, partitions)
    if not metastore.settings.missing_as_empty:
        refuse_gone_folders(table, files)
    listed = [f for part in files for f in part.files]
    if table.tableType == "EXTERNAL_TABLE" and kind_of(table).directories_are_partitions \
            and all(is_local(f.path) for f in listed):  # an object store's footers are GETs: Spark's read names it
        check_column_types_agree(listed, table.location)  # files another job added since registration
    results = PartitionResults()
    tiered: TieredScan | None = None
    # a sketch of whole rows (a profile's duplicates: about a tenth more of the pass) where the scan reads every
    # column anyway, of a table keeping its distributions (colstats.kll.enable: the statistics a profile reads)
    every_column = (stmt.mode == "columns" and {p.name for p in plans} >= table.stats_column_names
                    and any(p.histogram for p in plans))
    tier_notes: list[str] = []
    footer_columns: set[str] = set()
    try:
        if stmt.mode != "noscan":
            plans = _frequent_items_within_reach(plans, table, len(files), tier_notes)
            if plans and stmt.tier:  # the files' metadata alone, or a sample
                plans = _tierable(plans, stmt, table, tier_notes)
                plans, footers = _footer_plans(table, files, plans)
                tiered = _tiered_scan(spark, table, files, plans, footers, stmt, metastore.settings.sample_seed, tier_notes)
                footer_columns = {p.name for p in plans if p.from_footers}
                del footers
            scanned = files if tiered is None else [p for p in files if p.part_name in tiered.whole]
            if scanned:
                session = spark()  # Spark starts once the statement is known good
                with changes_named(files), spark_errors(f"cannot analyze {table.qualified_name}"), \
                        footers_read_meanwhile([f for p in files for f in p.files]):  # for rawDataSize, below
                    scanned_from_footers = _scan(session, table, scanned, plans, every_column, results)
                footer_columns = scanned_from_footers if tiered is None else footer_columns & scanned_from_footers
            if tiered is not None:
                results.add_all(tiered.groups.values())
    except BaseException:
        results.close()
        raise
    outcome = AnalyzeOutcome(table.qualified_name, stmt.mode, [p.part_name for p in files], [p.name for p in plans],
                             None, skipped, footer_columns=[p.name for p in plans if p.name in footer_columns],
                             truncated_columns=[p.name for p in plans if p.name in nanos_columns(table.parameters)],
                             spelling={p.name: table.spelled(p.name) for p in plans})
    if stmt.mode != "noscan":
        outcome.tier_notes = tier_notes
    if tiered is not None:
        outcome.tier = stmt.tier
        outcome.read_share = tiered.read_share
        outcome.whole = tiered.whole
    raw_sizes = {p.part_name: _raw_data_size(p.files) for p in files} if stmt.mode != "noscan" else {}
    metastore.txns.add_txn_components(txn.txn_id, table.dbName, table.tableName, [p.part_name for p in files], "u",
                                 write_id)
    txn.add(AnalyzeChange(table, stmt.mode, write_id, valid, tuple(plans), tuple(files), results, raw_sizes,
                          outcome, _tier_params(tiered, plans, outcome.tier.label)))
    outcome.seconds = time.perf_counter() - started
    return outcome


# partitions one ANALYZE keeps frequent items of by default: each partition keeps a sketch a column (1.4 KB at the
# least: a 100-row partition's), and the job's results pass through the driver at once; at 10,000 partitions of 20
# columns the lab's process peaked at 1.15 GiB, and at 100,000 Spark's driver ran out of heap taking them in
FREQUENT_ITEMS_PARTITIONS = 5_000


def _frequent_items_within_reach(plans: list[ColumnPlan], table: Table, partitions: int,
                                 notes: list[str]) -> list[ColumnPlan]:
    """The plans without their default frequent-items sketches when the job covers more than
    FREQUENT_ITEMS_PARTITIONS partitions, said in `notes`; the columns a table names keep theirs."""
    if partitions <= FREQUENT_ITEMS_PARTITIONS or frequent_columns(table.parameters) is not None:
        return plans
    dropped = [p.name for p in plans if p.frequent_items]
    if not dropped:
        return plans
    notes.append(f"Frequent items not kept: {partitions:,} partitions would keep a sketch each of every column; "
                 f"name the columns that need them in {COLUMNS_PROPERTY} (TBLPROPERTIES), or analyze fewer "
                 "partitions at a time.")
    return [replace(p, frequent_items=0) if p.frequent_items else p for p in plans]


def _tierable(plans: list[ColumnPlan], stmt: Analyze, table: Table, notes: list[str]) -> list[ColumnPlan]:
    """The plans a tier computes; the others (a struct's own NULLs, an array's or map's sizes and elements) are
    left out and named in `notes`, or refused when nothing is left."""
    kept = [p for p in plans if tierable(p)]
    left = [p.name for p in plans if not tierable(p)]
    clause = "NOSCAN" if stmt.tier.is_metadata else "SAMPLE"
    if not kept:
        raise InvalidArgument(f"{', '.join(left)} of {table.qualified_name}: a struct's own NULLs and an array's or "
                              f"map's values are counted by a scan only; analyze them without {clause}")
    if left:
        notes.append(f"Left as they were (a scan counts them; analyze them without {clause}): {', '.join(left)}.")
    return kept


def _tiered_scan(spark: Callable[[], SparkSession], table: Table, files: list[PartitionFiles],
                 plans: list[ColumnPlan], footers: dict, stmt: Analyze, seed: int | None,
                 notes: list[str]) -> TieredScan | None:
    """Tier 0 or 1 over `files`, or None (every value read) where they cannot hold, said in `notes`."""
    what = "metadata alone" if stmt.tier.is_metadata else "a sample"
    # a partition with deletes (Delta's vectors, Iceberg's position deletes) is tiered too: metadata alone subtracts
    # the rows they remove and makes its figures bands, a sample leaves those rows out of what it reads
    try:
        if stmt.tier.is_metadata:
            tiered = metadata_tier(table, files, plans, footers)
        else:
            schema = read_snapshot(spark(), table, files, reuse=True).drop(*table.partition_key_names).schema
            with spark_errors(f"cannot analyze {table.qualified_name}"):
                tiered = sampled_tier(spark, table, files, plans, footers, stmt.tier.fraction or 1.0, schema, seed)
        return tiered
    except FooterUnavailable:
        notes.append(f"Every value read: the files' footers cannot be read here, and {what} starts from them.")
        return None


def _tier_params(tiered: TieredScan | None, plans: list[ColumnPlan], tier: str) -> dict:
    """Partition name -> column -> {"tier", "read", "figures"} for a tiered ANALYZE's partitions."""
    if tiered is None:
        return {}
    return {name: {column: {"tier": tier, "read": round(tiered.read_share.get(name, 0.0), 6),
                            "figures": {figure: band.to_list() for figure, band in figures.items()}}
                   for column, figures in bounds.items()}
            for name, bounds in tiered.bounds.items() if name not in tiered.whole}


def kept_bounds(before: str | None, columns: list[str], tiered: dict | None) -> str | None:
    """A partition's bounds parameter after an ANALYZE of `columns`: theirs replaced (by `tiered`'s, or gone
    when every value was read), the other columns' kept."""
    kept = json.loads(before) if before else {}
    for column in columns:
        kept.pop(column, None)
    kept.update(tiered or {})
    return json.dumps(kept, sort_keys=True, default=str) if kept else None


# partitions one Spark job of an ANALYZE covers at most: a job's partitions' footer figures are held while it
# runs (at 100,000 one-file partitions of 20 columns, 700 MiB in this process), and more jobs cost a few tenths
# of a second each
PARTITIONS_A_JOB = 10_000


def _scan(session: SparkSession, table: Table, scanned: list[PartitionFiles], plans: list[ColumnPlan],
          rows_sketched: bool, results: PartitionResults) -> set[str]:
    """Scans `scanned` for `plans` into `results`, PARTITIONS_A_JOB partitions at a time; returns the columns whose
    minimum, maximum and NULLs came from every partition's footers."""
    from_footers = {p.name for p in plans}
    for start in range(0, len(scanned), PARTITIONS_A_JOB):
        jobs = _scan_jobs(table, scanned[start:start + PARTITIONS_A_JOB], plans)
        # the jobs wait on each other for nothing: submitted together, Spark fills each one's tail with the
        # other's tasks
        with ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix="colstats-scan") as side:
            running = []
            for parts, job_plans, job_footers in jobs:
                # resolving the read names a store Spark cannot reach (its file system's class missing) at once
                frame = read_snapshot(session, table, parts, reuse=True)
                running.append(side.submit(in_this_context(results.add_all), aggregate_groups(
                    frame, table.partition_key_names, job_plans, job_footers, rows_sketched=rows_sketched,
                    group_values=[_values_of(p) for p in parts])))
                from_footers &= {p.name for p in job_plans if p.from_footers}
            for job in running:
                job.result()
    return from_footers


def _scan_jobs(table: Table, scanned: list[PartitionFiles], plans: list[ColumnPlan]
               ) -> list[tuple[list[PartitionFiles], list[ColumnPlan], dict]]:
    """The scan's jobs over `scanned`: the partitions without deletes with `plans` served by their footers where
    they can be, and those with deletes computing every figure (measured: a fifth of 30 partitions with deletion
    vectors made one scan of them all compute minimum, maximum and NULLs for the other 24 too, 1.1 s of 8.2)."""
    with_deletes = [p for p in scanned if p.deletes]
    without = [p for p in scanned if not p.deletes]
    jobs: list[tuple[list[PartitionFiles], list[ColumnPlan], dict]] = []
    if without:
        jobs.append((without, *_footer_plans(table, without, plans)))
    if with_deletes:
        jobs.append((with_deletes, [replace(p, from_footers=False) for p in plans], {}))
    return jobs


def _footer_plans(table: Table, files: list[PartitionFiles], plans: list[ColumnPlan]
                  ) -> tuple[list[ColumnPlan], dict[tuple, GroupFigures]]:
    """The plans with `from_footers` set for the columns whose minimum, maximum and NULL count every file's
    footer (or table format's figures) holds exactly, and each partition's figures of them: the scan then
    computes only what footers lack (sketches, string lengths, true and false counts). Iceberg's position
    deletes remove rows footers still count: such a snapshot is scanned for every figure."""
    if any(p.deletes for p in files):
        return plans, {}
    if any(not is_local(f.path) and f.figures is None for p in files for f in p.files):
        # an object store's footer is a GET: the scan, which reads every column for its sketches anyway, computes
        # minimum, maximum and NULLs too, and the footers (for rawDataSize) are read while it runs
        return plans, {}
    return served_by_footers(plans, {_values_of(p): p.files for p in files}, file_keys_of(table))


def _values_of(part: PartitionFiles) -> tuple:
    return tuple(part.partition.values) if part.partition else ()


def _keep_row_sketches(metastore: Repositories, table: Table, kept: list[PartitionFiles], grouped: dict,
                       current: dict, fresh_table: Table, write_id: int, now: int) -> None:
    """Keeps the row sketch of each owner this ANALYZE read whole; a managed owner's sketch made by the ANALYZE
    before, with no write since, follows it to this one's write ID (no row changed). An external table's files
    change unseen: its sketch holds only while no ANALYZE has been made since."""
    made = {part.part_name: RowSketch(grouped[part.part_name].row_sketch, grouped[part.part_name].num_rows,
                                      write_id, now)
            for part in kept if grouped[part.part_name].row_sketch is not None}
    if made:
        metastore.row_sketches.set_row_sketches(table.dbName, table.tableName, made)
    if kind_of(table).written_elsewhere:
        return
    carried = {part.part_name: ((current[part.part_name] if part.partition is not None else fresh_table).writeId,
                                write_id) for part in kept if part.part_name not in made}
    if carried:
        metastore.row_sketches.carry_row_sketches(table.dbName, table.tableName, carried)


def _group_of(part: PartitionFiles, plans: list[ColumnPlan], groups: PartitionResults) -> GroupStats:
    return groups.get(_values_of(part)) or empty_stats(plans, _values_of(part))


def _raw_data_size(files: list[DataFile]) -> int:
    try:
        return sum(footer_counts(f)[1] for f in files)
    except FooterUnavailable:  # listed through Spark without credentials: unknown, 0 as before any ANALYZE
        return 0


@dataclass(frozen=True)
class AnalyzeChange:
    """What an ANALYZE stores when its transaction commits (a `metastore.changes.Change`): the basic
    statistics of each partition (or the table) read, and the column statistics of `plans`, computed over
    snapshot `valid` under `write_id`. `outcome` learns which of them could not be marked accurate."""
    table: Table
    mode: AnalyzeMode
    write_id: int
    valid: ValidWriteIdList
    plans: tuple[ColumnPlan, ...]
    files: tuple[PartitionFiles, ...]
    groups: PartitionResults = field(compare=False)
    raw_sizes: dict = field(compare=False)
    outcome: AnalyzeOutcome = field(compare=False)
    # partition name -> column -> its tier and figures' bands (None: computed from every value)
    tiers: dict = field(compare=False, default_factory=dict)
    kind: ClassVar[str] = "statistics"

    def apply(self, metastore: Repositories) -> None:
        if self.groups.closed:  # its results go once: applied again, every partition would read as empty
            raise MetaException(f"{self.describe()}: already stored, or its transaction ended")
        try:
            _persist(metastore, self.table, self.mode, list(self.plans), list(self.files), self.groups,
                     self.raw_sizes, self.outcome, self.write_id, self.valid, self.tiers)
        finally:
            self.groups.close()

    def describe(self) -> str:
        where = f"{len(self.files):,} partition(s)" if self.table.is_partitioned else "the table"
        what = "basic statistics" if self.mode == "noscan" else f"statistics of {len(self.plans)} column(s)"
        # the cause of every state this commit keeps in history: a sampled one says so there too
        tier = self.outcome.tier
        how = ("" if not tier else ", from the files' metadata alone" if tier.is_metadata
               else f", from a {tier.label} sample of row groups" + (f" ({len(self.outcome.whole):,} partition(s) read whole)"
                                                                if self.outcome.whole else ""))
        return f"{what} of {self.table.qualified_name}, {where}{how}, write ID {self.write_id}"

    def follow_up(self) -> FollowUp | None:
        if not self.table.is_partitioned:
            return None
        return FollowUp(self.table, sums=True, write_id=self.write_id, merge=frozenset(p.name for p in self.plans))


# partitions stored a batch at a time: their Partition rows, figures and parameters are held only while their batch
# is written, all inside the commit's one transaction
PARTITIONS_A_BATCH = 2_000


def _persist(metastore: Repositories, table: Table, mode: AnalyzeMode, plans: list[ColumnPlan], files: list[PartitionFiles],
             groups: PartitionResults, raw_sizes: dict, outcome: AnalyzeOutcome, write_id: int,
             valid: ValidWriteIdList, tiers: dict | None = None) -> None:
    """Stores what the command computed, inside the committing metastore transaction, PARTITIONS_A_BATCH
    partitions at a time. The metastore marks statistics not accurate where the partition was written by a write
    this ANALYZE could not see (HIVE-19416's writer rule)."""
    now = int(time.time())
    fresh_table = metastore.catalog.get_table(table.dbName, table.tableName)
    if any(p.histogram for p in plans) and KLL_PROPERTY not in fresh_table.parameters:
        # sketches once kept stay kept: a later session with hive.stats.kll.enable off does not drop them
        metastore.catalog.alter_table_params(table.dbName, table.tableName, {KLL_PROPERTY: "true"})
        fresh_table.parameters[KLL_PROPERTY] = "true"
    total_rows = 0
    for start in range(0, len(files), PARTITIONS_A_BATCH):
        total_rows += _persist_batch(metastore, table, fresh_table, mode, plans, files[start:start + PARTITIONS_A_BATCH],
                                     groups, raw_sizes, outcome, write_id, valid, tiers or {}, now)
    if mode != "noscan":
        outcome.num_rows = total_rows


def _persist_batch(metastore: Repositories, table: Table, fresh_table: Table, mode: AnalyzeMode, plans: list[ColumnPlan],
                   files: list[PartitionFiles], groups: PartitionResults, raw_sizes: dict, outcome: AnalyzeOutcome,
                   write_id: int, valid: ValidWriteIdList, tiers: dict, now: int) -> int:
    """`_persist` of some of the partitions (or of the table); returns the rows they hold."""
    names = [p.part_name for p in files if p.part_name is not None]
    current: dict[str | None, Partition] = {p.partName: p for p in metastore.catalog.get_partitions(
        table.dbName, table.tableName, names)} if table.is_partitioned else {}
    total_rows = 0
    kept = [part for part in files if part.partition is None or part.part_name in current]  # not dropped meanwhile
    grouped = {part.part_name: _group_of(part, plans, groups) for part in kept}
    updates: dict[str | None, dict[str, str | None]] = {}
    for part in kept:
        params = current[part.part_name].parameters if part.partition is not None else fresh_table.parameters
        group = grouped[part.part_name]
        changes: dict[str, str | None] = {"numFiles": str(len(part.files)), "totalSize": str(part.total_size)}
        if mode != "noscan":
            total_rows += group.num_rows
            previous = StatsAccuracy.parse(params.get(COLUMN_STATS_ACCURATE))
            columns = previous.columns if previous.basic else set()
            changes.update(numRows=str(group.num_rows), rawDataSize=str(raw_sizes[part.part_name]))
            changes[COLUMN_STATS_ACCURATE] = StatsAccuracy(True, columns | {p.name for p in plans}).to_param()
            if plans:
                changes[BOUNDS_PARAM] = kept_bounds(params.get(BOUNDS_PARAM), [p.name for p in plans],
                                                    tiers.get(part.part_name))
        updates[part.part_name] = changes
    accuracy: dict[str | None, bool]
    if table.is_partitioned:  # every partition's in one call: the table is read once, not once a partition
        stored = metastore.catalog.alter_partitions_params(
            table.dbName, table.tableName, {cast(str, name): changes for name, changes in updates.items()},
            write_id=write_id, valid_write_ids=valid) if updates else {}
        accuracy = dict(stored.items())
    else:
        accuracy = {None: metastore.catalog.alter_table_params(table.dbName, table.tableName, updates[None],
                                                       write_id=write_id, valid_write_ids=valid)}
    resets: dict[str | None, dict[str, str | None]] = {}
    for part in kept:
        accurate = accuracy[part.part_name]
        if mode != "noscan" and not accurate:
            outcome.stale_partitions.append(part.part_name)
        complete = StatsAccuracy.parse(updates[part.part_name].get(COLUMN_STATS_ACCURATE)).columns \
            >= table.stats_column_names
        # another job changes an external table's files uncounted: its changed fraction stays unknown
        if mode != "noscan" and accurate and complete and table.tableType == "MANAGED_TABLE":
            resets[part.part_name] = {ROWS_CHANGED: "0"}  # every column's statistics hold again
    if resets and table.is_partitioned:
        metastore.catalog.alter_partitions_params(table.dbName, table.tableName,
                                          {cast(str, name): reset for name, reset in resets.items()})
    elif resets:
        metastore.catalog.alter_table_params(table.dbName, table.tableName, resets[None])
    partition_stats = []
    for part in kept if plans else []:
        desc = ColumnStatisticsDesc(part.partition is None, table.dbName, table.tableName, part.part_name, now)
        stats = ColumnStatistics(desc, grouped[part.part_name].columns)
        if part.partition is None:
            metastore.column_stats.update_table_column_statistics(stats, write_id, valid)
        else:
            partition_stats.append(stats)
    if partition_stats:
        metastore.column_stats.set_aggr_stats_for(partition_stats, write_id, valid)
    if kind_of(table).written_elsewhere and mode != "noscan":
        # another job may change these files at any time: readers compare them with a listing
        metastore.accuracy.record_analyzed_files(table.dbName, table.tableName, {
            p.part_name: p.states for p in files if p.partition is None or p.part_name in current})
    _keep_row_sketches(metastore, table, kept, grouped, current, fresh_table, write_id, now)
    return total_rows
