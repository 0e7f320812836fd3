"""The file systems a table's files live on, behind one small interface chosen by the location's scheme: local
paths through `os` (as fast as before the seam), `s3://`, `s3a://` and `s3n://` through s3fs, and any other
fsspec protocol (`gs://`, `abfs://`, ...) through its package when installed.

On an object store a file's state is (path, size, ETag): `LastModified` has one-second resolution and is the
upload time, so a same-size rewrite within a second keeps it; the ETag changes with the bytes and stays for
an identical rewrite. A listing made to prove freshness is always a new one (s3fs keeps listings in a cache
that `find` bypasses), one flat LIST per 1,000 keys of the prefix, and no HEAD of any object.
"""
from __future__ import annotations

import os
import shutil
import struct
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import StorageError, one_line
from ..files import UNTIMED, DataFile, FileState, is_data_file
from .locations import is_local, local_path

_FOOTER_GUESS = 64 * 1024  # one ranged GET holds the footer of nearly every file; a larger one takes a second
FOOTER_READERS = 32  # ranged GETs in flight at once


class FooterUnavailable(StorageError, OSError):
    """A footer this storage does not read (listed through Spark, without credentials): whoever wanted it has
    Spark's scan compute the figures instead, as for any footer that cannot be read (an OSError to them)."""


class UnreadableFile(StorageError, OSError):
    """A file whose Parquet footer cannot be read: not Parquet, cut short, or removed since it was listed. Named;
    an OSError too, so a caller that has Spark read what a footer cannot serve still does."""


def parquet_footer(source: Any, path: str) -> pq.FileMetaData:
    """pyarrow's footer of `source` (the file's path, or a buffer holding its tail), the file at `path`; raises
    UnreadableFile naming it, never pyarrow's error."""
    try:
        return pq.read_metadata(source)
    except FileNotFoundError:
        raise UnreadableFile(f"{path} is no longer there: removed since it was listed; run the command again") \
            from None
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise UnreadableFile(f"{path} is not a readable Parquet file: {one_line(str(exc), 160)}") from None


class Storage(ABC):
    """How the lab lists, stats, reads and writes files at one kind of location."""

    proves_by = "size and modification time"  # what a file state tells a changed file by, as views say it
    reads_footers = True

    @abstractmethod
    def data_files(self, location: str, hidden_folders: bool = False) -> list[DataFile]:
        """Data files under `location`, recursively, by Spark's rule (no name under it starting with `_` or
        `.`; with `hidden_folders`, the file's own name only: a writer's output before it is laid out);
        [] when nothing is there."""

    def data_file_states(self, location: str) -> set[FileState]:
        """The states of `data_files(location)`: what a freshness check compares."""
        return {f.state for f in self.data_files(location)}

    @abstractmethod
    def footer(self, state: FileState) -> pq.FileMetaData:
        """The Parquet footer of the file in `state`; raises StorageError when the file is no longer in it."""

    @abstractmethod
    def read_range(self, state: FileState, start: int, end: int) -> bytes:
        """Bytes [start, end) of the file in `state` (a dictionary page, a footer's raw bytes); raises StorageError
        when the file is no longer in that state (on S3 the GET names the state's ETag, If-Match)."""

    def open_input(self, location: str) -> Any:
        """A seekable binary file of the file at `location`, for pyarrow to read row groups of."""
        raise StorageError(f"{location}: this storage reads no file in parts")

    @abstractmethod
    def exists(self, location: str) -> bool:
        """Whether a file is at `location` now (on an object store: one HEAD, never a cached listing)."""

    def footers(self, states: list[FileState]) -> dict[FileState, pq.FileMetaData]:
        """The footers of the files in `states` that can be read (one at a time here; at once on an object store);
        a file that cannot be read is left out, for the read that needs it to name."""
        out = {}
        for state in states:
            try:
                out[state] = self.footer(state)
            except (OSError, ValueError, StorageError):
                continue
        return out

    @abstractmethod
    def child_names(self, location: str) -> list[str]:
        """The names directly under `location`, sorted; [] when nothing is there."""

    @abstractmethod
    def is_dir(self, location: str) -> bool:
        """Whether anything lies under `location` as a directory (on an object store: under its prefix)."""

    @abstractmethod
    def makedirs(self, location: str) -> None:
        """Makes `location` a directory (nothing to make on an object store, whose prefixes need no object)."""

    @abstractmethod
    def remove(self, location: str) -> None:
        """Removes the file at `location`, or the directory and everything under it; nothing when it is not there."""

    @abstractmethod
    def move(self, source: str, target: str) -> None:
        """Moves the file or directory `source` to `target` (a rename locally; on an object store a server-side
        copy of each object, then its removal: not atomic, which the write IDs that hide an unfinished write
        allow)."""

    @abstractmethod
    def read_bytes(self, location: str) -> bytes:
        """The whole file at `location`."""

    @abstractmethod
    def write_bytes(self, location: str, data: bytes) -> None:
        """Writes the file at `location` whole: a reader sees the old file or the new one, never a part."""


