"""Auto-analyze: statistics kept fresh unattended, as Hive's StatsUpdaterThread keeps them
(`hive.stats.auto.update` all | existing, the table property `skip.stats.autoupdate`), with the lab's exact
staleness deciding what is due.

A round: every table of the databases named (all of them by default) not opted out; its owners (partitions,
or the table) whose statistics are not accurate now and are due: rows changed since the last ANALYZE over the
owner's rows at or past the threshold (Impala's rule of thumb: 30 %), any change where it cannot be counted in
rows (an external, Iceberg or Delta table's files), or never analyzed (mode `all` only). An owner with an open
write waits for it to end. Most stale first, table by table, one ANALYZE (one Spark job) a table, within the
time budget; what did not fit waits for the next round. Each table's owners are claimed in the metastore by the
ANALYZE's own transaction before they are read, and judged again once claimed, so two workers never analyze
one owner: a claim lives while its transaction heartbeats and ends with it (a killed worker's with the abort of
its expired transaction). Statistics are stored with the worker's write ID, as any ANALYZE's are: a write that
commits meanwhile leaves its partition stale, never falsely accurate."""
from __future__ import annotations

import json
import logging
import os
import re
import socket
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from enum import StrEnum

import pandas as pd
from pyspark.sql import SparkSession

from ..column_statistics.estimators import WHOLE_TIER, Tier
from ..errors import ColstatsError, InvalidArgument
from ..metastore import Metastore, Table
from ..metastore.repositories.analyze_claims import TABLE_OWNER
from ..sizes import counted
from ..sql.statements import Analyze, AnalyzeMode, TableName
from ..transaction import Transaction
from .runner import run_analyze
from .stale import check_threshold, staleness_frame

log = logging.getLogger("colstats_lab.autoanalyze")



class AutoAnalyzeMode(StrEnum):
    """Which owners a round analyzes: every stale one, or only those analyzed before."""
    ALL = "all"
    EXISTING = "existing"


class AutoAnalyzeColumns(StrEnum):
    """Which columns a round analyzes: every one, or those analyzed before (all of them where none were)."""
    ALL = "all"
    ANALYZED = "analyzed"


MODES = tuple(AutoAnalyzeMode)
COLUMN_CHOICES = tuple(AutoAnalyzeColumns)
SKIP_PARAM = "skip.stats.autoupdate"
_UNITS = {"s": 1, "m": 60, "h": 3600}


def duration_seconds(text: str | float | int, what: str) -> float:
    """`90`, `30s`, `10m` or `1h` as seconds; raises naming a malformed one."""
    if isinstance(text, (int, float)) and not isinstance(text, bool) and text >= 0:
        return float(text)
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", str(text))
    if match is None:
        raise InvalidArgument(f"{what} is a duration such as 90s, 10m or 1h, not {text!r}")
    return float(match.group(1)) * _UNITS[match.group(2) or "s"]


AUTOANALYZE_SAMPLE = "colstats.autoanalyze.sample"
AUTO_SAMPLE_BYTES = 1 << 30
AUTO_SAMPLE_PERCENT = 5.0


def checked_sample(value: object) -> str:
    """colstats.autoanalyze.sample as kept: "off", "auto" or a fraction in (0, 1]; raises InvalidArgument naming it."""
    text = str(value).strip().lower()
    if text in ("off", "auto"):
        return text
    try:
        fraction = float(text)
    except ValueError:
        fraction = -1.0
    if isinstance(value, bool) or not 0 < fraction <= 1:
        raise InvalidArgument(f"colstats.autoanalyze.sample is off, auto or a fraction of row groups above 0 and at "
                              f"most 1 (0.05 for 5 %), not {value!r}")
    return "off" if fraction == 1 else repr(fraction)


