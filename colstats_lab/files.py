"""Data files as Spark sees them, and what tells a changed file from the one seen before. Listing and reading
them is the storage seam's (`colstats_lab.storage`)."""
from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrameReader, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

FileState = tuple[str, int, int | str]  # path, bytes, and last modified (ms since the epoch), the snapshot that
# added it (Iceberg, Delta) or, on an object store, the ETag


@dataclass(frozen=True)
class ColumnFigures:
    """A column's figures in one file as a table format's metadata keeps them (Iceberg's manifests, Delta's log),
    in the values the lab's statistics keep (days, microseconds, Decimal, text). With `exact`, low and high are
    the column's minimum and maximum; without, they only bound its values (a string bound the format cut,
    Delta's millisecond timestamps widened to every microsecond they stand for): for pruning, never an answer.
    Both None: no bounds (every value NULL when `nulls` is the file's record count)."""

    nulls: int | None
    low: object = None
    high: object = None
    exact: bool = False


VECTOR_MARK = "#deletionVector:"  # in a deletion vector's path: the data file's path before it, the vector's after
# what a DataFile holds: rows, Iceberg's position deletes (rows of data files named by path and position), Delta's
# deletion vectors (tables.deletion_vectors), Iceberg's equality deletes (rows whose columns equal a delete row's)
ROWS, POSITION_DELETES, DELETION_VECTOR, EQUALITY_DELETES = 0, 1, 2, 3


@dataclass(frozen=True)
class DataFile:
    path: str
    size: int
    modified: float
    added_in: int | None = None  # an Iceberg or Delta file: the snapshot id or log version that added it
    record_count: int | None = None  # rows, where the format's metadata counts them
    content: int = 0  # ROWS, POSITION_DELETES, DELETION_VECTOR or EQUALITY_DELETES
    figures: dict[str, ColumnFigures] | None = field(default=None, compare=False)  # the format's, per column
    etag: str | None = None  # an object store's: what changes with the bytes (the modification time is shown only)
    # an Iceberg file's data sequence number: an equality delete applies to the data files of smaller ones
    sequence_number: int | None = None
    equality_ids: tuple[int, ...] = ()  # an equality delete's columns, by field id

    @property
    def state(self) -> FileState:
        """(path, bytes, and the ETag on an object store, the snapshot that added a table format's file, else
        the last modification in ms): what tells a changed file from the one seen before."""
        if self.added_in is not None:
            return self.path, self.size, self.added_in
        return self.path, self.size, self.etag if self.etag is not None else int(self.modified * 1000)


# where a field id sits: in the metadata of a Spark read schema's field (Spark's Parquet reader matches by it), and in
# an Arrow field read from a Parquet file (pyarrow's key)
SPARK_FIELD_ID = "parquet.field.id"
ARROW_FIELD_ID = b"PARQUET:field_id"
# how a table's files name each column, by the lab's name: a field id, or a path of physical names (file_keys_of)
FileKeys = dict[str, int | tuple[str, ...]]
UNTIMED = -1  # a read state's time that is not checked: a table format's file, which is never rewritten in place


def read_state(data_file: DataFile) -> FileState:
    """The state a ranged read of the file checks it against: its state, but a table format's file (whose state
    names the snapshot that added it, not a time) by its path and bytes alone."""
    if data_file.added_in is not None and data_file.etag is None:
        return data_file.path, data_file.size, UNTIMED
    return data_file.state


def is_data_file(name: str) -> bool:
    """Spark's rule: files starting with `_` or `.` (markers, checksums) are not data."""
    return not name.startswith(("_", "."))


def file_changes(before: set[FileState], now: set[FileState]) -> tuple[int, int, int]:
    """(added, removed, rewritten) files between two listings: a path in both with another size or
    modification time was rewritten."""
    old = {path: state for path, *state in before}
    new = {path: state for path, *state in now}
    rewritten = sum(1 for path in old.keys() & new.keys() if old[path] != new[path])
    return len(new.keys() - old.keys()), len(old.keys() - new.keys()), rewritten


def describe_changes(added: int, removed: int, rewritten: int) -> str:
    return f"files changed since the last analyze ({added} added, {removed} removed, {rewritten} rewritten)"


def decoded_uri_path(uri_path: Column) -> Column:
    """A URI path (or part of one, as Spark's `_metadata.file_path`) decoded back to the file system's
    spelling; '+' is legal in a URI path, but url_decode would read it as a space."""
    return F.url_decode(F.regexp_replace(uri_path, r"\+", "%2B"))


def parquet_reader(spark: SparkSession, schema: T.StructType) -> DataFrameReader:
    """Spark's Parquet reader for files of `schema`; with a float or double column, parquet-java's
    dictionary filter is off. That filter compares floating-point values by their bits, so `x = 0` skips
    a row group whose dictionary holds -0.0 although Spark's own `-0.0 = 0` is true: a wrong answer on
    Spark 4.3 (SPARK-26677 once turned the same filter off for a NULL bug). Row groups are still skipped
    by their min/max, and tables without such columns keep the filter."""
    reader = spark.read.schema(schema)
    if _holds_floating_point(schema):
        reader = reader.option("parquet.filter.dictionary.enabled", "false")
    return reader


def _holds_floating_point(data_type: T.DataType) -> bool:
    """A float or double anywhere in the type, nested fields, elements and map values included."""
    if isinstance(data_type, (T.FloatType, T.DoubleType)):
        return True
    if isinstance(data_type, T.StructType):
        return any(_holds_floating_point(f.dataType) for f in data_type.fields)
    if isinstance(data_type, T.ArrayType):
        return _holds_floating_point(data_type.elementType)
    if isinstance(data_type, T.MapType):
        return _holds_floating_point(data_type.keyType) or _holds_floating_point(data_type.valueType)
    return False
