"""Skew reports: heavy hitters per partition and for the whole table, how they drift across partitions,
and which values to declare skewed for list bucketing — from one Spark query.

Two modes:
- "exact": count every (partition, value); one aggregation of those counts per partition keeps its top
  values with `min_by(..., n)` and gives rows, NULLs, distinct values and the exact lower median
  frequency (`percentile_disc`). The table's top k are merged from the partitions' top n (n = RANKED,
  at least k) where the lists prove them: a value missing from a partition's list has at most that
  list's last count there, so when the k-th merged count exceeds what any other value could reach,
  and each of the k is in every partition's list, the counts are the table's exact counts. Then the
  table's distinct values are an HLL estimate (`estimated`) and its median frequency is not known,
  unless every partition's list holds all its values. Where the lists prove nothing (no value stands
  out: unique ids), a second query aggregates every value for the table, exactly.
  Only n values and five figures per partition reach the driver.
- "approx": Spark's `approx_top_k` (a DataSketches frequent-items sketch per partition, combined for
  the table). Its guarantee: each reported count is within 2 * rows / max_items of the true count,
  and counts are exact when a partition has fewer than max_items distinct values. It keeps no
  distinct count, so the median frequency is not reported in this mode.

NULL is never a skewed value (Hive puts rows with a NULL skewed column in the default list-bucketing
directory): rows with a NULL in any of the columns are counted per partition (`nulls`) and kept out
of the ranking, the recommendation, the statement and the scan fractions.
"""
from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import cast

import pandas as pd
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..column_statistics.frequent_items import FrequentItems
from ..column_statistics.partition_values import canonical_value
from ..column_statistics.sketches import sketch_ndv, union
from ..errors import InvalidArgument, QueryError
from ..metastore import SkewedInfo, Table
from ..metastore.rows.levels import TABLE_LEVEL
from ..quoting import column_ref, comment, identifier, qualified
from ..stats.sketches import ndv_input
from .spec import skewed_clause


class SkewMode(StrEnum):
    """How a skew report counts a column's values: exactly (a group-by, ranked per partition), or by a
    frequent-items sketch with bounds (exact below max_items distinct values a partition)."""
    EXACT = "exact"
    APPROX = "approx"


MODES = tuple(SkewMode)
MAX_K = 100_000  # Spark's bound on min_by's k, which ranks the exact mode's values
# Values each partition ranks in exact mode so the table's top k merge from the lists: ranking 100 costs
# what ranking 20 does (measured 10M rows, 30 partitions: 1.85 s against 1.84 s).
RANKED = 100
# 10M rows, 30 partitions, alternated runs against a plain groupBy(ds, x).count(): approx 0.82x; exact
# 1.56x when the table's values were aggregated a second time (+0.6 s), about 1.2x merged from the lists;
# with fewer than max_items distinct values per partition approximate counts are exact
DEFAULT_MODE = SkewMode.APPROX
# a value stands out of a column's spread when it holds at least this many times what the next value holds
STANDS_OUT = 2.0


