"""The tiers of an ANALYZE below a full scan: exact from the files' metadata, then a sample of row groups.

Tier 0 (`FOR COLUMNS ... NOSCAN`) reads no value: rows, NULLs, minimum and maximum from footers (exact where
`footers` serve them), NDV exact from dictionary pages where every data page of every chunk is
dictionary-encoded (`stats.dictionary_pages`), else bounded by them, string lengths from the dictionaries
and the footer's size statistics. Tier 1 (`SAMPLE n PERCENT`) takes tier 0's exact figures as they are
and estimates the rest from a random choice of each partition's row groups, read by Spark tasks that read
only those (`stats.sampled_read`), each estimate with its band (`column_statistics.estimators`).

Which writer earns which tier (measured on this machine's writers): parquet-mr (Spark, Hive) and Arrow's
C++ writer (pyarrow, pandas) keep `encoding_stats` and dictionaries of exactly the values written, so
their all-dictionary chunks give exact NDV; pyarrow writing an Arrow dictionary column (a pandas
Categorical) stores the whole dictionary, unused categories too, so its dictionaries bound NDV from above
only. Both write `size_statistics` for strings (parquet-mr 1.17, Arrow 26).

Every figure goes into `bounds` as a `Band` (value, low, high, exact, method; kept as its list, `Band.to_list`);
the partition's statistics row holds
the value, so every reader of statistics reads a tiered ANALYZE's figures as it reads a full one's, and
`inspect.bounds()` says which are estimates.
"""
from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from pyroaring import BitMap
from pyspark.sql import SparkSession
from pyspark.sql import types as T

from ..coltypes import StatsKind, parse_type
from ..column_statistics.estimators import UNKNOWN_BAND, Band, Estimate, gee_ndv, ratio_estimate
from ..column_statistics.merge import merge_column_stats
from ..column_statistics.model import ColumnStatisticsData, ColumnStatisticsObj
from ..column_statistics.quantiles import Distribution, rank_error
from ..errors import QueryError
from ..file_columns import nanos_columns
from ..files import DELETION_VECTOR, EQUALITY_DELETES, POSITION_DELETES, FileKeys, read_state
from ..metastore import Table
from ..metastore.repositories.snapshot_files import file_keys_of
from ..stats import ColumnPlan, GroupStats, aggregate_stats
from ..stats.dictionary_pages import DECODED_VALUES_LIMIT, NUMPY_TYPES, ChunkFacts, chunk_facts, distinct_values, read_dictionary
from ..stats.footers import GroupFigures, chunk_positions
from ..stats.sampled_read import UNIT, SampledUnit, ValueCounts, sampled_frame, value_frequencies
from ..storage import footer_of, in_this_context, is_local, spark_uris
from ..tables.deleted_rows import deleted_by_file
from ..tables.snapshot import PartitionFiles, located_fields

MIN_SAMPLED_ROW_GROUPS = 2  # a band needs a spread: fewer row groups than this are no sample
WHOLE_ABOVE = 0.5  # a sample that would read more than this share of a partition's rows reads it whole
_INTEGERS = {"tinyint", "smallint", "int", "bigint"}
_RANGED = (StatsKind.LONG, StatsKind.DECIMAL, StatsKind.DOUBLE, StatsKind.DATE, StatsKind.TIMESTAMP)
# a column read per row's collection or a struct's own NULLs: footers count neither, a row group's rows are not its
# values; a tier leaves them to a scan
_UNTIERED = (StatsKind.COLLECTION, StatsKind.STRUCT)


@dataclass
class TieredScan:
    """What a tiered ANALYZE computed: each partition's statistics (by partition values, as `aggregate_stats`),
    the bands of their figures (by partition name), the share of rows read, and what to tell the user."""

    groups: dict[tuple, GroupStats] = field(default_factory=dict)
    bounds: dict[str | None, dict[str, dict[str, Band]]] = field(default_factory=dict)
    read_share: dict[str | None, float] = field(default_factory=dict)
    whole: list[str | None] = field(default_factory=list)  # partitions a sample would have read most of: read whole
    notes: list[str] = field(default_factory=list)


@dataclass
class _Chunk:
    state: Any
    meta: Any  # pyarrow ColumnChunkMetaData
    facts: ChunkFacts | None
    arrow_dictionary: bool  # pyarrow stored an Arrow dictionary column: its dictionary may hold unused values
    type_length: int | None


def _values_of(part: PartitionFiles) -> tuple:
    return tuple(part.partition.values) if part.partition else ()


def tierable(plan: ColumnPlan) -> bool:
    """Whether a tier computes this column's figures: not an array's elements, a collection's size or a struct's
    own NULLs, which only a scan counts."""
    return not plan.element and plan.kind not in _UNTIERED


