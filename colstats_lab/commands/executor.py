"""Running parsed statements against a lab: catalog DDL, ANALYZE, DESCRIBE, SHOW, SET, queries."""
from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pandas as pd
from pyarrow import ArrowInvalid

from ..analyze import run_analyze, run_refresh_metadata
from ..column_statistics.frequent_items import COLUMNS_PROPERTY
from ..column_statistics.names import make_part_name, parse_part_name
from ..column_statistics.quantiles import KLL_PROPERTY
from ..errors import ColstatsError, InvalidArgument, spark_errors
from ..interop.exchange import lab_table_of
from ..interop.spark_catalog import read_table_statistics
from ..metastore import (
    COLUMN_STATS_ACCURATE,
    OWNED_LOCATION,
    AlreadyExistsException,
    FieldSchema,
    NoSuchObjectException,
    Partition,
    StatsAccuracy,
    Table,
)
from ..metastore.changes import (
    AddPartitions,
    AlterSkew,
    AlterTableParams,
    Change,
    CreateDatabase,
    CreateTable,
    DefinitionWrite,
    DropDatabase,
    DropPartitions,
    DropTable,
    DropTableMetadata,
)
from ..result import Result
from ..skew.spec import check_list_bucketing, skewed_clause, skewed_info, with_locations
from ..sql import statements as st
from ..sql.parser import SPARK_CATALOG
from ..sql.partition_spec import matching_partitions, spec_values
from ..storage import is_inside, join, storage_for
from ..tables import kind_of
from ..tables.external import external_partition, partition_directories
from ..tables.list_bucketing import check_partition_values
from ..tables.rewrite import rewrite_partitions
from ..tables.snapshot import changes_named
from . import catalogs
from . import tables as table_commands
from .binding import bind_tables
from .describe import describe
from .reads import stats_answer
from .tables import register_external

if TYPE_CHECKING:
    from ..transaction import Transaction
    from .session import Session

QUERY_ROW_LIMIT = 10_000  # rows of a query result brought to pandas; the full result stays in Spark


def execute(lab: Session, stmt: st.Statement, txn: Transaction | None = None) -> Result:
    """Runs one statement; ANALYZE and queries use `txn` (its snapshot; ANALYZE's statistics are
    stored when it commits), or a transaction of their own."""
    named = getattr(stmt, "table", None)
    if isinstance(named, st.TableName) and named.catalog and named.catalog != SPARK_CATALOG:
        stmt = _on_catalog_table(lab, stmt, named)
    elif isinstance(named, st.TableName) and named.catalog and not isinstance(stmt, st.Analyze):
        raise InvalidArgument(f"{named}: Spark's tables are named by ANALYZE TABLE only; once analyzed, "
                                    f"the lab's table is {named.db}.{named.name}")
    elif isinstance(named, st.TableName) and not named.catalog:
        catalogs.follow_named(lab, named)
    if isinstance(stmt, st.ShowTables) and stmt.catalog:
        return catalogs.show_tables(lab, stmt)
    if type(stmt) in _TXN_HANDLERS:
        return _TXN_HANDLERS[type(stmt)](lab, stmt, txn)
    handler = _HANDLERS.get(type(stmt))
    if handler is None:
        raise InvalidArgument(f"{type(stmt).__name__} is parsed but not runnable yet")
    return handler(lab, stmt)


# statements that read an attached catalog's table (or drop only the lab's record of it); the others would change
# it, which is its owner's job
_CATALOG_STATEMENTS = (st.Analyze, st.RefreshMetadata, st.DropMetadata, st.Describe, st.ShowPartitions,
                       st.ShowTableProperties)


