"""Resolving a statement's PARTITION (...) clause to the table's partitions."""
from __future__ import annotations

from collections.abc import Sequence

from ..coltypes import parse_type
from ..column_statistics.partition_values import canonical_value, same_value
from ..errors import InvalidArgument
from ..metastore import Metastore, NoSuchObjectException, Partition, Table
from .statements import PartitionSpecItem

_SPELLED_MANY_WAYS = ("float", "double", "decimal")


def spec_values(table: Table, spec: list[PartitionSpecItem]) -> dict[str, str | None]:
    """key -> canonical value for the keys given a value; raises naming an unknown key or a bad value."""
    keys = {k.name: k for k in table.partitionKeys}
    if not keys:
        raise InvalidArgument(f"table {table.qualified_name} is not partitioned, but a PARTITION clause was given")
    out = {}
    for item in spec:
        if item.key not in keys:
            raise NoSuchObjectException(
                f"{item.key} is not a partition key of {table.qualified_name} (keys: {', '.join(keys)})")
        if item.value is not None or item.is_null:
            out[item.key] = canonical_value(item.key, keys[item.key].type, item.value)
    return out


def matching_partitions(metastore: Metastore, table: Table, spec: list[PartitionSpecItem] | None,
                        uncommitted: Sequence[Partition] = ()) -> list[Partition]:
    """Every partition the spec names (all when spec is None or gives no values), among the stored ones
    and those a transaction's own writes are adding; raises when none match a spec that gives values."""
    wanted = spec_values(table, spec) if spec else {}
    types = {k.name: k.type for k in table.partitionKeys}
    # the named partitions are found through the metastore's index on key values: one day of a
    # 100,000-partition table reads one day's rows. A value whose text has several spellings (a double's `1.50`,
    # `NaN`) is compared by value below, not by its text in the index
    exact = {k: v for k, v in wanted.items() if parse_type(types[k]).base not in _SPELLED_MANY_WAYS}
    names = metastore.catalog.get_partition_names_by_values(table.dbName, table.tableName, exact) if exact else None
    partitions = metastore.catalog.get_partitions(table.dbName, table.tableName, names) if names != [] else []
    stored = {p.partName for p in partitions} | set(names or ())
    partitions += sorted((p for p in uncommitted if p.partName not in stored), key=lambda p: p.partName)
    matched = [p for p in partitions if all(same_value(types[k], p.spec[k], v) for k, v in wanted.items())]
    if wanted and not matched:
        described = ", ".join(f"{k}={'NULL' if v is None else repr(v)}" for k, v in wanted.items())
        raise NoSuchObjectException(f"no partition of {table.qualified_name} matches ({described})")
    return matched


def exact_partition(metastore: Metastore, table: Table, spec: list[PartitionSpecItem]) -> Partition:
    """The one partition a full spec names."""
    wanted = spec_values(table, spec)
    missing = [k for k in table.partition_key_names if k not in wanted]
    if missing:
        raise InvalidArgument(f"partition spec of {table.qualified_name} needs a value for {', '.join(missing)}")
    name = Partition(table.dbName, table.tableName, [wanted[k] for k in table.partition_key_names],
                     keys=table.partition_key_names).partName
    return metastore.catalog.get_partition(table.dbName, table.tableName, name)
