"""Analyzing only what moved: the partitions (or the table) whose column statistics are not accurate
and whose rows changed by at least a threshold since they were (Impala's rule of thumb: 30 %)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd
from pyspark.sql import SparkSession

from ..errors import InvalidArgument
from ..metastore import Metastore, Table
from ..metastore.rows.staleness import PARAM as ROWS_CHANGED
from ..metastore.rows.staleness import changed_fraction
from ..sql.statements import Analyze, AnalyzeMode, TableName
from .runner import AnalyzeOutcome, run_analyze

if TYPE_CHECKING:
    from ..transaction import Transaction

STALENESS_COLUMNS = ["partition", "rows", "rows_changed", "changed_fraction", "accurate", "reason"]


def staleness_frame(metastore: Metastore, table: Table) -> pd.DataFrame:
    """One row per partition (one for an unpartitioned table, partition None): its rows, the rows changed
    since its column statistics were last all accurate and their fraction (None: unknown), whether every
    column's statistics are accurate now, and why not."""
    compliance = metastore.accuracy.stats_compliance(table.dbName, table.tableName, sorted(table.stats_column_names))
    owners: list[tuple[str | None, dict[str, str]]] = [(None, table.parameters)]
    if table.is_partitioned:
        owners = list(metastore.catalog.get_partition_params(table.dbName, table.tableName, ["numRows", ROWS_CHANGED]).items())
    records = []
    for name, params in owners:
        ok, why = compliance[name]
        changed = params.get(ROWS_CHANGED)
        records.append({"partition": name, "rows": int(params.get("numRows", 0) or 0),
                        "rows_changed": None if changed is None else int(changed or 0),
                        "changed_fraction": changed_fraction(params), "accurate": ok, "reason": why})
    return pd.DataFrame(records, columns=STALENESS_COLUMNS, dtype=object)


def stale_owners(frame: pd.DataFrame, threshold: float) -> list:
    """The partitions (None: the table) to analyze: not accurate, and changed by `threshold` or more
    (or by an unknown amount)."""
    return [row.partition for row in frame.itertuples()
            if not row.accurate and (row.changed_fraction is None or row.changed_fraction >= threshold)]


def check_threshold(threshold) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise InvalidArgument(f"threshold is the fraction of rows changed, between 0 and 1, not {threshold!r}")
    return float(threshold)


@dataclass(frozen=True)
class StaleAnalysis:
    """What `TableHandle.analyze_stale` did: the staleness frame before, the partitions chosen (None: the table),
    and the ANALYZE's outcome (None when nothing passed the threshold)."""
    staleness: pd.DataFrame
    analyzed: list
    outcome: AnalyzeOutcome | None


def analyze_stale(spark: Callable[[], SparkSession], metastore: Metastore, table: Table, threshold: float,
                  txn: Transaction) -> StaleAnalysis:
    """Analyzes every column of the owners not accurate and changed by `threshold` or more, in one Spark job."""
    frame = staleness_frame(metastore, table)
    chosen = stale_owners(frame, threshold)
    if not chosen:
        return StaleAnalysis(frame, chosen, None)
    stmt = Analyze(table=TableName(table.dbName, table.tableName), mode=AnalyzeMode.COLUMNS)
    outcome = run_analyze(spark, metastore, stmt, table.dbName, txn,
                          only=chosen if table.is_partitioned else None)
    return StaleAnalysis(frame, chosen, outcome)
