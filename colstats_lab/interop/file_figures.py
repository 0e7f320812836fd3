"""A table format's own per-file figures (Iceberg's manifests, Delta's log) as the lab keeps them: NULL counts
are exact; bounds are the column's minimum and maximum only where the format keeps them whole, else bounds
for pruning. What each format cuts: Iceberg keeps 16 characters of a string by default
(`write.metadata.metrics.default` / `write.metadata.metrics.column.<c>`: `truncate(N)`, `full`, `counts`,
`none`); Delta's writers keep 32 (Spark) or 64 (delta-rs) characters, and timestamps to the millisecond,
the maximum cut down (so it is widened by 999 µs to bound the values it stands for). Floating-point bounds
leave NaN out (pyiceberg does not count NaN either), so they are not kept at all."""
from __future__ import annotations

import re

from ..coltypes import parse_type
from ..files import ColumnFigures
from ..stats.footers import WHOLE_STRING_BELOW, statistics_value

_NO_BOUNDS = {"float", "double", "binary"}
_STRINGS = {"string", "varchar", "char"}
MILLISECOND_REST = 999  # microseconds a millisecond-cut maximum may stand below the value it was cut from


def column_figures(type_name: str, rows: int | None, nulls: int | None, low, high, *,
                   strings_whole_below: int | None, timestamps_in_ms: bool = False) -> ColumnFigures | None:
    """One column's figures in one file of `rows` records, from the format's NULL count and bounds (in the
    format library's Python values); None when the format keeps nothing of it. `strings_whole_below`: the
    length from which the format may have cut a string bound (None: it never does)."""
    if nulls is None and (low is None or high is None):
        return None
    if rows is not None and nulls is not None and nulls >= rows:
        return ColumnFigures(nulls, None, None, True)  # every value NULL: no bounds, exactly
    base = parse_type(type_name).base
    if base in _NO_BOUNDS or low is None or high is None:
        return ColumnFigures(nulls)
    try:
        low, high = statistics_value(low, type_name), statistics_value(high, type_name)
    except (TypeError, ValueError):
        return ColumnFigures(nulls)
    exact = True
    if base in _STRINGS:
        exact = strings_whole_below is None or max(len(low), len(high)) < strings_whole_below
    elif base == "timestamp" and timestamps_in_ms:
        exact, high = False, high + MILLISECOND_REST
    return ColumnFigures(nulls, low, high, exact)


def iceberg_string_cut(properties: dict[str, str], column: str) -> int | None:
    """The length from which Iceberg's writer cut this column's string bounds under the table's metrics mode
    (`truncate(16)` unless set; `full`: never cut, None). Modes without bounds (`counts`, `none`) write none, so
    any length does."""
    mode = properties.get(f"write.metadata.metrics.column.{column}") or \
        properties.get("write.metadata.metrics.default") or "truncate(16)"
    mode = mode.strip().lower()
    if mode == "full":
        return None
    match = re.fullmatch(r"truncate\((\d+)\)", mode)
    return int(match.group(1)) if match else 0


DELTA_STRINGS_WHOLE_BELOW = WHOLE_STRING_BELOW  # Spark's Delta writer keeps 32 characters, delta-rs 64