def _on_catalog_table(lab: Session, stmt: st.Statement, named: st.TableName) -> st.Statement:
    """The statement on the lab's mirror of an attached catalog's table, followed and with the locations of
    the partitions it names fetched (fetched again for ANALYZE, which reads their files)."""
    client = catalogs.client_of(lab, named.catalog or "", stmt.sql, named.catalog_position)
    if not isinstance(stmt, _CATALOG_STATEMENTS) and not _lab_settings_only(stmt):
        raise InvalidArgument(f"{named} is a table of the {client.kind} at {client.uri}: the lab analyzes and "
                                    "describes it; change it with the engine that owns it")
    table = catalogs.catalog_table(lab, named, getattr(stmt, "partition", None),
                                   refetch=isinstance(stmt, (st.Analyze, st.RefreshMetadata)))
    on_table: Any = stmt  # every statement that names a table has a `table` field
    return dataclasses.replace(on_table, table=st.TableName(table.dbName, table.tableName))


def _lab_settings_only(stmt: st.Statement) -> bool:
    """Whether the statement sets or unsets only the lab's own settings of a table (which columns keep
    frequent-items sketches): kept on the lab's mirror of a catalog's table, never written to the catalog."""
    if isinstance(stmt, st.SetTableProperties):
        return all(key in _USER_SETTINGS for key, _, _ in stmt.properties)
    if isinstance(stmt, st.UnsetTableProperties):
        return all(key in _USER_SETTINGS for key, _ in stmt.keys)
    return False


def _db(lab: Session, name: str | None) -> str:
    return (name or lab.current_db).lower()


def _create_database(lab: Session, stmt: st.CreateDatabase) -> Result:
    lab.metastore.apply([CreateDatabase(stmt.name, stmt.comment, stmt.if_not_exists)])
    return Result(stmt, message=f"Database {stmt.name} is ready.")


def _drop_database(lab: Session, stmt: st.DropDatabase) -> Result:
    dropped = lab.metastore.apply([DropDatabase(stmt.name, stmt.if_exists, stmt.cascade)])[0]
    for table in dropped:
        _remove_files(table, lab.metastore)
    return Result(stmt, message=f"Dropped database {stmt.name}" + (f" and {len(dropped)} tables." if dropped else "."))


def _use(lab: Session, stmt: st.UseDatabase) -> Result:
    lab.metastore.catalog.get_database_location(stmt.name)
    lab.current_db = stmt.name
    return Result(stmt, message=f"Using database {stmt.name}.")


def _create_table(lab: Session, stmt: st.CreateTable) -> Result:
    if stmt.external:
        return _register_table(lab, stmt)
    db = _db(lab, stmt.table.db)
    database_folder = lab.metastore.catalog.get_database_location(db)
    location = join(database_folder, stmt.table.name)
    if not is_inside(location, database_folder):  # the name's rule keeps it a folder of its own; said again here
        raise InvalidArgument(f"table name {stmt.table.name!r} does not name a folder inside {database_folder}")
    if stmt.if_not_exists and lab.metastore.catalog.table_exists(db, stmt.table.name):
        return Result(stmt, message=f"Table {db}.{stmt.table.name} already exists.")
    _refuse_taken_folder(f"{db}.{stmt.table.name}", location)
    # Hive's setStatsStateForCreateTable: a new table holds no rows, so its statistics (zeros) are
    # accurate, basic and of every column alike
    table = Table(db, stmt.table.name, stmt.columns, stmt.partition_keys, location=location, comment=stmt.comment,
                  parameters={"transactional": "true", "transactional_properties": "insert_only",
                              **_EMPTY_STATS, COLUMN_STATS_ACCURATE: _all_accurate(stmt.columns),
                              OWNED_LOCATION: location})
    if stmt.partition_keys:
        table.parameters["numPartitions"] = "0"
    if stmt.skew is not None:
        table.skewedInfo = skewed_info(table, [c for c, _ in stmt.skew.columns], list(stmt.skew.values))
        table.storedAsSubDirectories = stmt.skew.stored_as_directories
        if table.storedAsSubDirectories:
            _require_subdirectories(lab)
            check_list_bucketing(table)
    created = lab.metastore.apply([CreateTable(table, stmt.if_not_exists)])[0]
    if created:
        storage_for(location).makedirs(location)
    return Result(stmt, message=f"Table {db}.{stmt.table.name} " + ("created." if created else "already exists."))


