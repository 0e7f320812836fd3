"""A table's profile (`lab.tables[name].profile()`): one level's statistics read from the metastore and shown as
a profiling library shows a frame, with its alerts, the rules it suggests and its exports. No Spark job."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import pandas as pd

from .column_statistics.frequent_items import FrequentItems, sketchable
from .column_statistics.names import hive_part_name
from .column_statistics.profile import ALERT_RULES, Alert, ColumnProfile, column_profile
from .column_statistics.quantiles import Distribution
from .column_statistics.sketches import estimate_bounds, union
from .column_statistics.suggestions import Suggestion, left_out, suggestions, to_expectation_suite
from .frames import level_records
from .metastore import Metastore, Table
from .metastore.rows.levels import TABLE_LEVEL

PROFILE_COLUMNS = ["column", "type", "rows", "nulls", "nans", "ndv", "distinct_fraction", "min", "max", "mean", "std",
                   "quantiles", "histogram", "top_values", "zeros", "avg_len", "max_len", "length_histogram",
                   "alerts", "sampled", "accurate", "missing"]


@dataclass
class Profile:
    """A table's (or one partition's) profile, read from its statistics: `columns` a row per column,
    `alerts` a row per alert, `suggest()` the rules its figures support. `level` is "table" or the
    partition's name; `rows` the rows its statistics cover."""

    table: str
    level: str
    rows: int
    profiles: list[ColumnProfile]
    duplicate_rows: dict = field(default_factory=dict)

    @property
    def columns(self) -> pd.DataFrame:
        """A row per column: the figures of PROFILE_COLUMNS (None where the statistics lack one; `missing` says
        why), `histogram` as {"edges", "counts", "error"}, `top_values` as {value: share of the non-NULL values},
        `alerts` as their kinds, `sampled` the tier of estimated figures ("" when every figure is exact)."""
        records = []
        for p in self.profiles:
            records.append({"column": p.column, "type": p.type, "rows": p.rows, "nulls": p.nulls, "nans": p.nans,
                            "ndv": p.ndv, "distinct_fraction": p.distinct_fraction, "min": p.min, "max": p.max,
                            "mean": p.mean, "std": p.std, "quantiles": p.quantiles, "histogram": p.histogram,
                            "top_values": p.top_values or None, "zeros": p.zeros, "avg_len": p.avg_len,
                            "max_len": p.max_len, "length_histogram": p.length_histogram,
                            "alerts": [a.kind for a in p.alerts], "sampled": p.sampled, "accurate": p.accurate,
                            "missing": p.missing})
        return pd.DataFrame(records, columns=PROFILE_COLUMNS, dtype=object)

    @property
    def alerts(self) -> pd.DataFrame:
        """A row per alert: column, kind, the figure that raised it and the rule (ALERT_RULES)."""
        return pd.DataFrame([(p.column, a.kind, a.evidence, a.rule) for p in self.profiles for a in p.alerts],
                            columns=["column", "kind", "evidence", "rule"])

    @property
    def duplicates(self) -> dict:
        """Duplicate rows (a row beyond the first of its kind, as pandas' `duplicated()` counts them, over every
        column and the partition keys): the estimate `rows` and the bounds `low`, `high` its truth lies within
        (the row sketch's 3 standard deviations), from the sketches of whole rows an ANALYZE over every column
        keeps. None with the `reason` where the level has none that still holds."""
        return dict(self.duplicate_rows)

    def suggest(self) -> pd.DataFrame:
        """Deequ's constraint suggestions from the figures, a row each: column, the constraint, the Great
        Expectations expectation and its arguments, and the evidence (the figure and the level it came from).
        Suggestions come only from figures that are exact and accurate now."""
        rows = [(s.column, s.constraint, s.expectation, s.kwargs, s.evidence) for s in self._suggestions()]
        return pd.DataFrame(rows, columns=["column", "constraint", "expectation", "kwargs", "evidence"])

    def _suggestions(self) -> list[Suggestion]:
        where = self.table if self.level == TABLE_LEVEL else f"{self.table} {self.level}"
        return [s for p in self.profiles for s in suggestions(p, where)]

    def to_great_expectations(self, path: str | None = None) -> dict:
        """The suggestions as a Great Expectations 1.x ExpectationSuite (JSON-able dict); written to `path`
        when given."""
        notes = [note for p in self.profiles if (note := left_out(p)) is not None]
        suite = to_expectation_suite(f"{self.table}.profile", self._suggestions(),
                                     {"colstats_lab": {"table": self.table, "level": self.level, "rows": self.rows,
                                                       "left_out": notes}})
        if path:
            with open(path, "w", encoding="utf-8") as out:
                json.dump(suite, out, indent=2, default=str)
        return suite

    def to_html(self, path: str | None = None) -> str:
        """The profile as one HTML page (the view's cards, no server needed to open it); written to `path`
        when given."""
        from .ui.profile_view import profile_page

        page = profile_page(self)
        if path:
            with open(path, "w", encoding="utf-8") as out:
                out.write(page)
        return page

    def _repr_html_(self) -> str:
        from .ui.profile_view import profile_cards

        return profile_cards(self)


