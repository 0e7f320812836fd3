"""External tables' partitions as another job leaves them on disk: the `k=v/...` directories holding
data files, and a partition made from one of them (files counted, rows unknown until ANALYZE)."""
from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql import types as T

from ..coltypes import from_spark_type
from ..column_statistics.model import leaf_name
from ..column_statistics.names import parse_part_name
from ..errors import InvalidArgument, StorageError, spark_errors
from ..file_columns import (
    NANOS_PARAM,
    SKIPPED_PARAM,
    SPELLING_PARAM,
    by_lower_name,
    is_nanosecond_timestamp,
    nanos_param,
    spelling_param,
)
from ..files import DataFile
from ..metastore import FieldSchema, Metastore, Partition, Table
from ..metastore.changes import FollowPartitions, MovedPartition
from ..storage import FooterUnavailable, footer_of, join, list_data_files, normalized, parent, relative, spark_uris, storage_for
from .snapshot import with_leaf_type

log = logging.getLogger("colstats_lab.catalogs")


def partition_directories(path: str, files=None) -> tuple[list[str], list[str]]:
    """The partition keys and the directories (relative, Hive's escaping) under `path` that hold data
    files; raises naming a directory that does not follow the layout of the others."""
    files = list_data_files(path) if files is None else files
    directories = sorted({relative(parent(f.path), path) for f in files} - {"."})
    keys = [k for k, _ in parse_part_name(directories[0])] if directories else []
    for rel in directories:
        if [k for k, _ in parse_part_name(rel)] != keys:
            raise InvalidArgument(f"directory {rel} does not follow the partition layout {'/'.join(keys)}")
    return keys, directories


# Parquet logical types Spark 4.3 refuses to read at all: its schema inference fails for the whole file
_UNREADABLE = {"TIME": "a TIME column, which Spark does not read", "FLOAT16": "a FLOAT16 column, which Spark does not read",
               "UUID": "a UUID column, which Spark does not read", "INTERVAL": "an INTERVAL column, which Spark does not read"}
_MAX_DECIMAL_DIGITS = 38


@dataclass
class FileColumns:
    """A Parquet file's columns as the lab registers them: the columns (lower-case names, Hive types), the
    parameters that keep the file's spelling and its nanosecond timestamps, and the columns left out, why."""

    cols: list[FieldSchema]
    parameters: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


def _schema_without_spark(arrow: pa.Schema) -> T.StructType | None:
    """The Spark schema Spark's Parquet reader infers for a file of this Arrow schema, made here (pyspark's own
    mapping, no JVM); None where that mapping is not sure to be Spark's (an unsigned integer): Spark then infers
    it. A nanosecond timestamp maps to a timestamp, as `file_columns` makes it one either way."""
    from pyspark.sql.pandas.types import from_arrow_schema

    if any(pa.types.is_unsigned_integer(f.type) or pa.types.is_null(f.type) for f in _leaf_fields(arrow)):
        return None
    try:
        return from_arrow_schema(arrow)
    except Exception:  # noqa: BLE001 - pyspark's refusal of a type: Spark's own inference decides
        return None


def _leaf_fields(schema) -> list[pa.Field]:
    out, stack = [], list(schema)
    while stack:
        f = stack.pop()
        kind = f.type
        if pa.types.is_struct(kind):
            stack.extend(kind.field(i) for i in range(kind.num_fields))
        elif pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
            stack.append(kind.value_field)
        elif pa.types.is_map(kind):
            stack.extend([kind.key_field, kind.item_field])
        else:
            out.append(f)
    return out