def _register_table(lab: Session, stmt: st.CreateTable) -> Result:
    """CREATE EXTERNAL TABLE: the files at its LOCATION registered as `Lab.register_external` does."""
    db = _db(lab, stmt.table.db)
    if stmt.if_not_exists and lab.metastore.catalog.table_exists(db, stmt.table.name):
        return Result(stmt, message=f"Table {db}.{stmt.table.name} already exists.")
    assert stmt.location is not None  # the parser requires it
    table = table_commands.register_external(lab, f"{db}.{stmt.table.name}", stmt.location, stmt.stored_as,
                                             {k.name: k.type for k in stmt.partition_keys} or None,
                                             (stmt.columns, stmt.partition_keys))
    keys = f", partitioned by {', '.join(table.partition_key_names)}" if table.is_partitioned else ""
    return Result(stmt, message=f"Table {table.qualified_name} registered over {table.location} "
                                f"({len(table.cols)} columns{keys}).")


_EMPTY_STATS = {"numFiles": "0", "numRows": "0", "totalSize": "0", "rawDataSize": "0"}


def _all_accurate(columns: list[FieldSchema]) -> str:
    """COLUMN_STATS_ACCURATE of empty data: basic statistics and every column's accurate."""
    return StatsAccuracy(True, {c.name for c in columns}).to_param() or ""


def _drop_table(lab: Session, stmt: st.DropTable) -> Result:
    table = lab.metastore.apply([DropTable(_db(lab, stmt.table.db), stmt.table.name, stmt.if_exists)])[0]
    if table is None:
        return Result(stmt, message=f"Table {stmt.table} does not exist; nothing dropped.")
    kept = _remove_files(table, lab.metastore)
    return Result(stmt, message=f"Dropped table {table.qualified_name} and its statistics{kept}.")


def _refuse_taken_folder(name: str, location: str) -> None:
    """A managed table gets a folder of its own: one that holds files already (another table's, or what was
    left there) is refused, as Spark refuses it (LOCATION_ALREADY_EXISTS), so a DROP never deletes them."""
    storage = storage_for(location)
    if storage.is_dir(location) and storage.child_names(location):
        raise AlreadyExistsException(f"cannot create table {name}: its folder {location} exists and is not empty; "
                                     "pick another name, or remove what is there first")


def _remove_files(table: Table, metastore) -> str:
    """Deletes a managed table's folder when the lab created it for this table (its OWNED_LOCATION) and no other
    table or partition of the metastore lies inside it; returns what happened to the files, for the message.
    External tables' files are never deleted (Hive's rule)."""
    if table.tableType != "MANAGED_TABLE" or not table.location:
        return ""
    if table.parameters.get(OWNED_LOCATION) != table.location:
        return f"; its files at {table.location} were kept: the lab did not create that folder for it"
    inside = metastore.catalog.locations_inside(table.location)
    if inside:
        return (f"; its files at {table.location} were kept: the folder also holds {inside[0]}, another table's "
                "or partition's")
    storage_for(table.location).remove(table.location)
    return ""


def _add_partitions(lab: Session, stmt: st.AddPartitions) -> Result:
    table = lab.metastore.catalog.get_table(_db(lab, stmt.table.db), stmt.table.name)
    new = []
    for spec in stmt.specs:
        values = spec_values(table, spec)
        missing = [k for k in table.partition_key_names if k not in values]
        if missing:
            raise InvalidArgument(f"ADD PARTITION needs a value for {', '.join(missing)}")
        # an added partition of a managed table is empty: accurate as a new table (setStatsStateForCreateTable);
        # an external one's directory may hold files no ANALYZE has read
        flags = {COLUMN_STATS_ACCURATE: _all_accurate(table.cols)} if table.tableType == "MANAGED_TABLE" else {}
        part = Partition(table.dbName, table.tableName, [values[k] for k in table.partition_key_names],
                         keys=table.partition_key_names, parameters={**_EMPTY_STATS, **flags})
        part.location = join(table.location, part.partName)
        if table.storedAsSubDirectories:
            check_partition_values(table, part.values)
        new.append(part)
    added = AddPartitions(table, tuple(new), stmt.if_not_exists)
    _table_ddl(lab, table, added)
    for part in added.added:
        storage_for(part.location).makedirs(part.location)
    return Result(stmt, message=f"Added {len(added.added):,} partition{'s' if len(added.added) != 1 else ''} to "
                                      f"{table.qualified_name}.")


