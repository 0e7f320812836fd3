"""Hive's (and Drill's) rules where their names appear (the fidelity issue), one test per rule, each
docstring stating what the seed system does."""
from __future__ import annotations

import json
import sqlite3

import pandas as pd
import pytest
from metastore_rows import connect

from colstats_lab import ParseError
from colstats_lab.errors import InvalidArgument
from colstats_lab.metastore import (
    COLUMN_STATS_ACCURATE,
    ColumnStatistics,
    ColumnStatisticsData,
    ColumnStatisticsDesc,
    ColumnStatisticsObj,
    LongColumnStatsData,
    MetaException,
    StatsAccuracy,
)
from colstats_lab.storage import list_data_files


@pytest.mark.parametrize("text, basic, columns", [
    ("true", True, set()),
    ("TRUE", True, set()),
    ("false", False, set()),
    ("{bad json", False, set()),
    ('{"BASIC_STATS":"TRUE","COLUMN_STATS":{"A":"True","b":"false"}}', True, {"a"}),
    ('{"COLUMN_STATS":{"a":"true"}}', False, {"a"}),
    ('{"BASIC_STATS":true}', True, set()),
])
def test_column_stats_accurate_is_read_as_hive_reads_it(text, basic, columns):
    """Hive's StatsSetupConst.parseStatsAcc: a value that is not a JSON object is the legacy form, where
    "true" in any case means basic statistics accurate; values are Boolean.valueOf of their text (any
    case); column flags are read whether or not BASIC_STATS is set."""
    parsed = StatsAccuracy.parse(text)
    assert (parsed.basic, parsed.columns) == (basic, columns)


def test_column_stats_accurate_is_written_as_jackson_writes_it():
    """Jackson (Hive's writer) keeps non-ASCII names as they are and orders the TreeMap's keys by Java's
    String order (UTF-16 code units): U+FF5E sorts after U+1F600 there, before it by code point."""
    flags = StatsAccuracy(True, {"ü", "a", "\U0001f600", "\uff5e"})
    text = flags.to_param()
    assert text == '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"true","ü":"true","\U0001f600":"true","\uff5e":"true"}}'
    assert list(json.loads(text)["COLUMN_STATS"]) == ["a", "ü", "\U0001f600", "\uff5e"]
    assert StatsAccuracy(False, {"a"}).to_param() is None  # basic statistics not accurate: the key goes


def test_a_legacy_true_flag_no_longer_breaks_statistics_calls(lab):
    """Hive still accepts COLUMN_STATS_ACCURATE=true (from before the JSON form): basic statistics only."""
    lab.sql("CREATE TABLE legacy (a INT)")
    lab.tables["legacy"].write(pd.DataFrame({"a": [1, 2]}))
    # as an older writer left it in the metastore file
    with connect(lab.metastore.url) as conn:
        conn.execute("UPDATE TABLE_PARAMS SET PARAM_VALUE = 'true' WHERE PARAM_KEY = ?", (COLUMN_STATS_ACCURATE,))
    conn.close()
    assert lab.sql("SELECT count(*) FROM legacy").df.iloc[0, 0] == 2
    compliance = lab.metastore.accuracy.stats_compliance("default", "legacy", ["a"])
    assert compliance[None][0] is False and "after the last analyze of a" in compliance[None][1]
    described = lab.sql("DESCRIBE FORMATTED legacy a").df.set_index("info_name")["info_value"]
    assert described[COLUMN_STATS_ACCURATE] == '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"false"}}'


