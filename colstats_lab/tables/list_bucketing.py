"""Laying out a write by a list-bucketing spec: one sub-directory per skewed value (`x=30/`,
`x=10/y=a/`) and `HIVE_DEFAULT_LIST_BUCKETING_DIR_NAME/` for the other rows, inside the write's
delta or base directory. Spark writes them as one more `partitionBy` column, whose directories are
then renamed to Hive's names."""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..column_statistics.names import parse_part_name, unescape_path_name
from ..column_statistics.partition_values import canonical_value
from ..errors import InvalidArgument
from ..metastore import DEFAULT_LIST_BUCKETING_DIR_NAME, Metastore, Partition, SkewedInfo, Table
from ..quoting import column_ref
from .snapshot import spark_type

DIRECTORY_COLUMN = "__list_bucketing_dir"


def layout_specs(metastore: Metastore, table: Table, frame: DataFrame, partition: dict,
                 relayout: bool = False) -> dict[str, SkewedInfo]:
    """The spec each partition this write touches is laid out by (partition name -> spec); empty when
    none is stored as directories. A new partition takes the table's spec, an existing one keeps its own
    (with `relayout`, every partition takes the table's)."""
    existing = {p.partName: p for p in metastore.catalog.get_partitions(table.dbName, table.tableName)} \
        if table.is_partitioned and not relayout else {}
    if not table.storedAsSubDirectories and not any(p.list_bucketing for p in existing.values()):
        return {}
    keys = table.partition_key_names
    if partition:
        lowered = {k.lower(): v for k, v in partition.items()}
        touched = [[canonical_value(k.name, k.type, lowered[k.name]) for k in table.partitionKeys]]
    else:  # a dynamic write: which partitions it touches is in the data (an aggregate of a few rows)
        touched = [[None if r[k] is None else canonical_value(k, t.type, r[k])
                    for k, t in zip(keys, table.partitionKeys, strict=True)]
                   for r in frame.select(*[F.col(column_ref(k)).cast("string").alias(k) for k in keys]).distinct().collect()]
    specs = {}
    for values in touched:
        name = Partition(table.dbName, table.tableName, values, keys=keys).partName
        part = existing.get(name)
        spec = part.list_bucketing if part is not None else (table.skewedInfo if table.storedAsSubDirectories else None)
        if spec is not None:
            specs[name] = _with_table_locations(spec, table)
    return specs


def _with_table_locations(spec: SkewedInfo, table: Table) -> SkewedInfo:
    """The partition's value -> directory map, falling back on the table's SET SKEWED LOCATION entries."""
    table_map = table.skewedInfo.skewedColValueLocationMaps \
        if table.skewedInfo and table.skewedInfo.skewedColNames == spec.skewedColNames else {}
    return SkewedInfo(spec.skewedColNames, spec.skewedColValues, {**table_map, **spec.skewedColValueLocationMaps})


def directory_column(table: Table, specs: dict[str, SkewedInfo], partition: dict) -> Column:
    """Each row's list-bucketing sub-directory (NULL in partitions laid out without one)."""
    def typed(name: str, text: str) -> Column:
        return F.lit(text).cast(spark_type(table.column_type(name)))

    def by_spec(spec: SkewedInfo) -> Column:
        expr = None
        for value in spec.skewedColValues:
            condition = _all([F.col(column_ref(n)) == typed(n, t) for n, t in zip(spec.skewedColNames, value, strict=True)])
            directory = spec.directory_of(tuple(value))
            expr = F.when(condition, directory) if expr is None else expr.when(condition, directory)
        return expr.otherwise(spec.default_directory) if expr is not None else F.lit(spec.default_directory)

    if partition:
        return by_spec(next(iter(specs.values())))
    expr = None
    for name, spec in specs.items():
        condition = _all([F.col(column_ref(k.name)).isNull() if v is None else F.col(column_ref(k.name)) == typed(k.name, v)
                          for k, (_, v) in zip(table.partitionKeys, parse_part_name(name), strict=True)])
        expr = F.when(condition, by_spec(spec)) if expr is None else expr.when(condition, by_spec(spec))
    return expr if expr is not None else F.lit(None).cast("string")


def _all(terms: list[Column]) -> Column:
    condition = terms[0]
    for term in terms[1:]:
        condition = condition & term
    return condition


def split_leaf(rel: str) -> tuple[str | None, str | None]:
    """A leaf of Spark's output, `ds=1/__list_bucketing_dir=x%3D30`, as (partition name, sub-directory)."""
    head, _, last = rel.rpartition("/")
    if not last.startswith(DIRECTORY_COLUMN + "="):
        return rel, None
    value = unescape_path_name(last[len(DIRECTORY_COLUMN) + 1:])
    return (head or None), (None if value == "__HIVE_DEFAULT_PARTITION__" else value)


def values_by_directory(spec: SkewedInfo) -> dict[str, tuple[str, ...]]:
    return {spec.directory_of(tuple(v)): tuple(v) for v in spec.skewedColValues}


def check_partition_values(table: Table, values: list[str | None]) -> None:
    """A partition of a list-bucketing table may not be named like the default directory."""
    for key, value in zip(table.partition_key_names, values, strict=True):
        if value == DEFAULT_LIST_BUCKETING_DIR_NAME:
            raise InvalidArgument(
                f"partition value {key}={value} of {table.qualified_name} is the default list-bucketing directory "
                "name; a list-bucketing table can't have it")
