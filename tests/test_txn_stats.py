"""HIVE-19416's rules for statistics of transactional tables, in the sequences Hive's own tests use."""
from __future__ import annotations

import logging
import os
import subprocess
import sys

import pandas as pd
import pytest
from metastore_rows import connect

from colstats_lab import MetaException
from colstats_lab.metastore import COLUMN_STATS_ACCURATE, Metastore, NoSuchObjectException
from colstats_lab.metastore.db.schema import MIGRATIONS

pytestmark = pytest.mark.both_backends  # a metastore behaviour: on SQLite and on PostgreSQL


@pytest.fixture
def t(lab):
    lab.sql("CREATE TABLE t (v INT) PARTITIONED BY (ds STRING)")
    return lab


def _rows(*values) -> pd.DataFrame:
    return pd.DataFrame({"v": list(values)})


def _compliant(lab, part="ds=p", snapshot=None) -> tuple[bool, str]:
    return lab.metastore.accuracy.stats_compliance("default", "t", ["v"], snapshot, [part])[part]


def _v(lab, part="ds=p", snapshot=None):
    return lab.metastore.column_stats.get_partition_column_statistics("default", "t", part, "v", valid_write_ids=snapshot)


def test_write_and_analyze_in_one_transaction_are_accurate_after_commit(t):
    with t.transaction() as txn:
        t.tables["t"].write(_rows(1, 2, 3), partition={"ds": "p"}, txn=txn)
        t.sql("ANALYZE TABLE t PARTITION (ds='p') COMPUTE STATISTICS FOR COLUMNS v", txn=txn)
        assert t.metastore.catalog.get_partition_names("default", "t") == []  # nothing is stored before the commit
        table = t.tables["t"]
        assert table.to_spark().count() == 0 and table.to_spark(txn=txn).count() == 3  # only the txn sees its write
    stats = _v(t)
    assert stats.isStatsCompliant is True
    assert (stats.obj("v").statsData.longStats.lowValue, stats.obj("v").statsData.longStats.highValue) == (1, 3)
    assert _compliant(t) == (True, "")


def test_two_writers_that_cannot_see_each_other_leave_stats_not_accurate(t):
    t.tables["t"].write(_rows(1), partition={"ds": "p"})
    t.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS v")
    first, second = t.transaction(), t.transaction()
    t.tables["t"].write(_rows(2), partition={"ds": "p"}, txn=first)
    t.tables["t"].write(_rows(3), partition={"ds": "p"}, txn=second)  # second's snapshot predates first's commit
    first.commit()
    second.commit()
    ok, why = _compliant(t)
    assert not ok and "statistics were not kept accurate" in why
    assert COLUMN_STATS_ACCURATE not in t.metastore.catalog.get_partition("default", "t", "ds=p").parameters
    assert sorted(r.v for r in t.tables["t"].to_spark().collect()) == [1, 2, 3]  # no committed row is lost
    t.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS v")  # a later ANALYZE makes them accurate again
    assert _compliant(t) == (True, "")
    assert t.metastore.catalog.get_partition("default", "t", "ds=p").parameters["numRows"] == "3"


def test_an_analyze_that_cannot_see_a_concurrent_write_is_stored_not_accurate(t):
    t.tables["t"].write(_rows(1, 2), partition={"ds": "p"})
    analyzer = t.transaction()
    outcome = t.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS v", txn=analyzer).details
    t.tables["t"].write(_rows(50), partition={"ds": "p"})  # commits while the ANALYZE is still open
    analyzer.commit()
    assert outcome.stale_partitions == ["ds=p"]
    assert not _compliant(t)[0]
    assert _v(t).obj("v").statsData.longStats.highValue == 2  # stored, but not claimed accurate


def test_a_reader_with_an_older_snapshot_gets_stats_marked_not_accurate(t):
    t.tables["t"].write(_rows(1), partition={"ds": "p"})
    old = t.tables["t"].valid_write_ids()
    t.tables["t"].write(_rows(5), partition={"ds": "p"})
    t.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS v")
    assert _v(t, snapshot=old).isStatsCompliant is False
    ok, why = _compliant(t, snapshot=old)
    assert not ok and why.startswith("written by write 3, not visible in your snapshot")
    assert _v(t).isStatsCompliant is True
    table_level = t.metastore.column_stats.get_table_column_statistics("default", "t", "v", valid_write_ids=old)
    assert table_level.isStatsCompliant is False
    assert t.metastore.column_stats.get_table_column_statistics("default", "t", "v").isStatsCompliant is True