@dataclass
class SkewReport:
    """Heavy hitters of `columns` of `table`. `frame` has partition, value, count, share, rank (the
    top k non-NULL values of every partition and of TABLE_LEVEL); `totals` rows per partition; `nulls`
    rows per partition with a NULL in any of the columns; `distinct` and `median` (exact mode) the
    distinct non-NULL values and their median frequency per partition; `estimated` the partitions (the
    table) whose `distinct` is an HLL estimate, not a count."""

    table: Table
    columns: list[str]
    mode: str
    top: int  # the most frequent values each partition lists
    min_share: float
    max_keys: int
    frame: pd.DataFrame
    totals: dict[str, int]
    distinct: dict[str, int] = field(default_factory=dict)
    median: dict[str, float] = field(default_factory=dict)
    max_items: int | None = None
    nulls: dict[str, int] = field(default_factory=dict)
    estimated: set[str] = field(default_factory=set)
    source: str = "scan"  # or where the counts came from without one ("statistics ...")

    @property
    def partitions(self) -> list[str]:
        return sorted(p for p in self.totals if p != TABLE_LEVEL)

    @property
    def column(self) -> str:
        return ", ".join(self.columns)

    def _rows(self, partition: str | None) -> pd.DataFrame:
        return self.frame[self.frame.partition == (partition or TABLE_LEVEL)].sort_values("rank")

    def for_partition(self, partition: str | None = None) -> pd.DataFrame:
        """The top k of one partition (None or TABLE_LEVEL: the whole table): partition, value, count,
        share, rank."""
        return self._rows(partition).reset_index(drop=True)

    def heavy_hitters(self, partition: str | None = None) -> pd.DataFrame:
        """value, count, share of the values holding at least `min_share` of the rows (at most k);
        `value` is a tuple when the report is over several columns. None: the whole table."""
        rows = self._rows(partition)
        rows = rows[rows.share >= self.min_share]
        return rows[["value", "count", "share"]].reset_index(drop=True)

    def top_share(self, partition: str | None = None) -> float:
        """The share of rows held by the top k values."""
        total = self.totals.get(partition or TABLE_LEVEL, 0)
        return float(self._rows(partition)["count"].sum() / total) if total else 0.0

    def others(self, partition: str | None = None) -> int:
        """Rows holding a non-NULL value outside the top k."""
        return int(self.totals.get(partition or TABLE_LEVEL, 0) - self._rows(partition)["count"].sum()
                   - self.null_count(partition))

    def null_count(self, partition: str | None = None) -> int:
        """Rows with a NULL in any of the columns (they go to the default list-bucketing directory)."""
        return int(self.nulls.get(partition or TABLE_LEVEL, 0))

    def null_share(self, partition: str | None = None) -> float:
        total = self.totals.get(partition or TABLE_LEVEL, 0)
        return self.null_count(partition) / total if total else 0.0

    def measures(self) -> pd.DataFrame:
        """Per partition and for the table: rows, distinct values (and whether that is an estimate), top-k
        share, max over median frequency (None where the median is not known)."""
        counts = self.frame.groupby("partition")["count"]  # one pass: 100,000 partitions stay linear
        tops, sums = counts.max().to_dict(), counts.sum().to_dict()
        out = []
        for part in self.partitions + [TABLE_LEVEL]:
            top, total = int(tops.get(part, 0)), self.totals.get(part, 0)
            median = self.median.get(part)
            out.append({"partition": part, "rows": total, "nulls": self.null_count(part),
                        "distinct": self.distinct.get(part), "distinct_estimated": part in self.estimated,
                        "top_k_share": float(sums.get(part, 0) / total) if total else 0.0, "max_count": top,
                        "max_over_median": (top / median) if median else None})
        return pd.DataFrame(out)

    def drift(self) -> pd.DataFrame:
        """Heavy-hitter sets of consecutive partitions: keys entering and leaving, and their overlap
        (Jaccard: shared / either)."""
        out = []
        previous = None
        for part in self.partitions:
            current = set(self.heavy_hitters(part)["value"])
            if previous is not None:
                either = previous[1] | current
                out.append({"partition": part, "after": previous[0], "entered": sorted(current - previous[1], key=str),
                            "left": sorted(previous[1] - current, key=str),
                            "overlap": len(previous[1] & current) / len(either) if either else 1.0})
            previous = (part, current)
        return pd.DataFrame(out, columns=["partition", "after", "entered", "left", "overlap"])

    def summary(self) -> str:
        """One line: the columns, the rows, what the top values hold, the values to declare skewed and where the
        counts came from."""
        parts = self.partitions
        where = f"{len(parts):,} partition{'s' if len(parts) != 1 else ''}" if parts else "the table"
        declared = (f"{', '.join(map(str, self.recommended))} ({self.covered_share:.1%} of the rows)"
                    if self.recommended else f"none (no value holds {self.min_share:.0%} of the rows)"
                    if not len(self.heavy_hitters()) else "none (no value stands out of the others)")
        rows = self.totals.get(TABLE_LEVEL, 0)
        head = f"Skew of {self.table.qualified_name}.{', '.join(self.columns)} ({self.mode}, {self.source}): "
        if not rows:
            return head + f"no rows in {where}: nothing is skewed"
        return (head + f"{rows:,} rows in {where}; the top {len(self._rows(None)):,} values hold "
                f"{self.top_share():.1%}; to declare skewed: {declared}")

    def __repr__(self) -> str:
        """The summary and the table's heavy hitters (a report's frame holds every partition's top k)."""
        return f"{self.summary()}\n{self.heavy_hitters().to_string(index=False)}"

    def _repr_html_(self) -> str:
        return f"<p>{html.escape(self.summary())}</p>" + self.heavy_hitters().to_html(index=False)

    def standing_out(self) -> pd.DataFrame:
        """value, count, share of the values that stand out of the column's own spread: those above the widest
        gap in the table's shares, most frequent first, where that gap is a ratio of at least STANDS_OUT (a
        value holding twice what the next holds). The shares compared are the listed values' and, where values
        were left out of the list, a typical left-out value's (its median frequency, or what the others hold
        over their number); a cut after every value is no cut. Of those, the ones passing the seed's floor
        (`min_share`), at most `max_keys`. None stand out of a flat column."""
        rows = self._rows(None)[["value", "count", "share"]].reset_index(drop=True)
        if rows.empty:
            return rows
        shares = [float(s) for s in rows["share"]]
        beyond = self._typical_left_out(len(shares))
        following = shares[1:] + ([beyond] if beyond is not None else [])
        # the last share has a follower only where values were left out: without one, it is no cut
        ratios = [share / after if after > 0 else math.inf for share, after in zip(shares, following, strict=False)]
        if not ratios or max(ratios) < STANDS_OUT:
            return rows.iloc[:0]
        cut = ratios.index(max(ratios)) + 1
        chosen = rows.head(cut)
        return chosen[chosen["share"] >= self.min_share].head(self.max_keys).reset_index(drop=True)

    def _typical_left_out(self, listed: int) -> float | None:
        """The share of a typical value the table's list leaves out; None when it lists every value."""
        total = self.totals.get(TABLE_LEVEL, 0)
        distinct = self.distinct.get(TABLE_LEVEL)
        if not total or (distinct is not None and distinct <= listed):
            return None
        median = self.median.get(TABLE_LEVEL)
        if median:
            return float(median) / total
        if distinct is None:
            return None
        return max(0, self.others()) / (distinct - listed) / total

    @property
    def recommended(self) -> list:
        """The values to declare skewed: those that stand out of the column's spread (`standing_out`), each
        past the seed's floor (`min_share`), at most `max_keys` — few keys, each holding a real share of the
        rows, and hotter than the rest."""
        return list(self.standing_out()["value"])

    @property
    def covered_share(self) -> float:
        """The share of the table's rows the recommended values hold."""
        return float(self.standing_out()["share"].sum())

    def scan_fractions(self) -> pd.DataFrame:
        """The fraction of a partition a query `column = v` reads without and with list bucketing on the
        recommended values, for the most frequent skewed value and for a value that is not skewed."""
        rows = []
        skewed = self.standing_out()
        if len(skewed):
            top = skewed.iloc[0]
            rows.append({"query": f"{self._predicate(top.value)} (skewed)", "without": 1.0, "with": float(top.share)})
        rows.append({"query": " AND ".join(f"{c} = <other>" for c in self.columns) + " (not skewed)",
                     "without": 1.0, "with": 1.0 - self.covered_share})
        return pd.DataFrame(rows)

    def partial_key_pruning(self) -> pd.DataFrame:
        """With several skewed columns: what a query naming one column (`c = v`) reads — the directories
        of the skewed tuples with that component, plus the default directory, as the seed explains."""
        if len(self.columns) < 2:
            return pd.DataFrame(columns=["column", "value", "reads"])
        skewed = self.standing_out()
        rest = 1.0 - self.covered_share
        rows = []
        for i, column in enumerate(self.columns):
            for component in sorted({v[i] for v in skewed["value"]}, key=str):
                share = float(skewed[skewed["value"].map(lambda v, i=i, component=component: v[i] == component)]["share"].sum())
                rows.append({"column": column, "value": component, "reads": share + rest})
        return pd.DataFrame(rows, columns=["column", "value", "reads"])

    @property
    def skewed_info(self) -> SkewedInfo:
        types = [self.table.column_type(c) for c in self.columns]
        values = [[canonical_value(c, t, value_as_text(x), what="skewed value")
                   for c, t, x in zip(self.columns, types, v, strict=True)]
                  for v in (self.recommended if len(self.columns) > 1 else [(v,) for v in self.recommended])]
        return SkewedInfo(list(self.columns), cast(list[list[str]], values))  # heavy hitters are never NULL

    @property
    def statement(self) -> str:
        """The ALTER TABLE statement that applies the recommendation."""
        if not self.recommended:
            why = f"holds {self.min_share:.0%} of the rows" if not len(self.heavy_hitters()) else "stands out"
            return comment(f"no value of {', '.join(map(identifier, self.columns))} {why}: nothing to skew")
        return (f"ALTER TABLE {qualified(self.table.dbName, self.table.tableName)} "
                f"{skewed_clause(self.skewed_info, self.table, stored_as_directories=True)}")

    def notes(self) -> list[str]:
        """Whether the seed's conditions for list bucketing hold, in words."""
        notes = []
        passing = self.heavy_hitters()
        if not self.recommended and not len(passing):
            notes.append(f"No value holds {self.min_share:.0%} of the rows; list bucketing would not pay off.")
        elif not self.recommended:
            shares = passing["share"]
            notes.append(f"No value stands out: the {len(passing)} holding {self.min_share:.0%} or more hold "
                         f"{float(shares.min()):.1%} to {float(shares.max()):.1%} each, none twice what the next "
                         "holds; the column is flat rather than skewed, and one directory per value would save "
                         "each query little.")
            if self._typical_left_out(len(self._rows(None))) is None and self.others() > 0:
                notes.append(f"What the values after the top {self.top} hold is not known here (no distinct count "
                             f"in {self.mode} mode): a larger top may show a value standing out of those after it.")
        elif self.covered_share < 0.5:
            notes.append(f"The skewed values hold only {self.covered_share:.0%} of the rows, so a query on another "
                         f"value still reads {1 - self.covered_share:.0%} of each partition.")
        standing = self.standing_out()
        if len(standing) == self.max_keys and len(passing) > self.max_keys:
            notes.append(f"More than {self.max_keys} values stand out; only the largest are recommended, as the "
                         "metastore keeps the list per partition.")
        drift = self.drift()
        if len(drift) and drift["overlap"].min() < 0.5:
            notes.append("The heavy hitters change between partitions (overlap below 50%): refresh the skew "
                         "spec as the data moves; ALTER affects partitions written after it.")
        return notes

    def _predicate(self, value) -> str:
        values = value if len(self.columns) > 1 else (value,)
        return " AND ".join(f"{c} = {v!r}" for c, v in zip(self.columns, values, strict=True))


