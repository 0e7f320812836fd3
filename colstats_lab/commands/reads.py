"""What a command reads: a partition by name, a table's snapshot of files, what a query over one table
reads after pruning, and whether statistics answer a query. No Spark job."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..metastore import InvalidInputException, Partition, Table, ValidWriteIdList
from ..pruning import PruningReport, StatsAnswer, answer_from_stats, plan_with_metadata, single_table_where
from ..pruning.partition_predicate import preselect
from ..pruning.plan import parse_query
from ..sql.partition_spec import matching_partitions
from ..tables import snapshot_files
from ..tables.snapshot import PartitionFiles

if TYPE_CHECKING:
    from ..transaction import Transaction
    from .session import Session


def partition(session: "Session", table: str, partition: dict | str) -> Partition:
    """One partition of a table, by name (`ds=2026-11-21/hr=3`) or by a dict giving every key a value;
    raises NoSuchObjectException naming it, InvalidInputException for a spec that is not one."""
    meta = session.resolve(table)
    if not meta.is_partitioned:
        raise InvalidInputException(f"{meta.qualified_name} is not partitioned: it has no partition {partition}")
    if isinstance(partition, dict):
        given = {str(k).lower(): v for k, v in partition.items()}
        unknown = sorted(set(given) - set(meta.partition_key_names))
        missing = [k for k in meta.partition_key_names if k not in given]
        if unknown or missing:
            raise InvalidInputException(
                f"partition {partition} does not name the keys of {meta.qualified_name} "
                f"({', '.join(meta.partition_key_names)})")
        name = Partition(meta.dbName, meta.tableName, [None if given[k] is None else str(given[k])
                                                      for k in meta.partition_key_names],
                         keys=meta.partition_key_names).partName
    elif isinstance(partition, str):
        name = partition.strip()
    else:
        raise InvalidInputException(f"a partition is a name like ds=2026-11-21 or a dict, not {partition!r}")
    return session.metastore.get_partition(meta.dbName, meta.tableName, name)


def snapshot_parts(session: "Session", name: str, snapshot: ValidWriteIdList | None = None,
                   txn: Transaction | None = None, partitions: list[Partition] | None = None
                   ) -> tuple[Table, list[PartitionFiles]]:
    """The table and, per partition (all, or those given), the directories and files the snapshot
    admits (no Spark job)."""
    table = session.resolve(name)
    valid = snapshot or (txn.snapshot(table) if txn else session.snapshot(name))
    if txn is not None and table.is_partitioned:
        partitions = matching_partitions(session.metastore, table, None, txn.new_partitions(table))
    return table, snapshot_files(session.metastore, table, valid, partitions)


def planned_read(session: "Session", name: str, where, alias: str | None = None, txn: Transaction | None = None
                 ) -> tuple[Table, list[PartitionFiles], PruningReport]:
    """What a SELECT over one table with the condition `where` reads: the partitions its key terms keep
    are chosen in the metastore first, only those are listed, then every pruning level decides."""
    table = session.resolve(name)
    chosen = preselect(session.metastore, table, where) if txn is None else None
    table, parts = snapshot_parts(session, name, txn=txn, partitions=chosen.partitions if chosen else None)
    kept, report = plan_with_metadata(session.metastore, table, parts, where, session.get, alias=alias,
                                      preselected=chosen)
    return table, kept, report


def stats_answer(session: "Session", query: str | Any, txn: Transaction | None = None) -> StatsAnswer:
    """Whether statistics answer `query` without a scan (`.frame`; None: Spark runs it) and why, for the
    snapshot the query reads (`hive.compute.query.using.stats` must be on); no Spark job."""
    if not session.get("hive.compute.query.using.stats"):
        return StatsAnswer(None, "hive.compute.query.using.stats is off")
    return answer_from_stats(session.metastore, query, session.current_db,
                             lambda table: txn.snapshot(table) if txn else session.snapshot(table.qualified_name))


def explain(session: "Session", query: str, txn: Transaction | None = None) -> PruningReport:
    """What `query` (a SELECT over one lab table) reads: a pruning report with a decision, the rows
    and the bytes of every segment, partition, list-bucketing directory, file and row group, from
    partition values, stored table metadata (`metastore.*` options) and Parquet footers; no
    Spark job runs."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputException(f"explain takes the text of a SELECT over one lab table, not {query!r}")
    tree = parse_query(query)
    found = single_table_where(tree)
    if found is None:
        raise InvalidInputException("explain takes a SELECT over one lab table (no joins or subqueries)")
    node, where = found
    return planned_read(session, f"{node.db or session.current_db}.{node.name}", where, node.alias_or_name, txn)[2]