@dataclass(frozen=True)
class AutoAnalyzeOptions:
    databases: tuple[str, ...] = ()  # none: every database
    mode: AutoAnalyzeMode = AutoAnalyzeMode.ALL  # EXISTING: only owners analyzed before, only their columns
    threshold: float = 0.3
    budget_s: float = 900.0
    columns: AutoAnalyzeColumns = AutoAnalyzeColumns.ALL
    # colstats.autoanalyze.sample: "off" (every value), a fraction of row groups ("0.05"), or "auto" (a 5 % sample
    # where a due partition holds AUTO_SAMPLE_BYTES or more, every value elsewhere)
    sample: str = "off"

    def sample_percent(self, largest_bytes: int) -> float | None:
        """The SAMPLE percent for a table whose largest due partition holds `largest_bytes` (None: every value)."""
        if self.sample == "off":
            return None
        if self.sample == "auto":
            return AUTO_SAMPLE_PERCENT if largest_bytes >= AUTO_SAMPLE_BYTES else None
        return float(self.sample) * 100

    @classmethod
    def of(cls, databases: tuple[str, ...] = (), mode: str = "all", threshold: float = 0.3, budget_s: float = 900.0,
           columns: str = "all", sample: str = "off") -> AutoAnalyzeOptions:
        """Options from their plain values (a call's arguments, a round's JSON), each checked: InvalidArgument
        names the first out of range."""
        if mode not in MODES:
            raise InvalidArgument(f"mode is one of {', '.join(MODES)}, not {mode!r}")
        if columns not in COLUMN_CHOICES:
            raise InvalidArgument(f"columns is one of {', '.join(COLUMN_CHOICES)}, not {columns!r}")
        return cls(tuple(databases), AutoAnalyzeMode(mode), threshold, budget_s, AutoAnalyzeColumns(columns),
                   sample).checked()

    def checked(self) -> AutoAnalyzeOptions:
        check_threshold(self.threshold)
        if self.budget_s < 0:
            raise InvalidArgument(f"the budget is a duration, not {self.budget_s!r}")
        checked_sample(self.sample)
        return self

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> AutoAnalyzeOptions:
        values = json.loads(text)
        return cls.of(**{**values, "databases": tuple(values.get("databases") or ())})


def share(fraction: float) -> str:
    """A fraction as a percentage a person reads: 33%, and 0.25% where whole percents would say 0%."""
    return f"{fraction:.0%}" if fraction == 0 or fraction >= 0.01 else f"{fraction:.2%}"


@dataclass(frozen=True)
class DueOwner:
    """A partition (owner None: an unpartitioned table) whose statistics are due, and why."""

    db: str
    table: str
    owner: str | None
    changed_fraction: float | None  # None: not countable in rows (files another job changes), or never analyzed
    reason: str
    analyzed_columns: frozenset[str]

    @property
    def claim_key(self) -> str:
        """The owner as claims and open writes name it (TABLE_OWNER for an unpartitioned table)."""
        return self.owner if self.owner is not None else TABLE_OWNER

    @property
    def qualified_table(self) -> str:
        return f"{self.db}.{self.table}"

    @property
    def staleness(self) -> float:
        """How stale, for the order: the changed fraction; a change that cannot be counted, or no statistics
        at all, counts as everything changed."""
        return 1.0 if self.changed_fraction is None else self.changed_fraction

    def describe(self) -> str:
        where = f"{self.qualified_table} {self.owner}" if self.owner else self.qualified_table
        how = "never analyzed" if not self.analyzed_columns else (
            f"{share(self.changed_fraction)} of rows changed" if self.changed_fraction is not None else self.reason)
        return f"{where} ({how})"




def due_owners(metastore: Metastore, options: AutoAnalyzeOptions, held_back: dict[str, str] | None = None
               ) -> list[DueOwner]:
    """What a round would analyze now, most stale first. Reads the metastore (and external tables' listings)
    alone. `held_back`, when given, collects what waits and why (opted out, an open write)."""
    due: list[DueOwner] = []
    for db in options.databases or tuple(metastore.catalog.get_all_databases()):
        for name in metastore.catalog.get_tables(db):
            table = metastore.catalog.get_table(db, name)
            due += _due_in(metastore, table, options, held_back if held_back is not None else {})
    return sorted(due, key=lambda d: (-d.staleness, d.db, d.table, d.owner or ""))


def _due_in(metastore: Metastore, table: Table, options: AutoAnalyzeOptions, held_back: dict[str, str]
            ) -> list[DueOwner]:
    if str(table.parameters.get(SKIP_PARAM, "")).strip().lower() == "true":
        held_back[table.qualified_name] = f"{SKIP_PARAM}=true"
        return []
    if not table.stats_column_names:
        return []
    frame = staleness_frame(metastore, table)
    if frame["accurate"].all():
        return []
    writes = metastore.autoanalyze_claims.open_writes(table.dbName, table.tableName)
    if TABLE_OWNER in writes:
        held_back[table.qualified_name] = f"open write in transaction {writes[TABLE_OWNER]}"
        return []
    analyzed = metastore.autoanalyze_claims.analyzed_columns(table.dbName, table.tableName)
    restricted = options.mode == "existing" or options.columns == "analyzed"
    judged: dict[frozenset[str], dict] = {}  # accuracy of the columns analyzed before, per set of them
    out = []
    for row in frame.itertuples():
        if row.accurate:
            continue
        key = row.partition if row.partition is not None else TABLE_OWNER
        columns = frozenset(analyzed.get(key, ()))
        if not columns and options.mode == "existing":
            continue
        if restricted and columns:  # only those columns are refreshed: judged by them, or it is due forever
            if columns not in judged:
                judged[columns] = metastore.accuracy.stats_compliance(table.dbName, table.tableName, sorted(columns))
            if judged[columns][row.partition][0]:
                continue
        if key in writes:
            held_back[f"{table.qualified_name} {row.partition}"] = f"open write in transaction {writes[key]}"
            continue
        fraction = row.changed_fraction
        if columns and fraction is not None and fraction < options.threshold:
            continue
        out.append(DueOwner(table.dbName, table.tableName, row.partition, fraction, row.reason, columns))
    return out


