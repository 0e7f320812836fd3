"""Reading a snapshot's files as one Spark DataFrame, each kind of layout its way (`kinds` picks one)."""
from __future__ import annotations

import logging
import operator
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import reduce

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..coltypes import parse_type
from ..column_statistics.model import leaf_name
from ..errors import QueryError, StorageError
from ..file_columns import nanos_columns
from ..files import (
    EQUALITY_DELETES,
    POSITION_DELETES,
    SPARK_FIELD_ID,
    UNTIMED,
    DataFile,
    FileKeys,
    decoded_uri_path,
    parquet_reader,
    read_state,
)
from ..metastore import Partition, Table
from ..metastore.repositories.snapshot_files import file_keys_of
from ..quoting import column_ref
from ..storage import join, normalized, parent, prefixes_for, spark_file_uri, spark_uri, spark_uris, storage_for
from .deletion_vectors import file_vectors, positions_table

log = logging.getLogger("colstats_lab.scan")


@dataclass
class PartitionFiles:
    """One partition's readable directories and files in a snapshot (partition None: unpartitioned)."""

    partition: Partition | None
    dirs: list[str]
    files: list[DataFile]
    deletes: list[DataFile] = field(default_factory=list)  # an Iceberg partition's position-delete files

    @property
    def states(self) -> list:
        """What tells these files from others: the data files' states and the delete files'."""
        return [f.state for f in self.files + self.deletes]

    @property
    def part_name(self) -> str | None:
        return self.partition.partName if self.partition else None

    @property
    def total_size(self) -> int:
        return sum(f.size for f in self.files)


_SIMPLE_TYPES = {
    "tinyint": T.ByteType(), "smallint": T.ShortType(), "int": T.IntegerType(), "bigint": T.LongType(),
    "float": T.FloatType(), "double": T.DoubleType(), "date": T.DateType(), "timestamp": T.TimestampType(),
    "string": T.StringType(), "varchar": T.StringType(), "char": T.StringType(), "binary": T.BinaryType(),
    "boolean": T.BooleanType(),
}


def spark_type(type_name: str) -> T.DataType:
    col_type = parse_type(type_name)
    if col_type.base in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[col_type.base]
    if col_type.base == "decimal":
        return T.DecimalType(*col_type.precision_scale)
    return T.DataType.fromDDL(col_type.spark_ddl())


def spark_schema(table: Table) -> T.StructType:
    """Data columns then partition keys, in Spark types."""
    return T.StructType([T.StructField(c.name, spark_type(c.type)) for c in table.cols + table.partitionKeys])


def file_schema(table: Table, field_ids: FileKeys | None = None) -> T.StructType:
    """The data columns as Spark reads them from the table's files: a nanosecond timestamp as the long it is
    (`table_columns` makes it the table's timestamp), each column by its field id where given, or by its
    physical name (`logical_columns` names it as the table does)."""
    nanos = nanos_columns(table.parameters)
    leaves = _nanos_leaves(table)
    return T.StructType([_with_field_id(c.name, T.LongType() if c.name in nanos else
                                        with_leaf_type(spark_type(c.type), leaves.get(c.name, []), T.LongType()), (c.name,),
                                        field_ids or {}) for c in table.cols])


def _nanos_leaves(table: Table) -> dict[str, list[tuple[str, ...]]]:
    """Per struct column, the paths below it of the nanosecond timestamp leaves its files keep."""
    nanos = nanos_columns(table.parameters)
    out: dict[str, list[tuple[str, ...]]] = {}
    if any("." in name for name in nanos):
        for leaf in table.stats_columns:
            if leaf.is_leaf and leaf.name in nanos:
                out.setdefault(leaf.path[0], []).append(leaf.path[1:])
    return out


def with_leaf_type(data_type: T.DataType, paths: list[tuple[str, ...]], leaf_type: T.DataType) -> T.DataType:
    """`data_type` with the leaves at `paths` (struct field names below the column, matched case-insensitively;
    () the column itself) made `leaf_type`: the files' longs of nanosecond timestamps, or the table's
    timestamps of them."""
    if not paths:
        return data_type
    if () in paths:
        return leaf_type
    assert isinstance(data_type, T.StructType)
    return T.StructType([T.StructField(f.name, with_leaf_type(f.dataType, [p[1:] for p in paths
                                                                            if p[0].lower() == f.name.lower()],
                                                              leaf_type)) for f in data_type.fields])


