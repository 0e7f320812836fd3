"""Catalogs the lab attaches (a Hive Metastore over Thrift, an Iceberg catalog through pyiceberg): their tables
named `catalog.db.t` in statements and methods, mirrored as the lab's external tables, and the lab's statistics
published back to them; and the tables of a format (Iceberg, Delta) followed to their current snapshot
whenever the lab uses them, by whichever name."""
from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import pandas as pd
from sqlglot import exp

from ..analyze.stale import analyze_stale as analyze_stale_owners
from ..column_statistics.names import split_table_name
from ..errors import InvalidArgument, ParseError, parse_sql
from ..interop import snapshot_source
from ..interop.delta_source import DeltaSource, log_statistics_frame
from ..interop.hms_client import HiveMetastoreClient
from ..interop.hms_engines import engines_frame
from ..interop.hms_publish import PUBLISHED_PARAM, PublishOutcome
from ..interop.hms_publish import publish as publish_to_hms
from ..interop.hms_source import CATALOG_PARAM, SOURCE_PARAM, URI_PARAM, describe_table, lab_database, mirror, resolve
from ..interop.iceberg_partition_stats import partition_statistics_frame
from ..interop.iceberg_publish import PuffinOutcome, publish_puffin, puffin_frame
from ..interop.iceberg_source import IcebergCatalog, IcebergSource, metadata_file_source
from ..interop.snapshot_source import TableSource
from ..metastore import COLUMN_STATS_ACCURATE, NoSuchObjectException, Table
from ..metastore.repositories.snapshot_files import FORMAT_PARAM, SNAPSHOT_PARAM
from ..result import Result
from ..sql import statements as st
from ..sql.parser import SPARK_CATALOG
from ..sql.partition_spec import matching_partitions

if TYPE_CHECKING:
    from .session import Session


AttachedCatalog = HiveMetastoreClient | IcebergCatalog


def attach(session: Session, name: str, uri: str | dict) -> AttachedCatalog:
    """The work of `Lab.attach`, whose docstring is the reference."""
    if not isinstance(name, str) or not name.isidentifier() or name.lower() == SPARK_CATALOG:
        raise InvalidArgument(f"a catalog is attached under a simple name other than {SPARK_CATALOG}, not {name!r}")
    client: AttachedCatalog
    if isinstance(uri, dict):
        client = IcebergCatalog(name.lower(), uri)
    elif isinstance(uri, str) and uri.startswith("thrift://"):
        client = HiveMetastoreClient(uri)
    else:
        raise InvalidArgument("a Hive Metastore is attached by its URI (thrift://host:port) and an Iceberg catalog "
                                    f"by pyiceberg's catalog properties (a dict), not {uri!r}")
    previous = session.catalogs.pop(name.lower(), None)
    if previous is not None:
        previous.close()
    session.catalogs[name.lower()] = client
    return client


def client_of(session: Session, catalog: str, statement: str | None = None, position: int = -1) -> AttachedCatalog:
    """The attached catalog `catalog`; an unknown one is a parse error with its caret when it comes from a
    statement, else NoSuchObjectException naming it."""
    client = session.catalogs.get(catalog.lower())
    if client is not None:
        return client
    message = (f"unknown catalog {catalog!r}: attach it first (lab.attach({catalog!r}, 'thrift://host:9083')), "
               f"or name Spark's session catalog {SPARK_CATALOG}")
    if statement is not None and position >= 0:
        raise ParseError(message, statement, position)
    raise NoSuchObjectException(message)


def client_of_mirror(session: Session, table: Table) -> HiveMetastoreClient:
    """The HMS a mirror came from: its catalog as attached, or attached again from the URI the mirror
    recorded (a dashboard, or another process on the same metastore)."""
    catalog, uri = table.parameters.get(CATALOG_PARAM), table.parameters.get(URI_PARAM)
    if not catalog or not uri:
        raise InvalidArgument(f"{table.qualified_name} is not a table of an attached Hive Metastore")
    client = session.catalogs.get(catalog)
    if not isinstance(client, HiveMetastoreClient) or client.uri != uri:
        client = attach(session, catalog, uri)
    assert isinstance(client, HiveMetastoreClient)
    return client


def source_of(session: Session, table: Table) -> TableSource | None:
    """The format's source of an Iceberg or Delta table, opened again from what the lab recorded (its catalog
    as attached, or attached again from its properties); None for other tables."""
    fmt = table.parameters.get(FORMAT_PARAM)
    if fmt == "delta":
        followed_version = table.parameters.get(SNAPSHOT_PARAM) or ""
        return DeltaSource(table.parameters[snapshot_source.SOURCE_PARAM],
                           int(followed_version) if followed_version.isdigit() else None)
    if fmt == "iceberg" and table.parameters.get(CATALOG_PARAM):
        catalog = table.parameters[CATALOG_PARAM]
        client = session.catalogs.get(catalog)
        options = table.parameters.get(snapshot_source.OPTIONS_PARAM, "{}")
        if not isinstance(client, IcebergCatalog) or client.options != options:
            client = IcebergCatalog(catalog, json.loads(options))
            session.catalogs[catalog] = client
        _, db, name = table.parameters[snapshot_source.SOURCE_PARAM].rsplit(".", 2)
        return client.table(db, name)
    if fmt == "iceberg":
        return metadata_file_source(table.parameters[snapshot_source.SOURCE_PARAM])
    return None


