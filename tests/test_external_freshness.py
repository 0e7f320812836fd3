"""An external table's statistics after another job changes its files: a file added, rewritten or removed stops
the statistics of its partition answering (the others still do) and is told apart by name; an unpartitioned table
likewise; a partition added over files no ANALYZE saw is never taken as empty. Counts are the files' rows."""
from __future__ import annotations

import os
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from colstats_lab.metastore import COLUMN_STATS_ACCURATE


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
    stats = lab.metastore.column_stats.get_partition_column_statistics("default", "ev", "region=1", "v")
    assert stats.isStatsCompliant is False
    assert lab.metastore.column_stats.get_table_column_statistics("default", "ev", "v").isStatsCompliant is False
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

    table = lab.metastore.catalog.get_table("default", "ev")
    return level_frame(lab.metastore, table, partition)
