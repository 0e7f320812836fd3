"""Spark's serialized equi-height histogram, written and read here, checked against Spark's own
HistogramSerializer in the session's JVM; and Spark's bins built from a KLL sketch."""
from __future__ import annotations

import numpy as np
import pytest

from colstats_lab.column_statistics.quantiles import Distribution, SketchFamily, dump, new_sketch, rank_error
from colstats_lab.stats.spark_histogram import (
    BadSparkHistogram,
    HistogramBin,
    SparkHistogram,
    histogram_from_sketch,
    sketch_from_histogram,
)


def _jvm_histograms(spark):
    return spark.sparkContext._jvm.org.apache.spark.sql.catalyst.plans.logical


def _bins(count: int) -> tuple[HistogramBin, ...]:
    return tuple(HistogramBin(float(i * 3), float(i * 3 + 2.5), 1 + i % 4) for i in range(count))


def test_spark_reads_the_histogram_we_serialize(spark):
    ours = SparkHistogram(7.874015748031496, _bins(254))
    back = _jvm_histograms(spark).HistogramSerializer.deserialize(ours.serialize())
    assert back.height() == ours.height
    assert [(b.lo(), b.hi(), b.ndv()) for b in back.bins()] == [(b.lo, b.hi, b.ndv) for b in ours.bins]


def test_we_read_the_lz4_compressed_histogram_spark_serializes(spark):
    logical = _jvm_histograms(spark)
    expected = SparkHistogram(12.5, _bins(254))
    jvm_bins = spark.sparkContext._gateway.new_array(logical.HistogramBin, len(expected.bins))
    for i, b in enumerate(expected.bins):
        jvm_bins[i] = logical.HistogramBin(b.lo, b.hi, b.ndv)
    text = logical.HistogramSerializer.serialize(logical.Histogram(expected.height, jvm_bins))
    assert SparkHistogram.deserialize(text) == expected


def test_a_damaged_histogram_is_named():
    text = SparkHistogram(1.0, _bins(3)).serialize()
    damaged = text[:30] + ("A" if text[30] != "A" else "B") + text[31:]
    with pytest.raises(BadSparkHistogram):
        SparkHistogram.deserialize(damaged)


def test_spark_bins_from_a_sketch_hold_equal_shares_and_the_columns_distinct_values():
    values = np.concatenate([np.full(600, 7), np.arange(1000, 1400)])  # 60 % one value, then 400 distinct
    sketch = new_sketch(SketchFamily.BIGINT)
    for v in values:
        sketch.update(int(v))
    distribution = Distribution(dump(sketch, SketchFamily.BIGINT), SketchFamily.BIGINT)
    histogram = histogram_from_sketch(distribution, len(values), 401, 10, whole_numbers=True)
    assert histogram.height == 100.0
    assert [b.lo for b in histogram.bins[:6]] == [7.0] * 6  # the heavy value fills six bins of ten
    assert histogram.bins[-1].hi == 1399.0
    for b in histogram.bins:
        assert b.ndv <= max(1, b.hi - b.lo + 1)
        below = ((values >= b.lo) & (values <= b.hi)).sum()
        assert below >= histogram.height * 0.9  # each bin holds about a tenth of the values
    # Spark's histogram back into a sketch: quartiles within a bin (1/10 of the rows here) of the exact ranks
    again = Distribution(sketch_from_histogram(histogram, "bigint"), SketchFamily.BIGINT)
    ordered = np.sort(values)
    for rank, quartile in zip((0.25, 0.5, 0.75), again.quartiles(), strict=True):
        below = np.searchsorted(ordered, quartile, side="left") / len(values)
        at_or_below = np.searchsorted(ordered, quartile, side="right") / len(values)
        assert below - 0.1 - rank_error() <= rank <= at_or_below + 0.1 + rank_error(), (rank, quartile)
