"""Removing what aborted or dead writes left on disk: their delta/base directories and staging."""
from __future__ import annotations

import re

from ..metastore import Metastore, Table
from ..storage import join, storage_for
from .layout import write_id_of

_STAGING = re.compile(r"^_staging_(\d+)_")


def remove_aborted(metastore: Metastore, table: Table) -> list[str]:
    """Deletes the table's directories of aborted write IDs and the staging of transactions that
    are no longer open; returns what it removed."""
    valid = metastore.txns.get_valid_write_ids(table.dbName, table.tableName)
    removed = []
    locations = [table.location] + [p.location for p in metastore.catalog.get_partitions(table.dbName, table.tableName)]
    for location in locations:
        storage = storage_for(location)
        for name in storage.child_names(location):
            path = join(location, name)
            write_id = write_id_of(name)
            staging = _STAGING.match(name)
            if write_id is not None and write_id in valid.aborted_write_ids:
                storage.remove(path)
                removed.append(path)
            elif staging and metastore.txns.txn_state(int(staging.group(1))) != "open":
                storage.remove(path)
                removed.append(path)
    return removed
