"""What `Lab.sql` returns: rows as a pandas DataFrame, or a line of text, or both."""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

import pandas as pd


@dataclass
class Result:
    """`.df` holds the rows of statements that return rows; `.message` a line for the others.

    `.statement` is the parsed statement; `.details` carries command-specific values (for ANALYZE,
    the analyzed partitions and columns). A query says whether it was `answered_from` "stats" or
    "scan", and the `reason`.
    """

    statement: Any = None
    df: pd.DataFrame | None = None
    message: str | None = None
    details: Any = None
    extra: dict = field(default_factory=dict)
    answered_from: str | None = None  # queries: "stats" (no Spark job) or "scan"
    reason: str | None = None  # queries: why they were answered that way

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
