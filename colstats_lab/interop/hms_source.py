"""A Hive Metastore's table as a source of the lab's: its schema, partitions and locations read from the
HMS, its statistics kept in the lab's metastore as an external table's (freshness: the files as
analyzed), under the lab database `<catalog>_<db>`.

Partitions are followed on each use by their names (one cheap call): names the HMS added are registered,
names it dropped are dropped with their statistics. A partition's location is fetched only when a
statement needs that partition (`resolve`): until then it is registered without one, which no read
accepts (`tables.snapshot` refuses a partition with no location), so one day of a 100,000-partition
table asks the HMS for that day's partition objects only.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from pymetastore.hive_metastore import ttypes

from ..column_statistics.names import make_part_name
from ..errors import InvalidArgument
from ..file_columns import SPELLING_PARAM, spelling_param
from ..metastore import FieldSchema, Metastore, Table
from ..metastore.changes import AlterTableParams, FollowPartitions, RegisterTable
from ..storage import list_data_files
from ..tables.external import catalog_location, external_partition, follow_partitions, listed_sums, moved_partitions
from .hms_client import HiveMetastoreClient

log = logging.getLogger("colstats_lab.hms")

CATALOG_PARAM = "colstats.catalog"        # the attach name the mirror belongs to
URI_PARAM = "colstats.catalog.uri"        # the HMS it mirrors
SOURCE_PARAM = "colstats.catalog.table"   # db.table in that HMS


@dataclass(frozen=True)
class HmsTable:
    """What the lab needs of an HMS table: its names, location (a local path or an object store's URI), columns
    and partition keys."""

    catalog: str
    db: str
    name: str
    location: str
    cols: list[FieldSchema]
    partition_keys: list[FieldSchema]
    raw: ttypes.Table

    @property
    def qualified_name(self) -> str:
        return f"{self.catalog}.{self.db}.{self.name}"

    @property
    def lab_db(self) -> str:
        return lab_database(self.catalog, self.db)


def lab_database(catalog: str, db: str) -> str:
    """The lab database that holds the mirrors of an attached catalog's database `db`."""
    return f"{catalog}_{db}".lower()


def spark_schema_names(parameters: dict[str, str]) -> list[str]:
    """The column names of the case-preserving schema Spark keeps in a table's parameters
    (`spark.sql.sources.schema`, or split into `.numParts` and `.part.N`), where the HMS keeps lower-case
    names; none when Spark did not write the table."""
    text = parameters.get("spark.sql.sources.schema")
    if text is None and str(parameters.get("spark.sql.sources.schema.numParts", "")).isdigit():
        parts = [parameters.get(f"spark.sql.sources.schema.part.{i}")
                 for i in range(int(parameters["spark.sql.sources.schema.numParts"]))]
        text = None if None in parts else "".join(p or "" for p in parts)
    try:
        fields = json.loads(text).get("fields", []) if text else []
    except (ValueError, AttributeError):  # not Spark's JSON: the HMS's names stand
        return []
    return [str(f["name"]) for f in fields if isinstance(f, dict) and "name" in f]


def describe_table(client: HiveMetastoreClient, catalog: str, db: str, name: str) -> HmsTable:
    """The HMS's table, checked to be one the lab can read; raises naming the table and what it cannot."""
    raw = client.get_table(db, name)
    qualified = f"{catalog}.{db}.{name}"
    params = raw.parameters or {}
    if raw.tableType == "VIRTUAL_VIEW":
        raise InvalidArgument(f"{qualified} is a view: the lab analyzes tables")
    if str(params.get("transactional", "")).lower() == "true":
        raise InvalidArgument(
            f"{qualified} is a transactional table: its files hold writes the HMS has not committed or has "
            "aborted, which the lab cannot tell apart without the HMS's write IDs; it is not analyzed yet")
    storage = " ".join(filter(None, [raw.sd.inputFormat, raw.sd.serdeInfo.serializationLib if raw.sd.serdeInfo else None,
                                     params.get("spark.sql.sources.provider")])).lower()
    if "parquet" not in storage:
        raise InvalidArgument(f"{qualified} is stored as {raw.sd.inputFormat}: the lab reads Parquet tables only")
    cols = [FieldSchema(c.name.lower(), c.type.lower(), c.comment) for c in raw.sd.cols]
    keys = [FieldSchema(c.name.lower(), c.type.lower(), c.comment) for c in raw.partitionKeys or []]
    return HmsTable(catalog, db.lower(), name.lower(), catalog_location(raw.sd.location, qualified), cols, keys, raw)


def mirror(metastore: Metastore, client: HiveMetastoreClient, source: HmsTable) -> Table:
    """The lab's table for the HMS's `source`, registered now when the lab does not have it (again when the
    HMS's schema changed: statistics of other columns describe nothing the HMS now has), with the HMS's
    partitions followed by name."""
    db, name = source.lab_db, source.name
    if metastore.catalog.table_exists(db, name):
        table = metastore.catalog.get_table(db, name)
        if table.parameters.get(SOURCE_PARAM) != f"{source.db}.{source.name}" or \
                table.parameters.get(CATALOG_PARAM) != source.catalog:
            raise InvalidArgument(f"lab table {table.qualified_name} is not the mirror of {source.qualified_name}")
        same_schema = ([(c.name, c.type) for c in table.cols] == [(c.name, c.type) for c in source.cols]
                       and [(c.name, c.type) for c in table.partitionKeys] ==
                       [(c.name, c.type) for c in source.partition_keys])
        if same_schema and table.location.rstrip("/") == source.location.rstrip("/"):
            if table.parameters.get(URI_PARAM) != client.uri:
                metastore.apply([AlterTableParams(table, ((URI_PARAM, client.uri),))])
            if table.is_partitioned:
                follow_partitions(metastore, table, client.get_partition_names(source.db, source.name), {})
            return metastore.catalog.get_table(db, name)
        log.warning("%s changed in the HMS (schema or location): its statistics in the lab are dropped and the "
                    "table registered again", source.qualified_name)
    params = {"EXTERNAL": "TRUE", "numRows": "0", "rawDataSize": "0", CATALOG_PARAM: source.catalog,
              URI_PARAM: client.uri, SOURCE_PARAM: f"{source.db}.{source.name}"}
    if spelling := spelling_param(spark_schema_names(source.raw.parameters or {})):
        params[SPELLING_PARAM] = spelling
    table = Table(db, name, source.cols, source.partition_keys, location=source.location, tableType="EXTERNAL_TABLE",
                  parameters=params)
    described = f"tables of {source.catalog}.{source.db} ({client.uri})"
    if table.is_partitioned:  # a partition's location is fetched when it is read
        change = RegisterTable(table, tuple(external_partition(table, n, "") for n in
                                            client.get_partition_names(source.db, source.name)),
                               (("COLUMN_STATS_ACCURATE", None),), described, replacing=True)
    else:
        change = RegisterTable(table, params=tuple(listed_sums(list_data_files(source.location)).items()),
                               database=described, replacing=True)
    return metastore.apply([change])[0]


def resolve(metastore: Metastore, client: HiveMetastoreClient, table: Table, names: list[str] | None,
            refetch: bool = False) -> list[ttypes.Partition]:
    """Fetches the locations of the mirror's partitions `names` (all when None) that it has not fetched yet,
    or of all of them with `refetch` (another job may have moved one), in batched calls; returns the HMS's
    partition objects fetched."""
    if not table.is_partitioned:
        return []
    db, source = table.parameters[SOURCE_PARAM].split(".", 1)
    known = metastore.catalog.get_partitions(table.dbName, table.tableName, names)
    wanted = [p.partName for p in known if refetch or not p.location]
    if not wanted:
        return []
    fetched = client.get_partitions_by_names(db, source, wanted)
    locations = {}
    for raw in fetched:
        name = hms_partition_name(table, raw)
        what = f"partition {name} of {table.parameters[CATALOG_PARAM]}.{db}.{source}"
        locations[name] = catalog_location(raw.sd.location, what)
    moved = moved_partitions(metastore, table, locations)
    if moved:
        metastore.apply([FollowPartitions(table, moved=moved)])
    return fetched


def hms_partition_name(table: Table, raw: ttypes.Partition) -> str:
    """The name of the HMS's partition `raw` as the lab spells it (Hive's escaping)."""
    return make_part_name(table.partition_key_names, raw.values)
