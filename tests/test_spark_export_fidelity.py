"""What the lab writes for Spark equals what Spark's own ANALYZE writes: both analyze the same files, and
the properties the lab's export computes are compared key by key (version included) with the ones Spark's
ANALYZE ... FOR ALL COLUMNS keeps (CatalogColumnStat.toMap, read from the session's JVM), for every type,
histograms on and off, few rows and more, even and odd counts, and a partitioned table's key columns."""
from __future__ import annotations

import uuid

import pytest

from colstats_lab.column_statistics.quantiles import rank_error
from colstats_lab.interop.exchange import spark_statistics_properties
from colstats_lab.interop.spark_catalog import read_table_statistics
from colstats_lab.stats.spark_histogram import SparkHistogram
from colstats_lab.stats.spark_properties import COL_STATS_PREFIX, NUM_ROWS, TOTAL_SIZE

SCHEMA = ("id BIGINT, x INT, s SMALLINT, amount DOUBLE, f FLOAT, price DECIMAL(10,2), note STRING, flag BOOLEAN, "
          "day DATE, ts TIMESTAMP")


def spark_properties(spark, table: str) -> dict[str, str]:
    """The properties Spark's HiveExternalCatalog would write for the statistics its ANALYZE keeps."""
    jvm = spark.sparkContext._jvm
    state = spark._jsparkSession.sessionState()
    stats = state.catalog().getTableMetadata(state.sqlParser().parseTableIdentifier(table)).stats().get()
    out = {TOTAL_SIZE: str(stats.sizeInBytes())}
    if stats.rowCount().isDefined():
        out[NUM_ROWS] = str(stats.rowCount().get())
    to_java = jvm.scala.jdk.javaapi.CollectionConverters
    columns = to_java.asJava(stats.colStats())
    for column in columns.keySet():
        entries = to_java.asJava(columns.get(column).toMap(column))
        out.update({COL_STATS_PREFIX + key: entries.get(key) for key in entries.keySet()})
    return out


def rows_sql(count: int) -> str:
    """`count` rows of every type with NULLs; the values repeat so bins hold several of one."""
    return (f"SELECT id, CASE WHEN id % 7 = 3 THEN NULL ELSE CAST((id * 37) % 23 - 5 AS INT) END AS x, "
            f"CAST(id % 5 AS SMALLINT) AS s, CASE WHEN id % 5 = 4 THEN NULL ELSE id * 1.5 - 7 END AS amount, "
            f"CASE WHEN id % 3 = 2 THEN NULL ELSE CAST(1.12345 + id % 4 AS FLOAT) END AS f, "
            f"CAST(id * 0.25 AS DECIMAL(10,2)) AS price, "
            f"CASE WHEN id % 6 = 0 THEN NULL ELSE repeat('é', CAST(1 + id % 9 AS INT)) END AS note, "
            f"CASE WHEN id % 9 = 0 THEN NULL ELSE id % 3 = 0 END AS flag, "
            f"date_add(DATE'2026-01-01', CAST(id % 40 AS INT)) AS day, "
            f"timestamp_micros(1767225600000000 + id * 3600000007) AS ts FROM range({count})")


@pytest.fixture
def histograms(spark):
    """Spark's histograms on (numBins as given by the test), off again afterwards."""
    def turn_on(bins: int) -> None:
        spark.conf.set("spark.sql.statistics.histogram.enabled", "true")
        spark.conf.set("spark.sql.statistics.histogram.numBins", str(bins))
    yield turn_on
    spark.conf.set("spark.sql.statistics.histogram.enabled", "false")
    spark.conf.unset("spark.sql.statistics.histogram.numBins")


def both(lab, spark, tmp_path, select: str, partitioned_by: str = "") -> tuple[dict, dict]:
    """Spark's ANALYZE and the lab's of one set of files: Spark's properties and the lab's export of them."""
    name = f"fidelity_{uuid.uuid4().hex[:8]}"
    location = str(tmp_path / name)
    partition = f" PARTITIONED BY ({partitioned_by})" if partitioned_by else ""
    spark.sql(f"CREATE TABLE {name} USING parquet{partition} LOCATION '{location}' AS {select}")
    spark.sql(f"ANALYZE TABLE {name} COMPUTE STATISTICS FOR ALL COLUMNS")
    theirs = spark_properties(spark, name)
    lab.set("hive.stats.kll.enable", True)
    lab.register_external(name, location)
    lab.sql(f"ANALYZE TABLE {name} COMPUTE STATISTICS FOR ALL COLUMNS")
    table = lab.resolve(name)
    bins = int(spark.conf.get("spark.sql.statistics.histogram.numBins", "254"))
    enabled = spark.conf.get("spark.sql.statistics.histogram.enabled", "false") == "true"
    ours, skipped, _ = spark_statistics_properties(lab.metastore, table, read_table_statistics(spark, name), bins,
                                                   enabled)
    assert skipped == {}
    spark.sql(f"DROP TABLE {name}")
    return theirs, ours


