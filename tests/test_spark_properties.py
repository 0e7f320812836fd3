"""Spark's statistics properties: value formats per type, and properties <-> CatalogStatistics round trips.

Expected strings are Spark's own (Java's Double/Float.toString, BigDecimal.toString, the UTC
`yyyy-MM-dd HH:mm:ss.SSSSSS` timestamp format), as a Hive catalog holds them after Spark's ANALYZE.
"""
from __future__ import annotations

import datetime as dt
import math
import struct
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colstats_lab.column_statistics.model import (
    BooleanColumnStatsData,
    ColumnStatisticsData,
    ColumnStatisticsObj,
    StringColumnStatsData,
)
from colstats_lab.stats.spark_properties import (
    CatalogColumnStat,
    CatalogStatistics,
    NotConvertible,
    UnsupportedStatisticsType,
    column_stat_from_hive,
    from_external_string,
    hive_stats_from_spark,
    stats_from_properties,
    stats_to_properties,
    to_external_string,
)


@pytest.mark.parametrize("value, type_name, text", [
    (1.5, "double", "1.5"), (1e10, "double", "1.0E10"), (1e-5, "double", "1.0E-5"), (0.001, "double", "0.001"),
    (1234567.0, "double", "1234567.0"), (12345678.0, "double", "1.2345678E7"), (-0.0, "double", "-0.0"),
    (float("nan"), "double", "NaN"), (float("-inf"), "double", "-Infinity"),
    (0.10000000149011612, "float", "0.1"), (1e10, "float", "1.0E10"), (3.4028234663852886e38, "float", "3.4028235E38"),
    (Decimal("2.5"), "decimal(10,2)", "2.50"), (Decimal("-0.01"), "decimal(5,2)", "-0.01"),
    (dt.date(2026, 1, 1), "date", "2026-01-01"),
    (dt.datetime(2026, 1, 1, 1, 2, 3, 120000), "timestamp", "2026-01-01 01:02:03.120000"),
    (dt.datetime(2026, 1, 1, 1, 2, 3, tzinfo=dt.timezone(dt.timedelta(hours=-5))), "timestamp",
     "2026-01-01 06:02:03.000000"),
    (True, "boolean", "true"), (-7, "smallint", "-7"), (2**63 - 1, "bigint", "9223372036854775807"),
])
def test_values_are_written_as_spark_writes_them(value, type_name, text):
    assert to_external_string(value, type_name) == text


def test_string_and_binary_have_no_min_max_in_spark():
    with pytest.raises(UnsupportedStatisticsType, match="string"):
        to_external_string("a", "string")
    with pytest.raises(UnsupportedStatisticsType, match="binary"):
        from_external_string("a", "binary")


def test_version_one_timestamps_may_have_short_fractions():
    assert from_external_string("2026-01-01 01:02:03", "timestamp", version=1) == dt.datetime(2026, 1, 1, 1, 2, 3)
    assert from_external_string("2026-01-01 01:02:03.5", "timestamp", version=1) == dt.datetime(2026, 1, 1, 1, 2, 3,
                                                                                                500000)


def _same(a, b) -> bool:
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b and type(a) is type(b)


_FLOAT32 = st.integers(0, 2**32 - 1).map(lambda bits: struct.unpack("<f", struct.pack("<I", bits))[0])
_VALUES = st.one_of(
    st.tuples(st.just("tinyint"), st.integers(-128, 127)),
    st.tuples(st.just("smallint"), st.integers(-2**15, 2**15 - 1)),
    st.tuples(st.just("int"), st.integers(-2**31, 2**31 - 1)),
    st.tuples(st.just("bigint"), st.integers(-2**63, 2**63 - 1)),
    st.tuples(st.just("double"), st.floats(allow_nan=True, allow_infinity=True)),
    st.tuples(st.just("float"), _FLOAT32),
    st.tuples(st.just("decimal(38,6)"), st.decimals(min_value=Decimal("-1e31"), max_value=Decimal("1e31"),
                                                    places=6, allow_nan=False, allow_infinity=False)),
    st.tuples(st.just("decimal(5,0)"), st.integers(-99999, 99999).map(Decimal)),
    st.tuples(st.just("date"), st.dates()),
    st.tuples(st.just("timestamp"), st.datetimes()),
    st.tuples(st.just("timestamp_ntz"), st.datetimes()),
    st.tuples(st.just("boolean"), st.booleans()),
)


