"""Checks from statistics alone: rules on a column's figures, stored in STATS_EXPECTATIONS and evaluated
against every state the history keeps of that column (migration 10), when each is stored, inside the
commit that stores it (no scan); each outcome is a row of STATS_EXPECTATION_RESULTS with the figure.

The rules, each a threshold a person reads off the figures:
- nulls_below: the null fraction is below it;
- ndv_between: (low, high), the NDV lies within, ends included;
- psi_below: the PSI (metastore.drift: of the KLL sketches, or of the top values a skew report kept) of
  the state against the cell's previous state, or for a partition's first state against the last state of
  the partition before it by name (yesterday, for daily ones), is below it; nothing to measure on either
  side: not checked (top values kept later by a skew report check it then);
- min_at_least / max_at_most: the column's min and max (numbers, dates as ISO text, ...) stay within;
- anomaly: Deequ's anomaly detection on one figure of the states over time (rows, nulls, null_fraction, ndv,
  mean, min or max; `figure`, rows by default):
  - relative_change: the figure's change against the state before (the cell's previous state, or for a
    partition's first state the last state of the partition before it by name), |now / before - 1|, is at
    most `threshold` (Deequ's RelativeRateOfChangeStrategy with equal bounds both ways);
  - baseline: the figure lies within `threshold` standard deviations of the mean of the last `window`
    states before it (the cell's, or for a partition's first state the latest of the `window` partitions
    before it), as Deequ's OnlineNormalStrategy; fewer than two such states: not checked.
  The outcome's figure is the change, or the distance from the baseline's mean in standard deviations.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from typing import Any

from ...coltypes import parse_type
from ...column_statistics.drift import null_fraction, states_psi
from ...column_statistics.merge import spark_order
from ...column_statistics.stats_rows import text_to_value
from ...errors import InvalidInputException
from ..db import Database
from ..rows import hive_rows
from ..settings import MetastoreSettings
from .catalog import CatalogRepository
from .history import HIVE, StatsState, commit_states, read_states_up_to
from .repository import Repository

RULES = ("nulls_below", "ndv_between", "psi_below", "min_at_least", "max_at_most", "anomaly")
ANOMALY_STRATEGIES = ("relative_change", "baseline")
ANOMALY_FIGURES = ("rows", "nulls", "null_fraction", "ndv", "mean", "min", "max")
DEFAULT_WINDOW = 10  # states a baseline is the mean of


@dataclass(frozen=True)
class Outcome:
    rule: str
    passed: bool
    figure: Any  # what the rule looked at (None: the state lacks it, and the rule was not checked)


def checked_rules(rules: dict) -> dict:
    """The rules as stored (JSON-able); raises InvalidInputException naming an unknown or malformed one. An
    anomaly rule's `threshold`, `figure` and `window` come as arguments of their own beside `anomaly`."""
    if not rules:
        raise InvalidInputException(f"expect takes at least one rule: {', '.join(RULES)}")
    rules = dict(rules)
    options = {key: rules.pop(key) for key in ("threshold", "figure", "window") if key in rules}
    if options and "anomaly" not in rules:
        raise InvalidInputException(f"{', '.join(options)}: an argument of anomaly=\"relative_change\" or "
                                    f"\"baseline\", which is not given")
    out = {}
    for name, value in rules.items():
        if name not in RULES:
            raise InvalidInputException(f"{name} is not a rule: the rules are {', '.join(RULES)}")
        if name == "ndv_between":
            if not (isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, int) for v in value)
                    and value[0] <= value[1]):
                raise InvalidInputException(f"ndv_between takes (low, high) whole numbers, low <= high, not {value!r}")
            value = list(value)
        elif name in ("nulls_below", "psi_below"):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise InvalidInputException(f"{name} takes a number at least 0, not {value!r}")
            value = float(value)
        elif name == "anomaly":
            value = _anomaly(value, options)
        else:
            value = str(value)
        out[name] = value
    return out