def worker_queue(metastore: Metastore) -> tuple[AutoAnalyzeOptions, list[DueOwner]] | None:
    """What the next round would analyze under the options of the latest round any worker ran, with those
    options (None: no worker ever ran on this metastore): what `check` and the dashboard call queued."""
    rounds = metastore.autoanalyze_claims.autoanalyze_rounds(limit=1)
    if not rounds:
        return None
    options = AutoAnalyzeOptions.from_json(rounds[0]["options"])
    return options, due_owners(metastore, options)


ROUND_COLUMNS = ["round_id", "worker", "started_at", "ended_at", "seconds", "due", "analyzed", "left_for_later",
                 "failed", "tables", "options"]
QUEUE_COLUMNS = ["table", "partition", "changed_fraction", "reason", "analyzed_columns", "said"]


def rounds_frame(metastore: Metastore, limit: int = 10) -> pd.DataFrame:
    """The latest `limit` rounds any worker ran, newest first, a row each (ROUND_COLUMNS): when it started and
    ended (UTC; NaT: running, or its worker was stopped), what was due, analyzed, left for the next round and
    failed, the tables it analyzed and the options it ran under (a dict)."""
    rows = []
    for r in metastore.autoanalyze_claims.autoanalyze_rounds(limit):
        ended = r["ended_at"]
        rows.append({"round_id": r["round_id"], "worker": r["worker"],
                     "started_at": pd.Timestamp(r["started_at"], unit="s", tz="UTC"),
                     "ended_at": pd.NaT if ended is None else pd.Timestamp(ended, unit="s", tz="UTC"),
                     "seconds": None if ended is None else float(ended - r["started_at"]),
                     "due": r["due"], "analyzed": r["analyzed"], "left_for_later": r["left_for_later"],
                     "failed": r["failed"],
                     "tables": sorted({t["table"] for t in json.loads(r["tables"] or "[]") if "owners" in t}),
                     "options": json.loads(r["options"]) if r["options"] else {}})
    return pd.DataFrame(rows, columns=ROUND_COLUMNS)


def queue_frame(metastore: Metastore) -> pd.DataFrame:
    """What the next round would analyze, most stale first, a row each (QUEUE_COLUMNS: `said` is the line the
    dashboard shows), under the options of the latest round any worker ran, which `attrs["options"]` holds
    (None, and no row, when no worker ever ran). No Spark."""
    queued = worker_queue(metastore)
    due = queued[1] if queued else []
    frame = pd.DataFrame([{"table": d.qualified_table, "partition": d.owner, "changed_fraction": d.changed_fraction,
                           "reason": d.reason, "analyzed_columns": sorted(d.analyzed_columns), "said": d.describe()}
                          for d in due], columns=QUEUE_COLUMNS)
    frame.attrs["options"] = queued[0] if queued else None
    return frame