def file_columns(spark: SparkSession | Callable[[], SparkSession], data_file: DataFile,
                 partition_keys: list[str]) -> FileColumns:
    """The columns of the Parquet file at `path` as Spark reads them, the partition keys (as the directories
    spell them) left out but their spelling kept. A
    file holding two names that differ only in case is refused by name; a nanosecond timestamp is a
    timestamp (read truncated to the microsecond); a column Spark cannot read is left out by name, with why,
    and the others kept."""
    path = data_file.path

    def spark_of() -> SparkSession:  # started only where Spark's inference is needed
        return spark() if callable(spark) else spark
    try:
        parquet = footer_of(data_file).schema
    except FooterUnavailable:  # listed through Spark: its inference alone says the columns
        return _columns_spark_infers(spark_of(), path, partition_keys)
    except (OSError, ValueError) as exc:  # pyarrow's: not Parquet, cut short
        raise InvalidArgument(f"cannot read {path} as Parquet: {exc}") from None
    arrow = parquet.to_arrow_schema()
    by_lower_name(arrow.names, f"Parquet file {path}")
    leaves: dict[str, list] = {}
    for i in range(len(parquet)):
        column = parquet.column(i)
        leaves.setdefault(column.path.split(".")[0], []).append(column)
    skipped = {name: why for name in arrow.names if (why := _unreadable(leaves.get(name, []), arrow.field(name)))}
    nanos = {name: [tuple(leaf.path.split(".")[1:]) for leaf in leaves.get(name, [])
                    if is_nanosecond_timestamp(leaf.logical_type)] for name in arrow.names if name not in skipped}
    nanos = {name: paths for name, paths in nanos.items() if paths}
    int96 = any(parquet.column(i).physical_type == "INT96" for i in range(len(parquet)))
    # a registration starts no JVM where it can: Arrow's reading of an INT96 timestamp is no guide to Spark's
    schema = None if skipped or int96 else _schema_without_spark(arrow)
    if schema is None:
        with spark_errors(f"cannot read {path} as Parquet"), _nanos_as_long(spark_of(), bool(nanos)):
            if skipped:  # Spark infers no file with such a column: it infers the others from a file of their schema
                schema = _inferred_without(spark_of(), arrow, set(skipped))
            else:
                schema = spark_of().read.parquet(*spark_uris(spark_of(), [path])).schema
    keys = {k.lower() for k in partition_keys}
    cols = [FieldSchema(f.name.lower(),
                        from_spark_type(with_leaf_type(f.dataType, nanos.get(f.name, []), T.TimestampType())).name)
            for f in schema.fields if f.name.lower() not in keys]
    nanos_names = [name if not fields else leaf_name((name.lower(), *(p.lower() for p in fields)))
                   for name, paths in nanos.items() for fields in paths]
    kept = [f.name for f in schema.fields if f.name.lower() not in keys]
    parameters = {SPELLING_PARAM: spelling_param(kept + list(partition_keys)), NANOS_PARAM: nanos_param(nanos_names),
                  SKIPPED_PARAM: json.dumps({k.lower(): v for k, v in skipped.items()}) if skipped else None}
    if not cols:
        raise InvalidArgument(f"no column of {path} can be read: " + "; ".join(
            f"{name} is {why}" for name, why in skipped.items()) if skipped else f"{path} has no data columns")
    for name, why in skipped.items():
        log.warning("%s: column %s is left out: it is %s", path, name, why)
    return FileColumns(cols, {k: v for k, v in parameters.items() if v is not None}, skipped)


def check_column_types_agree(files: list[DataFile], root: str) -> list[str]:
    """Every file's columns of one kind each (integers, floating point, decimals, text, ...), else one line naming
    the column, two files and their types, before any Spark job: Spark reads no table whose files disagree on a
    column's kind (pandas writes an integer column holding a NULL as float64). Returns the files whose footers
    cannot be read as Parquet (not Parquet, cut short), which Spark's read will refuse."""
    seen: dict[str, tuple[str, str, str]] = {}  # lower-case name -> (kind, type, file)
    unreadable = []
    for data_file in files:
        try:
            arrow = footer_of(data_file).schema.to_arrow_schema()
        except FooterUnavailable:  # listed through Spark, no credentials here: its read will say
            continue
        except (OSError, ValueError):
            unreadable.append(relative(data_file.path, root))
            continue
        for field_ in arrow:
            kind = _type_kind(field_.type)
            first = seen.setdefault(field_.name.lower(), (kind, str(field_.type), data_file.path))
            if first[0] != kind:
                raise InvalidArgument(
                    f"column {field_.name} is {first[1]} in {relative(first[2], root)} and {field_.type} in "
                    f"{relative(data_file.path, root)}: Spark reads no table whose files disagree on a column's type; "
                    "write them alike (pandas: an integer column holding NULLs as Int64, not float64)")
    return unreadable