@dataclasses.dataclass(frozen=True)
class Repair:
    """MSCK REPAIR TABLE's details: the partitions registered for new directories, and those dropped for
    directories gone."""
    added: list[str]
    dropped: list[str]


def _repair_table(lab: Session, stmt: st.RepairTable) -> Result:
    """Hive's MSCK REPAIR TABLE over an external table's directories; a managed table's partitions are
    the lab's own writes, so there is nothing another job could have left unregistered."""
    table = lab.metastore.catalog.get_table(_db(lab, stmt.table.db), stmt.table.name)
    kind = kind_of(table)
    if kind.name == "managed":
        raise InvalidArgument(f"MSCK REPAIR TABLE repairs external tables; {table.qualified_name} is managed: "
                                    "its partitions are the lab's own writes")
    if not kind.directories_are_partitions:
        raise InvalidArgument(f"MSCK REPAIR TABLE repairs tables whose directories are their partitions; "
                                    f"{table.qualified_name} is a {kind.name} table, whose partitions are those its "
                                    "snapshot lists (its directories keep older snapshots' files): the lab follows "
                                    "the snapshot whenever it uses the table")
    if not table.is_partitioned:
        return Result(stmt, message=f"Table {table.qualified_name} is not partitioned: nothing to repair.")
    keys, on_disk = (partition_directories(table.location) if storage_for(table.location).is_dir(table.location)
                     else ([], []))
    if on_disk and [k.lower() for k in keys] != table.partition_key_names:  # `eventDay=` is key eventday
        raise InvalidArgument(f"the directories of {table.qualified_name} are partitioned by "
                                    f"{'/'.join(keys)}, the table by {'/'.join(table.partition_key_names)}")
    # each directory by the partition name the lab gives it (its keys in lower case, its values as spelled)
    directory_of = {make_part_name(table.partition_key_names, [v for _, v in parse_part_name(rel)]): rel
                    for rel in on_disk}
    registered = set(lab.metastore.catalog.get_partition_names(table.dbName, table.tableName))
    added = sorted(set(directory_of) - registered) if stmt.mode in ("ADD", "SYNC") else []
    dropped = sorted(registered - set(directory_of)) if stmt.mode in ("DROP", "SYNC") else []

    if added or dropped:  # the drop re-merges the table level either way
        _table_ddl(lab, table, AddPartitions(table, tuple(external_partition(table, directory_of[name])
                                                          for name in added)),
                   DropPartitions(table, tuple(dropped)))
    said = [f"added {len(added):,} partition(s): {', '.join(added)}" if added else "added none"]
    if stmt.mode != "ADD":
        said.append(f"dropped {len(dropped):,} partition(s): {', '.join(dropped)}" if dropped else "dropped none")
    return Result(stmt, message=f"Repaired {table.qualified_name}: {'; '.join(said)}.",
                  details=Repair(added, dropped))


def _drop_partitions(lab: Session, stmt: st.DropPartitions) -> Result:
    table = lab.metastore.catalog.get_table(_db(lab, stmt.table.db), stmt.table.name)
    names: list[str] = []
    for spec in stmt.specs:
        try:
            names.extend(p.partName for p in matching_partitions(lab.metastore, table, spec))
        except NoSuchObjectException:
            if not stmt.if_exists:
                raise
            # IF EXISTS: a spec that matches nothing drops nothing
    change = DropPartitions(table, tuple(dict.fromkeys(names)), if_exists=stmt.if_exists)
    _table_ddl(lab, table, change)
    dropped = change.dropped
    if table.tableType == "MANAGED_TABLE" and table.parameters.get(OWNED_LOCATION) == table.location:
        for part in dropped:  # a partition's folder is the lab's inside the table's own, never elsewhere
            if part.location and is_inside(part.location, table.location) and \
                    not lab.metastore.catalog.locations_inside(part.location):
                storage_for(part.location).remove(part.location)
    listed = ", ".join(p.partName for p in dropped) or "none"
    return Result(stmt, message=f"Dropped partitions of {table.qualified_name}: {listed}.")


