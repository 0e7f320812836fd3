"""Our table-level statistics against Spark's own ANALYZE ... FOR ALL COLUMNS on the same rows.

Definitions differ, so ours are converted to Spark's before comparing: Spark keeps no string
min/max, its string avg_col_len is ceil(average length of non-null values) where Hive's averages
over all rows with a null as 0, and for fixed-width types it reports the type's default size.
"""
from __future__ import annotations

import math
from functools import reduce

import numpy as np
import pytest
from mixed_data import COLUMNS, SCHEMA, all_rows, write_mix

from colstats_lab import Lab
from colstats_lab.column_statistics.sketches import ndv_relative_error
from colstats_lab.errors import InvalidArgument
from colstats_lab.interop import UnsupportedCatalog, read_table_statistics
from colstats_lab.stats.spark_properties import column_stat_from_hive

SPARK_NDV_ERROR = 3 * 0.05  # HyperLogLog++ at Spark's default 5 % relative standard deviation, 3 sigma
DEFAULT_SIZE = {"id": 8, "x": 4, "small": 2, "amount": 8, "f": 4, "price": 8, "flag": 1, "day": 4, "ts": 8,
                "nothing": 4}


@pytest.fixture(scope="module")
def both(spark, tmp_path_factory):
    lab = Lab(home=str(tmp_path_factory.mktemp("parity")), spark=spark)
    data = write_mix(lab, spark)
    lab.sql("ANALYZE TABLE mix COMPUTE STATISTICS FOR ALL COLUMNS")
    frames = [spark.createDataFrame(rows, SCHEMA).selectExpr("*", f"'{p}' AS ds") for p, rows in data.items()]
    native = reduce(lambda a, b: a.unionByName(b), frames)
    spark.sql("DROP TABLE IF EXISTS mix_native")
    native.write.partitionBy("ds").format("parquet").saveAsTable("mix_native")
    spark.sql("ANALYZE TABLE mix_native COMPUTE STATISTICS FOR ALL COLUMNS")
    yield lab
    spark.sql("DROP TABLE IF EXISTS mix_native")
    lab.close()


def _spark_describe(spark, column: str) -> dict[str, str]:
    rows = spark.sql(f"DESCRIBE EXTENDED mix_native {column}").collect()
    return {r.info_name: r.info_value for r in rows}


def _ours_in_spark_terms(lab, column: str) -> dict:
    obj = lab.metastore.column_stats.get_table_column_statistics("default", "mix", column).obj(column)
    data = obj.statsData.value
    kind = obj.statsData.kind.value
    rows = int(lab.metastore.catalog.get_table("default", "mix").parameters["numRows"])
    out = {"num_nulls": data.numNulls}
    if kind in ("stringStats", "binaryStats"):
        non_null = rows - data.numNulls
        out["max_col_len"] = data.maxColLen
        out["avg_col_len"] = math.ceil(data.avgColLen * rows / non_null) if non_null else None
    else:
        out["max_col_len"] = DEFAULT_SIZE[column]
    if hasattr(data, "lowValue"):
        low, high = data.lowValue, data.highValue
        if kind == "doubleStats" and column == "f":  # Spark prints the float itself
            low, high = [None if v is None else np.float32(v) for v in (low, high)]
        out["min"], out["max"] = low, high
    if kind == "booleanStats":  # Spark orders false < true; Hive keeps the counts
        present = [v for v, n in ((False, data.numFalses), (True, data.numTrues)) if n]
        out["min"], out["max"] = (str(min(present)).lower(), str(max(present)).lower()) if present else (None, None)
        out["distinct_count"] = len(present)
    if hasattr(data, "numDVs"):
        out["distinct_count"] = data.numDVs
    return out


def _equal_values(ours, theirs: str, column: str) -> bool:
    if ours is None:
        return theirs == "NULL"
    if column in ("amount", "f"):
        return math.isnan(float(theirs)) and math.isnan(float(ours)) or float(theirs) == float(ours)
    if column == "ts":
        return theirs.removesuffix(" +0000") == str(ours)
    return str(ours) == theirs


