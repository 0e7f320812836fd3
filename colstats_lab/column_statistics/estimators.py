"""Estimates from a random choice of row groups, each with the band it honestly has.

The unit of the sample is the row group: rows of one row group were written together (sorted, clustered by
a key, one day's) and are not independent, so every band is over row groups, never over rows.

- NDV: GEE (Charikar, Chaudhuri, Motwani, Narasayya, PODS 2000) over row groups: a value seen in exactly
  one sampled row group stands for sqrt(B/b) values, one seen in more for itself. Its guarantee is a ratio
  error of sqrt(B/b) for any data, which is the band: a column whose values cluster by row group sits at
  the band's edge, one spread evenly near its middle. Hard bounds from the files (values seen, dictionary
  sizes, non-NULL rows, an integer's range) narrow it.
- Shares and means (NULLs, trues, average length): the ratio estimator of cluster sampling, its variance
  from the spread over the sampled row groups with the finite-population correction, and Student's t with
  b - 1 degrees of freedom for a 99 % band; one row group gives no spread, so its band is the hard one.
"""
from __future__ import annotations

import bisect
import json
import math
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

# a partition's (or table's) parameter: JSON, column -> {"tier", "read", "figures": figure -> [value, low, high,
# exact, method]}, for the columns a tiered ANALYZE (metadata alone, or a sample) computed last
BOUNDS_PARAM = "colstats.bounds"
CONFIDENCE = 0.99
UNIQUE_LOOKING = 0.9  # a sample whose values were this share read once looks like a column of unique values
# Student's t at 0.995 by degrees of freedom (a 99 % band, so that well over 95 % of a run's bands hold: a 95 % band
# misses one time in twenty, and a table's figures are many); between two listed ones the smaller df's is taken
_T_995 = {1: 63.657, 2: 9.925, 3: 5.841, 4: 4.604, 5: 4.032, 6: 3.707, 7: 3.499, 8: 3.355, 9: 3.250, 10: 3.169,
          12: 3.055, 15: 2.947, 20: 2.845, 25: 2.787, 30: 2.750, 40: 2.704, 60: 2.660, 120: 2.617}
_T_DFS = sorted(_T_995)


@dataclass(frozen=True)
class Estimate:
    """A figure from a sample: `value`, and `low` <= truth <= `high` with the method's confidence."""

    value: float
    low: float
    high: float
    method: str


def t_quantile(degrees: int) -> float:
    """Student's t two-sided 99 % quantile for `degrees` of freedom (the normal's 2.576 past 120)."""
    if degrees > _T_DFS[-1]:
        return 2.576
    return _T_995[_T_DFS[bisect.bisect_right(_T_DFS, degrees) - 1]]


def gee_ndv(frequencies: dict[int, int], units_read: int, units_total: int, low: float, high: float,
            values_read: int = 0, values_high: float = 0.0, values_total: float = 0.0,
            rows_once: int = 0) -> Estimate:
    """NDV from `frequencies` (j -> values seen in exactly j sampled row groups) of `units_read` of
    `units_total` row groups, within the hard bounds [`low`, `high`] the files give. `values_read` are the
    non-NULL values the sample read and `values_high` the top of the band of the whole's: GEE's upper edge is
    where every singleton stands for B/b values, which the non-NULL count's own spread can pass (an all-distinct
    column sits on that edge), so the band reaches the singletons' share of the whole's values too.

    GEE's value sits sqrt(B/b) under the truth for a column of unique values (a key, a timestamp); where nearly
    every value read was read once (`rows_once` of `values_read`, UNIQUE_LOOKING), the value is instead the
    singletons scaled to the whole's `values_total`, still inside the band. Where values recur across the
    row groups read (some seen in exactly two), the value is Chao2's (Chao 1987, incidence form, bias-corrected:
    d + (b-1)/b * f1(f1-1) / (2(f2+1))), inside GEE's band: GEE's value sits far over a column whose values each
    recur a few times in every row group (10M rows, 200,000 values, 6 of 110 row groups: GEE +69 %, Chao2 under
    1 %), where Chao2's premise, values met at random in row groups, holds."""
    seen = sum(frequencies.values())
    if units_read >= units_total:
        return Estimate(seen, seen, seen, "every row group")
    scale = math.sqrt(units_total / units_read)
    singletons = frequencies.get(1, 0)
    estimate = scale * singletons + sum(count for j, count in frequencies.items() if j > 1)
    floor = max(low, seen, estimate / scale)
    extrapolated = seen - singletons + (singletons / values_read * values_high if values_read else 0.0)
    ceiling = max(floor, min(high, max(estimate * scale, extrapolated)))
    method = f"GEE over {units_read:,} of {units_total:,} row groups"
    doubletons = frequencies.get(2, 0)
    if doubletons:
        estimate = seen + (units_read - 1) / units_read * singletons * (singletons - 1) / (2 * (doubletons + 1))
        method = f"Chao2 over {units_read:,} of {units_total:,} row groups (GEE's band)"
    if values_read and values_total and rows_once >= UNIQUE_LOOKING * values_read:
        estimate = seen - singletons + singletons * values_total / values_read
        # the share of values read once is itself a sample's: a few more repeats (NaN, one value of many rows) in
        # the row groups read than in the others pulls it down, so the band reaches the files' own bound
        ceiling = max(ceiling, high)
        method = f"values read once scaled to the rows, {units_read:,} of {units_total:,} row groups (up to every " \
                 "non-NULL value distinct)"
    return Estimate(min(max(estimate, floor), ceiling), floor, ceiling, method)