def _concatenate(lab: Session, stmt: st.Concatenate, txn) -> Result:
    """Hive's CONCATENATE: each directory's files (each list-bucketing directory's too) merged into one,
    as one overwrite per partition under a new write ID; the statistics are gathered in the same pass,
    so they stay accurate (the rows are the same)."""
    table = lab.metastore.catalog.get_table(_db(lab, stmt.table.db), stmt.table.name)
    if table.tableType != "MANAGED_TABLE":
        raise InvalidArgument(f"table {table.qualified_name} is external: CONCATENATE rewrites the files of "
                                    "managed tables only")
    if stmt.partition and not table.is_partitioned:
        raise InvalidArgument(f"table {table.qualified_name} is not partitioned, but a PARTITION clause was given")
    with lab.txn_scope(txn) as scope:
        parts = (matching_partitions(lab.metastore, table, stmt.partition, scope.new_partitions(table))
                 if table.is_partitioned else None)
        before, results = rewrite_partitions(lab.spark, lab.metastore, table, parts, scope, gather=True,
                                             one_file_per_directory=True)
    after = sum(files.num_files for result in results for files in result.partitions.values())
    where = f"{len(results):,} partition{'s' if len(results) != 1 else ''}" if table.is_partitioned else "the table"
    return Result(stmt, message=f"Concatenated {where} of {table.qualified_name}: {before} files into {after} "
                                f"(one per directory), write {results[0].write_id if results else '-'}.",
                  details=results)


def _alter_skewed(lab: Session, stmt: st.AlterSkewed) -> Result:
    """SKEWED BY / NOT SKEWED / NOT STORED AS DIRECTORIES: the table's spec, for partitions created after."""
    table = lab.metastore.catalog.get_table(_db(lab, stmt.table.db), stmt.table.name)
    if stmt.skew is not None:
        info = skewed_info(table, [c for c, _ in stmt.skew.columns], list(stmt.skew.values))
        stored = stmt.skew.stored_as_directories
        what = skewed_clause(info, table, stored)
    elif stmt.not_skewed:
        info, stored, what = None, False, "not skewed"
    else:
        if table.skewedInfo is None:
            raise InvalidArgument(f"{table.qualified_name} is not skewed, so it is not stored as directories")
        info, stored, what = table.skewedInfo, False, "skewed, not stored as directories"
    if stored:
        _require_subdirectories(lab)
        check_list_bucketing(table)
        for part in lab.metastore.catalog.get_partitions(table.dbName, table.tableName):
            check_partition_values(table, part.values)
    _table_ddl(lab, table, AlterSkew(table, info, stored))
    return Result(stmt, message=f"{table.qualified_name} is now {what}; partitions created from now on follow it, "
                                "existing ones keep their layout (lab.tables[name].relayout() rewrites them).")


def _require_subdirectories(lab: Session) -> None:
    """Hive refuses list-bucketing DDL unless its jobs may read and write sub-directories."""
    if not lab.get("hive.mapred.supports.subdirectories"):
        raise InvalidArgument("STORED AS DIRECTORIES lays out sub-directories, and "
                                    "hive.mapred.supports.subdirectories is false: SET it to true first")


def _set_skewed_location(lab: Session, stmt: st.SetSkewedLocation) -> Result:
    table = lab.metastore.catalog.get_table(_db(lab, stmt.table.db), stmt.table.name)
    if table.skewedInfo is None:
        raise InvalidArgument(f"{table.qualified_name} is not skewed: SKEWED BY comes before SET SKEWED LOCATION")
    info = with_locations(table.skewedInfo, [(v, loc) for v, loc, _ in stmt.locations], table)
    _table_ddl(lab, table, AlterSkew(table, info, table.storedAsSubDirectories))
    return Result(stmt, message=f"Skewed locations of {table.qualified_name}: "
                                + ", ".join(f"{'/'.join(k)} -> {v}" for k, v in info.skewedColValueLocationMaps.items()))