def empty_partition_folders(root: str, part_dirs: list[str]) -> list[str]:
    """The `k=v` folders directly under `root` that hold no data file (Spark reads no partition of them)."""
    holding = {rel.split("/", 1)[0] for rel in part_dirs}
    storage = storage_for(root)
    return sorted(name for name in storage.child_names(root) if "=" in name and not name.startswith(("_", "."))
                  and name not in holding and storage.is_dir(join(root, name)))


def _type_kind(arrow_type: pa.DataType) -> str:
    """The kind of an Arrow type Spark reads files of alike (an int32 file beside an int64 one widens)."""
    if pa.types.is_integer(arrow_type):
        return "integer"
    if pa.types.is_floating(arrow_type):
        return "floating point"
    if pa.types.is_decimal(arrow_type):
        return "decimal"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "text"
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return "binary"
    if pa.types.is_timestamp(arrow_type):
        return "timestamp"
    if pa.types.is_date(arrow_type):
        return "date"
    return str(arrow_type)


def _columns_spark_infers(spark: SparkSession, path: str, partition_keys: list[str]) -> FileColumns:
    """The columns of the Parquet file at `path` as Spark infers them, where its footer is not read here (no
    storage credentials): a nanosecond timestamp or a column Spark cannot read fails in Spark's words."""
    with spark_errors(f"cannot read {path} as Parquet"):
        schema = spark.read.parquet(*spark_uris(spark, [path])).schema
    names = [f.name for f in schema.fields]
    by_lower_name(names, f"Parquet file {path}")
    keys = {k.lower() for k in partition_keys}
    kept = [f for f in schema.fields if f.name.lower() not in keys]
    if not kept:
        raise InvalidArgument(f"{path} has no data columns")
    spelling = spelling_param([f.name for f in kept] + list(partition_keys))
    return FileColumns([FieldSchema(f.name.lower(), from_spark_type(f.dataType).name) for f in kept],
                       {SPELLING_PARAM: spelling} if spelling else {})


def _unreadable(leaves: list, arrow_field: pa.Field) -> str | None:
    """Why Spark (or the lab) cannot read a column with these Parquet leaves; None when it can."""
    for leaf in leaves:
        logical = leaf.logical_type.type
        if logical in _UNREADABLE:
            return _UNREADABLE[logical]
        if logical == "DECIMAL" and leaf.precision > _MAX_DECIMAL_DIGITS:
            return f"a decimal of {leaf.precision} digits, past Spark's {_MAX_DECIMAL_DIGITS}"
        if is_nanosecond_timestamp(leaf.logical_type) and not _under_structs(arrow_field, leaf.path.split(".")[1:]):
            return (f"a nanosecond timestamp inside a list or map ({leaf.path}), which the lab reads at the top "
                    "level and in structs only, for now")
    return None


def _under_structs(arrow_field: pa.Field, fields: list[str]) -> bool:
    """Whether the leaf `fields` below a column is reached through structs only (no list, map, or a field whose
    own name holds a dot, which a path cannot tell apart)."""
    kind = arrow_field.type
    for name in fields:
        if not pa.types.is_struct(kind) or kind.get_field_index(name) < 0:
            return False
        kind = kind.field(kind.get_field_index(name)).type
    return True


@contextmanager
def _nanos_as_long(spark: SparkSession, wanted: bool) -> Iterator[None]:
    """Spark's inference with TIMESTAMP(NANOS) read as the long it is (it refuses the file otherwise)."""
    key = "spark.sql.legacy.parquet.nanosAsLong"
    if not wanted:
        yield
        return
    before = spark.conf.get(key, "false") or "false"
    spark.conf.set(key, "true")
    try:
        yield
    finally:
        spark.conf.set(key, before)


