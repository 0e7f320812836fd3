"""NDV sketches: every type maps onto a sketchable bigint without merging distinct values, and
sketches merge in Python exactly as Spark would union them."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from metastore_rows import connect
from pyspark.sql import functions as F
from pyspark.sql import types as T

from colstats_lab.column_statistics.sketches import NDV_LG_K, estimate, ndv_relative_error, union
from colstats_lab.stats import ndv_input

NEAR_VALUES = {
    # values that a careless mapping would merge (or split), with the distinct count SQL gives them
    "double": (T.DoubleType(), [0.0, -0.0, float("nan"), float("nan"), 1.0, 1.0000000000000002, -1.0, 1e308,
                                5e-324, float("inf"), float("-inf")], 9),
    "float": (T.FloatType(), [0.1, 0.10000001, -0.0, 0.0, float("nan"), 3.4e38, -3.4e38], 6),
    "decimal": (T.DecimalType(10, 2), [Decimal("1.00"), Decimal("1.01"), Decimal("-1.00"), Decimal("0.00"),
                                       Decimal("99999999.99")], 5),
    "date": (T.DateType(), [dt.date(1970, 1, 1), dt.date(1969, 12, 31), dt.date(1, 1, 1), dt.date(9999, 12, 31)], 4),
    "timestamp": (T.TimestampType(), [dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
                                      dt.datetime(2026, 1, 1, 0, 0, 0, 1, tzinfo=dt.UTC),
                                      dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.UTC)], 3),
    "boolean": (T.BooleanType(), [True, False, True], 2),
    "string": (T.StringType(), ["", " ", "a", "A", "é", "e\u0301"], 6),
    "binary": (T.BinaryType(), [b"", b"\x00", b"\x00\x00", b"a"], 4),
    "int": (T.IntegerType(), [0, -1, 1, 2**31 - 1, -2**31], 5),
    "bigint": (T.LongType(), [0, -1, 2**63 - 1, -2**63], 4),
}


@pytest.mark.parametrize("type_name", sorted(NEAR_VALUES))
def test_mapping_keeps_distinct_values_apart_and_equal_values_together(spark, type_name):
    spark_type, values, expected = NEAR_VALUES[type_name]
    hive_type = {"decimal": "decimal(10,2)"}.get(type_name, type_name)
    frame = spark.createDataFrame([(v,) for v in values] + [(None,)], T.StructType([T.StructField("v", spark_type)]))
    mapped = frame.select(ndv_input(F.col("v"), hive_type).alias("m"))
    row = mapped.agg(F.count_distinct("m").alias("d"), F.count("m").alias("n"),
                     F.hll_sketch_agg("m", NDV_LG_K).alias("s")).first()
    exact = frame.agg(F.count_distinct("v")).first()[0]
    assert exact == expected  # Spark's own SQL equality agrees with what we expect
    assert row.d == expected
    assert row.n == len(values)  # a null maps to null, not to a value that would be counted
    assert round(estimate(bytes(row.s))) == expected


def test_python_union_reproduces_spark_union(spark):
    frame = spark.range(0, 30000).select((F.col("id") % 3).alias("g"), (F.col("id") * 7919 % 20000).alias("v"))
    per_group = frame.groupBy("g").agg(F.hll_sketch_agg("v", NDV_LG_K).alias("s")).collect()
    spark_union = frame.agg(F.hll_sketch_estimate(F.hll_sketch_agg("v", NDV_LG_K))).first()[0]
    merged = union([bytes(r.s) for r in per_group])
    exact = frame.select("v").distinct().count()
    assert round(estimate(merged)) == spark_union
    assert abs(estimate(merged) - exact) <= ndv_relative_error() * exact


def test_large_string_column_ndv_within_error(spark):
    frame = spark.range(0, 200_000).select(F.concat(F.lit("k"), (F.col("id") % 50_000).cast("string")).alias("v"))
    sketch = frame.agg(F.hll_sketch_agg(ndv_input(F.col("v"), "string"), NDV_LG_K)).first()[0]
    assert abs(estimate(bytes(sketch)) - 50_000) <= ndv_relative_error() * 50_000


def test_stored_sketches_are_compact_hll4_with_sparks_estimates(lab, spark):
    """The metastore keeps DataSketches' compact HLL_4: the registers of Spark's HLL_8 sketch in half the
    bytes once past the exact modes, so Spark's sketch and its compact form give the same estimate, and
    unions of either the same registers."""

    from datasketches import hll_sketch, tgt_hll_type

    from colstats_lab.column_statistics.sketches import compact

    rows = spark.range(0, 24_000).select((F.col("id") * 7919 % 9000).alias("v"),
                                         F.when(F.col("id") % 2 == 0, "a").otherwise("b").alias("ds"))
    per_part = {f"ds={r.ds}": bytes(r.s) for r in rows.groupBy("ds").agg(F.hll_sketch_agg("v", NDV_LG_K).alias("s"))
                .collect()}
    for sketch in per_part.values():
        assert len(sketch) == 4_136 and len(compact(sketch)) < 2_200
        assert estimate(compact(sketch)) == estimate(sketch)
    assert estimate(union([compact(s) for s in per_part.values()])) == estimate(union(list(per_part.values())))
    lab.sql("CREATE TABLE wide_ndv (v BIGINT) PARTITIONED BY (ds STRING)")
    lab.tables["wide_ndv"].write(rows)
    with connect(lab.metastore.url) as conn:
        stored = dict(conn.execute("SELECT PART_NAME, BIT_VECTOR FROM PART_COL_STATS WHERE COLUMN_NAME = 'v'"))
    conn.close()
    exact = {f"ds={r.ds}": r.n for r in rows.groupBy("ds").agg(F.countDistinct("v").alias("n")).collect()}
    for name, sketch in stored.items():
        assert hll_sketch.deserialize(sketch).tgt_type == tgt_hll_type.HLL_4 and len(sketch) < 2_200
        assert abs(estimate(sketch) - exact[name]) <= ndv_relative_error() * exact[name]