def test_a_new_table_and_an_added_partition_have_accurate_empty_statistics(lab):
    """Hive's setStatsStateForCreateTable: numFiles, numRows, totalSize, rawDataSize 0, BASIC_STATS and
    every column's flag true; so count(*) of a new table is answered from statistics (0)."""
    lab.sql("CREATE TABLE fresh (a INT, `Ünï` STRING)")
    params = lab.metastore.catalog.get_table("default", "fresh").parameters
    assert params[COLUMN_STATS_ACCURATE] == '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"true","ünï":"true"}}'
    assert [params[k] for k in ("numFiles", "numRows", "totalSize", "rawDataSize")] == ["0"] * 4
    answer = lab.sql("SELECT count(*), min(a), count(`Ünï`) FROM fresh")
    assert answer.answered_from == "stats", answer.reason
    assert answer.df.iloc[0, 0] == 0 and answer.df.iloc[0, 2] == 0 and pd.isna(answer.df.iloc[0, 1])
    lab.sql("CREATE TABLE parted (a INT) PARTITIONED BY (ds STRING)")
    lab.sql("ALTER TABLE parted ADD PARTITION (ds='x')")
    flags = lab.metastore.catalog.get_partition("default", "parted", "ds=x").parameters[COLUMN_STATS_ACCURATE]
    assert flags == '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"true"}}'
    answer = lab.sql("SELECT count(*), max(a) FROM parted WHERE ds = 'x'")
    assert answer.answered_from == "stats" and answer.df.iloc[0, 0] == 0
    # a write without gathering then leaves the basic statistics accurate and the columns not
    lab.set("hive.stats.column.autogather", False)
    lab.tables["fresh"].write(pd.DataFrame({"a": [5], "Ünï": ["x"]}))
    flags = StatsAccuracy.parse(lab.metastore.catalog.get_table("default", "fresh").parameters[COLUMN_STATS_ACCURATE])
    assert flags.basic and flags.columns == set()
    answer = lab.sql("SELECT count(*), max(a) FROM fresh")
    assert answer.answered_from == "scan" and answer.df.iloc[0].tolist() == [1, 5]


def _forged(part_name: str | None, low: int, high: int) -> ColumnStatistics:
    desc = ColumnStatisticsDesc(part_name is None, "default", "tx", part_name)
    return ColumnStatistics(desc, [ColumnStatisticsObj("v", "int", ColumnStatisticsData.of(
        LongColumnStatsData(low, high, 0, 3)))])


@pytest.fixture
def tx(lab):
    lab.sql("CREATE TABLE tx (v INT) PARTITIONED BY (ds STRING)")
    lab.tables["tx"].write(pd.DataFrame({"v": [1, 2, 3]}), partition={"ds": "p"})
    lab.sql("ANALYZE TABLE tx PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS v")
    return lab


def test_a_transactional_tables_statistics_change_only_with_the_write_state(tx):
    """Hive's ObjectStore.verifyStatsChangeCtx: an update of a transactional table's column statistics
    without the writer's write ID and ValidWriteIdList is refused ("Cannot change stats state for a
    transactional table ... without providing the transactional write state for verification"), by
    every form of the API."""
    for update in (lambda: tx.metastore.column_stats.update_partition_column_statistics(_forged("ds=p", -999, 999)),
                   lambda: tx.metastore.column_stats.set_aggr_stats_for([_forged("ds=p", -999, 999)]),
                   lambda: tx.metastore.column_stats.update_table_column_statistics(_forged(None, -999, 999))):
        with pytest.raises(MetaException, match="Cannot change stats state for a transactional table default.tx "
                                                "without providing the transactional write state for verification"):
            update()
    stats = tx.metastore.column_stats.get_partition_column_statistics("default", "tx", "ds=p", "v")
    assert stats.isStatsCompliant and stats.obj("v").statsData.longStats.highValue == 3
    answer = tx.sql("SELECT min(v), max(v) FROM tx")
    assert answer.answered_from == "stats" and answer.df.iloc[0].tolist() == [1, 3]


def test_a_writer_that_cannot_see_the_current_statistics_stores_them_not_accurate(tx):
    """HIVE-19416's writer rule through the API: with a write state whose snapshot does not include
    the current statistics' writer, the figures are stored and the column's flag is removed in the
    same call, so they are never used; a writer that sees it stores them accurate."""
    txn = tx.transaction()
    table = tx.metastore.catalog.get_table("default", "tx")
    snapshot, write_id = txn.snapshot(table), txn.write_id(table)
    tx.sql("ANALYZE TABLE tx PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS v")  # commits after txn began
    assert tx.metastore.column_stats.update_partition_column_statistics(_forged("ds=p", -999, 999), write_id, snapshot) is False
    txn.abort()
    flags = StatsAccuracy.parse(tx.metastore.catalog.get_partition("default", "tx", "ds=p").parameters[COLUMN_STATS_ACCURATE])
    assert "v" not in flags.columns
    answer = tx.sql("SELECT max(v) FROM tx")
    assert answer.answered_from == "scan" and answer.df.iloc[0, 0] == 3
    with tx.transaction() as current:
        ok = tx.metastore.column_stats.update_partition_column_statistics(_forged("ds=p", 1, 3), current.write_id(table),
                                                              current.snapshot(table))
    assert ok is True and tx.sql("SELECT max(v) FROM tx").answered_from == "stats"