def _table_ddl(lab: Session, table: Table, *changes: Change) -> None:
    """Changes of a transactional table's definition or partitions, committed by a transaction of their
    own under its write ID, as Hive's DDL takes one."""
    with lab.txn_scope(None) as txn:
        for change in changes:
            txn.add(change)
        txn.add(DefinitionWrite(table, txn.write_id(table)))


def _analyze(lab: Session, stmt: st.Analyze, txn) -> Result:
    if stmt.table.catalog:
        stmt = dataclasses.replace(stmt, table=_lab_table_of_spark(lab, stmt.table))
    with lab.txn_scope(txn) as scope:
        outcome = run_analyze(lambda: lab.spark, lab.metastore, stmt, lab.current_db, scope)
    return Result(stmt, message=outcome.message, details=outcome)


def _analyze_tables(lab: Session, stmt: st.AnalyzeTables, txn) -> Result:
    """Each table in a transaction of its own (or all in `txn`), so a long run keeps what it finished; a
    table that cannot be analyzed (its files gone, say) is reported in its row and the others go on."""
    db = _db(lab, stmt.db)
    records = []
    for name in lab.metastore.catalog.get_tables(db):  # names an unknown database
        one = st.Analyze(table=st.TableName(db, name), mode=stmt.mode)
        try:
            outcome = _analyze(lab, one, txn).details
        except ColstatsError as exc:
            records.append({"table": f"{db}.{name}", "analyzed": False, "partitions": None, "columns": None,
                            "seconds": None, "error": str(exc)})
            continue
        records.append({"table": outcome.table, "analyzed": True,
                        "partitions": len(outcome.partitions) if lab.metastore.catalog.get_table(db, name).is_partitioned
                        else None, "columns": len(outcome.columns), "seconds": round(outcome.seconds, 3),
                        "error": None})
    frame = pd.DataFrame.from_records(records, columns=["table", "analyzed", "partitions", "columns", "seconds",
                                                        "error"]).astype({"partitions": "Int64", "columns": "Int64"})
    done = int(frame["analyzed"].sum())
    failed = ", ".join(frame.loc[~frame["analyzed"].astype(bool), "table"])
    return Result(stmt, df=frame, message=f"Analyzed {done} of {len(frame)} table(s) in {db}"
                  + (f"; not analyzed: {failed}" if failed else ""), details=frame)


def _lab_table_of_spark(lab: Session, name: st.TableName) -> st.TableName:
    """A table of Spark's session catalog as the lab's external table on its location, registered on first
    use (in a metastore transaction of its own: the registration stands whatever the statement then does)."""
    source = read_table_statistics(lab.spark, f"{name.db}.{name.name}")
    table = lab_table_of(lab.metastore, source, lambda *args, **kwargs: register_external(lab, *args, **kwargs))
    return st.TableName(table.dbName, table.tableName)


def _require_metastore(lab: Session, statement: str) -> None:
    """Drill runs ANALYZE TABLE ... REFRESH METADATA and DROP METADATA only with its metastore enabled."""
    if not lab.get("metastore.enabled"):
        raise InvalidArgument(f"Metastore is disabled: ANALYZE ... {statement} works on table metadata "
                                    "kept in it. Enable it with SET metastore.enabled = true")


def _refresh_metadata(lab: Session, stmt: st.RefreshMetadata, txn) -> Result:
    _require_metastore(lab, "REFRESH METADATA")
    with lab.txn_scope(txn) as scope:
        outcome = run_refresh_metadata(lambda: lab.spark, lab.metastore, stmt, lab.current_db, scope,
                                       lab.get("metastore.metadata.store.depth_level"))
    return Result(stmt, df=outcome.to_pandas(), message=outcome.message, details=outcome)


def _drop_metadata(lab: Session, stmt: st.DropMetadata) -> Result:
    _require_metastore(lab, "DROP METADATA")
    table = lab.metastore.catalog.get_table(_db(lab, stmt.table.db), stmt.table.name)
    dropped = lab.metastore.apply([DropTableMetadata(table, stmt.if_exists)])[0]
    return Result(stmt, message=f"Metadata for table [{table.qualified_name}] " + ("dropped." if dropped else
                                                                                   "did not exist; nothing dropped."))


