"""Writes: Hive's insert-only layout on disk, snapshot reads, basic stats kept current, clean failures."""
from __future__ import annotations

import json
import os

import pandas as pd
import pytest

from colstats_lab import InvalidArgument, NoSuchObjectException, QueryError
from colstats_lab.column_statistics.names import make_part_name


def _dirs(path: str) -> list[str]:
    return sorted(d for d in os.listdir(path) if not d.startswith((".", "_")))


def test_each_write_adds_a_delta_and_an_overwrite_a_base(lab, spark):
    lab.sql("CREATE TABLE t (v INT) PARTITIONED BY (ds STRING)")
    location = lab.metastore.catalog.get_table("default", "t").location
    lab.tables["t"].write(pd.DataFrame({"v": [1, 2]}), partition={"ds": "d1"})
    lab.tables["t"].write(pd.DataFrame({"v": [3]}), partition={"ds": "d1"})
    assert _dirs(os.path.join(location, "ds=d1")) == ["delta_0000001_0000001", "delta_0000002_0000002"]
    assert sorted(r.v for r in lab.tables["t"].to_spark().select("v").collect()) == [1, 2, 3]
    lab.tables["t"].write(pd.DataFrame({"v": [9]}), partition={"ds": "d1"}, mode="overwrite")
    assert "base_0000003" in _dirs(os.path.join(location, "ds=d1"))
    assert [r.v for r in lab.tables["t"].to_spark().select("v").collect()] == [9]  # the base hides what came before
    lab.tables["t"].write(pd.DataFrame({"v": [10]}), partition={"ds": "d1"})
    assert sorted(r.v for r in lab.tables["t"].to_spark().select("v").collect()) == [9, 10]
    params = lab.metastore.catalog.get_partition("default", "t", "ds=d1").parameters
    assert params["numRows"] == "2"
    assert lab.metastore.catalog.get_partition("default", "t", "ds=d1").writeId == 4


def test_dynamic_partitions_and_hive_escaping_on_disk(lab, spark):
    lab.sql("CREATE TABLE t (v INT) PARTITIONED BY (ds STRING, hr INT)")
    odd = "a:b/c=d%'e"
    frame = spark.createDataFrame([(1, odd, 1), (2, odd, 1), (3, "plain", 2), (4, None, None)],
                                  "v int, ds string, hr int")
    result = lab.tables["t"].write(frame)
    names = lab.metastore.catalog.get_partition_names("default", "t")
    assert names == sorted([make_part_name(["ds", "hr"], [odd, "1"]), "ds=plain/hr=2",
                            "ds=__HIVE_DEFAULT_PARTITION__/hr=__HIVE_DEFAULT_PARTITION__"])
    location = lab.metastore.catalog.get_table("default", "t").location
    for name in names:  # the directory Spark wrote is the name Hive gives the partition
        assert os.path.isdir(os.path.join(location, name, "delta_0000001_0000001")), name
    assert result.num_rows == 4
    back = {(r.v, r.ds, r.hr) for r in lab.tables["t"].to_spark().collect()}
    assert back == {(1, odd, 1), (2, odd, 1), (3, "plain", 2), (4, None, None)}
    assert lab.metastore.catalog.get_partition("default", "t", make_part_name(["ds", "hr"], [odd, "1"])).values == [odd, "1"]