@dataclass
class RoundOutcome:
    """One round: what was due, what was analyzed (per table: owners, seconds), left for the next round, failed."""

    round_id: int
    worker: str
    options: AutoAnalyzeOptions
    due: list[DueOwner] = field(default_factory=list)
    analyzed: list[dict] = field(default_factory=list)  # {"table", "owners", "seconds", "columns"}
    left: list[DueOwner] = field(default_factory=list)
    taken: list[DueOwner] = field(default_factory=list)  # claimed or analyzed by another worker meanwhile
    failed: list[dict] = field(default_factory=list)  # {"table", "error"}
    held_back: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def analyzed_owners(self) -> int:
        return sum(len(a["owners"]) for a in self.analyzed)

    @property
    def analyzed_text(self) -> str:
        """What was analyzed: "19 partitions of 3 tables", "2 partitions of 1 table and 1 unpartitioned table"."""
        partitioned = {a["table"] for a in self.analyzed if any(o is not None for o in a["owners"])}
        whole = {a["table"] for a in self.analyzed if None in a["owners"]}
        partitions = sum(1 for a in self.analyzed for o in a["owners"] if o is not None)
        parts = [f"{counted(partitions, 'partition')} of {counted(len(partitioned), 'table')}"] if partitioned else []
        if whole:
            parts.append(counted(len(whole), "unpartitioned table"))
        sampled = [f"{a['table']} ({a['sample']})" for a in self.analyzed if a.get("sample")]
        return (" and ".join(parts) or "nothing") + (f", sampling {', '.join(sampled)}" if sampled else "")

    @property
    def message(self) -> str:
        if not self.due:
            text = "Auto-analyze: nothing due"
        else:
            text = f"Auto-analyze: {len(self.due)} due; analyzed {self.analyzed_text}"
            published = [a for a in self.analyzed if a.get("published")]
            if published:
                text += "; published " + ", ".join(
                    f"{a['table']} for snapshot {a['published']['snapshot']} "
                    f"{a['published']['after_commit_seconds']:.1f} s after its commit" for a in published)
            if self.left:
                text += f"; {len(self.left)} left for the next round (budget {self.options.budget_s:.0f} s)"
            if self.taken:
                text += f"; {len(self.taken)} taken by another worker"
            if self.failed:
                text += f"; {len(self.failed)} failed: " + "; ".join(
                    f"{f['table']}: {f['error']}" for f in self.failed)
        if self.held_back:
            text += "; waiting: " + "; ".join(f"{k} ({v})" for k, v in sorted(self.held_back.items()))
        return f"{text}. {self.seconds:.1f} s."

    def to_pandas(self) -> pd.DataFrame:
        """One row per table analyzed: table, partitions, columns, seconds."""
        return pd.DataFrame([(a["table"], len(a["owners"]), a["columns"], a["seconds"]) for a in self.analyzed],
                            columns=["table", "partitions", "columns", "seconds"])


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def run_round(spark: Callable[[], SparkSession], metastore: Metastore, options: AutoAnalyzeOptions,
              new_transaction: Callable[[], Transaction], follow: Callable[[Table], Table] = lambda t: t,
              worker: str | None = None, publish: Callable[[Table], dict | None] | None = None) -> RoundOutcome:
    """One round (see the module's docstring); `follow` brings a table another system owns up to date before
    it is judged (an Iceberg or Delta table's current snapshot); `publish`, given a table the round analyzed,
    publishes its statistics where that table asks for it unattended and says what landed (None: it does not)."""
    options = options.checked()
    started = time.perf_counter()
    worker = worker or worker_name()
    outcome = RoundOutcome(metastore.autoanalyze_claims.start_autoanalyze_round(worker, options.to_json()), worker, options)
    for db in options.databases or tuple(metastore.catalog.get_all_databases()):
        for name in metastore.catalog.get_tables(db):
            follow(metastore.catalog.get_table(db, name))
    outcome.due = due_owners(metastore, options, outcome.held_back)
    if outcome.due:
        log.info("round %d (%s): %d due, most stale first: %s", outcome.round_id, worker, len(outcome.due),
                 ", ".join(d.describe() for d in outcome.due[:10]) + (", ..." if len(outcome.due) > 10 else ""))
    for key, why in sorted(outcome.held_back.items()):
        log.info("round %d: %s waits: %s", outcome.round_id, key, why)
    by_table: dict[tuple[str, str], list[DueOwner]] = {}
    for due in outcome.due:
        by_table.setdefault((due.db, due.table), []).append(due)
    for (db, name), owners in by_table.items():
        if outcome.analyzed and time.perf_counter() - started >= options.budget_s:
            outcome.left += owners
            continue
        analyzed = len(outcome.analyzed)
        _analyze_table(spark, metastore, options, new_transaction, db, name, owners, outcome)
        if publish is not None and len(outcome.analyzed) > analyzed:
            _publish_table(publish, metastore, db, name, outcome)
    if outcome.left:
        log.info("round %d: left for the next round (budget %.0f s spent): %s", outcome.round_id, options.budget_s,
                 ", ".join(d.describe() for d in outcome.left))
    outcome.seconds = time.perf_counter() - started
    metastore.autoanalyze_claims.end_autoanalyze_round(outcome.round_id, len(outcome.due), outcome.analyzed_owners,
                                                       len(outcome.left),
                                    len(outcome.failed), json.dumps(outcome.analyzed + outcome.failed))
    log.info("round %d done in %.1f s: %d analyzed, %d left, %d failed", outcome.round_id, outcome.seconds,
             outcome.analyzed_owners, len(outcome.left), len(outcome.failed))
    return outcome


