"""Analyzing what changed: every column of the partitions whose statistics went stale past a threshold."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..analyze.stale import analyze_stale as analyze_stale_owners
from ..analyze.stale import check_threshold
from ..result import Result

if TYPE_CHECKING:
    from ..transaction import Transaction
    from .session import Session


def analyze_stale(session: "Session", table: str, threshold: float = 0.3, txn: Transaction | None = None) -> Result:
    """The work of `Lab.analyze_stale`, whose docstring is the reference."""
    threshold = check_threshold(threshold)
    meta = session.resolve(table)
    with session.txn_scope(txn) as scope:
        done = analyze_stale_owners(lambda: session.spark, session.metastore, meta, threshold, scope)
    frame, chosen, outcome = done.staleness, done.analyzed, done.outcome
    below = [r for r in frame.itertuples() if not r.accurate and r.partition not in chosen]
    if outcome is None:
        message = f"Nothing to analyze in {meta.qualified_name}: no statistics changed by {threshold:.0%} or more."
    else:
        what = (f"{len(chosen)} of {len(frame)} partitions" if meta.is_partitioned else "the table")
        message = f"Analyzed {what} changed by {threshold:.0%} or more. {outcome.message}"
    if below:
        message += (f" Left as they are ({len(below)} not accurate, changed by less than {threshold:.0%}): "
                    + ", ".join(f"{r.partition or meta.qualified_name} {r.changed_fraction:.0%}" for r in below[:5])
                    + (", ..." if len(below) > 5 else "") + ".")
    return Result(message=message, details=done)