def ratio_estimate(amounts: list[float], rows: list[int], units_total: int, low: float, high: float,
                   what: str = "share") -> Estimate:
    """The ratio Σ amounts / Σ rows of the sampled row groups (`amounts[i]` of `rows[i]`: NULLs, trues, total
    length) standing for all `units_total` row groups', with its 95 % band clipped to [`low`, `high`]."""
    read = len(rows)
    total_rows = sum(rows)
    if not total_rows:
        return Estimate(low, low, high, f"{what}: no row read")
    ratio = sum(amounts) / total_rows
    if read >= units_total:
        return Estimate(ratio, ratio, ratio, "every row group")
    if read < 2:
        return Estimate(min(max(ratio, low), high), low, high, f"{what} from 1 row group: no spread to bound it")
    mean_rows = total_rows / read
    spread = sum((a - ratio * m) ** 2 for a, m in zip(amounts, rows, strict=True)) / (read - 1)
    error = t_quantile(read - 1) * math.sqrt((1 - read / units_total) * spread / read) / mean_rows
    if low >= 0 and high <= 1:
        # a share of rows: a few row groups read alike show less spread than the rows hold (regular data: every row
        # group 8 or 9 NULLs in 37 or 38 rows, 4 of 20 read, the band missed by 2 rows); it is never narrower than a
        # simple random sample of the rows read would give
        error = max(error, 2.576 * math.sqrt(ratio * (1 - ratio) / total_rows * (1 - read / units_total)))
    down = up = error
    # every row group read alike (none held a NULL, say) shows no spread, yet unread ones may differ: the rule of
    # three bounds the share of row groups unlike them by 3 / b at 95 %, and so (row groups alike in size) the rows
    if spread == 0:
        down = up = 3 / read * (high - low)
    if ratio - error <= low:
        up = max(up, 3 / read * (high - low))
    if ratio + error >= high:
        down = max(down, 3 / read * (high - low))
    return Estimate(min(max(ratio, low), high), max(low, ratio - down), min(high, ratio + up),
                    f"{what} over {read:,} of {units_total:,} row groups (cluster ratio, t {CONFIDENCE:.0%})")


def tiered_columns(parameters: dict) -> dict[str, dict]:
    """The columns whose statistics a tiered ANALYZE computed, from a partition's (table's) parameters."""
    text = parameters.get(BOUNDS_PARAM)
    return json.loads(text) if text else {}


def tiers_by_column(owners: list[dict], columns: list[str]) -> dict[str, str]:
    """Each of `columns` whose statistics a tiered ANALYZE computed in some of `owners` (a table's parameters, or
    its partitions'), with its tier: "5 %", "metadata", several joined, and "(in 3 of 10 partitions)" where the
    other owners' figures came from every value."""
    out = {}
    for column in columns:
        tiers = [entry[column]["tier"] for entry in map(tiered_columns, owners) if column in entry]
        if not tiers:
            continue
        said = ", ".join(sorted(set(tiers)))
        out[column] = said if len(tiers) == len(owners) else f"{said} (in {len(tiers):,} of {len(owners):,} partitions)"
    return out