def metadata_tier(table: Table, files: list[PartitionFiles], plans: list[ColumnPlan],
                  footers: dict[tuple, GroupFigures]) -> TieredScan:
    """Tier 0 over every partition of `files`; raises FooterUnavailable when a file's footer cannot be read."""
    scan = TieredScan()
    truncated = {c.lower() for c in nanos_columns(table.parameters)}
    file_keys = file_keys_of(table)
    for part in files:
        figures = footers.get(_values_of(part))
        chunks = _chunks_by_column(part, plans, file_keys)
        rows = sum(footer_of(f).num_rows for f in part.files)
        deleted, deletes = _deleted_rows(part, table.location, rows)
        objs, bounds = [], {}
        for index, plan in enumerate(plans):
            obj, figure_bounds = _metadata_column(plan, index, rows, figures, chunks.get(plan.name.lower(), []),
                                                  plan.name.lower() in truncated)
            if deleted.most:
                obj, figure_bounds = _less_deleted(obj, figure_bounds, rows, deleted, deletes)
            objs.append(obj)
            bounds[plan.name] = figure_bounds
        scan.groups[_values_of(part)] = GroupStats(_values_of(part), rows - deleted.guess, objs)
        scan.bounds[part.part_name] = bounds
        scan.read_share[part.part_name] = 0.0
    return scan


@dataclass(frozen=True)
class _Deleted:
    """The rows a partition's deletes remove: at least `least`, at most `most`, `guess` the figure shown."""

    least: int
    most: int
    guess: int


def _deleted_rows(part: PartitionFiles, table_root: str, rows: int) -> tuple[_Deleted, str]:
    """The rows the partition's deletes remove, and what removes them: Delta's vectors by their cardinalities (the
    log's, exact: a vector holds distinct positions), Iceberg's position deletes read (a row may be named twice),
    of the `rows` the partition's footers count.
    Iceberg's equality deletes remove every row equal to one of theirs, which metadata cannot count: from none of
    the rows to all of them, a delete row taken to remove one row (an upsert's) for the figure shown."""
    if any(d.content == POSITION_DELETES for d in part.deletes):
        exact = sum(len(p) for p in deleted_by_file(part.files, part.deletes, table_root).values())
        kind = "position deletes"
    else:
        exact = sum(d.record_count or 0 for d in part.deletes if d.content == DELETION_VECTOR)
        kind = "deletion vectors"
    equality = [d for d in part.deletes if d.content == EQUALITY_DELETES]
    if not equality:
        return _Deleted(exact, exact, exact), kind
    upserted = min(rows, exact + sum(d.record_count or 0 for d in equality))
    return _Deleted(exact, rows, upserted), ("equality deletes" if not exact else f"{kind} and equality deletes")


def _chunks_by_column(part: PartitionFiles, plans: list[ColumnPlan], file_keys: FileKeys) -> dict[str, list[_Chunk]]:
    """Each planned column's chunks over the partition's files, by lower-case dotted path, found by field id or
    physical name where `file_keys` gives them; a file lacking the column adds none (its rows are NULLs, counted by
    the footer figures)."""
    wanted = {p.name.lower() for p in plans if not p.element}
    keys = {name.lower(): key for name, key in file_keys.items() if name.lower() in wanted}
    out: dict[str, list[_Chunk]] = {name: [] for name in wanted}
    for data_file in part.files:
        meta = footer_of(data_file)
        facts = chunk_facts(read_state(data_file))
        arrow_dictionaries = _arrow_dictionary_columns(meta)
        positions = {name.lower(): position for name, position in
                     chunk_positions(meta, data_file.path, wanted, keys).items()} if keys else \
            {meta.schema.column(i).path.lower(): i for i in range(meta.num_columns)}
        for name in wanted:
            position = positions.get(name)
            if position is None:
                continue
            column = meta.schema.column(position)
            for group in range(meta.num_row_groups):
                if meta.row_group(group).num_rows == 0:  # a file of no rows holds no figure: it adds nothing
                    continue
                chunk = meta.row_group(group).column(position)
                out[name].append(_Chunk(read_state(data_file), chunk, facts.get((group, column.path)),
                                        column.path.lower() in arrow_dictionaries, column.length or None))
    return out


def _arrow_dictionary_columns(meta: pq.FileMetaData) -> set[str]:
    try:
        schema = meta.schema.to_arrow_schema()
    except Exception:  # a schema pyarrow cannot map: no Arrow dictionary either
        return set()
    return {f.name.lower() for f in schema if str(f.type).startswith("dictionary")}


