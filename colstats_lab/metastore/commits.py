"""A commit: a command's changes (`changes.py`) applied in order, each touched table's follow-up done once, in
one database transaction that also commits the command's Hive transaction. Every write to the metastore goes
through `apply`, which sits above every repository: a change writes through the metastore's repositories, and
the states of statistics the commit kept are settled in the history and judged by the columns' expectations
before it commits."""
from __future__ import annotations

import logging
from collections.abc import Sequence

from .changes import Change, FollowUp, Repositories
from .repositories.expectations import evaluate_commit
from .repositories.history import last_state, record_history_rows, settle_history

log = logging.getLogger("colstats_lab.txn")


def apply(metastore: Repositories, changes: Sequence[Change], txn_id: int | None = None) -> list:
    """Applies `changes` in order, then each touched table's follow-up once (`Change.follow_up`), in one
    database transaction. With `txn_id`, that transaction also commits Hive transaction `txn_id`; if a change
    fails, nothing of the commit is kept and the Hive transaction is aborted at once, not left open until its
    timeout. Returns what each change returned; the error is raised."""
    txns = metastore.txns
    try:
        with metastore.transaction(_own_tables(changes)) as conn:
            results = []
            since = last_state(conn)
            follow: dict[tuple[str, str], FollowUp] = {}
            for change in changes:
                # the states kept as statistics are stored name which transaction stored them, and why
                conn.execute("INSERT INTO STATS_HISTORY_CONTEXT (ID, TXN_ID, CAUSE, KEEP) "
                             f"VALUES ({conn.dialect.history_context}, ?, ?, ?) "
                             "ON CONFLICT (ID) DO UPDATE SET TXN_ID = excluded.TXN_ID, CAUSE = excluded.CAUSE, "
                             "KEEP = excluded.KEEP", (txn_id, change.describe(), int(metastore.settings.history_enabled)))
                results.append(change.apply(metastore))
                needed = change.follow_up()
                if needed is not None:
                    key = (needed.table.dbName, needed.table.tableName)
                    follow[key] = follow[key].joined(needed) if key in follow else needed
            for needed in follow.values():
                needed.run(metastore)
            conn.execute(f"DELETE FROM STATS_HISTORY_CONTEXT WHERE ID = {conn.dialect.history_context}")
            if txn_id is not None and last_state(conn) > since:  # the commit kept states
                if any(change.kind != "statistics" for change in changes):
                    # a write's numRows lands after its gathered states; an ANALYZE sets it before its own
                    record_history_rows(conn, txn_id, since)
                settle_history(conn, txn_id, metastore.settings.history_sketches, since)
                evaluate_commit(conn, txn_id, since=since)  # the column's rules, on the states this commit stored
            if txn_id is not None:
                txns.commit_txn(txn_id)
    except BaseException as exc:
        if txn_id is not None and txns.txn_state(txn_id) == "open":
            txns.abort_txn(txn_id)
            log.info("aborted transaction %d: its commit failed: %s: %s", txn_id, type(exc).__name__, exc)
        raise
    return results


def _own_tables(changes: Sequence[Change]) -> set[tuple[str, str]]:
    """The tables a commit of statistics alone writes (an ANALYZE's, an import's): their own rows, nothing every
    table shares, so on PostgreSQL it runs beside commits of other tables. Empty for any other commit, which
    takes the metastore's write lock alone."""
    if not changes or any(change.kind != "statistics" or not hasattr(change, "table") for change in changes):
        return set()
    return {(change.table.dbName, change.table.tableName) for change in changes}  # type: ignore[attr-defined]
