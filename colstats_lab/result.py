"""What `Lab.sql` returns: rows as a pandas DataFrame, or a line of text, or both."""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkDataFrame

    from .pruning import PruningReport


@dataclass
class Result:
    """`.df` holds the rows of statements that return rows; `.message` a line for the others.

    `.statement` is the parsed statement; `.details` is the command's own typed record (ANALYZE's
    AnalyzeOutcome, MSCK's Repair, analyze_stale's StaleAnalysis, ...). A query says whether it was
    `answered_from` "stats" or "scan", and the `reason`; a scanned one keeps its whole result in Spark
    (`.spark_df`) and what its table read (`.pruning`, a PruningReport) when it read one lab table.
    """

    statement: Any = None
    df: pd.DataFrame | None = None
    message: str | None = None
    details: Any = None
    answered_from: str | None = None  # queries: "stats" (no Spark job) or "scan"
    reason: str | None = None  # queries: why they were answered that way
    spark_df: SparkDataFrame | None = None
    pruning: PruningReport | None = None

    def __repr__(self) -> str:
        parts = []
        if self.message:
            parts.append(self.message)
        if self.df is not None:
            parts.append(self.df.to_string(index=False) if len(self.df) else "(no rows)")
        return "\n".join(parts) or "OK"

    def _repr_html_(self) -> str:
        parts = []
        if self.message:
            parts.append(f"<p>{html.escape(self.message)}</p>")
        if self.df is not None:
            parts.append(self.df.to_html(index=False, na_rep=""))
        return "".join(parts) or "<p>OK</p>"