def test_deleting_statistics_clears_the_columns_flag(tx):
    """Hive's deleteColumnStatistics removes the column from COLUMN_STATS_ACCURATE
    (StatsSetupConst.removeColumnStatsState)."""
    tx.metastore.column_stats.delete_partition_column_statistics("default", "tx", "ds=p", "v")
    flags = StatsAccuracy.parse(tx.metastore.catalog.get_partition("default", "tx", "ds=p").parameters[COLUMN_STATS_ACCURATE])
    assert flags.basic and "v" not in flags.columns
    answer = tx.sql("SELECT count(*), max(v) FROM tx")
    assert answer.answered_from == "scan" and answer.df.iloc[0].tolist() == [3, 3]


def test_noscan_analyze_takes_a_write_id(tx):
    """Hive's ANALYZE ... NOSCAN of a transactional table changes numFiles and totalSize under a write ID
    of its own, like every change of a transactional table's statistics."""
    before = tx.metastore.catalog.get_partition("default", "tx", "ds=p").writeId
    tx.sql("ANALYZE TABLE tx PARTITION (ds='p') COMPUTE STATISTICS NOSCAN")
    after = tx.metastore.catalog.get_partition("default", "tx", "ds=p")
    assert after.writeId > before
    assert after.parameters["numFiles"] == str(len(list_data_files(after.location)))  # one write: all its files
    assert tx.sql("SELECT count(*), max(v) FROM tx").answered_from == "stats"


def test_the_reader_rule_applies_wherever_the_flag_is_shown(tx):
    """Hive's getTable/getPartitions with a validWriteIdList leave COLUMN_STATS_ACCURATE out when the
    statistics' writer is not valid in the reader's snapshot, and when transactional statistics are
    off (hive.txn.stats.enabled=false); DESCRIBE shows what the reader may use."""
    old = tx.tables["tx"].valid_write_ids()
    tx.sql("ANALYZE TABLE tx PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS v")  # a writer the old snapshot misses
    stale = tx.metastore.catalog.get_partitions("default", "tx", ["ds=p"], valid_write_ids=old)[0]
    assert COLUMN_STATS_ACCURATE not in stale.parameters
    current = tx.metastore.catalog.get_partitions("default", "tx", ["ds=p"],
                                                  valid_write_ids=tx.tables["tx"].valid_write_ids())[0]
    assert StatsAccuracy.parse(current.parameters[COLUMN_STATS_ACCURATE]).columns == {"v"}
    assert COLUMN_STATS_ACCURATE in tx.metastore.catalog.get_partition("default", "tx", "ds=p").parameters  # as stored
    tx.set("hive.txn.stats.enabled", False)
    off = tx.metastore.catalog.get_partitions("default", "tx", ["ds=p"], valid_write_ids=tx.tables["tx"].valid_write_ids())[0]
    assert COLUMN_STATS_ACCURATE not in off.parameters
    described = tx.sql("DESCRIBE FORMATTED tx PARTITION (ds='p')").df
    assert COLUMN_STATS_ACCURATE not in described["data_type"].tolist()
    assert ("not accurate: transactional statistics are turned off (hive.txn.stats.enabled=false)"
            in described["data_type"].tolist())
    column = tx.sql("DESCRIBE FORMATTED tx PARTITION (ds='p') v").df.set_index("info_name")["info_value"]
    assert column[COLUMN_STATS_ACCURATE] == '{"BASIC_STATS":"false"}'
    table_level = tx.sql("DESCRIBE FORMATTED tx v").df.set_index("info_name")["info_value"]
    # the table's figures are its partitions' sums: the reader may use them no more than the partitions'
    assert json.loads(table_level[COLUMN_STATS_ACCURATE]) == {"BASIC_STATS": "false"}
    tx.set("hive.txn.stats.enabled", True)
    column = tx.sql("DESCRIBE FORMATTED tx v").df.set_index("info_name")["info_value"]
    assert json.loads(column[COLUMN_STATS_ACCURATE]) == {"BASIC_STATS": "true", "COLUMN_STATS": {"v": "true"}}


