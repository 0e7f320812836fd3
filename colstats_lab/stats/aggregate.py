"""One Spark aggregation that computes every statistic of every requested column per group.

The aggregation is grouped by the partition keys (as text, the way partition directories spell
them), so one job yields each partition's statistics and sketches; nothing but those
aggregates reaches the driver.
"""
from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from ..coltypes import StatsKind, parse_type
from ..column_statistics.frequent_items import FrequentItems, sketchable
from ..column_statistics.model import (
    STATS_DATA_CLASSES,
    ColumnPath,
    ColumnStatisticsData,
    ColumnStatisticsObj,
    Date,
    Moments,
    Timestamp,
)
from ..column_statistics.partition_values import comparable_values
from ..column_statistics.quantiles import sketch_family
from ..column_statistics.sketches import NDV_LG_K, compact, sketch_ndv
from ..errors import QueryError
from ..files import DataFile, FileKeys
from ..metastore.rows.metadata_units import ColumnMetadata
from ..quoting import column_ref
from .footers import GroupFigures, group_figures
from .sketches import frequent_items_input, kll_aggregate, ndv_input

ROWS = "__rows"
# a column whose distinct values are this share of its values or more (an id) keeps no frequent items where none
# repeats, unless its table names it: none is frequent, and such a sketch only lists the values it met last (tens
# of KiB a partition); a dimension's key the table names keeps its sketch, which a join's prediction reads
NEAR_UNIQUE = 0.9
ROW_SKETCH = "__row_hll"  # compacted with the NDV sketches (`_compacted`: a key ending _hll)
_MOMENT_KINDS = (StatsKind.LONG, StatsKind.DECIMAL, StatsKind.DOUBLE)  # numbers: their sums are kept (Moments)


