"""Skew as it ran beside skew as predicted: for each operator of a run whose largest task held SKEWED_TASK
times the median task's rows, what the lab predicted of it before it ran. A join of two lab tables on one
key each, fed their scans whole, is predicted by `join_skew` (from the statistics and frequent items where
they are accurate, else by counting the keys); any other operator says why it has no prediction."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..errors import ColstatsError
from ..plans.operators import LEAVES, ROW_PRESERVING, Operator
from ..plans.report import SkewPrediction, ran_skewed
from . import join_skew as join_skew_commands

if TYPE_CHECKING:
    from .session import Session

# Spark's join types -> join_skew's `how`; a semi or anti join keeps one side's rows and is not predicted
_HOW = {"Inner": "inner", "LeftOuter": "left", "RightOuter": "right", "FullOuter": "full"}
# a filter Spark infers below an inner join's sides, which drops only the NULL keys join_skew drops too
_NOT_NULL_ONLY = re.compile(r"^\(?isnotnull\([^()]*\)\)?(?: AND \(?isnotnull\([^()]*\)\)?)*$")
HOT_KEYS_SHOWN = 5
NAMED_SHARE = 0.01  # a key holding less of its task's rows than this does not make the task large


def predict_skewed(session: Session, operators: list[Operator]) -> dict[int, SkewPrediction]:
    """The lab's prediction for each operator that ran skewed, by its id."""
    out = {}
    for op in operators:
        spread = op.run.spread() if op.run is not None else None
        if spread is None or not ran_skewed(spread[1], spread[2]):
            continue
        out[op.id] = _predict(session, op, operators) if op.kind == "Join" else SkewPrediction(
            "an aggregate's task produces its groups, not one key's rows: group_skew predicts its input"
            if op.kind == "Aggregate" else f"the lab predicts the shuffles of joins, not of a {op.kind}")
    return out


def _predict(session: Session, join: Operator, operators: list[Operator]) -> SkewPrediction:
    kind = join.plan.joinType().toString()
    if kind not in _HOW:
        return SkewPrediction(f"join_skew predicts inner and outer joins, not a {kind} join")
    if "(BroadcastHashJoin)" in join.node or "(BroadcastNestedLoopJoin)" in join.node:
        return SkewPrediction("Spark broadcast one side: nothing was shuffled, the join's tasks are the other "
                              "side's scan")
    if not join.join_keys:
        return SkewPrediction("the join's keys are expressions, not columns: join_skew predicts a join of columns")
    if len(join.join_keys) != 1:
        return SkewPrediction(f"join_skew predicts a join on one key pair; this one has {len(join.join_keys)}")
    left, right = join.join_keys[0]
    if left.table is None or right.table is None:
        return SkewPrediction("a key is computed in the query, not a lab table's column")
    for child in join.children:
        why = _not_whole(operators[child], operators)
        if why is not None:
            return SkewPrediction(why)
    how = _HOW[kind]
    call = f"lab.tables[{left.table!r}].join_skew({right.table!r}, {left.name!r}, {right.name!r}, how={how!r})"
    try:
        report = join_skew_commands.join_skew(session, left.table, left.name, right.table, right.name, None, how)
    except ColstatsError as error:
        return SkewPrediction(f"{call}: {error}")
    largest = report.largest
    # the listed keys placed in that task that hold a share of it worth naming
    placed = report.hot_keys[(report.hot_keys["partition"] == largest["partition"])
                             & (report.hot_keys["output_rows"] >= NAMED_SHARE * float(largest["predicted_rows"]))]
    in_largest = placed["key"]
    counted = [f"{side.table} {side.source}" for side in report.sides if not side.source.startswith("statistics")]
    tasks = join.run.tasks if join.run is not None else None
    note = f"{call}, from " + ("; ".join(counted) if counted else "their statistics, accurate now")
    if tasks is not None and tasks != report.settings.partitions:
        note += (f"; predicted over {report.settings.partitions} shuffle partitions, run as {tasks} tasks "
                 "(adaptive execution coalesced or split them)")
    return SkewPrediction(note, tuple(in_largest.head(HOT_KEYS_SHOWN).tolist()), float(largest["predicted_rows"]),
                          report.skew_ratio)


def _not_whole(op: Operator, operators: list[Operator]) -> str | None:
    """Why a join's input is not a lab table's scan whole (None: it is, through projections and the NULL-key
    filters Spark infers)."""
    while op.kind not in LEAVES:
        if op.kind == "Filter":
            condition = str(op.plan.condition().toString())
            if not _NOT_NULL_ONLY.match(condition):
                return (f"the query filters a side before the join ({condition}); join_skew predicts whole "
                        "tables (or partitions chosen by their keys)")
        elif op.kind not in ROW_PRESERVING or len(op.children) != 1:
            return f"a side of the join is a {op.kind}, not a table's scan"
        op = operators[op.children[0]]
    return None if op.table else "a side of the join reads no lab table"
