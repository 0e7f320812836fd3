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
        method = f"values read once scaled to the rows, {units_read:,} of {units_total:,} row groups (GEE's band)"
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
    spread = sum((a - ratio * m) ** 2 for a, m in zip(amounts, rows)) / (read - 1)
    error = t_quantile(read - 1) * math.sqrt((1 - read / units_total) * spread / read) / mean_rows
    down = up = error
    # every row group read alike (none held a NULL, say) shows no spread, yet unread ones may differ: the rule of
    # three bounds the share of row groups unlike them by 3 / b at 95 %, and so (row groups alike in size) the rows
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
    return sorted(name for name, figure in entry["figures"].items() if not figure[3])
