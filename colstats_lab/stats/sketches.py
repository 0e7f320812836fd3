"""NDV sketches in Spark: the bigint each column type is sketched as (the metastore's `sketches` merges them).

Spark 4's `hll_sketch_agg` takes int, bigint, string and binary; every column is sketched as a
bigint so one sketch format serves all types and merges across partitions. Integers, dates
(days) and timestamps (microseconds) are their exact value, booleans 0/1; doubles, floats,
decimals, strings and binaries their 64-bit xxhash. Spark hashes floating values from their
canonical bits, so -0.0 and 0.0 are one value and every NaN is one value, as SQL equality (and
`count(DISTINCT)`) treats them. Hashing also beats sketching strings directly (measured: the
hash runs in generated code, and DataSketches would skip the empty string). A null stays null
(xxhash64(NULL) would be 42).
"""
from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..coltypes import parse_type
from ..column_statistics.quantiles import KLL_K, sketch_family


def ndv_input(column: Column, type_name: str) -> Column:
    """The bigint image of a column's values that `hll_sketch_agg` counts."""
    base = parse_type(type_name).base
    if base in ("tinyint", "smallint", "int", "bigint"):
        return column.cast("bigint")
    if base == "boolean":
        return column.cast("bigint")
    if base == "date":
        return F.unix_date(column).cast("bigint")
    if base == "timestamp":
        return F.unix_micros(column)
    return F.when(column.isNotNull(), F.xxhash64(column))


def frequent_items_input(column: Column, type_name: str) -> Column:
    """What `approx_top_k_accumulate` sketches of a column whose type keeps frequent items
    (`metastore.settings.frequent_items.sketchable`), so that DataSketches' long and string serdes read the items back
    in Python: a string as it is, an integral value and a date (days since 1970-01-01) as a bigint."""
    return column if parse_type(type_name).base in ("string", "varchar", "char") else ndv_input(column, type_name)


def kll_aggregate(value: Column, type_name: str) -> Column | None:
    """Spark's KLL sketch aggregate of a column's values in the sketch's units (days for dates,
    microseconds for timestamps: what `value` holds), or None for a type without a distribution sketch."""
    family = sketch_family(type_name)
    if family is None:
        return None
    return F.call_function(f"kll_sketch_agg_{family.value}", value.cast(family.value), F.lit(KLL_K))
