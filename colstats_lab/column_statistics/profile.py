"""A profile read from the statistics a table keeps, as ydata-profiling and Deequ show one: each column's
distribution, top values, missing values and alerts, and the rules a pipeline can take from them. Nothing
here scans: every figure comes from one level's statistics (the counts, the KLL sketch, the frequent items,
the kept sums), so a profile of a table of any size costs a read of its metastore.

Where a figure comes from, and how far it can be off:
- rows, NULLs, NaNs, min and max: the statistics themselves, exact unless the level was sampled
  (`sampled` then names the tier, and `inspect.bounds()` gives each figure's band);
- mean and standard deviation: the sums ANALYZE's pass keeps (`Moments`), exact to a double's rounding;
  None for statistics gathered without them (the files' metadata, a sample, another engine);
- quantiles and the histogram: the KLL sketch, each rank within `quantiles.rank_error()` of the truth,
  so a bin's count is within twice that share of the values (`histogram["error"]` says how many rows);
- NDV: the HLL sketch (within `sketches.ndv_relative_error()`), exact where a tier says so;
- top values: the frequent-items sketch, each share within [lower, upper] of the truth.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from ..coltypes import StatsKind, parse_type
from .frequent_items import FrequentItems, sketchable
from .model import Date, Moments, Timestamp
from .quantiles import Distribution, column_value, rank_error
from .sketches import ndv_relative_error

HISTOGRAM_BINS = 20  # at most: fewer for a whole-number column with fewer distinct values in its range
TOP_VALUES = 10

# The alert rules, each a threshold a person can check against the figures (ydata-profiling's kinds)
MISSING_SHARE = 0.05     # missing: at least 5 % of the rows are NULL
ZEROS_SHARE = 0.10       # zeros: at least 10 % of the values are 0
IMBALANCE_SHARE = 0.5    # imbalance: the top value holds at least 50 % of the non-NULL values
HIGH_CARDINALITY = 50    # high cardinality: a string column with more distinct values than 50, not unique
SKEWNESS = 0.5           # skewed: Pearson's second skewness, 3 (mean - median) / sd, at least 0.5 in magnitude
                         # (Bulmer's "moderately skewed" and beyond)
ALERT_RULES = {
    "constant": "one distinct value",
    "unique": "every non-NULL value distinct, as far as the sketches tell (NDV within its HLL's error of the "
              "non-NULL rows, no value seen twice)",
    "high cardinality": f"a string column with more than {HIGH_CARDINALITY} distinct values, not unique",
    "imbalance": f"the top value holds at least {IMBALANCE_SHARE:.0%} of the non-NULL values",
    "missing": f"at least {MISSING_SHARE:.0%} of the rows are NULL",
    "zeros": f"at least {ZEROS_SHARE:.0%} of the values are 0",
    "skewed": f"|3 (mean - median) / sd| at least {SKEWNESS:g} (Pearson's second skewness)",
    "NaN": "a double column holds NaN values (apart from its NULLs)",
}


@dataclass(frozen=True)
class Alert:
    """One alert on a column: its kind (a key of ALERT_RULES) and the figure that raised it, in words."""

    kind: str
    evidence: str

    @property
    def rule(self) -> str:
        return ALERT_RULES[self.kind]


@dataclass
class ColumnProfile:
    """One column's profile at one level. Figures the level's statistics lack are None."""

    column: str
    type: str
    rows: int
    nulls: int | None
    nans: int | None = None
    ndv: int | None = None
    min: Any = None
    max: Any = None
    mean: float | None = None
    std: float | None = None
    quantiles: dict[str, Any] | None = None  # p5, q1, median, q3, p95
    histogram: dict | None = None  # {"edges": [...], "counts": [...], "error": rows a count may be off}
    top_values: dict[Any, float] = field(default_factory=dict)  # value -> share of the non-NULL values
    all_values: list | None = None  # every value, when the frequent items list them all with exact counts
    zeros: int | None = None
    zeros_exact: bool = False
    avg_len: float | None = None
    max_len: int | None = None
    length_histogram: dict | None = None  # a string's lengths binned as `histogram` (its KLL sketch of lengths)
    trues: int | None = None
    falses: int | None = None
    sampled: str = ""  # the tier when a figure is estimated ("5 % sample ..."), else ""
    accurate: bool | None = None
    reason: str = ""
    alerts: list[Alert] = field(default_factory=list)
    missing: str = ""  # why figures are absent, in words (no histogram kept, ...)
    nested: bool = False  # a struct's leaf or an array's elements: no column of its own to a frame's reader

    @property
    def non_null(self) -> int:
        return self.rows - (self.nulls or 0)

    @property
    def values(self) -> int:
        """The values that are neither NULL nor NaN: what the mean, sketches and shares count."""
        return self.non_null - (self.nans or 0)

    @property
    def distinct_fraction(self) -> float | None:
        return self.ndv / self.non_null if self.ndv is not None and self.non_null > 0 else None

    @property
    def null_fraction(self) -> float | None:
        return (self.nulls or 0) / self.rows if self.rows else None


def column_profile(column: str, type_name: str, rows: int, figures: dict, distribution: Distribution | None,
                   items: FrequentItems | None, lengths: Distribution | None = None) -> ColumnProfile:
    """A column's profile from one level's figures (`frames.level_frame`'s record: nulls, nans, ndv, min, max,
    avg_len, max_len, trues, falses, moments, tier, accurate, reason), its KLL sketch, its frequent items and, for
    a string or binary, the KLL sketch of its values' lengths."""
    kind = parse_type(type_name).stored_stats_kind
    profile = ColumnProfile(column, type_name, rows, figures.get("nulls"), figures.get("nans"),
                            figures.get("ndv"), figures.get("min"), figures.get("max"),
                            avg_len=figures.get("avg_len"), max_len=figures.get("max_len"),
                            trues=figures.get("trues"), falses=figures.get("falses"),
                            sampled=_sampled(figures.get("tier")), accurate=figures.get("accurate"),
                            reason=figures.get("reason") or "")
    missing = []
    moments = figures.get("moments")
    if moments is not None:
        profile.mean, profile.std = moments.mean(profile.values), moments.stddev(profile.values)
        if moments.sumSquaredDeviations is None and profile.values > 1:
            missing.append("no standard deviation: the values' spread is below a double's precision against their "
                           "magnitude (their mean is over 10,000 standard deviations from 0)")
    elif kind in (StatsKind.LONG, StatsKind.DOUBLE, StatsKind.DECIMAL) and profile.values > 0 and profile.sampled:
        missing.append("no mean: a sample's sums are not the level's (an ANALYZE over every value keeps them)")
    elif kind in (StatsKind.LONG, StatsKind.DOUBLE, StatsKind.DECIMAL) and profile.values > 0:
        missing.append("no mean: the statistics keep no sums (they are kept with the distribution: ALTER TABLE ... "
                       "SET TBLPROPERTIES ('colstats.kll.enable'='true'), then ANALYZE over every value)")
    if distribution is not None and not distribution.is_empty:
        profile.quantiles = {name: column_value(distribution.quantile(rank), type_name)
                             for name, rank in (("p5", 0.05), ("q1", 0.25), ("median", 0.5), ("q3", 0.75),
                                                ("p95", 0.95))}
        profile.histogram = histogram(distribution, type_name)
    elif kind in (StatsKind.LONG, StatsKind.DOUBLE, StatsKind.DECIMAL, StatsKind.DATE, StatsKind.TIMESTAMP) \
            and profile.values > 0:
        missing.append("no histogram: no KLL sketch is kept (ALTER TABLE ... SET TBLPROPERTIES "
                       "('colstats.kll.enable'='true'), or lab.set('hive.stats.kll.enable', True), then ANALYZE)")
    if isinstance(profile.max, float) and math.isnan(profile.max):  # Spark's max: NaN above every number
        # the greatest number, as pandas and ydata-profiling show it: the sketch's, which keeps no NaN
        profile.max = column_value(distribution.high, type_name) if distribution is not None else None
        if profile.max is None:
            missing.append("no max: the statistics' max is NaN and no KLL sketch keeps the greatest number")
    if kind is StatsKind.BOOLEAN and profile.trues is not None and profile.non_null > 0:
        profile.top_values = {v: n / profile.non_null for v, n in ((True, profile.trues), (False, profile.falses or 0))
                              if n}
    elif items is not None and items.rows:
        listed = items.top()
        profile.top_values = {_plain(v.value): v.estimate / items.rows for v in listed[:TOP_VALUES]}
        if items.max_error == 0 and sum(v.estimate for v in listed) == items.rows and not profile.sampled:
            profile.all_values = [_plain(v.value) for v in listed]
    elif sketchable(type_name) and profile.values > 0:
        missing.append("no top values: no frequent-items sketch is kept of it (a near-unique column keeps none; "
                       "else ANALYZE it, or name it in the table's colstats.frequent.items.columns)")
    profile.zeros, profile.zeros_exact, how = _zeros(kind, profile, items, distribution, moments)
    if profile.zeros is not None and not profile.zeros_exact:
        missing.append(f"zeros estimated: {profile.zeros:,} ({how})")
    if lengths is not None and not lengths.is_empty:
        profile.length_histogram = histogram(lengths, "bigint")
    elif kind in (StatsKind.STRING, StatsKind.BINARY) and profile.values > 0:
        missing.append("no length histogram: kept with the distributions by an ANALYZE over every value "
                       "(ALTER TABLE ... SET TBLPROPERTIES ('colstats.kll.enable'='true'))")
    profile.missing = "; ".join(missing)
    profile.alerts = alerts(profile, kind)
    return profile