@dataclass(frozen=True)
class ColumnPlan:
    name: str
    type_name: str
    histogram: bool = False  # Hive's hive.stats.kll.enable: a KLL sketch of the values as well
    # minimum, maximum and NULL count come from the files' footers (footers.group_figures), not the scan
    from_footers: bool = False
    # values a frequent-items sketch tracks (colstats.frequent.items; 0: none), for sketchable types
    frequent_items: int = 0
    items_named: bool = False  # the table names the column for frequent items: kept even where near-unique
    path: tuple[str, ...] = ()  # a struct leaf's column and fields (`Table.stats_columns`); () for `name` itself
    # `element`, `key` or `value`: the values inside the array or map at path[:-1], read from its explode
    element: str = ""
    # False: no NDV sketch (a sample's row groups, whose NDV GEE estimates from their values instead)
    sketches_ndv: bool = True
    # a number's sum and sum of squares (Moments) where its distribution is kept (`histogram`): a profile's mean
    # and standard deviation, which cost the pass about a tenth more; False: none (bench/profile_cost.py)
    moments: bool = True

    @property
    def column(self) -> Column:
        """The column's values in a read of the table: a struct leaf by its path, NULL where any struct on
        the way is; an array's elements (a map's keys or values) in the read of the collection's explode."""
        if self.element:
            return F.col(f"__{self.element}")
        parts = self.path if len(self.path) > 1 else (self.name,)
        return F.col(column_ref(*parts))

    @classmethod
    def of(cls, column: ColumnPath, histogram: bool = False, frequent_items: int = 0,
           items_named: bool = False) -> ColumnPlan:
        """The plan of one of `Table.stats_columns`."""
        return cls(column.name, column.type, histogram, frequent_items=frequent_items, path=column.path,
                   element=column.element, items_named=items_named)

    @property
    def collection(self) -> tuple[str, ...]:
        """The path of the array or map an element plan's values are in."""
        return self.path[:-1]

    def exploded(self, frame: DataFrame, keys: list[Column]) -> DataFrame:
        """`keys` and a row per element of the array (per entry of the map) this element plan's values are
        in, as `__element` (`__key` and `__value`): NULL and empty collections give none."""
        collection = F.col(column_ref(*self.collection))
        names = ("__element",) if self.element == "element" else ("__key", "__value")
        return frame.select(*keys, F.explode(collection).alias(*names))

    @property
    def kind(self) -> StatsKind:
        return parse_type(self.type_name).stored_stats_kind

    def inputs(self, index: int) -> list[Column]:
        """Per-row values the aggregates read, computed in a projection below the aggregation so
        that Spark generates code for them (the sketch aggregate itself runs interpreted)."""
        col = self.column
        p = f"__c{index}_"
        kind = self.kind
        if kind is StatsKind.COLLECTION:
            value = F.when(col.isNotNull(), F.size(col))
        elif kind is StatsKind.DOUBLE:
            value = col.cast("double")
        elif kind is StatsKind.DATE:
            value = F.unix_date(col)
        elif kind is StatsKind.TIMESTAMP:
            value = F.unix_micros(col)
        else:
            value = col
        out = [value.alias(p + "v")]
        if kind in (StatsKind.STRING, StatsKind.BINARY):
            out.append(F.length(col).alias(p + "len"))
        if self.has_ndv and self.sketches_ndv:
            out.append(ndv_input(col, self.type_name).alias(p + "h"))
        if self.keeps_frequent_items:
            out.append(frequent_items_input(col, self.type_name).alias(p + "f"))
        return out

    @property
    def keeps_moments(self) -> bool:
        return self.moments and self.histogram and self.kind in _MOMENT_KINDS

    @property
    def keeps_lengths(self) -> bool:
        return self.moments and self.histogram and self.kind in (StatsKind.STRING, StatsKind.BINARY)

    @property
    def keeps_frequent_items(self) -> bool:
        return self.frequent_items > 0 and sketchable(self.type_name)

    def aggregates(self, index: int) -> list[Column]:
        p = f"__c{index}_"
        value = F.col(p + "v")
        kind = self.kind
        out = [] if self.from_footers else [F.count(value).alias(p + "nonnull")]
        if kind in (StatsKind.LONG, StatsKind.DECIMAL, StatsKind.DOUBLE, StatsKind.DATE, StatsKind.TIMESTAMP):
            out += [] if self.from_footers else [F.min(value).alias(p + "min"), F.max(value).alias(p + "max")]
        if kind is StatsKind.DOUBLE:  # NaN apart from NULL (footers leave NaN out: always counted here)
            out.append(F.count_if(F.isnan(value)).alias(p + "nans"))
        if self.keeps_moments:  # what a profile's mean and standard deviation need, in the same pass
            # as doubles, so that a long's sums cannot overflow; NaN left out. Computed inside the aggregate, as
            # two sums: an input column per sum, or var_pop's three buffers, cost the pass 10-20 % more (measured)
            number = F.when(~F.isnan(value), value) if kind is StatsKind.DOUBLE else value.cast("double")
            out += [F.sum(number).alias(p + "sum"), F.sum(number * number).alias(p + "squares"),
                    F.count_if(value == 0).alias(p + "zeros")]  # -0.0 too, as pandas counts it; NaN is no zero
        elif kind is StatsKind.COLLECTION:  # the elements of each: fewest, most and in all
            out += [F.min(value).alias(p + "min"), F.max(value).alias(p + "max"), F.sum(value).alias(p + "sumlen")]
        elif kind in (StatsKind.STRING, StatsKind.BINARY):
            length = F.col(p + "len")
            out += [F.max(length).alias(p + "maxlen"), F.sum(length).alias(p + "sumlen")]
            if self.keeps_lengths:  # a profile's length histogram, with the distributions
                out.append(kll_aggregate(length, "bigint").alias(p + "lengths"))  # type: ignore[union-attr]
        elif kind is StatsKind.BOOLEAN:
            out += [F.count_if(value).alias(p + "trues"), F.count_if(~value).alias(p + "falses")]
        if self.has_ndv and self.sketches_ndv:
            out.append(F.hll_sketch_agg(F.col(p + "h"), NDV_LG_K).alias(p + "hll"))
        kll = kll_aggregate(value, self.type_name) if self.histogram else None
        if kll is not None:
            out.append(kll.alias(p + "kll"))
        if self.keeps_frequent_items:
            out.append(F.expr(f"approx_top_k_accumulate({p}f, {int(self.frequent_items)}).sketch").alias(p + "freq"))
        return out

    @property
    def has_ndv(self) -> bool:
        """Hive keeps no NDV for booleans and binaries; the lab none of an array's or map's size, nor of a struct."""
        return self.kind not in (StatsKind.BOOLEAN, StatsKind.BINARY, StatsKind.COLLECTION, StatsKind.STRUCT)

    def stats_obj(self, index: int, row: dict | None, num_rows: int,
                  footer: ColumnMetadata | None = None) -> ColumnStatisticsObj:
        """The column's statistics from one aggregate row (None: a group with no rows) and, for a column
        `from_footers`, the group's footer figures. `num_rows` of an element plan are the elements."""
        p = f"__c{index}_"
        from_footer: dict[str, Any] = ({"nonnull": num_rows - (footer.nulls or 0), "min": footer.low,
                                         "max": footer.high} if self.from_footers and footer is not None else {})

        def get(key: str) -> Any:
            if key in from_footer:
                return from_footer[key]
            return row[p + key] if row is not None else None
        non_null = get("nonnull") or 0
        nulls = num_rows - non_null
        kind = self.kind
        hll = get("hll") if self.has_ndv and self.sketches_ndv else None
        sketch = bytes(hll) if hll is not None else None  # compacted as it was received (`_compacted`)
        ndv = sketch_ndv(sketch, non_null) if self.has_ndv else None
        family = sketch_family(self.type_name) if self.histogram else None
        kll = get("kll") if family is not None else None
        histogram = bytes(kll) if kll is not None else None
        moments = (_moments(get("sum"), get("squares"), non_null - (get("nans") or 0 if kind is StatsKind.DOUBLE else 0),
                            get("min") is not None and get("min") == get("max"), get("zeros"))
                   if self.keeps_moments else None)
        lengths = get("lengths") if self.keeps_lengths else None
        if kind is StatsKind.DOUBLE:
            nans = get("nans")
            data = STATS_DATA_CLASSES[kind](get("min"), get("max"), nulls, ndv, sketch, histogram,
                                            int(nans or 0) if row is not None or not num_rows else None, moments)
        elif kind in (StatsKind.LONG, StatsKind.DECIMAL):
            data = STATS_DATA_CLASSES[kind](get("min"), get("max"), nulls, ndv, sketch, histogram, moments)
        elif kind is StatsKind.DATE:
            low, high = get("min"), get("max")
            data = STATS_DATA_CLASSES[kind](None if low is None else Date(low), None if high is None else Date(high),
                                            nulls, ndv, sketch, histogram)
        elif kind is StatsKind.TIMESTAMP:
            low, high = get("min"), get("max")
            data = STATS_DATA_CLASSES[kind](None if low is None else Timestamp(low),
                                            None if high is None else Timestamp(high), nulls, ndv, sketch, histogram)
        elif kind is StatsKind.STRING:
            data = STATS_DATA_CLASSES[kind](get("maxlen") or 0, _avg(get("sumlen"), num_rows), nulls, ndv, sketch,
                                            None if lengths is None else bytes(lengths))
        elif kind is StatsKind.BINARY:
            data = STATS_DATA_CLASSES[kind](get("maxlen") or 0, _avg(get("sumlen"), num_rows), nulls, None,
                                            None if lengths is None else bytes(lengths))
        elif kind is StatsKind.COLLECTION:
            data = STATS_DATA_CLASSES[kind](get("min"), get("max"), _avg(get("sumlen"), num_rows), nulls)
        elif kind is StatsKind.STRUCT:
            data = STATS_DATA_CLASSES[kind](nulls)
        else:
            data = STATS_DATA_CLASSES[kind](get("trues") or 0, get("falses") or 0, nulls)
        frequent = get("freq") if self.keeps_frequent_items else None
        if frequent is not None and ndv is not None and not self.items_named and non_null > 2 \
                and ndv >= NEAR_UNIQUE * non_null and not FrequentItems.of(bytes(frequent), self.type_name).repeats():
            frequent = None  # near-unique, and no value seen twice: the NDV says all the sketch would
        return ColumnStatisticsObj(self.name, self.type_name, ColumnStatisticsData.of(data),
                                   bytes(frequent) if frequent is not None else None,
                                   numValues=num_rows if self.element else None)