@settings(max_examples=400, deadline=None)
@given(_VALUES)
def test_every_value_of_every_type_round_trips(typed_value):
    type_name, value = typed_value
    text = to_external_string(value, type_name)
    back = from_external_string(text, type_name)
    assert _same(back, value), (type_name, value, text, back)
    assert to_external_string(back, type_name) == text


_COUNTS = st.none() | st.integers(0, 10**12)
_COLUMN_STATS = st.builds(CatalogColumnStat, distinctCount=_COUNTS, min=st.none() | st.text(min_size=1),
                          max=st.none() | st.text(min_size=1), nullCount=_COUNTS, avgLen=_COUNTS, maxLen=_COUNTS,
                          histogram=st.none() | st.text(min_size=1), version=st.sampled_from([1, 2]))
_NAMES = st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), min_size=1, max_size=5, unique=True)


@settings(max_examples=200, deadline=None)
@given(_NAMES.flatmap(lambda names: st.tuples(
    st.just(names), st.builds(CatalogStatistics, sizeInBytes=st.integers(0, 2**62), rowCount=_COUNTS,
                              colStats=st.dictionaries(st.sampled_from(names), _COLUMN_STATS)))))
def test_properties_and_statistics_round_trip(names_and_stats):
    names, stats = names_and_stats
    properties = stats_to_properties(stats, names)
    assert stats_from_properties(properties, names) == stats
    assert stats_to_properties(stats_from_properties(properties, names), names) == properties


def test_reading_skips_columns_without_a_version_marker():
    properties = {"spark.sql.statistics.totalSize": "100", "spark.sql.statistics.numRows": "5",
                  "spark.sql.statistics.colStats.a.version": "2", "spark.sql.statistics.colStats.a.min": "1",
                  "spark.sql.statistics.colStats.b.min": "7", "spark.sql.statistics.colStats.b.nullCount": "0",
                  "other.key": "x"}
    stats = stats_from_properties(properties, ["a", "b"])
    assert stats == CatalogStatistics(100, 5, {"a": CatalogColumnStat(min="1", version=2)})
    assert stats_from_properties({"numRows": "5"}, ["a"]) is None


def test_string_lengths_convert_between_hive_and_spark_definitions():
    # 10 rows, 4 null, lengths 1,2,3,4,5,6 of the others: Hive averages over all rows, Spark over non-null, rounded up
    obj = ColumnStatisticsObj("s", "string", ColumnStatisticsData.of(
        StringColumnStatsData(maxColLen=6, avgColLen=21 / 10, numNulls=4, numDVs=6)))
    spark = column_stat_from_hive(obj, row_count=10)
    assert (spark.avgLen, spark.maxLen, spark.nullCount, spark.distinctCount) == (4, 6, 4, 6)  # ceil(21/6)
    assert spark.min is None and spark.max is None
    back = hive_stats_from_spark("s", "string", spark, 10).statsData.value
    assert column_stat_from_hive(ColumnStatisticsObj("s", "string", ColumnStatisticsData.of(back)), 10) == spark


def test_booleans_convert_when_spark_determines_the_counts():
    all_true = ColumnStatisticsObj("b", "boolean", ColumnStatisticsData.of(BooleanColumnStatsData(7, 0, 3)))
    spark = column_stat_from_hive(all_true, row_count=10)
    assert (spark.min, spark.max, spark.distinctCount, spark.nullCount) == ("true", "true", 1, 3)
    assert hive_stats_from_spark("b", "boolean", spark, 10).statsData.value == BooleanColumnStatsData(7, 0, 3)
    mixed = column_stat_from_hive(ColumnStatisticsObj("b", "boolean", ColumnStatisticsData.of(
        BooleanColumnStatsData(2, 5, 3))), row_count=10)
    assert (mixed.min, mixed.max, mixed.distinctCount) == ("false", "true", 2)
    with pytest.raises(NotConvertible, match="column b: Spark keeps min/max of a boolean"):
        hive_stats_from_spark("b", "boolean", mixed, 10)