def _anomaly(strategy, options: dict) -> dict:
    if strategy not in ANOMALY_STRATEGIES:
        raise InvalidInputException(f"anomaly is {' or '.join(ANOMALY_STRATEGIES)}, not {strategy!r}")
    threshold = options.get("threshold")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or threshold < 0:
        raise InvalidInputException(f"anomaly={strategy!r} takes threshold=, a number at least 0, not {threshold!r}")
    figure = options.get("figure", "rows")
    if figure not in ANOMALY_FIGURES:
        raise InvalidInputException(f"an anomaly's figure is one of {', '.join(ANOMALY_FIGURES)}, not {figure!r}")
    window = options.get("window", DEFAULT_WINDOW)
    if isinstance(window, bool) or not isinstance(window, int) or window < 2:
        raise InvalidInputException(f"an anomaly's window is a whole number of states, at least 2, not {window!r}")
    return {"strategy": strategy, "threshold": float(threshold), "figure": figure, "window": window}


def state_figure(state: StatsState, figure: str) -> float | None:
    """One figure of a kept state as a number (None where the state lacks it)."""
    data = state.stats.statsData.value
    if figure == "rows":
        return state.rows if state.stats.numValues is None else state.stats.numValues
    if figure == "nulls":
        return data.numNulls
    if figure == "null_fraction":
        return null_fraction(state.stats, state.rows)
    if figure == "ndv":
        return getattr(data, "numDVs", None)
    if figure == "mean":
        moments = getattr(data, "moments", None)
        rows = state.rows if state.stats.numValues is None else state.stats.numValues
        values = (rows or 0) - (data.numNulls or 0) - (getattr(data, "numNaNs", None) or 0)
        return moments.mean(values) if moments is not None else None
    value = getattr(data, "lowValue" if figure == "min" else "highValue", None)
    if value is None or isinstance(value, (str, bytes)):
        return None
    for unit in ("daysSinceEpoch", "microsSinceEpoch"):
        if hasattr(value, unit):
            return float(getattr(value, unit))
    return float(value)


def anomaly_outcome(rule: dict, state: StatsState, series: list[StatsState]) -> Outcome | None:
    """An anomaly rule's outcome on `state` against the states before it (newest first); None: not checked."""
    now = state_figure(state, rule["figure"])
    before = [v for v in (state_figure(s, rule["figure"]) for s in series) if v is not None]
    if now is None or not before:
        return None
    if rule["strategy"] == "relative_change":
        last = before[0]
        change = 0.0 if now == last else (abs(now / last - 1) if last else math.inf)
        return Outcome("anomaly", change <= rule["threshold"], change)
    window = before[:rule["window"]]
    if len(window) < 2:
        return None
    mean = sum(window) / len(window)
    sd = math.sqrt(sum((v - mean) ** 2 for v in window) / (len(window) - 1))
    distance = abs(now - mean) / sd if sd else (0.0 if now == mean else math.inf)
    return Outcome("anomaly", distance <= rule["threshold"], distance)


def evaluate(rules: dict, kind, state: StatsState, previous: StatsState | None,
             series: list[StatsState] | None = None) -> list[Outcome]:
    """Each rule's outcome on one state (`previous`: the state its PSI is against; `series`: the states before
    it an anomaly rule compares with, newest first)."""
    data = state.stats.statsData.value
    out = []
    for name, threshold in rules.items():
        if name == "anomaly":
            outcome = anomaly_outcome(threshold, state, series if series is not None else
                                      [previous] if previous is not None else [])
            if outcome is not None:
                out.append(outcome)
        elif name == "nulls_below":
            figure = null_fraction(state.stats, state.rows)
            out.append(Outcome(name, figure is not None and figure < threshold, figure))
        elif name == "ndv_between":
            figure = getattr(data, "numDVs", None)
            out.append(Outcome(name, figure is not None and threshold[0] <= figure <= threshold[1], figure))
        elif name == "psi_below":
            figure = None
            if previous is not None:
                figure = states_psi(previous.stats, state.stats, previous.top_values, state.top_values,
                                    previous.bins, state.kept_psi)
            if figure is not None:
                out.append(Outcome(name, figure < threshold, figure))
        else:
            bound = text_to_value(kind, threshold)
            figure = getattr(data, "lowValue" if name == "min_at_least" else "highValue", None)
            if figure is not None:
                ok = spark_order(figure) >= spark_order(bound) if name == "min_at_least" \
                    else spark_order(figure) <= spark_order(bound)
                out.append(Outcome(name, ok, figure))
    return out