def inexact_figures(parameters: dict, column: str) -> list[str]:
    """The figures of `column` that are estimates or unknown in these parameters ([]: every figure exact,
    or the column was computed from every value)."""
    entry = tiered_columns(parameters).get(column)
    if entry is None:
        return []
    return sorted(name for name, figure in entry["figures"].items() if not Band.of(figure).exact)


@dataclass(frozen=True)
class Band:
    """One figure of a tiered ANALYZE: `value` (None: unknown), the truth between `low` and `high` (None: unbounded
    on that side), `exact` when value is the truth, and the `method` that says where it came from. Kept in a
    partition's BOUNDS_PARAM as the list [value, low, high, exact, method]."""

    value: Any
    low: Any
    high: Any
    exact: bool
    method: str

    @classmethod
    def of(cls, stored: list) -> Band:
        value, low, high, exact, method = stored
        return cls(value, low, high, bool(exact), str(method))

    @classmethod
    def known(cls, value: Any, method: str = "every value") -> Band:
        return cls(value, value, value, True, method)

    def to_list(self) -> list:
        return [self.value, self.low, self.high, self.exact, self.method]

    @property
    def unknown(self) -> bool:
        return self.value is None and not self.exact


UNKNOWN_BAND = Band(None, None, None, False, "unknown")  # a figure no tier gave: no value, no bound


@dataclass(frozen=True)
class Tier:
    """How an ANALYZE read a column's values: every value (`whole`), none (`metadata`: footers and dictionary
    pages), or a `sample` of each partition's row groups, `fraction` of them. Its `label` ("metadata", "5 %") is
    what a partition's BOUNDS_PARAM, the history's cause and Spark's exported property keep."""

    kind: str = "whole"  # "whole", "metadata" or "sample"
    fraction: float | None = None  # a sample's share of row groups, above 0 and at most 1

    @classmethod
    def of_analyze(cls, metadata_only: bool, sample_percent: float | None) -> Tier:
        if metadata_only:
            return METADATA_TIER
        return cls.of_percent(sample_percent) if sample_percent is not None else WHOLE_TIER

    @classmethod
    def of_percent(cls, percent: float) -> Tier:
        """`SAMPLE n PERCENT`'s tier: the one place a percent becomes a fraction."""
        return cls.sampled(percent / 100)

    @classmethod
    def sampled(cls, fraction: float) -> Tier:
        """A sample of `fraction` of each partition's row groups (all of them: every value read, the whole tier);
        ValueError outside (0, 1]. The one place a sample's share is checked: SQL's percent comes here too."""
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
            raise ValueError(f"a sample is a fraction of row groups above 0 and at most 1, not {fraction!r}")
        return WHOLE_TIER if fraction == 1 else cls("sample", float(fraction))

    @classmethod
    def of_label(cls, label: str) -> Tier:
        """The tier a stored label names ("" or "every value": whole)."""
        if label == "metadata":
            return METADATA_TIER
        number = label.split(" (")[0].removesuffix(" %")
        try:
            return cls("sample", float(number) / 100)
        except ValueError:
            return WHOLE_TIER

    @property
    def label(self) -> str:
        if self.kind == "sample" and self.fraction is not None:
            return f"{self.fraction * 100:g} %"
        return "metadata" if self.kind == "metadata" else ""

    @property
    def is_whole(self) -> bool:
        return self.kind == "whole"

    @property
    def is_metadata(self) -> bool:
        return self.kind == "metadata"

    @property
    def is_sample(self) -> bool:
        return self.kind == "sample"

    def __bool__(self) -> bool:  # a tier other than every value: what "tiered" means in the lab
        return not self.is_whole


WHOLE_TIER, METADATA_TIER = Tier("whole"), Tier("metadata")


# figures a table level sums over its partitions; the others are extremes (min, max, max_len), an average
# weighted by rows (avg_len), or distinct counts (ndv)
ADDITIVE_FIGURES = ("rows", "nulls", "nans", "trues", "falses")


