"""The four bugs a new user met on everyday data, each tried the way the user tried it."""
from __future__ import annotations

import datetime as dt
import os
import time

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from colstats_lab.metastore import COLUMN_STATS_ACCURATE

X_WITH_NULLS = [1, 1, 2, None, None, None, None, 3]


@pytest.fixture
def nulls_table(lab):
    lab.sql("CREATE TABLE t (x INT, y STRING) PARTITIONED BY (ds STRING)")
    lab.tables["t"].write(pd.DataFrame({"x": pd.array(X_WITH_NULLS, dtype="Int32"), "y": list("abcdefgh")}),
                          partition={"ds": "a"})
    return lab


@pytest.mark.parametrize("mode", ["exact", "approx"])
def test_null_is_never_a_skewed_value_but_its_share_is_reported(nulls_table, mode):
    """Hive puts rows whose skewed column is NULL in the default list-bucketing directory."""
    report = nulls_table.tables["t"].skew("x", mode=mode, min_share=0.1)
    values = [v for v in X_WITH_NULLS if v is not None]
    assert report.null_count("ds=a") == X_WITH_NULLS.count(None) == 4
    assert report.null_share() == pytest.approx(4 / 8)
    assert report.totals["ds=a"] == 8
    assert None not in list(report.frame["value"])
    # 1 holds 2 of 8 rows, 2 and 3 one each: all at least 0.1, but only 1 stands out (twice what 2 holds);
    # NULL holds 4 but is never skewed
    assert report.heavy_hitters()["value"].tolist() == [1, 2, 3]
    assert report.recommended == [1]
    assert report.statement == "ALTER TABLE `default`.`t` SKEWED BY (`x`) ON (1) STORED AS DIRECTORIES"
    fractions = report.scan_fractions()
    assert "None" not in " ".join(fractions["query"])
    # x = <other> reads the default directory: every row that is not 1, NULLs included
    assert fractions.iloc[-1]["with"] == pytest.approx(1 - values.count(1) / 8)
    assert report.others("ds=a") == 0


def test_a_partition_of_nulls_only_has_no_values_and_a_full_null_share(nulls_table):
    nulls_table.tables["t"].write(pd.DataFrame({"x": pd.array([None] * 3, dtype="Int32"), "y": ["p", "q", "r"]}),
                                  partition={"ds": "b"})
    for mode in ("exact", "approx"):
        report = nulls_table.tables["t"].skew("x", mode=mode)
        assert report.for_partition("ds=b").empty
        assert report.null_share("ds=b") == 1.0 and report.totals["ds=b"] == 3
        assert report.null_count() == 7


def test_skew_magic_shows_null_as_its_own_line(nulls_table):
    shell = InteractiveShell.instance()
    shell.user_ns["lab"] = nulls_table
    shell.run_line_magic("load_ext", "colstats_lab")
    view = shell.run_line_magic("skew", "t.x --lab lab --mode exact")
    assert list(view.figure.data[0].x)[-1] == "(NULL)" and list(view.figure.data[0].y)[-1] == 4
    assert "(NULL)" in view.values_html.value and "never (default directory)" in view.values_html.value
    assert "None" not in view.recommendation_html.value


def test_writes_into_a_new_unpartitioned_table_keep_its_statistics_accurate(lab):
    """Hive's autogather: inserts into a new table leave count/min/max answerable from statistics."""
    lab.sql("CREATE TABLE mm (a INT, s STRING)")
    lab.tables["mm"].write(pd.DataFrame({"a": pd.array([1, 2, 3], dtype="Int32"), "s": ["x", None, "zz"]}))
    lab.tables["mm"].write(pd.DataFrame({"a": pd.array([5, -2, None], dtype="Int32"), "s": ["a", "b", None]}))
    result = lab.sql("SELECT count(*), min(a), max(a), count(s) FROM mm")
    assert result.answered_from == "stats", result.reason
    assert result.df.iloc[0].tolist() == [6, -2, 5, 4]
    stats = lab.metastore.get_table_column_statistics("default", "mm", "a")
    assert stats.isStatsCompliant and stats.obj("a").statsData.longStats.numNulls == 1
    lab.tables["mm"].write(pd.DataFrame({"a": pd.array([7], dtype="Int32"), "s": ["q"]}), mode="overwrite")
    result = lab.sql("SELECT count(*), min(a), max(a) FROM mm")
    assert result.answered_from == "stats" and result.df.iloc[0].tolist() == [1, 7, 7]