class LocalStorage(Storage):
    """The machine's own file system (and anything mounted into it)."""

    def data_files(self, location: str, hidden_folders: bool = False) -> list[DataFile]:
        return [DataFile(path, stat.st_size, stat.st_mtime)
                for path, stat in _local_entries(location, ordered=True, hidden_folders=hidden_folders)]

    def data_file_states(self, location: str) -> set[FileState]:
        # without a DataFile each or their order: a freshness check compares 10,000 partitions at a time
        return {(path, stat.st_size, int(stat.st_mtime * 1000)) for path, stat in _local_entries(location, ordered=False)}

    def footer(self, state: FileState) -> pq.FileMetaData:
        return parquet_footer(state[0], state[0])

    def open_input(self, location: str) -> Any:
        try:
            return open(location, "rb")
        except FileNotFoundError:
            raise StorageError(f"{location} is gone since it was listed: run the command again") from None

    def read_range(self, state: FileState, start: int, end: int) -> bytes:
        path = state[0]
        try:
            with open(path, "rb") as handle:
                now = os.fstat(handle.fileno())
                if now.st_size != state[1] or (state[2] != UNTIMED and int(now.st_mtime * 1000) != state[2]):
                    raise StorageError(f"{path} changed since it was listed: run the command again")
                handle.seek(start)
                return handle.read(end - start)
        except FileNotFoundError:
            raise StorageError(f"{path} is gone since it was listed: run the command again") from None

    def exists(self, location: str) -> bool:
        return os.path.exists(location)

    def child_names(self, location: str) -> list[str]:
        try:
            return sorted(os.listdir(location))
        except (FileNotFoundError, NotADirectoryError):
            return []

    def is_dir(self, location: str) -> bool:
        return os.path.isdir(location)

    def makedirs(self, location: str) -> None:
        os.makedirs(location, exist_ok=True)

    def remove(self, location: str) -> None:
        if os.path.isdir(location) and not os.path.islink(location):
            shutil.rmtree(location, ignore_errors=True)
            return
        try:
            os.remove(location)
        except FileNotFoundError:
            pass

    def move(self, source: str, target: str) -> None:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.rename(source, target)

    def read_bytes(self, location: str) -> bytes:
        with open(location, "rb") as handle:
            return handle.read()

    def write_bytes(self, location: str, data: bytes) -> None:
        temporary = f"{location}.{os.getpid()}.tmp"
        with open(temporary, "wb") as out:
            out.write(data)
        os.replace(temporary, location)


def _local_entries(directory: str, ordered: bool, hidden_folders: bool = False) -> list[tuple[str, os.stat_result]]:
    """(path, stat) of the data files under `directory`: a directory's own files by name, then its
    subdirectories' (symbolic links to directories are not followed). One scandir a directory, since a
    table of 100,000 partitions is listed whole to judge its statistics' freshness."""
    try:
        entries = list(os.scandir(directory))
    except OSError:  # gone, or not a directory
        return []
    if ordered and len(entries) > 1:
        entries.sort(key=_entry_name)
    files, subdirectories = [], []
    for entry in entries:
        try:
            if not is_data_file(entry.name) and not (hidden_folders and entry.is_dir()):
                continue
            if entry.is_dir():
                if not entry.is_symlink():
                    subdirectories.append(entry.path)
                continue
            files.append((entry.path, entry.stat()))
        except FileNotFoundError:  # removed by another job while we listed
            continue
    for path in subdirectories:
        files.extend(_local_entries(path, ordered, hidden_folders))
    return files


def _entry_name(entry: os.DirEntry) -> str:
    return entry.name