def evaluate_commit(conn, txn_id: int | None, history_ids: list[int] | None = None, since: int = 0) -> int:
    """Evaluates the stored rules on the states commit `txn_id` stored (or on the states `history_ids`),
    storing each outcome (`since`: the newest state's id before the commit); returns how many were stored."""
    if history_ids is None:
        states, args = commit_states(conn, "H", since, txn_id)
        found = conn.execute(f"SELECT H.HISTORY_ID FROM COL_STATS_HISTORY H WHERE {states} "
                             "AND H.ENGINE = ? AND EXISTS "
                             "(SELECT 1 FROM STATS_EXPECTATIONS E WHERE E.TBL_ID = H.TBL_ID "
                             "AND E.COLUMN_NAME = H.COLUMN_NAME)", (*args, HIVE)).fetchall()
        history_ids = [r[0] for r in found]
    stored = 0
    now = int(time.time())
    for history_id in history_ids:
        tbl_id, column, part_name, engine = conn.execute(
            "SELECT TBL_ID, COLUMN_NAME, PART_NAME, ENGINE FROM COL_STATS_HISTORY WHERE HISTORY_ID = ?",
            (history_id,)).fetchone()
        expectations = [(e, json.loads(rules)) for e, rules in conn.execute(
            "SELECT EXPECTATION_ID, RULES FROM STATS_EXPECTATIONS WHERE TBL_ID = ? AND COLUMN_NAME = ?",
            (tbl_id, column)).fetchall()]
        window = max((r["anomaly"]["window"] for _, r in expectations if "anomaly" in r), default=1)
        state, *before = read_states_up_to(conn, tbl_id, column, part_name, engine, history_id, window + 1)
        series = before or _previous_partitions(conn, tbl_id, column, part_name, engine, history_id, window)
        previous = series[0] if series else None
        kind = state.stats.statsData.kind
        for expectation_id, rules in expectations:
            for outcome in evaluate(rules, kind, state, previous, series):
                conn.execute("INSERT INTO STATS_EXPECTATION_RESULTS (EXPECTATION_ID, HISTORY_ID, RULE, "
                             "PASSED, FIGURE, CHECKED_AT) VALUES (?, ?, ?, ?, ?, ?) "
                             "ON CONFLICT (EXPECTATION_ID, HISTORY_ID, RULE) DO UPDATE SET PASSED = excluded.PASSED, "
                             "FIGURE = excluded.FIGURE, CHECKED_AT = excluded.CHECKED_AT",
                             (expectation_id, history_id, outcome.rule, int(outcome.passed),
                              _figure_text(outcome.figure), now))
                stored += 1
    return stored


def _previous_partitions(conn, tbl_id: int, column: str, part_name: str | None, engine: str,
                         before_id: int, count: int) -> list[StatsState]:
    """The last state, stored before `before_id`, of each of the `count` partitions just before `part_name` by
    name, nearest first."""
    if part_name is None:
        return []
    names = [r[0] for r in conn.execute(
        "SELECT DISTINCT PART_NAME FROM COL_STATS_HISTORY WHERE TBL_ID = ? AND COLUMN_NAME = ? AND ENGINE = ? "
        "AND PART_NAME < ? AND HISTORY_ID < ? ORDER BY PART_NAME DESC LIMIT ?",
        (tbl_id, column, engine, part_name, before_id, count)).fetchall()]
    out = []
    for name in names:
        earlier = read_states_up_to(conn, tbl_id, column, name, engine, before_id - 1, 1)
        out.extend(earlier[:1])
    return out