def _inferred_without(spark: SparkSession, arrow: pa.Schema, left_out: set[str]):
    """Spark's schema of a file like the one of `arrow` without the columns `left_out`: inferred from an
    empty file pyarrow writes with those columns' types (timestamps in microseconds or nanoseconds as
    there)."""
    kept = pa.schema([f for f in arrow if f.name not in left_out])
    with tempfile.TemporaryDirectory(prefix="colstats-schema-") as folder:
        empty = os.path.join(folder, "schema.parquet")
        pq.write_table(kept.empty_table(), empty)
        return spark.read.parquet(empty).schema


def catalog_location(location: str | None, what: str) -> str:
    """A location a catalog or table format gives (Iceberg's `file:///...`, Hadoop's `file:/...`, a plain path,
    `s3a://...`) as the lab keeps it. A local one is its path: the path's own text, never URI-decoded (pyiceberg
    names a partition's folder `ds=50%25` for the value `50%`, Hive `ds=a%3Ab` for `a:b`, and that is the
    folder's name). An object store's URI stays as it is, for the storage seam; none, or a scheme no file
    system serves here, is refused naming `what`."""
    if not location:
        raise InvalidArgument(f"{what} has no location")
    if location.startswith("/"):
        return location
    if location.startswith("file:"):
        path = location[len("file:"):]
        return path[2:] if path.startswith("///") else path
    try:
        storage_for(location)
    except StorageError as error:
        raise InvalidArgument(f"{what} is at {location}: {error}") from None
    return location


def listed_sums(files: list[DataFile]) -> dict[str, str]:
    """numFiles and totalSize of a listing, as Hive's parameters."""
    return {"numFiles": str(len(files)), "totalSize": str(sum(f.size for f in files))}


def external_partition(table: Table, rel: str, location: str | None = None,
                       inside: list[DataFile] | None = None) -> Partition:
    """The partition of external `table` named `rel` in its directory (`rel` under the table's, unless a
    catalog placed it at `location`; "" while a catalog has not said where, which no read accepts), with
    its files counted and its rows unknown (numRows 0, no accuracy flag) until ANALYZE, as Hive leaves
    loaded files. `inside`: its files, when a listing of the table's found them already."""
    location = join(table.location, rel) if location is None else location
    inside = list_data_files(location) if inside is None else inside
    return Partition(table.dbName, table.tableName, [v for _, v in parse_part_name(rel)], location=location,
                     parameters={**listed_sums(inside), "numRows": "0", "rawDataSize": "0"})


def follow_partitions(metastore: Metastore, table: Table, names: list[str], locations: dict[str, str]) -> None:
    """The lab's partitions of a catalog's table (Spark's, an HMS's) made the catalog's `names`: added ones
    are registered, dropped ones are dropped with their statistics (the files are the catalog's), and each
    is where `locations` says the catalog keeps it; a partition it did not place is registered without a
    location until it is fetched (a read refuses it, never reads it as empty). Listed first, written in one
    commit after."""
    have = {p.partName: p.location for p in metastore.catalog.get_partitions(table.dbName, table.tableName)}
    dropped = sorted(set(have) - set(names))
    added = sorted(set(names) - set(have))
    change = FollowPartitions(table, tuple(external_partition(table, name, locations.get(name, "")) for name in added),
                              tuple(dropped), moved_partitions(metastore, table, {
                                  name: location for name, location in locations.items() if name in have}))
    if change.follow_up() is not None:
        metastore.apply([change])
        log.info("%s: followed its catalog's partitions: %d added, %d dropped, %d moved", table.qualified_name,
                 len(change.added), len(change.dropped), len(change.moved))


def moved_partitions(metastore: Metastore, table: Table, locations: dict[str, str]) -> tuple[MovedPartition, ...]:
    """The partitions among `locations` that are elsewhere now, each with its new directory's files counted
    (listed here: nothing is written)."""
    current = {p.partName: p.location for p in metastore.catalog.get_partitions(table.dbName, table.tableName, list(locations))}
    moved = []
    for name, location in locations.items():
        if name in current and (not current[name] or normalized(current[name]) != normalized(location)):
            inside = list_data_files(location)
            moved.append(MovedPartition(name, location, len(inside), sum(f.size for f in inside)))
    return tuple(moved)