class FsspecStorage(Storage):
    """A file system fsspec knows by its protocol; S3 through s3fs, with each object's ETag in the listing
    and footers read by ranged GETs that name the ETag listed (If-Match), so no footer mixes two states."""

    def __init__(self, protocol: str):
        self.protocol = protocol
        self.proves_by = "ETag" if protocol == "s3" else "size and modification time"

    @property
    def fs(self) -> Any:
        import fsspec

        # fsspec keeps one instance per protocol and options; credentials and endpoint come from the
        # standard environment (AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL, ...), read when it is made
        return fsspec.filesystem(self.protocol)

    def data_files(self, location: str, hidden_folders: bool = False) -> list[DataFile]:
        scheme, root = _split(location)
        with translated(location):
            found = self.fs.find(root, detail=True)
        out = []
        for name, info in sorted(found.items()):
            inside = name[len(root):].strip("/") if name.startswith(root) else name
            checked = inside.split("/")[-1:] if hidden_folders else inside.split("/")
            if info.get("type") == "directory" or not inside or not all(map(is_data_file, checked)):
                continue
            out.append(DataFile(f"{scheme}://{name}", int(info.get("size") or 0), _modified(info), etag=_etag(info)))
        return out

    def footer(self, state: FileState) -> pq.FileMetaData:
        path, size, token = state
        if size < 12:
            raise StorageError(f"{path} is not a Parquet file: {size} bytes")
        etag = token if isinstance(token, str) else None
        tail = self._range(path, max(0, size - _FOOTER_GUESS), size, etag)
        if tail[-4:] != b"PAR1":
            raise StorageError(f"{path} is not a Parquet file: it does not end in PAR1")
        length = struct.unpack("<I", tail[-8:-4])[0]
        if length + 8 > len(tail):
            tail = self._range(path, size - length - 8, size - len(tail), etag) + tail
        return parquet_footer(pa.BufferReader(tail[-(length + 8):]), path)

    def footers(self, states: list[FileState]) -> dict[FileState, pq.FileMetaData]:
        if self.protocol != "s3" or len(states) < 2:
            return super().footers(states)
        from fsspec.asyn import sync

        # one batch of ranged GETs on s3fs's own event loop: a request's signing and parsing is the client's CPU,
        # so threads each waiting on that loop read no faster than one at a time (900 footers: 1.5 s; at once 0.9 s)
        tails = sync(self.fs.loop, _s3_tails, self.fs, states, FOOTER_READERS)
        out = {}
        for state, tail in zip(states, tails, strict=True):
            if isinstance(tail, bytes) and tail[-4:] == b"PAR1":
                length = struct.unpack("<I", tail[-8:-4])[0]
                if length + 8 <= len(tail):
                    try:
                        out[state] = parquet_footer(pa.BufferReader(tail[-(length + 8):]), state[0])
                    except UnreadableFile:  # left for the read that needs it to name
                        continue
        return out

    def open_input(self, location: str) -> Any:
        _, key = _split(location)
        with translated(location):
            return self.fs.open(key, "rb")

    def read_range(self, state: FileState, start: int, end: int) -> bytes:
        path, _, token = state
        return self._range(path, start, end, token if isinstance(token, str) else None)

    def _range(self, path: str, start: int, end: int, etag: str | None) -> bytes:
        """Bytes [start, end) of the object at `path`, which must still have `etag` (S3: If-Match)."""
        _, key = _split(path)
        with translated(path):
            if self.protocol != "s3" or etag is None:
                return self.fs.cat_file(key, start=start, end=end)
            from fsspec.asyn import sync

            return sync(self.fs.loop, _s3_get_range, self.fs, key, start, end, etag)

    def exists(self, location: str) -> bool:
        _, key = _split(location)
        with translated(location):
            try:
                self.fs.info(key, refresh=True)
            except FileNotFoundError:
                return False
            return True

    def child_names(self, location: str) -> list[str]:
        _, root = _split(location)
        with translated(location):
            try:
                return sorted(entry.rstrip("/").rsplit("/", 1)[-1] for entry in self.fs.ls(root, detail=False,
                                                                                          refresh=True))
            except FileNotFoundError:
                return []

    def is_dir(self, location: str) -> bool:
        return bool(self.child_names(location))

    def makedirs(self, location: str) -> None:
        if self.protocol != "s3":  # an object store's prefix is made by the first object under it
            _, root = _split(location)
            with translated(location):
                self.fs.makedirs(root, exist_ok=True)

    def remove(self, location: str) -> None:
        _, root = _split(location)
        with translated(location):
            try:
                self.fs.rm(root, recursive=True)
            except FileNotFoundError:
                pass

    def move(self, source: str, target: str) -> None:
        _, from_key = _split(source)
        _, to_key = _split(target)
        with translated(source):
            self.fs.mv(from_key, to_key, recursive=True)

    def read_bytes(self, location: str) -> bytes:
        _, key = _split(location)
        with translated(location):
            return self.fs.cat_file(key)

    def write_bytes(self, location: str, data: bytes) -> None:
        _, key = _split(location)
        with translated(location):  # one PUT: an object appears whole
            self.fs.pipe_file(key, data)