def value_as_text(value) -> str:
    """A counted value as text: a string as it is, a boolean as JSON (true), anything else by str."""
    return value if isinstance(value, str) else json.dumps(value) if isinstance(value, bool) else str(value)


def skew_report(frame: DataFrame, table: Table, columns: list[str], top: int = 20, min_share: float = 0.02,
                mode: str = DEFAULT_MODE, max_keys: int = 10, max_items: int = 10_000,
                footers: dict[str, tuple[int, int | None]] | None = None,
                distinct: int | None = None) -> SkewReport:
    """One Spark query over `frame` (the table's rows) grouped by partition and `columns`. `footers` (approx
    mode): each partition's rows and NULLs of the one column (None: not known) as the files' footers count
    them, by the partition's name as the report spells it; the query then counts neither. `distinct` (exact
    mode): the table's distinct values as its statistics estimate them, for a table level merged from the
    partitions' lists; without it the query sketches them too."""
    check_options(mode, top, min_share, max_keys, max_items)
    # grouped by the keys as they are: the partition's name is built on the aggregated rows, not on every row
    keys = [F.col(column_ref(key)).alias(f"k{i}") for i, key in enumerate(table.partition_key_names)]
    if mode == "exact":
        return _exact(frame, table, columns, keys, top, min_share, max_keys, distinct)
    return _approx(frame, table, columns, keys, top, min_share, max_keys, max_items, footers)