def test_an_aborted_write_and_analyze_leave_the_earlier_stats_accurate(t):
    t.tables["t"].write(_rows(1, 2), partition={"ds": "p"})
    t.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS v")
    with pytest.raises(RuntimeError):
        with t.transaction() as txn:
            t.tables["t"].write(_rows(100), partition={"ds": "p"}, txn=txn)
            t.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS v", txn=txn)
            raise RuntimeError("the job failed")
    assert txn.state == "aborted"
    stats = _v(t)
    assert stats.isStatsCompliant is True  # Hive would leave them not accurate; nothing was touched here
    assert stats.obj("v").statsData.longStats.highValue == 2
    assert sorted(r.v for r in t.tables["t"].to_spark().collect()) == [1, 2]


def test_overwrite_replaces_counts_and_hides_older_files(t):
    t.tables["t"].write(_rows(1, 2, 3), partition={"ds": "p"})
    t.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS v")
    t.tables["t"].write(_rows(7), partition={"ds": "p"}, mode="overwrite")
    part = t.metastore.catalog.get_partition("default", "t", "ds=p")
    assert part.parameters["numRows"] == "1"
    assert [r.v for r in t.tables["t"].to_spark().collect()] == [7]
    # the overwrite's own rows were gathered during the write, so the stats describe exactly them
    assert _compliant(t) == (True, "")
    v = _v(t).obj("v").statsData.longStats
    assert (v.lowValue, v.highValue, v.numNulls, v.numDVs) == (7, 7, 0, 1)
    t.set("hive.stats.column.autogather", False)
    t.tables["t"].write(_rows(8), partition={"ds": "p"}, mode="overwrite")
    assert t.metastore.catalog.get_partition("default", "t", "ds=p").parameters[COLUMN_STATS_ACCURATE] == \
        '{"BASIC_STATS":"true"}'
    assert not _compliant(t)[0]


def test_the_switch_off_reports_nothing_accurate_and_taints_its_writes(t):
    t.tables["t"].write(_rows(1), partition={"ds": "p"})
    t.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS v")
    t.set("hive.txn.stats.enabled", False)
    assert _compliant(t) == (False, "transactional statistics are turned off (hive.txn.stats.enabled=false)")
    t.tables["t"].write(_rows(2), partition={"ds": "p"})
    t.set("hive.txn.stats.enabled", "true")
    ok, _ = _compliant(t)
    assert not ok  # the write made while it was off left them not accurate
    t.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS v")
    assert _compliant(t) == (True, "")


def test_marking_accurate_needs_a_write_id_and_snapshot(t):
    t.tables["t"].write(_rows(1), partition={"ds": "p"})
    with pytest.raises(MetaException, match="transactional table default.t accurate"):
        t.metastore.catalog.alter_partition_params("default", "t", "ds=p", {COLUMN_STATS_ACCURATE: '{"BASIC_STATS":"true"}'})
    assert t.metastore.catalog.alter_partition_params("default", "t", "ds=p", {COLUMN_STATS_ACCURATE: None}) is False


def test_stats_written_by_an_aborted_write_may_be_replaced(t):
    t.tables["t"].write(_rows(1), partition={"ds": "p"})
    ms = t.metastore
    txn = ms.txns.open_txn()
    aborted_id = ms.txns.allocate_table_write_id(txn, "default", "t")
    ms.catalog.alter_partition_params("default", "t", "ds=p", {COLUMN_STATS_ACCURATE: None}, write_id=aborted_id)
    ms.txns.abort_txn(txn)
    writer = ms.txns.open_txn()
    writer_id = ms.txns.allocate_table_write_id(writer, "default", "t")
    snapshot = ms.txns.get_valid_write_ids("default", "t", writer)
    assert not snapshot.is_write_id_valid(aborted_id)
    assert ms.catalog.alter_partition_params("default", "t", "ds=p", {COLUMN_STATS_ACCURATE: '{"BASIC_STATS":"true"}'},
                                     write_id=writer_id, valid_write_ids=snapshot) is True


def test_a_transaction_whose_process_died_is_aborted_and_never_read(t, tmp_path):
    script = (
        "import sys\n"
        "from colstats_lab.metastore import Metastore\n"
        "ms = Metastore(sys.argv[1])\n"
        "txn = ms.txns.open_txn()\n"
        "print(txn, ms.txns.allocate_table_write_id(txn, 'default', 't'), flush=True)\n"
        "import os; os._exit(0)\n"  # gone without commit or abort
    )
    out = subprocess.run([sys.executable, "-c", script, t.metastore.url], capture_output=True, text=True,
                         env={**os.environ}, check=True).stdout.split()
    txn_id, write_id = int(out[0]), int(out[1])
    assert write_id in t.tables["t"].valid_write_ids().aborted_write_ids | t.tables["t"].valid_write_ids().open_write_ids
    assert txn_id in t.metastore.txns.abort_expired_txns()
    assert t.metastore.txns.txn_state(txn_id) == "aborted"
    assert write_id in t.tables["t"].valid_write_ids().aborted_write_ids