def followed(session: Session, table: Table) -> Table:
    """An Iceberg or Delta table followed to its current snapshot (any other table as it is): the lab's
    statistics of it are judged against the files a reader sees now, never those of a snapshot gone by."""
    source = source_of(session, table)
    if source is None:
        return table
    return snapshot_source.follow(session.metastore, table.dbName, table.tableName, source.current())


def follow_named(session: Session, name: st.TableName) -> None:
    """The lab's table `name`, when it is an Iceberg or Delta table, followed to its current snapshot."""
    db, table_name = (name.db or session.current_db).lower(), name.name.lower()
    if session.metastore.catalog.table_exists(db, table_name):
        followed(session, session.metastore.catalog.get_table(db, table_name))


def catalog_table(session: Session, name: st.TableName, spec: list[st.PartitionSpecItem] | None = None,
                  refetch: bool = False, statement: str | None = None, fetch: bool = True) -> Table:
    """The lab's mirror of an attached catalog's table, followed now, with the locations of the partitions
    `spec` names (all without one) fetched, or fetched again with `refetch`; with `fetch` false, followed by
    partition names only."""
    client = client_of(session, name.catalog or "", statement, name.catalog_position)
    db = name.db or session.current_db
    if isinstance(client, IcebergCatalog):
        snapshot = client.table(db, name.name).current()
        snapshot.catalog = client.name
        return snapshot_source.follow(session.metastore, lab_database(client.name, db), name.name.lower(), snapshot)
    source = describe_table(client, (name.catalog or "").lower(), db, name.name)
    table = mirror(session.metastore, client, source)
    if fetch:
        names = None
        if spec and table.is_partitioned:
            names = [p.partName for p in matching_partitions(session.metastore, table, spec)]
        resolve(session.metastore, client, table, names, refetch=refetch)
    return session.metastore.catalog.get_table(table.dbName, table.tableName)


def split_catalog_name(session: Session, name: str) -> st.TableName | None:
    """`catalog.db.t` as a TableName when `catalog` is attached; None for the lab's own names."""
    if not isinstance(name, str):
        return None
    parts = name.strip().lower().split(".")
    if len(parts) == 3 and all(parts) and parts[0] in session.catalogs:
        return st.TableName(parts[1], parts[2], parts[0])
    return None


def show_tables(session: Session, stmt: st.ShowTables) -> Result:
    client = client_of(session, stmt.catalog or "")
    db = stmt.db or "default"
    if db not in client.get_all_databases():  # Hive 2.3 lists no tables of a database it does not have, silently
        raise NoSuchObjectException(f"database {stmt.catalog}.{db} does not exist in the {client.kind} at {client.uri}")
    return Result(stmt, df=pd.DataFrame({"database": f"{stmt.catalog}.{db}", "tab_name": client.get_all_tables(db)}))


def _followed(session: Session, name: str) -> tuple[Table, HiveMetastoreClient, str]:
    """An attached HMS's table named either way (`hms.db.t` or the mirror's lab name), followed by its
    partition names; its client; its catalog name."""
    catalog_name = split_catalog_name(session, name)
    if catalog_name is None:
        mirror_table = session.resolve(name)
        client_of_mirror(session, mirror_table)
        source_db, source_name = mirror_table.parameters[SOURCE_PARAM].split(".", 1)
        catalog_name = st.TableName(source_db, source_name, mirror_table.parameters[CATALOG_PARAM])
    table = catalog_table(session, catalog_name, fetch=False)
    client = session.catalogs[catalog_name.catalog or ""]
    assert isinstance(client, HiveMetastoreClient)
    return table, client, str(catalog_name)


def publish(session: Session, name: str) -> Result:
    """The work of `TableHandle.publish`, whose docstring is the reference. The partitions it may publish or withdraw
    are fetched again first: another job may have moved one since the lab read its files."""
    formatted = _format_table(session, name)
    if formatted is not None and isinstance(formatted[1], IcebergSource):
        return _publish_puffin(session, formatted[0], formatted[1])
    if formatted is not None:
        raise InvalidArgument(f"{name} is a Delta table: Delta keeps no NDV for the lab to publish into")
    table, client, qualified = _followed(session, name)
    fetched = []
    if table.is_partitioned:
        touched = [p.partName for p in session.metastore.catalog.get_partitions(table.dbName, table.tableName)
                   if p.location and (PUBLISHED_PARAM in p.parameters or COLUMN_STATS_ACCURATE in p.parameters)]
        fetched = resolve(session.metastore, client, table, touched, refetch=True)
    outcome: PublishOutcome = publish_to_hms(session.metastore, client, table, qualified, fetched)
    return Result(message=outcome.message, details=outcome)


