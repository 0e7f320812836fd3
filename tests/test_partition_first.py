"""Partition-first planning: a query whose filter names partition keys asks the metastore for the
matching partitions before listing any directory (Hive's getPartitionsByFilter before the scan), on
an external table with more partitions than are listed one by one."""
from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from colstats_lab import storage
from colstats_lab.metastore.rows.levels import Level
from colstats_lab.pruning.partition_predicate import LISTED_PRUNED_LIMIT

PARTITION_LEVEL = str(Level.PARTITION)  # read by DataFrame.query("... @PARTITION_LEVEL")

DAYS = LISTED_PRUNED_LIMIT + 200


def _write_days(root: str) -> dict[str, int]:
    """One small file a day, day i holding i % 7 + 1 rows; returns the rows by day."""
    rows = {}
    for i in range(DAYS):
        day = f"2020-{1 + i // 400:02d}-{i % 400:03d}"
        rows[day] = i % 7 + 1
        os.makedirs(os.path.join(root, f"ds={day}"))
        pq.write_table(pa.table({"x": list(range(rows[day]))}), os.path.join(root, f"ds={day}", "part-0.parquet"))
    return rows


def _count_listings(monkeypatch, module) -> list[str]:
    """The directories `module` (the storage seam: every listing goes through it) lists from now on, in order,
    for its files or their states alone (its real listing still runs)."""
    listed: list[str] = []

    def counting(real):
        def listing(directory):
            listed.append(directory)
            return real(directory)
        return listing

    for name in ("list_data_files", "data_file_states"):
        if hasattr(module, name):
            monkeypatch.setattr(module, name, counting(getattr(module, name)))
    return listed


@pytest.mark.slow
def test_a_partition_predicate_lists_only_the_matching_directories(tmp_path, lab, monkeypatch):
    root = str(tmp_path / "days")
    rows = _write_days(root)
    lab.register_external("days", root, partition_types={"ds": "string"})
    listed = _count_listings(monkeypatch, storage)
    day = sorted(rows)[700]
    report = lab.explain(f"SELECT * FROM days WHERE ds = '{day}' AND x >= 0")
    # that day's directory alone, for its files and for its statistics' freshness
    assert {os.path.basename(d) for d in listed} == {f"ds={day}"} and len(listed) <= 2
    partitions = report.to_pandas().query("level == @PARTITION_LEVEL")
    assert partitions[partitions.kept].identifier.tolist() == [f"ds={day}"]
    counted = partitions[~partitions.kept]
    assert counted.identifier.tolist() == [f"{DAYS - 1:,} other partitions"]
    assert f"1 of {DAYS:,} partitions kept" in report.summary()  # the ones not listed still count, one by one

    listed.clear()
    in_two = sorted(rows)[10:12]
    scanned = lab.sql(f"SELECT count(*) AS n FROM days WHERE ds IN ('{in_two[0]}', '{in_two[1]}')").df
    assert scanned["n"][0] == rows[in_two[0]] + rows[in_two[1]]
    assert sorted({os.path.basename(d) for d in listed}) == [f"ds={d}" for d in in_two] and len(listed) <= 4

    listed.clear()
    everything = lab.sql("SELECT count(*) AS n FROM days WHERE x >= 0").df  # no key term: every partition
    assert everything["n"][0] == sum(rows.values()) and len(listed) == DAYS


def test_few_ruled_out_partitions_are_still_reported_one_by_one(tmp_path, lab):
    root = str(tmp_path / "few")
    for day in ("a", "b", "c"):
        os.makedirs(os.path.join(root, f"ds={day}"))
        pq.write_table(pa.table({"x": [1, 2]}), os.path.join(root, f"ds={day}", "part-0.parquet"))
    lab.register_external("few", root)
    partitions = lab.explain("SELECT * FROM few WHERE ds = 'b'").to_pandas().query("level == @PARTITION_LEVEL")
    assert dict(zip(partitions.identifier, partitions.kept, strict=True)) == {"ds=a": False, "ds=b": True, "ds=c": False}


def test_one_day_answered_from_statistics_checks_only_that_days_files(tmp_path, lab, monkeypatch):
    """The freshness of an external partition's statistics is judged from its own directory: an answer
    for one day of many lists that day alone, and a file another job adds there makes it a scan."""
    root = str(tmp_path / "days")
    rows = _write_days(root)
    lab.register_external("days", root, partition_types={"ds": "string"})
    day = sorted(rows)[700]
    lab.sql(f"ANALYZE TABLE days PARTITION (ds = '{day}') COMPUTE STATISTICS FOR COLUMNS")
    listed = _count_listings(monkeypatch, storage)
    query = f"SELECT count(*), max(x) FROM days WHERE ds = '{day}'"
    answer = lab.sql(query)
    assert answer.answered_from == "stats", answer.reason
    assert (answer.df.iloc[0, 0], answer.df.iloc[0, 1]) == (rows[day], rows[day] - 1)
    assert [os.path.basename(d) for d in listed] == [f"ds={day}"]

    pq.write_table(pa.table({"x": [100]}), os.path.join(root, f"ds={day}", "part-1.parquet"))
    after = lab.sql(query)
    assert after.answered_from == "scan" and "1 added" in after.reason, after.reason
    assert (after.df.iloc[0, 0], after.df.iloc[0, 1]) == (rows[day] + 1, 100)