def _with_field_id(name: str, data_type: T.DataType, path: tuple[str, ...], field_ids: FileKeys) -> T.StructField:
    """A field of the read schema carrying its field id, or named by its physical name, and a struct's fields
    likewise (keyed in `field_ids` by their lab names, `payload.user.id`), so Spark finds each at every depth."""
    if isinstance(data_type, T.StructType):
        data_type = T.StructType([_with_field_id(f.name, f.dataType, path + (f.name,), field_ids) for f in data_type.fields])
    key = field_ids.get(path[0] if len(path) == 1 else leaf_name(path))
    if isinstance(key, tuple):
        return T.StructField(key[-1], data_type)
    return T.StructField(name, data_type, metadata={SPARK_FIELD_ID: key} if key is not None else {})


def located_fields(schema: T.StructType, field_ids: FileKeys) -> dict[str, tuple[T.StructField, T.StructField]]:
    """Each top-level field of `schema` (the table's names) by its lower-case name, with the same field as the
    files name it: by field id or physical name at every depth (`_with_field_id`, fields in the same order), for
    readers that find columns in a file themselves; {} where the files name columns as the table does."""
    if not field_ids:
        return {}
    return {f.name.lower(): (f, _with_field_id(f.name, f.dataType, (f.name.lower(),), field_ids)) for f in schema.fields}


def logical_columns(frame: DataFrame, table: Table, field_ids: FileKeys, kept: list[str]) -> DataFrame:
    """A read by physical names (Delta's name mode) with each column named as the table names it (a struct's
    fields too, by a cast: they are in the table's order), the columns `kept` and `_metadata` (each row's file)
    as they are; a read by field ids or names as it is."""
    if not any(isinstance(key, tuple) for key in field_ids.values()):
        return frame
    renamed = []
    for read_field in file_schema(table).fields:
        key = field_ids.get(read_field.name)
        column = F.col(column_ref(key[-1] if isinstance(key, tuple) else read_field.name))
        renamed.append((column.cast(read_field.dataType) if isinstance(read_field.dataType, T.StructType) else column)
                       .alias(read_field.name))
    return frame.select(*renamed, *[F.col(column_ref(name)) for name in kept], F.col("_metadata"))


def table_columns(table: Table, unpushed_doubles: bool = True) -> list[Column]:
    """The data columns of a frame read with `file_schema`, in the table's types: a nanosecond timestamp
    truncated to its microsecond (floor, as `file_columns.micros_of_nanos` and footers do), and (with
    `unpushed_doubles`) a double or float (a struct's leaf too) read as nanvl(x, x): the same values, but a filter
    on them is evaluated on every row read, never pushed into Parquet's reader, whose row-group skipping answers
    wrong around NaN and -0.0 (footer ranges leave NaN out): measured here, `amount > 214.00` read 109 rows of
    111, `amount = 0.00` none of 17, and `p.v > 3` on a struct's leaf none of 1."""
    nanos, leaves = nanos_columns(table.parameters), _nanos_leaves(table)
    doubles = _double_leaves(table) if unpushed_doubles else {}
    out = []
    for c in table.cols:
        if c.name in nanos:
            out.append(_micros(column_ref(c.name)).alias(c.name))
        elif c.name in leaves or c.name in doubles:  # a struct's leaves replaced in place (a NULL struct stays NULL)
            column = F.col(column_ref(c.name))
            for path in leaves.get(c.name, []):
                column = column.withField(column_ref(*path), _micros(column_ref(c.name, *path)))
            for path in doubles.get(c.name, []):
                column = column.withField(column_ref(*path), _unpushed(F.col(column_ref(c.name, *path))))
            out.append(column.alias(c.name))
        elif parse_type(c.type).base in ("double", "float") and unpushed_doubles:
            out.append(_unpushed(F.col(column_ref(c.name))).alias(c.name))
        else:
            out.append(F.col(column_ref(c.name)))
    return out


def _unpushed(column: Column) -> Column:
    return F.nanvl(column, column)