@pytest.fixture
def external(lab, tmp_path):
    root = tmp_path / "ev"
    for region in (1, 2):
        os.makedirs(root / f"region={region}")
        pq.write_table(pa.table({"v": list(range(10))}), root / f"region={region}" / "part-0.parquet")
    lab.register_external("ev", str(root))
    lab.sql("ANALYZE TABLE ev PARTITION (region) COMPUTE STATISTICS FOR COLUMNS v")
    return lab, root


def test_external_statistics_stop_answering_once_another_job_adds_a_file(external):
    lab, root = external
    before = lab.sql("SELECT count(*) FROM ev WHERE region = 1")
    assert before.answered_from == "stats" and before.df.iloc[0, 0] == 10
    pq.write_table(pa.table({"v": list(range(5))}), root / "region=1" / "part-1.parquet")
    after = lab.sql("SELECT count(*) FROM ev WHERE region = 1")
    assert after.answered_from == "scan" and after.df.iloc[0, 0] == 15
    assert "files changed since the last analyze (1 added, 0 removed, 0 rewritten)" in after.reason
    # the untouched partition still answers from statistics
    assert lab.sql("SELECT count(*) FROM ev WHERE region = 2").answered_from == "stats"
    described = lab.sql("DESCRIBE FORMATTED ev PARTITION (region=1)").df
    assert COLUMN_STATS_ACCURATE not in described["data_type"].tolist()
    assert "not accurate: files changed since the last analyze (1 added, 0 removed, 0 rewritten)" in \
        described["data_type"].tolist()
    column = lab.sql("DESCRIBE FORMATTED ev PARTITION (region=1) v").df.set_index("info_name")["info_value"]
    assert column[COLUMN_STATS_ACCURATE] == '{"BASIC_STATS":"false"}'
    stats = lab.metastore.get_partition_column_statistics("default", "ev", "region=1", "v")
    assert stats.isStatsCompliant is False
    assert lab.metastore.get_table_column_statistics("default", "ev", "v").isStatsCompliant is False
    frame, _ = _stats_frame(lab, "region=1")
    assert frame.set_index("column").loc["v"]["accurate"] is False
    assert "1 added" in frame.set_index("column").loc["v"]["reason"]
    lab.sql("ANALYZE TABLE ev PARTITION (region=1) COMPUTE STATISTICS FOR COLUMNS v")
    again = lab.sql("SELECT count(*), max(v) FROM ev WHERE region = 1")
    assert again.answered_from == "stats" and again.df.iloc[0].tolist() == [15, 9]


def test_a_rewritten_and_a_removed_file_are_told_apart(external):
    lab, root = external
    target = root / "region=2" / "part-0.parquet"
    pq.write_table(pa.table({"v": list(range(12))}), target)
    os.utime(target, (time.time() + 5, time.time() + 5))  # a rewrite within the same second still shows
    result = lab.sql("SELECT count(*) FROM ev WHERE region = 2")
    assert result.answered_from == "scan" and result.df.iloc[0, 0] == 12
    assert "(0 added, 0 removed, 1 rewritten)" in result.reason
    os.remove(root / "region=1" / "part-0.parquet")
    result = lab.sql("SELECT count(*) FROM ev WHERE region = 1")
    assert result.answered_from == "scan" and result.df.iloc[0, 0] == 0
    assert "(0 added, 1 removed, 0 rewritten)" in result.reason


