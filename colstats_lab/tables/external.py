"""External tables' partitions as another job leaves them on disk: the `k=v/...` directories holding
data files, and a partition made from one of them (files counted, rows unknown until ANALYZE)."""
from __future__ import annotations

import os

from ..files import list_data_files
from ..metastore import InvalidInputException, Partition, Table
from ..metastore.names import parse_part_name


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
    catalog placed it at `location`), with its files counted and its rows unknown (numRows 0, no
    accuracy flag) until ANALYZE, as Hive leaves loaded files."""
    location = location or os.path.join(table.location, rel)
    inside = list_data_files(location)
    return Partition(table.dbName, table.tableName, [v for _, v in parse_part_name(rel)], location=location,
                     parameters={"numFiles": str(len(inside)), "totalSize": str(sum(f.size for f in inside)),
                                 "numRows": "0", "rawDataSize": "0"})