def _double_leaves(table: Table) -> dict[str, list[tuple[str, ...]]]:
    """Per struct column, the paths below it of its double and float leaves."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for leaf in table.stats_columns:
        if leaf.is_leaf and not leaf.is_element and parse_type(leaf.type).base in ("double", "float"):
            out.setdefault(leaf.path[0], []).append(leaf.path[1:])
    return out


def _converted(table: Table) -> bool:
    """Whether `table_columns` changes any column: nanosecond timestamps, doubles and floats."""
    return bool(nanos_columns(table.parameters)) or bool(_double_leaves(table)) or any(
        parse_type(c.type).base in ("double", "float") for c in table.cols)


def _micros(reference: str) -> Column:
    """Nanoseconds since the epoch as a timestamp truncated to its microsecond (floor)."""
    return F.timestamp_micros(F.expr(f"({reference} - pmod({reference}, 1000)) div 1000"))


FILE_COLUMN = "__colstats_file"
_FAILED_FILE = re.compile(r"reading file (\S+?)\.?(?:\s|$)")


@contextmanager
def changes_named(parts: list[PartitionFiles]) -> Iterator[None]:
    """A read of `parts` Spark could not finish because a file changed under it (rewritten by another job, an
    object overwritten) is said so, naming the file as the lab lists it (`s3://lake/t/part-0.parquet`, where
    Spark names a mounted path): "... changed while it was read: run the command again"."""
    try:
        yield
    except QueryError as error:
        found = _FAILED_FILE.search(str(error)) if "FAILED_READ_FILE" in str(error) else None
        changed = _changed_file(parts, found.group(1)) if found else None
        if changed is not None:
            raise StorageError(f"{changed} changed while it was read: run the command again") from None
        raise


def _changed_file(parts: list[PartitionFiles], spark_path: str) -> str | None:
    """The listed file Spark names by `spark_path` (matched by its name and the folders above it), when its
    state is no longer the one listed; None when it is unchanged or not one of them."""
    tail = spark_path.rstrip("/").split("/")
    for part in parts:
        for data_file in part.files:
            mine = data_file.path.rstrip("/").split("/")
            if mine[-2:] != tail[-2:]:
                continue
            now = {f.path: f.state for f in storage_for(data_file.path).data_files(parent(data_file.path),
                                                                                 hidden_folders=True)}
            listed = read_state(data_file)  # a table format's file by its bytes: its state names a snapshot
            found = now.get(data_file.path)
            if found is None or found[1] != listed[1] or (listed[2] != UNTIMED and found[2] != listed[2]):
                return data_file.path
    return None


def empty_frame(spark: SparkSession, table: Table, with_file: bool = False) -> DataFrame:
    """No rows, in the table's schema (and FILE_COLUMN with `with_file`)."""
    schema = spark_schema(table)
    if with_file:
        schema = T.StructType(schema.fields + [T.StructField(FILE_COLUMN, T.StringType())])
    return spark.createDataFrame([], schema)


def read_hive_layout(spark: SparkSession, table: Table, parts: list[PartitionFiles]) -> DataFrame:
    """A managed or external table's rows: partition values from Spark's partition discovery under the
    table's root, unless list-bucketing sub-directories or partitions placed elsewhere make the paths lie."""
    if any(_in_subdirectory(p) for p in parts):
        return _read_by_partition(spark, table, parts)
    if any(_elsewhere(table, p) for p in parts):
        return _read_by_file(spark, table, parts)
    schema = T.StructType(file_schema(table).fields + [T.StructField(k.name, spark_type(k.type))
                                                       for k in table.partitionKeys])
    read = spark_uris(spark, [table.location] + [f.path for p in parts for f in p.files])
    log.debug("scanning %s: %d file(s), %d bytes in %d partition(s)", table.qualified_name, len(read) - 1,
              sum(p.total_size for p in parts), len(parts))
    frame = parquet_reader(spark, schema).option("basePath", read[0]).parquet(*read[1:])
    names = [f.name for f in schema.fields]
    # Spark puts the keys found in the paths last, in the paths' order, which is the table's: a select that
    # changes nothing would cost a gateway call a column
    if frame.columns == names and not _converted(table):
        return frame
    return frame.select(*table_columns(table), *[F.col(column_ref(k.name)) for k in table.partitionKeys])


def spelled_columns(frame: DataFrame, table: Table) -> DataFrame:
    """`frame` (a read of `table`, columns named as the metastore keeps them) with each column named as the files
    spell it (`userId`, `eventDate`): what a user's DataFrame and a query's result show. Spark resolves names
    without case, so queries over it read the same columns."""
    names = [table.spelled(name) for name in frame.columns]
    return frame if names == frame.columns else frame.toDF(*names)


