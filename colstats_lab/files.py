"""Data files on disk as Spark sees them, and what tells a changed file from the one seen before."""
from __future__ import annotations

import os
import re
import string
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import unquote

import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrameReader, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

FileState = tuple[str, int, int]  # path, bytes, last modified (ms since the epoch) or the snapshot that added it


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


@dataclass(frozen=True)
class DataFile:
    path: str
    size: int
    modified: float
    added_in: int | None = None  # an Iceberg or Delta file: the snapshot id or log version that added it
    record_count: int | None = None  # rows, where the format's metadata counts them
    content: int = 0  # Iceberg's: 0 rows, 1 position deletes (rows of data files it removes)
    figures: dict[str, ColumnFigures] | None = field(default=None, compare=False)  # the format's, per column

    @property
    def state(self) -> FileState:
        """(path, bytes, last modified in ms, or the snapshot that added a table format's file): what tells a
        changed file from the one seen before."""
        return self.path, self.size, int(self.modified * 1000) if self.added_in is None else self.added_in


def parquet_metadata(data_file: DataFile):
    """The Parquet footer (pyarrow's FileMetaData) of a data file, read once per file state: an ANALYZE reads
    a file's figures and its raw size from it, and a command over an unchanged snapshot reads none again."""
    return metadata_of_state(data_file.state)


@lru_cache(maxsize=8192)
def metadata_of_state(state: FileState):
    """The Parquet footer of the file in `state` (path, bytes, modified), read once."""
    return pq.read_metadata(state[0])


def is_data_file(name: str) -> bool:
    """Spark's rule: files starting with `_` or `.` (markers, checksums) are not data."""
    return not name.startswith(("_", "."))


def list_data_files(directory: str) -> list[DataFile]:
    """Data files under a directory, recursively: a directory's own files by name, then its
    subdirectories' (symbolic links to directories are not followed). One scandir a directory, since a
    table of 100,000 partitions is listed whole to judge its statistics' freshness."""
    return [DataFile(path, stat.st_size, stat.st_mtime) for path, stat in _data_entries(directory, ordered=True)]


def data_file_states(directory: str) -> set[FileState]:
    """The states (`DataFile.state`) of the data files `list_data_files` finds, without a DataFile each or their
    order: what a freshness check compares, 10,000 partitions at a time."""
    return {(path, stat.st_size, int(stat.st_mtime * 1000)) for path, stat in _data_entries(directory, ordered=False)}


def _data_entries(directory: str, ordered: bool) -> list[tuple[str, os.stat_result]]:
    try:
        entries = list(os.scandir(directory))
    except OSError:  # gone, or not a directory
        return []
    if ordered and len(entries) > 1:
        entries.sort(key=_entry_name)
    files, subdirectories = [], []
    for entry in entries:
        if not is_data_file(entry.name):
            continue
        try:
            if entry.is_dir():
                if not entry.is_symlink():
                    subdirectories.append(entry.path)
                continue
            files.append((entry.path, entry.stat()))
        except FileNotFoundError:  # removed by another job while we listed
            continue
    for path in subdirectories:
        files.extend(_data_entries(path, ordered))
    return files


def _entry_name(entry: os.DirEntry) -> str:
    return entry.name


def file_changes(before: set[FileState], now: set[FileState]) -> tuple[int, int, int]:
    """(added, removed, rewritten) files between two listings: a path in both with another size or
    modification time was rewritten."""
    old = {path: state for path, *state in before}
    new = {path: state for path, *state in now}
    rewritten = sum(1 for path in old.keys() & new.keys() if old[path] != new[path])
    return len(new.keys() - old.keys()), len(old.keys() - new.keys()), rewritten


def describe_changes(added: int, removed: int, rewritten: int) -> str:
    return f"files changed since the last analyze ({added} added, {removed} removed, {rewritten} rewritten)"


# what java.net.URI leaves unquoted in a path (Hadoop's Path.toUri, which Spark's `_metadata.file_path` spells)
_URI_PATH_SAFE = frozenset(string.ascii_letters + string.digits + "_-!.~'()*,;:$&+=/@")


def spark_file_uri(path: str) -> str:
    """A local file's path as Spark's `_metadata.file_path` spells it: `file:` and the path with the ASCII
    characters a URI path cannot hold %-quoted (a space as %20, `%` as %25, `#` as %23)."""
    return "file:" + "".join(c if c in _URI_PATH_SAFE or ord(c) > 127 else f"%{ord(c):02X}" for c in path)


def local_file_path(uri: str) -> str:
    """The local path of a `file:` URI as Spark spells one (the inverse of `spark_file_uri`)."""
    return unquote(re.sub(r"^file:(//)?", "", uri))


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
