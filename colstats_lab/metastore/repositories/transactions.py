"""Hive's transaction API over the metastore file (TXNS, TXN_COMPONENTS, TXN_TO_WRITE_ID,
NEXT_WRITE_ID): open, heartbeat, commit and abort transactions, allocate write IDs, and the
ValidWriteIdList a reader sees."""
from __future__ import annotations

import logging
import os
import socket
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...errors import MetaException, NoSuchObjectException
from ..db import Database
from ..rows import hive_rows
from ..rows.hive_rows import process_alive
from ..rows.write_ids import ValidWriteIdList
from ..settings import MetastoreSettings
from .catalog import CatalogRepository
from .repository import Repository

if TYPE_CHECKING:
    pass

log = logging.getLogger("colstats_lab.txn")
_OPERATIONS = {"i": "insert", "u": "statistics", "d": "drop"}  # TXN_COMPONENTS.TC_OPERATION_TYPE
_STATES = {"o": "open", "c": "committed", "a": "aborted"}  # TXNS.TXN_STATE


class TxnRepository(Repository):
    """Transactions and write IDs: the Metastore's transaction calls. A repository of
    the Metastore (store.py)."""

    def __init__(self, db: Database, settings: MetastoreSettings, catalog: CatalogRepository) -> None:
        super().__init__(db, settings)
        self.catalog = catalog

    # ---- transactions and write IDs -----------------------------------------------------

    def open_txn(self, user: str | None = None) -> int:
        """Opens a transaction; returns its ID. Transactions whose process died are aborted first."""
        self.abort_expired_txns()
        with self.db.beside_others() as conn:  # a new row no other writer decides by
            now = conn.clock()
            return conn.execute(
                "INSERT INTO TXNS (TXN_STATE, TXN_STARTED, TXN_LAST_HEARTBEAT, TXN_USER, TXN_HOST, TXN_PID) "
                "VALUES ('o', ?, ?, ?, ?, ?) RETURNING TXN_ID",
                (now, now, user or os.environ.get("USER", "colstats"), socket.gethostname(), os.getpid()),
            ).fetchone()[0]

    def heartbeat(self, txn_id: int) -> None:
        """Keeps an open transaction alive (Hive's heartbeat); MetaException if it was aborted meanwhile."""
        with self.db.beside_others() as conn:  # its own row's time; an abort of it holds the whole write lock
            self.require_open(txn_id)
            conn.execute("UPDATE TXNS SET TXN_LAST_HEARTBEAT = ? WHERE TXN_ID = ?", (conn.clock(), txn_id))

    def abort_expired_txns(self, timeout_s: float | None = None) -> list[int]:
        """Aborts open transactions that missed their heartbeats for `timeout_s` (default
        `txn_timeout_s`) or whose process on this host is gone; returns their IDs. Readers never
        wait for them: an open write is simply not in anyone's snapshot."""
        timeout_s = self.settings.txn_timeout_s if timeout_s is None else timeout_s
        host = socket.gethostname()
        with self.snapshot() as conn:
            rows = conn.execute("SELECT TXN_ID, TXN_LAST_HEARTBEAT, TXN_HOST, TXN_PID FROM TXNS "
                                "WHERE TXN_STATE = 'o'").fetchall()
            now = conn.clock()
        dead = [r["TXN_ID"] for r in rows
                if now - r["TXN_LAST_HEARTBEAT"] > timeout_s or (r["TXN_HOST"] == host and not process_alive(r["TXN_PID"]))]
        if dead:
            with self.transaction() as conn:
                conn.executemany("UPDATE TXNS SET TXN_STATE = 'a' WHERE TXN_ID = ? AND TXN_STATE = 'o'",
                                 [(t,) for t in dead])
            for r in rows:
                if r["TXN_ID"] in dead:
                    why = ("its process is gone" if r["TXN_HOST"] == host and not process_alive(r["TXN_PID"])
                           else f"no heartbeat for {now - r['TXN_LAST_HEARTBEAT']:.0f} s (timeout {timeout_s:.0f} s)")
                    log.warning("aborted transaction %d of %s (pid %s): %s", r["TXN_ID"], r["TXN_HOST"], r["TXN_PID"], why)
        return dead

    def allocate_table_write_id(self, txn_id: int, db_name: str, table_name: str,
                                announcing: Sequence[str | None] = ()) -> int:
        """The table's next write ID for an open transaction (the same one if it already has one). `announcing`:
        the partitions (None: the unpartitioned table) a write will insert into, recorded with the write ID."""
        # the table's own rows (its next write ID, this transaction's), under the lock its commits take
        with self.transaction({(db_name.lower(), table_name.lower())}) as conn:
            self.require_open(txn_id)
            table = self.catalog.get_table(db_name, table_name)
            existing = conn.execute(
                "SELECT T2W_WRITEID FROM TXN_TO_WRITE_ID WHERE T2W_TXNID = ? AND T2W_DATABASE = ? AND T2W_TABLE = ?",
                (txn_id, table.dbName, table.tableName)).fetchone()
            if existing:
                write_id = existing[0]
            else:
                row = conn.execute("SELECT NWI_NEXT FROM NEXT_WRITE_ID WHERE NWI_DATABASE = ? AND NWI_TABLE = ?",
                                   (table.dbName, table.tableName)).fetchone()
                write_id = row[0] if row else 1
                conn.execute(
                    "INSERT INTO NEXT_WRITE_ID (NWI_DATABASE, NWI_TABLE, NWI_NEXT) VALUES (?, ?, ?) "
                    "ON CONFLICT (NWI_DATABASE, NWI_TABLE) DO UPDATE SET NWI_NEXT = excluded.NWI_NEXT",
                    (table.dbName, table.tableName, write_id + 1))
                conn.execute("INSERT INTO TXN_TO_WRITE_ID (T2W_TXNID, T2W_DATABASE, T2W_TABLE, T2W_WRITEID) "
                             "VALUES (?, ?, ?, ?)", (txn_id, table.dbName, table.tableName, write_id))
            # with the write ID, not after it: a write ID without components reads as a write into the whole
            # table, and an auto-analyze worker looking in between would hold every partition back
            if announcing:
                self.add_txn_components(txn_id, table.dbName, table.tableName, list(announcing), "i", write_id)
            return write_id

    def commit_txn(self, txn_id: int) -> None:
        with self.transaction() as conn:
            self.require_open(txn_id)
            conn.execute("UPDATE TXNS SET TXN_STATE = 'c' WHERE TXN_ID = ?", (txn_id,))

    def abort_txn(self, txn_id: int) -> None:
        with self.transaction() as conn:
            self.require_open(txn_id)
            conn.execute("UPDATE TXNS SET TXN_STATE = 'a' WHERE TXN_ID = ?", (txn_id,))

    def require_open(self, txn_id: int) -> None:
        row = self.db.execute("SELECT TXN_STATE FROM TXNS WHERE TXN_ID = ?", (txn_id,)).fetchone()
        if row is None:
            raise NoSuchObjectException(f"transaction {txn_id} does not exist")
        if row[0] != "o":
            state = _STATES[row[0]]
            raise MetaException(f"transaction {txn_id} is already {state}")

    def get_valid_write_ids(self, db_name: str, table_name: str, txn_id: int | None = None) -> ValidWriteIdList:
        """The table's ValidWriteIdList now: every allocated write ID, with the open and aborted ones
        listed. For a transaction's own reads (`txn_id`), its own write is valid."""
        with self.snapshot():
            return hive_rows.valid_write_ids(self.db, self.catalog.get_table(db_name, table_name), txn_id)

    def add_txn_components(self, txn_id: int, db_name: str, table_name: str, part_names: list[str | None],
                           operation: str, write_id: int) -> None:
        """Records what an open transaction writes (Hive's TXN_COMPONENTS; operation 'i' insert,
        'u' update of statistics, 'd' drop)."""
        with self.transaction() as conn:
            self.require_open(txn_id)
            conn.executemany(
                "INSERT INTO TXN_COMPONENTS (TC_TXNID, TC_DATABASE, TC_TABLE, TC_PARTITION, TC_OPERATION_TYPE, "
                "TC_WRITEID) VALUES (?, ?, ?, ?, ?, ?)",
                [(txn_id, db_name.lower(), table_name.lower(), p, operation, write_id) for p in part_names])

    def table_write_ids(self, txn_id: int) -> dict[tuple[str, str], int]:
        """The write IDs a transaction holds, by (db, table)."""
        with self.snapshot() as conn:
            return {(r[0], r[1]): r[2] for r in conn.execute(
                "SELECT T2W_DATABASE, T2W_TABLE, T2W_WRITEID FROM TXN_TO_WRITE_ID WHERE T2W_TXNID = ?", (txn_id,))}

    def last_writes(self) -> dict[tuple[str, str], float]:
        """When the latest committed write into each table began, by (db, table): one grouped query over
        TXN_COMPONENTS (an external table's writers are other jobs, so it has none)."""
        with self.snapshot() as conn:
            return {(r[0], r[1]): r[2] for r in conn.execute(
                "SELECT C.TC_DATABASE, C.TC_TABLE, max(T.TXN_STARTED) FROM TXN_COMPONENTS C "
                "JOIN TXNS T ON T.TXN_ID = C.TC_TXNID WHERE C.TC_OPERATION_TYPE = 'i' AND T.TXN_STATE = 'c' "
                "GROUP BY C.TC_DATABASE, C.TC_TABLE")}

    def table_transactions(self, db_name: str, table_name: str, limit: int = 200) -> list[dict]:
        """The latest `limit` transactions that took a write ID of the table, newest first: state, when,
        who, the write ID, what they wrote (TXN_COMPONENTS: operations, how many partitions, whether the table) and
        how many statistics they left (partitions, or the table, whose current statistics' writer they are)."""
        with self.snapshot() as conn:
            table = self.catalog.get_table(db_name, table_name)
            txns = conn.execute(
                "SELECT T.TXN_ID, T.TXN_STATE, T.TXN_STARTED, T.TXN_LAST_HEARTBEAT, T.TXN_USER, T.TXN_HOST, T.TXN_PID, "
                "W.T2W_WRITEID FROM TXN_TO_WRITE_ID W JOIN TXNS T ON T.TXN_ID = W.T2W_TXNID "
                "WHERE W.T2W_DATABASE = ? AND W.T2W_TABLE = ? ORDER BY W.T2W_WRITEID DESC LIMIT ?",
                (table.dbName, table.tableName, limit)).fetchall()
            if not txns:
                return []
            ids = [r["TXN_ID"] for r in txns]
            # counted here, not listed: one write can touch 100,000 partitions
            written = {r[0]: (r[1], r[2], bool(r[3])) for r in conn.execute(
                "SELECT TC_TXNID, group_concat(DISTINCT TC_OPERATION_TYPE), count(DISTINCT TC_PARTITION), "
                "max(CASE WHEN TC_PARTITION IS NULL THEN 1 ELSE 0 END) FROM TXN_COMPONENTS "
                f"WHERE TC_TXNID IN ({','.join('?' * len(ids))}) "
                "AND TC_DATABASE = ? AND TC_TABLE = ? GROUP BY TC_TXNID", (*ids, table.dbName, table.tableName))}
            writes = [r["T2W_WRITEID"] for r in txns]
            left = dict(conn.execute(
                f"SELECT WRITE_ID, count(*) FROM PARTITIONS WHERE TBL_ID = ? AND WRITE_ID IN "
                f"({','.join('?' * len(writes))}) GROUP BY WRITE_ID",
                (hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"], *writes)).fetchall())
        out = []
        for r in txns:
            operations, partitions, table_level = written.get(r["TXN_ID"], ("", 0, False))
            out.append({
                "txn_id": r["TXN_ID"], "state": _STATES[r["TXN_STATE"]],
                "write_id": r["T2W_WRITEID"], "started": r["TXN_STARTED"], "last_heartbeat": r["TXN_LAST_HEARTBEAT"],
                "user": r["TXN_USER"], "host": r["TXN_HOST"], "pid": r["TXN_PID"],
                "operations": sorted({_OPERATIONS.get(op, op) for op in (operations or "").split(",") if op}),
                "table_level": table_level, "partitions": partitions,
                "partitions_with_its_statistics": left.get(r["T2W_WRITEID"], 0),
                "table_statistics": table.writeId == r["T2W_WRITEID"],
            })
        return out

    def txn_state(self, txn_id: int) -> str:
        """'open', 'committed' or 'aborted'."""
        with self.snapshot() as conn:
            row = conn.execute("SELECT TXN_STATE FROM TXNS WHERE TXN_ID = ?", (txn_id,)).fetchone()
        if row is None:
            raise NoSuchObjectException(f"transaction {txn_id} does not exist")
        return _STATES[row[0]]

