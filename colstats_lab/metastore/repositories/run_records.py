"""Query runs kept (QUERY_RUNS, QUERY_RUN_TABLES, migration 28): what each `explain(run=True)` measured, operator
by operator, with the write IDs the statistics of every lab table it read were planned under. Bounded by a
budget in runs (colstats.runs.keep), the oldest dropped first, in the transaction that keeps a new one."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any

from ..rows import hive_rows
from .repository import Repository

DEFAULT_RUNS_KEPT = 1000  # colstats.runs.keep: runs the metastore keeps, the oldest dropped first


@dataclass(frozen=True)
class RunTable:
    """A lab table a run read: the write IDs its reader saw (Hive's ValidWriteIdList text; None for a table
    without write IDs) and what the lab knew of its statistics when the query was planned."""
    db_name: str
    table_name: str
    valid_write_ids: str | None
    statistics: str

    @property
    def name(self) -> str:
        return f"{self.db_name}.{self.table_name}"


@dataclass(frozen=True)
class RunOperator:
    """One operator of a kept run, as its PlanReport's row said it (`PlanReport.operators`' columns): where it sits
    in the plan, Spark's estimate, what ran, and the cause given of an estimate that is off. A figure not measured
    is None."""
    id: int
    node: str
    parent: int | None = None
    depth: int | None = None
    estimated_rows: int | None = None
    estimated_bytes: int | None = None
    actual_rows: int | None = None
    q_error: float | None = None
    statistics: str | None = None
    cause: str | None = None
    time_s: float | None = None
    bytes: int | None = None
    spill_bytes: int | None = None
    peak_memory: int | None = None
    tasks: int | None = None
    task_rows_min: int | None = None
    task_rows_median: float | None = None
    task_rows_max: int | None = None

    @classmethod
    def of(cls, record: dict[str, Any]) -> RunOperator:
        """An operator from its JSON record (QUERY_RUNS.OPERATORS), keys it does not know left out."""
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in record.items() if key in known})

    def to_record(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class KeptRun:
    """One run: the query, its fingerprint (its text with literals as ?), when it ran (seconds since the epoch,
    UTC) and for how long, its operators and the tables it read."""
    run_id: int | None
    fingerprint: str
    query: str
    ran_at: int
    seconds: float
    operators: tuple[RunOperator, ...]
    tables: tuple[RunTable, ...]


class RunRepository(Repository):
    """The kept runs: the Metastore's run calls. A repository of the Metastore (store.py)."""

    def keep_run(self, run: KeptRun, keep: int = DEFAULT_RUNS_KEPT) -> int:
        """Keeps `run` (its tables each a table of this metastore), then drops the oldest
        runs past the latest `keep`; returns its id."""
        with self.transaction() as conn:
            run_id = self.db.dialect.insert_returning_ids(
                self.db, "QUERY_RUNS", "RUN_ID", ("FINGERPRINT", "QUERY_TEXT", "RAN_AT", "SECONDS", "OPERATORS"),
                [(run.fingerprint, run.query, run.ran_at, run.seconds, json.dumps([op.to_record() for op in run.operators]))])[0]
            for table in run.tables:
                tbl_id = hive_rows.table_row(self.db, table.db_name, table.table_name)["TBL_ID"]
                conn.execute("INSERT INTO QUERY_RUN_TABLES (RUN_ID, TBL_ID, VALID_WRITE_IDS, STATISTICS_STATE) "
                             "VALUES (?, ?, ?, ?)", (run_id, tbl_id, table.valid_write_ids, table.statistics))
            conn.execute("DELETE FROM QUERY_RUNS WHERE RUN_ID NOT IN "
                         "(SELECT RUN_ID FROM (SELECT RUN_ID FROM QUERY_RUNS ORDER BY RUN_ID DESC LIMIT ?) LATEST)",
                         (max(int(keep), 0),))
        return run_id

    def get_runs(self, db_name: str | None = None, table_name: str | None = None, fingerprint: str | None = None,
                 limit: int | None = None) -> list[KeptRun]:
        """The kept runs, newest first: of every query, or those that read `db_name.table_name`, or of one
        `fingerprint`; at most `limit`."""
        where, arguments = [], []
        if table_name is not None:
            tbl_id = hive_rows.table_row(self.db, db_name or "default", table_name)["TBL_ID"]
            where.append("R.RUN_ID IN (SELECT RUN_ID FROM QUERY_RUN_TABLES WHERE TBL_ID = ?)")
            arguments.append(tbl_id)
        if fingerprint is not None:
            where.append("R.FINGERPRINT = ?")
            arguments.append(fingerprint)
        with self.snapshot() as conn:
            runs = conn.execute(
                "SELECT R.RUN_ID, R.FINGERPRINT, R.QUERY_TEXT, R.RAN_AT, R.SECONDS, R.OPERATORS FROM QUERY_RUNS R"
                + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY R.RUN_ID DESC"
                + (" LIMIT ?" if limit is not None else ""),
                (*arguments, *([int(limit)] if limit is not None else []))).fetchall()
            tables: dict[int, list[RunTable]] = {}
            if runs:
                for run_id, db, name, valid, state in conn.execute(
                        "SELECT Q.RUN_ID, D.NAME, T.TBL_NAME, Q.VALID_WRITE_IDS, Q.STATISTICS_STATE "
                        "FROM QUERY_RUN_TABLES Q JOIN TBLS T ON T.TBL_ID = Q.TBL_ID JOIN DBS D ON D.DB_ID = T.DB_ID "
                        "WHERE Q.RUN_ID >= ? AND Q.RUN_ID <= ? ORDER BY Q.RUN_ID, D.NAME, T.TBL_NAME",
                        (runs[-1][0], runs[0][0])).fetchall():
                    tables.setdefault(run_id, []).append(RunTable(db, name, valid, state))
        return [KeptRun(r[0], r[1], r[2], int(r[3]), float(r[4]), tuple(RunOperator.of(op) for op in json.loads(r[5])),
                        tuple(tables.get(r[0], [])))
                for r in runs]