def test_basic_stats_after_writes_follow_hive(lab, spark):
    lab.set("hive.stats.column.autogather", False)  # Hive's behaviour without gathering on write
    lab.sql("CREATE TABLE t (v INT, s STRING) PARTITIONED BY (ds STRING)")
    lab.tables["t"].write(pd.DataFrame({"v": [1, 2, 3], "s": ["a", "b", None]}), partition={"ds": "d1"})
    lab.sql("ANALYZE TABLE t PARTITION (ds='d1') COMPUTE STATISTICS FOR COLUMNS v, s")
    part = lab.metastore.catalog.get_partition("default", "t", "ds=d1")
    assert json.loads(part.parameters["COLUMN_STATS_ACCURATE"]) == {
        "BASIC_STATS": "true", "COLUMN_STATS": {"s": "true", "v": "true"}}
    lab.tables["t"].write(pd.DataFrame({"v": [4], "s": ["d"]}), partition={"ds": "d1"})
    part = lab.metastore.catalog.get_partition("default", "t", "ds=d1")
    assert part.parameters["COLUMN_STATS_ACCURATE"] == '{"BASIC_STATS":"true"}'
    assert part.parameters["numRows"] == "4"
    data_files = [f for d in os.listdir(part.location) for f in os.listdir(os.path.join(part.location, d))
                  if not f.startswith((".", "_"))]
    assert part.parameters["numFiles"] == str(len(data_files))
    assert int(part.parameters["totalSize"]) == sum(
        os.path.getsize(os.path.join(part.location, d, f)) for d in os.listdir(part.location)
        for f in os.listdir(os.path.join(part.location, d)) if not f.startswith((".", "_")))
    table = lab.metastore.catalog.get_table("default", "t")
    assert (table.parameters["numRows"], table.parameters["numPartitions"]) == ("4", "1")


def test_an_empty_static_partition_exists_with_zero_rows(lab, spark):
    lab.sql("CREATE TABLE t (v INT) PARTITIONED BY (ds STRING)")
    lab.tables["t"].write(spark.createDataFrame([], "v int"), partition={"ds": "empty"})
    part = lab.metastore.catalog.get_partition("default", "t", "ds=empty")
    assert (part.parameters["numRows"], part.parameters["numFiles"]) == ("0", "0")
    assert lab.tables["t"].to_spark().count() == 0


def test_bad_writes_name_the_problem_and_leave_nothing(lab, spark):
    lab.sql("CREATE TABLE t (v INT, s STRING) PARTITIONED BY (ds STRING)")
    with pytest.raises(InvalidArgument, match="no column s"):
        lab.tables["t"].write(pd.DataFrame({"v": [1]}), partition={"ds": "x"})
    with pytest.raises(InvalidArgument, match="columns extra that table default.t does not have"):
        lab.tables["t"].write(pd.DataFrame({"v": [1], "s": ["a"], "extra": [0]}), partition={"ds": "x"})
    with pytest.raises(InvalidArgument, match="hr is not a partition key of default.t"):
        lab.tables["t"].write(pd.DataFrame({"v": [1], "s": ["a"]}), partition={"hr": "x"})
    with pytest.raises(InvalidArgument, match="no column ds"):
        lab.tables["t"].write(pd.DataFrame({"v": [1], "s": ["a"]}))
    with pytest.raises(NoSuchObjectException, match="table default.nope does not exist"):
        lab.tables["nope"].write(pd.DataFrame({"v": [1]}))
    # ANSI cast failure inside Spark's write job: one line naming the table and the value
    with pytest.raises(QueryError, match="cannot write the data into default.t: .*'not a number'.* cannot be cast"):
        lab.tables["t"].write(pd.DataFrame({"v": ["not a number"], "s": ["a"]}), partition={"ds": "x"})
    assert lab.metastore.catalog.get_partition_names("default", "t") == []
    location = lab.metastore.catalog.get_table("default", "t").location
    assert [d for d in os.listdir(location) if not d.startswith("_")] == []
    assert "default.t:1:9223372036854775807::1" == str(lab.tables["t"].valid_write_ids())  # the failed write is aborted


def test_snapshot_reads_skip_open_and_aborted_writes(lab, spark):
    lab.sql("CREATE TABLE t (v INT)")
    lab.tables["t"].write(pd.DataFrame({"v": [1]}))
    txn = lab.metastore.txns.open_txn()
    write_id = lab.metastore.txns.allocate_table_write_id(txn, "default", "t")
    location = lab.metastore.catalog.get_table("default", "t").location
    # files of a write that has not committed yet
    spark.createDataFrame([(2,)], "v int").write.parquet(os.path.join(location, f"delta_{write_id:07d}_{write_id:07d}"))
    assert [r.v for r in lab.tables["t"].to_spark().collect()] == [1]
    lab.metastore.txns.abort_txn(txn)
    assert [r.v for r in lab.tables["t"].to_spark().collect()] == [1]
    assert lab.sql("SELECT count(*) AS n FROM t").df.n[0] == 1