def table_profile(metastore: Metastore, table: Table, partition: str | None = None) -> Profile:
    """The profile of the table level (merged over every partition) or of one partition, by name."""
    records, objs, rows = level_records(metastore, table, partition)
    level = TABLE_LEVEL if partition in (None, TABLE_LEVEL) else partition
    part_names = None if level == TABLE_LEVEL else [hive_part_name(str(partition))]
    profiles = []
    for record in records:
        name, type_name = record["column"], record["type"]
        spelled, obj = table.spelled(name), objs.get(name)  # as the files spell it
        covered = rows if obj is None or obj.numValues is None else obj.numValues
        if obj is None:
            profiles.append(ColumnProfile(spelled, type_name, covered, None, reason=record.get("reason") or "",
                                          missing="never analyzed"))
            continue
        items = None
        if sketchable(type_name):
            sketches = metastore.column_stats.get_frequent_items(table.dbName, table.tableName, name, part_names)
            items = FrequentItems.merged(list(sketches.values()), type_name) if sketches else None
        lengths = Distribution.of(getattr(obj.statsData.value, "lengths", None), "bigint")
        profiles.append(column_profile(spelled, type_name, covered, record, Distribution.of_stats(obj), items,
                                       lengths))
        profiles[-1].nested = table.column(name) is None  # a leaf (`addr.city`) or elements (`tags.element`)
    accurate = all(p.accurate for p in profiles)
    return Profile(table.qualified_name, level, rows, profiles,
                   duplicate_rows(metastore, table, part_names, rows, accurate))


def duplicate_rows(metastore: Metastore, table: Table, part_names: list[str] | None, rows: int,
                   accurate: bool) -> dict:
    """The level's duplicate rows from the row sketches that still hold (Profile.duplicates)."""
    unknown = {"rows": None, "low": None, "high": None}
    if not accurate:
        return {**unknown, "reason": "not every column's statistics are accurate now: run ANALYZE"}
    kept = metastore.row_sketches.get_row_sketches(table.dbName, table.tableName, part_names)
    counted = sum(k.rows for k in kept.values())
    if counted != rows or (rows and not kept):
        return {**unknown, "reason": f"the row sketches kept count {counted:,} of the {rows:,} rows: an ANALYZE over "
                                     "every column of a table keeping its distributions (colstats.kll.enable) keeps "
                                     "them, until the next write"}
    if not rows:
        return {"rows": 0, "low": 0, "high": 0, "reason": ""}
    merged = union([k.sketch for k in kept.values()])
    estimate, low, high = estimate_bounds(merged) if merged else (0.0, 0.0, 0.0)
    distinct = min(max(round(estimate), 1), rows)
    return {"rows": rows - distinct, "low": max(rows - min(round(high), rows), 0),
            "high": max(rows - max(round(low), 1), 0), "reason": ""}


__all__ = ["ALERT_RULES", "Alert", "Profile", "table_profile"]
