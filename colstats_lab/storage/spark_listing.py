"""An object store listed through Spark, for a notebook with no credentials of its own for the store (a Spark
Connect server or a cluster that has its own access): Spark's `binaryFile` source gives each file's path,
length and modification time without reading its content, over Spark Connect too. Footers are not read (the
one Spark job of an ANALYZE computes minimum, maximum and NULLs), and a file's state is (path, size,
modification time): weaker than an ETag, which every view that judges freshness says."""
from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote

import pyarrow.parquet as pq

from ..errors import StorageError, spark_errors
from ..files import DataFile, FileState, is_data_file
from .filesystems import FooterUnavailable, Storage
from .locations import join
from .spark_paths import spark_file_uri, spark_prefixes, spark_uri

WEAK_PROOF = "size and modification time (listed through Spark: no storage credentials in this process)"


class SparkListing(Storage):
    proves_by = WEAK_PROOF
    reads_footers = False

    def __init__(self, spark: Callable[[], object]):
        self._spark = spark

    def data_files(self, location: str, hidden_folders: bool = False) -> list[DataFile]:
        spark = self._spark()
        prefixes = spark_prefixes(spark)
        read = spark_uri(location, prefixes)
        # binaryFile's path is Hadoop's Path text (not %-quoted); the quoted spelling is looked for too
        roots = [("file:" + read if read.startswith("/") else read).rstrip("/") + "/",
                 spark_file_uri(location, prefixes).rstrip("/") + "/"]
        reader = spark.read.format("binaryFile").option("recursiveFileLookup", "true")  # type: ignore[attr-defined]
        try:
            with spark_errors(f"cannot list {location} through Spark"):
                rows = reader.load(read).select("path", "length", "modificationTime").collect()
        except StorageError:
            raise
        except Exception as error:  # noqa: BLE001 - QueryError: a prefix with nothing under it is no table yet
            if "PATH_NOT_FOUND" in str(error) or "does not exist" in str(error):
                return []
            raise
        out = []
        for path, length, modified in rows:
            inside = (path[len(roots[0]):] if path.startswith(roots[0]) else
                      unquote(path[len(roots[1]):]) if path.startswith(roots[1]) else None)
            if inside is None or not all(map(is_data_file, inside.split("/"))):
                continue
            out.append(DataFile(join(location, inside), int(length), modified.timestamp()))
        return sorted(out, key=lambda f: f.path)

    def footer(self, state: FileState) -> pq.FileMetaData:
        raise FooterUnavailable(f"{state[0]}: footers are not read without storage credentials")

    def footers(self, states: list[FileState]) -> dict[FileState, pq.FileMetaData]:
        return {}

    def read_range(self, state: FileState, start: int, end: int) -> bytes:
        raise FooterUnavailable(f"{state[0]}: files are not read in parts without storage credentials")

    def exists(self, location: str) -> bool:
        return bool(self.data_files(location))

    def child_names(self, location: str) -> list[str]:
        return sorted({f.path[len(location.rstrip("/")) + 1:].split("/", 1)[0] for f in self.data_files(location)})

    def is_dir(self, location: str) -> bool:
        return bool(self.data_files(location))

    def makedirs(self, location: str) -> None:
        return None  # an object store's prefix is made by the first object under it

    def remove(self, location: str) -> None:
        raise StorageError(f"cannot remove {location}: no storage credentials in this process")

    def move(self, source: str, target: str) -> None:
        raise StorageError(f"cannot move {source}: no storage credentials in this process")

    def read_bytes(self, location: str) -> bytes:
        raise StorageError(f"cannot read {location}: no storage credentials in this process")

    def write_bytes(self, location: str, data: bytes) -> None:
        raise StorageError(f"cannot write {location}: no storage credentials in this process")