def test_a_long_histogram_is_split_into_numbered_parts_and_joined_on_read():
    """Spark keeps a property value longer than spark.sql.sources.schemaStringLengthThreshold (4000) as
    numbered parts: `<col>.histogram.numParts` and `<col>.histogram.part.N`."""
    from colstats_lab.stats.spark_properties import COL_STATS_PREFIX, PROPERTY_LENGTH_THRESHOLD

    histogram = "".join(chr(ord("a") + i % 26) for i in range(2 * PROPERTY_LENGTH_THRESHOLD + 17))
    stats = CatalogStatistics(100, 10, {"v": CatalogColumnStat(distinctCount=3, histogram=histogram)})
    properties = stats_to_properties(stats, ["v"])
    assert properties[COL_STATS_PREFIX + "v.histogram.numParts"] == "3"
    assert len(properties[COL_STATS_PREFIX + "v.histogram.part.2"]) == 17
    assert COL_STATS_PREFIX + "v.histogram" not in properties
    assert stats_from_properties(properties, ["v"]).colStats["v"].histogram == histogram


def test_a_malformed_entry_is_skipped_with_a_warning_and_a_missing_size_stays_missing():
    """Spark's statsFromProperties logs "Failed to parse column statistics" and leaves that column out;
    without spark.sql.statistics.totalSize there is no size (Spark would not invent 0)."""
    properties = {"spark.sql.statistics.numRows": "5",
                  "spark.sql.statistics.colStats.a.version": "2", "spark.sql.statistics.colStats.a.nullCount": "x",
                  "spark.sql.statistics.colStats.b.version": "2", "spark.sql.statistics.colStats.b.nullCount": "1",
                  "spark.sql.statistics.colStats.c.version": "2",
                  "spark.sql.statistics.colStats.c.histogram.numParts": "2",
                  "spark.sql.statistics.colStats.c.histogram.part.0": "abc"}
    with pytest.warns(UserWarning) as caught:
        stats = stats_from_properties(properties, ["a", "b", "c"])
    assert sorted(str(w.message).split(":")[0] for w in caught) == [
        "Failed to parse column statistics for column a", "Failed to parse column statistics for column c"]
    assert list(stats.colStats) == ["b"] and stats.colStats["b"].nullCount == 1
    assert stats.sizeInBytes is None and stats.rowCount == 5
    assert "spark.sql.statistics.totalSize" not in stats_to_properties(stats, ["b"])


def test_set_of_a_spark_setting_reaches_the_labs_spark_and_reset_puts_it_back(lab, spark):
    """`SET spark.sql.cbo.enabled = true` answered "= true" while Spark's own setting stayed false."""
    before = spark.conf.get("spark.sql.cbo.enabled")
    assert lab.sql("SET spark.sql.cbo.enabled = true").message == "spark.sql.cbo.enabled = true"
    assert spark.conf.get("spark.sql.cbo.enabled") == "true"
    assert lab.sql("SET spark.sql.cbo.enabled").df.to_dict("records") == [{"key": "spark.sql.cbo.enabled",
                                                                         "value": "true"}]
    with pytest.raises(Exception, match=r"^spark.sql.warehouse.dir is fixed when Spark starts: give it to "
                                        r"Lab\(spark_conf=\{'spark.sql.warehouse.dir': '/x'\}\) before Spark starts$"):
        lab.sql("SET spark.sql.warehouse.dir = /x")
    with pytest.raises(Exception, match="Spark refuses spark.sql.shuffle.partitions = many: "):
        lab.sql("SET spark.sql.shuffle.partitions = many")
    lab.sql("SET hive.txn.timeout = 20")
    assert lab.sql("RESET spark.sql.cbo.enabled").message == "Reset spark.sql.cbo.enabled"
    assert spark.conf.get("spark.sql.cbo.enabled") == before
    lab.sql("SET spark.sql.cbo.enabled = true")
    assert lab.sql("RESET").message == "Reset hive.txn.timeout, spark.sql.cbo.enabled"
    assert spark.conf.get("spark.sql.cbo.enabled") == before and lab.get("hive.txn.timeout") == 300
    assert lab.sql("RESET").message == "Reset nothing: no setting was changed"