def _metadata_column(plan: ColumnPlan, index: int, rows: int, figures: GroupFigures | None, chunks: list[_Chunk],
                     truncated: bool) -> tuple[ColumnStatisticsObj, dict[str, Band]]:
    """One column's tier-0 statistics in a partition of `rows` rows, and the bands of its figures."""
    kind = plan.kind
    bounds: dict[str, Band] = {"rows": Band(rows, rows, rows, True, "footers")}
    footer = figures.columns.get(plan.name) if figures and plan.from_footers else None
    nulls = footer.nulls if footer is not None else _footer_nulls(chunks, rows)
    non_null = None if nulls is None else rows - nulls
    record: dict[str, Any] = {}
    p = f"__c{index}_"
    if footer is not None:
        bounds["nulls"] = Band(nulls, nulls, nulls, True, "footers")
        bounds["min"] = Band(_plain(footer.low), None, None, True, "footers")
        bounds["max"] = Band(_plain(footer.high), None, None, True, "footers")
    else:
        record[p + "nonnull"] = non_null or 0
        bounds["nulls"] = (Band(nulls, nulls, nulls, True, "footers") if nulls is not None
                           else Band(None, 0, rows, False, "unknown without a scan"))
        if kind in _RANGED and nulls is not None and nulls == rows:  # no value: no extreme, exactly
            bounds["min"] = Band(None, None, None, True, "footers: no value")
            bounds["max"] = Band(None, None, None, True, "footers: no value")
        elif kind is StatsKind.DOUBLE:
            low, high = _chunk_range(chunks, float)
            record[p + "min"], record[p + "max"] = low, high
            bounds["min"] = Band(low, None, low, False, "footers (NaN left out)")
            bounds["max"] = Band(high, high, None, False, "footers (NaN left out)")
        elif kind is StatsKind.LONG and parse_type(plan.type_name).base in _INTEGERS and \
                _chunk_range(chunks, int)[0] is not None:  # each chunk's own extremes: exact for integers
            low, high = _chunk_range(chunks, int)
            record[p + "min"], record[p + "max"] = low, high
            bounds["min"] = Band(low, None, None, True, "footers (chunk statistics)")
            bounds["max"] = Band(high, None, None, True, "footers (chunk statistics)")
        elif kind in _RANGED:  # a timestamp footers keep no bound of (INT96), a decimal bound cut short
            bounds["min"] = Band(None, None, None, False, "unknown without a scan")
            bounds["max"] = Band(None, None, None, False, "unknown without a scan")
    dictionary = _dictionary_ndv(chunks, truncated) if plan.has_ndv and non_null is not None else None
    if kind in (StatsKind.STRING, StatsKind.BINARY):
        lengths = _lengths(chunks, rows, dictionary)
        record[p + "maxlen"], record[p + "sumlen"] = lengths["max_len"].value or 0, (lengths["avg_len"].value or 0) * rows
        bounds.update(lengths)
    if kind is StatsKind.DOUBLE and non_null is not None:  # no footer counts NaNs: only an empty column's are known
        bounds["nans"] = Band(0, 0, 0, True, "footers: no value") if non_null == 0 else \
            Band(None, 0, non_null, False, "unknown without a scan")
    if kind is StatsKind.BOOLEAN and non_null is not None:
        bounds.update(_boolean_counts(chunks, non_null))
        record[p + "trues"], record[p + "falses"] = bounds["trues"].value, bounds["falses"].value
    obj = plan.stats_obj(index, defaultdict(lambda: None, record), rows, footer)  # a figure not read: None
    if plan.has_ndv and non_null is not None:
        ndv = _ndv_bounds(plan, non_null, footer, dictionary)
        bounds["ndv"] = ndv
        obj = with_ndv(obj, int(ndv.value))
    return obj, bounds


_COUNTS = ("nulls", "ndv", "trues", "falses", "nans")  # figures a deleted row may have counted once


def _less_deleted(obj: ColumnStatisticsObj, bounds: dict[str, Band], rows: int, deleted: _Deleted,
                  deletes: str = "deletion vectors") -> tuple[ColumnStatisticsObj, dict[str, Band]]:
    """A column's tier-0 figures of a partition whose deletes (`deletes`: what they are) remove `deleted` of the
    `rows` its footers count: the live rows exact where the deletes are counted exactly, else a band; every count
    a band, each deleted row having counted once at most (its value the live share of the footers' count); the
    minimum and maximum bounds (a deleted row may have held them); lengths bounds. What the footers knew exactly
    stays exact only where no deletion can change it."""
    live, fewest, most_live = rows - deleted.guess, rows - deleted.most, rows - deleted.least
    less = f", less {deletes}"
    out: dict[str, Band] = {"rows": Band(live, fewest, most_live, fewest == most_live, "footers" + less)}
    for figure, band in bounds.items():
        value, low, high, exact, method = band.value, band.low, band.high, band.exact, band.method
        if figure == "rows":
            continue
        if figure in _COUNTS:
            lowest = None if low is None else max(0, int(low) - deleted.most)
            highest = most_live if high is None else min(int(high), most_live)
            guess = None if value is None else min(max(round(value * live / rows) if rows else 0, lowest or 0),
                                                   highest)
            out[figure] = Band(guess, lowest, highest, lowest is not None and lowest == highest, method + less)
        elif value is None and exact:  # no value at all: deleting rows adds none
            out[figure] = band
        elif figure == "min":
            out[figure] = Band(value, value if exact else low, None, False, method + ", a bound: deleted rows may hold it")
        elif figure == "max":
            out[figure] = Band(value, None, value if exact else high, False, method + ", a bound: deleted rows may hold it")
        elif figure == "max_len":
            out[figure] = Band(value, 0, value, False, method + ", a bound: deleted rows may hold it")
        else:  # avg_len: of every row the footers count
            out[figure] = Band(value, None, None, False, method + ", of the rows before deletes")
    data = obj.statsData.value
    changes: dict[str, Any] = {}
    for figure, field_name in (("nulls", "numNulls"), ("ndv", "numDVs"), ("trues", "numTrues"),
                               ("falses", "numFalses"), ("nans", "numNaNs")):
        if hasattr(data, field_name) and figure in out and out[figure].value is not None:
            changes[field_name] = out[figure].value
    if hasattr(data, "numNulls") and "numNulls" not in changes:
        changes["numNulls"] = min(data.numNulls, live)
    return replace(obj, statsData=ColumnStatisticsData.of(replace(data, **changes))), out


def _plain(value: Any) -> Any:
    """A figure as JSON keeps it: dates and timestamps as their text, decimals as floats."""
    if value is None or isinstance(value, (int, float, str, bool)):
        return value
    return str(value)