def test_drill_answers_an_up_to_date_table_with_ok_false_and_drops_metadata_only_when_enabled(lab):
    """Drill's MetastoreAnalyzeTableHandler returns ok=false with "Table metadata is up to date, analyze
    wasn't performed." when nothing changed, and its ANALYZE ... DROP METADATA, like REFRESH METADATA,
    refuses to run with the metastore disabled."""
    lab.sql("CREATE TABLE d (a INT)")
    lab.tables["d"].write(pd.DataFrame({"a": [1, 2]}))
    with pytest.raises(InvalidArgument, match="Metastore is disabled: ANALYZE ... DROP METADATA"):
        lab.sql("ANALYZE TABLE d DROP METADATA IF EXISTS")
    lab.set("metastore.enabled", True)
    first = lab.sql("ANALYZE TABLE d REFRESH METADATA 'FILE' LEVEL")
    assert first.df.to_dict("records") == [{"ok": True, "summary": "Collected / refreshed metadata for table [default.d]"}]
    again = lab.sql("ANALYZE TABLE d REFRESH METADATA 'FILE' LEVEL")
    assert again.df.to_dict("records") == [
        {"ok": False, "summary": "Table metadata is up to date, analyze wasn't performed."}]
    assert lab.sql("ANALYZE TABLE d DROP METADATA").message == "Metadata for table [default.d] dropped."
    lab.sql("ANALYZE TABLE d REFRESH METADATA 'FILE' LEVEL COMPUTE STATISTICS")
    assert lab.sql("ANALYZE TABLE d DROP STATISTICS").message == "Metadata for table [default.d] dropped."
    assert "nothing dropped" in lab.sql("ANALYZE TABLE d DROP STATISTICS IF EXISTS").message
    with pytest.raises(ParseError, match="expected METADATA or STATISTICS, found 'COLUMNS'"):
        lab.sql("ANALYZE TABLE d DROP COLUMNS")


def test_list_bucketing_follows_hives_two_switches(lab):
    """Hive prunes list-bucketing directories only with hive.optimize.listbucketing on, and refuses
    SKEWED ... STORED AS DIRECTORIES while hive.mapred.supports.subdirectories is false (its jobs could not
    read the sub-directories). The lab turns both on by default (Hive's defaults are off)."""
    lab.set("hive.mapred.supports.subdirectories", False)
    ddl = ("CREATE TABLE lbt (id BIGINT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (30) "
           "STORED AS DIRECTORIES")
    with pytest.raises(InvalidArgument, match="hive.mapred.supports.subdirectories is false"):
        lab.sql(ddl)
    assert not lab.metastore.catalog.table_exists("default", "lbt")
    lab.sql("CREATE TABLE lbt (id BIGINT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (30)")  # not as dirs
    with pytest.raises(InvalidArgument, match="hive.mapred.supports.subdirectories is false"):
        lab.sql("ALTER TABLE lbt SKEWED BY (x) ON (30) STORED AS DIRECTORIES")
    lab.set("hive.mapred.supports.subdirectories", True)
    lab.sql("ALTER TABLE lbt SKEWED BY (x) ON (30) STORED AS DIRECTORIES")
    lab.tables["lbt"].write(pd.DataFrame({"id": range(9), "x": [30, 30, 30, 1, 2, 3, 4, 5, 6]}), partition={"ds": "d"})
    pruned = lab.explain("SELECT * FROM lbt WHERE x = 30")
    assert pruned.totals("list-bucketing directory")["rows_kept"] == 3
    lab.set("hive.optimize.listbucketing", False)
    everything = lab.explain("SELECT * FROM lbt WHERE x = 30")
    frame = everything.to_pandas()
    directories = frame[frame.level == "list-bucketing directory"]
    assert len(directories) == 2 and directories.kept.all()
    assert set(directories.reason) == {"hive.optimize.listbucketing is off"}
    assert everything.totals("list-bucketing directory")["rows_kept"] == 9
    assert lab.sql("SELECT count(*) AS n FROM lbt WHERE x = 30").df["n"][0] == 3


