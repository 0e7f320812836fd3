"""A table's location as text: a local path, or a URI of a file system named by its scheme (`s3://bucket/key`).

Path arithmetic on a location goes through here, because `os.path` takes `s3://lake` for a relative path
and `normpath` folds its `//`. A `file:` URI is its local path, never URI-decoded: pyiceberg names a
partition's folder `ds=50%25` for the value `50%`, and `ds=50%25` is that folder's name on disk.
"""
from __future__ import annotations

import os
import posixpath
import re

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def scheme_of(location: str) -> str:
    """The scheme of a URI (`s3`, `s3a`, `gs`, ...); "" for a local path or a `file:` URI."""
    match = _SCHEME.match(location)
    if match is None or match.group(1).lower() == "file":
        return ""
    return match.group(1).lower()


def is_local(location: str) -> bool:
    return scheme_of(location) == ""


def local_path(location: str) -> str:
    """A `file:` URI (`file:///x`, `file:/x`) or a path as the absolute local path it names."""
    if location.startswith("file:"):
        path = location[len("file:"):]
        location = path[2:] if path.startswith("///") else path
    return os.path.abspath(location)


def _parts(location: str) -> tuple[str, str]:
    """(`scheme://`, the rest) of a URI, or ("", path) of a local one."""
    match = _SCHEME.match(location)
    if match is None:
        return "", location
    return location[:match.end()], location[match.end():]


def normalized(location: str) -> str:
    """One spelling per location: a local path absolute and normalized; a URI with its scheme in lower case,
    no `.`/`..` or doubled slashes in its path, and no trailing slash."""
    if is_local(location):
        return local_path(location)
    prefix, rest = _parts(location)
    rest = posixpath.normpath(rest) if rest else rest
    return prefix.lower() + ("" if rest == "." else rest.strip("/"))


def join(location: str, *names: str) -> str:
    """`location`/`name`/... (a local path through os.path)."""
    if is_local(location):
        return os.path.join(location, *names)
    return "/".join([location.rstrip("/"), *(name.strip("/") for name in names)])


def parent(location: str) -> str:
    """The directory holding `location` (a URI keeps its bucket: the parent of `s3://b` is itself)."""
    if is_local(location):
        return os.path.dirname(location)
    prefix, rest = _parts(location.rstrip("/"))
    head = rest.rsplit("/", 1)[0] if "/" in rest else rest
    return prefix + head


def name_of(location: str) -> str:
    """The last part of a location's path."""
    return location.rstrip("/").rsplit("/", 1)[-1] if not is_local(location) else os.path.basename(location)


def relative(location: str, start: str) -> str:
    """`location` relative to `start` ("." for itself); `location` must lie under `start`."""
    if is_local(location):
        return os.path.relpath(location, start)
    full, root = normalized(location), normalized(start)
    if full == root:
        return "."
    if not full.startswith(root + "/"):
        raise ValueError(f"{location} is not under {start}")
    return full[len(root) + 1:]


def is_inside(location: str, folder: str) -> bool:
    """Whether `location` lies strictly inside `folder` (after normalizing both: `..` cannot climb out)."""
    full, root = normalized(location), normalized(folder).rstrip("/")
    return full != root and full.startswith(root + "/")


def same_location(first: str, second: str) -> bool:
    return normalized(first) == normalized(second)