def _in_subdirectory(part: PartitionFiles) -> bool:
    return any(parent(f.path) not in part.dirs for f in part.files)




def _elsewhere(table: Table, part: PartitionFiles) -> bool:
    """A partition whose directory is not `<table>/<k=v...>`: a catalog placed it (Hive's ALTER PARTITION
    SET LOCATION, or ADD PARTITION ... LOCATION), so its path says nothing of its values."""
    if part.partition is None or table.tableType != "EXTERNAL_TABLE":
        return False
    return normalized(part.partition.location) != normalized(join(table.location, part.partition.partName))


_ROW_FILE_NUMBER, _ROW_INDEX = "__colstats_row_file_number", "__colstats_row_index"


def read_format_snapshot(spark: SparkSession, table: Table, parts: list[PartitionFiles], with_file: bool) -> DataFrame:
    """An Iceberg or Delta table's rows. In a partition with deletes, the rows they name (data file and row
    position) are left out by an anti-join on the file's number among the partitions' files and
    `_metadata.row_index`: Iceberg's position-delete files name the file by its path (looked up as the table's
    metadata spells it), Delta's deletion vectors (decoded here) by the data file they belong to; Iceberg's
    equality deletes by their columns' values (`_less_equality_deletes`).
    The other partitions are read as they are, so a table with one such partition pays for that one only."""
    plain = [p for p in parts if p.files and not p.deletes]
    deleting = [p for p in parts if p.files and p.deletes]
    frames = [_read_by_file(spark, table, plain, with_file)] if plain else []
    if deleting:
        numbers = {f.path: i for i, f in enumerate(f for p in deleting for f in p.files)}
        frame = _read_by_file(spark, table, deleting, with_file, positions=numbers)
        position_files = [d.path for p in deleting for d in p.deletes if d.content == POSITION_DELETES]
        if position_files:
            # a delete names its data file as the table's metadata does (`s3://...`, `file:/...`), which is not how
            # Spark spells the file it reads (`s3a://...`, a mount's path): both are matched by the file's number
            number_of = F.create_map(*[v for path, n in numbers.items() for v in (F.lit(path), F.lit(n))])
            named = F.col("file_path")
            deleted = (spark.read.parquet(*spark_uris(spark, position_files))
                       .select(F.coalesce(F.element_at(number_of, named),
                                          F.element_at(number_of, F.regexp_replace(named, r"^file:(//)?", ""))
                                          ).alias("deleted_file"),
                               F.col("pos").alias("deleted_row")))
            frame = frame.join(deleted, on=(frame[_ROW_FILE_NUMBER] == deleted["deleted_file"]) &
                               (frame[_ROW_INDEX] == deleted["deleted_row"]), how="left_anti")
        vectors = _vectors(deleting)
        if vectors:
            rows = positions_table(vectors, table.location, numbers)
            # a broadcast: the vectors' rows are a file number and a position each (12 bytes), few beside the scan's
            deleted = F.broadcast(spark.createDataFrame(rows)) if rows.num_rows <= BROADCAST_POSITIONS \
                else spark.createDataFrame(rows)
            frame = frame.join(deleted, on=(frame[_ROW_FILE_NUMBER] == deleted["deleted_file"]) &
                               (frame[_ROW_INDEX] == deleted["deleted_row"]), how="left_anti")
        if any(d.content == EQUALITY_DELETES for p in deleting for d in p.deletes):
            frame = _less_equality_deletes(spark, table, deleting, numbers, frame)
        frames.append(frame.drop(_ROW_FILE_NUMBER, _ROW_INDEX))
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame)
    return out


