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
  the later state and not the earlier, and the reverse.

Strings have no sketch: where a skew report counted the top values of the rows both states describe
(history.TopValues), the PSI is over the earlier state's top values, each a bin, and one bin for every
other value (a value outside a state's top k counts in that state's other bin), and the heavy hitters
are the top values over HEAVY_SHARE (none are reported when a list of k values ends still over it: a
value outside it may be one too; with k >= 20 that cannot happen). A sketch, where both states have one,
is preferred.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from ..coltypes import StatsKind, parse_type
from .frequent_items import TopValues
from .merge import spark_order
from .model import ColumnStatisticsObj
from .quantiles import Distribution, column_value
from .stats_rows import text_to_value

PSI_BINS = 10
_EMPTY_SHARE = 1e-4
HEAVY_SHARE = 0.05  # a value holding over 5 % of the values: well above the sketch's 1.33 % error


def null_fraction(stats: ColumnStatisticsObj, rows: int | None) -> float | None:
    """None without rows, or when the state does not know its nulls (Drill's metadata may not); over an
    array's elements (a map's entries) for theirs."""
    nulls = stats.statsData.value.numNulls
    if stats.numValues is not None:
        rows = stats.numValues
    if not rows or nulls is None:
        return None
    return nulls / rows


def bin_edges(then: Distribution, bins: int = PSI_BINS) -> list[Any]:
    """The inner edges of `bins` bins holding equal shares of the earlier state's values (its deciles)."""
    return [then.quantile(i / bins) for i in range(1, bins)]


def shares(distribution: Distribution, edges: list[Any]) -> list[float]:
    """The share of the values in (-inf, e1), [e1, e2), ..., [e_last, inf)."""
    below = [0.0, *(distribution.fraction_below(e) for e in edges), 1.0]
    return [max(0.0, b - a) for a, b in pairwise(below)]


def psi(expected: list[float], actual: list[float]) -> float:
    """The population stability index of two lists of shares over the same bins."""
    total = 0.0
    for e, a in zip(expected, actual, strict=True):
        e, a = max(e, _EMPTY_SHARE), max(a, _EMPTY_SHARE)
        total += (a - e) * math.log(a / e)
    return total


def sketch_psi(then: Distribution | None, now: Distribution | None) -> float | None:
    """PSI of two states' KLL sketches over the earlier one's deciles; None without both sketches."""
    if then is None or now is None or then.is_empty or now.is_empty:
        return None
    edges = bin_edges(then)
    return psi(shares(then, edges), shares(now, edges))


def top_values_psi(then: TopValues | None, now: TopValues | None) -> float | None:
    """PSI of two states' top values over the earlier one's values and one bin for the others; None
    without both, or when either counted no values."""
    if then is None or now is None or not then.shares or not now.shares:
        return None
    before, after = then.shares, now.shares
    listed = list(before)
    expected = [before[v] for v in listed] + [max(0.0, 1 - sum(before.values()))]
    actual = [after.get(v, 0.0) for v in listed] + [max(0.0, 1 - sum(after.get(v, 0.0) for v in listed))]
    return psi(expected, actual)


def states_psi(then: ColumnStatisticsObj, now: ColumnStatisticsObj, then_top: TopValues | None = None,
               now_top: TopValues | None = None, then_bins: tuple[list, list[float]] | None = None,
               kept_psi: float | None = None) -> float | None:
    """The PSI of two states: of their KLL sketches, else of the top values skew reports kept on them. Where
    history thinned the sketches away the figure stays: the earlier state's decile edges and shares of them
    (`then_bins`), or the later state's PSI measured before its own sketch went (`kept_psi`)."""
    earlier, later = Distribution.of_stats(then), Distribution.of_stats(now)
    if earlier is not None and later is not None:
        return sketch_psi(earlier, later)
    if later is None and kept_psi is not None:
        return kept_psi
    if earlier is None and then_bins is not None and later is not None and not later.is_empty:
        edges, expected = then_bins
        return psi(expected, shares(later, edges))
    return top_values_psi(then_top, now_top)


def top_value_hitters(top: TopValues | None, type_name: str, share: float = HEAVY_SHARE) -> dict[Any, float] | None:
    """The top values holding more than `share` of the non-null values, as the column's values; None when
    the list cannot tell (k values listed, the last of them still over `share`: another may be too)."""
    if top is None:
        return None
    if len(top.values) >= top.k and top.shares and min(top.shares.values()) > share:
        return None
    kind = parse_type(type_name).stored_stats_kind
    typed = (lambda text: text) if kind in (StatsKind.STRING, StatsKind.BOOLEAN, StatsKind.BINARY) \
        else (lambda text: text_to_value(kind, text))
    return {typed(value): mass for value, mass in top.shares.items() if mass > share}


def heavy_hitters(distribution: Distribution | None, share: float = HEAVY_SHARE) -> dict[Any, float]:
    """The values holding more than `share` of the sketch's values, with their shares."""
    if distribution is None or distribution.is_empty:
        return {}
    percentiles = [distribution.quantile(i / 100) for i in range(1, 100)]
    candidates = {a for a, b in pairwise(percentiles) if a == b}
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


def compare(then: ColumnStatisticsObj, then_rows: int | None, now: ColumnStatisticsObj, now_rows: int | None,
            then_top: TopValues | None = None, now_top: TopValues | None = None) -> Change:
    """What changed from one state of a column's statistics to another (with the top values a skew report
    counted on each, where one did)."""
    a, b = then.statsData.value, now.statsData.value
    earlier, later = Distribution.of_stats(then), Distribution.of_stats(now)
    shift: float | None = None
    before: dict[Any, float] | None = {}
    after: dict[Any, float] | None = {}
    if earlier is not None and later is not None:
        shift = sketch_psi(earlier, later)
        before = {column_value(v, then.colType): m for v, m in heavy_hitters(earlier).items()}
        after = {column_value(v, now.colType): m for v, m in heavy_hitters(later).items()}
    elif then_top is not None and now_top is not None:
        shift = top_values_psi(then_top, now_top)
        before, after = top_value_hitters(then_top, then.colType), top_value_hitters(now_top, now.colType)
    if before is None or after is None:  # a top list that cannot tell
        before = after = {}
    return Change(null_fraction(then, then_rows), null_fraction(now, now_rows), getattr(a, "numDVs", None),
                  getattr(b, "numDVs", None), getattr(a, "lowValue", None), getattr(b, "lowValue", None),
                  getattr(a, "highValue", None), getattr(b, "highValue", None), shift,
                  tuple(v for v in after if v not in before), tuple(v for v in before if v not in after))
