"""Constraint suggestions from a profile, by Deequ's rules, each with the figure it rests on, and their Great
Expectations 1.x form. Only exact figures that are accurate for a reader now suggest anything: a sampled
figure or stale statistics suggest no rule a pipeline would then fail on.

The rules (Deequ's `ConstraintSuggestionRunner` defaults where it has one):
- complete: no NULL row -> expect_column_values_to_not_be_null;
- retain completeness: some NULL rows -> not NULL for at least the lower end of the completeness's 95 %
  interval, rounded down to two places (`mostly`), as Deequ's RetainCompletenessRule; a double's NaN values
  count as missing here, as pandas (and so Great Expectations on a frame) counts them;
- unique: every non-NULL value certainly distinct (`profile.proven_unique`: the frequent items count each value
  once; an NDV near the rows is an estimate, and suggests nothing) -> expect_column_values_to_be_unique;
- allowed set: the frequent items list every value with its exact count, at most CATEGORICAL_MAX_VALUES of
  them -> expect_column_values_to_be_in_set, as Deequ's CategoricalRangeRule;
- range: a number column's exact min and max -> expect_column_values_to_be_between; not for a double holding
  NaN values (or whose NaNs were not counted): Great Expectations' Spark source counts a NaN outside any range
  where its pandas source skips it, so no range holds in every backend;
- non-negative: a number column whose min is at least 0 -> expect_column_values_to_be_between(min_value=0),
  as Deequ's NonNegativeNumbersRule.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..coltypes import StatsKind, parse_type
from .profile import ColumnProfile, proven_unique

CATEGORICAL_MAX_VALUES = 50
_NUMBERS = (StatsKind.LONG, StatsKind.DOUBLE, StatsKind.DECIMAL)


@dataclass(frozen=True)
class Suggestion:
    column: str
    constraint: str     # complete, retain completeness, unique, allowed set, range, non-negative
    expectation: str    # the Great Expectations expectation type
    kwargs: dict        # its arguments, the column's among them
    evidence: str       # the figure, and the level it came from


def suggestions(profile: ColumnProfile, where: str) -> list[Suggestion]:
    """The rules a column's exact, accurate figures support (none from a sample or stale statistics, nor of a
    struct's leaf or an array's elements: a Great Expectations batch has no such column)."""
    if profile.sampled or profile.accurate is False or profile.nulls is None or not profile.rows or profile.nested:
        return []
    kind = parse_type(profile.type).stored_stats_kind
    column, out = profile.column, []
    said = f"in {where}"
    # a NaN is missing to a pandas reader (Great Expectations' not-NULL on a frame): counted with the NULLs
    missing = profile.nulls + (profile.nans or 0)
    said_missing = "NULL" + (" or NaN" if profile.nans else "")
    if missing == 0:
        out.append(Suggestion(column, "complete", "expect_column_values_to_not_be_null", {"column": column},
                              f"0 NULL rows of {profile.rows:,} {said}"))
    elif missing < profile.rows:
        completeness = 1 - missing / profile.rows
        low = completeness - 1.96 * math.sqrt(completeness * (1 - completeness) / profile.rows)
        mostly = math.floor(max(low, 0.0) * 100) / 100
        if mostly > 0:
            out.append(Suggestion(column, "retain completeness", "expect_column_values_to_not_be_null",
                                  {"column": column, "mostly": mostly},
                                  f"{missing:,} {said_missing} rows of {profile.rows:,} (completeness "
                                  f"{completeness:.4f}; its 95 % interval's lower end {low:.4f}) {said}"))
    if proven_unique(profile) and kind in (StatsKind.LONG, StatsKind.STRING, StatsKind.DECIMAL, StatsKind.DATE):
        out.append(Suggestion(column, "unique", "expect_column_values_to_be_unique", {"column": column},
                              f"the frequent items count each of the {profile.values:,} non-NULL values once {said}"))
    if profile.all_values and len(profile.all_values) <= CATEGORICAL_MAX_VALUES:
        values = sorted(profile.all_values, key=str)
        out.append(Suggestion(column, "allowed set", "expect_column_values_to_be_in_set",
                              {"column": column, "value_set": values},
                              f"the frequent items list {len(values)} values covering all {profile.values:,} "
                              f"non-NULL rows exactly {said}"))
    # a double holding NaN (or whose NaNs were not counted) gets no range: Great Expectations' Spark source counts a
    # NaN outside any range where its pandas source skips it, so no range holds in every backend
    nan_free = kind is not StatsKind.DOUBLE or profile.nans == 0
    if kind in _NUMBERS and profile.min is not None and profile.max is not None and nan_free \
            and _finite(profile.min) and _finite(profile.max):
        low_value, high_value = _json_number(profile.min), _json_number(profile.max)
        out.append(Suggestion(column, "range", "expect_column_values_to_be_between",
                              {"column": column, "min_value": low_value, "max_value": high_value},
                              f"min {profile.min} and max {profile.max} {said}"))
        if profile.min >= 0:
            out.append(Suggestion(column, "non-negative", "expect_column_values_to_be_between",
                                  {"column": column, "min_value": 0},
                                  f"min {profile.min} {said}"))
    return out


def left_out(profile: ColumnProfile) -> str | None:
    """Why a rule the figures would support is not suggested, where that is a backend's difference rather than the
    data's: a double's range while it holds NaN values (or they were not counted)."""
    kind = parse_type(profile.type).stored_stats_kind
    if kind is StatsKind.DOUBLE and profile.nans != 0 and profile.min is not None and not profile.sampled \
            and profile.accurate is not False:
        held = "NaN values were not counted" if profile.nans is None else f"it holds {profile.nans:,} NaN values"
        return (f"no range for {profile.column}: {held}, which Great Expectations' Spark source counts outside any "
                "range and its pandas source skips")
    return None


def to_expectation_suite(name: str, found: list[Suggestion], meta: dict) -> dict:
    """Suggestions as a Great Expectations 1.x ExpectationSuite in its JSON form (name, expectations of `type`,
    `kwargs` and `meta`, the suite's `meta`): what `gx.ExpectationSuite(**suite)` takes."""
    return {"name": name, "expectations": [
        {"type": s.expectation, "kwargs": s.kwargs,
         "meta": {"colstats_lab": {"constraint": s.constraint, "evidence": s.evidence}}} for s in found],
        "meta": meta, "notes": None}


def _finite(value: Any) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def _json_number(value: Any) -> int | float:
    return float(value) if isinstance(value, (float, Decimal)) else int(value)