def _moments(total, squares, count: int, one_value: bool, zeros: int | None = None) -> Moments | None:
    """The kept sums of a number column from its values' sum and sum of squares over `count` values (`one_value`:
    its min is its max); None where it has no value, or an infinite one (whose mean is not a number a profile can
    show). The squared deviations are the difference of the two; where that difference cancels more than
    PRECISION_LOST of a double's digits (values far from zero against their spread), they are unknown rather
    than wrong."""
    if total is None or squares is None or count <= 0 or not math.isfinite(total) or not math.isfinite(squares):
        return None
    zeros = None if zeros is None else int(zeros)
    if one_value:
        return Moments(float(total), 0.0, zeros)
    deviations = squares - total * total / count
    if deviations < squares * PRECISION_LOST:
        return Moments(float(total), None, zeros)
    return Moments(float(total), float(deviations), zeros)


PRECISION_LOST = 1e-8  # the squared deviations keep at least 7 significant digits of the sum of squares' 16


def _avg(total, rows: int) -> float:
    return float(total or 0) / rows if rows else 0.0


@dataclass
class GroupStats:
    """One group's (partition's) row count and, per column, its statistics."""

    values: tuple[str | None, ...]
    num_rows: int
    columns: list[ColumnStatisticsObj]
    row_sketch: bytes | None = None  # the compact HLL of each whole row's hash (aggregate_stats' `rows_sketched`)