async def _s3_tails(fs, states: list[FileState], readers: int) -> list:
    """The last _FOOTER_GUESS bytes of each file in `states` (If-Match its ETag), `readers` at a time; an
    exception in place of a file that could not be read."""
    import asyncio

    gate = asyncio.Semaphore(readers)

    async def tail(state: FileState) -> bytes:
        path, size, token = state
        async with gate:
            return await _s3_get_range(fs, _split(path)[1], max(0, size - _FOOTER_GUESS), size,
                                       token if isinstance(token, str) else None)
    return await asyncio.gather(*[tail(state) for state in states], return_exceptions=True)


async def _s3_get_range(fs, key: str, start: int, end: int, etag: str | None) -> bytes:
    bucket, name, _ = fs.split_path(key)
    condition = {"IfMatch": etag} if etag else {}
    response = await fs._call_s3("get_object", Bucket=bucket, Key=name, Range=f"bytes={start}-{end - 1}", **condition)
    try:
        return await response["Body"].read()
    finally:
        response["Body"].close()


def _split(location: str) -> tuple[str, str]:
    """(scheme, the path fsspec takes: `bucket/key`) of a URI."""
    scheme, _, rest = location.partition("://")
    return scheme.lower(), rest.strip("/")


def _etag(info: dict) -> str | None:
    etag = info.get("ETag") or info.get("etag")
    return str(etag) if etag else None


def _modified(info: dict) -> float:
    modified = info.get("LastModified") or info.get("mtime") or info.get("updated")
    if modified is None:
        return 0.0
    if hasattr(modified, "timestamp"):
        return float(modified.timestamp())
    try:
        return float(modified)
    except (TypeError, ValueError):
        return 0.0


@contextmanager
def translated(location: str) -> Iterator[None]:
    """The file system's errors as one StorageError naming `location`: a missing bucket, denied or missing
    credentials, an unreachable endpoint, an object changed since it was listed."""
    try:
        yield
    except StorageError:
        raise
    except PermissionError as exc:
        raise StorageError(f"access to {location} is denied: check the credentials (AWS_ACCESS_KEY_ID, "
                           f"AWS_SECRET_ACCESS_KEY or AWS_PROFILE) ({_first_line(exc)})") from None
    except FileNotFoundError as exc:
        if "bucket" in str(exc).lower():
            raise StorageError(f"{location}: no such bucket") from None
        raise StorageError(f"{location} is not there (another job removed it?)") from None
    except Exception as exc:  # noqa: BLE001 - botocore's and aiohttp's classes are not ours to import
        name = type(exc).__name__
        text = str(exc)
        if "PreconditionFailed" in text or "pre-condition" in text or " 412" in text:  # If-Match: another ETag
            raise StorageError(f"{location} changed since it was listed: run the command again") from None
        if "Credentials" in name:
            raise StorageError(f"no credentials for {location}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                               "or AWS_PROFILE") from None
        if "Connect" in name or "Connection" in text or "connect" in text:
            endpoint = os.environ.get("AWS_ENDPOINT_URL") or "the store's endpoint"
            raise StorageError(f"cannot reach {endpoint} for {location}: {_first_line(exc)}") from None
        if isinstance(exc, OSError) and "NoSuchBucket" in text:
            raise StorageError(f"{location}: no such bucket") from None
        raise


def _first_line(exc: BaseException) -> str:
    return next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)


def location_path(location: str) -> str:
    """A location as the storage takes it: a local path absolute, a URI as it is."""
    return local_path(location) if is_local(location) else location
