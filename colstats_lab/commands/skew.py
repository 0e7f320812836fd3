"""Measuring a table's skew: heavy hitters per partition from one Spark aggregation over its snapshot."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from ..coltypes import parse_type
from ..column_statistics.frequent_items import FrequentItems, TopValues, sketchable
from ..column_statistics.model import leaf_name
from ..errors import InvalidArgument, spark_errors
from ..metastore import DEFAULT_PARTITION_NAME, ColumnStatistics, Table
from ..metastore.repositories.snapshot_files import file_keys_of
from ..metastore.rows.levels import TABLE_LEVEL
from ..metastore.rows.write_ids import ValidWriteIdList
from ..pruning.answers import NotFromStats, fresh_statistics
from ..quoting import column_ref
from ..skew import DEFAULT_MODE, SkewReport, skew_report
from ..skew.report import check_options as check_skew_options
from ..skew.report import report_from_sketches, value_as_text
from ..stats.footers import group_figures
from ..tables import read_snapshot
from ..tables.snapshot import PartitionFiles, changes_named
from .reads import partition as find_partition
from .reads import snapshot_parts, valid_write_ids

if TYPE_CHECKING:
    from .session import Session


SCAN_ITEMS = 10_000  # values a skew scan's sketch tracks unless asked otherwise: counts exact below that many


def skew(session: Session, table: str, columns: list[str] | str, partition: dict | str | None = None, top: int = 20,
         min_share: float = 0.02, mode: str = DEFAULT_MODE, max_keys: int = 10,
         max_items: int | None = None) -> SkewReport:
    """`TableHandle.skew`: checks the arguments before Spark starts, then one aggregation over the snapshot."""
    meta = session.resolve(table)
    kept_may_serve = max_items is None or max_items <= session.metastore.settings.frequent_items
    max_items = SCAN_ITEMS if max_items is None else max_items
    check_skew_options(mode, top, min_share, max_keys, max_items)
    names = [columns] if isinstance(columns, str) else list(columns) if isinstance(columns, (list, tuple)) else []
    if not names or not all(isinstance(c, str) and c.strip() for c in names):
        raise InvalidArgument(f"skew takes one or more column names, not {columns!r}")
    names = [c.strip().lower() for c in names]
    leaves = {}
    for name in names:
        leaf = meta.stats_column(name)
        if leaf is not None and (leaf.is_element or leaf.is_collection):
            what = f"the values inside {leaf_name(leaf.collection)}" if leaf.is_element else leaf.type
            raise InvalidArgument(f"column {name} is {what}: skew is measured on scalar columns and struct "
                                        "leaves, not inside arrays and maps yet")
        if leaf is not None and leaf.is_leaf:
            leaves[name] = leaf.path
        elif meta.column(name) is None:
            raise meta.no_such_column(name)
        elif parse_type(meta.column_type(name)).stats_kind is None:
            inside = [c.name for c in meta.stats_columns if c.path[0] == name and c.is_leaf and not c.is_element
                      and not c.is_collection]
            raise InvalidArgument(f"column {name} is {meta.column_type(name)}: skew is measured on scalar "
                                        "values" + (f", such as its leaves {', '.join(inside)}" if inside else ""))
        if name in meta.partition_key_names:
            raise InvalidArgument(f"{name} is a partition key of {meta.qualified_name}: skew is measured "
                                        "on data columns within partitions")
    valid = valid_write_ids(session, meta)
    _, parts = snapshot_parts(session, meta.qualified_name, valid)
    if partition is not None:
        wanted = find_partition(session, meta.qualified_name, partition).partName
        parts = [p for p in parts if p.part_name == wanted]
    if mode == "approx" and len(names) == 1 and kept_may_serve:
        kept = _kept_sketches(session, meta, names[0], parts, valid)
        if kept is not None:  # fresh statistics keep the column's frequent values: no scan
            ndv = _distinct_estimate(session, meta, names, parts, valid) if meta.is_partitioned else \
                kept_ndv(session, meta, names[0], valid)
            return report_from_sketches(meta, names[0], kept, top, min_share, max_keys,
                                        f"statistics: the frequent-items sketches kept with them, accurate for {valid}",
                                        ndv)
    footers = _footer_counts(meta, parts, names[0]) if mode == "approx" and len(names) == 1 else None
    distinct = _distinct_estimate(session, meta, names, parts, valid) if mode == "exact" else None
    with changes_named(parts), spark_errors(f"cannot measure the skew of {meta.qualified_name}"):
        rows = read_snapshot(session.spark, meta, parts, reuse=True)
        if leaves:  # a struct's leaf, NULL where a struct on its way is, as a column of its own
            rows = rows.select("*", *[F.col(column_ref(*path)).alias(name) for name, path in leaves.items()])
        report = skew_report(rows, meta, names, top, min_share, mode, max_keys, max_items, footers, distinct)
    if len(names) == 1:
        keep_top_values(session, meta, report, valid)
    return report


def _kept_sketches(session: Session, meta: Table, column: str, parts: list[PartitionFiles], valid: ValidWriteIdList
                   ) -> dict[str, tuple[int, int, FrequentItems]] | None:
    """Per partition label (as a report spells it) its rows, the column's NULLs and its frequent-items sketch,
    where the column's statistics are accurate for the snapshot in every partition read and each kept a
    sketch; None otherwise (the report then scans)."""
    type_name = meta.column_type(column)
    if not sketchable(type_name) or any(p.deletes for p in parts):
        return None
    metastore = session.metastore
    names = [p.part_name for p in parts if p.part_name is not None]
    stats: dict[str | None, ColumnStatistics]
    rows: dict[str | None, int]
    if meta.is_partitioned:
        stats = dict(metastore.column_stats.get_partitions_statistics(
            meta.dbName, meta.tableName, names, [column], valid_write_ids=valid).items())
        rows = {p.partName: int(p.parameters.get("numRows") or 0)
                for p in (metastore.catalog.get_partitions(meta.dbName, meta.tableName, names) if names else [])}
    else:
        table_stats = metastore.column_stats.get_table_statistics(meta.dbName, meta.tableName, [column], valid_write_ids=valid)
        stats = {None: table_stats} if table_stats is not None else {}
        rows = {None: int(meta.parameters.get("numRows") or 0)}
    sketches = metastore.column_stats.get_frequent_items(meta.dbName, meta.tableName, column,
                                                         names if meta.is_partitioned else None)
    kept: dict[str, tuple[int, int, FrequentItems]] = {}
    for part in parts:
        owner = part.part_name
        label = _report_label(meta, part)
        found = stats.get(owner)
        if label is None or found is None or not found.isStatsCompliant or owner not in sketches:
            return None
        obj = next((o for o in found.statsObj if o.colName == column), None)
        items = FrequentItems.merged([sketches[owner]], type_name)
        if obj is None or items is None:
            return None
        kept[label] = (rows.get(owner, 0), int(obj.statsData.value.numNulls or 0), items)
    return kept


def _distinct_estimate(session: Session, meta: Table, names: list[str], parts: list[PartitionFiles],
                       valid: ValidWriteIdList) -> int | None:
    """The distinct values of one column over the partitions read, from statistics accurate for the snapshot
    the report reads (their HLL sketches merged); None where they are not, or for several columns."""
    if len(names) != 1 or not meta.is_partitioned:
        return None
    wanted = {p.part_name for p in parts if p.part_name is not None}
    partitions = session.metastore.catalog.get_partitions(meta.dbName, meta.tableName, sorted(wanted)) if wanted else []
    try:
        _, objs = fresh_statistics(session.metastore, meta, names, partitions, valid)
    except NotFromStats:
        return None
    found = objs.get(names[0])
    distinct = getattr(found.statsData.value, "numDVs", None) if found is not None else None
    return None if distinct is None else int(distinct)


def kept_ndv(session: Session, meta: Table, column: str, valid: ValidWriteIdList) -> int | None:
    """An unpartitioned table's NDV of `column` from its statistics accurate for `valid` (None: none are)."""
    stats = session.metastore.column_stats.get_table_statistics(meta.dbName, meta.tableName, [column], valid_write_ids=valid)
    obj = stats.obj(column) if stats is not None and stats.isStatsCompliant else None
    ndv = getattr(obj.statsData.value, "numDVs", None) if obj is not None else None
    return None if ndv is None else int(ndv)


