"""What a query reads: one decision per pruning unit (segment, partition, list-bucketing directory,
file, row group) with the rows and bytes it holds, kept or pruned and why."""
from __future__ import annotations

import html
from dataclasses import dataclass, field

import pandas as pd

from ..metastore.rows.levels import PRUNING_LEVELS, Level
from ..plans.report import PlanReport
from .estimate import RowEstimate


@dataclass(frozen=True)
class PruningDecision:
    level: Level
    identifier: str
    kept: bool
    reason: str
    rows: int
    bytes: int
    units: int = 1  # how many units it decides for: the partitions ruled out in the metastore are one decision


@dataclass
class PruningReport(PlanReport):
    """The pruning decisions for one table of a query; `to_pandas()` has one row per unit with columns
    level, identifier, kept, reason, rows, bytes. From `lab.explain`, the query's plan too (PlanReport's
    `.operators` and `.fixes`)."""

    table: str
    predicate: str | None
    decisions: list[PruningDecision] = field(default_factory=list)
    retries: int = 0  # plans made again because the table's metadata changed meanwhile
    notes: list[str] = field(default_factory=list)
    estimate: RowEstimate | None = None  # the rows the condition keeps, from statistics (lab.explain)
    actual_rows: int | None = None  # the rows the query kept, once it ran (the pruning view's count)

    @property
    def levels(self) -> list[str]:
        present = {d.level for d in self.decisions}
        return [level for level in PRUNING_LEVELS if level in present]

    def kept(self, level: str = Level.FILE) -> list[str]:
        return [d.identifier for d in self.decisions if d.level == level and d.kept]

    def pruned(self, level: str = Level.FILE) -> list[str]:
        return [d.identifier for d in self.decisions if d.level == level and not d.kept]

    def to_pandas(self) -> pd.DataFrame:
        columns = ["level", "identifier", "kept", "reason", "rows", "bytes"]
        frame = pd.DataFrame([[getattr(d, c) for c in columns] for d in self.decisions], columns=columns)
        return frame.astype({"level": str})  # plain text in exports, not the enum

    def totals(self, level: str | None = None) -> dict[str, int]:
        """Rows and bytes kept and in all, over the units of one level (default: files, what is read)."""
        if level is None:
            level = Level.FILE if Level.FILE in self.levels else (self.levels or [Level.FILE])[-1]
        units = [d for d in self.decisions if d.level == level]
        return {"rows_kept": sum(d.rows for d in units if d.kept), "rows": sum(d.rows for d in units),
                "bytes_kept": sum(d.bytes for d in units if d.kept), "bytes": sum(d.bytes for d in units)}

    def summary(self) -> str:
        levels = self.levels
        if not levels:
            return f"{self.table}: nothing to prune"
        parts = []
        for level in levels:
            t = self.totals(level)
            kept = sum(d.units for d in self.decisions if d.level == level and d.kept)
            total = sum(d.units for d in self.decisions if d.level == level)
            share = t["bytes_kept"] / t["bytes"] if t["bytes"] else 0.0
            plural = level[:-1] + "ies" if level.endswith("y") else level + "s"
            parts.append(f"{kept:,} of {total:,} {plural} kept, {t['rows_kept']:,} of {t['rows']:,} rows, "
                         f"{share:.0%} of the bytes")
        text = f"{self.table} where {self.predicate or 'TRUE'}: " + "; ".join(parts)
        if self.estimate is not None:
            text += f". Estimated: {self.estimate.describe()}"
        if self.actual_rows is not None:
            text += f". Kept when run: {self.actual_rows:,} rows"
        return text + "".join(f". Note: {note}" for note in self.notes)

    @property
    def estimated_rows(self) -> int | None:
        """The rows the condition keeps, estimated from the statistics alone (None: no estimate)."""
        return self.estimate.rows if self.estimate is not None else None

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        plan = self.plan_html() if not self.operators.empty else ""
        return f"<p>{html.escape(self.summary())}</p>" + self.to_pandas().to_html(index=False) + plan
