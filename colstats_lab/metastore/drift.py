"""How a column's statistics changed between two kept states, from the statistics alone (no scan): the
measures people watch for drift.

- null fraction: nulls over the rows the state describes, and its change;
- NDV and its change (relative);
- min and max, and whether a new minimum or maximum appeared;
- population stability index (PSI) over the KLL sketches: the earlier state's deciles cut the values
  into ten bins, each state's share of the values in each bin comes from its CDF, and
  PSI = sum((now - then) * ln(now / then)), a share of 0 counted as 0.0001. Under 0.1 is usually read as
  stable, over 0.25 as a shift. Each share is within twice the sketch's rank error (1.33 %) of the exact
  one, so a PSI under about 0.01 is noise;
- heavy hitters entering and leaving: the values holding more than HEAVY_SHARE of a state's values, read
  off its KLL sketch (a value spanning two or more of its percentiles, then its share from the CDF), in
  the later state and not the earlier, and the reverse. Numbers, dates and timestamps only: strings have
  no sketch.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .merge import spark_order
from .model import ColumnStatisticsObj
from .quantiles import Distribution, column_value

PSI_BINS = 10
_EMPTY_SHARE = 1e-4
HEAVY_SHARE = 0.05  # a value holding over 5 % of the values: well above the sketch's 1.33 % error


def null_fraction(stats: ColumnStatisticsObj, rows: int | None) -> float | None:
    """None without rows, or when the state does not know its nulls (Drill's metadata may not)."""
    nulls = stats.statsData.value.numNulls
    if not rows or nulls is None:
        return None
    return nulls / rows


def bin_edges(then: Distribution, bins: int = PSI_BINS) -> list[Any]:
    """The inner edges of `bins` bins holding equal shares of the earlier state's values (its deciles)."""
    return [then.quantile(i / bins) for i in range(1, bins)]


def shares(distribution: Distribution, edges: list[Any]) -> list[float]:
    """The share of the values in (-inf, e1), [e1, e2), ..., [e_last, inf)."""
    below = [0.0, *(distribution.fraction_below(e) for e in edges), 1.0]
    return [max(0.0, b - a) for a, b in zip(below, below[1:])]


def psi(expected: list[float], actual: list[float]) -> float:
    """The population stability index of two lists of shares over the same bins."""
    total = 0.0
    for e, a in zip(expected, actual):
        e, a = max(e, _EMPTY_SHARE), max(a, _EMPTY_SHARE)
        total += (a - e) * math.log(a / e)
    return total


def sketch_psi(then: Distribution | None, now: Distribution | None) -> float | None:
    """PSI of two states' KLL sketches over the earlier one's deciles; None without both sketches."""
    if then is None or now is None or then.is_empty or now.is_empty:
        return None
    edges = bin_edges(then)
    return psi(shares(then, edges), shares(now, edges))


def heavy_hitters(distribution: Distribution | None, share: float = HEAVY_SHARE) -> dict[Any, float]:
    """The values holding more than `share` of the sketch's values, with their shares."""
    if distribution is None or distribution.is_empty:
        return {}
    percentiles = [distribution.quantile(i / 100) for i in range(1, 100)]
    candidates = {a for a, b in zip(percentiles, percentiles[1:]) if a == b}
    out = {}
    for value in sorted(candidates, key=spark_order):
        mass = distribution.fraction_below(value, True) - distribution.fraction_below(value, False)
        if mass > share:
            out[value] = mass
    return out


@dataclass(frozen=True)
class Change:
    """One column's figures in two states and what changed (None where a state lacks the figure)."""

    null_fraction_then: float | None
    null_fraction_now: float | None
    ndv_then: int | None
    ndv_now: int | None
    min_then: Any
    min_now: Any
    max_then: Any
    max_now: Any
    psi: float | None
    hitters_entering: tuple = ()  # heavy hitters of the later state that the earlier one did not have
    hitters_leaving: tuple = ()

    @property
    def null_fraction_change(self) -> float | None:
        if self.null_fraction_then is None or self.null_fraction_now is None:
            return None
        return self.null_fraction_now - self.null_fraction_then

    @property
    def ndv_change(self) -> float | None:
        """The NDV's relative change (0.1: a tenth more distinct values)."""
        if not self.ndv_then or self.ndv_now is None:
            return None
        return self.ndv_now / self.ndv_then - 1

    @property
    def new_min(self) -> bool:
        return _beyond(self.min_now, self.min_then, lower=True)

    @property
    def new_max(self) -> bool:
        return _beyond(self.max_now, self.max_then, lower=False)


def _beyond(now, then, lower: bool) -> bool:
    if now is None or then is None:
        return False
    return spark_order(now) < spark_order(then) if lower else spark_order(now) > spark_order(then)


def compare(then: ColumnStatisticsObj, then_rows: int | None, now: ColumnStatisticsObj, now_rows: int | None
            ) -> Change:
    """What changed from one state of a column's statistics to another."""
    a, b = then.statsData.value, now.statsData.value
    earlier, later = Distribution.of_stats(then), Distribution.of_stats(now)
    before, after = heavy_hitters(earlier), heavy_hitters(later)
    both = earlier is not None and later is not None
    return Change(null_fraction(then, then_rows), null_fraction(now, now_rows), getattr(a, "numDVs", None),
                  getattr(b, "numDVs", None), getattr(a, "lowValue", None), getattr(b, "lowValue", None),
                  getattr(a, "highValue", None), getattr(b, "highValue", None), sketch_psi(earlier, later),
                  tuple(column_value(v, now.colType) for v in after if v not in before) if both else (),
                  tuple(column_value(v, then.colType) for v in before if v not in after) if both else ())
