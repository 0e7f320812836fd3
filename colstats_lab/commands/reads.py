"""What a command reads: a partition by name, a table's snapshot of files, what a query over one table
reads after pruning, whether statistics answer a query, the table's stored metadata and its report.
No Spark job."""
from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import frames
from ..analyze.refresh_metadata import metadata_file_changes
from ..column_statistics.names import hive_part_name
from ..errors import InvalidArgument, parse_condition
from ..metastore import NoSuchObjectException, Partition, Table, ValidWriteIdList
from ..metastore.rows.levels import Level
from ..pruning import PruningReport, StatsAnswer, answer_from_stats, plan_with_metadata
from ..pruning.partition_predicate import preselect
from ..pruning.references import check_single_table_references, qualifiers_of, resolved_references
from ..result import Result
from ..sql.lexer import quoted
from ..sql.partition_spec import matching_partitions
from ..sql.statements import Describe
from ..tables import snapshot_files
from ..tables.kinds import kind_of
from ..tables.snapshot import PartitionFiles
from . import catalogs
from .describe import describe_as_of as describe_column_as_of

if TYPE_CHECKING:
    from ..transaction import Transaction
    from .session import Session


def partition(session: Session, table: str, partition: dict | str) -> Partition:
    """The work of `Inspect.partition`, whose docstring is the reference."""
    meta = session.resolve(table)
    if not meta.is_partitioned:
        raise InvalidArgument(f"{meta.qualified_name} is not partitioned: it has no partition {partition}")
    if isinstance(partition, dict):
        given = {str(k).lower(): v for k, v in partition.items()}
        unknown = sorted(set(given) - set(meta.partition_key_names))
        missing = [k for k in meta.partition_key_names if k not in given]
        if unknown or missing:
            raise InvalidArgument(
                f"partition {partition} does not name the keys of {meta.qualified_name} "
                f"({', '.join(meta.partition_key_names)})")
        name = Partition(meta.dbName, meta.tableName, [None if given[k] is None else str(given[k])
                                                      for k in meta.partition_key_names],
                         keys=meta.partition_key_names).partName
    elif isinstance(partition, str):
        name = hive_part_name(partition.strip())  # the keys as the files spell them, or as Hive does
    else:
        raise InvalidArgument(f"a partition is a name like ds=2026-11-21 or a dict, not {partition!r}")
    return session.metastore.catalog.get_partition(meta.dbName, meta.tableName, name)


def valid_write_ids(session: Session, table: str | Table) -> ValidWriteIdList:
    """The write IDs of `table` a reader sees now (Hive's ValidWriteIdList); a Table the caller has resolved
    is not read again."""
    if not isinstance(table, Table):
        table = session.resolve(table)
    return session.metastore.txns.get_valid_write_ids(table.dbName, table.tableName)


def snapshot_parts(session: Session, name: str, snapshot: ValidWriteIdList | None = None,
                   txn: Transaction | None = None, partitions: list[Partition] | None = None
                   ) -> tuple[Table, list[PartitionFiles]]:
    """The work of `Inspect.files`, whose docstring is the reference."""
    table = session.resolve(name)
    valid = snapshot or (txn.snapshot(table) if txn else valid_write_ids(session, table))
    if txn is not None and table.is_partitioned:
        partitions = matching_partitions(session.metastore, table, None, txn.new_partitions(table))
    return table, snapshot_files(session.metastore, table, valid, partitions)


def planned_read(session: Session, name: str, where, alias: str | None = None, txn: Transaction | None = None
                 ) -> tuple[Table, list[PartitionFiles], PruningReport]:
    """The work of `Inspect.planned_read`, whose docstring is the reference."""
    table = session.resolve(name)
    if isinstance(where, str):  # the condition's text, as a WHERE clause holds it
        where = parse_condition(where)
    check_single_table_references(where, table, qualifiers_of(table, alias))
    where = resolved_references(where, table, qualifiers_of(table, alias))  # `p.ds` is struct p's, not key ds
    chosen = preselect(session.metastore, table, where) if txn is None else None
    valid = txn.snapshot(table) if txn else valid_write_ids(session, table)
    table, parts = snapshot_parts(session, name, valid, txn=txn, partitions=chosen.partitions if chosen else None)
    kept, report = plan_with_metadata(session.metastore, table, parts, where, session.get, alias=alias,
                                      preselected=chosen, valid=valid)
    return table, kept, report


