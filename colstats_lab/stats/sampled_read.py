"""A Spark read of chosen row groups only: each task opens its files and reads just its row groups (ranged
reads), so a 1 % sample reads about 1 % of the bytes, where a Bernoulli filter (Drill's SAMPLE, Spark's
`sample`) reads every row to drop most of them.

Spark's own Parquet reader takes whole files or byte splits, never a list of row groups, and the lab runs
no JVM code of its own, so the tasks read with pyarrow in Spark's Python workers (`mapInArrow`) and hand
Spark Arrow batches: columns found by name case-insensitively as Spark finds them, nanoseconds truncated
to Spark's microseconds, a column the file lacks NULL, the rows a delete removes left out.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyroaring import BitMap
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from ..files import ARROW_FIELD_ID, SPARK_FIELD_ID, FileState

# a table's top-level field by its lower-case name: as the table names it, and as its files do (by field id or
# physical name at every depth, the same fields in the same order: `tables.snapshot.located_fields`)
Located = dict[str, tuple[T.StructField, T.StructField]]

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
    # where Spark's workers read the file: the local path a mount gives it (`colstats.storage.spark_prefixes`), as
    # Spark's own reads do, else "" for its location, read through the storage seam with the workers' credentials
    read_at: str = ""
    # the rows of the row group its file's deletes remove (a Delta deletion vector, Iceberg's position deletes), by
    # position from its first row: a serialized Roaring bitmap, b"" where none; `rows` counts the others
    deleted: bytes = b""


def sampled_frame(spark: SparkSession, units: list[SampledUnit], schema: T.StructType,
                  located: Located | None = None) -> DataFrame:
    """The rows of `units`' row groups with `schema`, each with its unit's index as `__unit` and its partition's
    as `__part` (ints); `located` gives the files' names or field ids of its fields where they are not the
    table's (`tables.snapshot.located_fields`)."""
    out_schema = T.StructType([*schema.fields, T.StructField(UNIT, T.IntegerType(), False),
                               T.StructField(PART, T.IntegerType(), False)])
    target = to_arrow_schema(out_schema, timezone="UTC")
    chosen = list(units)
    names = [f.name for f in schema.fields]

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                unit = chosen[index]
                table = _read_row_group(unit, names, located)
                yield from _conformed(table, target, index, unit.part).to_batches(max_chunksize=65_536)

    return spark.range(0, len(chosen), 1, numPartitions=_slices(spark, len(chosen))).mapInArrow(read, out_schema)


@dataclass(frozen=True)
class ValueCounts:
    """A column's values in a partition's sampled row groups: distinct values seen in exactly one row group
    (`once`), in exactly two (`twice`) and in any (`seen`), values seen in exactly one row (`rows_once`), and
    non-NULL values read."""

    once: int
    twice: int
    seen: int
    rows_once: int
    values: int

    @property
    def by_row_groups(self) -> dict[int, int]:
        """j -> values seen in exactly j sampled row groups (3: three or more), as the NDV estimators take them."""
        return {1: self.once, 2: self.twice, 3: self.seen - self.once - self.twice}