def test_an_unpartitioned_external_table_and_an_added_partition(lab, tmp_path):
    root = tmp_path / "flat"
    os.makedirs(root)
    pq.write_table(pa.table({"v": [3, 4]}), root / "a.parquet")
    lab.register_external("flat", str(root))
    lab.sql("ANALYZE TABLE flat COMPUTE STATISTICS FOR COLUMNS v")
    assert lab.sql("SELECT min(v) FROM flat").answered_from == "stats"
    pq.write_table(pa.table({"v": [-1]}), root / "b.parquet")
    result = lab.sql("SELECT min(v) FROM flat")
    assert result.answered_from == "scan" and result.df.iloc[0, 0] == -1


def test_a_partition_added_over_existing_files_is_not_taken_as_empty(external):
    """ALTER TABLE ADD PARTITION over a directory another job filled: no ANALYZE saw its files."""
    lab, root = external
    os.makedirs(root / "region=3")
    pq.write_table(pa.table({"v": [1, 2, 3]}), root / "region=3" / "part-0.parquet")
    lab.sql("ALTER TABLE ev ADD PARTITION (region=3)")
    result = lab.sql("SELECT count(*) FROM ev WHERE region = 3")
    assert result.df.iloc[0, 0] == 3 and result.answered_from == "scan"


def _stats_frame(lab, partition):
    from colstats_lab.frames import level_frame

    table = lab.metastore.get_table("default", "ev")
    return level_frame(lab.metastore, table, partition)


@pytest.mark.parametrize("line, named", [
    ("explain SELECT * FROM t WHERE x >", "^"),
    ("skew t.x --top -3", "top takes a whole number of at least 1, not -3"),
    ("skew t.x --partition ds=zzz", "partition ds=zzz of default.t does not exist"),
    ("skew t.x --mode nope", "nope"),
    ("skew t.x --min-share 7", "min_share is a fraction between 0 and 1, not 7.0"),
    ("skew t", "expected table.column, got 't'"),
    ("skew t.x --top 'unclosed", "cannot read the arguments"),
    ("explain", "expected a query, e.g. %explain --run SELECT"),
    ("explain SELECT * FROM nosuch", "The table or view `nosuch` cannot be found"),  # the lab or Spark may hold it
])
def test_magics_turn_bad_input_into_one_line(nulls_table, line, named):
    shell = InteractiveShell.instance()
    shell.user_ns["lab"] = nulls_table
    shell.run_line_magic("load_ext", "colstats_lab")
    magic, _, rest = line.partition(" ")
    with pytest.raises(UsageError) as caught:
        shell.run_line_magic(magic, rest)
    assert named in str(caught.value)
    with capture_output() as captured:
        shell.run_cell("%" + line)
    assert "Traceback" not in captured.stdout + captured.stderr
    assert named in captured.stdout + captured.stderr


def test_parquet_files_with_naive_timestamps_register_as_hive_timestamps(lab, tmp_path):
    """pyarrow and pandas write naive datetimes as Parquet timestamps not adjusted to UTC, which Spark reads as
    timestamp_ntz: registering such files failed with "unknown column type 'timestamp_ntz'"."""
    os.makedirs(tmp_path / "naive" / "ds=a")
    pq.write_table(pa.table({"ts": pa.array([dt.datetime(2026, 1, 2, 3, 4, 5), None, dt.datetime(2025, 12, 31)],
                                            pa.timestamp("us"))}), str(tmp_path / "naive" / "ds=a" / "p.parquet"))
    table = lab.register_external("naive", str(tmp_path / "naive")).metastore_table()
    assert [(c.name, c.type) for c in table.cols] == [("ts", "timestamp")]
    lab.sql("ANALYZE TABLE naive COMPUTE STATISTICS FOR ALL COLUMNS")
    stats = lab.tables["naive"].inspect.stats().set_index("partition").loc["ds=a"]
    assert str(stats["min"]) == "2025-12-31 00:00:00" and str(stats["max"]) == "2026-01-02 03:04:05"
    assert stats["nulls"] == 1
