"""A session's Spark reads of unchanged snapshots, resolved once.

Spark resolves a read of a snapshot's files by stating every one of them and inferring the partition values from
their paths: 0.04 s for 60 files, 0.34 s for 3,000, before any job runs. A later command over the same files (an
ANALYZE after a skew report, a second ANALYZE for other columns) is given the DataFrame resolved the first time,
as Spark's catalog keeps a table's relation. The key holds every file's state (path, bytes, modified time, or the
snapshot that added it), so a file written, added or removed since is a new read.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from weakref import WeakKeyDictionary

from pyspark.sql import DataFrame, SparkSession

KEPT_READS = 8  # a session's most recently used; each holds its files' statuses in the driver

_reads: WeakKeyDictionary[SparkSession, OrderedDict[Hashable, DataFrame]] = WeakKeyDictionary()


def resolved_read(spark: SparkSession, key: Hashable, read: Callable[[], DataFrame]) -> DataFrame:
    """The DataFrame `read` gave for `key` earlier in this session, else `read()`'s, kept for the next caller."""
    kept = _reads.setdefault(spark, OrderedDict())
    frame = kept.get(key)
    if frame is None:
        frame = kept[key] = read()
        while len(kept) > KEPT_READS:
            kept.popitem(last=False)
    kept.move_to_end(key)
    return frame
