"""Several processes writing and analyzing one table through one metastore file, two of them killed
with SIGKILL mid-command: nothing they left is visible, their transactions end aborted, the
statistics stay accurate, and the SQLite file passes its integrity check."""
from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest
from metastore_rows import connect

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]  # the full lane only: processes killed mid-transaction

WORKER = textwrap.dedent("""
    import sys, time
    from pyspark.sql import functions as F
    from colstats_lab import Lab
    home, role = sys.argv[1], sys.argv[2]
    lab = Lab(home=home, master="local[1]")
    lab.spark.range(1).count()  # pay the cold start first
    print("ready", flush=True)
    if role == "writer-killed":
        txn = lab.transaction()
        print("txn", txn.txn_id, flush=True)
        big = lab.spark.range(3_000_000).select((F.col("id") % 1000).cast("int").alias("v"))
        lab.tables["t"].write(big, partition={"ds": "p"}, txn=txn)
        time.sleep(600)  # never commits
    elif role == "analyzer-killed":
        txn = lab.transaction()
        print("txn", txn.txn_id, flush=True)
        lab.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS", txn=txn)
        print("analyzed", flush=True)
        time.sleep(600)  # killed before it commits
    elif role == "writer":
        lab.tables["t"].write(lab.spark.range(5).select(F.lit(1000).cast("int").alias("v")), partition={"ds": "q"})
        lab.sql("ANALYZE TABLE t PARTITION (ds='q') COMPUTE STATISTICS FOR COLUMNS v")
        print("committed", flush=True)
""")


def _start(home: str, role: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-c", WORKER, home, role], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _read_until(proc: subprocess.Popen, word: str, timeout: float = 240) -> str:
    deadline = time.time() + timeout
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"worker ended early: {proc.stderr.read()[-3000:]}")
        if line.startswith(word):
            return line.strip()
    raise AssertionError(f"worker did not say {word!r}")


def test_killed_writer_and_analyzer_leave_nothing_visible(lab, spark):
    lab.sql("CREATE TABLE t (v INT) PARTITIONED BY (ds STRING)")
    lab.tables["t"].write(pd.DataFrame({"v": [1, 2, 3]}), partition={"ds": "p"})
    lab.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS")
    before = lab.metastore.column_stats.get_partition_column_statistics("default", "t", "ds=p", "v")
    location = lab.metastore.catalog.get_table("default", "t").location

    writer_killed, analyzer_killed, writer = (_start(lab.home, r) for r in ("writer-killed", "analyzer-killed", "writer"))
    txn_w = int(_read_until(writer_killed, "txn").split()[1])
    deadline = time.time() + 240
    while not glob.glob(os.path.join(location, f"_staging_{txn_w}_*")):  # Spark is writing its files
        assert time.time() < deadline and writer_killed.poll() is None
        time.sleep(0.05)
    writer_killed.send_signal(signal.SIGKILL)
    txn_a = int(_read_until(analyzer_killed, "txn").split()[1])
    time.sleep(0.5)  # inside the ANALYZE (its Spark job, or the wait before the commit)
    analyzer_killed.send_signal(signal.SIGKILL)
    _read_until(writer, "committed")
    for proc in (writer_killed, analyzer_killed, writer):
        proc.wait(timeout=60)

    assert set(lab.metastore.txns.abort_expired_txns()) == {txn_w, txn_a}
    assert lab.metastore.txns.txn_state(txn_w) == lab.metastore.txns.txn_state(txn_a) == "aborted"
    rows = sorted((r.ds, r.v) for r in lab.tables["t"].to_spark().collect())
    assert rows == [("p", 1), ("p", 2), ("p", 3)] + [("q", 1000)] * 5  # nothing of the killed writer
    after = lab.metastore.column_stats.get_partition_column_statistics("default", "t", "ds=p", "v")
    assert after.isStatsCompliant is True
    assert after.obj("v") == before.obj("v")
    assert lab.sql("SELECT count(*) FROM t").df.iloc[0, 0] == 8
    removed = lab.clean()
    assert any(f"_staging_{txn_w}_" in path for path in removed) or not glob.glob(os.path.join(location, "_staging_*"))
    assert not glob.glob(os.path.join(location, "_staging_*"))
    conn = connect(lab.metastore.url)
    assert conn.intact()
    assert conn.execute("SELECT COUNT(*) FROM TXNS WHERE TXN_STATE = 'o'").fetchone()[0] == 0
