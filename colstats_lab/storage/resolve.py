"""Which storage reads a location: the file system of its scheme, or, for an object store, Spark's listing
where the lab in whose call it runs allows it (`colstats.storage.listing`). The setting is each Lab's: a Lab
enters its `Listing` around its own calls (`listed_by`), so two labs in one process each list as they were
told, and a call made outside any lab lists through the store's own client."""
from __future__ import annotations

import contextvars
import functools
import inspect
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from ..errors import StorageError
from .filesystems import FsspecStorage, LocalStorage, Storage
from .locations import scheme_of
from .spark_listing import SparkListing


class ListingMode(StrEnum):
    """How object stores are listed (colstats.storage.listing)."""
    AUTO = "auto"
    STORE = "store"
    SPARK = "spark"


LISTING_MODES = tuple(ListingMode)
_OBJECT_STORE_ALIASES = {"s3a": "s3", "s3n": "s3"}  # Hadoop's names for S3: one bucket, one s3fs
_SPARK_LISTED = {"s3", "gs", "abfs", "abfss", "wasb", "wasbs", "hdfs"}
_LOCAL = LocalStorage()
_BY_PROTOCOL: dict[str, FsspecStorage] = {}  # a client a protocol: they hold no lab's setting


@dataclass(frozen=True)
class Listing:
    """How object stores are listed: through the store's own client ("store"), through the Spark session
    `spark()` gives ("spark"), or through Spark where this process has no credentials for the store ("auto")."""

    mode: ListingMode = ListingMode.STORE
    spark: Callable[[], Any] | None = None

    def __post_init__(self) -> None:
        _listing_mode(self.mode)

    @classmethod
    def of(cls, mode: str, spark: Callable[[], Any] | None = None) -> Listing:
        """A listing by the setting's text: StorageError naming the setting for one it does not take."""
        return cls(_listing_mode(mode), spark)

    def through_spark(self, protocol: str) -> bool:
        return self.spark is not None and protocol in _SPARK_LISTED and (
            self.mode == "spark" or (self.mode == "auto" and not _has_credentials(protocol)))


def _listing_mode(mode: str) -> ListingMode:
    if mode not in LISTING_MODES:
        raise StorageError(f"colstats.storage.listing is one of {', '.join(LISTING_MODES)}, not {mode!r}")
    return ListingMode(mode)


# a frozen dataclass: one default object shared by every context is safe
_listing: contextvars.ContextVar[Listing] = contextvars.ContextVar("colstats_listing", default=Listing())  # noqa: B039


@contextmanager
def listing_of_this_call(listing: Listing) -> Iterator[None]:
    """Object stores are listed as `listing` says while the block runs (in this thread or task)."""
    token = _listing.set(listing)
    try:
        yield
    finally:
        _listing.reset(token)


def in_this_context(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function`, to run on another thread with this call's listing (a new thread starts with none)."""
    return functools.partial(contextvars.copy_context().run, function)


Owner = TypeVar("Owner", bound=type)


def listed_by(listing_of: Callable[[Any], Listing]) -> Callable[[Owner], Owner]:
    """A class decorator: each public method (and `__call__`) of the class runs under the Listing
    `listing_of(self)` gives, so every storage a call reaches is chosen by the setting of the lab it came from."""
    def decorate(cls: Owner) -> Owner:
        for name, member in list(vars(cls).items()):
            if inspect.isfunction(member) and (not name.startswith("_") or name == "__call__"):
                setattr(cls, name, _under_listing(member, listing_of))
        return cls
    return decorate


def _under_listing(method: Callable[..., Any], listing_of: Callable[[Any], Listing]) -> Callable[..., Any]:
    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        with listing_of_this_call(listing_of(self)):
            return method(self, *args, **kwargs)
    return run


def _has_credentials(protocol: str) -> bool:
    """Whether this process can sign requests to the store itself, by the places AWS's clients look first (an
    instance profile is not asked: its lookup waits on a timeout off EC2; set the listing to "store" there).
    Other stores' packages find their own credentials."""
    if protocol != "s3":
        return True
    variables = ("AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI")
    if any(os.environ.get(v) for v in variables):
        return True
    files = (os.environ.get("AWS_SHARED_CREDENTIALS_FILE") or os.path.expanduser("~/.aws/credentials"),
             os.environ.get("AWS_CONFIG_FILE") or os.path.expanduser("~/.aws/config"))
    return any(os.path.exists(f) for f in files)


def storage_for(location: str) -> Storage:
    """The storage of `location` by its scheme; StorageError naming the package a protocol needs when it is not
    installed, or the scheme when no file system knows it. An object store is listed through Spark where the
    listing of this call says so (`Listing`)."""
    scheme = scheme_of(location)
    if not scheme:
        return _LOCAL
    protocol = _OBJECT_STORE_ALIASES.get(scheme, scheme)
    listing = _listing.get()
    if listing.through_spark(protocol):
        assert listing.spark is not None
        return SparkListing(listing.spark)
    storage = _BY_PROTOCOL.get(protocol)
    if storage is None:
        _check_protocol(protocol, location)
        storage = _BY_PROTOCOL.setdefault(protocol, FsspecStorage(protocol))
    return storage


def _check_protocol(protocol: str, location: str) -> None:
    from fsspec.registry import get_filesystem_class, known_implementations

    try:
        get_filesystem_class(protocol)
    except ImportError:
        needed = known_implementations.get(protocol, {}).get("err") or f"a package for {protocol}://"
        raise StorageError(f"cannot read {location}: {needed.rstrip('.')}") from None
    except ValueError:
        raise StorageError(f"cannot read {location}: no file system is known for {protocol}://") from None