def test_string_lengths_count_code_points_and_merge_weighted_by_rows(lab):
    """Hive measures a string with Java's String.length (UTF-16 code units: an emoji counts 2) and merges
    partitions' avgColLen by taking the largest. The lab counts code points (Spark's length: an emoji
    counts 1), as a user reads text, and merges averages weighted by rows, which is the table's true
    average; docs/reference/semantics.md says both."""
    lab.sql("CREATE TABLE texts (s STRING) PARTITIONED BY (ds STRING)")
    first = ["é", "漢字", "😀😀😀", None]
    second = ["abcdefgh"] * 4
    lab.tables["texts"].write(pd.DataFrame({"s": first}), partition={"ds": "a"})
    lab.tables["texts"].write(pd.DataFrame({"s": second}), partition={"ds": "b"})
    lab.sql("ANALYZE TABLE texts PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS s")
    part = lab.metastore.column_stats.get_partition_column_statistics("default", "texts", "ds=a",
                                                                      "s").obj("s").statsData.stringStats
    assert part.maxColLen == max(len(s) for s in first if s) == 3
    assert part.avgColLen == pytest.approx(sum(len(s) for s in first if s) / len(first))  # a NULL counts 0
    table = lab.metastore.column_stats.get_table_column_statistics("default", "texts", "s").obj("s").statsData.stringStats
    everything = first + second
    assert table.avgColLen == pytest.approx(sum(len(s) for s in everything if s) / len(everything))
    assert table.maxColLen == 8


@pytest.fixture
def half_analyzed(lab):
    """Four partitions of v, only the first and third analyzed: d=1 holds 1, 3, 5 and two NULLs,
    d=3 holds 7, 10, 13, 16 and three NULLs."""
    lab.set("hive.stats.column.autogather", False)
    lab.sql("CREATE TABLE half (v BIGINT) PARTITIONED BY (d STRING)")
    data = {"1": [1, 3, 5, None, None], "2": [2, None], "3": [7, 10, 13, 16, None, None, None], "4": [40, 41]}
    for d, values in data.items():
        lab.tables["half"].write(pd.DataFrame({"v": pd.array(values, dtype="Int64")}), partition={"d": d})
    for d in ("1", "3"):
        lab.sql(f"ANALYZE TABLE half PARTITION (d='{d}') COMPUTE STATISTICS FOR COLUMNS v")
    return lab