def _footer_nulls(chunks: list[_Chunk], rows: int) -> int | None:
    if not chunks and rows:
        return None
    counts = [c.meta.statistics.null_count if c.meta.is_stats_set and c.meta.statistics.has_null_count else None
              for c in chunks]
    return None if any(c is None for c in counts) else sum(counts)  # type: ignore[arg-type]


def _chunk_range(chunks: list[_Chunk], kind: Callable[[Any], Any]) -> tuple[Any, Any]:
    """The least and greatest of the chunks' own extremes (as `kind`), those of no value left out; (None, None)
    where a chunk with values keeps none."""
    lows, highs = [], []
    for chunk in chunks:
        if _non_null(chunk) == 0:
            continue
        stats = chunk.meta.statistics if chunk.meta.is_stats_set else None
        if stats is None or not stats.has_min_max:
            return None, None
        lows.append(kind(stats.min))
        highs.append(kind(stats.max))
    return (min(lows), max(highs)) if lows else (None, None)


@dataclass
class _Dictionary:
    """What a partition's dictionary pages say of a column's distinct values."""

    largest: int  # max dᵢ over chunks whose every dictionary value was written (a lower bound of NDV)
    total: int | None  # Σ dᵢ where every chunk with values is all-dictionary (an upper bound), else None
    values: Any = None  # the union of the values, where exact (`dictionary_pages.distinct_values`)
    disjoint: bool = False  # exact, and the chunks' ranges apart: NDV is `total`, no value decoded
    # an upper bound where `total` is none: Σ over chunks of dᵢ where a chunk is all-dictionary, else its values
    # (a small file written plain beside a dictionary-encoded one: 2 + 1, not every value of the partition)
    ceiling: int | None = None


def _dictionary_ndv(chunks: list[_Chunk], truncated: bool) -> _Dictionary | None:
    """The dictionaries' account of NDV: each chunk's page read once, decoded only where the union is exact (every
    chunk with values all-dictionary, dictionaries of only the values written, values Spark reads unchanged)."""
    with_values = [c for c in chunks if _non_null(c) != 0]
    every = bool(with_values) and all(c.meta.has_dictionary_page and c.facts is not None and c.facts.all_dictionary
                                      for c in with_values)
    exact = every and not truncated and not any(c.arrow_dictionary for c in with_values)
    disjoint = exact and _ranges_apart(with_values)
    pages = [read_dictionary(c.state, c.meta, False, c.type_length) for c in with_values]  # headers: sizes only
    if not any(pages):
        return None
    sizes = [p.size if p is not None else None for p in pages]
    total = sum(s or 0 for s in sizes) if every and None not in sizes else None
    each = [p.size if p is not None and c.facts is not None and c.facts.all_dictionary else _non_null(c)
            for c, p in zip(with_values, pages, strict=True)]
    known = [n for n in each if n is not None]
    ceiling = total if total is not None else sum(known) if len(known) == len(each) else None
    largest = max((s or 0 for s, c in zip(sizes, with_values, strict=True) if not c.arrow_dictionary), default=0)
    if disjoint and total is not None:
        return _Dictionary(largest, total, None, disjoint=True, ceiling=total)
    if exact and all(pages) and _worth_decoding(with_values, [p.size for p in pages if p]):
        pages = [read_dictionary(c.state, c.meta, True, c.type_length) for c in with_values]
    decoded = [p for p in pages if p is not None and p.values is not None]
    values = (distinct_values(decoded) if exact and total is not None and total <= DECODED_VALUES_LIMIT
              and len(decoded) == len(pages) else None)
    return _Dictionary(largest, total, values, ceiling=ceiling)


def _ranges_apart(chunks: list[_Chunk]) -> bool:
    """Whether the chunks' [minimum, maximum] ranges are pairwise apart, so no value is in two of their dictionaries
    (each holding a chunk's distinct values) and the union's size is the sum of theirs: a sorted or clustered
    column (an id, a date, a key in row groups of their own) needs none decoded. Floating values are left out:
    NaN is in no range and -0.0 equals 0.0."""
    ranges = []
    for chunk in chunks:
        stats = chunk.meta.statistics if chunk.meta.is_stats_set else None
        if chunk.meta.physical_type not in _APART_TYPES or stats is None or not stats.has_min_max:
            return False
        ranges.append((stats.min, stats.max))
    try:
        ranges.sort()
        return len(ranges) > 1 and all(high < low for (_, high), (low, _) in pairwise(ranges))
    except TypeError:  # values of types that do not compare
        return False


