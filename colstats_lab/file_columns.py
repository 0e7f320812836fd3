"""How a table's columns are found and read in its files.

Names: the metastore keeps Hive's lower-case names; a file written by pandas, pyarrow or a Spark job spells
them as its writer did (`userId`, `Größe`, `UPPER`). Every read of a file finds a table's column in it
case-insensitively, as Spark and Hive do, and a file holding two names that differ only in case is refused by
name: matching either would be a guess, and a wrong guess reads the wrong column. The table keeps its files'
spelling (SPELLING_PARAM) for the readers that show names.

Nanosecond timestamps: pandas and pyarrow write `TIMESTAMP(NANOS)` by default, which Spark 4 refuses to read as
a timestamp. Such a column is a `timestamp` of the table, read as the long it is in the file and truncated to
the microsecond (Spark's precision: floor, so 1969's instants go down as well), the same in a scan and from a
footer (NANOS_PARAM names those columns).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from .errors import ColstatsError

SPELLING_PARAM = "colstats.columns.spelling"  # JSON {lower-case name: the files' spelling}, names not lower-case only
SKIPPED_PARAM = "colstats.columns.skipped"  # JSON {column: why the lab cannot read it}: left out of the table
NANOS_PARAM = "colstats.columns.timestampNanos"  # comma-separated: timestamp columns the files keep in nanoseconds


class AmbiguousColumnError(ColstatsError):
    """A file (or a table format's schema) holds two column names that differ only in case."""


def by_lower_name(names: Iterable[str], where: str) -> dict[str, str]:
    """Each name keyed by its lower-case form; raises AmbiguousColumnError naming `where` and both
    spellings when two names differ only in case."""
    out: dict[str, str] = {}
    for name in names:
        key = name.lower()
        if key in out and out[key] != name:
            raise AmbiguousColumnError(
                f"{where} has columns {out[key]!r} and {name!r}, which differ only in case: the lab, like Spark "
                f"and Hive, matches column names case-insensitively and cannot tell them apart")
        out[key] = name
    return out


def spelling_param(names: Iterable[str]) -> str | None:
    """The table parameter that keeps the files' spelling of `names`; None when every name is lower-case."""
    spelled = {name.lower(): name for name in names if name != name.lower()}
    return json.dumps(spelled, sort_keys=True, ensure_ascii=False) if spelled else None


def spellings(parameters: Mapping[str, str]) -> dict[str, str]:
    """The files' spelling of each column a table's parameters keep one for (lower-case name -> spelling)."""
    text = parameters.get(SPELLING_PARAM)
    if not text:
        return {}
    try:
        kept = json.loads(text)
    except ValueError:  # a parameter another tool wrote: the metastore's names still name the columns
        return {}
    return {str(k).lower(): str(v) for k, v in kept.items() if str(v).lower() == str(k).lower()} \
        if isinstance(kept, dict) else {}


def nanos_columns(parameters: Mapping[str, str]) -> frozenset[str]:
    """The table's timestamp columns its files keep as nanoseconds (lower-case names)."""
    return frozenset(n.strip().lower() for n in (parameters.get(NANOS_PARAM) or "").split(",") if n.strip())


def nanos_param(names: Iterable[str]) -> str | None:
    """The table parameter naming its nanosecond timestamp columns; None when it has none."""
    listed = sorted({n.lower() for n in names})
    return ",".join(listed) if listed else None


def is_nanosecond_timestamp(logical_type) -> bool:
    """Whether a Parquet logical type (pyarrow's, of a column or a chunk's statistics) is TIMESTAMP(NANOS)."""
    return logical_type is not None and logical_type.type == "TIMESTAMP" and \
        '"timeUnit":"nanoseconds"' in logical_type.to_json()


def micros_of_nanos(nanos: int) -> int:
    """A nanosecond instant truncated to its microsecond, as a scan of the column reads it (floor)."""
    return nanos // 1000
