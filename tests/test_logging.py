"""What the lab logs under colstats_lab.*: transactions opened, committed and aborted with why (another
process's too, which is otherwise silent), and the files each scan reads."""
from __future__ import annotations

import logging
import subprocess
import sys

import pytest


def test_an_aborted_transaction_is_logged_with_why(lab, caplog):
    caplog.set_level(logging.DEBUG, logger="colstats_lab")
    with lab.transaction() as committed:
        pass
    with pytest.raises(RuntimeError):
        with lab.transaction() as failed:
            raise RuntimeError("the job failed after writing")
    assert f"opened transaction {committed.txn_id}" in caplog.text
    assert f"committed transaction {committed.txn_id}" in caplog.text
    assert f"aborted transaction {failed.txn_id}: RuntimeError: the job failed after writing" in caplog.text
    assert lab.metastore.txns.txn_state(failed.txn_id) == "aborted"


def test_a_transaction_of_a_process_that_died_is_aborted_with_a_warning_naming_it(lab, caplog):
    caplog.set_level(logging.WARNING, logger="colstats_lab")
    gone = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True).stdout)
    txn_id = lab.metastore.txns.open_txn()
    with lab.metastore.transaction() as conn:  # as if that process had opened it and died
        conn.execute("UPDATE TXNS SET TXN_PID = ? WHERE TXN_ID = ?", (gone, txn_id))
    assert lab.metastore.txns.abort_expired_txns() == [txn_id]
    (record,) = [r for r in caplog.records if r.name == "colstats_lab.txn"]
    assert record.levelno == logging.WARNING
    assert record.getMessage().endswith(f"(pid {gone}): its process is gone")


def test_a_scan_logs_the_files_it_reads(lab, spark, caplog):
    lab.sql("CREATE TABLE t (v INT) PARTITIONED BY (k STRING)")
    lab.tables["t"].write(spark.createDataFrame([(1,), (2,)], "v int"), partition={"k": "a"})
    caplog.set_level(logging.DEBUG, logger="colstats_lab.scan")
    lab.sql("SELECT count(*) FROM t WHERE v > 0")
    (part,) = lab.tables["t"].files()[1]
    assert f"scanning default.t: {len(part.files)} file(s), {part.total_size} bytes in 1 partition(s)" in caplog.text