def _less_equality_deletes(spark: SparkSession, table: Table, deleting: list[PartitionFiles], numbers: dict[str, int],
                           frame: DataFrame) -> DataFrame:
    """`frame` (the rows of `deleting`'s data files, each with its file's number in `numbers`) less the rows
    Iceberg's equality deletes remove: a row goes when every column a delete file matches on equals a row of that
    file (NULL equal to NULL), the delete's data sequence number is above the row's file's, and the delete is of
    the row's partition (an unpartitioned delete is listed in every partition, and applies to each). One anti-join
    per set of columns the deletes match on."""
    files = [f for p in deleting for f in p.files]
    row_sequence = _by_number({numbers[f.path]: f.sequence_number or 0 for f in files})
    row_part = _by_number({numbers[f.path]: i for i, p in enumerate(deleting) for f in p.files})
    scope: dict[str, list[int]] = {}
    by_columns: dict[tuple[int, ...], dict[str, DataFile]] = {}
    for index, part in enumerate(deleting):
        for delete in part.deletes:
            if delete.content == EQUALITY_DELETES:
                scope.setdefault(delete.path, []).append(index)
                by_columns.setdefault(delete.equality_ids, {})[delete.path] = delete
    name_of = {key: name for name, key in file_keys_of(table).items() if isinstance(key, int)}
    type_of = {c.name: c.type for c in table.cols + table.partitionKeys}
    for field_ids, deletes in by_columns.items():
        names = [name_of[field_id] for field_id in field_ids]
        schema = T.StructType([T.StructField(name, spark_type(type_of[name]), metadata={SPARK_FIELD_ID: field_id})
                               for name, field_id in zip(names, field_ids, strict=True)])
        prefixes = prefixes_for(spark, list(deletes))
        sequence = _by_file({path: F.lit(d.sequence_number or 0) for path, d in deletes.items()}, prefixes)
        parts = _by_file({path: F.array(*[F.lit(i) for i in scope[path]]) for path in deletes}, prefixes)
        deleted = (parquet_reader(spark, schema).parquet(*[spark_uri(path, prefixes) for path in deletes])
                   .select(*[F.col(column_ref(name)).alias(f"__colstats_equal_{i}") for i, name in enumerate(names)],
                           sequence.alias("__colstats_delete_sequence"), parts.alias("__colstats_delete_parts")))
        matched = [F.col(column_ref(name)).eqNullSafe(deleted[f"__colstats_equal_{i}"]) for i, name in enumerate(names)]
        condition = reduce(operator.and_, matched + [row_sequence < deleted["__colstats_delete_sequence"],
                                                     F.array_contains(deleted["__colstats_delete_parts"], row_part)])
        frame = frame.join(deleted, on=condition, how="left_anti")
    return frame


def _by_number(values: dict[int, int]) -> Column:
    """Each row's value of its file, by the file's number (`_ROW_FILE_NUMBER`)."""
    return F.element_at(F.create_map(*[F.lit(v) for pair in values.items() for v in pair]), F.col(_ROW_FILE_NUMBER))


def _by_file(values: dict[str, Column], prefixes) -> Column:
    """Each row's value of the file it was read from (`_metadata.file_path`), looked up as Spark spells the file, or
    decoded where Spark spells it otherwise than `spark_file_uri`."""
    spelled = F.col("_metadata.file_path")
    decoded = decoded_uri_path(F.regexp_replace(spelled, r"^file:(//)?", ""))
    by_uri = F.create_map(*[v for path, value in values.items()
                            for v in (F.lit(spark_file_uri(normalized(path), prefixes)), value)])
    by_path = F.create_map(*[v for path, value in values.items() for v in (F.lit(normalized(path)), value)])
    return F.coalesce(F.element_at(by_uri, spelled), F.element_at(by_path, decoded))


BROADCAST_POSITIONS = 20_000_000  # deleted rows a broadcast join takes at most (about 240 MB of rows)


def _vectors(parts: list[PartitionFiles]) -> list[tuple[DataFile, DataFile]]:
    """Each Delta deletion vector of the partitions with the data file it applies to."""
    return [pair for part in parts for pair in file_vectors(part.files, part.deletes)]


def read_by_field_ids(spark: SparkSession, table: Table) -> FileKeys:
    """How the table's files name its columns; where by field ids, Spark is set to match Parquet columns by them (a
    setting its scans read when they run): by name, a renamed column reads NULL from older files."""
    field_ids = file_keys_of(table)
    if any(isinstance(key, int) for key in field_ids.values()):
        spark.conf.set("spark.sql.parquet.fieldId.read.enabled", "true")
    return field_ids


