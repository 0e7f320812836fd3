"""How far a table's or partition's data has moved since its column statistics were last complete.

Every write knows how many rows it adds (and, overwriting, removes) in each partition, so the lab
counts them in the owner's parameter `colstats.rowsChangedSinceAnalyze`: rows inserted or removed
since every column's statistics were last accurate (set back to 0 by an ANALYZE, or a gathering
write, that leaves them all accurate). The changed fraction is that count over the current rows
(at most 1); Impala's rule of thumb recomputes statistics once it passes 30 %. An owner without
the parameter (an external table, whose files another job writes, or a table from before it was
kept) has an unknown fraction.
"""
from __future__ import annotations

PARAM = "colstats.rowsChangedSinceAnalyze"


def rows_changed_param(params: dict | None, changed: int, complete: bool) -> str:
    """The parameter after a change of `changed` rows: 0 when it leaves every column's statistics
    accurate, else the count so far plus `changed`."""
    if complete:
        return "0"
    return str(int((params or {}).get(PARAM, 0) or 0) + changed)


def changed_fraction(params: dict) -> float | None:
    """Rows changed since the statistics were complete over the current rows (0..1); None if unknown."""
    if PARAM not in params:
        return None
    changed = int(params[PARAM] or 0)
    rows = int(params.get("numRows", 0) or 0)
    if changed == 0:
        return 0.0
    return 1.0 if rows <= 0 else min(1.0, changed / rows)


def describe_change(params: dict) -> str:
    """"12 of 40 rows (30%)", or why it is unknown."""
    fraction = changed_fraction(params)
    if fraction is None:
        return "unknown (not written through the lab since its statistics were kept)"
    return f"{int(params[PARAM] or 0):,} of {int(params.get('numRows', 0) or 0):,} rows ({fraction:.0%})"


def describe_summed(partitions: int, known: int, changed: int, rows: int, moved: int) -> str:
    """The same over many partitions, from their sums (`CatalogRepository.changed_rows_summed`): "12 of 400 rows (3%) in 2
    of 10 partitions", unknown ones named."""
    if partitions and not known:
        return (f"unknown in all {partitions:,} partitions (not written through the lab since their "
                f"statistics were kept)")
    fraction = 0.0 if not changed else (1.0 if rows <= 0 else min(1.0, changed / rows))
    text = f"{changed:,} of {rows:,} rows ({fraction:.0%}) in {moved} of {partitions} partitions"
    unknown = partitions - known
    return text + (f"; unknown in {unknown}" if unknown else "")