@lru_cache(maxsize=64)
def _aggregation(session: SparkSession, columns: tuple[ColumnPlan, ...]) -> tuple[tuple[Column, ...], tuple[Column, ...]]:
    """The projected inputs and the aggregates of `columns`. Building them costs a few gateway calls
    per statistic (about 200 for 20 columns), as much as a small partition's job, so they are built
    once per session and set of columns: they name columns and never bind to one DataFrame."""
    inputs = tuple(c for i, plan in enumerate(columns) for c in plan.inputs(i))
    exprs = (F.count(F.lit(1)).alias(ROWS), *(a for i, plan in enumerate(columns) for a in plan.aggregates(i)))
    return inputs, exprs


def aggregate_stats(frame: DataFrame, group_keys: list[str], columns: list[ColumnPlan],
                    footers: dict[tuple, GroupFigures] | None = None,
                    rows_sketched: bool = False, group_values: list[tuple] | None = None) -> dict[tuple, GroupStats]:
    """Runs the one aggregation; returns the stats of each group that has rows, keyed by the
    group's partition values as text (the empty tuple when there are no keys): `aggregate_groups`, held."""
    return {group.values: group for group in aggregate_groups(frame, group_keys, columns, footers, rows_sketched,
                                                              group_values)}


def aggregate_groups(frame: DataFrame, group_keys: list[str], columns: list[ColumnPlan],
                     footers: dict[tuple, GroupFigures] | None = None,
                     rows_sketched: bool = False, group_values: list[tuple] | None = None) -> Iterator[GroupStats]:
    """Runs the one aggregation and yields the stats of each group that has rows as Spark hands it over, keyed by
    the group's partition values as text (the empty tuple when there are no keys). `footers` holds each
    group's footer figures of the columns planned `from_footers`; a group whose footers count other rows
    than the scan read (a file rewritten meanwhile) raises, as its figures would mix two states.
    The values inside an array or a map (element plans) are aggregated over its explode: one more
    aggregation per such collection, as their rows are not the table's (those are held until the groups pass).
    With `rows_sketched` each group also keeps an HLL sketch of its whole rows' hashes (every column of `frame`),
    in the same pass: its distinct rows.
    `group_values`: the partitions' values as the table keeps them (its folders' spelling, `k=1.50`); a group
    Spark spells otherwise (`1.5`, `1.0E-7`) is keyed by the partition of the same value."""
    keys = [F.col(column_ref(k)).cast("string").alias(f"__k{i}") for i, k in enumerate(group_keys)]
    key_names = [f"__k{i}" for i in range(len(group_keys))]
    row_plans = [p for p in columns if not p.element]
    row_hash = [row_hash_input(frame).alias("__rowhash")] if rows_sketched else []
    groups = len(group_values or footers or ())
    spelled = _as_the_table_spells(frame, group_keys, list(footers or {}) + list(group_values or []))
    by_collection: dict[tuple[str, ...], list[ColumnPlan]] = {}
    for plan in columns:
        if plan.element:
            by_collection.setdefault(plan.collection, []).append(plan)
    inside = {}  # element plan -> its index in its collection's aggregation, and the records per group
    for plans in by_collection.values():
        exploded = plans[0].exploded(frame, keys)
        column_inputs = _aggregation(frame.sparkSession, tuple(plans))[0]
        records = {spelled(values): record for values, record in
                   _grouped(exploded.select(*key_names, *column_inputs), key_names, plans, groups=groups)}
        inside.update({plan: (i, records) for i, plan in enumerate(plans)})
    rows = _grouped(frame.select(*keys, *_aggregation(frame.sparkSession, tuple(row_plans))[0], *row_hash), key_names,
                    row_plans, [F.hll_sketch_agg(F.col("__rowhash"), NDV_LG_K).alias(ROW_SKETCH)] if rows_sketched else [],
                    groups)
    for spark_values, record in rows:
        values = spelled(spark_values)
        num_rows = record[ROWS]
        if not group_keys and num_rows == 0:
            continue
        figures = (footers or {}).get(values)
        if not _footers_hold(columns, figures, num_rows):
            where = ", ".join(f"{k}={v}" for k, v in zip(group_keys, values, strict=True)) or "the table"
            raise QueryError(f"the files of {where} changed while being analyzed: their footers count "
                             f"{figures.rows if figures else 0:,} rows, the scan read {num_rows:,}; "
                             f"run the ANALYZE again")
        objs, row_index = [], 0
        for plan in columns:
            if plan.element:
                index, records = inside[plan]
                elements = records.get(values)
                objs.append(plan.stats_obj(index, elements, elements[ROWS] if elements else 0))
            else:
                objs.append(plan.stats_obj(row_index, record, num_rows,
                                           figures.columns.get(plan.name) if figures else None))
                row_index += 1
        yield GroupStats(values, num_rows, objs, record.get(ROW_SKETCH))


