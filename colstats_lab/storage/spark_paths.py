"""The one place a location becomes the URI Spark reads, and Spark's spelling of a file's path turns back.

Spark reads a location through its own file systems' names: `s3://` and `s3n://` become `s3a://` (Hadoop's
S3A connector), unless `colstats.storage.spark_prefixes` maps a prefix to another one (a cluster that
mounts the bucket, or a test whose Spark reads it through a FUSE mount): `s3://lake/=file:///mnt/lake/`,
pairs separated by commas. The lab lists and proves freshness through the location; Spark reads the
mapped URI; both name the same bytes. The mapping is a setting of the Spark session, so every read of it
(Spark Connect's too) sees the one the lab was given.
"""
from __future__ import annotations

import re
import string
from functools import lru_cache
from urllib.parse import unquote

from ..errors import StorageError
from .locations import is_local, local_path, scheme_of

SPARK_PREFIXES = "colstats.storage.spark_prefixes"
_SPARK_SCHEMES = {"s3": "s3a", "s3n": "s3a"}  # Hadoop's S3A reads what S3's other names name
_SAME_STORE = {"s3a": "s3", "s3n": "s3"}

# what java.net.URI leaves unquoted in a path (Hadoop's Path.toUri, which Spark's `_metadata.file_path` spells)
_URI_PATH_SAFE = frozenset(string.ascii_letters + string.digits + "_-!.~'()*,;:$&+=/@")


def parse_prefixes(value: str | dict | None) -> dict[str, str]:
    """`colstats.storage.spark_prefixes` as {location prefix: Spark's prefix}, from `a=b,c=d` or a dict;
    StorageError naming a pair it cannot take."""
    if not value:
        return {}
    pairs = value.items() if isinstance(value, dict) else (_pair(text) for text in str(value).split(",") if text.strip())
    out = {}
    for source, target in pairs:
        source, target = str(source).strip(), str(target).strip()
        if not source or not target or is_local(source):
            raise StorageError(f"{SPARK_PREFIXES} maps a store's prefix to the one Spark reads (s3://lake/=file:///mnt/"
                               f"lake/), not {source!r} to {target!r}")
        out[source] = target
    return out


def _pair(text: str) -> tuple[str, str]:
    source, sign, target = text.partition("=")
    if not sign:
        raise StorageError(f"{SPARK_PREFIXES} takes prefix=prefix pairs separated by commas, not {text.strip()!r}")
    return source, target


def format_prefixes(prefixes: dict[str, str]) -> str:
    return ",".join(f"{source}={target}" for source, target in prefixes.items())


def spark_prefixes(spark) -> dict[str, str]:
    """The mapping the Spark session holds (one conf read)."""
    return _parsed(spark.conf.get(SPARK_PREFIXES, "") or "")


@lru_cache(maxsize=64)
def _parsed(value: str) -> dict[str, str]:
    return parse_prefixes(value)


def prefixes_for(spark, locations: list[str]) -> dict[str, str]:
    """The session's mapping when a location is not local; {} (and no conf read, a round trip over Spark
    Connect) when every one is."""
    return {} if all(is_local(location) for location in locations) else spark_prefixes(spark)


def spark_uris(spark, locations: list[str]) -> list[str]:
    """What Spark reads for each location, with the session's mapping."""
    prefixes = prefixes_for(spark, locations)
    return [spark_uri(location, prefixes) for location in locations]


def _store_form(location: str) -> str:
    """`location` with S3's other schemes spelled `s3`, so that a prefix matches whichever name a catalog used."""
    scheme = scheme_of(location)
    if scheme in _SAME_STORE:
        return _SAME_STORE[scheme] + location[len(scheme):]
    return location


def spark_uri(location: str, prefixes: dict[str, str]) -> str:
    """The URI (or local path) Spark reads for `location`: a local path as it is, a mapped prefix replaced,
    else S3's schemes as `s3a://`. A `file:` result is given as its local path."""
    if is_local(location):
        return location
    store_form = _store_form(location)
    for source in sorted(prefixes, key=len, reverse=True):
        source_form = _store_form(source)
        if store_form == source_form.rstrip("/") or store_form.startswith(source_form.rstrip("/") + "/"):
            rest = store_form[len(source_form.rstrip("/")):].lstrip("/")
            target = prefixes[source].rstrip("/")
            mapped = f"{target}/{rest}" if rest else target
            return local_path(mapped) if is_local(mapped) else mapped
    scheme = scheme_of(location)
    return _SPARK_SCHEMES.get(scheme, scheme) + location[len(scheme):]


def spark_file_uri(location: str, prefixes: dict[str, str] | None = None) -> str:
    """A file's location as Spark's `_metadata.file_path` spells it: for a local file, `file:` and the path
    with the ASCII characters a URI path cannot hold %-quoted (a space as %20, `%` as %25, `#` as %23); a
    URI the same way after its authority."""
    read = spark_uri(location, prefixes or {})
    if is_local(read):
        return "file:" + _quoted(read)
    scheme, _, rest = read.partition("://")
    authority, slash, path = rest.partition("/")
    return f"{scheme}://{authority}{slash}{_quoted(path)}"


def _quoted(path: str) -> str:
    return "".join(c if c in _URI_PATH_SAFE or ord(c) > 127 else f"%{ord(c):02X}" for c in path)


def local_file_path(uri: str) -> str:
    """The local path of a `file:` URI as Spark spells one (the inverse of `spark_file_uri` for local files)."""
    return unquote(re.sub(r"^file:(//)?", "", uri))
