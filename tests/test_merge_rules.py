"""Hive's levels and Drill's merge by one set of rules: the same parts merged as Hive's partition
statistics and as Drill's metadata units give the same nulls, min, max and NDV, and those equal the
figures of every value at once, computed here from the values."""
from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
from test_stats_segments import _sketch

from colstats_lab.column_statistics.merge import merge_column_stats
from colstats_lab.column_statistics.sketches import ndv_relative_error
from colstats_lab.metastore import ColumnStatisticsData, ColumnStatisticsObj, DoubleColumnStatsData, LongColumnStatsData
from colstats_lab.metastore.rows.metadata_units import ColumnMetadata, merge_metadata_column

_longs = st.one_of(st.none(), st.integers(-2**63, 2**63 - 1))
_doubles = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True).map(lambda v: 0.0 if v == 0 else v))


def _spark_order(value):
    return (1, 0.0) if isinstance(value, float) and math.isnan(value) else (0, value)


def _distinct_key(value):
    return "NaN" if isinstance(value, float) and math.isnan(value) else value


def _hive_part(type_name: str, values: list) -> tuple[ColumnStatisticsObj, int]:
    present = [v for v in values if v is not None]
    low = min(present, key=_spark_order, default=None)
    high = max(present, key=_spark_order, default=None)
    data_class = LongColumnStatsData if type_name == "bigint" else DoubleColumnStatsData
    data = data_class(low, high, len(values) - len(present), len({_distinct_key(v) for v in present}), _sketch(present))
    return ColumnStatisticsObj("c", type_name, ColumnStatisticsData.of(data)), len(values)


def _drill_unit(type_name: str, values: list) -> tuple[int, ColumnMetadata]:
    present = [v for v in values if v is not None]
    return len(values), ColumnMetadata("c", type_name, min(present, key=_spark_order, default=None),
                                       max(present, key=_spark_order, default=None), len(values) - len(present),
                                       float(len(present)), None, _sketch(present))


@settings(max_examples=150, deadline=None)
@given(data=st.data(), type_name=st.sampled_from(["bigint", "double"]))
def test_hive_and_drill_merge_the_same_parts_to_the_same_figures(data, type_name):
    values = _longs if type_name == "bigint" else _doubles
    parts = data.draw(st.lists(st.lists(values, min_size=1, max_size=8), min_size=1, max_size=10))

    hive = merge_column_stats([_hive_part(type_name, p) for p in parts]).statsData.value
    drill = merge_metadata_column([_drill_unit(type_name, p) for p in parts], "c", type_name, with_ndv=True)

    every = [v for p in parts for v in p if v is not None]
    want_low = min(every, key=_spark_order, default=None)
    want_high = max(every, key=_spark_order, default=None)
    for figures in ((hive.lowValue, hive.highValue), (drill.low, drill.high)):
        assert [_distinct_key(v) for v in figures] == [_distinct_key(want_low), _distinct_key(want_high)]
    assert hive.numNulls == drill.nulls == sum(len(p) for p in parts) - len(every)
    assert hive.numDVs == drill.ndv
    distinct = len({_distinct_key(v) for v in every})
    assert abs(hive.numDVs - distinct) <= max(1, distinct * ndv_relative_error())


def test_drill_leaves_a_range_unknown_that_hive_narrows():
    """The one rule where they differ: a part with values and no min/max. Hive's aggregators take the
    known ones; Drill's metadata makes the parent's unknown, as pruning on the narrower range would drop
    the part's rows."""
    known = _drill_unit("bigint", [1, 5])
    unknown = (3, ColumnMetadata("c", "bigint", None, None, 0, 3.0))
    merged = merge_metadata_column([known, unknown], "c", "bigint", with_ndv=False)
    assert (merged.low, merged.high, merged.nulls) == (None, None, 0)

    hive_known = _hive_part("bigint", [1, 5])
    no_range = ColumnStatisticsObj("c", "bigint", ColumnStatisticsData.of(LongColumnStatsData(None, None, 0, 3, None)))
    hive = merge_column_stats([hive_known, (no_range, 3)]).statsData.value
    assert (hive.lowValue, hive.highValue, hive.numNulls) == (1, 5, 0)