def test_gathering_on_write_merges_into_accurate_stats(lab, spark):
    lab.sql("CREATE TABLE t (v INT, s STRING) PARTITIONED BY (ds STRING)")
    first = pd.DataFrame({"v": [1, 2, None], "s": ["a", "bb", None]})
    lab.tables["t"].write(first, partition={"ds": "d1"})  # a new partition: its stats are gathered whole
    flags = json.loads(lab.metastore.catalog.get_partition("default", "t", "ds=d1").parameters["COLUMN_STATS_ACCURATE"])
    assert flags == {"BASIC_STATS": "true", "COLUMN_STATS": {"s": "true", "v": "true"}}
    second = pd.DataFrame({"v": [10, 2], "s": ["cccc", "a"]})
    lab.tables["t"].write(second, partition={"ds": "d1"})  # an append: merged with the stored, accurate stats
    both = pd.concat([first, second], ignore_index=True)
    stats = lab.metastore.column_stats.get_partitions_statistics("default", "t", ["ds=d1"], ["v", "s"])["ds=d1"]
    assert stats.isStatsCompliant is True
    v, s = stats.obj("v").statsData.longStats, stats.obj("s").statsData.stringStats
    values = [int(x) for x in both.v.dropna()]
    assert (v.lowValue, v.highValue, v.numNulls, v.numDVs) == (min(values), max(values), 1, len(set(values)))
    lengths = [len(x) for x in both.s.dropna()]
    assert (s.maxColLen, s.numNulls, s.numDVs) == (max(lengths), 1, len(set(both.s.dropna())))
    assert s.avgColLen == pytest.approx(sum(lengths) / len(both))
    table_v = lab.metastore.column_stats.get_table_column_statistics("default", "t", "v").obj("v").statsData.longStats
    assert (table_v.lowValue, table_v.highValue) == (1, 10)
    dynamic = pd.DataFrame({"v": [50], "s": ["z"], "ds": ["d1"]})
    lab.tables["t"].write(dynamic)  # a dynamic-partition append merges too
    v = lab.metastore.column_stats.get_partition_column_statistics("default", "t", "ds=d1", "v").obj("v").statsData.longStats
    assert (v.highValue, v.numDVs) == (50, len(set(values)) + 1)
    lab.set("hive.stats.column.autogather", False)
    lab.tables["t"].write(dynamic)  # without gathering the columns are no longer accurate
    assert lab.metastore.catalog.get_partition("default", "t", "ds=d1").parameters["COLUMN_STATS_ACCURATE"] == \
        '{"BASIC_STATS":"true"}'


def test_writes_into_a_new_unpartitioned_table_keep_its_statistics_accurate(lab):
    """Hive's autogather: inserts into a new table leave count/min/max answerable from statistics."""
    lab.sql("CREATE TABLE mm (a INT, s STRING)")
    lab.tables["mm"].write(pd.DataFrame({"a": pd.array([1, 2, 3], dtype="Int32"), "s": ["x", None, "zz"]}))
    lab.tables["mm"].write(pd.DataFrame({"a": pd.array([5, -2, None], dtype="Int32"), "s": ["a", "b", None]}))
    result = lab.sql("SELECT count(*), min(a), max(a), count(s) FROM mm")
    assert result.answered_from == "stats", result.reason
    assert result.df.iloc[0].tolist() == [6, -2, 5, 4]
    stats = lab.metastore.column_stats.get_table_column_statistics("default", "mm", "a")
    assert stats.isStatsCompliant and stats.obj("a").statsData.longStats.numNulls == 1
    lab.tables["mm"].write(pd.DataFrame({"a": pd.array([7], dtype="Int32"), "s": ["q"]}), mode="overwrite")
    result = lab.sql("SELECT count(*), min(a), max(a) FROM mm")
    assert result.answered_from == "stats" and result.df.iloc[0].tolist() == [1, 7, 7]
