"""The one Spark job behind Drill-style metadata: per file (or per row group) of the files given,
the row count and, per column, non-null count, min, max and an NDV sketch — only the figures the
footers could not give are computed.

Rows are grouped by `_metadata.file_path`; a row's row group is found from its `_metadata.row_index`
and the row groups' first rows in the footer. Only the aggregate rows reach the driver.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import unquote, urlparse

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..coltypes import parse_type
from ..column_statistics.sketches import NDV_LG_K, compact
from ..files import decoded_uri_path
from ..quoting import column_ref
from ..storage import prefixes_for, spark_file_uri, spark_uri
from .sketches import kll_aggregate, ndv_input

SAMPLE_SEED = 20261122


@dataclass(frozen=True)
class ScanColumn:
    name: str
    type_name: str
    min_max: bool  # compute min and max
    nulls: bool  # compute the non-null count
    ndv: bool  # compute an HLL sketch and a non-null count of the (sampled) rows it saw
    histogram: bool = False  # compute a KLL sketch of every row's value

    def value(self):
        col = F.col(column_ref(self.name))
        base = parse_type(self.type_name).base
        if base == "date":
            return F.unix_date(col)
        if base == "timestamp":
            return F.unix_micros(col)
        return col


@dataclass
class ScannedColumn:
    non_nulls: int | None = None  # over every row
    low: object = None
    high: object = None
    sketch: bytes | None = None
    sampled_non_nulls: int | None = None  # over the rows the sketch saw
    histogram: bytes | None = None  # a KLL sketch over every row


@dataclass
class ScannedGroup:
    path: str
    row_group: int | None
    rows: int
    columns: dict[str, ScannedColumn] = field(default_factory=dict)


def local_path(file_uri: str) -> str:
    """The local path of the URI Spark reports as `_metadata.file_path`."""
    return unquote(urlparse(file_uri).path)


def scan_metadata(spark: SparkSession, schema: T.StructType, files: list[str], columns: list[ScanColumn],
                  row_group_starts: dict[str, list[int]] | None = None,
                  sample_fraction: float | None = None,
                  as_table: list[Column] | None = None) -> dict[tuple[str, int | None], ScannedGroup]:
    """Runs the scan over `files` (data columns `schema` as the files hold them, made the table's by the
    `as_table` columns where given); groups by file, and by row group when
    `row_group_starts` (path -> first row of each row group) is given. With `sample_fraction` the
    sketches see a Bernoulli sample of the rows (the caller scales their counts), while min, max and
    null counts still cover every row, in the same pass."""
    if not files:
        return {}
    prefixes = prefixes_for(spark, files)
    path_of = {spark_file_uri(path, prefixes): path for path in files}  # Spark's spelling of each file, back
    frame = spark.read.schema(schema).parquet(*[spark_uri(path, prefixes) for path in files])
    if as_table is not None:
        frame = frame.select(*as_table)  # `_metadata` stays readable after a projection of the file's relation
    keys = [F.col("_metadata.file_path").alias("__file")]
    if row_group_starts is not None:
        keys.append(_row_group_index(row_group_starts, path_of).alias("__rg"))
    sampled = sample_fraction is not None and sample_fraction < 1.0
    inputs, aggregates = _scan_columns(spark, tuple(columns), sample_fraction if sampled else None)
    frame = frame.select(*keys, *inputs)
    group_names = ["__file"] + (["__rg"] if row_group_starts is not None else [])
    out = {}
    for row in frame.groupBy(*group_names).agg(*aggregates).collect():
        record = row.asDict()
        path = path_of.get(record["__file"]) or local_path(record["__file"])
        rg = record.get("__rg") if row_group_starts is not None else None
        group = ScannedGroup(path, rg, record["__rows"])
        for i, c in enumerate(columns):
            sketch = record.get(f"__s{i}")
            kll = record.get(f"__k{i}")
            group.columns[c.name] = ScannedColumn(record.get(f"__n{i}"), record.get(f"__lo{i}"),
                                                  record.get(f"__hi{i}"), compact(bytes(sketch)) if sketch else None,
                                                  record.get(f"__sn{i}"), bytes(kll) if kll is not None else None)
        out[(path, rg)] = group
    return out


@lru_cache(maxsize=64)
def _scan_columns(spark: SparkSession, columns: tuple[ScanColumn, ...],
                  sample_fraction: float | None) -> tuple[tuple[Column, ...], tuple[Column, ...]]:
    """The per-row inputs and the aggregates of `columns`. Each costs gateway calls (about 1,300 for
    11 columns, 0.4 s, half an incremental refresh of a few files), so they are built once per
    session, set of columns and sample: they name columns and never bind to one DataFrame."""
    in_sample = F.rand(SAMPLE_SEED) < F.lit(sample_fraction) if sample_fraction is not None else None
    inputs = []
    for i, c in enumerate(columns):
        inputs.append(c.value().alias(f"__v{i}"))
        if c.ndv:
            hashed = ndv_input(F.col(column_ref(c.name)), c.type_name)
            inputs.append((F.when(in_sample, hashed) if in_sample is not None else hashed).alias(f"__h{i}"))
    aggregates = [F.count(F.lit(1)).alias("__rows")]
    for i, c in enumerate(columns):
        if c.nulls:
            aggregates.append(F.count(f"__v{i}").alias(f"__n{i}"))
        if c.min_max:
            aggregates += [F.min(f"__v{i}").alias(f"__lo{i}"), F.max(f"__v{i}").alias(f"__hi{i}")]
        if c.ndv:
            aggregates += [F.hll_sketch_agg(f"__h{i}", NDV_LG_K).alias(f"__s{i}"), F.count(f"__h{i}").alias(f"__sn{i}")]
        kll = kll_aggregate(F.col(f"__v{i}"), c.type_name) if c.histogram else None
        if kll is not None:
            aggregates.append(kll.alias(f"__k{i}"))
    return tuple(inputs), tuple(aggregates)


def _row_group_index(starts: dict[str, list[int]], path_of: dict[str, str]):
    """The row group of each row: how many of its file's row groups start at or before its row index; a file
    found by Spark's spelling of it (`path_of`), else by its path decoded from that spelling."""
    multi = {path: firsts for path, firsts in starts.items() if len(firsts) > 1}
    if not multi:
        return F.lit(0)
    decoded = decoded_uri_path(F.regexp_replace(F.col("_metadata.file_path"), r"^file:(//)?", ""))
    spelled = {path: uri for uri, path in path_of.items()}
    by_path = F.create_map(*[x for path, firsts in multi.items()
                             for x in (F.lit(path), F.array(*[F.lit(s) for s in firsts]))])
    by_uri = F.create_map(*[x for path, firsts in multi.items() if path in spelled
                            for x in (F.lit(spelled[path]), F.array(*[F.lit(s) for s in firsts]))])
    firsts = F.coalesce(F.try_element_at(by_uri, F.col("_metadata.file_path")), F.try_element_at(by_path, decoded))
    index = F.size(F.filter(firsts, lambda first: first <= F.col("_metadata.row_index"))) - 1
    return F.when(firsts.isNull(), F.lit(0)).otherwise(index)
