"""Commands over a table's files: writing data under a transaction's write ID, relayout under the skew
spec, external Parquet directories registered as a table, and the files aborted writes left behind."""
from __future__ import annotations

import datetime as dt
import re
import warnings
from typing import TYPE_CHECKING

from ..column_statistics.names import object_name_problem, parse_part_name, split_table_name
from ..column_statistics.partition_values import canonical_value
from ..errors import InvalidArgument, LabWarning
from ..interop import snapshot_source
from ..interop.delta_source import DeltaSource
from ..interop.iceberg_source import metadata_file_source
from ..metastore import AlreadyExistsException, FieldSchema, InvalidObjectException, Table
from ..metastore.changes import RegisterTable
from ..quoting import parse_java_double
from ..sql.partition_spec import matching_partitions
from ..sql.statements import PartitionSpecItem
from ..storage import is_local, join, list_data_files, local_path, normalized, parent, relative
from ..tables.cleaner import remove_aborted
from ..tables.external import (
    check_column_types_agree,
    empty_partition_folders,
    external_partition,
    file_columns,
    listed_sums,
    partition_directories,
)
from ..tables.rewrite import rewrite_partitions
from ..tables.writer import WriteResult, write_table
from .reads import partition as find_partition

if TYPE_CHECKING:
    from ..transaction import Transaction
    from .session import Session


def write(session: Session, name: str, data, partition: dict | None = None, mode: str = "append",
          txn: Transaction | None = None) -> WriteResult:
    """The work of `TableHandle.write`, whose docstring is the reference."""
    table = session.resolve(name)
    with session.txn_scope(txn) as scope:
        return write_table(session.spark, session.metastore, table, data, scope, partition, mode,
                           gather=bool(session.get("hive.stats.column.autogather")))


def _check_declared(name: str, path: str, cols: list[FieldSchema], keys: list[FieldSchema],
                    declared: tuple[list[FieldSchema], list[FieldSchema]] | None) -> None:
    """Raises naming each difference between the columns (or keys) a statement declares and those the files
    hold: a declared column the files lack would read as NULL, one of another type as Spark's cast."""
    if declared is None:
        return
    for what, held, said in (("columns", cols, declared[0]), ("partition keys", keys, declared[1])):
        if not said:
            continue
        have, want = {c.name: c.type for c in held}, {c.name: c.type for c in said}
        problems = [f"{c} {t} is not in them" for c, t in want.items() if c not in have]
        problems += [f"{c} is {have[c]} there, not {t}" for c, t in want.items() if c in have and have[c] != t]
        problems += [f"they also hold {c} {t}" for c, t in have.items() if c not in want]
        if problems:
            listed = ", ".join(f"{c.name} {c.type}" for c in held) or "none"
            raise InvalidArgument(f"the {what} declared for {name} are not those of the files at {path} "
                                        f"({listed}): {'; '.join(problems)}")


def relayout(session: Session, name: str, partition: dict | str | None = None) -> list[WriteResult]:
    """The work of `TableHandle.relayout`, whose docstring is the reference."""
    table = session.resolve(name)
    if not table.is_partitioned:
        raise InvalidArgument(f"{table.qualified_name} is not partitioned: list bucketing lays out partitions")
    if partition is not None:
        partition = dict(zip(table.partition_key_names, find_partition(session, name, partition).values, strict=True))
    spec = None if partition is None else [
        PartitionSpecItem(k.lower(), None if v is None else str(v), 0, v is None) for k, v in partition.items()]
    parts = matching_partitions(session.metastore, table, spec)
    with session.transaction() as txn:
        _, results = rewrite_partitions(session.spark, session.metastore, table, parts, txn,
                                        gather=bool(session.get("hive.stats.column.autogather")), relayout=True)
    return results


