"""The storage seam: every file the lab lists, stats, reads or writes goes through here, by its location's
scheme (`filesystems`), with one location parser (`locations`) and one place that turns a location into
the URI Spark reads (`spark_paths`). Nothing outside it touches `os` for a table's files."""
from __future__ import annotations

import logging
import threading
from collections.abc import Hashable, Iterator, Mapping
from contextlib import contextmanager
from typing import TypeVar

import pyarrow.parquet as pq

from ..caches import BoundedCache
from ..caches import max_bytes as max_cache_bytes
from ..files import DataFile, FileState
from .filesystems import FooterUnavailable, Storage, UnreadableFile, parquet_footer, translated
from .locations import is_inside, is_local, join, local_path, name_of, normalized, parent, relative, same_location, scheme_of
from .resolve import LISTING_MODES, Listing, in_this_context, listed_by, storage_for
from .spark_paths import (
    SPARK_PREFIXES,
    format_prefixes,
    local_file_path,
    parse_prefixes,
    prefixes_for,
    spark_file_uri,
    spark_prefixes,
    spark_uri,
    spark_uris,
)

log = logging.getLogger("colstats_lab.storage")
STORAGE_LISTING = "colstats.storage.listing"

__all__ = ["FooterUnavailable", "SPARK_PREFIXES", "STORAGE_LISTING", "Storage", "data_file_states",
           "files_by_location", "footer_of", "footers_read_meanwhile", "forget_footers", "format_prefixes",
           "in_this_context", "is_inside", "is_local", "join", "list_data_files", "listed_by", "Listing", "LISTING_MODES",
           "local_file_path", "local_path",
           "metadata_of_state", "name_of", "normalized", "parent", "parquet_footer", "parse_prefixes", "prefetch_footers",
           "prefixes_for", "relative", "same_location", "scheme_of", "spark_file_uri", "spark_prefixes", "spark_uri",
           "spark_uris", "states_by_location", "storage_for", "translated", "UnreadableFile"]


def list_data_files(location: str) -> list[DataFile]:
    """Data files under `location`, recursively, as they are now (never a cached listing)."""
    return storage_for(location).data_files(location)


def data_file_states(location: str) -> set[FileState]:
    """The states of the data files under `location` (`DataFile.state`): what a freshness check compares."""
    return storage_for(location).data_file_states(location)


Owner = TypeVar("Owner", bound=Hashable)
FLAT_LISTING_SHARE = 8  # a root's one flat listing replaces its directories' when they are 1 in 8 of its own or more


def files_by_location(locations: Mapping[Owner, str], root: str | None = None,
                      directories_under_root: int | None = None) -> dict[Owner, list[DataFile]]:
    """The data files under each location (empty ones: none), as they are now. On an object store, locations
    under `root` are listed by one flat listing of `root` (one LIST per 1,000 keys, not one a directory) when
    they are at least 1 in FLAT_LISTING_SHARE of the `directories_under_root` it holds (default: all of
    them); each other location is listed on its own. Local directories are listed each: a scandir costs no
    request."""
    out: dict[Owner, list[DataFile]] = {owner: [] for owner in locations}
    rest = {owner: location for owner, location in locations.items() if location}
    if root and not is_local(root) and len(rest) > 1:
        below = {normalized(location): owner for owner, location in rest.items()
                 if normalized(location).startswith(normalized(root).rstrip("/") + "/")}
        if len(below) > 1 and len(below) * FLAT_LISTING_SHARE >= (directories_under_root or len(below)):
            for data_file in list_data_files(root):
                owner_location = _owning(normalized(data_file.path), below, normalized(root))
                if owner_location is not None:
                    out[below[owner_location]].append(data_file)
            rest = {owner: location for owner, location in rest.items() if normalized(location) not in below}
    for owner, location in rest.items():
        out[owner] = list_data_files(location)
    return out