def _publish_table(publish: Callable[[Table], dict | None], metastore: Metastore, db: str, name: str,
                   outcome: RoundOutcome) -> None:
    """The table just analyzed published where it asks for it; a failure is the round's, named, as an ANALYZE's."""
    try:
        landed = publish(metastore.catalog.get_table(db, name))
    except ColstatsError as error:
        outcome.failed.append({"table": f"{db}.{name}", "error": f"publishing: {error}"})
        log.error("round %d: publishing %s.%s failed: %s", outcome.round_id, db, name, error)
        return
    if landed is not None:
        outcome.analyzed[-1]["published"] = landed
        log.info("round %d: published %s.%s: %s", outcome.round_id, db, name, landed)


def _analyze_table(spark, metastore: Metastore, options: AutoAnalyzeOptions, new_transaction,
                   db: str, name: str, owners: list[DueOwner], outcome: RoundOutcome) -> None:
    qualified = f"{db}.{name}"
    began = time.perf_counter()
    txn = new_transaction()
    try:
        claimed = set(metastore.autoanalyze_claims.claim_for_analyze(txn.txn_id, db, name, [d.claim_key for d in owners]))
        # judged again once ours: another worker may have analyzed them between the queue and the claim
        table = metastore.catalog.get_table(db, name)
        still = {d.claim_key for d in _due_in(metastore, table, options, {})}
        mine = [d for d in owners if d.claim_key in claimed & still]
        outcome.taken += [d for d in owners if d not in mine]
        if not mine:
            log.info("round %d: %s: every due partition was claimed or analyzed by another worker",
                     outcome.round_id, qualified)
            txn.abort("nothing left to analyze")
            return
        columns = _columns(table, options, mine)
        percent = options.sample_percent(_largest_bytes(metastore, table, mine))
        stmt = Analyze(table=TableName(db, name), mode=AnalyzeMode.COLUMNS,
                       columns=None if columns is None else [(c, 0) for c in columns],
                       tier=WHOLE_TIER if percent is None else Tier.of_percent(percent))
        done = run_analyze(spark, metastore, stmt, db, txn,
                           only=[d.owner for d in mine if d.owner is not None] if table.is_partitioned else None)
        txn.commit()
        seconds = time.perf_counter() - began
        sampled = done.tier.label if done.tier.is_sample and len(done.whole) < len(mine) else ""
        outcome.analyzed.append({"table": qualified, "owners": [d.owner for d in mine],
                                 "columns": "all" if columns is None else ", ".join(columns), "seconds": seconds,
                                 "sample": sampled})
        log.info("round %d: analyzed %s: %s in %.1f s", outcome.round_id, qualified,
                 ", ".join(d.owner or "the table" for d in mine), seconds)
    except ColstatsError as error:
        if txn.state == "open":
            txn.abort(str(error))  # its claims end with it
        if len(owners) > 1 and all(d.owner is not None for d in owners):
            # one unreadable partition (a file another job left) must not keep the others stale forever
            log.warning("round %d: %s failed (%s): its partitions one by one", outcome.round_id, qualified, error)
            for due in owners:
                _analyze_table(spark, metastore, options, new_transaction, db, name, [due], outcome)
            return
        where = f"{qualified} {owners[0].owner}" if len(owners) == 1 and owners[0].owner else qualified
        outcome.failed.append({"table": where, "error": str(error)})
        log.error("round %d: %s failed: %s", outcome.round_id, where, error)
    except BaseException:
        if txn.state == "open":
            txn.abort("the worker stopped")
        raise
    finally:
        metastore.autoanalyze_claims.release_claims(txn.txn_id)


def _largest_bytes(metastore: Metastore, table: Table, owners: list[DueOwner]) -> int:
    """The bytes of the largest of `owners` (the table's own for an unpartitioned one), as last counted."""
    if not table.is_partitioned:
        return int(table.parameters.get("totalSize", 0) or 0)
    names = [d.owner for d in owners if d.owner is not None]
    return max((int(p.parameters.get("totalSize", 0) or 0)
                for p in metastore.catalog.get_partitions(table.dbName, table.tableName, names)), default=0)


def _columns(table: Table, options: AutoAnalyzeOptions, owners: list[DueOwner]) -> list[str] | None:
    """The columns to analyze (None: all): those analyzed before in mode `existing` or with columns
    `analyzed`, where any were."""
    if options.mode == "all" and options.columns == "all":
        return None
    before = set().union(*(d.analyzed_columns for d in owners))
    if not before:
        return None
    return [c.name for c in table.cols if c.name in before]