def test_aggregate_statistics_over_partially_analyzed_partitions_extrapolate_as_hive(half_analyzed):
    """Hive's get_aggr_stats_for: partsFound counts the partitions holding the columns' statistics; when
    two or more but not all do, its aggregators extrapolate along the partition order (index 0..n-1,
    borders 0 and n): nulls scaled by n / found; the low value on the line through the points with the
    smallest and largest lows, at the border the smallest lies toward; high value and NDV the same at the
    border the largest lies toward; with hive.metastore.stats.ndv.densityfunction, NDV = (high - low) /
    mean density ((high - low) / NDV, integer division for longs), kept within [max NDV, sum of NDVs]."""
    lab = half_analyzed
    aggr = lab.metastore.column_stats.get_aggr_stats_for("default", "half", ["v"])
    assert (aggr.partsFound, aggr.partsRequested, aggr.coverage()) == (2, 4, "covers 2 of 4 partitions")
    hive = aggr.obj("v").statsData.value
    # by hand: points (index 0: low 1, high 5, NDV 3) and (index 2: low 7, high 16, NDV 4), n = 4
    assert hive.numNulls == 5 * 4 // 2
    assert hive.lowValue == 7 - (7 - 1) * 2 / (2 - 0)
    assert hive.highValue == 5 + (16 - 5) * (4 - 0) / (2 - 0)
    assert hive.numDVs == 3 + (4 - 3) * (4 - 0) // (2 - 0)
    exact = aggr.exact_obj("v").statsData.value
    assert (exact.lowValue, exact.highValue, exact.numNulls, exact.numDVs) == (1, 16, 5, 7)
    assert aggr.isStatsCompliant is False  # two partitions have no accurate statistics of v
    lab.set("hive.metastore.stats.ndv.densityfunction", True)
    dense = lab.metastore.column_stats.get_aggr_stats_for("default", "half", ["v"]).obj("v").statsData.value
    density = ((5 - 1) // 3 + (16 - 7) // 4) / 2
    assert dense.numDVs == min(max(int((27 - 1) / density), 4), 3 + 4)
    # a subset with statistics everywhere is a plain merge, and complete
    both = lab.metastore.column_stats.get_aggr_stats_for("default", "half", ["v"], ["d=3", "d=1"])
    assert both.complete and both.obj("v").statsData.value.highValue == 16
    with pytest.raises(Exception, match="partition d=9 of default.half does not exist"):
        lab.metastore.column_stats.get_aggr_stats_for("default", "half", ["v"], ["d=9"])


def test_partial_coverage_is_said_and_never_answers(half_analyzed):
    """Where Hive's DESCRIBE shows the aggregate over the partitions with statistics, the lab says how
    many partitions it covers; answers from statistics need every partition the query reads."""
    lab = half_analyzed
    described = lab.sql("DESCRIBE FORMATTED half v").df.set_index("info_name")["info_value"]
    assert described["max"] == "27" and described["num_nulls"] == "10"
    assert described["coverage"].startswith("covers 2 of 4 partitions: extrapolated to all 4 as Hive does")
    assert "min 1, max 16, num_nulls 5, distinct_count 7" in described["coverage"]
    whole = lab.sql("SELECT count(v), max(v) FROM half")
    assert whole.answered_from == "scan" and "covers 2 of 4 partitions" in whole.reason
    assert whole.df.iloc[0].tolist() == [10, 41]
    pruned = lab.sql("SELECT count(v), min(v), max(v) FROM half WHERE d IN ('1', '3')")
    assert pruned.answered_from == "stats", pruned.reason
    assert pruned.df.iloc[0].tolist() == [7, 1, 16]
    from colstats_lab.frames import level_frame
    frame, _ = level_frame(lab.metastore, lab.metastore.catalog.get_table("default", "half"))
    row = frame.set_index("column").loc["v"]
    assert row["coverage"] == "2 of 4" and row["max"] == 16 and "covers 2 of 4 partitions" in row["reason"]


def test_a_dynamic_partition_write_gathers_every_partitions_statistics(lab):
    """Hive's column-statistics autogather covers dynamic-partition inserts: each partition the insert
    creates gets the statistics of its rows, and an insert into an existing partition merges with its
    accurate statistics (here by one aggregation over the new files right after the write)."""
    lab.sql("CREATE TABLE dyn (v INT, s STRING) PARTITIONED BY (ds STRING, h INT)")
    lab.tables["dyn"].write(pd.DataFrame({"v": [1, 2], "s": ["a", "b"]}), partition={"ds": "x", "h": 1})
    rows = pd.DataFrame({"v": pd.array([5, 7, None, 100, -3, 8], dtype="Int64"),
                         "s": ["é", None, "ccc", "dd", "e", "ff"],
                         "ds": ["x", "x", "y", "y", None, "y"], "h": pd.array([1, 1, 2, 2, 3, 2], dtype="Int64")})
    result = lab.tables["dyn"].write(rows)
    assert sorted(result.partitions) == ["ds=__HIVE_DEFAULT_PARTITION__/h=3", "ds=x/h=1", "ds=y/h=2"]
    compliance = lab.metastore.accuracy.stats_compliance("default", "dyn", ["v", "s"])
    assert all(ok for ok, _ in compliance.values()), compliance
    stats = lab.metastore.column_stats.get_partitions_statistics("default", "dyn", None, ["v", "s"])
    expected = {"ds=x/h=1": ([1, 2, 5, 7], ["a", "b", "é", None]),
                "ds=y/h=2": ([None, 100, 8], ["ccc", "dd", "ff"]),
                "ds=__HIVE_DEFAULT_PARTITION__/h=3": ([-3], ["e"])}
    for name, (values, texts) in expected.items():
        v = stats[name].obj("v").statsData.longStats
        s = stats[name].obj("s").statsData.stringStats
        present = [x for x in values if x is not None]
        assert (v.lowValue, v.highValue, v.numNulls, v.numDVs) == (min(present), max(present),
                                                                    values.count(None), len(set(present))), name
        lengths = [len(t) for t in texts if t is not None]
        assert (s.maxColLen, s.numNulls) == (max(lengths), texts.count(None)), name
        assert s.avgColLen == pytest.approx(sum(lengths) / len(texts)), name
    answer = lab.sql("SELECT count(*), count(v), min(v), max(v) FROM dyn")
    assert answer.answered_from == "stats", answer.reason
    assert answer.df.iloc[0].tolist() == [8, 7, -3, 100]


def test_rows_changed_per_partition_and_analyzing_only_the_stale_ones(lab, spark):
    """Impala's rule of thumb recomputes statistics once about 30 % of a partition's rows changed; every
    write knows its rows per partition, so the lab counts rows inserted or removed since every column's
    statistics were last accurate, and `analyze_stale` analyzes only partitions past the threshold."""
    lab.sql("CREATE TABLE moved (v INT) PARTITIONED BY (d STRING)")
    lab.tables["moved"].write(pd.DataFrame({"v": list(range(40)), "d": [str(i % 4 + 1) for i in range(40)]}))
    assert lab.tables["moved"].inspect.staleness()["changed_fraction"].tolist() == [0.0] * 4  # gathered: accurate
    lab.set("hive.stats.column.autogather", False)
    lab.tables["moved"].write(pd.DataFrame({"v": [100, 101]}), partition={"d": "1"})         # 2 of 12
    lab.tables["moved"].write(pd.DataFrame({"v": list(range(200, 210))}), partition={"d": "2"})  # 10 of 20
    lab.tables["moved"].write(pd.DataFrame({"v": [-5, -6, -7, -8, -9]}), partition={"d": "3"},
                              mode="overwrite")                                                         # 10 out, 5 in
    lab.tables["moved"].write(pd.DataFrame({"v": [7, 8, 9]}), partition={"d": "5"})           # new, never analyzed
    frame = lab.tables["moved"].inspect.staleness().set_index("partition")
    assert frame.loc["d=1", "changed_fraction"] == pytest.approx(2 / 12)
    assert frame.loc["d=2", "changed_fraction"] == pytest.approx(10 / 20)
    assert frame.loc["d=3", "changed_fraction"] == 1.0 and frame.loc["d=3", "rows_changed"] == 15
    assert frame.loc["d=4", "accurate"] is True and frame.loc["d=5", "changed_fraction"] == 1.0
    described = lab.sql("DESCRIBE FORMATTED moved PARTITION (d='1')").df.set_index("col_name")["data_type"]
    assert described["Rows changed since analyze:"] == "2 of 12 rows (17%)"
    def jobs_of(group, action):
        spark.sparkContext.setJobGroup(group, group)
        try:
            return action()
        finally:
            spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)

    result = jobs_of("stale", lambda: lab.tables["moved"].analyze_stale(threshold=0.3))
    jobs_of("one", lambda: lab.sql("ANALYZE TABLE moved PARTITION (d='4') COMPUTE STATISTICS FOR COLUMNS"))
    tracker = spark.sparkContext.statusTracker()
    # three partitions in one aggregation: as many Spark jobs as an ANALYZE of one partition
    assert len(tracker.getJobIdsForGroup("stale")) == len(tracker.getJobIdsForGroup("one"))
    assert result.details.analyzed == ["d=2", "d=3", "d=5"]
    assert "d=1 17%" in result.message
    assert result.message.startswith("Analyzed 3 of 5 partitions: changed by 30% or more (d=2 ")
    after = lab.tables["moved"].inspect.staleness().set_index("partition")
    assert after["accurate"].to_dict() == {"d=1": False, "d=2": True, "d=3": True, "d=4": True, "d=5": True}
    assert after.loc["d=2", "rows_changed"] == 0 and after.loc["d=1", "rows_changed"] == 2
    low = lab.metastore.column_stats.get_partition_column_statistics("default", "moved", "d=3", "v").obj("v").statsData.longStats
    assert (low.lowValue, low.highValue) == (-9, -5)
    assert "Nothing to analyze" in lab.tables["moved"].analyze_stale().message
    with pytest.raises(InvalidArgument, match="between 0 and 1"):
        lab.tables["moved"].analyze_stale(threshold=30)


