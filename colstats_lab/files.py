"""Data files on disk as Spark sees them, and what tells a changed file from the one seen before."""
from __future__ import annotations

import os
from dataclasses import dataclass

FileState = tuple[str, int, int]  # path, bytes, last modified (ms since the epoch)


@dataclass(frozen=True)
class DataFile:
    path: str
    size: int
    modified: float

    @property
    def state(self) -> FileState:
        """(path, bytes, last modified in ms): what tells a changed file from the one seen before."""
        return self.path, self.size, int(self.modified * 1000)


def is_data_file(name: str) -> bool:
    """Spark's rule: files starting with `_` or `.` (markers, checksums) are not data."""
    return not name.startswith(("_", "."))


def list_data_files(directory: str) -> list[DataFile]:
    """Data files under a directory, recursively, sorted by path."""
    out = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if is_data_file(d))
        for name in sorted(files):
            if is_data_file(name):
                path = os.path.join(root, name)
                try:
                    stat = os.stat(path)
                except FileNotFoundError:  # removed by another job while we listed
                    continue
                out.append(DataFile(path, stat.st_size, stat.st_mtime))
    return out


def file_changes(before: set[FileState], now: set[FileState]) -> tuple[int, int, int]:
    """(added, removed, rewritten) files between two listings: a path in both with another size or
    modification time was rewritten."""
    old = {path: state for path, *state in before}
    new = {path: state for path, *state in now}
    rewritten = sum(1 for path in old.keys() & new.keys() if old[path] != new[path])
    return len(new.keys() - old.keys()), len(old.keys() - new.keys()), rewritten


def describe_changes(added: int, removed: int, rewritten: int) -> str:
    return f"files changed since the last analyze ({added} added, {removed} removed, {rewritten} rewritten)"
