"""A Spark read of chosen row groups only: each task opens its files and reads just its row groups (ranged
reads), so a 1 % sample reads about 1 % of the bytes, where a Bernoulli filter (Drill's SAMPLE, Spark's
`sample`) reads every row to drop most of them.

Spark's own Parquet reader takes whole files or byte splits, never a list of row groups, and the lab runs
no JVM code of its own, so the tasks read with pyarrow in Spark's Python workers (`mapInArrow`) and hand
Spark Arrow batches: columns found by name case-insensitively as Spark finds them, nanoseconds truncated
to Spark's microseconds, a column the file lacks NULL.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from ..files import FileState

UNIT = "__unit"
PART = "__part"


@dataclass(frozen=True)
class SampledUnit:
    """One row group chosen: its file (as listed), index in the file, rows (from the footer) and the index of
    the partition it belongs to."""

    state: FileState
    row_group: int
    rows: int
    part: int = 0


def sampled_frame(spark: SparkSession, units: list[SampledUnit], schema: T.StructType) -> DataFrame:
    """The rows of `units`' row groups with `schema`, each with its unit's index as `__unit` and its partition's
    as `__part` (ints)."""
    out_schema = T.StructType([*schema.fields, T.StructField(UNIT, T.IntegerType(), False),
                               T.StructField(PART, T.IntegerType(), False)])
    target = to_arrow_schema(out_schema, timezone="UTC")
    chosen = list(units)

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                unit = chosen[index]
                table = _read_row_group(unit)
                yield from _conformed(table, target, index, unit.part).to_batches(max_chunksize=65_536)

    tasks = min(len(chosen), max(1, spark.sparkContext.defaultParallelism if _classic(spark) else 2) * 2)
    return spark.range(0, len(chosen), 1, numPartitions=max(1, tasks)).mapInArrow(read, out_schema)


def _classic(spark: SparkSession) -> bool:
    return hasattr(spark, "sparkContext") and type(spark).__module__.startswith("pyspark.sql.session")


def _read_row_group(unit: SampledUnit) -> pa.Table:
    from ..storage import is_local, storage_for

    path = unit.state[0]
    if is_local(path):
        return pq.ParquetFile(path).read_row_group(unit.row_group)
    with storage_for(path).open_input(unit.state) as handle:
        return pq.ParquetFile(handle).read_row_group(unit.row_group)


def _conformed(table: pa.Table, target: pa.Schema, unit: int, part: int) -> pa.Table:
    """`table` as `target` asks (its last fields the unit's and the partition's index)."""
    by_name = {name.lower(): table.column(i) for i, name in enumerate(table.column_names)}
    columns = [_column(by_name.get(f.name.lower()), f.type, table.num_rows) for f in list(target)[:-2]]
    columns += [pa.array([unit] * table.num_rows, pa.int32()), pa.array([part] * table.num_rows, pa.int32())]
    return pa.Table.from_arrays(columns, schema=target)


def _column(found, kind: pa.DataType, rows: int):
    if found is None:
        return pa.nulls(rows, kind)
    if pa.types.is_struct(kind) and pa.types.is_struct(found.type):
        chunks = []
        for chunk in found.chunks:
            inner = {chunk.type.field(i).name.lower(): chunk.field(i) for i in range(chunk.type.num_fields)}
            children = [_column(inner.get(kind.field(i).name.lower()), kind.field(i).type, len(chunk))
                        for i in range(kind.num_fields)]
            chunks.append(pa.StructArray.from_arrays(children, fields=list(kind), mask=chunk.is_null()))
        return pa.chunked_array(chunks, kind)
    if isinstance(found, pa.ChunkedArray) and pa.types.is_dictionary(found.type):
        found = found.cast(found.type.value_type)
    return found.cast(kind, safe=False)  # nanoseconds to Spark's microseconds, as Spark reads them