def test_timestamp_statistics_are_hive_seconds_with_the_microseconds_kept_apart(lab, tmp_path):
    """Hive's Timestamp statistic is whole seconds since the epoch (TimestampColumnStatsData's
    Timestamp.secondsSinceEpoch), and its metastore keeps that in LONG_LOW_VALUE/LONG_HIGH_VALUE; the
    lab keeps Spark's microseconds in LOW_VALUE_MICROS/HIGH_VALUE_MICROS, and migration 6 moves an
    older file's microseconds there."""
    import datetime as dt

    from colstats_lab.metastore import Metastore
    from colstats_lab.metastore.db.dialect import SQLITE
    from colstats_lab.metastore.db.schema import migration_statements

    lab.sql("CREATE TABLE ts_t (t TIMESTAMP)")
    instants = [dt.datetime(1969, 12, 31, 23, 59, 58, 500000), dt.datetime(2026, 11, 23, 6, 0, 0, 999999)]
    lab.tables["ts_t"].write(pd.DataFrame({"t": instants}))
    stats = lab.metastore.column_stats.get_table_column_statistics("default", "ts_t", "t").obj("t").statsData.timestampStats
    assert (stats.lowValue.secondsSinceEpoch, stats.highValue.secondsSinceEpoch) == (-2, 1795413600)
    assert stats.highValue.to_datetime() == instants[1]  # nothing lost
    with connect(lab.metastore.url) as conn:
        row = conn.execute("SELECT LONG_LOW_VALUE, LONG_HIGH_VALUE, LOW_VALUE_MICROS, HIGH_VALUE_MICROS "
                           "FROM TAB_COL_STATS WHERE COLUMN_NAME = 't'").fetchone()
    conn.close()
    assert row == (-2, 1795413600, -1_500_000, 1_795_413_600_999_999)
    # a file written before migration 6 kept microseconds in LONG_*
    path = str(tmp_path / "v5.db")
    old = sqlite3.connect(path, isolation_level=None)
    for version in range(5):
        for statement in migration_statements(version, SQLITE):
            old.execute(statement)
    old.execute("PRAGMA user_version = 5")
    old.execute("INSERT INTO TAB_COL_STATS (TBL_ID, DB_NAME, TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, LOW_VALUE, "
                "HIGH_VALUE, LONG_LOW_VALUE, LONG_HIGH_VALUE, NUM_NULLS, LAST_ANALYZED) VALUES "
                "(1, 'default', 'x', 't', 'timestamp', '1969-12-31 23:59:58.500000', '2026-11-23 06:00:00.999999', "
                "-1500000, 1795413600999999, 0, 0)")
    old.close()
    Metastore(path).close()
    with sqlite3.connect(path) as conn:
        migrated = conn.execute("SELECT LONG_LOW_VALUE, LONG_HIGH_VALUE, LOW_VALUE_MICROS, HIGH_VALUE_MICROS "
                                "FROM TAB_COL_STATS").fetchone()
    conn.close()
    assert migrated == row