def check_options(mode: str, top: int, min_share: float, max_keys: int = 10, max_items: int = 10_000) -> None:
    """Raises InvalidArgument naming the first option that is out of range."""
    if mode not in MODES:
        raise InvalidArgument(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    for name, value, low in (("top", top, 1), ("max_keys", max_keys, 1), ("max_items", max_items, 2)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InvalidArgument(f"{name} takes a whole number of at least {low}, not {value!r}")
    if top > MAX_K:
        raise InvalidArgument(f"top takes at most {MAX_K:,} values per partition, not {top:,}")
    if isinstance(min_share, bool) or not isinstance(min_share, (int, float)) or not 0 <= min_share <= 1:
        raise InvalidArgument(f"min_share is a fraction between 0 and 1, not {min_share!r}")


def _any_null(refs: list[Column]) -> Column:
    condition = refs[0].isNull()
    for ref in refs[1:]:
        condition = condition | ref.isNull()
    return condition


def _partition_label(table: Table) -> Column:
    """The partition's name from the aliased key columns k0, k1, ... of an aggregated row."""
    keys = table.partition_key_names
    if not keys:
        return F.lit(TABLE_LEVEL).alias("partition")
    return F.concat_ws("/", *[F.concat(F.lit(f"{key}="), F.coalesce(F.col(f"k{i}").cast("string"),
                                                                     F.lit("__HIVE_DEFAULT_PARTITION__")))
                              for i, key in enumerate(keys)]).alias("partition")


def _exact(frame, table, columns, keys, k, min_share, max_keys, distinct_estimate: int | None = None) -> SkewReport:
    names = [f"v{i}" for i in range(len(columns))]
    key_names = [f"k{i}" for i in range(len(keys))]
    counts = frame.groupBy(*keys, *[F.col(column_ref(c)).alias(n) for c, n in zip(columns, names, strict=True)]).count() \
        .withColumn("is_null", _any_null([F.col(n) for n in names]))
    ranked = max(k, RANKED) if table.is_partitioned else k
    measures = _exact_measures(names, ranked)
    if table.is_partitioned and distinct_estimate is None:  # the table's distinct values, should the lists merge
        image = ndv_input(F.col(names[0]), table.column_type(columns[0])) if len(names) == 1 else F.xxhash64(*names)
        measures.append(F.hll_sketch_agg(F.when(~F.col("is_null"), image)).alias("sketch"))
    per_partition = counts.groupBy(*key_names).agg(*measures).select(_partition_label(table), "*")
    lists = [_RankedValues.of(r, names) for r in per_partition.collect() if r["rows"]]  # n values, five figures
    if table.is_partitioned:
        lists.append(_merged(lists, k, distinct_estimate) or _table_level(frame, columns, names, k))
    records, totals, nulls, distinct, median, estimated = [], {}, {}, {}, {}, set()
    for ranked_values in lists:
        part = ranked_values.partition
        totals[part], nulls[part], distinct[part] = ranked_values.rows, ranked_values.nulls, ranked_values.distinct
        if ranked_values.median is not None:
            median[part] = ranked_values.median
        if ranked_values.estimated:
            estimated.add(part)
        records += [{"partition": part, "value": value, "count": count, "rank": rank}
                    for rank, (value, count) in enumerate(ranked_values.top[:k], start=1)]
    return SkewReport(table, list(columns), "exact", k, min_share, max_keys, _frame(records, totals), totals,
                      distinct, median, nulls=nulls, estimated=estimated)


@dataclass
class _RankedValues:
    """One partition's (or the table's) most frequent values, ranked by count with ties by value, and its
    figures; `sketch` an HLL of the values' hashes."""

    partition: str
    top: list[tuple]
    rows: int
    nulls: int
    distinct: int
    median: float | None
    sketch: bytes | None = None
    estimated: bool = False

    @classmethod
    def of(cls, row, names: list[str]) -> _RankedValues:
        top = [(entry[names[0]] if len(names) == 1 else tuple(entry[n] for n in names), int(entry["count"]))
               for entry in row["top"] or []]
        sketch = row.asDict().get("sketch")
        return cls(row["partition"], top, int(row["rows"]), int(row["nulls"]), int(row["distinct"]),
                   None if row["median"] is None else float(row["median"]), None if sketch is None else bytes(sketch))

    @property
    def floor(self) -> int:
        """The most rows a value outside `top` can hold here: none when `top` holds every value."""
        return 0 if len(self.top) == self.distinct else self.top[-1][1]


def _merged(lists: list[_RankedValues], k: int, distinct_estimate: int | None = None) -> _RankedValues | None:
    """The table's top k merged from the partitions' ranked values, or None where the lists cannot prove
    them: each of the k must be in every list that does not hold all its partition's values (so its
    count is the table's), and the k-th count must exceed the most any other value could hold (its
    counts plus the floor of each list it is missing from; a value in no list, the sum of floors)."""
    if len(lists) == 1:  # a report over one partition: the table is that partition
        only = lists[0]
        return _RankedValues(TABLE_LEVEL, only.top, only.rows, only.nulls, only.distinct, only.median)
    counts: dict = {}
    floors_met: dict = {}  # per value, the floors of the lists holding it
    for ranked_values in lists:
        for value, count in ranked_values.top:
            if _unmergeable(value):
                return None
            counts[value] = counts.get(value, 0) + count
            floors_met[value] = floors_met.get(value, 0) + ranked_values.floor
    floors = sum(r.floor for r in lists)
    ordered = sorted(counts, key=lambda v: (-counts[v], v))  # Python orders these types as Spark does
    top, others = ordered[:k], ordered[k:]
    if floors:
        if len(top) < k or any(floors_met[v] != floors for v in top):
            return None  # the table has values no list holds, or a top value's count is not known
        least = counts[top[-1]]
        # a value every list holds has its true count and the sort placed it; another may hold up to its
        # counts plus the missing lists' floors, and a value no list holds up to every floor
        if least <= floors or any(counts[v] + floors - floors_met[v] >= least
                                  for v in others if floors_met[v] != floors):
            return None
    rows, nulls = sum(r.rows for r in lists), sum(r.nulls for r in lists)
    merged = [(v, counts[v]) for v in top]
    if not floors:  # every list holds all its partition's values: the merged counts are every value's
        frequencies = sorted(counts.values())
        median = float(frequencies[(len(frequencies) + 1) // 2 - 1]) if frequencies else None
        return _RankedValues(TABLE_LEVEL, merged, rows, nulls, len(counts), median)
    if distinct_estimate is None:
        distinct_estimate = sketch_ndv(union([r.sketch for r in lists if r.sketch is not None]), rows - nulls)
    distinct = min(max(distinct_estimate, len(counts)), rows - nulls)
    return _RankedValues(TABLE_LEVEL, merged, rows, nulls, distinct, None, estimated=True)


def _table_level(frame: DataFrame, columns: list[str], names: list[str], k: int) -> _RankedValues:
    """The table's top k, rows, NULLs, distinct values and median frequency from every value's count: a
    second query, grouped by the values alone."""
    counts = frame.groupBy(*[F.col(column_ref(c)).alias(n) for c, n in zip(columns, names, strict=True)]).count() \
        .withColumn("is_null", _any_null([F.col(n) for n in names]))
    row = counts.agg(*_exact_measures(names, k)).select(F.lit(TABLE_LEVEL).alias("partition"), "*").first()
    return _RankedValues.of(row, names)


def _unmergeable(value) -> bool:
    """A NaN equals no value in Python, so its counts from two partitions would not add up."""
    parts = value if isinstance(value, tuple) else (value,)
    return any(isinstance(p, float) and math.isnan(p) for p in parts)


def _exact_measures(names: list[str], k: int) -> list[Column]:
    """Over one count per value (and `is_null`): the k most frequent values, by count with ties by value
    so reports repeat, NULL never taking a place; rows, NULLs, distinct values and the lower median
    frequency (the smallest count that at least half of the values have or stay under)."""
    counted = ~F.col("is_null")
    item = F.struct(*[F.col(n) for n in names], F.col("count"))
    order = F.struct((-F.col("count")).alias("order"), *[F.col(n) for n in names])
    return [F.min_by(item, F.when(counted, order), k).alias("top"),
            F.sum("count").alias("rows"),
            F.sum(F.when(F.col("is_null"), F.col("count")).otherwise(F.lit(0))).alias("nulls"),
            F.count_if(counted).alias("distinct"),
            F.expr("percentile_disc(0.5) WITHIN GROUP (ORDER BY count) FILTER (WHERE NOT is_null)").alias("median")]


def _approx(frame, table, columns, keys, k, min_share, max_keys, max_items, footers=None) -> SkewReport:
    refs = [F.col(column_ref(c)) for c in columns]
    is_null = _any_null(refs)
    if len(columns) == 1:
        item = refs[0]
    else:  # approx_top_k takes one primitive value: the tuple as JSON text, decoded afterwards
        item = F.when(~is_null, F.to_json(F.struct(*[r.alias(f"v{i}") for i, r in enumerate(refs)])))
    # the sketch may report NULL as an item: ask for one more and drop it, NULL is counted apart
    wanted = int(k) + 1
    key_names = [f"k{i}" for i in range(len(keys))]
    # rows and NULLs the footers count are not counted again (a fifth of the query's time)
    counted_nulls = footers is None or any(nulls is None for _, nulls in footers.values())
    sketches = frame.select(*keys, item.alias("item"), is_null.alias("is_null")) \
        .groupBy(*key_names).agg(F.expr(f"approx_top_k_accumulate(item, {int(max_items)})").alias("sketch"),
                                  F.count("*").alias("total") if footers is None else F.lit(None).alias("total"),
                                  F.sum(F.col("is_null").cast("long")).alias("nulls") if counted_nulls
                                  else F.lit(None).alias("nulls"))
    per_partition = sketches.select(_partition_label(table), F.expr(f"approx_top_k_estimate(sketch, {wanted})").alias("top"),
                                    "total", "nulls")
    table_level = sketches.agg(F.expr(f"approx_top_k_estimate(approx_top_k_combine(sketch, {int(max_items)}), "
                                      f"{wanted})").alias("top"), F.sum("total").alias("total"),
                               F.sum("nulls").alias("nulls")) \
        .select(F.lit(TABLE_LEVEL).alias("partition"), "top", "total", "nulls")
    every = per_partition.unionByName(table_level) if table.is_partitioned else per_partition
    rows = every.collect()  # k + 1 items per partition
    records, totals, nulls = [], {}, {}
    if footers is not None:
        every_part = [r["partition"] for r in rows if r["partition"] != TABLE_LEVEL or not table.is_partitioned]
        missing = [label for label in every_part if label not in footers]
        if missing:
            raise QueryError(f"the files of {missing[0]} are not those the report listed: run it again")
        counted = {label: footers[label] for label in every_part}
        counted[TABLE_LEVEL] = (sum(t for t, _ in counted.values()),
                                None if counted_nulls else sum(n or 0 for _, n in counted.values()))
    for r in rows:
        total, null_rows = counted[r["partition"]] if footers is not None else (r["total"], r["nulls"])
        totals[r["partition"]] = int(total or 0)
        nulls[r["partition"]] = int((r["nulls"] if counted_nulls else null_rows) or 0)
        entries = []
        for entry in [e for e in r["top"] or [] if e["item"] is not None]:
            value = entry["item"]
            if len(columns) > 1:
                decoded = json.loads(value)
                value = tuple(decoded.get(f"v{i}") for i in range(len(columns)))
            entries.append((value, int(entry["count"])))
        # the sketch orders ties arbitrarily: order them by value, as exact mode does, before keeping k, so
        # reports repeat
        entries.sort(key=lambda e: (-e[1], str(e[0])))
        records += [{"partition": r["partition"], "value": value, "count": count, "rank": rank}
                    for rank, (value, count) in enumerate(entries[:k], start=1)]
    return SkewReport(table, list(columns), "approx", k, min_share, max_keys, _frame(records, totals), totals,
                      max_items=max_items, nulls=nulls)


def report_from_sketches(table: Table, column: str, partitions: dict[str, tuple[int, int, FrequentItems]], k: int,
                         min_share: float, max_keys: int, source: str, distinct: int | None = None) -> SkewReport:
    """An approximate report from the frequent-items sketches kept with the statistics, no scan: per partition
    label its rows, NULLs and sketch; the table level merges them. Each count is the middle of the sketch's
    bounds, within `max_items` (here the sketch's maximum error, in rows) of the true count. `distinct`: the
    table's NDV as its statistics estimate it, which tells what a value the list leaves out typically holds."""
    records, totals, nulls = [], {}, {}
    levels: dict[str, tuple[int, int, FrequentItems | None]] = dict(partitions)
    if table.is_partitioned:
        sketches = [items for _, _, items in partitions.values()]
        merged = FrequentItems.union(sketches) if sketches else None
        levels[TABLE_LEVEL] = (sum(r for r, _, _ in partitions.values()), sum(n for _, n, _ in partitions.values()),
                               merged)
    widest = 0
    for label, (rows, null_rows, items) in levels.items():
        totals[label], nulls[label] = rows, null_rows
        if items is None:
            continue
        widest = max(widest, items.max_error)
        records += [{"partition": label, "value": v.value, "count": v.estimate, "rank": rank}
                    for rank, v in enumerate(items.top(k), start=1)]
    known = {TABLE_LEVEL: distinct} if distinct is not None else {}
    return SkewReport(table, [column], "approx", k, min_share, max_keys, _frame(records, totals), totals,
                      max_items=widest, nulls=nulls, source=source, distinct=known, estimated=set(known))


def _frame(records: list[dict], totals: dict[str, int]) -> pd.DataFrame:
    """Both modes' ranked values as the report's frame, with each count's share of its partition's rows."""
    out = pd.DataFrame({"partition": pd.Series([r["partition"] for r in records], dtype=object),
                        "value": pd.Series([r["value"] for r in records], dtype=object),  # ints stay ints
                        "count": pd.Series([r["count"] for r in records], dtype="int64"),
                        "rank": pd.Series([r["rank"] for r in records], dtype="int64")})
    out["share"] = [c / totals[p] if totals.get(p) else 0.0 for p, c in zip(out["partition"], out["count"], strict=True)]
    return out.sort_values(["partition", "rank"]).reset_index(drop=True)[["partition", "value", "count", "share", "rank"]]
