"""What auto-analyze workers share through the metastore: claims on the partitions they analyze, each held by
the worker's open transaction (so it lives while the transaction heartbeats and ends with it: a killed
worker's claims end when its transaction is aborted as expired, or at once on the same host, whose dead
process is seen), the open writes a worker must wait for, the columns each partition was analyzed for, and
the rounds the workers ran."""
from __future__ import annotations

import time

from ..db import Database
from ..rows import hive_rows
from ..settings import MetastoreSettings
from .repository import Repository
from .transactions import TxnRepository

TABLE_OWNER = ""  # an unpartitioned table's claim, open write or analyzed columns


class AutoAnalyzeRepository(Repository):
    """Auto-analyze workers' claims, open writes, analyzed columns and rounds."""

    def __init__(self, db: Database, settings: MetastoreSettings, txns: TxnRepository) -> None:
        super().__init__(db, settings)
        self.txns = txns

    def claim_for_analyze(self, txn_id: int, db_name: str, table_name: str, owners: list[str]) -> list[str]:
        """Claims for transaction `txn_id` those of `owners` (partition names, TABLE_OWNER for the table) that no
        other open transaction holds; returns them. Claims of ended transactions are dropped first, in the same
        SQLite transaction, so two workers never hold one owner."""
        self.txns.abort_expired_txns()
        with self.transaction() as conn:
            self.txns.require_open(txn_id)
            conn.execute("DELETE FROM AUTOANALYZE_CLAIMS WHERE TXN_ID IN "
                         "(SELECT TXN_ID FROM TXNS WHERE TXN_STATE != 'o')")
            tbl_id = hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"]
            held = {r[0] for r in conn.execute("SELECT OWNER FROM AUTOANALYZE_CLAIMS WHERE TBL_ID = ?", (tbl_id,))}
            claimed = [owner for owner in dict.fromkeys(owners) if owner not in held]
            conn.executemany("INSERT INTO AUTOANALYZE_CLAIMS (TBL_ID, OWNER, TXN_ID, CLAIMED_AT) VALUES (?, ?, ?, ?)",
                             [(tbl_id, owner, txn_id, time.time()) for owner in claimed])
            return claimed

    def release_claims(self, txn_id: int) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM AUTOANALYZE_CLAIMS WHERE TXN_ID = ?", (txn_id,))

    def claims(self) -> list[dict]:
        """Claims held by live transactions (those of dead workers' are let go first): database, table, owner,
        transaction, host and pid, since when."""
        self.txns.abort_expired_txns()
        with self.snapshot() as conn:
            return [dict(r) for r in conn.execute(
                "SELECT D.NAME AS db, T.TBL_NAME AS tbl, C.OWNER AS owner, C.TXN_ID AS txn, X.TXN_HOST AS host, "
                "X.TXN_PID AS pid, C.CLAIMED_AT AS claimed_at FROM AUTOANALYZE_CLAIMS C "
                "JOIN TBLS T ON T.TBL_ID = C.TBL_ID JOIN DBS D ON D.DB_ID = T.DB_ID "
                "JOIN TXNS X ON X.TXN_ID = C.TXN_ID WHERE X.TXN_STATE = 'o' ORDER BY db, tbl, owner")]

    def open_writes(self, db_name: str, table_name: str) -> dict[str, int]:
        """The table's open data writes: partition name (TABLE_OWNER for an unpartitioned table, or for a
        write whose partitions are not known yet) -> its transaction. An ANALYZE's transaction (it records
        statistics only, or holds auto-analyze claims) writes no data."""
        with self.snapshot() as conn:
            rows = conn.execute(
                "SELECT W.T2W_TXNID, C.TC_PARTITION, C.TC_OPERATION_TYPE FROM TXN_TO_WRITE_ID W "
                "JOIN TXNS X ON X.TXN_ID = W.T2W_TXNID AND X.TXN_STATE = 'o' "
                "LEFT JOIN TXN_COMPONENTS C ON C.TC_TXNID = W.T2W_TXNID AND C.TC_DATABASE = W.T2W_DATABASE "
                "AND C.TC_TABLE = W.T2W_TABLE WHERE W.T2W_DATABASE = ? AND W.T2W_TABLE = ? "
                "AND W.T2W_TXNID NOT IN (SELECT TXN_ID FROM AUTOANALYZE_CLAIMS)",
                (db_name.lower(), table_name.lower())).fetchall()
        components: dict[int, list[tuple[str | None, str]]] = {}
        for txn_id, partition, operation in rows:
            listed = components.setdefault(txn_id, [])
            if operation is not None:
                listed.append((partition, operation))
        out: dict[str, int] = {}
        for txn_id, listed in components.items():
            if not listed:  # a write ID taken, nothing recorded yet: a write (or an ANALYZE) still running
                out.setdefault(TABLE_OWNER, txn_id)
            for partition, operation in listed:
                if operation != "u":
                    out.setdefault(partition or TABLE_OWNER, txn_id)
        return out

    def analyzed_columns(self, db_name: str, table_name: str) -> dict[str, set[str]]:
        """The columns each owner (partition name, TABLE_OWNER for an unpartitioned table) keeps statistics
        of, accurate or not: what an ANALYZE computed there before."""
        with self.snapshot() as conn:
            tbl_id = hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"]
            out: dict[str, set[str]] = {}
            for owner, column in conn.execute(
                    "SELECT P.PART_NAME, S.COLUMN_NAME FROM PART_COL_STATS S JOIN PARTITIONS P ON P.PART_ID = S.PART_ID "
                    "WHERE P.TBL_ID = ? UNION ALL SELECT ?, COLUMN_NAME FROM TAB_COL_STATS WHERE TBL_ID = ? "
                    "AND NOT EXISTS (SELECT 1 FROM PARTITIONS WHERE TBL_ID = ?)", (tbl_id, TABLE_OWNER, tbl_id, tbl_id)):
                out.setdefault(owner, set()).add(column)
            return out

    # ---- rounds -------------------------------------------------------------------------

    def start_autoanalyze_round(self, worker: str, options: str) -> int:
        with self.transaction() as conn:
            return int(conn.execute("INSERT INTO AUTOANALYZE_ROUNDS (WORKER, STARTED_AT, OPTIONS) VALUES (?, ?, ?) "
                                    "RETURNING ROUND_ID", (worker, time.time(), options)).fetchone()[0])

    def end_autoanalyze_round(self, round_id: int, due: int, analyzed: int, left: int, failed: int,
                              tables: str) -> None:
        with self.transaction() as conn:
            conn.execute("UPDATE AUTOANALYZE_ROUNDS SET ENDED_AT = ?, DUE = ?, ANALYZED = ?, LEFT_FOR_LATER = ?, "
                         "FAILED = ?, TABLES = ? WHERE ROUND_ID = ?",
                         (time.time(), due, analyzed, left, failed, tables, round_id))

    def autoanalyze_rounds(self, limit: int = 10) -> list[dict]:
        """The latest rounds, newest first: round_id, worker, started_at, ended_at (None: running, or its
        worker was stopped), options (JSON), due, analyzed, left_for_later, failed, tables (JSON)."""
        with self.snapshot() as conn:
            return [{k.lower(): r[k] for k in r.keys()} for r in conn.execute(
                "SELECT * FROM AUTOANALYZE_ROUNDS ORDER BY ROUND_ID DESC LIMIT ?", (limit,))]