AUTO_PUBLISH_PROPERTY = "colstats.publish"  # an Iceberg table property: "auto" republishes after each auto-analyze


def auto_published(session: Session, table: Table) -> dict | None:
    """An Iceberg table whose own properties say `colstats.publish=auto`, analyzed by an auto-analyze round, gets
    its statistics file on its current snapshot, as `publish()` writes it; returns the snapshot, the file and how
    long after the snapshot's commit it landed. None for any other table: the others are only analyzed."""
    source = source_of(session, table)
    if not isinstance(source, IcebergSource) or not source.writable:
        return None
    iceberg = source.load()
    if str(iceberg.properties.get(AUTO_PUBLISH_PROPERTY, "")).strip().lower() != "auto":
        return None
    outcome: PuffinOutcome = _publish_puffin(session, followed(session, table), source).details
    snapshot = iceberg.snapshot_by_id(outcome.snapshot_id)
    lag = time.time() - snapshot.timestamp_ms / 1000 if snapshot is not None else float("nan")
    return {"snapshot": outcome.snapshot_id, "statistics_path": outcome.statistics_path,
            "after_commit_seconds": round(lag, 3), "unchanged": outcome.unchanged}


def _format_table(session: Session, name: str) -> tuple[Table, TableSource] | None:
    """An Iceberg or Delta table named either way, followed, with its source; None for any other table (an
    HMS's is not looked up here: that would fetch every partition's location)."""
    catalog_name = split_catalog_name(session, name)
    if catalog_name is not None:
        if not isinstance(session.catalogs.get(catalog_name.catalog or ""), IcebergCatalog):
            return None
        table = catalog_table(session, catalog_name)
    else:
        table = session.metastore.catalog.get_table(*split_table_name(name, session.current_db))
    source = source_of(session, table)
    return None if source is None else (followed(session, table), source)


def _publish_puffin(session: Session, table: Table, source: IcebergSource) -> Result:
    """Partitions whose files changed since they were analyzed are analyzed first (one Spark job), so what
    is registered describes the current snapshot; then the Puffin file."""
    if not source.writable:
        raise InvalidArgument(f"{table.qualified_name} was registered from the metadata file {source.source}, "
                                    "which the lab only reads: attach its catalog to publish statistics to it")
    with session.txn_scope(None) as txn:  # the table is followed already: no second reading of its snapshot
        stale = analyze_stale_owners(lambda: session.spark, session.metastore, table, 0.0, txn)
    table = session.metastore.catalog.get_table(table.dbName, table.tableName)
    outcome = publish_puffin(session.spark, session.metastore, table, source.load(), source.source)
    followed(session, table)  # registering the file wrote a metadata file: follow it, or readers see a commit
    outcome.analyzed_first = [p for p in stale.analyzed if p is not None] or (["the table"] if stale.analyzed else [])
    return Result(message=outcome.message, details=outcome)


def engines(session: Session, name: str, partition: str | None = None) -> pd.DataFrame:
    """The work of `TableHandle.engines`, whose docstring is the reference."""
    formatted = _format_table(session, name)
    if formatted is not None and isinstance(formatted[1], IcebergSource):
        return puffin_frame(session.metastore, formatted[0], formatted[1].load())
    if formatted is not None:
        return log_statistics_frame(formatted[0])
    table, client, _ = _followed(session, name)
    if table.is_partitioned:
        resolve(session.metastore, client, table, None if partition in (None, "*") else [partition])
    return engines_frame(session.metastore, client, table, partition)


def partition_statistics(session: Session, name: str) -> pd.DataFrame:
    """The work of `TableHandle.partition_statistics`, whose docstring is the reference."""
    formatted = _format_table(session, name)
    if formatted is None or not isinstance(formatted[1], IcebergSource):
        raise InvalidArgument(f"{name} is not an Iceberg table: partition statistics files are Iceberg's")
    return partition_statistics_frame(formatted[1].load())


def on_mirrors(session: Session, query):
    """A query (text or sqlglot tree) with each `catalog.db.t` of an attached catalog replaced by its lab
    mirror, followed and with every partition's location fetched (a query may read any of them); the
    query as given when it names none."""
    tree = (parse_sql(query) if isinstance(query, str) else query).copy()  # the statement's tree stays as parsed
    for node in tree.find_all(exp.Table):
        if not node.catalog and node.name:
            follow_named(session, st.TableName(node.db.lower() or None, node.name.lower()))
    if not session.catalogs:
        return query
    named = [node for node in tree.find_all(exp.Table) if node.catalog and node.catalog.lower() in session.catalogs]
    for node in named:
        table = catalog_table(session, st.TableName(node.db.lower(), node.name.lower(), node.catalog.lower()))
        node.set("catalog", None)
        node.set("db", exp.to_identifier(table.dbName))
        node.set("this", exp.to_identifier(table.tableName))
    return tree if named else query
