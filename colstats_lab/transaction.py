"""A lab transaction: a Hive txn with write IDs per table, a snapshot per table, heartbeats while
it lives, and the metastore changes of its writes and ANALYZEs (typed records, `metastore.changes`)
applied by `Metastore.apply` when it commits.

Files of its writes are on disk as soon as each write finishes (in `delta_N_N/` or `base_N/`
directories no other snapshot admits until the commit). Its statistics are written in the same
SQLite transaction that marks it committed, so an aborted write or ANALYZE never touches the
stored statistics.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Literal

from .metastore import MetaException, Metastore, Partition, Table, ValidWriteIdList
from .metastore.changes import Change

HEARTBEAT_INTERVAL_S = 30.0
log = logging.getLogger("colstats_lab.txn")


class Transaction:
    """Use through `Lab.transaction()`; `txn_id`, `write_id(table)`, `snapshot(table)`, `state`."""

    def __init__(self, metastore: Metastore, heartbeat_interval_s: float = HEARTBEAT_INTERVAL_S):
        self.metastore = metastore
        self.txn_id = metastore.txns.open_txn()
        log.debug("opened transaction %d", self.txn_id)
        self._snapshots: dict[tuple[str, str], ValidWriteIdList] = {}
        self.changes: list[Change] = []  # what the commit will write, in order
        self._new_partitions: dict[tuple[str, str], dict[str, Partition]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._heartbeat = threading.Thread(target=self._beat, args=(heartbeat_interval_s,), daemon=True)
        self._heartbeat.start()

    @property
    def state(self) -> str:
        return self.metastore.txns.txn_state(self.txn_id)

    def _beat(self, interval: float) -> None:
        while not self._stop.wait(interval):
            try:
                self.metastore.txns.heartbeat(self.txn_id)
            except MetaException:
                return  # ended meanwhile

    def write_id(self, table: Table, announcing: Sequence[str | None] = ()) -> int:
        """This transaction's write ID for the table (allocated on first use), recording with it the partitions
        (None: the unpartitioned table) a write announces it will insert into."""
        return self.metastore.txns.allocate_table_write_id(self.txn_id, table.dbName, table.tableName, announcing)

    def snapshot(self, table: Table) -> ValidWriteIdList:
        """What this transaction reads of the table: fixed at first use, plus its own writes."""
        key = (table.dbName, table.tableName)
        if key not in self._snapshots:
            self._snapshots[key] = self.metastore.txns.get_valid_write_ids(table.dbName, table.tableName, self.txn_id)
        own = self.metastore.txns.table_write_ids(self.txn_id).get(key)
        snap = self._snapshots[key]
        if own is None or snap.is_write_id_valid(own):
            return snap
        return ValidWriteIdList(snap.table_name, max(snap.high_watermark, own), snap.open_write_ids - {own},
                                snap.aborted_write_ids)

    def add_partitions(self, table: Table, partitions: list[Partition]) -> None:
        """Partitions this transaction's writes create: its own statements see them before the commit."""
        known = self._new_partitions.setdefault((table.dbName, table.tableName), {})
        for part in partitions:
            known.setdefault(part.partName, part)

    def new_partitions(self, table: Table) -> list[Partition]:
        return list(self._new_partitions.get((table.dbName, table.tableName), {}).values())

    def add(self, change: Change) -> Change:
        """A change the commit makes, after those added before it; returns it (its outcome fills in
        when the commit applies it)."""
        with self._lock:
            self.changes.append(change)
        return change

    def commit(self) -> None:
        """Applies the changes and marks the transaction committed, in one SQLite transaction
        (`Metastore.apply`); if a change fails, nothing of it is kept and the transaction is aborted."""
        self._stop.set()
        try:
            self.metastore.apply(self.changes, self.txn_id)
        except BaseException as exc:
            self.abort(f"its commit failed: {type(exc).__name__}: {exc}")
            raise
        log.debug("committed transaction %d: %s", self.txn_id, "; ".join(c.describe() for c in self.changes) or "no changes")

    def abort(self, why: str = "aborted by its owner") -> None:
        self._stop.set()
        if self.state == "open":
            self.metastore.txns.abort_txn(self.txn_id)
            log.info("aborted transaction %d: %s", self.txn_id, why)

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        if exc_type is None:
            self.commit()
        else:
            self.abort(f"{exc_type.__name__}: {exc}")
        return False
