"""Analyzing what changed (every column of the partitions whose statistics went stale past a threshold),
and any DataFrame by ANALYZE's aggregation."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from .. import frames
from ..analyze.autoanalyze import AUTOANALYZE_SAMPLE, AutoAnalyzeOptions, duration_seconds, run_round
from ..analyze.stale import analyze_stale as analyze_stale_owners
from ..analyze.stale import check_threshold
from ..coltypes import from_spark_type
from ..errors import spark_errors
from ..metastore import FieldSchema, NoSuchObjectException, Table
from ..result import Result
from ..sizes import counted
from ..stats import ColumnPlan, aggregate_stats
from ..tables.pandas_input import spark_frame_of

if TYPE_CHECKING:
    from ..transaction import Transaction
    from .session import Session


def analyze_stale(session: Session, table: str, threshold: float = 0.3, txn: Transaction | None = None) -> Result:
    """The work of `TableHandle.analyze_stale`, whose docstring is the reference."""
    threshold = check_threshold(threshold)
    meta = session.resolve(table)
    with session.txn_scope(txn) as scope:
        done = analyze_stale_owners(lambda: session.spark, session.metastore, meta, threshold, scope)
    frame, chosen, outcome = done.staleness, done.analyzed, done.outcome
    below = [r for r in frame.itertuples() if not r.accurate and r.partition not in chosen]
    if outcome is None:
        message = f"Nothing to analyze in {meta.qualified_name}: no statistics changed by {threshold:.0%} or more."
    else:
        what = f"{len(chosen)} of {counted(len(frame), 'partition')}" if meta.is_partitioned else "the table"
        message = f"Analyzed {what}: {_why_chosen(frame, chosen, threshold, meta)}. {outcome.message}"
    if below:
        message += (f" Left as they are ({len(below)} not accurate, changed by less than {threshold:.0%}): "
                    + ", ".join(f"{meta.spelled_partition(r.partition) or meta.qualified_name} {r.changed_fraction:.0%}"
                                for r in below[:5])
                    + (", ..." if len(below) > 5 else "") + ".")
    return Result(message=message, details=done)


def _why_chosen(frame: pd.DataFrame, chosen: list, threshold: float, meta: Table) -> str:
    """Why analyze_stale took the partitions it took: the rows each changed where the lab counted them, else
    why it could not (files written outside the lab, never analyzed)."""
    table, spell = meta.qualified_name, meta.partition_speller()
    rows = [r._replace(partition=spell(r.partition)) for r in frame.itertuples() if r.partition in chosen]
    counted_rows = [r for r in rows if r.changed_fraction is not None]
    uncounted = [r for r in rows if r.changed_fraction is None]
    said = []
    if counted_rows:
        listed = ", ".join(f"{r.partition or table} {r.changed_fraction:.0%}" for r in counted_rows[:5])
        said.append(f"changed by {threshold:.0%} or more ({listed}{', ...' if len(counted_rows) > 5 else ''})")
    if uncounted:
        listed = "; ".join(f"{r.partition or table}: {r.reason}" for r in uncounted[:3])
        said.append(f"not accurate, by rows the lab did not count ({listed}{'; ...' if len(uncounted) > 3 else ''})")
    return " and ".join(said)


def autoanalyze(session: Session, databases: list[str] | str | None = None, mode: str = "all",
                threshold: float = 0.3, budget: str | float = "15m", columns: str = "all",
                worker: str | None = None) -> Result:
    """The work of `Lab.autoanalyze`, whose docstring is the reference."""
    from . import catalogs

    named = (databases,) if isinstance(databases, str) else tuple(databases or ())
    for db in named:
        if db.lower() not in session.metastore.catalog.get_all_databases():
            raise NoSuchObjectException(f"database {db} does not exist")
    options = AutoAnalyzeOptions.of(tuple(db.lower() for db in named), mode, threshold,
                                    duration_seconds(budget, "the budget"), columns,
                                    str(session.get(AUTOANALYZE_SAMPLE) or "off"))
    outcome = run_round(lambda: session.spark, session.metastore, options, session.transaction,
                        follow=lambda table: catalogs.followed(session, table), worker=worker,
                        publish=lambda table: catalogs.auto_published(session, table))
    budget = session.get("colstats.history.max_bytes")
    if budget is not None:  # the history bounded as the worker goes, not only when someone cleans
        session.metastore.stats_history.prune_stats_history(int(session.get("colstats.history.keep")), int(budget))
    return Result(message=outcome.message, details=outcome)


def analyze_frame(session: Session, frame, by: list[str] | str | None = None) -> pd.DataFrame:
    """The work of `Lab.analyze_frame`, whose docstring is the reference."""
    notes: list[str] = []
    if isinstance(frame, pd.DataFrame):
        with spark_errors("cannot read the pandas DataFrame"):
            converted = spark_frame_of(session.spark, frame, "the pandas DataFrame")
        frame, notes = converted.frame, converted.notes
    keys = [by] if isinstance(by, str) else list(by or [])
    fields = {f.name.lower(): f for f in frame.schema.fields}
    for key in keys:
        if key.lower() not in fields:
            raise NoSuchObjectException(f"column {key} does not exist in the DataFrame "
                                        f"(it has {', '.join(f.name for f in frame.schema.fields)})")
    columns = [FieldSchema(f.name, from_spark_type(f.dataType).name) for f in frame.schema.fields
               if f.name.lower() not in {k.lower() for k in keys}]
    kll = bool(session.get("hive.stats.kll.enable"))
    # each column of a type with statistics, each struct's leaves (`payload.user.id`) and each array's elements
    # (`tags.element`) as columns of their own
    plans = [ColumnPlan.of(c, kll) for c in Table("", "", columns).stats_columns]
    with spark_errors("cannot analyze the DataFrame"):
        groups = aggregate_stats(frame, keys, plans)
    out = frames.groups_frame(groups, [(p.name, p.type_name) for p in plans], keys)
    out.attrs["notes"] = notes  # what reading a pandas frame changed, said once
    return out