def stats_answer(session: Session, query: str | Any, txn: Transaction | None = None) -> StatsAnswer:
    """The work of `Lab.stats_answer`, whose docstring is the reference."""
    if not session.get("hive.compute.query.using.stats"):
        return StatsAnswer(None, "hive.compute.query.using.stats is off")
    query = catalogs.on_mirrors(session, query)
    return answer_from_stats(session.metastore, query, session.current_db,
                             lambda table: txn.snapshot(table) if txn else valid_write_ids(session, table.qualified_name))


def metadata(session: Session, name: str, level: str | None = None) -> pd.DataFrame:
    """The work of `Inspect.metadata`, whose docstring is the reference."""
    wanted = Level.of_metadata(level).drill_name if level is not None else None  # names an unknown level
    table = session.resolve(name)
    stored = session.metastore.table_metadata.get_table_metadata(table.dbName, table.tableName)
    if stored is None:
        raise NoSuchObjectException(f"table {table.qualified_name} has no metadata: run ANALYZE TABLE "
                                    f"{quoted(table.qualified_name)} REFRESH METADATA")
    return stored.to_pandas(wanted, file_times=kind_of(table).file_times)


METADATA_CHANGE_COLUMNS = ["file", "change"]


def metadata_changes(session: Session, name: str) -> pd.DataFrame:
    """The work of `Inspect.metadata_changes`, whose docstring is the reference."""
    table = session.resolve(name)
    changes = metadata_file_changes(session.metastore, table, valid_write_ids(session, table))
    if changes is None:
        frame = pd.DataFrame(columns=METADATA_CHANGE_COLUMNS)
        frame.attrs.update(refreshed=False, state=f"no metadata yet: ANALYZE TABLE {quoted(table.qualified_name)} "
                                                  "REFRESH METADATA gathers it (with SET metastore.enabled = true)")
        return frame
    changed, removed = changes
    frame = pd.DataFrame([(f, "added or rewritten") for f in changed] + [(f, "removed") for f in removed],
                         columns=METADATA_CHANGE_COLUMNS)
    frame.attrs.update(refreshed=True, state=(
        "up to date: the files are those the last REFRESH METADATA read" if frame.empty else
        f"outdated: {len(changed):,} file(s) added or rewritten and {len(removed):,} removed since; ANALYZE TABLE "
        f"{quoted(table.qualified_name)} REFRESH METADATA refreshes the units they touch"))
    return frame


def report(session: Session, name: str, path: str | None) -> str:
    """The work of `TableHandle.report`, whose docstring is the reference."""
    if path is None:
        raise InvalidArgument("report() writes the report to a path (report(\"sales.html\") or a .json one); "
                              "report_data() gives its data")
    table = session.resolve(name)
    kind = os.path.splitext(path)[1].lower()
    if kind == ".json":
        text = json.dumps(frames.report_data(session.metastore, table), indent=2, allow_nan=False) + "\n"
    elif kind in (".html", ".htm"):
        from ..ui.report import report_html  # plotly loads only for a page

        text = report_html(session.metastore, table)
    else:
        raise InvalidArgument(f"a report is written as .html or .json, not {path!r}")
    try:
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as exc:
        raise InvalidArgument(f"cannot write the report to {path}: {exc.strerror}") from None
    return path


def describe_as_of(session: Session, statements: list, as_of) -> Result:
    """The work of `Lab.sql` with `as_of`, whose docstring is the reference: DESCRIBE statements only."""
    results = []
    for stmt in statements:
        if not isinstance(stmt, Describe):
            raise InvalidArgument(f"as_of answers DESCRIBE ... col from the statistics kept, not a "
                                        f"{type(stmt).__name__} statement")
        results.append(Result(stmt, df=describe_column_as_of(session.metastore, stmt, session.current_db, as_of)))
    return results[-1]