def _as_the_table_spells(frame: DataFrame, group_keys: list[str], known: list[tuple]) -> Callable[[tuple], tuple]:
    """Spark's text of a group's key values (its cast to string) -> the partition's own values among `known` that
    name the same values (a double's `1.50` is Spark's `1.5`, NaN its `NaN`); a group none names keeps Spark's."""
    if not group_keys or not known:
        return lambda values: values
    by_lower = {field.name.lower(): field.dataType.simpleString() for field in frame.schema.fields}
    types = [by_lower.get(key.lower(), "string") for key in group_keys]
    table_spelling = {comparable_values(values, types): values for values in known}
    as_kept = set(known)
    return lambda values: values if values in as_kept else table_spelling.get(comparable_values(values, types), values)


def row_hash_input(frame: DataFrame) -> Column:
    """A 64-bit hash of each whole row: every column as Spark reads it, a column holding a map as its JSON text
    (Spark hashes no map); two rows alike in every column hash alike."""
    parts = [F.to_json(F.col(column_ref(f.name))) if "map<" in f.dataType.simpleString() else F.col(column_ref(f.name))
             for f in frame.schema.fields]
    return F.xxhash64(*parts)


def _grouped(inputs: DataFrame, key_names: list[str], plans: list[ColumnPlan],
             extra: list[Column] | None = None, groups: int = 0) -> Iterator[tuple[tuple, dict]]:
    """The aggregates of `plans` over `inputs` per group of `key_names` (one row without keys), with the
    group's values: one row per partition is all that reaches the driver, a shuffle partition at a time, each
    row's NDV sketches compacted as it comes (collected at once, 10,000 partitions' rows of 20 columns held
    400 MiB of Spark's HLL_8 sketches in this process). `groups`, the partitions expected, sets how many shuffle
    partitions carry them (GROUPS_A_TASK each at most)."""
    exprs = (*_aggregation(inputs.sparkSession, tuple(plans))[1], *(extra or []))
    grouped = inputs.groupBy(*key_names).agg(*exprs) if key_names else inputs.agg(*exprs)
    with _shuffle_partitions_for(inputs.sparkSession, groups if key_names else 0):
        for row in grouped.toLocalIterator(prefetchPartitions=True):
            yield tuple(row[k] for k in key_names), _compacted(row.asDict())


