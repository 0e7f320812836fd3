"""Measuring a table's skew: heavy hitters per partition from one Spark aggregation over its snapshot."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import spark_errors
from ..metastore import InvalidInputException, NoSuchObjectException
from ..skew import DEFAULT_MODE, SkewReport, skew_report
from ..skew.report import check_options as check_skew_options
from ..tables import read_snapshot
from .reads import partition as find_partition
from .reads import snapshot_parts

if TYPE_CHECKING:
    from .session import Session


def skew(session: "Session", table: str, columns: list[str] | str, partition: dict | str | None = None, k: int = 20,
         min_share: float = 0.02, mode: str = DEFAULT_MODE, max_keys: int = 10,
         max_items: int = 10_000) -> SkewReport:
    """`Lab.skew`: checks the arguments before Spark starts, then one aggregation over the snapshot."""
    meta = session.resolve(table)
    check_skew_options(mode, k, min_share, max_keys, max_items)
    names = [columns] if isinstance(columns, str) else list(columns)
    if not names or not all(isinstance(c, str) and c.strip() for c in names):
        raise InvalidInputException(f"skew takes one or more column names, not {columns!r}")
    names = [c.strip().lower() for c in names]
    for name in names:
        if meta.column(name) is None:
            raise NoSuchObjectException(f"column {name} does not exist in table {meta.qualified_name}")
        if name in meta.partition_key_names:
            raise InvalidInputException(f"{name} is a partition key of {meta.qualified_name}: skew is measured "
                                        "on data columns within partitions")
    _, parts = snapshot_parts(session, meta.qualified_name)
    if partition is not None:
        wanted = find_partition(session, meta.qualified_name, partition).partName
        parts = [p for p in parts if p.part_name == wanted]
    with spark_errors(f"cannot measure the skew of {meta.qualified_name}"):
        return skew_report(read_snapshot(session.spark, meta, parts), meta, names, k, min_share, mode, max_keys,
                           max_items)