def _owning(path: str, locations: Mapping[str, object], root: str) -> str | None:
    """The location among `locations` that holds `path`, found by walking up its parents to `root`."""
    folder = parent(path)
    while len(folder) > len(root):
        if folder in locations:
            return folder
        folder = parent(folder)
    return None


def states_by_location(locations: Mapping[Owner, str], root: str | None = None,
                       directories_under_root: int | None = None) -> dict[Owner, set[FileState]]:
    """The states of `files_by_location`'s files; local directories' straight from their listings."""
    if all(is_local(location) for location in locations.values() if location):
        return {owner: data_file_states(location) if location else set() for owner, location in locations.items()}
    return {owner: {f.state for f in files}
            for owner, files in files_by_location(locations, root, directories_under_root).items()}


def footer_of(data_file: DataFile) -> pq.FileMetaData:
    """The Parquet footer (pyarrow's FileMetaData) of a data file, read once per file state: an ANALYZE reads
    a file's figures and its raw size from it, and a command over an unchanged snapshot reads none again."""
    return metadata_of_state(data_file.state)


# what a footer holds in memory: 10 times its serialized size measured alone (38 KB for 3.6 KB, 20 columns), about
# 20 times in an ANALYZE of 10,000 files (the process grew by 500 MiB for a budget of 256 at 10)
FOOTER_MEMORY_FACTOR = 20
_footers = BoundedCache("footers", lambda meta: FOOTER_MEMORY_FACTOR * meta.serialized_size)
PREFETCH_BATCH = 1_000  # footers read at once; the batches stop where the cache's budget would be full


def metadata_of_state(state: FileState) -> pq.FileMetaData:
    """The Parquet footer of the file in `state`, read once while the caches' budget keeps it (on an object
    store: a ranged GET or two that name the state's ETag)."""
    footer = _footers.get(state)
    if footer is None:
        footer = storage_for(state[0]).footer(state)
        _footers.put(state, footer)
    return footer


def forget_footers() -> None:
    """Drops every footer read (a benchmark's runs read theirs again, as a new process would)."""
    _footers.clear()


def prefetch_footers(data_files: list[DataFile]) -> None:
    """Reads the footers of the object-store files among `data_files` not read yet, in batches of concurrent
    ranged GETs per store, so that the reads one at a time that follow find them read; no more than the caches'
    budget keeps (footers read ahead and dropped again would be read twice). A local footer costs no round
    trip: none is read ahead. A footer that cannot be read is left to the read that needs it, which names it."""
    missing = list(dict.fromkeys(f.state for f in data_files
                                 if not is_local(f.path) and _footers.get(f.state) is None))
    by_storage: dict[Storage, list[FileState]] = {}
    for state in missing:
        by_storage.setdefault(storage_for(state[0]), []).append(state)
    room = max_cache_bytes()
    for storage, states in by_storage.items():
        for start in range(0, len(states), PREFETCH_BATCH):
            read = storage.footers(states[start:start + PREFETCH_BATCH])
            for state, footer in read.items():
                _footers.put(state, footer)
                room -= FOOTER_MEMORY_FACTOR * footer.serialized_size
            if room < 0:
                return


@contextmanager
def footers_read_meanwhile(data_files: list[DataFile]) -> Iterator[None]:
    """Reads the object-store footers among `data_files` on a thread while the block runs (a Spark job that
    mostly waits for the JVM), and waits for them after it."""
    if all(is_local(f.path) for f in data_files):
        yield
        return
    # read with the listing of the call that asked (a new thread starts with none)
    reader = threading.Thread(target=in_this_context(_prefetch_quietly), args=(data_files,), name="colstats-footers",
                              daemon=True)
    reader.start()
    try:
        yield
    finally:
        reader.join()


def _prefetch_quietly(data_files: list[DataFile]) -> None:
    try:
        prefetch_footers(data_files)
    except Exception as error:  # noqa: BLE001 - the read that needs the footer raises it, naming the file
        log.debug("footers not read ahead: %s", error)