def merged_band(figure: str, parts: list[tuple[Band, int]], non_null: int | None = None,
                ranges: list[tuple[Any, Any]] | None = None) -> Band:
    """The table level's band of `figure` from its partitions' (each with its rows): exact only where every
    partition's is. Counts add (an unknown one makes the sum unknown, its band still the sum of theirs); a
    minimum is the least of theirs and a maximum (a longest length) the greatest, each band the extreme of theirs;
    an average length is weighted by rows; NDV lies between the largest partition's and the sum of theirs, at most
    the `non_null` values (partitions without sketches cannot be unioned), and is the sum of theirs where their
    value `ranges` (each partition's [least possible minimum, greatest possible maximum]) lie apart."""
    bands = [band for band, _ in parts]
    if not bands:
        return Band(None, None, None, False, "no partition")
    exact = all(b.exact for b in bands)
    methods = sorted({b.method for b in bands if not b.exact})
    method = "partitions merged" + (f" ({'; '.join(methods)})" if methods else "")
    if figure in ADDITIVE_FIGURES:
        value = None if any(b.value is None for b in bands) else sum(b.value for b in bands)
        low = sum(b.low if b.low is not None else 0 for b in bands)
        high = None if any(b.high is None for b in bands) else sum(b.high for b in bands)
        return Band(value, low, high, exact, "every value" if exact else method)
    if figure in ("min", "max", "max_len"):
        pick = min if figure == "min" else max
        value = None if any(b.value is None and not b.exact for b in bands) else \
            _extreme(pick, [b.value for b in bands])
        if exact:
            return Band(value, None, None, True, "every value")
        # each partition's truth lies in [low, high] (an exact one's is its value; None: unbounded that side)
        lows = [b.value if b.exact else b.low for b in bands]
        highs = [b.value if b.exact else b.high for b in bands]
        if figure == "min":  # the least of the truths: below the least low, at most the least high
            low = None if any(v is None for v in lows) else _extreme(min, lows)
            high = _extreme(min, highs)
        else:  # the greatest: at least the greatest low, above the greatest high
            low = _extreme(max, lows)
            high = None if any(v is None for v in highs) else _extreme(max, highs)
        if low is not None and low == high:  # one partition's exact extreme passes every other's bound
            return Band(low, low, high, True, "every value")
        return Band(value, low, high, False, method)
    if figure == "avg_len":
        weights = [rows for _, rows in parts]
        total = sum(weights)
        if not total:
            return Band(0.0, 0.0, 0.0, exact, "every value" if exact else method)

        def weighted(side: str) -> float | None:
            picked = [getattr(b, side) if getattr(b, side) is not None else (b.value if b.exact else None)
                      for b in bands]
            present = [v for v in picked if v is not None]
            if len(present) < len(picked):
                return None
            return sum(v * w for v, w in zip(present, weights, strict=True)) / total
        return Band(weighted("value"), weighted("low"), weighted("high"), exact, "every value" if exact else method)
    if figure == "ndv":
        if len(bands) == 1:
            return bands[0]
        lows = [b.low if b.low is not None else b.value for b in bands]
        highs = [b.high if b.high is not None else b.value for b in bands]
        if ranges is not None and len(ranges) == len(bands) and _apart(ranges) and \
                None not in lows and None not in highs:
            # no value is in two partitions: their distinct values add (a sorted key partitioned by its range)
            values = [b.value for b in bands]
            return Band(None if None in values else sum(values), sum(lows), sum(highs), exact,
                        "every value" if exact else "partitions merged: their ranges apart, so their counts add")
        low = max((v for v in lows if v is not None), default=0)
        high = None if any(v is None for v in highs) else sum(highs)
        if non_null is not None:
            high = non_null if high is None else min(high, non_null)
        return Band(None, low, high, False, "partitions merged without sketches: between the largest partition's "
                                            "and their sum")
    return Band(None, None, None, False, method)


def _apart(ranges: list[tuple[Any, Any]]) -> bool:
    """Whether the [low, high] ranges are pairwise apart (values of one kind; any incomparable: not known apart)."""
    try:
        ordered = sorted(ranges)
        return all(high < low for (_, high), (low, _) in pairwise(ordered))
    except TypeError:
        return False


def _extreme(pick, values: list) -> Any:
    """The least or greatest of the values present (None: none is)."""
    present = [v for v in values if v is not None]
    return pick(present) if present else None
