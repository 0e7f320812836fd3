"""Hive's rules where Hive's names appear (the fidelity issue), one test per rule, each docstring
stating what Hive does."""
from __future__ import annotations

import json
import sqlite3

import pandas as pd
import pytest

from colstats_lab.metastore import COLUMN_STATS_ACCURATE, StatsAccuracy


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
    lab.write("legacy", pd.DataFrame({"a": [1, 2]}))
    # as an older writer left it in the metastore file
    with sqlite3.connect(lab.metastore.path) as conn:
        conn.execute("UPDATE TABLE_PARAMS SET PARAM_VALUE = 'true' WHERE PARAM_KEY = ?", (COLUMN_STATS_ACCURATE,))
    conn.close()
    assert lab.sql("SELECT count(*) FROM legacy").df.iloc[0, 0] == 2
    compliance = lab.metastore.stats_compliance("default", "legacy", ["a"])
    assert compliance[None][0] is False and "after the last analyze of a" in compliance[None][1]
    described = lab.sql("DESCRIBE FORMATTED legacy a").df.set_index("info_name")["info_value"]
    assert described[COLUMN_STATS_ACCURATE] == '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"false"}}'


def test_a_new_table_and_an_added_partition_have_accurate_empty_statistics(lab):
    """Hive's setStatsStateForCreateTable: numFiles, numRows, totalSize, rawDataSize 0, BASIC_STATS and
    every column's flag true; so count(*) of a new table is answered from statistics (0)."""
    lab.sql("CREATE TABLE fresh (a INT, `Ünï` STRING)")
    params = lab.metastore.get_table("default", "fresh").parameters
    assert params[COLUMN_STATS_ACCURATE] == '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"true","ünï":"true"}}'
    assert [params[k] for k in ("numFiles", "numRows", "totalSize", "rawDataSize")] == ["0"] * 4
    answer = lab.sql("SELECT count(*), min(a), count(`Ünï`) FROM fresh")
    assert answer.answered_from == "stats", answer.reason
    assert answer.df.iloc[0, 0] == 0 and answer.df.iloc[0, 2] == 0 and pd.isna(answer.df.iloc[0, 1])
    lab.sql("CREATE TABLE parted (a INT) PARTITIONED BY (ds STRING)")
    lab.sql("ALTER TABLE parted ADD PARTITION (ds='x')")
    flags = lab.metastore.get_partition("default", "parted", "ds=x").parameters[COLUMN_STATS_ACCURATE]
    assert flags == '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"true"}}'
    answer = lab.sql("SELECT count(*), max(a) FROM parted WHERE ds = 'x'")
    assert answer.answered_from == "stats" and answer.df.iloc[0, 0] == 0
    # a write without gathering then leaves the basic statistics accurate and the columns not
    lab.set("hive.stats.column.autogather", False)
    lab.write("fresh", pd.DataFrame({"a": [5], "Ünï": ["x"]}))
    flags = StatsAccuracy.parse(lab.metastore.get_table("default", "fresh").parameters[COLUMN_STATS_ACCURATE])
    assert flags.basic and flags.columns == set()
    answer = lab.sql("SELECT count(*), max(a) FROM fresh")
    assert answer.answered_from == "scan" and answer.df.iloc[0].tolist() == [1, 5]