_APART_TYPES = ("INT32", "INT64", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY")


def _worth_decoding(chunks: list[_Chunk], sizes: list[int]) -> bool:
    """Whether the dictionaries are few enough values to decode for an exact NDV, metadata alone being the cheap
    tier. Dictionaries nearly as long as the column (each row group keeps its own: a high-cardinality column in
    small row groups) cost as much as reading it: Python decodes strings at about half a microsecond a value, numpy
    numbers at about 30 ms a million read and united (the bench's 10M rows in row groups of 32,768: 9M strings took
    6 s, two numeric columns 1.1 s, against 5.8 s for Spark's ANALYZE). Those are left as the bounds their sizes
    give."""
    total = sum(sizes)
    values = sum(_non_null(c) or 0 for c in chunks)
    numbers = all(c.meta.physical_type in NUMPY_TYPES for c in chunks)
    return total <= (DECODED_NUMBERS_ALWAYS if numbers else DECODED_STRINGS_ALWAYS) or \
        total <= DECODED_SHARE * values


DECODED_STRINGS_ALWAYS = 100_000  # dictionary strings decoded whatever the rows (about 0.05 s)
DECODED_NUMBERS_ALWAYS = 250_000  # dictionary numbers likewise (about 0.01 s)
DECODED_SHARE = 0.1  # and beyond them, while they are at most this share of the values


def _non_null(chunk: _Chunk) -> int | None:
    meta = chunk.meta
    if meta.is_stats_set and meta.statistics.has_null_count:
        return meta.num_values - meta.statistics.null_count
    return None


def _boolean_counts(chunks: list[_Chunk], non_null: int) -> dict[str, Band]:
    """Trues and falses from the footers: a chunk whose least and greatest value are one holds only that value;
    the others' values may be either, so each count's band spans them and its value sits in the band's middle
    (stored as 0 both, an unknown count would tell Spark's optimizer that no row is true)."""
    sure = {True: 0, False: 0}
    for chunk in chunks:
        count = _non_null(chunk)
        stats = chunk.meta.statistics if chunk.meta.is_stats_set else None
        if count and stats is not None and stats.has_min_max and stats.min == stats.max:
            sure[bool(stats.min)] += count
    either = max(0, non_null - sure[True] - sure[False])
    trues = sure[True] + either // 2
    method = "footers" if not either else "footers (chunks holding both: either)"
    return {"trues": Band(trues, sure[True], sure[True] + either, not either, method),
            "falses": Band(non_null - trues, sure[False], sure[False] + either, not either, method)}


def _ndv_bounds(plan: ColumnPlan, non_null: int, footer, dictionary: _Dictionary | None) -> Band:
    if non_null == 0:
        return Band(0, 0, 0, True, "footers: no value")
    if dictionary is not None and dictionary.values is not None:
        exact = len(dictionary.values)
        return Band(exact, exact, exact, True, "dictionary pages")
    if dictionary is not None and dictionary.disjoint and dictionary.total is not None:
        return Band(dictionary.total, dictionary.total, dictionary.total, True, "dictionary pages of chunks apart")
    low = max(1, dictionary.largest if dictionary else 1)
    high = non_null
    if dictionary is not None and dictionary.ceiling is not None:
        high = min(high, dictionary.ceiling)
    if footer is not None and parse_type(plan.type_name).base in _INTEGERS and footer.low is not None:
        high = min(high, int(footer.high) - int(footer.low) + 1)
    high = max(high, low)
    value = round(math.sqrt(low * high))  # the middle of the band in ratio: an NDV's error is a ratio
    return Band(value, low, high, low == high, "dictionary and footer bounds" if dictionary else "footer bounds")


def _lengths(chunks: list[_Chunk], rows: int, dictionary: _Dictionary | None) -> dict[str, Band]:
    """A string's (binary's) maximum and average length from its dictionaries and size statistics. A dictionary
    holds every value written, so its longest value is the column's; the unencoded bytes are the total length
    where every value is ASCII (one byte a character), else bound it between a quarter of them and them."""
    total_bytes = None
    if chunks and all(c.facts is not None and c.facts.unencoded_bytes is not None for c in chunks):
        total_bytes = sum(c.facts.unencoded_bytes for c in chunks)  # type: ignore[union-attr,misc]
    values = dictionary.values if dictionary is not None else None
    out: dict[str, Band] = {}
    if values is not None and not isinstance(values, np.ndarray):
        texts = [v.decode("utf-8", "replace") for v in values]
        longest = max((len(t) for t in texts), default=0)
        out["max_len"] = Band(longest, longest, longest, True, "dictionary pages")
        ascii_only = all(t.isascii() for t in texts)
    else:
        out["max_len"] = Band(None, None, None, False, "unknown without a scan")
        ascii_only = False
    if total_bytes is not None and rows:
        average = total_bytes / rows
        if ascii_only:
            out["avg_len"] = Band(average, average, average, True, "size statistics (every value ASCII)")
        else:
            out["avg_len"] = Band(average, average / 4, average, False, "size statistics (bytes; characters fewer)")
    else:
        out["avg_len"] = Band(None, None, None, False, "unknown without a scan")
    return out


def with_ndv(obj: ColumnStatisticsObj, ndv: int, keep_sketch: bool = False) -> ColumnStatisticsObj:
    """`obj` with its NDV set (and its sketch dropped: a sample's or no sketch stands for the partition's)."""
    data = obj.statsData.value
    changed = replace(data, numDVs=ndv, bitVectors=data.bitVectors if keep_sketch else None)
    return replace(obj, statsData=ColumnStatisticsData.of(changed))


# ---- tier 1 ----------------------------------------------------------------------------------------------

def sampled_tier(spark: Callable[[], SparkSession], table: Table, files: list[PartitionFiles],
                 plans: list[ColumnPlan], footers: dict[tuple, GroupFigures], fraction: float, schema,
                 seed: int | None) -> TieredScan:
    """Tier 0, then a sample of `fraction` of each partition's row groups for what it left inexact. Partitions a
    sample would read most of are left out of `groups` and named in `whole`, for the caller to scan."""
    scan = metadata_tier(table, files, plans, footers)
    rng = random.Random(seed)
    units: list[SampledUnit] = []
    totals: dict[int, int] = {}
    for part_index, part in enumerate(files):
        groups = _row_groups(part, table.location)
        # rounded first: 0.05 * 100 row groups is 5.000000000000001 in floating point, and 5 are wanted
        wanted = max(MIN_SAMPLED_ROW_GROUPS, math.ceil(round(len(groups) * fraction, 9)))
        chosen = sorted(rng.sample(range(len(groups)), min(wanted, len(groups))))
        rows = sum(g.rows for g in groups)
        # equality deletes match rows by value, which a row group read alone cannot apply: the scan reads it whole
        if any(d.content == EQUALITY_DELETES for d in part.deletes) or \
                (rows and sum(groups[i].rows for i in chosen) > WHOLE_ABOVE * rows):
            scan.whole.append(part.part_name)
            del scan.groups[_values_of(part)]
            continue
        totals[part_index] = len(groups)
        units += [replace(groups[i], part=part_index) for i in chosen]
        scan.read_share[part.part_name] = sum(groups[i].rows for i in chosen) / rows if rows else 0.0
    if not units:
        return scan
    session = spark()
    paths = sorted({u.state[0] for u in units})
    mounted = {path: read for path, read in zip(paths, spark_uris(session, paths), strict=True)
               if is_local(read) and read != path}
    units = [replace(u, read_at=mounted.get(u.state[0], "")) for u in units]
    # only what tier 0 left inexact is read: a row group's own figures where a share, an extreme, a length or a
    # quartile is (the bench's 11 columns: 4), its values counted where NDV is (7); a column tier 0 made exact, not
    # at all
    sampled_bounds = [scan.bounds[files[i].part_name] for i in totals]
    by_unit = {i: position for position, i in enumerate(
        i for i, p in enumerate(plans) if _needs_unit_figures(p, [b[p.name] for b in sampled_bounds]))}
    counted_plans = {i: p.path or (p.name,) for i, p in enumerate(plans)
                     if p.has_ndv and any(not b[p.name].get("ndv", UNKNOWN_BAND).exact for b in sampled_bounds)}
    read_columns = {(plans[i].path or (plans[i].name,))[0].lower() for i in by_unit}
    located = located_fields(schema, file_keys_of(table))
    frame = sampled_frame(session, units, T.StructType([f for f in schema.fields if f.name.lower() in read_columns]),
                          located)
    unit_plans = [replace(plans[i], from_footers=False, frequent_items=0, sketches_ndv=False) for i in by_unit]
    # the two jobs read the same few row groups and wait on each other for nothing: submitted together, Spark runs
    # them side by side (a sample's cost is mostly each job's fixed start; measured 0.96 s -> see the closing note)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="colstats-sample") as side:
        counting = side.submit(in_this_context(value_frequencies), session, units, counted_plans, located)
        per_unit = aggregate_stats(frame, [UNIT], unit_plans)
        counted = counting.result()
    by_part: dict[int, list[tuple[SampledUnit, GroupStats]]] = {}
    for index, unit in enumerate(units):
        stats = per_unit.get((str(index),))
        if (stats.num_rows if stats else 0) != unit.rows:
            raise QueryError(f"{unit.state[0]} changed while being analyzed: its footer counts {unit.rows:,} rows in "
                             f"row group {unit.row_group}, the sample read {stats.num_rows if stats else 0:,}; run the "
                             "ANALYZE again")
        if stats is not None:
            by_part.setdefault(unit.part, []).append((unit, stats))
    for part_index, sampled in by_part.items():
        part = files[part_index]
        values = _values_of(part)
        exact = scan.groups[values]
        objs, bounds = [], scan.bounds[part.part_name]
        for index, plan in enumerate(plans):
            unit_figures = [(unit, stats.columns[by_unit[index]]) for unit, stats in sampled] \
                if index in by_unit else []
            obj = _sampled_column(plan, exact.columns[index], exact.num_rows, unit_figures, len(sampled),
                                  totals[part_index], counted.get((part_index, index)), bounds[plan.name])
            objs.append(obj)
        scan.groups[values] = GroupStats(values, exact.num_rows, objs)
    return scan


def _row_groups(part: PartitionFiles, table_root: str) -> list[SampledUnit]:
    """Every row group of the partition's files as a unit a sample may take, each with the positions its file's
    deletion vector deletes there (from its first row) and its live rows: a sample reads live rows only, and its
    estimates weigh each row group by them."""
    deleted = deleted_by_file(part.files, part.deletes, table_root) if part.deletes else {}
    out = []
    for data_file in part.files:
        meta, state = footer_of(data_file), read_state(data_file)
        gone = np.frombuffer(deleted[data_file.path].to_array(), np.uint64).astype(np.int64) \
            if data_file.path in deleted else None
        first = 0
        for index in range(meta.num_row_groups):
            rows = meta.row_group(index).num_rows
            if gone is None:
                out.append(SampledUnit(state, index, rows))
            else:
                here = gone[np.searchsorted(gone, first):np.searchsorted(gone, first + rows)] - first
                out.append(SampledUnit(state, index, rows - len(here),
                                       deleted=BitMap(here.tolist()).serialize() if len(here) else b""))
            first += rows
    return out


_NOT_BY_UNIT = {"rows", "ndv"}  # figures a sampled row group's own statistics do not estimate


def _needs_unit_figures(plan: ColumnPlan, bounds: list[dict[str, Band]]) -> bool:
    """Whether a column's sampled row groups must be aggregated: tier 0 left a figure other than NDV inexact in
    some partition, it is a double (NaNs: no footer counts them), or quartiles are kept (each row group's KLL)."""
    return plan.histogram or plan.kind is StatsKind.DOUBLE or any(
        not figure.exact for entry in bounds for name, figure in entry.items() if name not in _NOT_BY_UNIT)


def _sampled_column(plan: ColumnPlan, exact: ColumnStatisticsObj, rows: int,
                    unit_figures: list[tuple[SampledUnit, ColumnStatisticsObj]], units_read: int, units_total: int,
                    counts: ValueCounts | None, bounds: dict[str, Band]) -> ColumnStatisticsObj:
    """A column's statistics in one partition: tier 0's exact figures, the sample's estimates for the rest
    (`unit_figures`: each sampled row group's own, or [] where tier 0 left only NDV to estimate; `counts`: its
    values counted, where NDV is estimated)."""
    base = exact.statsData.value
    if not unit_figures:
        return _sampled_ndv(plan, exact, rows, units_read, units_total, counts, bounds)
    objs = [(obj, unit.rows) for unit, obj in unit_figures]
    unit_rows = [unit.rows for unit, _ in unit_figures]
    merged = merge_column_stats(objs)
    data = merged.statsData.value
    updates: dict[str, Any] = {}
    exact_nulls = bounds["nulls"].exact
    if exact_nulls:
        updates["numNulls"] = base.numNulls
    else:
        nulls = ratio_estimate([o.statsData.value.numNulls for o, _ in objs], unit_rows, units_total, 0, 1, "NULL share")
        updates["numNulls"] = round(nulls.value * rows)
        bounds["nulls"] = _scaled(nulls, rows)
    non_null = rows - updates["numNulls"]
    kind = plan.kind
    if kind in _RANGED:
        if exact_nulls and non_null == 0:  # no value: no extreme, exactly
            bounds["min"] = Band(None, None, None, True, "footers: no value")
            bounds["max"] = Band(None, None, None, True, "footers: no value")
        elif bounds.get("min", UNKNOWN_BAND).exact:
            updates["lowValue"], updates["highValue"] = base.lowValue, base.highValue
        elif kind is StatsKind.DOUBLE and base.lowValue is not None:
            # footers keep the least and greatest number, NaN left out (Spark orders NaN above every number), and
            # are not taken as exact for floating types (footers.py): both stay bounds, answering no query
            updates["lowValue"], updates["highValue"] = base.lowValue, base.highValue
            # where rows were deleted, the footers' extremes may be a deleted row's (no band on the inner side): the
            # sample's are live rows' and so inside the range
            if bounds["max"].low is None and data.highValue is not None:
                updates["highValue"] = data.highValue
                bounds["max"] = Band(_plain(data.highValue), _plain(data.highValue), None, False,
                                     "sample (the greatest seen); the footers' may be a deleted row's")
            if bounds["min"].high is None and data.lowValue is not None:
                updates["lowValue"] = data.lowValue
                bounds["min"] = Band(_plain(data.lowValue), bounds["min"].low, _plain(data.lowValue), False,
                                     "sample (the least seen); the footers' may be a deleted row's")
        else:  # the sample's extremes: inside the range; tier 0's outer bounds kept (a deleted row's extreme)
            outer_low = bounds.get("min", UNKNOWN_BAND).low
            outer_high = bounds.get("max", UNKNOWN_BAND).high
            bounds["min"] = Band(_plain(data.lowValue), outer_low, _plain(data.lowValue), False, "sample (the least seen)")
            bounds["max"] = Band(_plain(data.highValue), _plain(data.highValue), outer_high, False,
                                 "sample (the greatest seen)")
    if kind is StatsKind.DOUBLE and exact_nulls and non_null == 0:
        updates["numNaNs"] = 0
        bounds["nans"] = Band(0, 0, 0, True, "footers: no value")
    elif kind is StatsKind.DOUBLE:
        nans = ratio_estimate([o.statsData.value.numNaNs or 0 for o, _ in objs], unit_rows, units_total, 0, 1,
                              "NaN share")
        updates["numNaNs"] = round(nans.value * rows)
        bounds["nans"] = _scaled(nans, rows)
        if exact_nulls:  # a NaN is a value: never more of them than the values
            updates["numNaNs"] = min(updates["numNaNs"], non_null)
            bounds["nans"] = replace(bounds["nans"], value=updates["numNaNs"], high=min(bounds["nans"].high, non_null))
    if kind in (StatsKind.STRING, StatsKind.BINARY):
        if bounds["max_len"].exact:
            updates["maxColLen"] = base.maxColLen
        else:
            bounds["max_len"] = Band(data.maxColLen, data.maxColLen, None, False, "sample (the longest seen)")
        if bounds["avg_len"].exact:
            updates["avgColLen"] = base.avgColLen
        else:
            known = bounds["avg_len"]
            lengths = [o.statsData.value.avgColLen * m for o, m in objs]
            average = ratio_estimate(lengths, unit_rows, units_total, known.low or 0.0,
                                     known.high if known.high is not None else math.inf, "average length")
            updates["avgColLen"] = average.value
            bounds["avg_len"] = Band(average.value, average.low,
                                     average.high if math.isfinite(average.high) else None, False, average.method)
    either = Band(None, 0, rows, False, "")  # a count of the rows, none known
    if kind is StatsKind.BOOLEAN and bounds.get("trues", either).exact and exact_nulls:  # every chunk one value: the footers said
        updates["numTrues"], updates["numFalses"] = base.numTrues, base.numFalses
    elif kind is StatsKind.BOOLEAN:
        for figure, member in (("trues", "numTrues"), ("falses", "numFalses")):
            known = bounds.get(figure, either)  # the footers' band: a chunk of one value counts for sure
            share = ratio_estimate([getattr(o.statsData.value, member) for o, _ in objs], unit_rows, units_total,
                                   known.low / rows if rows else 0, known.high / rows if rows else 1, f"{figure[:-1]} share")
            updates[member] = round(share.value * rows)
            bounds[figure] = _scaled(share, rows)
    if plan.has_ndv and "ndv" in bounds:
        if bounds["ndv"].exact:
            updates["numDVs"] = base.numDVs
        else:
            updates["numDVs"] = _ndv_estimate(counts, len(objs), units_total, non_null, exact_nulls, rows, bounds)
    if getattr(data, "histogram", None):
        bounds.update(_quartile_bands(plan, data.histogram, objs, units_total))
    updates["bitVectors"] = None  # the sample's sketch is not the partition's
    # nor are its sums, zeros and lengths: a mean of sampled sums over the partition's values would be a fraction of
    # the truth shown as exact (a profile says "no mean" of a sampled level instead)
    updates["moments"] = updates["lengths"] = None
    changed = replace(data, **{k: v for k, v in updates.items() if hasattr(data, k)})
    bounds["rows"] = Band(rows, rows, rows, True, "footers")
    return replace(merged, statsData=ColumnStatisticsData.of(changed), frequentItems=None, numValues=exact.numValues)


def _sampled_ndv(plan: ColumnPlan, exact: ColumnStatisticsObj, rows: int, units_read: int, units_total: int,
                 counts: ValueCounts | None, bounds: dict[str, Band]) -> ColumnStatisticsObj:
    """A column whose figures tier 0 made exact but NDV: tier 0's, with the NDV the sample's counts estimate (the
    values read: the counts' own, every value seen once or more in some row group)."""
    if not plan.has_ndv or "ndv" not in bounds or bounds["ndv"].exact:
        return exact
    nulls = exact.statsData.value.numNulls
    ndv = _ndv_estimate(counts, units_read, units_total, rows - nulls, True, rows, bounds)
    return with_ndv(exact, ndv)


def _ndv_estimate(counts: ValueCounts | None, units_read: int, units_total: int, non_null: int, exact_nulls: bool,
                  rows: int, bounds: dict[str, Band]) -> int:
    """GEE's NDV within tier 0's band, which it narrows; its band replaces tier 0's in `bounds`."""
    known = bounds["ndv"]
    high = min(known.high, non_null if exact_nulls else rows - round(bounds["nulls"].low))
    values_high = non_null if exact_nulls else rows - bounds["nulls"].low
    ndv = gee_ndv(counts.by_row_groups if counts else {}, units_read, units_total, known.low, max(high, known.low),
                  counts.values if counts else 0, values_high, non_null, counts.rows_once if counts else 0)
    bounds["ndv"] = Band(round(ndv.value), math.floor(ndv.low), math.ceil(ndv.high), False, ndv.method)
    return round(ndv.value)


QUARTILES = {"q1": 0.25, "median": 0.5, "q3": 0.75}


def _quartile_bands(plan: ColumnPlan, histogram: bytes, objs: list[tuple[ColumnStatisticsObj, int]],
                    units_total: int) -> dict[str, Band]:
    """Each quartile of the sample's KLL sketch with its band: the share of values at or below it, estimated over
    the sampled row groups (each row group's own sketch, by cluster sampling), gives a band of ranks, widened by
    the sketches' rank error; the band's values are the merged sketch's at those ranks (in its units: days for
    dates, microseconds for timestamps)."""
    merged = Distribution.of(histogram, plan.type_name)
    parts = [(Distribution.of(getattr(o.statsData.value, "histogram", None), plan.type_name), o) for o, _ in objs]
    if merged is None or merged.is_empty or any(d is None for d, _ in parts):
        return {}
    counts = [d.count if d is not None else 0 for d, _ in parts]
    out = {}
    for name, rank in QUARTILES.items():
        value = merged.quantile(rank)
        below = [d.fraction_below(value, inclusive=True) * n if d is not None and n else 0.0
                 for (d, _), n in zip(parts, counts, strict=True)]
        share = ratio_estimate(below, counts, units_total, 0.0, 1.0, "rank")
        spread = max(share.value - share.low, share.high - share.value) + 2 * rank_error()
        low, high = merged.quantile(max(0.0, rank - spread)), merged.quantile(min(1.0, rank + spread))
        # the sample's extremes are not the column's: a band reaching rank 0 or 1 is open on that side
        out[name] = Band(value, None if rank - spread <= 0 else low, None if rank + spread >= 1 else high, False,
                         f"KLL of the sample, ranks over {len(parts):,} of {units_total:,} row groups")
    return out


def _scaled(share: Estimate, rows: int) -> Band:
    return Band(round(share.value * rows), math.floor(share.low * rows), math.ceil(share.high * rows),
                share.low == share.high, share.method)
