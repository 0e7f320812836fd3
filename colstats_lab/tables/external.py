"""External tables' partitions as another job leaves them on disk: the `k=v/...` directories holding
data files, and a partition made from one of them (files counted, rows unknown until ANALYZE)."""
from __future__ import annotations

import logging
import os
import time

from ..files import list_data_files
from ..metastore import InvalidInputException, Metastore, Partition, Table
from ..metastore.merge import merge_table_level
from ..metastore.names import parse_part_name

log = logging.getLogger("colstats_lab.catalogs")


def partition_directories(path: str, files=None) -> tuple[list[str], list[str]]:
    """The partition keys and the directories (relative, Hive's escaping) under `path` that hold data
    files; raises naming a directory that does not follow the layout of the others."""
    files = list_data_files(path) if files is None else files
    directories = sorted({os.path.relpath(os.path.dirname(f.path), path) for f in files} - {"."})
    keys = [k for k, _ in parse_part_name(directories[0])] if directories else []
    for rel in directories:
        if [k for k, _ in parse_part_name(rel)] != keys:
            raise InvalidInputException(f"directory {rel} does not follow the partition layout {'/'.join(keys)}")
    return keys, directories


def external_partition(table: Table, rel: str, location: str | None = None) -> Partition:
    """The partition of external `table` named `rel` in its directory (`rel` under the table's, unless a
    catalog placed it at `location`; "" while a catalog has not said where, which no read accepts), with
    its files counted and its rows unknown (numRows 0, no accuracy flag) until ANALYZE, as Hive leaves
    loaded files."""
    location = os.path.join(table.location, rel) if location is None else location
    inside = list_data_files(location)
    return Partition(table.dbName, table.tableName, [v for _, v in parse_part_name(rel)], location=location,
                     parameters={"numFiles": str(len(inside)), "totalSize": str(sum(f.size for f in inside)),
                                 "numRows": "0", "rawDataSize": "0"})


def follow_partitions(metastore: Metastore, table: Table, names: list[str], locations: dict[str, str]) -> None:
    """The lab's partitions of a catalog's table (Spark's, an HMS's) made the catalog's `names`: added ones
    are registered, dropped ones are dropped with their statistics (the files are the catalog's), and each
    is where `locations` says the catalog keeps it; a partition it did not place is registered without a
    location until it is fetched (a read refuses it, never reads it as empty)."""
    with metastore.transaction():
        have = {p.partName: p.location for p in metastore.get_partitions(table.dbName, table.tableName)}
        dropped = sorted(set(have) - set(names))
        for name in dropped:
            metastore.drop_partition(table.dbName, table.tableName, name)
        added = sorted(set(names) - set(have))
        if added:
            metastore.add_partitions([external_partition(table, name, locations.get(name, "")) for name in added])
        moved = move_partitions(metastore, table, {name: location for name, location in locations.items()
                                                   if name in have})
        if added or dropped or moved:
            metastore.refresh_partitioned_table_params(table.dbName, table.tableName)
            # the table level no longer holds what dropped partitions held
            merge_table_level(metastore, table, [c.name for c in table.cols], int(time.time()))
            log.info("%s: followed its catalog's partitions: %d added, %d dropped, %d moved", table.qualified_name,
                     len(added), len(dropped), len(moved))


def move_partitions(metastore: Metastore, table: Table, locations: dict[str, str]) -> dict[str, str]:
    """Points the partitions among `locations` that are elsewhere at their directory, with their files
    counted there; returns those it moved. The caller refreshes the table's sums."""
    current = {p.partName: p.location for p in metastore.get_partitions(table.dbName, table.tableName, list(locations))}
    moved = {name: location for name, location in locations.items()
             if name in current and (not current[name] or os.path.normpath(current[name]) != os.path.normpath(location))}
    if moved:
        with metastore.transaction():
            metastore.set_partition_locations(table.dbName, table.tableName, moved)
            for name, location in moved.items():
                inside = list_data_files(location)
                metastore.alter_partition_params(table.dbName, table.tableName, name, {
                    "numFiles": str(len(inside)), "totalSize": str(sum(f.size for f in inside))})
    return moved
