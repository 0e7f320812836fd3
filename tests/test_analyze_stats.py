"""ANALYZE ... FOR COLUMNS on a mixed-type table: every statistic equals an independent pandas computation."""
from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pandas as pd
import pytest
from mixed_data import COLUMNS, write_mix

from colstats_lab import Lab
from colstats_lab.column_statistics.sketches import ndv_relative_error

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _frame(rows: list[tuple]) -> pd.DataFrame:
    # object dtype keeps None (null) apart from NaN (a value)
    return pd.DataFrame(rows, columns=COLUMNS, dtype=object)


def _is_null(series: pd.Series) -> pd.Series:
    return series.map(lambda v: v is None)


def _spark_max(values: list[float]) -> float:
    return float("nan") if any(math.isnan(v) for v in values) else max(values)


def _spark_min(values: list[float]) -> float:
    numbers = [v for v in values if not math.isnan(v)]
    return min(numbers) if numbers else float("nan")


def _distinct_key(value):
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value + 0.0 if isinstance(value, float) else value  # -0.0 and 0.0 are one value


def expected_stats(frame: pd.DataFrame) -> dict[str, dict]:
    """Hive's statistics of each column, computed with pandas and plain Python."""
    out = {}
    rows = len(frame)
    for name in COLUMNS:
        series = frame[name]
        present = series[~_is_null(series)]
        values = list(present)
        stats = {"numNulls": rows - len(values)}
        if name == "f":
            values = [float(np.float32(v)) for v in values]  # a float is widened to double from float32
        if name in ("id", "x", "small", "price", "nothing"):
            stats.update(lowValue=min(values) if values else None, highValue=max(values) if values else None)
        elif name in ("amount", "f"):
            stats.update(lowValue=_spark_min(values) if values else None,
                         highValue=_spark_max(values) if values else None)
        elif name == "day":
            days = [(v - dt.date(1970, 1, 1)).days for v in values]
            stats.update(lowValue=min(days) if days else None, highValue=max(days) if days else None)
        elif name == "ts":
            micros = [(v - EPOCH) // dt.timedelta(microseconds=1) for v in values]
            stats.update(lowValue=min(micros) if micros else None, highValue=max(micros) if micros else None)
        elif name in ("note", "raw"):
            lengths = present.map(len)
            stats.update(maxColLen=int(lengths.max()) if len(lengths) else 0,
                         avgColLen=float(lengths.sum()) / rows if rows else 0.0)
        elif name == "flag":
            stats.update(numTrues=sum(1 for v in values if v is True), numFalses=sum(1 for v in values if v is False))
        if name not in ("flag", "raw"):
            stats["exactNDV"] = len({_distinct_key(v) for v in values})
        out[name] = stats
    return out


def _low_high(obj) -> tuple:
    data = obj.statsData.value
    low, high = data.lowValue, data.highValue
    kind = obj.statsData.kind.value
    if kind == "dateStats":
        return (None if low is None else low.daysSinceEpoch, None if high is None else high.daysSinceEpoch)
    if kind == "timestampStats":
        return (None if low is None else low.microsSinceEpoch, None if high is None else high.microsSinceEpoch)
    return low, high


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def assert_matches(obj, expected: dict) -> None:
    data = obj.statsData.value
    name = obj.colName
    assert data.numNulls == expected["numNulls"], name
    if "lowValue" in expected:
        low, high = _low_high(obj)
        assert _same(low, expected["lowValue"]), (name, low, expected["lowValue"])
        assert _same(high, expected["highValue"]), (name, high, expected["highValue"])
    if "maxColLen" in expected:
        assert data.maxColLen == expected["maxColLen"], name
        assert data.avgColLen == pytest.approx(expected["avgColLen"], rel=1e-12), name
    if "numTrues" in expected:
        assert (data.numTrues, data.numFalses) == (expected["numTrues"], expected["numFalses"])
    if "exactNDV" in expected:
        exact = expected["exactNDV"]
        assert abs(data.numDVs - exact) <= max(1, ndv_relative_error() * exact), (name, data.numDVs, exact)
        assert data.bitVectors or exact == 0, name
    else:
        assert not hasattr(data, "numDVs"), name


@pytest.fixture(scope="module")
def mix_lab(tmp_path_factory, spark):
    """One lab holding the analyzed mix, built once for the tests that only read it."""
    lab = Lab(home=str(tmp_path_factory.mktemp("mix") / "lab"), spark=spark)
    data = write_mix(lab, spark)
    result = lab.sql("ANALYZE TABLE mix PARTITION (ds) COMPUTE STATISTICS FOR ALL COLUMNS")
    yield lab, data, result
    lab.close()


def assert_partitions_equal_pandas(metastore, data: dict[str, list[tuple]]) -> None:
    """Each partition of `mix`: every column's statistics and its rows, as pandas computes them of its rows."""
    for partition, rows in data.items():
        expected = expected_stats(_frame(rows))
        stats = metastore.column_stats.get_partitions_statistics("default", "mix", [f"ds={partition}"],
                                                                 COLUMNS)[f"ds={partition}"]
        assert sorted(o.colName for o in stats.statsObj) == sorted(COLUMNS)
        for obj in stats.statsObj:
            assert_matches(obj, expected[obj.colName])
        assert int(metastore.catalog.get_partition("default", "mix", f"ds={partition}").parameters["numRows"]) == len(rows)


def test_partition_statistics_equal_pandas(mix_lab):
    reader, data, result = mix_lab
    assert sorted(result.details.partitions) == ["ds=a", "ds=b", "ds=c"]
    assert_partitions_equal_pandas(reader.metastore, data)


def test_table_statistics_are_merged_from_partitions_and_equal_pandas(mix_lab):
    reader, data, _ = mix_lab
    everything = _frame([row for rows in data.values() for row in rows])
    expected = expected_stats(everything)
    for name in COLUMNS:
        stats = reader.metastore.column_stats.get_table_column_statistics("default", "mix", name)
        assert_matches(stats.obj(name), expected[name])
    params = reader.metastore.catalog.get_table("default", "mix").parameters
    assert int(params["numRows"]) == len(everything)
    assert params["numPartitions"] == "3"
    assert params["COLUMN_STATS_ACCURATE"] == '{"BASIC_STATS":"true"}'


def test_empty_partition_has_zero_stats(mix_lab):
    reader = mix_lab[0]
    stats = reader.metastore.column_stats.get_partition_column_statistics("default", "mix", "ds=c",
                                                                          "x").obj("x").statsData.longStats
    assert (stats.lowValue, stats.highValue, stats.numNulls, stats.numDVs) == (None, None, 0, 0)
    note = reader.metastore.column_stats.get_partition_column_statistics("default", "mix", "ds=c", "note").obj("note")
    assert (note.statsData.stringStats.avgColLen, note.statsData.stringStats.maxColLen) == (0.0, 0)


def test_partition_accuracy_flags_list_the_analyzed_columns(mix_lab):
    reader = mix_lab[0]
    params = reader.metastore.catalog.get_partition("default", "mix", "ds=a").parameters
    flags = __import__("json").loads(params["COLUMN_STATS_ACCURATE"])
    assert flags["BASIC_STATS"] == "true"
    assert list(flags["COLUMN_STATS"]) == sorted(COLUMNS)


def test_identical_partitions_do_not_double_the_table_ndv(lab, spark):
    lab.sql("CREATE TABLE twin (k STRING) PARTITIONED BY (ds STRING)")
    frame = spark.createDataFrame([(f"key-{i}",) for i in range(500)], "k string")
    lab.tables["twin"].write(frame, partition={"ds": "1"})
    lab.tables["twin"].write(frame, partition={"ds": "2"})
    lab.sql("ANALYZE TABLE twin COMPUTE STATISTICS FOR COLUMNS k")
    ndv = lab.metastore.column_stats.get_table_column_statistics("default", "twin", "k").obj("k").statsData.stringStats.numDVs
    assert abs(ndv - 500) <= ndv_relative_error() * 500


def test_partial_spec_analyzes_only_matching_partitions(lab, spark):
    lab.set("hive.stats.column.autogather", False)  # only ANALYZE writes column stats here
    lab.sql("CREATE TABLE hours (v INT) PARTITIONED BY (ds STRING, hr INT)")
    for ds in ("2026-11-20", "2026-11-21"):
        for hr in (10, 11):
            lab.tables["hours"].write(spark.createDataFrame([(hr,), (hr + 1,)], "v int"), partition={"ds": ds, "hr": hr})
    result = lab.sql("ANALYZE TABLE hours PARTITION (ds, hr=11) COMPUTE STATISTICS FOR COLUMNS v")
    assert sorted(result.details.partitions) == ["ds=2026-11-20/hr=11", "ds=2026-11-21/hr=11"]
    stored = lab.metastore.column_stats.get_partitions_statistics("default", "hours", None, ["v"])
    assert sorted(stored) == ["ds=2026-11-20/hr=11", "ds=2026-11-21/hr=11"]
    table_v = lab.metastore.column_stats.get_table_column_statistics("default", "hours", "v").obj("v").statsData.longStats
    assert (table_v.lowValue, table_v.highValue) == (11, 12)


def test_basic_and_noscan_forms(lab, spark):
    lab.set("hive.stats.column.autogather", False)
    lab.sql("CREATE TABLE plain (v INT, s STRING)")
    lab.tables["plain"].write(spark.createDataFrame([(i, str(i)) for i in range(10)], "v int, s string"))
    params = lab.metastore.catalog.get_table("default", "plain").parameters
    assert params["numRows"] == "10"  # a write keeps basic stats current
    lab.sql("ANALYZE TABLE plain COMPUTE STATISTICS FOR COLUMNS v")
    assert '"v":"true"' in lab.metastore.catalog.get_table("default", "plain").parameters["COLUMN_STATS_ACCURATE"]
    lab.tables["plain"].write(spark.createDataFrame([(99, "x")], "v int, s string"))
    params = lab.metastore.catalog.get_table("default", "plain").parameters
    assert params["numRows"] == "11"
    assert params["COLUMN_STATS_ACCURATE"] == '{"BASIC_STATS":"true"}'  # the append made column stats stale
    noscan = lab.sql("ANALYZE TABLE plain COMPUTE STATISTICS NOSCAN")
    assert noscan.details.num_rows is None
    params = lab.metastore.catalog.get_table("default", "plain").parameters
    files = [f for root, _, names in __import__("os").walk(lab.metastore.catalog.get_table("default", "plain").location)
             for f in names if not f.startswith((".", "_"))]
    assert params["numFiles"] == str(len(files))
    basic = lab.sql("ANALYZE TABLE plain COMPUTE STATISTICS")
    assert basic.details.num_rows == 11


def test_statistics_gathered_during_the_writes_equal_pandas(lab, spark):
    data = write_mix(lab, spark)  # one static write per partition, gathering on (the default)
    for partition, rows in data.items():
        expected = expected_stats(_frame(rows))
        stats = lab.metastore.column_stats.get_partitions_statistics("default", "mix", [f"ds={partition}"], COLUMNS)
        assert stats[f"ds={partition}"].isStatsCompliant is True
        for obj in stats[f"ds={partition}"].statsObj:
            assert_matches(obj, expected[obj.colName])
    everything = expected_stats(_frame([row for rows in data.values() for row in rows]))
    for name in COLUMNS:
        assert_matches(lab.metastore.column_stats.get_table_column_statistics("default", "mix", name).obj(name), everything[name])


@pytest.mark.both_backends  # the batches are the metastore's calls, on PostgreSQL too
def test_partitions_analyzed_in_several_jobs_and_kept_in_a_file_until_the_commit_equal_pandas(lab, spark, monkeypatch):
    """An ANALYZE of more partitions than a job covers, with more results than memory holds, stored a batch at a
    time (at 100,000 partitions these are what keep the lab's process under 1 GiB): the same figures as pandas."""
    from colstats_lab.analyze import runner
    from colstats_lab.stats import partition_results

    monkeypatch.setattr(runner, "PARTITIONS_A_JOB", 2)
    monkeypatch.setattr(runner, "PARTITIONS_A_BATCH", 2)
    monkeypatch.setattr(partition_results, "HELD_IN_MEMORY", 1)
    spilled = []
    original = runner.AnalyzeChange.apply

    def apply(change, metastore):
        spilled.append(change.groups.spilled)
        original(change, metastore)

    monkeypatch.setattr(runner.AnalyzeChange, "apply", apply)
    data = write_mix(lab, spark)
    result = lab.sql("ANALYZE TABLE mix COMPUTE STATISTICS FOR ALL COLUMNS")
    assert spilled == [True]
    assert sorted(result.details.partitions) == ["ds=a", "ds=b", "ds=c"]
    assert_partitions_equal_pandas(lab.metastore, data)
    everything = _frame([row for rows in data.values() for row in rows])
    for name, expected in expected_stats(everything).items():
        assert_matches(lab.metastore.column_stats.get_table_column_statistics("default", "mix", name).obj(name), expected)
    assert int(lab.metastore.catalog.get_table("default", "mix").parameters["numRows"]) == len(everything)
    assert result.details.num_rows == len(everything)
