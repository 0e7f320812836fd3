"""Several processes on one metastore file: concurrent ANALYZEs of different partitions both land,
and a reader polling during the writes never sees a half-written command."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest
from metastore_rows import connect
from mixed_data import COLUMNS, write_mix

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]  # the full lane only: several processes on one metastore

ANALYZER = textwrap.dedent("""
    import os, sys, time
    from colstats_lab import Lab
    home, partition, go_file, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    lab = Lab(home=home, master="local[1]")
    lab.spark.range(1).count()  # pay the cold start before the race
    open(go_file + "." + partition, "w").close()
    while not os.path.exists(go_file):
        time.sleep(0.05)
    for _ in range(rounds):
        lab.sql(f"ANALYZE TABLE mix PARTITION (ds='{partition}') COMPUTE STATISTICS FOR ALL COLUMNS")
    print("done", partition)
""")


def _check_consistent(conn, expected_rows: dict[str, int]) -> int:
    """Invariants every committed state keeps; returns how many partitions have stats."""
    conn.begin_snapshot()
    try:
        per_part = dict(conn.execute("SELECT PART_NAME, COUNT(*) FROM PART_COL_STATS GROUP BY PART_NAME").fetchall())
        for part_name, count in per_part.items():
            assert count == len(COLUMNS), f"{part_name} has {count} of {len(COLUMNS)} column stats"
            params = dict(conn.execute(
                "SELECT PP.PARAM_KEY, PP.PARAM_VALUE FROM PARTITION_PARAMS PP JOIN PARTITIONS P "
                "ON P.PART_ID = PP.PART_ID WHERE P.PART_NAME = ?", (part_name,)).fetchall())
            assert int(params["numRows"]) == expected_rows[part_name]
            assert all(f'"{c}":"true"' in params["COLUMN_STATS_ACCURATE"] for c in COLUMNS)
        table_rows = conn.execute("SELECT COLUMN_NAME, NUM_NULLS FROM TAB_COL_STATS").fetchall()
        if per_part:
            assert len(table_rows) == len(COLUMNS)
            merged = dict(conn.execute(
                "SELECT COLUMN_NAME, SUM(NUM_NULLS) FROM PART_COL_STATS GROUP BY COLUMN_NAME").fetchall())
            # the table level always reflects every partition's stats
            assert dict(table_rows) == {c: int(n) for c, n in merged.items()}
        return len(per_part)
    finally:
        conn.execute("COMMIT")


def test_two_processes_analyze_different_partitions_while_a_reader_polls(lab, spark, tmp_path):
    lab.set("hive.stats.column.autogather", False)  # every column statistic here comes from the racing ANALYZEs
    data = write_mix(lab, spark)
    expected_rows = {f"ds={p}": len(rows) for p, rows in data.items()}
    go = str(tmp_path / "go")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", ANALYZER, lab.home, p, go, "2"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for p in ("a", "b")]
    deadline = time.time() + 240
    while not all(os.path.exists(f"{go}.{p}") for p in ("a", "b")):
        assert time.time() < deadline, "analyzer processes did not start"
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.1)
    open(go, "w").close()
    reader = connect(lab.metastore.url)
    observed = set()
    while any(p.poll() is None for p in procs):
        observed.add(_check_consistent(reader, expected_rows))
        assert time.time() < deadline
    for proc in procs:
        out, err = proc.communicate()
        assert proc.returncode == 0, err[-3000:]
    final = _check_consistent(reader, expected_rows)
    assert final == 2
    stats = lab.metastore.column_stats.get_partitions_statistics("default", "mix", None, ["x"])
    assert sorted(stats) == ["ds=a", "ds=b"]
    x = lab.metastore.column_stats.get_table_column_statistics("default", "mix", "x").obj("x").statsData.longStats
    expected_nulls = sum(1 for p in ("a", "b") for row in data[p] if row[1] is None)
    assert x.numNulls == expected_nulls
    assert reader.intact()
    assert len(observed) >= 1