def test_an_external_partition_whose_files_changed_is_stale_by_an_unknown_amount(lab, tmp_path):
    """No write ID counts what another job does to an external table's files, so the rows changed since
    its ANALYZE are unknown, and analyze_stale analyzes a partition whose files changed whatever the
    threshold."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = tmp_path / "ext"
    for k in range(3):
        (root / f"k={k}").mkdir(parents=True)
        pq.write_table(pa.table({"v": [k, None]}), str(root / f"k={k}" / "p.parquet"))
    lab.register_external("ext", str(root))
    lab.sql("ANALYZE TABLE ext PARTITION (k) COMPUTE STATISTICS FOR COLUMNS v")
    pq.write_table(pa.table({"v": [777]}), str(root / "k=1" / "late.parquet"))
    frame = lab.tables["ext"].inspect.staleness().set_index("partition")
    assert frame.loc["k=1", "accurate"] is False and frame.loc["k=1", "changed_fraction"] is None
    result = lab.tables["ext"].analyze_stale(threshold=0.9)
    assert result.details.analyzed == ["k=1"]
    assert result.message.startswith("Analyzed 1 of 3 partitions: not accurate, by rows the lab did not count (k=1: "
                                     "files changed since the last analyze (1 added, 0 removed, 0 rewritten)). ")
    answer = lab.sql("SELECT max(v) FROM ext WHERE k = 1")
    assert answer.answered_from == "stats" and answer.df.iloc[0, 0] == 777