def value_frequencies(spark: SparkSession, units: list[SampledUnit], columns: dict[int, tuple[str, ...]],
                      located: Located | None = None) -> dict[tuple[int, int], ValueCounts]:
    """For each partition and column (`columns`: plan index -> path, a struct leaf's fields after its column),
    what GEE and its check for a column of unique values need. One Spark task a partition and column reads that
    column of those row groups and counts in Arrow: only the counts leave it (as a shuffle of every value, a 5 %
    sample of 10M rows took 6 s on 2 cores; this, under 1). Each row group's values are counted once, then their
    (value, count) pairs grouped over the row groups, so no hash table holds every value read.
    Values are told apart as Spark tells them: -0.0 is 0.0, NaN one value, nanoseconds cut to microseconds."""
    by_part: dict[int, list[SampledUnit]] = {}
    for unit in units:
        by_part.setdefault(unit.part, []).append(unit)
    tasks = [(part, index, path) for part in sorted(by_part) for index, path in sorted(columns.items())]
    if not tasks:
        return {}

    def count(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            out: dict[str, list[int]] = {name: [] for name in _FREQUENCIES.names}
            mine = [tasks[task] for task in batch.column(0).to_pylist()]
            for part, index, path, tables in _opened_once(mine, by_part, located):
                values = [_comparable(_leaf(table, path)) for table in tables]
                per_group = [pc.value_counts(v).flatten() for v in values if len(v)]
                out["part"].append(part)
                out["c"].append(index)
                out["values_read"].append(sum(len(v) for v in values))
                if not per_group:  # nothing but NULLs read
                    out["once"].append(0)
                    out["twice"].append(0)
                    out["seen"].append(0)
                    out["rows_once"].append(0)
                    continue
                pairs = pa.Table.from_arrays([pa.chunked_array([p[0] for p in per_group]),
                                              pa.chunked_array([p[1] for p in per_group])], names=["value", "rows"])
                grouped = pairs.group_by("value").aggregate([("rows", "sum"), ("rows", "count")])
                out["once"].append(pc.sum(pc.equal(grouped.column("rows_count"), 1)).as_py() or 0)
                out["twice"].append(pc.sum(pc.equal(grouped.column("rows_count"), 2)).as_py() or 0)
                out["seen"].append(grouped.num_rows)
                out["rows_once"].append(pc.sum(pc.equal(grouped.column("rows_sum"), 1)).as_py() or 0)
            yield pa.RecordBatch.from_pydict(out, schema=_FREQUENCIES)

    rows = spark.range(0, len(tasks), 1, numPartitions=_slices(spark, len(tasks))).mapInArrow(
        count, from_arrow_schema(_FREQUENCIES)).collect()  # one row a partition and column: counts only
    return {(r["part"], r["c"]): ValueCounts(r["once"], r["twice"], r["seen"], r["rows_once"], r["values_read"])
            for r in rows}


_FREQUENCIES = pa.schema([("part", pa.int32()), ("c", pa.int32()), *[(name, pa.int64()) for name in (
    "once", "twice", "seen", "rows_once", "values_read")]])


def _slices(spark: SparkSession, tasks: int) -> int:
    """Spark tasks for `tasks` units of work: two a core, so a slow one does not hold the job alone."""
    cores = spark.sparkContext.defaultParallelism if _classic(spark) else 2
    return max(1, min(tasks, cores * 2))


def _opened_once(mine: list[tuple[int, int, tuple[str, ...]]], by_part: dict[int, list[SampledUnit]],
                 located: Located | None) -> Iterator[tuple[int, int, tuple[str, ...], list[pa.Table]]]:
    """Each (partition, column index, path) of `mine` with its partition's sampled row groups, each read once
    for all the columns `mine` asks of it (a wide file's footer is parsed once a row group, not once a column)."""
    for part in sorted({task[0] for task in mine}):
        asked = [task for task in mine if task[0] == part]
        names = sorted({path[0] for _, _, path in asked})
        tables = [_read_row_group(unit, names, located) for unit in by_part[part]]
        for _, index, path in asked:
            yield part, index, path, tables


def _leaf(table: pa.Table, path: tuple[str, ...]) -> pa.ChunkedArray | None:
    """The values of `path` in a read of a row group, found by name case-insensitively; None where the file
    lacks it (all NULL)."""
    found = [i for i, name in enumerate(table.column_names) if name.lower() == path[0].lower()]
    if not found:
        return None
    values = table.column(found[0])
    for name in path[1:]:
        kind = values.type
        fields = {kind.field(i).name.lower(): i for i in range(kind.num_fields)} if pa.types.is_struct(kind) else {}
        if name.lower() not in fields:
            return None
        values = pc.struct_field(values, [fields[name.lower()]])
    return values


def _comparable(values: pa.ChunkedArray | None) -> pa.Array | pa.ChunkedArray:
    """The non-NULL values as Spark tells them apart."""
    if values is None:
        return pa.array([], pa.null())
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    if pa.types.is_timestamp(values.type) and values.type.unit == "ns":
        values = values.cast(pa.timestamp("us", values.type.tz), safe=False)
    values = pc.drop_null(values)
    if pa.types.is_floating(values.type):
        values = pc.add(values, 0.0)  # -0.0 becomes 0.0; Arrow's hashing already takes every NaN as one
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def _classic(spark: SparkSession) -> bool:
    return hasattr(spark, "sparkContext") and type(spark).__module__.startswith("pyspark.sql.session")


def _read_row_group(unit: SampledUnit, columns: list[str], located: Located | None = None
                    ) -> pa.Table:
    """`columns` of the unit's row group by the table's names, found case-insensitively, or as `located` says the
    files name them; those the file lacks left out."""
    from ..storage import storage_for

    path = unit.read_at or unit.state[0]
    with storage_for(path).open_input(path) as handle:
        parquet = pq.ParquetFile(handle)
        file_fields = list(parquet.schema_arrow)
        if located:
            found = {name: _find(file_fields, located[name.lower()][1]) for name in columns if name.lower() in located}
            read = sorted({file_fields[i].name for i in found.values() if i is not None})
        else:
            wanted = {c.lower() for c in columns}
            read = [f.name for f in file_fields if f.name.lower() in wanted]
        # none wanted, or none there (each row group's rows alone): one column's read counts them
        table = parquet.read_row_group(unit.row_group, columns=read or [file_fields[0].name])
    if located:
        table = _by_table_names(table, file_fields, located, found)
    if not unit.deleted:
        return table
    live = np.ones(table.num_rows, dtype=bool)
    live[np.frombuffer(BitMap.deserialize(unit.deleted).to_array(), np.uint32)] = False
    return table.filter(pa.array(live))


def _find(fields: list[pa.Field], locator: T.StructField) -> int | None:
    """The index among a file's `fields` of the one `locator` names: by its field id where it carries one, else by
    its (physical) name, case-insensitively."""
    field_id = locator.metadata.get(SPARK_FIELD_ID) if locator.metadata else None
    for index, candidate in enumerate(fields):
        if field_id is not None:
            meta = candidate.metadata or {}
            if meta.get(ARROW_FIELD_ID) == str(field_id).encode():
                return index
        elif candidate.name.lower() == locator.name.lower():
            return index
    return None


def _by_table_names(table: pa.Table, file_fields: list[pa.Field], located: Located,
                    found: dict[str, int | None]) -> pa.Table:
    """A read by the files' names or ids with each column, and each struct's fields, named as the table names
    them; a column or field the file lacks left out (`_conformed` makes it NULL)."""
    names, arrays = [], []
    for name, index in found.items():
        if index is None:
            continue
        logical, locator = located[name.lower()]
        names.append(logical.name)
        arrays.append(_relabelled(table.column(file_fields[index].name), logical.dataType, locator.dataType))
    return pa.table(arrays, names=names) if names else table.select([])


def _relabelled(values: pa.ChunkedArray, logical: T.DataType, locator: T.DataType) -> pa.ChunkedArray:
    if not (isinstance(locator, T.StructType) and isinstance(logical, T.StructType) and pa.types.is_struct(values.type)):
        return values
    file_fields = [values.type.field(i) for i in range(values.type.num_fields)]
    chunks = []
    for chunk in values.chunks:
        children, names = [], []
        for named, inner in zip(logical.fields, locator.fields, strict=True):
            index = _find(file_fields, inner)
            if index is not None:
                names.append(named.name)
                children.append(_relabelled(pa.chunked_array([chunk.field(index)], file_fields[index].type),
                                            named.dataType, inner.dataType).combine_chunks())
        chunks.append(pa.StructArray.from_arrays(children, names=names, mask=chunk.is_null()) if children
                      else pa.nulls(len(chunk), pa.struct([])))
    return pa.chunked_array(chunks)


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
    if isinstance(found.type, pa.ExtensionType):  # a Parquet UUID: its 16 bytes, as Spark reads them
        found = pa.chunked_array([chunk.storage for chunk in found.chunks], found.type.storage_type) \
            if isinstance(found, pa.ChunkedArray) else found.storage
    return found.cast(kind, safe=False)  # nanoseconds to Spark's microseconds, as Spark reads them