# the partitions' aggregate rows one task hands the driver at most: 100,000 partitions of 20 columns in the lab's 4
# shuffle partitions made tasks of 25,000 rows of sketches each (about 1 GiB), and the driver's JVM ran out of heap
# taking them in; 2,000 a task keeps each result to tens of MiB, which the driver takes one or two at a time
GROUPS_A_TASK = 2_000
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
COALESCE_PARTITIONS = "spark.sql.adaptive.coalescePartitions.enabled"


@contextmanager
def _shuffle_partitions_for(spark: SparkSession, groups: int) -> Iterator[None]:
    """The session's shuffle partitions raised, while the block runs, to carry `groups` groups GROUPS_A_TASK at a
    time (kept where they already do)."""
    wanted = -(-groups // GROUPS_A_TASK)
    before = {key: spark.conf.get(key, None) for key in (SHUFFLE_PARTITIONS, COALESCE_PARTITIONS)}
    shuffle_partitions = before[SHUFFLE_PARTITIONS]
    if shuffle_partitions is None or wanted <= int(shuffle_partitions):
        yield
        return
    # adaptive execution would coalesce them again: the shuffle's bytes, the partial aggregates, are small
    spark.conf.set(SHUFFLE_PARTITIONS, str(wanted))
    spark.conf.set(COALESCE_PARTITIONS, "false")
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _compacted(record: dict) -> dict:
    """An aggregate row with its NDV sketches (`__c<i>_hll`) compacted as the metastore keeps them."""
    for key, value in record.items():
        if key.endswith("_hll") and value is not None:
            record[key] = compact(bytes(value))
    return record


def _footers_hold(columns: list[ColumnPlan], figures: GroupFigures | None, num_rows: int) -> bool:
    """Whether a group's footer figures stand for the rows the aggregation read, for every column planned
    `from_footers` (none planned: nothing to hold)."""
    planned = [p.name for p in columns if p.from_footers]
    return not planned or (figures is not None and figures.rows == num_rows
                           and all(name in figures.columns for name in planned))


def served_by_footers(plans: list[ColumnPlan], files: dict[tuple, list[DataFile]],
                      field_ids: FileKeys | None = None) -> tuple[list[ColumnPlan], dict[tuple, GroupFigures]]:
    """`plans` with `from_footers` set for the columns whose minimum, maximum and NULL count every one of
    `files` (per group) holds exactly, and each group's figures of them (footers.group_figures)."""
    if not plans:
        return plans, {}
    # footers keep an element's figures over every level of its list (NULL lists and elements alike)
    scalars = {p.name: p.type_name for p in plans
               if not p.element and p.kind not in (StatsKind.COLLECTION, StatsKind.STRUCT)}
    served, figures = group_figures(files, scalars, field_ids)
    return [replace(p, from_footers=p.name in served) for p in plans], figures


def empty_stats(columns: list[ColumnPlan], values: tuple = ()) -> GroupStats:
    """The statistics of a group with no rows."""
    return GroupStats(values, 0, [p.stats_obj(i, None, 0) for i, p in enumerate(columns)])


def observe_stats(frame: DataFrame, columns: list[ColumnPlan]
                  ) -> tuple[DataFrame, Callable[[GroupFigures | None], GroupStats | None]]:
    """The frame with the same aggregation attached as an observation (`DataFrame.observe`), so the
    action that writes it also computes its statistics, with no second pass; call the returned
    function after that action for the rows' statistics."""
    observation = Observation(f"colstats_{uuid.uuid4().hex}")
    original = [F.col(column_ref(c)) for c in frame.columns]
    column_inputs, exprs = _aggregation(frame.sparkSession, tuple(columns))
    inputs = frame.select("*", *column_inputs)
    observed = inputs.observe(observation, *exprs).select(*original)

    def collect(figures: GroupFigures | None = None) -> GroupStats | None:
        """The written rows' statistics; None when columns planned `from_footers` lack their footer
        figures (`figures`: the written files', footers.group_figures) or those count other rows."""
        record = _compacted(dict(observation.get))
        num_rows = record[ROWS]
        if not _footers_hold(columns, figures, num_rows):
            return None
        return GroupStats((), num_rows, [plan.stats_obj(i, record, num_rows,
                                                        figures.columns.get(plan.name) if figures else None)
                                         for i, plan in enumerate(columns)])

    return observed, collect