def _read_by_file(spark: SparkSession, table: Table, parts: list[PartitionFiles], with_file: bool = False,
                  positions: dict[str, int] | None = None) -> DataFrame:
    """Partitions at locations of their own: the files are read without partition discovery (which would take
    values from the paths, or refuse paths that do not agree), and each row's partition values come from
    the partition its file belongs to, looked up by `_metadata.file_path` as Spark spells it (a lookup a row:
    decoding the path of every row cost 6 s over 10M rows); a path Spark spells otherwise than
    `spark_file_uri` is looked up decoded."""
    field_ids = read_by_field_ids(spark, table)
    data_schema = file_schema(table, field_ids)
    paths = [f.path for p in parts for f in p.files]
    prefixes = prefixes_for(spark, paths)
    files = [spark_uri(path, prefixes) for path in paths]
    spelled = F.col("_metadata.file_path")
    file_column = [spelled.alias(FILE_COLUMN)] if with_file else []
    if positions is not None:  # each row's file, by its number in `positions`, and position in it: what deletes
        # name; the file looked up as Spark spells it, decoded where Spark spells it otherwise than `spark_file_uri`
        number = _by_file({path: F.lit(n) for path, n in positions.items()}, prefixes)
        file_column += [number.alias(_ROW_FILE_NUMBER), F.col("_metadata.row_index").alias(_ROW_INDEX)]
    root = _partition_root(table, parts)
    if root is not None:  # the files sit in `<root>/<partition name>/`: Spark's partition discovery gives the values
        schema = T.StructType(data_schema.fields + [T.StructField(k.name, spark_type(k.type)) for k in table.partitionKeys])
        frame = parquet_reader(spark, schema).option("basePath", spark_uris(spark, [root])[0]).parquet(*files)
        frame = logical_columns(frame, table, field_ids, table.partition_key_names)
        return frame.select(*table_columns(table), *[F.col(column_ref(k.name)) for k in table.partitionKeys], *file_column)
    frame = parquet_reader(spark, data_schema).option("recursiveFileLookup", "true").parquet(*files)
    frame = logical_columns(frame, table, field_ids, [])
    keys = []
    for index, key in enumerate(table.partitionKeys):
        value_of = _by_file({data_file.path: F.lit(part.partition.values[index]) for part in parts
                             if part.partition is not None for data_file in part.files}, prefixes)
        keys.append(value_of.cast(spark_type(key.type)).alias(key.name))
    return frame.select(*table_columns(table), *keys, *file_column)


def _partition_root(table: Table, parts: list[PartitionFiles]) -> str | None:
    """The one directory under which every file of a format's partitioned table sits in `<partition name>/`
    (Delta's layout, and Iceberg's as its writers lay files out by default); None when any file sits
    elsewhere (an Iceberg table's object-store layout, a transform's folder spelled otherwise)."""
    if not table.is_partitioned:
        return None
    roots = set()
    for part in parts:
        if part.partition is None:
            return None
        for data_file in part.files:
            directory = parent(normalized(data_file.path))
            suffix = "/" + part.partition.partName
            if not directory.endswith(suffix):
                return None
            roots.add(directory[: -len(suffix)])
    return roots.pop() if len(roots) == 1 else None


def _read_by_partition(spark: SparkSession, table: Table, parts: list[PartitionFiles]) -> DataFrame:
    """List-bucketing sub-directories (`x=30/`) look like partition directories to Spark's partition
    discovery, so the files are read without it (one scan) and each row's partition values come from
    the partition directories in its file's path (`_metadata.file_path`, a URI, decoded back to Hive's
    escaped names and looked up among the partitions read)."""
    data_schema = file_schema(table)
    files = spark_uris(spark, [f.path for p in parts for f in p.files])
    depth = len(table.partitionKeys)
    segment = F.regexp_extract(F.col("_metadata.file_path"),
                               rf"((?:[^/]+/){{{depth}}})(?:base_[0-9]+|delta_[0-9]+_[0-9]+(?:_[0-9]+)?)/", 1)
    directory = decoded_uri_path(segment)
    frame = parquet_reader(spark, data_schema).parquet(*files)
    keys = []
    for index, key in enumerate(table.partitionKeys):
        pairs = []
        for part in parts:
            if part.files and part.partition is not None:
                pairs += [F.lit(part.partition.partName + "/"), F.lit(part.partition.values[index])]
        keys.append(F.element_at(F.create_map(*pairs), directory).cast(spark_type(key.type)).alias(key.name))
    return frame.select(*table_columns(table), *keys)