def histogram(distribution: Distribution, type_name: str, bins: int = HISTOGRAM_BINS) -> dict:
    """Equal-width bins from the sketch's least to its greatest value, each bin's count from the ranks of its
    edges: a bin holds its lower edge, the last one its upper edge too. A whole-number column (lengths, dates,
    timestamps) gets bins of whole width, [v, v + w), one per value where its range has fewer than `bins`: bins a
    fraction wide would hold one value or two by turns, a comb no data has. Each count is within `error` rows of
    the truth (two ranks' error)."""
    low, high = distribution.low, distribution.high
    count = distribution.count
    if isinstance(low, int):  # whole numbers, dates, timestamps
        width = -(-(high - low + 1) // bins)
        edges: list[float] = list(range(low, high + width + 1, width))
    elif high == low:
        edges = [low, high]
    else:
        width = (high - low) / bins
        edges = [low + i * width for i in range(bins)] + [high]
    ranks = [distribution.fraction_below(edge) for edge in edges[:-1]] + [1.0]
    counts = [max(round((b - a) * count), 0) for a, b in pairwise(ranks)]
    return {"edges": [_edge(e, type_name) for e in edges], "counts": counts,
            "error": math.ceil(2 * rank_error() * count)}


def _edge(value: float, type_name: str) -> Any:
    """A bin edge as a person reads it: dates and timestamps as such, numbers as numbers."""
    kind = parse_type(type_name).stats_kind
    if kind is StatsKind.DATE:
        return Date(int(math.floor(value))).to_date().isoformat()
    if kind is StatsKind.TIMESTAMP:
        return str(Timestamp(int(value)))
    return int(value) if kind is StatsKind.LONG and float(value).is_integer() else float(value)


def _zeros(kind: StatsKind, profile: ColumnProfile, items: FrequentItems | None,
           distribution: Distribution | None, moments: Moments | None = None) -> tuple[int | None, bool, str]:
    """The zeros of a number column, whether that count is exact, and how an estimate was made: the count ANALYZE's
    pass kept beside its sums (exact); 0 when its range
    leaves 0 out or the frequent items count every value without listing it; the frequent items' count when they
    list 0 (exact where its bounds meet, else their middle). A column without frequent items (a double) whose
    range ends at 0 counts them from its KLL sketch: every value while the sketch still holds them all, else the
    share its ranks put at 0, within the sketch's rank error. Else None: a sketch's ranks around a value inside the
    range are too coarse to say a count."""
    if kind not in (StatsKind.LONG, StatsKind.DOUBLE, StatsKind.DECIMAL) or profile.values <= 0:
        return None, False, ""
    if moments is not None and moments.zeros is not None and not profile.sampled:
        return moments.zeros, True, ""
    if profile.min is not None and profile.max is not None and not (profile.min <= 0 <= profile.max):
        return 0, True, ""
    if items is not None and items.rows:
        listed = {v.value: v for v in items.top()}
        if 0 in listed:
            return listed[0].estimate, listed[0].lower == listed[0].upper, "the frequent items' bounds"
        if items.max_error == 0:
            return 0, True, ""
    if distribution is None or distribution.is_empty or not (profile.min == 0 or profile.max == 0):
        return None, False, ""
    held = distribution.exact_values()
    if held is not None:
        return sum(1 for v in held if v == 0), True, ""
    share = distribution.fraction_below(0, inclusive=True) if profile.min == 0 \
        else 1.0 - distribution.fraction_below(0, inclusive=False)
    error = rank_error()
    band = f"the KLL sketch's ranks, within {error * distribution.count:,.0f} ({error:.2%} of the values)"
    return int(round(share * distribution.count)), False, band


def alerts(profile: ColumnProfile, kind: StatsKind) -> list[Alert]:
    """The alerts of ALERT_RULES a column's figures raise, each with the figure that raised it."""
    out = []
    non_null, ndv = profile.non_null, profile.ndv
    if kind is StatsKind.BOOLEAN and profile.trues is not None:
        ndv = int((profile.trues or 0) > 0) + int((profile.falses or 0) > 0)
    if ndv == 1 and non_null > 0:
        out.append(Alert("constant", f"NDV 1 over {non_null:,} non-NULL rows"))
    unique = is_unique(profile)
    if unique:
        certain = "" if proven_unique(profile) else f" (NDV is an estimate within {ndv_relative_error():.1%}: not proof)"
        out.append(Alert("unique", f"NDV {ndv:,} of {non_null:,} non-NULL rows{certain}"))
    if kind is StatsKind.STRING and ndv is not None and ndv > HIGH_CARDINALITY and not unique:
        out.append(Alert("high cardinality", f"NDV {ndv:,}"))
    if profile.top_values and ndv != 1:
        value, share = next(iter(profile.top_values.items()))
        if share >= IMBALANCE_SHARE:
            out.append(Alert("imbalance", f"{value!s} holds {share:.1%} of the non-NULL values"))
    nulls = profile.nulls or 0
    if profile.rows and nulls / profile.rows >= MISSING_SHARE:
        out.append(Alert("missing", f"{nulls:,} NULL rows ({nulls / profile.rows:.1%})"))
    if profile.zeros and profile.values and profile.zeros / profile.values >= ZEROS_SHARE:
        out.append(Alert("zeros", f"{profile.zeros:,} zeros ({profile.zeros / profile.values:.1%})"))
    median = (profile.quantiles or {}).get("median")
    if profile.mean is not None and profile.std and isinstance(median, (int, float)):
        skewness = 3 * (profile.mean - float(median)) / profile.std
        if abs(skewness) >= SKEWNESS:
            out.append(Alert("skewed", f"3 (mean - median) / sd = {skewness:.2f}"))
    if profile.nans:
        out.append(Alert("NaN", f"{profile.nans:,} NaN values"))
    return out


def is_unique(profile: ColumnProfile) -> bool:
    """Whether the figures say every non-NULL value is distinct, as far as they can: the NDV within its sketch's
    error of the non-NULL rows and no listed value seen twice. An estimate: `proven_unique` says where it is
    certain."""
    if profile.ndv is None or profile.non_null <= 1:
        return False
    if profile.ndv < profile.non_null * (1 - ndv_relative_error()):
        return False
    return all(share * profile.non_null < 2 for share in profile.top_values.values())


def proven_unique(profile: ColumnProfile) -> bool:
    """Whether every non-NULL value is certainly distinct: the frequent items count every value exactly, once each
    (an HLL's NDV cannot tell a column with a few repeats from one with none)."""
    return profile.all_values is not None and profile.values > 1 and len(profile.all_values) == profile.values


def _sampled(tier) -> str:
    text = str(tier or "")
    return "" if text in ("", "every value", "None") else text


def _plain(value):
    """A listed value as JSON and a person take it (a date as ISO text)."""
    return value.isoformat() if hasattr(value, "isoformat") else value