def register_external(session: Session, name: str, path: str, format: str = "parquet",
                      partition_types: dict[str, str] | None = None,
                      declared: tuple[list[FieldSchema], list[FieldSchema]] | None = None) -> Table:
    """The work of `Lab.register_external`, whose docstring is the reference. `declared`, the columns and
    partition keys a CREATE EXTERNAL TABLE names, must be what the files hold (checked before anything is
    registered)."""
    db, table_name = split_table_name(name, session.current_db)
    problem = object_name_problem(table_name, "table")  # before anything is listed or read
    if problem:
        raise InvalidObjectException(problem)
    # a `file:` URI (what pyiceberg and Spark give) is its local path; another scheme is its file system's
    # (`s3://lake/ev`), never taken for a relative path (it was read as `<cwd>/s3:/lake/ev`)
    path = local_path(path) if is_local(path) else normalized(path)
    if format.lower() in ("delta", "iceberg"):
        if session.metastore.catalog.table_exists(db, table_name):
            raise AlreadyExistsException(f"table {db}.{table_name.lower()} already exists")
        source = DeltaSource(path) if format.lower() == "delta" else metadata_file_source(path)
        snapshot = source.current()
        _check_declared(f"{db}.{table_name.lower()}", path, snapshot.cols, snapshot.partition_keys, declared)
        return snapshot_source.follow(session.metastore, db, table_name.lower(), snapshot)
    if format.lower() != "parquet":
        raise InvalidArgument(f"parquet files, a Delta table or an Iceberg metadata file can be registered, "
                                    f"not {format}")
    files = list_data_files(path)
    if not files:
        raise InvalidArgument(f"no data files under {path}")
    if session.metastore.catalog.table_exists(db, table_name):
        raise AlreadyExistsException(f"table {db}.{table_name.lower()} already exists")
    keys, part_dirs = partition_directories(path, files)
    values = [[v for _, v in parse_part_name(rel)] for rel in part_dirs]
    key_types = {k.lower(): (partition_types or {}).get(k) or _infer_key_type([v[i] for v in values])
                 for i, k in enumerate(keys)}
    _check_partition_values(path, keys, key_types, part_dirs, values)
    unreadable = check_column_types_agree(files, path)
    empty = empty_partition_folders(path, part_dirs) if keys and is_local(path) else []  # a store has no empty one
    if unreadable or empty:
        said = ([f"{len(unreadable):,} file(s) that are not Parquet Spark can read ({', '.join(unreadable[:3])}"
                 f"{', ...' if len(unreadable) > 3 else ''}): an ANALYZE or a query of them fails until they are "
                 "removed or rewritten"] if unreadable else []) + \
               ([f"{len(empty):,} partition folder(s) with no data file ({', '.join(empty[:3])}"
                 f"{', ...' if len(empty) > 3 else ''}): not registered as partitions"] if empty else [])
        warnings.warn(f"{db}.{table_name.lower()} at {path} holds " + "; and ".join(said), LabWarning, stacklevel=3)
    readable = [f for f in files if relative(f.path, path) not in set(unreadable)] or files
    found = file_columns(lambda: session.spark, readable[0], keys)  # Spark starts only if its inference is needed
    _check_declared(f"{db}.{table_name.lower()}", path, found.cols,
                    [FieldSchema(k, t) for k, t in key_types.items()], declared)
    table = Table(db, table_name.lower(), found.cols, [FieldSchema(k, t) for k, t in key_types.items()],
                  location=path, tableType="EXTERNAL_TABLE",
                  parameters={"EXTERNAL": "TRUE", "numRows": "0", "rawDataSize": "0", **found.parameters})
    if not keys:
        change = RegisterTable(table, params=tuple(listed_sums(files).items()))
    else:
        in_directory: dict[str, list] = {rel: [] for rel in part_dirs}  # from the one listing: none again a partition
        for data_file in files:
            in_directory.setdefault(relative(parent(data_file.path), path), []).append(data_file)
        change = RegisterTable(table, tuple(external_partition(table, rel, inside=in_directory[rel])
                                            for rel in part_dirs), (("COLUMN_STATS_ACCURATE", None),))
    return session.metastore.apply([change])[0]


def _check_partition_values(path: str, keys: list[str], key_types: dict[str, str], part_dirs: list[str],
                            values: list[list[str | None]]) -> None:
    """Every folder's value is one of its key's type as Spark reads it (a double key's `inf` is not: Spark's read
    of the table fails on it), else one line naming the folder, before anything is registered."""
    for rel, row in zip(part_dirs, values, strict=True):
        for key, value in zip(keys, row, strict=True):
            if value is None:
                continue
            try:
                canonical_value(key, key_types[key.lower()], value)
            except InvalidArgument as exc:
                raise InvalidArgument(f"folder {join(path, rel)}: {exc}; Spark cannot read the table with it"
                                      + (" (a double is NaN, Infinity, -Infinity or a number)"
                                         if key_types[key.lower()] in ("double", "float") else "")) from None


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,9})?")
_INT_RANGE = 2 ** 31


def _infer_key_type(values: list[str | None]) -> str:
    """A partition key's type from its folders' values, as Spark's partition discovery infers it (the first that
    every value is: int, bigint, double, date, timestamp, else string), so that the lab's table and
    `spark.read.parquet` agree. A whole number is taken as a number only as it is canonically written (`007`
    stays text: a folder name spelling a value two ways would name two partitions)."""
    present = [v for v in values if v is not None]
    if not present:
        return "string"
    if all(_whole(v) for v in present):
        return "int" if all(-_INT_RANGE <= int(v) < _INT_RANGE for v in present) else "bigint"
    if all(_double(v) for v in present):
        return "double"
    if all(_DATE.fullmatch(v) and _parses(dt.date.fromisoformat, v) for v in present):
        return "date"
    if all(_TIMESTAMP.fullmatch(v) and _parses(dt.datetime.fromisoformat, v) for v in present):
        return "timestamp"
    return "string"


def _whole(text: str) -> bool:
    try:
        return str(int(text)) == text.lstrip("+")
    except ValueError:
        return False


def _double(text: str) -> bool:
    try:
        parse_java_double(text)
    except InvalidArgument:
        return False
    return not text.lstrip("+-").isdigit()  # a whole number written otherwise (007) is no double to Spark either


def _parses(parse, text: str) -> bool:
    try:
        parse(text)
    except ValueError:
        return False
    return True


def clean(session: Session, max_bytes: int | None = None) -> list[str]:
    """The work of `Lab.clean`, whose docstring is the reference."""
    metastore = session.metastore
    metastore.txns.abort_expired_txns()
    budget = max_bytes if max_bytes is not None else session.get("colstats.history.max_bytes")
    metastore.stats_history.prune_stats_history(int(session.get("colstats.history.keep")), budget)
    removed = []
    for db in metastore.catalog.get_all_databases():
        for name in metastore.catalog.get_tables(db):
            table = metastore.catalog.get_table(db, name)
            if table.tableType == "MANAGED_TABLE":
                removed += remove_aborted(metastore, table)
    return removed