def _describe(lab: Session, stmt: st.Describe) -> Result:
    return Result(stmt, df=describe(lab.metastore, stmt, lab.current_db))


def _show_databases(lab: Session, stmt: st.ShowDatabases) -> Result:
    return Result(stmt, df=pd.DataFrame({"database_name": lab.metastore.catalog.get_all_databases()}))


def _show_tables(lab: Session, stmt: st.ShowTables) -> Result:
    db = _db(lab, stmt.db)
    return Result(stmt, df=pd.DataFrame({"database": db, "tab_name": lab.metastore.catalog.get_tables(db)}))


def _show_partitions(lab: Session, stmt: st.ShowPartitions) -> Result:
    table = lab.metastore.catalog.get_table(_db(lab, stmt.table.db), stmt.table.name)
    if not table.is_partitioned:
        raise InvalidArgument(f"table {table.qualified_name} is not partitioned")
    if stmt.partition:
        names = [p.partName for p in matching_partitions(lab.metastore, table, stmt.partition)]
    else:
        names = lab.metastore.catalog.get_partition_names(table.dbName, table.tableName)
    spelled = table.partition_speller()  # eventDate=2026-11-01, as the folders spell the key
    return Result(stmt, df=pd.DataFrame({"partition": [spelled(name) for name in names]}))


# what the lab itself keeps in a table's parameters: set by hand, a figure would say what no ANALYZE computed
_OWN_PROPERTIES = {"numRows", "rawDataSize", "totalSize", "numFiles", "numPartitions", "COLUMN_STATS_ACCURATE",
                   "transactional", "transactional_properties", "EXTERNAL"}


# the lab's properties a user sets: which columns keep frequent-items sketches, whether KLL sketches are kept
_USER_SETTINGS = {COLUMNS_PROPERTY, KLL_PROPERTY}


def _own_property(key: str) -> bool:
    if key in _USER_SETTINGS:
        return False
    return key in _OWN_PROPERTIES or key.startswith(("colstats.", "spark.sql.statistics."))


def _set_table_properties(lab: Session, stmt: st.SetTableProperties) -> Result:
    """Hive's SET TBLPROPERTIES for the properties that are the user's (`skip.stats.autoupdate`, `comment`,
    a team's tags); the lab's own statistics and bookkeeping are refused by name."""
    table = lab.metastore.catalog.get_table(_db(lab, stmt.table.db), stmt.table.name)
    for key, _, _ in stmt.properties:
        if _own_property(key):
            raise InvalidArgument(f"{key} is the lab's own statistics or bookkeeping of {table.qualified_name}: "
                                        "ANALYZE and the lab's writes keep it; it is not set by hand")
    lab.metastore.apply([AlterTableParams(table, tuple((key, value) for key, value, _ in stmt.properties))])
    shown = ", ".join(f"{key}={value}" for key, value, _ in stmt.properties)
    return Result(stmt, message=f"{table.qualified_name}: set {shown}")


def _unset_table_properties(lab: Session, stmt: st.UnsetTableProperties) -> Result:
    table = lab.metastore.catalog.get_table(_db(lab, stmt.table.db), stmt.table.name)
    for key, _ in stmt.keys:
        if _own_property(key):
            raise InvalidArgument(f"{key} is the lab's own statistics or bookkeeping of {table.qualified_name}: "
                                        "it is not unset by hand")
        if key not in table.parameters and not stmt.if_exists:
            raise InvalidArgument(f"{table.qualified_name} has no property {key} (UNSET TBLPROPERTIES IF EXISTS "
                                        "ignores it)")
    lab.metastore.apply([AlterTableParams(table, tuple((key, None) for key, _ in stmt.keys))])
    return Result(stmt, message=f"{table.qualified_name}: unset {', '.join(key for key, _ in stmt.keys)}")