def assert_same(theirs: dict, ours: dict, estimated: tuple[str, ...] = ()) -> None:
    """Every key and value equal, but where Spark's own figures are estimates: a distinct count (Spark's
    HLL++ without a sparse mode miscounts 40 dates as 42; the lab's counts them) and a histogram bin's
    distinct values are within Spark's error of Spark's; a histogram's bounds and height are equal and
    its text is Spark's form (one property, LZ4 blocks in Base64), which liblz4 compresses a little less
    tightly than lz4-java's compressor does."""
    assert sorted(ours) == sorted(theirs)
    for key in sorted(theirs):
        if key.endswith(".histogram"):
            mine, spark = SparkHistogram.deserialize(ours[key]), SparkHistogram.deserialize(theirs[key])
            assert mine.height == spark.height and len(mine.bins) == len(spark.bins), key
            span = spark.bins[-1].hi - spark.bins[0].lo
            for a, b in zip(mine.bins, spark.bins, strict=True):  # bounds exactly; distinct values within Spark's HLL++ error
                if key.split(".")[-2] in estimated:  # past 200 values the KLL sketch's ranks are within 1.33 %
                    assert abs(a.lo - b.lo) <= 2 * rank_error() * span and abs(a.hi - b.hi) <= 2 * rank_error() * span
                    continue
                assert (a.lo, a.hi) == (b.lo, b.hi) and abs(a.ndv - b.ndv) <= max(1, 0.15 * b.ndv), (key, a, b)
            assert ours[key][:8] == theirs[key][:8] and len(ours[key]) <= 1.3 * len(theirs[key]), key  # one LZ4 property
        elif key.endswith(".distinctCount"):
            # Spark's HLL++ (5 % relative error, no sparse mode) already miscounts 40 dates as 42, where the
            # lab's DataSketches HLL counts them exactly: within Spark's error of Spark's figure
            assert abs(int(ours[key]) - int(theirs[key])) <= max(1, 0.15 * int(theirs[key])), key
        else:
            assert ours[key] == theirs[key], key


@pytest.mark.parametrize("count", [3, 4, 151])
def test_every_property_equals_sparks_with_histograms(lab, spark, tmp_path, histograms, count):
    """Up to 200 values a column the KLL sketch holds them all: bins, heights and each bin's distinct values
    are Spark's exactly."""
    histograms(2 if count < 10 else 20)
    theirs, ours = both(lab, spark, tmp_path, rows_sql(count))
    assert any(key.endswith(".histogram") for key in theirs)
    assert_same(theirs, ours)


def test_sparks_percentile_rule_on_the_issues_examples(lab, spark, tmp_path, histograms):
    histograms(2)
    theirs, ours = both(lab, spark, tmp_path, "SELECT * FROM VALUES (1), (40000000), (NULL) AS v(x)")
    assert_same(theirs, ours)
    bins = SparkHistogram.deserialize(ours[COL_STATS_PREFIX + "x.histogram"]).bins
    assert [(b.lo, b.hi) for b in bins] == [(1.0, 1.0), (1.0, 40000000.0)]
    theirs, ours = both(lab, spark, tmp_path, "SELECT * FROM VALUES (1), (2), (3), (4) AS v(x)")
    assert_same(theirs, ours)
    assert SparkHistogram.deserialize(ours[COL_STATS_PREFIX + "x.histogram"]).bins[0].hi == 2.0  # the median
    theirs, ours = both(lab, spark, tmp_path, "SELECT CAST(1.12345 AS FLOAT) AS f UNION ALL SELECT CAST(2.5 AS FLOAT)")
    assert ours[COL_STATS_PREFIX + "f.min"] == "1.12345"
    assert SparkHistogram.deserialize(ours[COL_STATS_PREFIX + "f.histogram"]).bins[0].lo == 1.12345
    assert_same(theirs, ours)


@pytest.mark.parametrize("count", [3, 1000, 1001])
def test_every_property_equals_sparks_without_histograms(lab, spark, tmp_path, count):
    theirs, ours = both(lab, spark, tmp_path, rows_sql(count))
    assert not any(key.endswith(".histogram") for key in theirs)
    assert_same(theirs, ours)


@pytest.mark.parametrize("on", [False, True])
def test_partition_columns_are_exported_as_spark_analyzes_them(lab, spark, tmp_path, histograms, on):
    if on:
        histograms(254)
    select = ("SELECT id, CASE WHEN id = 999 THEN NULL ELSE CAST(id % 3 AS STRING) END AS p, "
              "CASE WHEN id = 999 THEN NULL ELSE CAST(id % 2 AS INT) END AS q FROM range(1000)")
    theirs, ours = both(lab, spark, tmp_path, select, "p, q")
    assert {k for k in ours if k.startswith(COL_STATS_PREFIX + "p.")} and ours[COL_STATS_PREFIX + "q.max"] == "1"
    assert (COL_STATS_PREFIX + "q.histogram" in ours) == on  # the keys' histograms are exact: rows by partition
    assert_same(theirs, ours, estimated=("id",))