def _footer_counts(meta: Table, parts: list[PartitionFiles], column: str) -> dict[str, tuple[int, int | None]] | None:
    """Each partition's rows, and NULLs of `column` where every footer holds them exactly, as the files' footers
    count them, by the partition's name as a skew report spells it (Spark's text of each key's value); None
    where footers cannot stand for the rows (Iceberg's position deletes) or a key's value would be spelled
    otherwise than the metastore keeps it."""
    if any(p.deletes for p in parts):
        return None
    labels: dict[tuple, list] = {}
    for part in parts:
        label = _report_label(meta, part)
        if label is None:
            return None
        labels[(label,)] = part.files
    found = meta.column(column) or meta.stats_column(column)
    if found is None:
        return None
    served, figures = group_figures(labels, {column: found.type}, file_keys_of(meta))
    if not figures and labels:
        return None  # a footer could not be read: the query counts
    return {key[0]: (f.rows, f.columns[column].nulls if column in served else None) for key, f in figures.items()}


def _report_label(meta: Table, part: PartitionFiles) -> str | None:
    """A partition's name as a skew report builds it from the rows' key values (skew.report._partition_label),
    or None where Spark would spell a value otherwise than the metastore keeps it (a date, a decimal, ...)."""
    if part.partition is None:
        return TABLE_LEVEL
    names = []
    for key, value in zip(meta.partitionKeys, part.partition.values, strict=True):
        base = parse_type(key.type).base
        if value is None or value in ("", DEFAULT_PARTITION_NAME):
            text = DEFAULT_PARTITION_NAME
        elif base in ("string", "varchar", "char"):
            text = value
        elif base in ("tinyint", "smallint", "int", "bigint") and value.lstrip("-").isdigit():
            text = str(int(value))
        else:
            return None
        names.append(f"{key.name}={text}")
    return "/".join(names)


def keep_top_values(session: Session, meta: Table, report: SkewReport, valid: ValidWriteIdList) -> list:
    """Keeps the report's top values in the statistics history, on the latest state of each partition (and
    of the table) whose statistics of the column are accurate for the snapshot the report read and count
    the same rows, so `inspect.compare` can measure drift of strings too; returns the owners they were kept
    for. A report over the whole table gives the table level its values too."""
    column = report.columns[0]
    compliance = session.metastore.accuracy.per_column_compliance(meta.dbName, meta.tableName, [[column]], valid)
    accurate = {owner for owner, [(ok, _)] in compliance.items() if ok}
    counted: dict[str | None, TopValues] = {}
    for label, rows in report.totals.items():
        owner = None if label == TABLE_LEVEL else label
        whole_table = owner is None and all(p in accurate for p in compliance)
        if owner in accurate or whole_table:
            values = tuple((value_as_text(v), int(c)) for v, c in report.for_partition(label)[["value", "count"]]
                           .itertuples(index=False))
            counted[owner] = TopValues(values, rows, report.null_count(label), report.mode, report.top)
    if not counted:
        return []
    return session.metastore.stats_history.keep_top_values(meta.dbName, meta.tableName, column, counted, valid)