def _figure_text(figure) -> str | None:
    if figure is None:
        return None
    return repr(figure) if isinstance(figure, float) else str(figure)


class ExpectationsRepository(Repository):
    """The metastore's calls over stored rules and their outcomes (a repository of the Metastore)."""

    def __init__(self, db: Database, settings: MetastoreSettings, catalog: CatalogRepository) -> None:
        super().__init__(db, settings)
        self.catalog = catalog

    def add_expectation(self, db_name: str, table_name: str, col_name: str, rules: dict) -> int:
        """Stores rules on a column and evaluates them on each of its cells' latest kept state, in one
        transaction; returns the expectation's ID. Raises naming an unknown table or column, or a bad rule."""
        stored_rules = checked_rules(rules)
        with self.transaction() as conn:
            table = self.catalog.get_table(db_name, table_name)
            hive_rows.require_columns(table, [col_name])
            kind = parse_type(table.column_type(col_name)).stored_stats_kind
            for name in ("min_at_least", "max_at_most"):
                if name in stored_rules:
                    try:
                        text_to_value(kind, stored_rules[name])
                    except (ValueError, ArithmeticError):
                        raise InvalidInputException(f"{name} {stored_rules[name]!r} is not a value of column "
                                                    f"{col_name} ({table.column_type(col_name)})") from None
            tbl_id = hive_rows.table_row(self.db, table.dbName, table.tableName)["TBL_ID"]
            expectation_id = conn.execute(
                "INSERT INTO STATS_EXPECTATIONS (TBL_ID, COLUMN_NAME, RULES, CREATED_AT) VALUES (?, ?, ?, ?) "
                "RETURNING EXPECTATION_ID", (tbl_id, col_name.lower(), json.dumps(stored_rules), int(time.time()))
            ).fetchone()[0]
            latest = [r[0] for r in conn.execute(
                "SELECT max(HISTORY_ID) FROM COL_STATS_HISTORY WHERE TBL_ID = ? AND COLUMN_NAME = ? "
                "AND ENGINE = ? GROUP BY PART_NAME", (tbl_id, col_name.lower(), HIVE))]
            evaluate_commit(conn, None, latest)
            return expectation_id

    def expectation_results(self, db_name: str, table_name: str) -> list[dict]:
        """Every stored outcome of the table's rules, oldest first: the rule and its threshold, the state
        checked (partition, write ID, when stored), the figure and whether it passed."""
        with self.snapshot() as conn:
            table = self.catalog.get_table(db_name, table_name)
            tbl_id = hive_rows.table_row(self.db, table.dbName, table.tableName)["TBL_ID"]
            rows = conn.execute(
                "SELECT E.EXPECTATION_ID, E.COLUMN_NAME, E.RULES, H.PART_NAME, H.WRITE_ID, H.RECORDED_AT, R.RULE, "
                "R.FIGURE, R.PASSED, R.CHECKED_AT FROM STATS_EXPECTATION_RESULTS R "
                "JOIN STATS_EXPECTATIONS E ON E.EXPECTATION_ID = R.EXPECTATION_ID "
                "JOIN COL_STATS_HISTORY H ON H.HISTORY_ID = R.HISTORY_ID WHERE E.TBL_ID = ? "
                "ORDER BY H.HISTORY_ID, E.EXPECTATION_ID, R.RULE", (tbl_id,)).fetchall()
        return [{"expectation_id": r[0], "column": r[1], "rule": r[6], "threshold": json.loads(r[2])[r[6]],
                 "partition": r[3], "write_id": r[4], "recorded_at": r[5], "figure": r[7], "passed": bool(r[8]),
                 "checked_at": r[9]} for r in rows]