def test_a_transaction_of_another_host_expires_by_its_heartbeat_not_by_a_pid_here(t):
    """On a metastore shared by several hosts a process id means nothing on another host: a transaction opened
    there is aborted only when its heartbeat is older than hive.txn.timeout, judged on the database's clock."""
    txn_id = t.metastore.txns.open_txn()
    dead_pid = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True).stdout.strip()
    with connect(t.metastore.url) as other:
        other.execute("UPDATE TXNS SET TXN_HOST = 'another-host', TXN_PID = ? WHERE TXN_ID = ?", (int(dead_pid), txn_id))
        assert txn_id not in t.metastore.txns.abort_expired_txns()  # alive: its pid would be dead here, not there
        assert t.metastore.txns.txn_state(txn_id) == "open"
        other.execute("UPDATE TXNS SET TXN_LAST_HEARTBEAT = TXN_LAST_HEARTBEAT - ? WHERE TXN_ID = ?",
                      (t.metastore.settings.txn_timeout_s + 5, txn_id))
    assert txn_id in t.metastore.txns.abort_expired_txns()
    assert t.metastore.txns.txn_state(txn_id) == "aborted"


def test_heartbeats_keep_a_live_transaction_open(t):
    t.set("hive.txn.timeout", 0.5)
    t.set("hive.txn.heartbeat.interval", 0.1)
    txn = t.transaction()
    import time

    time.sleep(1.2)
    assert t.metastore.txns.abort_expired_txns() == []
    assert txn.state == "open"
    txn.abort()


def test_txn_components_list_what_each_transaction_wrote(t):
    with t.transaction() as txn:
        t.tables["t"].write(_rows(1), partition={"ds": "p"}, txn=txn)
        t.tables["t"].write(_rows(2), partition={"ds": "q"}, txn=txn)
        t.sql("ANALYZE TABLE t PARTITION (ds='p') COMPUTE STATISTICS FOR COLUMNS v", txn=txn)
    conn = connect(t.metastore.url)
    rows = conn.execute("SELECT TC_PARTITION, TC_OPERATION_TYPE, TC_WRITEID FROM TXN_COMPONENTS WHERE TC_TXNID = ? "
                        "ORDER BY TC_OPERATION_TYPE, TC_PARTITION", (txn.txn_id,)).fetchall()
    assert rows == [("ds=p", "i", 1), ("ds=q", "i", 1), ("ds=p", "u", 1)]
    assert conn.schema_version() == len(MIGRATIONS)


def test_a_commit_that_fails_keeps_none_of_its_changes_and_aborts_at_once(t, caplog):
    """A transaction writes a new partition of t and analyzes `other`; another session drops `other` before
    the commit. The commit fails naming the table, nothing of it is stored, and the transaction is aborted
    then and there (readers never wait for hive.txn.timeout to see its write ID aborted)."""
    t.sql("CREATE TABLE other (v INT)")
    t.tables["t"].write(_rows(1), partition={"ds": "p"})
    t.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS v")
    stored = t.metastore.catalog.get_partition("default", "t", "ds=p").parameters
    txn = t.transaction()
    t.tables["t"].write(_rows(5, 6), partition={"ds": "q"}, txn=txn)
    t.sql("ANALYZE TABLE other COMPUTE STATISTICS FOR COLUMNS v", txn=txn)
    write_id = txn.write_id(t.metastore.catalog.get_table("default", "t"))
    assert [change.kind for change in txn.changes] == ["files", "statistics"]  # the commit, as data
    assert "2 rows into default.t" in txn.changes[0].describe()
    Metastore(t.metastore.url).catalog.drop_table("default", "other")  # another session
    with caplog.at_level(logging.INFO, logger="colstats_lab.txn"):
        with pytest.raises(NoSuchObjectException, match="other"):
            txn.commit()
    assert t.metastore.txns.txn_state(txn.txn_id) == "aborted"
    assert write_id in t.tables["t"].valid_write_ids().aborted_write_ids
    assert f"aborted transaction {txn.txn_id}: its commit failed: NoSuchObjectException" in caplog.text
    assert t.metastore.catalog.get_partition_names("default", "t") == ["ds=p"]  # the written partition was not added
    assert sorted(r.v for r in t.tables["t"].to_spark().collect()) == [1]
    assert t.metastore.catalog.get_partition("default", "t", "ds=p").parameters == stored
    assert _compliant(t) == (True, "")