def _show_table_properties(lab: Session, stmt: st.ShowTableProperties) -> Result:
    table = lab.metastore.catalog.get_table(_db(lab, stmt.table.db), stmt.table.name)
    if stmt.key is not None:
        value = table.parameters.get(stmt.key)
        # Hive answers a missing key with a row saying so, not an error
        shown = value if value is not None else f"Table {table.qualified_name} does not have property: {stmt.key}"
        return Result(stmt, df=pd.DataFrame({"prpt_name": [stmt.key], "prpt_value": [shown]}))
    items = sorted(table.parameters.items())
    return Result(stmt, df=pd.DataFrame(items, columns=["prpt_name", "prpt_value"]))


def _set(lab: Session, stmt: st.SetOption) -> Result:
    if stmt.value is None:
        return Result(stmt, df=pd.DataFrame({"key": [stmt.key], "value": [str(lab.get(stmt.key))]}))
    lab.set(stmt.key, stmt.value)
    return Result(stmt, message=f"{stmt.key} = {lab.get(stmt.key)}")


def _reset(lab: Session, stmt: st.ResetOption) -> Result:
    reset = lab.reset(stmt.key)
    said = ", ".join(reset) if reset else "nothing: no setting was changed"
    return Result(stmt, message=f"Reset {said}")


def _query(lab: Session, stmt: st.Query, txn) -> Result:
    query = stmt.tree if stmt.tree is not None else stmt.text  # parsed once, by the statement parser
    query = catalogs.on_mirrors(lab, query)
    answer = stats_answer(lab, query, txn)
    if answer.frame is not None:
        return Result(stmt, df=answer.frame, answered_from="stats", reason=answer.reason)
    reason = answer.reason
    bound = bind_tables(lab, query, txn)
    with changes_named(bound.read), spark_errors("Spark cannot run the query", stmt.text, bound.views):
        frame = lab.spark.sql(bound.sql)
        # A query's result, not a table's rows: bounded, and the whole result stays in Spark as .spark_df.
        head = _to_pandas(frame.limit(QUERY_ROW_LIMIT + 1))
    message = None
    if len(head) > QUERY_ROW_LIMIT:
        head = head.iloc[:QUERY_ROW_LIMIT]
        message = f"Showing the first {QUERY_ROW_LIMIT:,} rows; result.spark_df has them all."
    pruning = next((report for report in bound.reports if report.decisions), None)
    return Result(stmt, df=head, message=message, spark_df=frame, pruning=pruning,
                  answered_from="scan", reason=reason)


def _to_pandas(frame) -> pd.DataFrame:
    """A bounded query result in pandas; dates and timestamps outside pandas' nanosecond range
    (before 1677, after 2262) stay Python objects instead of failing the conversion."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # PySpark's note that its Arrow path failed
            return frame.toPandas()
    except (ArrowInvalid, OverflowError, pd.errors.OutOfBoundsDatetime):
        return frame.toArrow().to_pandas(timestamp_as_object=True, date_as_object=True)


_HANDLERS: dict[type, Callable[..., Result]] = {
    st.CreateDatabase: _create_database,
    st.DropDatabase: _drop_database,
    st.UseDatabase: _use,
    st.CreateTable: _create_table,
    st.DropTable: _drop_table,
    st.AddPartitions: _add_partitions,
    st.DropPartitions: _drop_partitions,
    st.RepairTable: _repair_table,
    st.Describe: _describe,
    st.DropMetadata: _drop_metadata,
    st.ShowDatabases: _show_databases,
    st.ShowTables: _show_tables,
    st.ShowPartitions: _show_partitions,
    st.SetOption: _set,
    st.ResetOption: _reset,
    st.AlterSkewed: _alter_skewed,
    st.SetSkewedLocation: _set_skewed_location,
    st.SetTableProperties: _set_table_properties,
    st.UnsetTableProperties: _unset_table_properties,
    st.ShowTableProperties: _show_table_properties,
}
_TXN_HANDLERS: dict[type, Callable[..., Result]] = {
    st.Analyze: _analyze, st.AnalyzeTables: _analyze_tables, st.RefreshMetadata: _refresh_metadata, st.Query: _query,
    st.Concatenate: _concatenate}