@pytest.mark.parametrize("column", list(COLUMNS))
def test_table_stats_match_spark_analyze(both, spark, column):
    ours = _ours_in_spark_terms(both, column)
    theirs = _spark_describe(spark, column)
    assert str(ours["num_nulls"]) == theirs["num_nulls"]
    assert str(ours["max_col_len"]) == theirs["max_col_len"]
    if "avg_col_len" in ours and ours["avg_col_len"] is not None:
        assert str(ours["avg_col_len"]) == theirs["avg_col_len"]
    if "min" in ours:
        assert _equal_values(ours["min"], theirs["min"], column), (ours["min"], theirs["min"])
        assert _equal_values(ours["max"], theirs["max"], column), (ours["max"], theirs["max"])
    else:
        assert theirs["min"] == "NULL" and theirs["max"] == "NULL"  # neither keeps string min/max
    if "distinct_count" in ours:
        spark_ndv = int(theirs["distinct_count"])
        tolerance = max(1.0, (SPARK_NDV_ERROR + ndv_relative_error()) * max(spark_ndv, ours["distinct_count"]))
        assert abs(ours["distinct_count"] - spark_ndv) <= tolerance, (ours["distinct_count"], spark_ndv)


@pytest.fixture(scope="module")
def spark_catalog_stats(both, spark):
    return read_table_statistics(spark, "mix_native").statistics


@pytest.mark.parametrize("column", list(COLUMNS))
def test_our_stats_in_spark_form_equal_spark_catalog(both, spark_catalog_stats, column):
    """`column_stat_from_hive` gives what Spark's own ANALYZE stored, string for string."""
    rows = int(both.metastore.catalog.get_table("default", "mix").parameters["numRows"])
    ours = column_stat_from_hive(both.metastore.column_stats.get_table_column_statistics("default", "mix",
                                                                                         column).obj(column), rows)
    theirs = spark_catalog_stats.colStats[column]
    assert (ours.min, ours.max, ours.nullCount, ours.avgLen, ours.maxLen) == \
           (theirs.min, theirs.max, theirs.nullCount, theirs.avgLen, theirs.maxLen)
    if ours.distinctCount is not None:
        tolerance = max(1.0, (SPARK_NDV_ERROR + ndv_relative_error()) * theirs.distinctCount)
        assert abs(ours.distinctCount - theirs.distinctCount) <= tolerance


def test_import_spark_stats_registers_the_table_and_stores_spark_figures(both, spark):
    data = all_rows()
    result = both.import_spark_stats("default.mix_native")
    table = both.metastore.catalog.get_table("default", "mix_native")
    assert table.tableType == "EXTERNAL_TABLE" and table.partition_key_names == ["ds"]
    every_row = [r for rows in data.values() for r in rows]
    assert table.parameters["numRows"] == str(len(every_row)) == str(result.details.rows)
    x = both.metastore.column_stats.get_table_column_statistics("default", "mix_native", "x").obj("x").statsData.longStats
    xs = [r[1] for r in every_row]
    assert (x.lowValue, x.highValue, x.numNulls) == (min(v for v in xs if v is not None),
                                                     max(v for v in xs if v is not None), xs.count(None))
    day = both.metastore.column_stats.get_table_column_statistics("default", "mix_native", "day").obj("day").statsData.dateStats
    assert day.lowValue.to_date() == min(r[8] for r in every_row if r[8] is not None)
    assert "Spark keeps min/max of a boolean" in result.details.skipped["flag"]
    assert set(result.details.columns) == set(COLUMNS) - {"flag"}
    described = both.sql("DESCRIBE FORMATTED mix_native x").df
    described = dict(zip(described.info_name, described.info_value, strict=True))
    assert (described["min"], described["num_nulls"]) == (str(x.lowValue), str(xs.count(None)))
    assert both.import_spark_stats("mix_native").details.rows == len(every_row)  # again: replaced, not doubled


def test_import_without_spark_stats_says_what_to_run(both, spark):
    spark.sql("CREATE TABLE IF NOT EXISTS plain_native (a INT) USING parquet")
    try:
        with pytest.raises(InvalidArgument, match=r"run ANALYZE TABLE default.plain_native COMPUTE STATISTICS"):
            both.import_spark_stats("plain_native")
    finally:
        spark.sql("DROP TABLE IF EXISTS plain_native")


def test_export_needs_a_hive_catalog(both):
    with pytest.raises(UnsupportedCatalog, match="enableHiveSupport"):
        both.tables["mix"].export_spark_stats("mix_native")
